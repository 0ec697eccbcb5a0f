/*
 * What every replica (nccl-tests' rank) runs: for each type, operator (and root), each size from
 * -b to -e, an out-of-place then an in-place measurement, as nccl-tests' TimeTest/BenchTime:
 *
 *   fill the input; one run; barrier; -n runs timed (-m at a time, started together);
 *   the mean time per run over the ranks (-a: rank 0's, mean, min or max);
 *   -c more runs on fresh input, each checked element by element against the reference.
 *
 * Times are wall-clock time on this machine (the simulated pod time is gcl-bench's business).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/ref.h"
#include "nccl.h"

typedef struct {
    nccl_job_t *job;
    gcl_ctx_t ctx;
    gcl_comm_t comm;
    int rank, n;
    int ipu;  /* this IPU's position in its replica: each position is a sweep of its own */
    int lead; /* rank 0's first IPU: the one that prints */
    char *send, *recv, *expect; /* buffers of -e bytes (and some) */
    gcl_dtype_t type;
    gcl_redop_t op;
    const char *type_name, *op_name;
    int root;
    size_t bytes; /* this row's size */
} bench_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* The first failure of the job, where it happened (for nccl-tests' "Test NCCL failure FILE:LINE"
 * line), and RC. */
static gcl_status_t failed_at(const bench_t *b, gcl_status_t rc, const char *file, int line)
{
    nccl_job_t *job = b->job;
    if (__atomic_exchange_n(&job->failed, 1, __ATOMIC_ACQ_REL) == 0) {
        const char *base = strrchr(file, '/');
        job->fail_file = base ? base + 1 : file;
        job->fail_line = line;
        job->fail_status = rc;
        const char *text = b->comm ? gcl_last_error(b->comm) : "";
        snprintf(job->error, sizeof job->error, "%s", *text ? text : gcl_ctx_last_error(b->ctx));
    }
    return rc;
}

#define TRY(b, call)                                                                               \
    do {                                                                                           \
        gcl_status_t rc_ = (call);                                                                 \
        if (rc_ != GCL_OK)                                                                         \
            return failed_at(b, rc_, __FILE__, __LINE__);                                          \
    } while (0)

/* The buffers and counts of one run of B's current size. */
typedef struct {
    size_t send, recv, param; /* elements */
    char *sbuf, *rbuf;
} shape_t;

static shape_t shape_of(const bench_t *b, int in_place)
{
    shape_t s;
    size_t es = gcl_dtype_size(b->type), si, ri;
    b->job->tool->counts(b->bytes / es, b->n, &s.send, &s.recv, &s.param, &si, &ri);
    s.sbuf = in_place ? b->recv + si * (size_t)b->rank * es : b->send;
    s.rbuf = in_place ? b->recv + ri * (size_t)b->rank * es : b->recv;
    return s;
}

/* One call of the collective; with REQ, started and returned (for -m). */
static gcl_status_t call(const bench_t *b, const shape_t *s, gcl_request_t *req)
{
    gcl_comm_t c = b->comm;
    switch (b->job->tool->coll) {
    case REF_ALL_REDUCE:
        return req ? gcl_all_reduce_start(c, s->sbuf, s->rbuf, s->param, b->type, b->op, req)
                   : gcl_all_reduce(c, s->sbuf, s->rbuf, s->param, b->type, b->op);
    case REF_REDUCE_SCATTER:
        return req ? gcl_reduce_scatter_start(c, s->sbuf, s->rbuf, s->param, b->type, b->op, req)
                   : gcl_reduce_scatter(c, s->sbuf, s->rbuf, s->param, b->type, b->op);
    case REF_ALL_GATHER:
        return req ? gcl_all_gather_start(c, s->sbuf, s->rbuf, s->param, b->type, req)
                   : gcl_all_gather(c, s->sbuf, s->rbuf, s->param, b->type);
    case REF_BROADCAST:
        return req ? gcl_broadcast_start(c, s->sbuf, s->rbuf, s->param, b->type, b->root, req)
                   : gcl_broadcast(c, s->sbuf, s->rbuf, s->param, b->type, b->root);
    default:
        return req ? gcl_all_to_all_start(c, s->sbuf, s->rbuf, s->param, b->type, req)
                   : gcl_all_to_all(c, s->sbuf, s->rbuf, s->param, b->type);
    }
}

/* -m runs started together and then completed, or one blocking run (and a barrier with -z). */
static gcl_status_t run_once(const bench_t *b, const shape_t *s)
{
    const nccl_opts_t *o = b->job->o;
    if (o->agg <= 1) {
        TRY(b, call(b, s, NULL));
        if (o->blocking)
            TRY(b, gcl_barrier(b->comm));
        return GCL_OK;
    }
    gcl_request_t req[1024];
    gcl_status_t rc = GCL_OK;
    int started = 0;
    for (; started < o->agg && rc == GCL_OK; started++)
        rc = call(b, s, &req[started]);
    if (rc != GCL_OK)
        started--;
    for (int i = 0; i < started; i++) {
        gcl_status_t w = gcl_wait(req[i]);
        rc = rc != GCL_OK ? rc : w;
    }
    TRY(b, rc);
    return GCL_OK;
}

static void fill(const bench_t *b, const shape_t *s)
{
    gcl_redop_t fop = b->job->tool->reduces ? b->op : GCL_SUM;
    mref_fill(s->sbuf, b->type, fop, b->rank, 0, s->send);
}

/* Elements of the output that differ from the reference. */
static long long count_wrong(const bench_t *b, const shape_t *s)
{
    int *members = malloc((size_t)b->n * sizeof *members);
    size_t es = gcl_dtype_size(b->type);
    long long wrong = 0;
    if (!members)
        return (long long)s->recv;
    for (int q = 0; q < b->n; q++) /* the group is every replica */
        members[q] = q;
    gcl_redop_t op = b->job->tool->reduces ? b->op : GCL_SUM;
    for (size_t i = 0; i < s->recv; i++) {
        mref_store(b->expect, b->type,
                   ref_expect(b->job->tool->coll, b->type, op, s->param, b->root, members, b->n,
                              b->rank, i));
        wrong += memcmp(b->expect, s->rbuf + i * es, es) != 0;
    }
    free(members);
    return wrong;
}

/* VALUE over the ranks by -a (0: rank 0's, 1: mean, 2: min, 3: max), in nanoseconds. */
static gcl_status_t combine_time(const bench_t *b, double *sec)
{
    uint64_t ns = (uint64_t)(*sec * 1e9 + 0.5);
    int a = b->job->o->average;
    if (a == 0)
        TRY(b, gcl_broadcast(b->comm, &ns, &ns, 1, GCL_U64, 0));
    else
        TRY(b, gcl_all_reduce(b->comm, &ns, &ns, 1, GCL_U64,
                              a == 1   ? GCL_SUM
                              : a == 2 ? GCL_MIN
                                       : GCL_MAX));
    *sec = (double)ns * 1e-9 / (a == 1 ? b->n : 1);
    return GCL_OK;
}

/* Out-of-place or in-place measurement of the current size: nccl-tests' BenchTime. */
static gcl_status_t bench_time(bench_t *b, int in_place, nccl_row_t *row)
{
    const nccl_opts_t *o = b->job->o;
    shape_t s = shape_of(b, in_place);
    if (o->check)
        fill(b, &s);
    GCL_CHECK(run_once(b, &s));
    TRY(b, gcl_barrier(b->comm));
    double t0 = now_s();
    for (int i = 0; i < o->iters; i++)
        GCL_CHECK(run_once(b, &s));
    int runs = o->iters * (o->agg > 1 ? o->agg : 1);
    double sec = runs ? (now_s() - t0) / runs : 0;
    GCL_CHECK(combine_time(b, &sec));
    uint64_t wrong = 0;
    for (int c = 0; c < o->check && wrong == 0; c++) {
        fill(b, &s);
        TRY(b, call(b, &s, NULL));
        if (o->corrupt && b->rank == b->n - 1 && s.recv > 0)
            s.rbuf[0] ^= 0x5a;
        wrong = (uint64_t)count_wrong(b, &s);
        TRY(b, gcl_all_reduce(b->comm, &wrong, &wrong, 1, GCL_U64, GCL_SUM));
    }
    size_t es = gcl_dtype_size(b->type);
    double algbw = sec > 0 ? b->job->tool->alg_bytes(s.param, es, b->n) / 1e9 / sec : 0;
    size_t shown = (s.send > s.recv ? s.send : s.recv) * es; /* nccl-tests' size column */
    *row = (nccl_row_t){shown,
                        s.param,
                        b->type_name,
                        b->op_name,
                        b->root,
                        in_place,
                        sec * 1e6,
                        algbw,
                        algbw * b->job->tool->bus_factor(b->n),
                        o->check ? (long long)wrong : -1};
    return GCL_OK;
}

/* Every size, once per -N cycle: nccl-tests' TimeTest. */
static gcl_status_t time_test(bench_t *b)
{
    const nccl_opts_t *o = b->job->o;
    int lead = b->lead, counts = b->rank == 0 && !b->lead;
    for (int pass = 0; pass < 2; pass++) { /* warm-up, at the largest then the smallest size */
        b->bytes = pass == 0 ? o->max_bytes : o->min_bytes;
        shape_t s = shape_of(b, 0);
        for (int i = 0; i < o->warmup; i++)
            TRY(b, call(b, &s, NULL));
    }
    for (int cycle = 0; cycle < o->cycles; cycle++) {
        for (size_t size = o->min_bytes; size <= o->max_bytes;
             size = o->step_factor > 1 ? size * o->step_factor : size + o->step_bytes) {
            nccl_row_t row;
            b->bytes = size;
            for (int in_place = 0; in_place < 2; in_place++) {
                GCL_CHECK(bench_time(b, in_place, &row));
                if (counts && row.wrong > 0) /* rows of the other IPUs count, unprinted */
                    __atomic_add_fetch(&b->job->other_errors, 1, __ATOMIC_RELAXED);
                if (lead && in_place == 0)
                    nccl_report_row_start(b->job, &row);
                if (lead)
                    nccl_report_row_half(b->job, &row);
            }
            if (lead)
                nccl_report_row_end(b->job);
            if (size == 0 && o->step_factor > 1)
                break; /* 0 x factor would never grow */
        }
    }
    return GCL_OK;
}

/* Each type, operator and root the command line asked for. */
static gcl_status_t run_tests(bench_t *b)
{
    const nccl_opts_t *o = b->job->o;
    const nccl_coll_t *t = b->job->tool;
    int nops = t->reduces ? o->nops : 1;
    for (int ti = 0; ti < o->ntypes; ti++) {
        for (int oi = 0; oi < nops; oi++) {
            b->type = o->types[ti];
            b->type_name = o->type_names[ti];
            b->op = t->reduces ? o->ops[oi] : GCL_SUM;
            b->op_name = t->reduces ? o->op_names[oi] : "none";
            const char *why = NULL;
            if (t->reduces && gcl_redop_check(b->type, b->op, &why) != 0) {
                if (b->lead)
                    printf("# skipping %s %s: %s\n", b->type_name, b->op_name, why);
                continue;
            }
            int first = t->rooted && o->root < 0 ? 0 : t->rooted ? o->root : -1;
            int last = t->rooted && o->root < 0 ? b->n - 1 : first;
            for (b->root = first; b->root <= last; b->root++)
                GCL_CHECK(time_test(b));
        }
    }
    return GCL_OK;
}

/* Every rank's lines of "# Using devices", one per IPU, in rank order: each IPU position
 * gathers its ranks' lines, and the IPUs of rank 0 (all in this process, on instance 0) send
 * theirs to its first IPU, which prints rank by rank, IPU by IPU. */
#define RANK_LINE   256
#define DEVICES_TAG 77

static gcl_status_t gather_devices(bench_t *b, char *all)
{
    char mine[RANK_LINE], host[64] = "?";
    gethostname(host, sizeof host - 1);
    int ipu = gcl_ctx_global_ipu(b->ctx);
    memset(mine, 0, sizeof mine);
    snprintf(mine, sizeof mine,
             "#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s", b->rank, 0,
             (int)getpid(), host, ipu, 0, ipu >> 8, ipu & 0xff, "GC200 IPU (simulated)");
    TRY(b, gcl_all_gather(b->comm, mine, all, RANK_LINE / 4, GCL_U32));
    size_t words = (size_t)b->n * RANK_LINE / 4;
    if (b->rank == 0 && b->ipu > 0)
        TRY(b, gcl_send(b->ctx, 0, all, words, GCL_U32, DEVICES_TAG));
    for (int k = 1; b->lead && k < b->job->info.ipus_per_replica; k++)
        TRY(b,
            gcl_recv(b->ctx, k, all + (size_t)k * b->n * RANK_LINE, words, GCL_U32, DEVICES_TAG));
    return GCL_OK;
}

static gcl_status_t report_devices(bench_t *b)
{
    int ipr = b->job->info.ipus_per_replica;
    char *all = malloc((size_t)b->n * (b->lead ? (size_t)ipr : 1) * RANK_LINE);
    char **lines = b->lead ? malloc((size_t)b->n * (size_t)ipr * sizeof *lines) : NULL;
    gcl_status_t rc = all && (lines || !b->lead) ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
    if (rc == GCL_OK)
        rc = gather_devices(b, all);
    if (rc == GCL_OK && b->lead) {
        for (int r = 0; r < b->n; r++) /* rank r's IPU k: position k's block, line r */
            for (int k = 0; k < ipr; k++)
                lines[r * ipr + k] = all + ((size_t)k * b->n + r) * RANK_LINE;
        nccl_report_ranks(b->job, lines, b->n * ipr);
        nccl_report_table_header(b->job);
    }
    free(lines);
    free(all);
    return rc;
}

gcl_status_t nccl_program(gcl_ctx_t ctx, void *arg)
{
    nccl_job_t *job = arg;
    bench_t b = {.job = job, .ctx = ctx, .ipu = gcl_ctx_ipu(ctx)};
    gcl_status_t rc = gcl_comm_create(ctx, gcl_group_all(), &b.comm);
    if (rc != GCL_OK)
        return failed_at(&b, rc, __FILE__, __LINE__);
    b.rank = gcl_comm_rank(b.comm);
    b.n = gcl_comm_size(b.comm);
    b.lead = b.rank == 0 && b.ipu == 0;
    size_t cap = job->o->max_bytes + 64;
    b.send = malloc(cap);
    b.recv = malloc(cap);
    b.expect = malloc(64);
    if (!b.send || !b.recv || !b.expect)
        rc = failed_at(&b, GCL_ERR_NO_HOST_MEMORY, __FILE__, __LINE__);
    char why[sizeof job->usage] = "";
    if (rc == GCL_OK && (rc = nccl_agree(b.comm, job, why, sizeof why)) != GCL_OK) {
        if (why[0] && b.lead) /* every rank found it; rank 0's IPU 0 says it */
            snprintf(job->usage, sizeof job->usage, "%s", why);
        if (!why[0])
            failed_at(&b, rc, __FILE__, __LINE__);
        else
            __atomic_store_n(&job->usage_error, 1, __ATOMIC_RELEASE);
    }
    if (rc == GCL_OK && b.lead)
        nccl_report_header(job);
    if (rc == GCL_OK)
        rc = report_devices(&b);
    if (rc == GCL_OK)
        rc = run_tests(&b);
    free(b.expect);
    free(b.recv);
    free(b.send);
    gcl_comm_destroy(b.comm);
    return rc;
}
