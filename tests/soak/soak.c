/*
 * gcl-soak: runs a list of collective and point-to-point cases on every simulated IPU of a job
 * and checks every element of every result exactly (pattern.h), plus the bytes just past each
 * output and, out of place, that the input is unchanged. scripts/soak writes the lists, runs
 * them under poprun on every transport and layout, and makes the table.
 *
 *   poprun --num-replicas 4 --num-instances 2 gcl-soak CASES [--progress PREFIX] [--canary]
 *
 * CASES has one case a line: ID COLLECTIVE TYPE OP COUNT GROUP NONBLOCKING INPLACE ROOT, with
 * COUNT as the API takes it (per rank for reduce_scatter, all_gather and all_to_all), e.g.
 *   17 all_reduce bf16 sum 1048577 all 1 0 -1
 * COLLECTIVE is one of the six collectives or send_recv (the replica's IPU positions 0 and 1
 * swap COUNT elements; it needs 2 IPUs per replica). Every instance reads the same file.
 * With --progress, instance I keeps the ID of the case it is running in PREFIX.I, so that the
 * case a crash interrupted can be named. With --canary (scripts/soak's check of itself), replica
 * 0 turns one element of its first output before checking it, and each instance leaks 64
 * bytes: the soak must count a wrong result and, in a sanitized build, a leak.
 * Prints one line per instance, "gcl-soak: instance I: checks C, bytes B, wrong W, failed F"
 * (a check is one case on one IPU; B, the bytes of the outputs checked), and the first failure;
 * exits 0 when every case passed, 1 otherwise, 2 on bad input.
 */
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ref.h"
#include "gcl/gcl.h"
#include "pattern.h"

enum { SEND_RECV = REF_NCOLL, MAX_GROUPS = 8, GUARD = 64 };

typedef struct {
    long id;
    int coll;
    gcl_dtype_t t;
    gcl_redop_t op;
    size_t count;
    gcl_group_t group;
    int group_index; /* of the job's distinct groups, in order of first use */
    int nb, in_place, root;
} scase_t;

typedef struct {
    scase_t *cases;
    int n;
    gcl_group_t groups[MAX_GROUPS];
    int ngroups;
    int progress_fd, first_replica; /* this instance's first replica writes the progress */
    int canary;                     /* --canary: one wrong element, one leak */
    atomic_long done, wrong, failed;
    atomic_ullong bytes;
    char first[600];
    atomic_int have_first;
} soak_t;

static const char *coll_name(int coll)
{
    return coll == SEND_RECV ? "send_recv" : ref_collectives[coll];
}

static void failure(soak_t *s, atomic_long *counter, const scase_t *c, int replica, int pos,
                    const char *what)
{
    atomic_fetch_add(counter, 1);
    int none = 0;
    if (!atomic_compare_exchange_strong(&s->have_first, &none, 1))
        return;
    char g[32];
    snprintf(s->first, sizeof s->first,
             "case %ld (%s %s %s count %zu group %s%s%s): replica %d IPU %d: %s", c->id,
             coll_name(c->coll), gcl_dtype_name(c->t), gcl_redop_name(c->op), c->count,
             gcl_group_format(c->group, g, sizeof g), c->nb ? ", non-blocking" : "",
             c->in_place ? ", in place" : "", replica, pos, what);
}

/* ---- one case on one IPU ---- */

typedef struct {
    gcl_ctx_t ctx;
    gcl_comm_t comm;
    int replica, pos, rank, n;
    int members[PAT_MEMBERS_MAX];
    size_t es, in, out, b_elems;
    unsigned char *a, *b, *send, *recv;
} run_t;

static gcl_status_t wait_or_test(gcl_status_t rc, gcl_request_t req)
{
    if (rc != GCL_OK)
        return rc;
    int done = 0;
    rc = gcl_test(req, &done); /* one test, then wait: both paths get used */
    return rc == GCL_OK && !done ? gcl_wait(req) : rc;
}

static gcl_status_t send_recv(const scase_t *c, run_t *r)
{
    int peer = 1 - r->pos, tag = (int)(c->id % (1 << 20));
    if (!c->nb) {
        gcl_status_t rc;
        if (r->pos == 0) {
            rc = gcl_send(r->ctx, peer, r->send, c->count, c->t, tag);
            return rc != GCL_OK ? rc : gcl_recv(r->ctx, peer, r->recv, c->count, c->t, tag);
        }
        rc = gcl_recv(r->ctx, peer, r->recv, c->count, c->t, tag);
        return rc != GCL_OK ? rc : gcl_send(r->ctx, peer, r->send, c->count, c->t, tag);
    }
    gcl_request_t sq = NULL, rq = NULL;
    gcl_status_t rc = gcl_recv_start(r->ctx, peer, r->recv, c->count, c->t, tag, &rq);
    if (rc != GCL_OK)
        return rc;
    rc = gcl_send_start(r->ctx, peer, r->send, c->count, c->t, tag, &sq);
    gcl_status_t rr = gcl_wait(rq);
    return rc != GCL_OK ? rc : rr != GCL_OK ? rr : gcl_wait(sq);
}

static gcl_status_t issue(const scase_t *c, run_t *r)
{
    gcl_request_t req = NULL, *q = c->nb ? &req : NULL;
    gcl_comm_t m = r->comm;
    gcl_status_t rc;
    switch (c->coll) {
    case REF_ALL_REDUCE:
        rc = q ? gcl_all_reduce_start(m, r->send, r->recv, c->count, c->t, c->op, q)
               : gcl_all_reduce(m, r->send, r->recv, c->count, c->t, c->op);
        break;
    case REF_REDUCE_SCATTER:
        rc = q ? gcl_reduce_scatter_start(m, r->send, r->recv, c->count, c->t, c->op, q)
               : gcl_reduce_scatter(m, r->send, r->recv, c->count, c->t, c->op);
        break;
    case REF_ALL_GATHER:
        rc = q ? gcl_all_gather_start(m, r->send, r->recv, c->count, c->t, q)
               : gcl_all_gather(m, r->send, r->recv, c->count, c->t);
        break;
    case REF_BROADCAST:
        rc = q ? gcl_broadcast_start(m, r->send, r->recv, c->count, c->t, c->root, q)
               : gcl_broadcast(m, r->send, r->recv, c->count, c->t, c->root);
        break;
    case REF_ALL_TO_ALL:
        rc = q ? gcl_all_to_all_start(m, r->send, r->recv, c->count, c->t, q)
               : gcl_all_to_all(m, r->send, r->recv, c->count, c->t);
        break;
    case REF_BARRIER:
        rc = q ? gcl_barrier_start(m, q) : gcl_barrier(m);
        break;
    default:
        return send_recv(c, r);
    }
    return q ? wait_or_test(rc, req) : rc;
}

/* Sets up R's buffers for C: in place as gcl.h lays it out, or apart; the input filled. */
static int prepare(const scase_t *c, run_t *r)
{
    if (c->coll == SEND_RECV) {
        r->in = r->out = c->count;
    } else {
        ref_sizes(c->coll, c->count, r->n, &r->in, &r->out);
    }
    size_t span = r->in > r->out ? r->in : r->out;
    int inplace = c->in_place && c->coll != SEND_RECV;
    r->b_elems = inplace ? 0 : r->out; /* in place, B is only a guard */
    r->a = malloc(span * r->es + GUARD);
    r->b = malloc(r->b_elems * r->es + GUARD);
    if (!r->a || !r->b)
        return -1;
    memset(r->a + span * r->es, 0xa5, GUARD);
    memset(r->b + r->b_elems * r->es, 0xa5, GUARD);
    r->send = r->a;
    r->recv = inplace ? r->a : r->b;
    if (inplace && c->coll == REF_REDUCE_SCATTER)
        r->recv = r->a + (size_t)r->rank * c->count * r->es;
    if (inplace && c->coll == REF_ALL_GATHER)
        r->send = r->a + (size_t)r->rank * c->count * r->es;
    pat_t in;
    pat_set_input(&in, c->t, r->replica, r->pos);
    if (pat_build(&in) != 0)
        return -1;
    pat_fill(&in, r->send, 0, c->coll == REF_ALL_GATHER ? c->count : r->in);
    if (!inplace) /* what no call may write: the output starts as a pattern of its own */
        memset(r->recv, 0x5a, r->out * r->es);
    pat_free(&in);
    return 0;
}

/* Checks N elements at BUF against input (M, POS) or, with REDUCE, the group's reduction, from
 * element FIRST. Returns the first wrong one, or N. */
static size_t check_run(const scase_t *c, const run_t *r, const void *buf, size_t n, int m, int pos,
                        int reduce, uint64_t first)
{
    pat_t p;
    if (reduce)
        pat_set_reduced(&p, c->t, c->op, r->members, r->n, pos);
    else
        pat_set_input(&p, c->t, m, pos);
    if (pat_build(&p) != 0)
        return 0;
    size_t bad = pat_check(&p, buf, first, n);
    pat_free(&p);
    return bad;
}

/* The first wrong element of R's output, as "element I (block Q)", or NULL when all agree. */
static const char *verify(const scase_t *c, const run_t *r, char *why, size_t len)
{
    size_t n = c->count, bad = n;
    int q = 0;
    switch (c->coll) {
    case REF_ALL_REDUCE:
        bad = check_run(c, r, r->recv, n, 0, r->pos, 1, 0);
        break;
    case REF_REDUCE_SCATTER:
        bad = check_run(c, r, r->recv, n, 0, r->pos, 1, (uint64_t)r->rank * n);
        break;
    case REF_BROADCAST:
        bad = check_run(c, r, r->recv, n, r->members[c->root], r->pos, 0, 0);
        break;
    case REF_ALL_GATHER:
    case REF_ALL_TO_ALL:
        for (q = 0; q < r->n && bad == n; q++) {
            uint64_t first = c->coll == REF_ALL_TO_ALL ? (uint64_t)r->rank * n : 0;
            bad = check_run(c, r, r->recv + (size_t)q * n * r->es, n, r->members[q], r->pos, 0,
                            first);
        }
        q--;
        break;
    case SEND_RECV:
        bad = check_run(c, r, r->recv, n, r->replica, 1 - r->pos, 0, 0);
        break;
    default:
        break;
    }
    if (bad < n) {
        snprintf(why, len, "element %zu of block %d is wrong", bad, q);
        return why;
    }
    return NULL;
}

/* Bytes past the buffers, and an out-of-place input, as they were before the call. */
static const char *verify_around(const scase_t *c, const run_t *r)
{
    size_t span = r->in > r->out ? r->in : r->out;
    for (int k = 0; k < GUARD; k++)
        if (r->a[span * r->es + k] != 0xa5 || r->b[r->b_elems * r->es + k] != 0xa5)
            return "a byte past the end of a buffer was written";
    int inplace = c->in_place && c->coll != SEND_RECV;
    size_t in = c->coll == REF_ALL_GATHER ? c->count : r->in;
    if (!inplace && c->coll != REF_BARRIER &&
        check_run(c, r, r->send, in, r->replica, r->pos, 0, 0) < in)
        return "the input was changed";
    return NULL;
}

static void run_case(soak_t *s, const scase_t *c, run_t *r)
{
    char why[96];
    const char *wrong = NULL;
    gcl_status_t rc = GCL_OK;
    if (prepare(c, r) != 0) {
        failure(s, &s->failed, c, r->replica, r->pos, "out of host memory for the buffers");
    } else if ((rc = issue(c, r)) != GCL_OK) {
        char msg[400];
        snprintf(msg, sizeof msg, "%s: %s", gcl_status_name(rc),
                 c->coll == SEND_RECV ? gcl_ctx_last_error(r->ctx) : gcl_last_error(r->comm));
        failure(s, &s->failed, c, r->replica, r->pos, msg);
    } else {
        if (s->canary && r->replica == 0 && r->pos == 0 && c == &s->cases[0] && r->out > 0)
            r->recv[0] ^= 0x40; /* --canary: this check must fail */
        if ((wrong = verify(c, r, why, sizeof why)) || (wrong = verify_around(c, r)))
            failure(s, &s->wrong, c, r->replica, r->pos, wrong);
        else
            atomic_fetch_add(&s->bytes, (unsigned long long)(r->out * r->es));
    }
    free(r->a);
    free(r->b);
    r->a = r->b = NULL;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    soak_t *s = arg;
    gcl_comm_t comms[MAX_GROUPS] = {0};
    int nrep = gcl_ctx_num_replicas(ctx);
    for (int g = 0; g < s->ngroups; g++)
        if (gcl_comm_create(ctx, s->groups[g], &comms[g]) != GCL_OK)
            return GCL_ERR_INVALID_ARGUMENT;
    run_t r = {.ctx = ctx, .replica = gcl_ctx_replica(ctx), .pos = gcl_ctx_ipu(ctx)};
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < s->n && rc == GCL_OK; k++) {
        const scase_t *c = &s->cases[k];
        if (s->progress_fd >= 0 && r.replica == s->first_replica && r.pos == 0) {
            char line[24];
            int len = snprintf(line, sizeof line, "%-20ld\n", c->id);
            (void)!pwrite(s->progress_fd, line, (size_t)len, 0);
        }
        r.comm = comms[c->group_index];
        r.rank = gcl_comm_rank(r.comm);
        r.n = gcl_comm_size(r.comm);
        ref_members(c->group, nrep, r.replica, r.members);
        r.es = gcl_dtype_size(c->t);
        long before = atomic_load(&s->failed);
        run_case(s, c, &r);
        if (atomic_load(&s->failed) != before)
            rc = GCL_ERR_ABORTED; /* a failed call: the communicators are not to be trusted */
        atomic_fetch_add(&s->done, 1);
    }
    for (int g = 0; g < s->ngroups; g++)
        gcl_comm_destroy(comms[g]);
    return rc;
}

/* ---- the case list ---- */

static int parse_case(soak_t *s, const char *line, scase_t *c, char *err, size_t len)
{
    char coll[32], type[16], op[16], group[32];
    unsigned long long count;
    if (sscanf(line, "%ld %31s %15s %15s %llu %31s %d %d %d", &c->id, coll, type, op, &count, group,
               &c->nb, &c->in_place, &c->root) != 9) {
        snprintf(err, len,
                 "a case needs 9 fields: ID COLLECTIVE TYPE OP COUNT GROUP NB INPLACE ROOT");
        return -1;
    }
    c->count = (size_t)count;
    c->coll = strcmp(coll, "send_recv") == 0 ? SEND_RECV : ref_collective(coll);
    if (c->coll < 0 || gcl_dtype_parse(type, &c->t) != 0 || gcl_redop_parse(op, &c->op) != 0 ||
        gcl_group_parse(group, &c->group) != 0) {
        snprintf(err, len, "unknown collective, type, op or group in '%s'", line);
        return -1;
    }
    if (c->t != GCL_F32 && c->t != GCL_F16 && c->t != GCL_BF16 && c->t != GCL_I32) {
        snprintf(err, len, "type %s: the soak checks f32, f16, bf16 and i32", type);
        return -1;
    }
    int g = 0;
    while (g < s->ngroups && memcmp(&s->groups[g], &c->group, sizeof c->group) != 0)
        g++;
    if (g == MAX_GROUPS) {
        snprintf(err, len, "more than %d distinct groups", MAX_GROUPS);
        return -1;
    }
    if (g == s->ngroups)
        s->groups[s->ngroups++] = c->group;
    c->group_index = g;
    return 0;
}

static int load(soak_t *s, const char *path, char *err, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, len, "cannot read %s", path);
        return -1;
    }
    char line[256];
    int cap = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (s->n == cap) {
            cap = cap ? 2 * cap : 64;
            scase_t *more = realloc(s->cases, (size_t)cap * sizeof *more);
            if (!more) {
                snprintf(err, len, "out of memory");
                rc = -1;
                break;
            }
            s->cases = more;
        }
        rc = parse_case(s, line, &s->cases[s->n], err, len);
        s->n += rc == 0;
    }
    fclose(f);
    return rc;
}

static void *volatile canary_leak;

int main(int argc, char **argv)
{
    soak_t s = {.progress_fd = -1};
    const char *progress = NULL;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--progress") == 0 && i + 1 < argc) {
            progress = argv[++i];
        } else if (strcmp(argv[i], "--canary") == 0) {
            s.canary = 1;
        } else {
            fprintf(stderr, "gcl-soak: unknown option '%s'\n", argv[i]);
            argc = 0;
        }
    }
    if (argc < 2) {
        fprintf(stderr, "usage: gcl-soak CASES [--progress PREFIX] [--canary]\n");
        return 2;
    }
    char err[300];
    if (load(&s, argv[1], err, sizeof err) != 0) {
        fprintf(stderr, "gcl-soak: %s\n", err);
        free(s.cases);
        return 2;
    }
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK) {
        fprintf(stderr, "gcl-soak: %s\n", gcl_init_error());
        free(s.cases);
        return 1;
    }
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    s.first_replica = info.replica_offset;
    if (progress) {
        char path[4096];
        snprintf(path, sizeof path, "%s.%d", progress, info.instance_index);
        s.progress_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    }
    gcl_status_t rc = gcl_run(inst, program, &s);
    printf("gcl-soak: instance %d: checks %ld, bytes %llu, wrong %ld, failed %ld\n",
           info.instance_index, atomic_load(&s.done), atomic_load(&s.bytes), atomic_load(&s.wrong),
           atomic_load(&s.failed));
    if (atomic_load(&s.have_first))
        printf("gcl-soak: instance %d: first failure: %s\n", info.instance_index, s.first);
    else if (rc != GCL_OK)
        printf("gcl-soak: instance %d: %s\n", info.instance_index, gcl_instance_error(inst));
    fflush(stdout);
    if (s.progress_fd >= 0)
        close(s.progress_fd);
    int bad = rc != GCL_OK || atomic_load(&s.wrong) || atomic_load(&s.failed);
    gcl_finalize(inst);
    free(s.cases);
    if (s.canary) { /* the leak: its only pointer is dropped */
        canary_leak = malloc(64);
        if (canary_leak)
            memset(canary_leak, 1, 64);
        canary_leak = NULL;
    }
    return bad ? 1 : 0;
}
