/*
 * gcl_collective: the one path every collective call takes after its entry point
 * (collectives.c, multi.c) has described it as a gcl_call_t. Check the call (types, operator,
 * buffers, overlap), plan it, build the schedule, start it on its engine.
 *
 * The plan answers two questions apart (DESIGN.md, "Execution model"):
 *   - the pod algorithm: which algorithm GCL would run on the simulated pod, whose time the call
 *     is charged; forced (GCL_<COLLECTIVE>_ALGO, gcl_comm_set_algorithm) or chosen by the cost
 *     model (choice/);
 *   - the data path: how the bytes move here. A forced algorithm runs its own schedule, and so
 *     does every call in phantom mode. Otherwise an all_reduce or reduce_scatter folds every
 *     element along the canonical tree (coll/canon.h): host-direct when it is blocking and the
 *     group shares this host, else by the canonical schedule's messages; either way its
 *     simulated time is the replayed pod algorithm's. So the same job gives bitwise the same
 *     results on one process, many, or many hosts, blocking or not. The other collectives do
 *     not reduce: they run the pod algorithm's schedule (all_gather host-direct when it can).
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/call.h"

#include "base/alloc.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/vocab/vocab.h"
#include "coll/reduce.h"
#include "engine/engines.h"
#include "engine/simtime.h"
#include "pod/cache.h"

static gcl_status_t reject(struct gcl_comm *c, gcl_status_t rc, const char *what, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));

static gcl_status_t reject(struct gcl_comm *c, gcl_status_t rc, const char *what, const char *fmt,
                           ...)
{
    char msg[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    gcl_comm_fail(c, rc, "%s: %s", what, msg);
    GCL_WARN(GCL_SUB_COLL, "%s", gcl_err_text(&c->err));
    return rc;
}

/* Elements of IN and OUT for CALL over N ranks, as coll/algo.h lays them out. */
static void shape(const gcl_call_t *call, int n, int rank, uint64_t *in, uint64_t *out,
                  uint64_t *in_alias, uint64_t *out_alias)
{
    uint64_t c = call->count, un = (uint64_t)n, ur = (uint64_t)rank;
    *in = *out = c;
    *in_alias = *out_alias = 0;
    if (call->coll == COLL_REDUCE_SCATTER) {
        *in = un * c;
        *out_alias = ur * c;
    } else if (call->coll == COLL_ALLGATHER) {
        *out = un * c;
        *in_alias = ur * c;
    } else if (call->coll == COLL_ALLTOALL) {
        *in = *out = un * c;
    } else if (call->coll == COLL_BARRIER) {
        *in = *out = 0;
    }
}

static int reducing(coll_collective_t c)
{
    return c == COLL_ALLREDUCE || c == COLL_REDUCE_SCATTER;
}

/* Phantom mode: a NULL or phantom output means sizes only. */
static int sizes_only(struct gcl_comm *c, const gcl_call_t *call)
{
    const gcl_ipu_t *me = c->peers.ipu;
    return me->phantom && (!call->recv || gcl_sim_is_phantom(me->sim, call->recv));
}

static gcl_status_t check_buffers(struct gcl_comm *c, const gcl_call_t *call)
{
    size_t es = gcl_dtype_size(call->type);
    uint64_t in, out, ia, oa;
    shape(call, c->peers.size, c->peers.rank, &in, &out, &ia, &oa);
    size_t most = es ? (SIZE_MAX / 4) / es / (size_t)c->peers.size : 0;
    if (es && call->count > most)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what,
                      "%zu elements is too many: at most %zu of %zu bytes on a group of %d "
                      "(2^62 bytes in all, docs/libgcl.md#limits)",
                      call->count, most, es, c->peers.size);
    if (sizes_only(c, call))
        return GCL_OK;
    int needs_send = call->coll != COLL_BROADCAST || c->peers.rank == call->root;
    if ((in && needs_send && !call->send) || (out && !call->recv))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "a NULL buffer for %zu elements",
                      call->count);
    const char *s = call->send, *r = call->recv;
    if (in && out && needs_send && s < r + out * es && r < s + in * es &&
        s - ia * es != r - oa * es)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what,
                      "the input and output overlap, but not in the in-place layout");
    return GCL_OK;
}

static gcl_status_t check_call(struct gcl_comm *c, const gcl_call_t *call)
{
    const char *why = NULL;
    size_t es = gcl_dtype_size(call->type);
    if (call->coll != COLL_BARRIER && es == 0)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "unknown element type %d",
                      (int)call->type);
    if (reducing(call->coll) &&
        !coll_redop_valid((coll_dtype_t)call->type, (coll_redop_t)call->op, &why))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "%s with %s: %s",
                      gcl_dtype_name(call->type), gcl_redop_name(call->op), why);
    if (call->coll == COLL_BROADCAST && (call->root < 0 || call->root >= c->peers.size))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what,
                      "root %d is not a rank of the group (0 .. %d)", call->root,
                      c->peers.size - 1);
    return check_buffers(c, call);
}

/* Bytes per replica of a call, as GCL_DIRECT_MIN_BYTES counts them (the larger buffer). */
static size_t call_bytes(const gcl_call_t *call, int n)
{
    size_t b = call->count * gcl_dtype_size(call->type);
    return call->coll == COLL_ALLREDUCE ? b : b * (size_t)n;
}

/* The cost model's pick for A: the communicator's last one when the call has its shape, else
 * the instance's cache. */
static const coll_algo_t *choose(struct gcl_comm *c, const coll_args_t *a, char *why, size_t len)
{
    gcl_choice_memo_t *m = &c->memo[a->coll];
    why[0] = '\0';
    if (m->algo && choice_same_call(&m->a, a))
        return m->algo;
    gcl_sim_t *s = c->peers.ipu->sim;
    const coll_algo_t *algo = gcl_simcache_choose(s->cache, s->topo, a, c->peers.ipus, why, len);
    if (algo) {
        m->a = *a;
        m->a.node_of = m->a.host_of = NULL;
        m->algo = algo;
    }
    return algo;
}

/* The name of a plan's data path: host_direct, eager, or the schedule its messages run. */
static const char *path_name(const gcl_plan_t *p)
{
    return p->direct ? "host_direct" : p->eager ? "eager" : p->real->name;
}

static void log_plan(struct gcl_comm *c, const gcl_call_t *call, const gcl_plan_t *p,
                     const char *why)
{
    const char *path = path_name(p);
    if (c->logged[call->coll] == path && !why[0])
        return;
    c->logged[call->coll] = path;
    if (p->mode == GCL_SIM_CHARGE)
        GCL_INFO(GCL_SUB_COLL, "%s over %d replicas: %s%s%s", call->what, c->peers.size, path,
                 why[0] ? ", " : "", why);
    else
        GCL_INFO(GCL_SUB_COLL, "%s over %d replicas: %s, in the canonical order; simulated as %s",
                 call->what, c->peers.size, path, why[0] ? why : p->pod->name);
}

gcl_status_t gcl_plan(struct gcl_comm *c, const gcl_call_t *call, const coll_args_t *a,
                      int blocking, gcl_plan_t *p)
{
    char why[256];
    const char *forced =
        c->algo[a->coll][0] ? c->algo[a->coll] : c->peers.ipu->params->algo[a->coll];
    memset(p, 0, sizeof *p);
    if (strcmp(forced, "auto") != 0) {
        if (coll_algo_select(a, forced, &p->pod, why, sizeof why) != 0)
            return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "%s", why);
        p->real = p->pod;
        p->mode = GCL_SIM_CHARGE;
        p->pod_nodes = sizes_only(c, call);
        return GCL_OK;
    }
    if (!(p->pod = choose(c, a, why, sizeof why)))
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "the automatic choice failed: %s",
                      why);
    int canon = reducing(a->coll) && a->op != COLL_LOCAL && a->count > 0 && !sizes_only(c, call);
    p->eager = blocking && (a->coll == COLL_ALLREDUCE ? canon : !sizes_only(c, call)) &&
               (a->count > 0 || a->coll == COLL_BARRIER) &&
               gcl_eager_eligible(&c->peers, a->coll, a->count * a->elem_size);
    p->direct = !p->eager && blocking && (canon || a->coll == COLL_ALLGATHER) &&
                gcl_direct_eligible(&c->peers, a->coll, call_bytes(call, c->peers.size));
    p->real = p->direct || p->eager ? NULL : canon ? coll_algo_find(a->coll, "canonical") : p->pod;
    p->mode = p->direct || p->eager || canon ? GCL_SIM_REPLAY : GCL_SIM_CHARGE;
    /* Sizes only: no data to place, so the schedule is the pod's own, whose nodes (for a
     * hierarchical algorithm) are IPU-Link domains rather than instances. */
    p->pod_nodes = p->mode == GCL_SIM_CHARGE && sizes_only(c, call);
    log_plan(c, call, p, why);
    return GCL_OK;
}

/* The hash of a plan's data path and pod algorithm, as the signature carries it. */
static uint32_t path_hash(const gcl_plan_t *p)
{
    char path[128];
    snprintf(path, sizeof path, "%s/%s", path_name(p),
             p->mode == GCL_SIM_REPLAY ? p->pod->name : "");
    return gcl_sig_hash(path);
}

/* The plan of CALL: the communicator's memo of the collective when the call has its shape,
 * else planned afresh (and remembered). */
static gcl_status_t plan_call(struct gcl_comm *c, const gcl_call_t *call, const coll_args_t *a,
                              int blocking, const gcl_plan_memo_t **out)
{
    gcl_plan_memo_t *m = &c->plan_memo[call->coll];
    int so = sizes_only(c, call);
    *out = m;
    if (m->valid && m->count == call->count && m->type == (int)call->type &&
        m->op == (int)call->op && m->root == call->root && m->blocking == blocking &&
        m->sizes_only == so)
        return GCL_OK;
    m->valid = 0;
    GCL_CHECK(gcl_plan(c, call, a, blocking, &m->plan));
    m->count = call->count;
    m->type = (int)call->type;
    m->op = (int)call->op;
    m->root = call->root;
    m->blocking = blocking;
    m->sizes_only = so;
    m->path_hash = path_hash(&m->plan);
    m->stamp = ++c->stamps;
    m->valid = 1;
    return GCL_OK;
}

/* Operators that transform each contribution before combining them: a SQUARE_ADD squares it,
 * a logical operator turns it into 0 or 1 (so one replica's answer is 0 or 1 too). The
 * transformed input goes into memory the call owns; the caller's input is left alone. */
static int transforms_input(coll_redop_t op)
{
    return op == COLL_SQUARE_ADD || op == COLL_LOGICAL_AND || op == COLL_LOGICAL_OR;
}

static gcl_status_t transform_input(struct gcl_comm *c, const gcl_call_t *call, uint64_t in,
                                    struct gcl_request *r, const void **input)
{
    size_t bytes = in * gcl_dtype_size(call->type);
    coll_dtype_t t = (coll_dtype_t)call->type;
    if (bytes == 0 || !call->send || gcl_sim_is_phantom(c->peers.ipu->sim, call->send))
        return GCL_OK;
    if (!(r->scratch = gcl_malloc(bytes)))
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "out of host memory");
    if (call->op == GCL_SQUARE_ADD)
        coll_square(t, r->scratch, call->send, in);
    else /* x AND x, x OR x: the truth value of x */
        coll_reduce(t, (coll_redop_t)call->op, r->scratch, call->send, call->send, in);
    *input = r->scratch;
    return GCL_OK;
}

static coll_args_t call_args(struct gcl_comm *c, const gcl_call_t *call)
{
    coll_args_t a = {.coll = call->coll,
                     .rank = c->peers.rank,
                     .nranks = c->peers.size,
                     .count = call->count,
                     .root = call->root,
                     .dtype = (coll_dtype_t)call->type,
                     .op = (coll_redop_t)call->op,
                     .elem_size = gcl_dtype_size(call->type),
                     .node_of = c->peers.node_of,
                     .host_of = c->peers.host_of};
    if (!reducing(call->coll))
        a.op = COLL_SUM; /* not a reduction: the operator is not part of the call */
    if (a.elem_size == 0)
        a.elem_size = 1, a.dtype = COLL_BOOL;
    return a;
}

/* The call's signature: what every message of it carries, and what peers compare. */
static gcl_sig_t signature(struct gcl_comm *c, const gcl_call_t *call, const coll_args_t *a,
                           uint32_t algo)
{
    gcl_sig_t sig;
    memset(&sig, 0, sizeof sig);
    sig.seq = c->seq++;
    sig.coll = (uint8_t)call->coll;
    sig.dtype = (uint8_t)a->dtype;
    sig.op = (uint8_t)a->op;
    sig.gkind = (uint8_t)c->peers.group.kind;
    sig.gsize = c->peers.size;
    sig.root = call->coll == COLL_BROADCAST ? call->root : -1;
    sig.algo = algo;
    sig.listhash = call->layout;
    sig.count = call->count;
    c->peers.hist[sig.seq % GCL_PEERS_HIST] = sig;
    return sig;
}

/* The key of the call SIG names: its communicator's in the high half, its number in the low. */
static uint64_t call_key(const struct gcl_comm *c, const gcl_sig_t *sig)
{
    return ((uint64_t)c->peers.key << 32) | sig->seq;
}

/* Builds the schedule the data path runs (none for host-direct). A blocking call whose plan
 * built the communicator's schedule last time finds it built (a schedule is a pure function of
 * the algorithm and the call's arguments, which the plan's shape fixes). */
static gcl_status_t build(struct gcl_comm *c, const gcl_call_t *call, const gcl_plan_memo_t *m,
                          const coll_args_t *a, coll_schedule_t *sched)
{
    const gcl_plan_t *p = &m->plan;
    const char *why = NULL;
    if (sched == &c->sched) {
        if (c->sched_stamp == m->stamp)
            return GCL_OK;
        c->sched_stamp = 0;
    }
    coll_schedule_reset(sched);
    int brc = p->direct || p->eager ? 0 : coll_build(p->real, a, sched, &why);
    if (brc == 0 && sched == &c->sched)
        c->sched_stamp = m->stamp;
    if (brc != 0)
        return reject(c, brc == -12 ? GCL_ERR_NO_HOST_MEMORY : GCL_ERR_INVALID_ARGUMENT, call->what,
                      "algorithm %s cannot run this call: %s", p->real->name,
                      why ? why : "out of memory");
    return GCL_OK;
}

/* Starts request R of CALL as planned; its failures go to R's record. */
static gcl_status_t start(struct gcl_comm *c, const gcl_call_t *call, const gcl_plan_memo_t *m,
                          coll_args_t *a, const gcl_sig_t *sig, struct gcl_request *r, int blocking)
{
    const gcl_plan_t *p = &m->plan;
    const void *input = call->send;
    uint64_t in, outc, ia, oa;
    shape(call, c->peers.size, c->peers.rank, &in, &outc, &ia, &oa);
    if (reducing(call->coll) && transforms_input(a->op)) {
        GCL_CHECK(transform_input(c, call, in, r, &input));
        if (a->op == COLL_SQUARE_ADD)
            a->op = COLL_SUM; /* the squares are summed */
    }
    coll_schedule_t *sched = blocking ? &c->sched : &r->own;
    if (p->pod_nodes && !c->peers.pod_node_of)
        c->peers.pod_node_of =
            choice_pod_nodes(c->peers.ipu->sim->topo, c->peers.ipus, c->peers.size);
    if (p->pod_nodes && !c->peers.pod_node_of)
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "out of host memory");
    if (p->pod_nodes)
        a->node_of = c->peers.pod_node_of;
    GCL_CHECK(build(c, call, m, a, sched));
    GCL_CHECK(gcl_exec_start(&r->x, &gcl_engine_messages, &c->peers, sched, input, call->recv, sig,
                             call_key(c, sig), call->what, &r->err, blocking));
    r->x.info.op = a->op;
    r->x.sim.sync = 1;
    if (p->direct)
        GCL_CHECK(gcl_direct_setup(&r->x, a));
    if (p->eager)
        GCL_CHECK(gcl_eager_setup(&r->x));
    if (p->mode == GCL_SIM_REPLAY)
        return gcl_sim_plan_replay(&r->x, p->pod, a);
    return gcl_sim_plan_charge(&r->x, p->pod, a, !blocking);
}

/* Sets up and launches the broadcast that early() returned from, parked since: as if its engine
 * had done the caller's part as it did. At the IPU's next call (gcl_ipu_settle). */
static gcl_status_t resume_early(struct gcl_request *r, void *arg)
{
    struct gcl_comm *c = arg;
    coll_args_t a = call_args(c, &c->early.call);
    const gcl_plan_memo_t *m = &c->plan_memo[COLL_BROADCAST]; /* no call planned since */
    GCL_CHECK(start(c, &c->early.call, m, &a, &c->early.sig, r, 1));
    gcl_eager_resume(&r->x, &c->early.got);
    gcl_request_launch_entered(r, &c->early.at);
    return GCL_OK;
}

/* A blocking eager broadcast (SIG): the caller's part first, before the call is set up. The
 * root publishes its data in a cell of its own; a reader copies the root's out, when it is
 * there at entry, as it is when the reader comes after the root. The call then returns,
 * parked: setting it up, a reader's publishing its own cell and the rest wait for the IPU's
 * next call (resume_early), as a parked call's bookkeeping does (exec.h, returned). 1 if it
 * did, 0 if the call must run as any other (a root with no cell free, a reader before the
 * root, an eager post still to fail by GCL_FAULT_INJECT), or a status. */
static int early(struct gcl_comm *c, const gcl_call_t *call, const coll_args_t *a,
                 const gcl_sig_t *sig)
{
    gcl_ipu_t *me = c->peers.ipu;
    uint64_t key = call_key(c, sig);
    size_t bytes = call->count * a->elem_size;
    if (call->root == c->peers.rank) {
        int i = gcl_fault_pending(GCL_FAULT_POST) ? -1 : gcl_eager_claim_early(&c->peers);
        if (i < 0)
            return 0;
        gcl_sim_enter(&c->peers, 1, &c->early.at);
        gcl_eager_send_early(&c->peers, i, key, sig, c->early.at.t, call->send, bytes);
        if (call->recv != call->send)
            memmove(call->recv, call->send, bytes);
        c->early.got.cell = (int8_t)i;
    } else {
        int rc =
            gcl_eager_read_early(&c->peers, call->root, key, sig, call->recv, bytes, &c->early.got);
        if (rc < 0)
            return reject(c, GCL_ERR_INTERNAL, call->what,
                          "the root's eager cell was reused while it was read");
        if (rc == 0)
            return 0;
        gcl_sim_enter(&c->peers, 1, &c->early.at);
    }
    c->early.call = *call;
    c->early.sig = *sig;
    gcl_diag_publish_call(&me->host->hb, me->hostlocal, key, sig);
    gcl_request_reuse(&c->blocking, &c->peers);
    gcl_request_park(&c->blocking, resume_early, c);
    return 1;
}

gcl_status_t gcl_collective(struct gcl_comm *c, const gcl_call_t *call, int blocking,
                            struct gcl_request **out)
{
    if (!blocking && out)
        *out = NULL;
    const gcl_plan_memo_t *m = &c->plan_memo[call->coll];
    if (m->valid && m->plan.eager && call->coll == COLL_BROADCAST && call->root >= 0 &&
        call->root < c->peers.size) /* a hint, before the call is checked: see engines.h */
        gcl_eager_expect(&c->peers, call->root, call->count * gcl_dtype_size(call->type));
    GCL_CHECK(gcl_ipu_settle_for(c->peers.ipu, c->peers.record));
    GCL_CHECK(check_call(c, call));
    coll_args_t a = call_args(c, call);
    GCL_CHECK(plan_call(c, call, &a, blocking, &m));
    c->last_used[call->coll] = path_name(&m->plan);
    c->last_pod[call->coll] = m->plan.pod->name;
    struct gcl_request *r = blocking ? &c->blocking : gcl_request_new(&c->peers);
    if (!r)
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "out of host memory");
    gcl_sig_t sig = signature(c, call, &a, m->path_hash);
    if (m->plan.eager && call->coll == COLL_BROADCAST) {
        int rc = early(c, call, &a, &sig);
        if (rc != 0)
            return rc < 0 ? (gcl_status_t)rc : GCL_OK;
    }
    if (blocking)
        gcl_request_reuse(r, &c->peers);
    gcl_status_t rc = start(c, call, m, &a, &sig, r, blocking);
    if (rc != GCL_OK) {
        if (r->err.status != GCL_OK)
            gcl_err_move(&c->err, &r->err);
        c->ctx->ipu.last_failure = &c->err; /* gcl_run's failure quotes it */
        gcl_request_discard(r);
        return rc;
    }
    gcl_request_launch(r);
    if (blocking)
        return gcl_request_complete(r);
    *out = r;
    return GCL_OK;
}

int gcl_algorithms(const char *collective, const char **names, int max)
{
    coll_collective_t c;
    if (coll_collective_parse(collective, &c) != 0)
        return -1;
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(c, &n);
    for (int i = 0; names && i < max && (size_t)i < n; i++)
        names[i] = list[i]->name;
    return (int)n;
}

gcl_status_t gcl_comm_set_algorithm(gcl_comm_t comm, const char *collective, const char *algorithm)
{
    coll_collective_t c;
    if (!comm || !algorithm || coll_collective_parse(collective, &c) != 0)
        return GCL_ERR_INVALID_ARGUMENT;
    const char *name = gcl_algo_resolve(c, algorithm); /* ours, or GCL's method name */
    if (!name)
        return reject(comm, GCL_ERR_INVALID_ARGUMENT, "gcl_comm_set_algorithm",
                      "%s has no algorithm called \"%.40s\"", collective, algorithm);
    snprintf(comm->algo[c], sizeof comm->algo[c], "%s", name);
    comm->plan_memo[c].valid = 0; /* the next call plans again */
    return GCL_OK;
}

const char *gcl_comm_algorithm(gcl_comm_t comm, const char *collective)
{
    coll_collective_t c;
    if (!comm || coll_collective_parse(collective, &c) != 0)
        return NULL;
    return comm->last_used[c];
}

const char *gcl_comm_simulated_algorithm(gcl_comm_t comm, const char *collective)
{
    coll_collective_t c;
    if (!comm || coll_collective_parse(collective, &c) != 0)
        return NULL;
    return comm->last_pod[c];
}
