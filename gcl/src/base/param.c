/* The table of every GCL_* environment variable, and reading them; see param.h. */
#include "base/param.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/vocab/vocab.h"

typedef enum {
    P_DOUBLE,
    P_LONG,
    P_CHOICE,
    P_LEVEL,
    P_SUBSYS,
    P_ALGO,
    P_TEXT,
    P_GCLOPTS,
    P_FAULT
} kind_t;

typedef struct {
    const char *name;
    const char *def;
    kind_t kind;
    size_t offset;
    double min, max;     /* P_DOUBLE, P_LONG */
    const char *choices; /* P_CHOICE: "a|b|c" */
    int coll;            /* P_ALGO: the collective */
    const char *doc;
} param_def_t;

#define OFF(field) offsetof(gcl_params_t, field)

static const param_def_t params[] = {
    {"GCL_LOG_LEVEL", "warn", P_LEVEL, OFF(log_level), 0, 0, NULL, 0,
     "how much to log: Graphcore's OFF, ERR, WARN, INFO, DEBUG, TRACE, or none, warn, info, "
     "debug, trace (any case)"},
    {"GCL_LOG_SUBSYS", "all", P_SUBSYS, OFF(log_subsys), 0, 0, NULL, 0,
     "subsystems that log below warn: comma list of init, coll, sim, shm, ofi, env, mpi, tcp, all"},
    {"GCL_LOG_TIME", "0", P_LONG, OFF(log_time), 0, 1, NULL, 0,
     "1: every log line starts with the wall-clock time (HH:MM:SS.mmm), to line up the logs of "
     "several hosts"},
    {"GCL_TIMEOUT_S", "300", P_DOUBLE, OFF(timeout_s), 0.001, 1e9, NULL, 0,
     "seconds a blocking call waits for its peers before failing with GCL_ERR_TIMEOUT"},
    {"GCL_STALL_WARN_S", "60", P_DOUBLE, OFF(stall_warn_s), 0.001, 1e9, NULL, 0,
     "seconds of waiting after which a warning names the replicas that have not arrived"},
    {"GCL_SPIN_COUNT", "-1", P_LONG, OFF(spin_count), -1, 1e8, NULL, 0,
     "polls a waiting IPU thread makes before it sleeps on a futex; -1: 2000 when the IPU "
     "threads that may run on this process's cores (its own, and those of the host's instances "
     "bound to cores it shares) have a core each, else 0 (spinning only steals the core a peer "
     "needs)"},
    {"GCL_SHM_CHUNK_BYTES", "262144", P_LONG, OFF(shm_chunk_bytes), 4096, 1 << 30, NULL, 0,
     "bytes per staging chunk of the shared-memory transport (messages are pipelined in them)"},
    {"GCL_SHM_CHUNKS", "16", P_LONG, OFF(shm_chunks), 1, 64, NULL, 0,
     "staging chunks per IPU in the shared-memory segment"},
    {"GCL_SHM_SLOTS", "8", P_LONG, OFF(shm_slots), 1, 64, NULL, 0,
     "message slots per ordered pair of IPUs on one host (pieces in flight between them)"},
    {"GCL_SHM_DIRECT_BYTES", "2097152", P_LONG, OFF(shm_direct_bytes), 65536, 1 << 30, NULL, 0,
     "bytes per IPU of each shared-memory region that host-direct collectives stage through "
     "(a call larger than this runs in rounds)"},
    {"GCL_DIRECT_MIN_BYTES", "16384", P_LONG, OFF(direct_min_bytes), 0, 1e15, NULL, 0,
     "all_reduce, reduce_scatter and all_gather of at least this many bytes per replica, over "
     "a group that shares one host, run host-direct (straight out of shared memory) instead of "
     "by messages; larger than any call turns it off"},
    {"GCL_EAGER_MAX_BYTES", "16384", P_LONG, OFF(eager_max_bytes), 0, 1 << 20, NULL, 0,
     "blocking all_reduce and broadcast of at most this many bytes per replica, and barrier, over "
     "a group of at most 64 replicas that shares one host, run eager: each replica posts its "
     "data in a cell of the host box that every peer reads and folds; 0 turns it off"},
    {"GCL_SHM_CMA", "1", P_LONG, OFF(shm_cma), 0, 1, NULL, 0,
     "1: host-direct calls between processes read and write each other's buffers in place "
     "(process_vm_readv/writev) when the kernel allows it; 0: always copy through the host "
     "box"},
    {"GCL_MPI_CHUNK_BYTES", "1048576", P_LONG, OFF(mpi_chunk_bytes), 4096, 1 << 30, NULL, 0,
     "bytes per piece of a message carried by the MPI transport"},
    {"GCL_TRANSPORT", "auto", P_CHOICE, OFF(transport), 0, 0, "auto|shm|tcp|ofi|mpi", 0,
     "transport between instances: auto (shm on a host; tcp between hosts, else ofi, else "
     "mpi), shm, tcp, ofi or mpi (tcp, ofi and mpi are then used between instances of one "
     "host too)"},
    {"GCL_TCP_IFACE", "", P_TEXT, OFF(tcp_iface), 0, 64, NULL, 0,
     "network interface of the tcp transport; default: every interface that is up, running "
     "and not loopback when the job spans hosts (tried in turn), loopback on one host"},
    {"GCL_TCP_CHUNK_BYTES", "131072", P_LONG, OFF(tcp_chunk_bytes), 4096, 1 << 30, NULL, 0,
     "bytes per piece of a message carried by the tcp transport"},
    {"GCL_OFI_PROVIDER", "tcp;ofi_rxm", P_TEXT, OFF(ofi_provider), 0, 64, NULL, 0,
     "libfabric provider of the ofi transport"},
    {"GCL_OFI_IFACE", "", P_TEXT, OFF(ofi_iface), 0, 64, NULL, 0,
     "network interface (libfabric domain) of the ofi transport; default: the first that is "
     "not loopback when the job spans hosts"},
    {"GCL_OFI_CHUNK_BYTES", "262144", P_LONG, OFF(ofi_chunk_bytes), 4096, 1 << 30, NULL, 0,
     "bytes per piece of a message carried by the ofi transport (each piece goes eager: "
     "libgcl sets FI_OFI_RXM_EAGER_LIMIT to 1 GiB unless it is set)"},
    {"GCL_HEAP_KEEP_BYTES", "67108864", P_LONG, OFF(heap_keep_bytes), 0, 1 << 30, NULL, 0,
     "freed memory glibc keeps for reuse, set when the tcp or ofi transport starts "
     "(M_TRIM_THRESHOLD; "
     "requests below half of it, at most 32 MiB, come from the heap); 0, or a malloc threshold "
     "of your own, leaves glibc's policy alone"},
    {"GCL_NUM_LOCAL_REPLICAS", "1", P_LONG, OFF(num_local_replicas), 1, 1 << 20, NULL, 0,
     "without poprun: replicas of this instance (of every rank of a plain mpirun job); a "
     "program's gcl_config_t.num_replicas wins"},
    {"GCL_IPUS_PER_REPLICA", "1", P_LONG, OFF(ipus_per_replica), 1, 1 << 20, NULL, 0,
     "without poprun: simulated IPUs per replica; a program's gcl_config_t.ipus_per_replica "
     "wins"},
    {"GCL_HEARTBEAT_S", "0.25", P_DOUBLE, OFF(heartbeat_s), 0.01, 60, NULL, 0,
     "seconds between the heartbeats an instance sends to the instances of other hosts"},
    {"GCL_PEER_TIMEOUT_S", "4", P_DOUBLE, OFF(peer_timeout_s), 0.05, 1e9, NULL, 0,
     "seconds without a heartbeat after which an instance on another host counts as gone (its "
     "process died or its host fell off the network): calls waiting for it fail with "
     "GCL_ERR_PEER_FAILED"},
    {"GCL_SIM_PHANTOM", "0", P_LONG, OFF(sim_phantom), 0, 1, NULL, 0,
     "1: phantom mode, buffers carry sizes but no data; only simulated time is computed (poprun "
     "--offline-mode sets it)"},
    {"GCL_TOPOLOGY", "", P_TEXT, OFF(topology), 0, 256, NULL, 0,
     "simulated pod: M2000, POD16, POD64, POD128, POD256 or a topology file, either followed by "
     ",KEY=VALUE overrides of its constants (default: POPDIST_TOPOLOGY, else the smallest preset "
     "that holds the job)"},
    {"GCL_SIM_REPORT", "", P_TEXT, OFF(sim_report), 0, 256, NULL, 0,
     "write a JSON report of simulated time and memory per IPU to this path at gcl_finalize "
     "(%i becomes the instance index)"},
    {"GCL_SIM_TRACE", "", P_TEXT, OFF(sim_trace), 0, 256, NULL, 0,
     "write a Chrome trace (one track per simulated IPU; open in ui.perfetto.dev) to this path "
     "(%i becomes the instance index)"},
    {"GCL_SIM_TRACE_EVENTS", "100000", P_LONG, OFF(sim_trace_events), 1, 1e8, NULL, 0,
     "most slices kept per IPU in the trace (later ones are counted, not stored)"},
    {"GCL_OPTIONS", "", P_GCLOPTS, OFF(gcl_method), 0, 0, NULL, 0,
     "GCL's option form, a JSON object: \"method\" (a GCL method or one of our algorithms) "
     "picks the algorithm of all_reduce, reduce_scatter and all_gather unless their "
     "GCL_*_ALGO says otherwise; other keys are accepted and have no effect"},
    {"GCL_ALLREDUCE_ALGO", "auto", P_ALGO, OFF(algo[COLL_ALLREDUCE]), 0, 0, NULL, COLL_ALLREDUCE,
     "all_reduce algorithm: auto or a name from `gcl-info --algorithms` (GCL's method names "
     "too, e.g. quad_directional_ring)"},
    {"GCL_REDUCE_SCATTER_ALGO", "auto", P_ALGO, OFF(algo[COLL_REDUCE_SCATTER]), 0, 0, NULL,
     COLL_REDUCE_SCATTER, "reduce_scatter algorithm: auto or a name"},
    {"GCL_ALLGATHER_ALGO", "auto", P_ALGO, OFF(algo[COLL_ALLGATHER]), 0, 0, NULL, COLL_ALLGATHER,
     "all_gather algorithm: auto or a name"},
    {"GCL_BROADCAST_ALGO", "auto", P_ALGO, OFF(algo[COLL_BROADCAST]), 0, 0, NULL, COLL_BROADCAST,
     "broadcast algorithm: auto or a name"},
    {"GCL_ALLTOALL_ALGO", "auto", P_ALGO, OFF(algo[COLL_ALLTOALL]), 0, 0, NULL, COLL_ALLTOALL,
     "all_to_all algorithm: auto or a name"},
    {"GCL_BARRIER_ALGO", "auto", P_ALGO, OFF(algo[COLL_BARRIER]), 0, 0, NULL, COLL_BARRIER,
     "barrier algorithm: auto or a name"},
    {"GCL_FAULT_INJECT", "", P_FAULT, OFF(fault_inject), 0, 0, NULL, 0,
     "for tests only: make the Nth allocation (alloc), shared-memory mapping (map) or transport "
     "post (post) of this process fail, counted from gcl_init, e.g. alloc:37 or post:3@1 (only "
     "in instance 1), or kill it in its Nth elastic resize (resize); see tests/faults/README.md"},
};

#define NPARAMS (sizeof params / sizeof params[0])

static int parse_number(const param_def_t *d, const char *v, void *dst)
{
    char *end;
    errno = 0;
    double x = strtod(v, &end);
    if (errno || end == v || *end != '\0' || !isfinite(x) || x < d->min || x > d->max)
        return -1;
    if (d->kind == P_DOUBLE) {
        *(double *)dst = x;
        return 0;
    }
    if (x != floor(x))
        return -1;
    *(long *)dst = (long)x;
    return 0;
}

static int parse_choice(const char *choices, const char *v, char *dst, size_t cap)
{
    size_t n = strlen(v);
    for (const char *c = choices; *c;) {
        const char *bar = strchr(c, '|');
        size_t len = bar ? (size_t)(bar - c) : strlen(c);
        if (len == n && strncmp(c, v, n) == 0 && n < cap) {
            memcpy(dst, v, n + 1);
            return 0;
        }
        c += len + (bar ? 1 : 0);
    }
    return -1;
}

static int parse_algo(int coll, const char *v, char *dst, size_t cap)
{
    const char *name = gcl_algo_resolve((coll_collective_t)coll, v);
    if (!name || strlen(name) >= cap)
        return -1;
    strcpy(dst, name);
    return 0;
}

/* GCL_OPTIONS' keys: "method" is kept (it must name an algorithm of all_reduce, reduce_scatter
 * or all_gather); the others are GCL's tuning of real IPUs and are accepted as they are. */
static int take_option(void *ctx, const char *key, const char *value, char *why, size_t wlen)
{
    char *method = ctx;
    if (strcmp(key, "method") != 0)
        return 0;
    if (!gcl_algo_resolve(COLL_ALLREDUCE, value) && !gcl_algo_resolve(COLL_REDUCE_SCATTER, value) &&
        !gcl_algo_resolve(COLL_ALLGATHER, value)) {
        snprintf(why, wlen, "\"method\": \"%.48s\" is not a GCL method or an algorithm", value);
        return -1;
    }
    snprintf(method, 48, "%s", value);
    return 0;
}

/* The GCL_OPTIONS method for the collectives whose GCL_*_ALGO is not set. */
static void apply_method(gcl_params_t *p)
{
    static const struct {
        int coll;
        const char *var;
    } uses[] = {{COLL_ALLREDUCE, "GCL_ALLREDUCE_ALGO"},
                {COLL_REDUCE_SCATTER, "GCL_REDUCE_SCATTER_ALGO"},
                {COLL_ALLGATHER, "GCL_ALLGATHER_ALGO"}};
    for (size_t i = 0; p->gcl_method[0] && i < sizeof uses / sizeof uses[0]; i++) {
        const char *name = gcl_algo_resolve((coll_collective_t)uses[i].coll, p->gcl_method);
        if (name && !getenv(uses[i].var))
            snprintf(p->algo[uses[i].coll], sizeof p->algo[0], "%s", name);
    }
}

static void describe_valid(const param_def_t *d, char *buf, size_t len)
{
    size_t n;
    const coll_algo_t *const *algos;
    switch (d->kind) {
    case P_DOUBLE:
        snprintf(buf, len, "a number from %g to %g", d->min, d->max);
        break;
    case P_LONG:
        snprintf(buf, len, "an integer from %.0f to %.0f", d->min, d->max);
        break;
    case P_CHOICE:
        snprintf(buf, len, "one of %s", d->choices);
        break;
    case P_LEVEL:
        snprintf(buf, len, "one of off|err|warn|info|debug|trace (or none; any case)");
        break;
    case P_SUBSYS:
        snprintf(buf, len, "a comma list of init,coll,sim,shm,ofi,env,mpi,tcp,all");
        break;
    case P_TEXT:
        snprintf(buf, len, "text of at most %.0f characters", d->max - 1);
        break;
    case P_GCLOPTS:
        snprintf(buf, len, "a flat JSON object, such as {\"method\":\"meet_in_middle_ring\"}");
        break;
    case P_FAULT:
        snprintf(buf, len,
                 "a comma list of KIND:N[@I]: KIND alloc, map, post or resize, N from 1, I an "
                 "instance index; or empty");
        break;
    case P_ALGO:
        algos = coll_algo_list((coll_collective_t)d->coll, &n);
        snprintf(buf, len, "auto");
        for (size_t i = 0; i < n; i++) {
            size_t used = strlen(buf);
            snprintf(buf + used, len - used, "|%s", algos[i]->name);
        }
        break;
    }
}

static int parse_one(const param_def_t *d, const char *v, gcl_params_t *p, char *why, size_t wlen)
{
    void *dst = (char *)p + d->offset;
    switch (d->kind) {
    case P_DOUBLE:
    case P_LONG:
        return parse_number(d, v, dst);
    case P_CHOICE:
        return parse_choice(d->choices, v, dst, sizeof p->transport);
    case P_LEVEL:
        return gcl_log_parse_level(v, dst);
    case P_SUBSYS:
        return gcl_log_parse_subsys(v, dst);
    case P_ALGO:
        return parse_algo(d->coll, v, dst, sizeof p->algo[0]);
    case P_TEXT:
        if (strlen(v) >= d->max) /* the field's size */
            return -1;
        strcpy(dst, v);
        return 0;
    case P_GCLOPTS:
        *(char *)dst = '\0';
        return v[0] ? gcl_options_json(v, take_option, dst, why, wlen) : 0;
    case P_FAULT:
        if (strlen(v) >= sizeof p->fault_inject) {
            snprintf(why, wlen, "longer than %zu characters", sizeof p->fault_inject - 1);
            return -1;
        }
        if (gcl_fault_parse(v, NULL, why, wlen) != 0)
            return -1;
        strcpy(dst, v);
        return 0;
    }
    return -1;
}

gcl_status_t gcl_params_load(gcl_params_t *p, char *err, size_t len)
{
    memset(p, 0, sizeof *p);
    for (size_t i = 0; i < NPARAMS; i++) {
        const param_def_t *d = &params[i];
        char why[160] = "";
        if (parse_one(d, d->def, p, why, sizeof why) != 0) {
            snprintf(err, len, "internal error: bad default for %s", d->name);
            return GCL_ERR_INTERNAL;
        }
        const char *v = getenv(d->name);
        if (!v)
            continue;
        if (parse_one(d, v, p, why, sizeof why) != 0) {
            char valid[512];
            describe_valid(d, valid, sizeof valid);
            if (why[0])
                snprintf(err, len, "%s='%.64s' is not valid: %s", d->name, v, why);
            else
                snprintf(err, len, "%s=\"%.64s\" is not valid: expected %s", d->name, v, valid);
            return GCL_ERR_INVALID_ARGUMENT;
        }
    }
    apply_method(p);
    return GCL_OK;
}

void gcl_params_print(FILE *out, int markdown)
{
    if (markdown)
        fprintf(out, "| variable | default | meaning | valid values |\n|---|---|---|---|\n");
    for (size_t i = 0; i < NPARAMS; i++) {
        if (markdown) {
            const param_def_t *d = &params[i];
            char valid[512];
            describe_valid(d, valid, sizeof valid);
            for (char *c = valid; *c; c++) /* a bar would end the table cell */
                if (*c == '|')
                    *c = '/';
            fprintf(out, "| `%s` | %s%s%s | %s | %s |\n", d->name, d->def[0] ? "`" : "",
                    d->def[0] ? d->def : "(unset)", d->def[0] ? "`" : "", d->doc, valid);
            continue;
        }
        const param_def_t *d = &params[i];
        const char *v = getenv(d->name);
        char valid[512];
        describe_valid(d, valid, sizeof valid);
        fprintf(out, "%-24s default %-8s%s%s%s\n    %s\n    valid: %s\n", d->name, d->def,
                v ? " (set: " : "", v ? v : "", v ? ")" : "", d->doc, valid);
    }
}
