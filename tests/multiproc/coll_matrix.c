/*
 * coll-matrix: every collective x algorithm x valid type/op x replica group, in place and out of
 * place, blocking and non-blocking, against independent references (matrix_ref.c). Run under
 * poprun with any replica/instance layout; exits 1 on any wrong element or failed call.
 *
 *   poprun --num-replicas 6 --num-instances 3 coll-matrix [--quick]
 */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ref.h"
#include "gcl/sim.h"

#define MAX_ALGOS  16
#define MAX_GROUPS 4

#define collectives ref_collectives
enum { ALL_REDUCE, REDUCE_SCATTER, ALL_GATHER, BROADCAST, ALL_TO_ALL, BARRIER, NCOLL };

typedef struct {
    int quick;
    int ipu_memory; /* buffers from gcl_ipu_malloc instead of malloc */
    atomic_long checks, failures;
    char first[600];
    atomic_int have_first;
} job_t;

static void failure(job_t *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void failure(job_t *j, const char *fmt, ...)
{
    atomic_fetch_add(&j->failures, 1);
    int none = 0;
    if (!atomic_compare_exchange_strong(&j->have_first, &none, 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->first, sizeof j->first, fmt, ap);
    va_end(ap);
}

typedef struct {
    gcl_comm_t comm;
    gcl_group_t group;
    int members[512]; /* global replica of each rank, by the definitions in gcl/types.h */
} group_t;

static void members_of(group_t *g, int nreplicas, int replica)
{
    ref_members(g->group, nreplicas, replica, g->members);
}

typedef struct {
    int coll;
    gcl_dtype_t t;
    gcl_redop_t op;
    size_t count;
    int root, in_place, nonblocking;
} case_t;

static void sizes(const case_t *c, int n, size_t *in, size_t *out)
{
    ref_sizes(c->coll, c->count, n, in, out);
}

static double expect(const case_t *c, const group_t *g, int n, int rank, size_t i)
{
    return ref_expect(c->coll, c->t, c->op, c->count, c->root, g->members, n, rank, i);
}

static gcl_status_t issue(const case_t *c, gcl_comm_t comm, const void *send, void *recv)
{
    gcl_request_t req = NULL;
    gcl_request_t *r = c->nonblocking ? &req : NULL;
    gcl_status_t rc;
    switch (c->coll) {
    case ALL_REDUCE:
        rc = r ? gcl_all_reduce_start(comm, send, recv, c->count, c->t, c->op, r)
               : gcl_all_reduce(comm, send, recv, c->count, c->t, c->op);
        break;
    case REDUCE_SCATTER:
        rc = r ? gcl_reduce_scatter_start(comm, send, recv, c->count, c->t, c->op, r)
               : gcl_reduce_scatter(comm, send, recv, c->count, c->t, c->op);
        break;
    case ALL_GATHER:
        rc = r ? gcl_all_gather_start(comm, send, recv, c->count, c->t, r)
               : gcl_all_gather(comm, send, recv, c->count, c->t);
        break;
    case BROADCAST:
        rc = r ? gcl_broadcast_start(comm, send, recv, c->count, c->t, c->root, r)
               : gcl_broadcast(comm, send, recv, c->count, c->t, c->root);
        break;
    case ALL_TO_ALL:
        rc = r ? gcl_all_to_all_start(comm, send, recv, c->count, c->t, r)
               : gcl_all_to_all(comm, send, recv, c->count, c->t);
        break;
    default:
        rc = r ? gcl_barrier_start(comm, r) : gcl_barrier(comm);
        break;
    }
    if (rc == GCL_OK && r) {
        int done = 0;
        rc = gcl_test(req, &done); /* one test, then wait: both paths get used */
        if (rc == GCL_OK && !done)
            rc = gcl_wait(req);
    }
    return rc;
}

/* Runs one case; returns 1 when the algorithm declined it (a skip), else 0. */
static int run_case(job_t *j, gcl_ctx_t ctx, const group_t *g, const char *algo, const case_t *c)
{
    int n = gcl_comm_size(g->comm), rank = gcl_comm_rank(g->comm), me = gcl_ctx_replica(ctx);
    size_t es = gcl_dtype_size(c->t), in, out;
    sizes(c, n, &in, &out);
    size_t span = in > out ? in : out;
    char *a, *b, *send, *recv;
    if (j->ipu_memory) { /* shareable IPU memory: host-direct calls map it across processes */
        if (gcl_ipu_malloc(ctx, (span + 1) * es, "matrix a", (void **)&a) != GCL_OK ||
            gcl_ipu_malloc(ctx, (out + 1) * es, "matrix b", (void **)&b) != GCL_OK) {
            failure(j, "replica %d: gcl_ipu_malloc failed", me);
            return 0;
        }
    } else {
        a = malloc((span + 1) * es);
        b = malloc((out + 1) * es);
    }
    memset(a, 0xab, (span + 1) * es);
    memset(b, 0xab, (out + 1) * es);
    if (!c->in_place) {
        send = a, recv = b;
    } else if (c->coll == REDUCE_SCATTER) {
        send = a, recv = a + (size_t)rank * c->count * es;
    } else if (c->coll == ALL_GATHER) {
        recv = a, send = a + (size_t)rank * c->count * es;
    } else {
        send = recv = a;
    }
    mref_fill(send, c->t, c->op, me, 0, in);
    gcl_status_t rc = issue(c, g->comm, send, recv);
    const char *err = gcl_last_error(g->comm);
    int skipped = rc == GCL_ERR_INVALID_ARGUMENT && strstr(err, "cannot run this");
    char gname[32];
    gcl_group_format(g->group, gname, sizeof gname);
    if (rc != GCL_OK && !skipped)
        failure(j, "replica %d: %s/%s %s %s count %zu group %s: %s: %s", me, collectives[c->coll],
                algo, gcl_dtype_name(c->t), gcl_redop_name(c->op), c->count, gname,
                gcl_status_name(rc), err);
    for (size_t i = 0; rc == GCL_OK && c->coll != BARRIER && i < out; i++) {
        char want[8];
        mref_store(want, c->t, expect(c, g, n, rank, i));
        if (memcmp(want, recv + i * es, es) != 0) {
            failure(j,
                    "replica %d: %s/%s %s %s count %zu group %s root %d %s%s: element %zu "
                    "is wrong",
                    me, collectives[c->coll], algo, gcl_dtype_name(c->t), gcl_redop_name(c->op),
                    c->count, gname, c->root, c->in_place ? "in place" : "out of place",
                    c->nonblocking ? ", non-blocking" : "", i);
            break;
        }
    }
    atomic_fetch_add(&j->checks, 1);
    if (j->ipu_memory) {
        gcl_ipu_free(ctx, a);
        gcl_ipu_free(ctx, b);
    } else {
        free(a);
        free(b);
    }
    return skipped;
}

static const gcl_dtype_t all_types[] = {GCL_F32, GCL_F16, GCL_BF16, GCL_I32,
                                        GCL_I64, GCL_U32, GCL_U64,  GCL_BOOL};
static const gcl_redop_t all_ops[] = {GCL_SUM,         GCL_MEAN,       GCL_MUL,
                                      GCL_MIN,         GCL_MAX,        GCL_SQUARE_ADD,
                                      GCL_LOGICAL_AND, GCL_LOGICAL_OR, GCL_LOCAL};

/* Every case of one collective and algorithm on one group. */
static void run_algo(job_t *j, gcl_ctx_t ctx, const group_t *g, int coll, const char *algo)
{
    int n = gcl_comm_size(g->comm), k = 0, skips = 0;
    int reducing = coll == ALL_REDUCE || coll == REDUCE_SCATTER;
    case_t c = {.coll = coll, .count = 13};
    for (size_t ti = 0; ti < sizeof all_types / sizeof all_types[0]; ti++) {
        c.t = all_types[ti];
        if (j->quick && c.t != GCL_F32 && c.t != GCL_F16 && c.t != GCL_I32 && c.t != GCL_BOOL)
            continue;
        for (size_t oi = 0; oi < (reducing ? sizeof all_ops / sizeof all_ops[0] : 1); oi++) {
            c.op = reducing ? all_ops[oi] : GCL_SUM;
            if (reducing && !mref_valid(c.t, c.op))
                continue;
            if (!reducing && c.t == GCL_BOOL)
                c.op = GCL_MAX; /* fills bool with 0/1 like the logical ops do */
            c.root = coll == BROADCAST ? (k % 2 ? n - 1 : 0) : -1;
            c.in_place = k % 2;
            c.nonblocking = k % 3 == 0;
            skips += run_case(j, ctx, g, algo, &c);
            k++;
        }
    }
    size_t counts[] = {0, 1, (size_t)n + 1, j->quick ? 1000 : 40001};
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
        for (int ip = 0; ip < 2; ip++) {
            c = (case_t){coll, GCL_F32, GCL_SUM, counts[ci], coll == BROADCAST ? n / 2 : -1,
                         ip,   ci == 2};
            skips += run_case(j, ctx, g, algo, &c);
        }
    }
    (void)skips;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int nrep = gcl_ctx_num_replicas(ctx), ng = 0;
    group_t *groups = calloc(MAX_GROUPS, sizeof *groups);
    gcl_group_t specs[MAX_GROUPS] = {gcl_group_all()};
    ng = 1;
    if (nrep % 2 == 0 && nrep > 2) {
        specs[ng++] = gcl_group_consecutive(2);
        specs[ng++] = gcl_group_orthogonal(2);
    }
    if (nrep % 3 == 0 && nrep > 3)
        specs[ng++] = gcl_group_consecutive(3);
    for (int i = 0; i < ng; i++) {
        groups[i].group = specs[i];
        if (gcl_comm_create(ctx, specs[i], &groups[i].comm) != GCL_OK)
            return GCL_ERR_INTERNAL;
        members_of(&groups[i], nrep, gcl_ctx_replica(ctx));
    }
    for (int coll = 0; coll < NCOLL; coll++) {
        const char *algos[MAX_ALGOS];
        int na = gcl_algorithms(collectives[coll], algos, MAX_ALGOS);
        for (int a = 0; a < na && a < MAX_ALGOS; a++) {
            for (int i = 0; i < ng; i++) {
                gcl_comm_set_algorithm(groups[i].comm, collectives[coll], algos[a]);
                run_algo(j, ctx, &groups[i], coll, algos[a]);
            }
        }
        for (int i = 0; i < ng; i++)
            gcl_comm_set_algorithm(groups[i].comm, collectives[coll], "auto");
    }
    for (int i = 0; i < ng; i++)
        gcl_comm_destroy(groups[i].comm);
    free(groups);
    return GCL_OK;
}

int main(int argc, char **argv)
{
    job_t j = {0};
    gcl_config_t cfg = {.num_replicas = 4, .ipus_per_replica = 1};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick"))
            j.quick = 1;
        else if (!strcmp(argv[i], "--ipu-memory"))
            j.ipu_memory = 1;
        else if (!strcmp(argv[i], "--replicas") && i + 1 < argc)
            cfg.num_replicas = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: coll-matrix [--quick] [--ipu-memory] [--replicas N]\n");
            return 2;
        }
    }
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 1;
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    gcl_status_t rc = gcl_run(inst, program, &j);
    long fails = atomic_load(&j.failures);
    printf("coll-matrix: instance %d of %d, %d replicas: %s: %ld checks, %ld failures\n",
           info.instance_index, info.num_instances, info.num_replicas,
           rc == GCL_OK && fails == 0 ? "PASSED" : "FAILED", atomic_load(&j.checks), fails);
    if (fails)
        printf("coll-matrix: first failure: %s\n", j.first);
    if (rc != GCL_OK)
        printf("coll-matrix: %s\n", gcl_instance_error(inst));
    fflush(stdout);
    gcl_finalize(inst);
    return rc == GCL_OK && fails == 0 ? 0 : 1;
}
