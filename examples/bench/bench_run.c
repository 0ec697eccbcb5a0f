/* gcl-bench's per-IPU program: time each size, check it, compare with MPI. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "common/ref.h"
#include "gcl/sim.h"

double bench_bus_factor(const char *collective, int n)
{
    int c = ref_collective(collective);
    if (n <= 1)
        return c == REF_BROADCAST ? 1.0 : 0.0;
    if (c == REF_ALL_REDUCE)
        return 2.0 * (n - 1) / n;
    if (c == REF_BROADCAST)
        return 1.0;
    return (double)(n - 1) / n;
}

size_t bench_count(const char *collective, size_t bytes, size_t elem, int n)
{
    int c = ref_collective(collective);
    if (c == REF_REDUCE_SCATTER || c == REF_ALL_GATHER || c == REF_ALL_TO_ALL)
        return bytes / elem / (size_t)n;
    return c == REF_BARRIER ? 0 : bytes / elem;
}

size_t bench_moved_bytes(const char *collective, size_t count, size_t elem, int n)
{
    int c = ref_collective(collective);
    if (c == REF_REDUCE_SCATTER || c == REF_ALL_GATHER || c == REF_ALL_TO_ALL)
        return count * elem * (size_t)n;
    return count * elem; /* a barrier's count is 0 */
}

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static gcl_status_t run_once(const bench_opts_t *o, gcl_comm_t comm, const void *send, void *recv,
                             size_t count)
{
    switch (ref_collective(o->collective)) {
    case REF_ALL_REDUCE:
        return gcl_all_reduce(comm, send, recv, count, o->type, o->op);
    case REF_REDUCE_SCATTER:
        return gcl_reduce_scatter(comm, send, recv, count, o->type, o->op);
    case REF_ALL_GATHER:
        return gcl_all_gather(comm, send, recv, count, o->type);
    case REF_BROADCAST:
        return gcl_broadcast(comm, send, recv, count, o->type, o->root);
    case REF_ALL_TO_ALL:
        return gcl_all_to_all(comm, send, recv, count, o->type);
    default:
        return gcl_barrier(comm);
    }
}

typedef struct {
    const bench_opts_t *o;
    gcl_ctx_t ctx;
    gcl_comm_t stats, comm;
    size_t count;    /* of the size being timed */
    double sim_us;   /* the last batch's simulated time per call */
    gcl_status_t rc; /* the first failure of a batch */
    char *send, *recv;
    int members[4096];
    int n, reporter;
    int ipu_memory; /* send and recv came from gcl_ipu_malloc */
} bench_ipu_t;

/* Wrong elements of this rank's output after one checked run. */
static gcl_status_t check_size(const bench_opts_t *o, bench_ipu_t *p, size_t count, uint64_t *wrong)
{
    int c = ref_collective(o->collective), rank = gcl_comm_rank(p->comm);
    size_t es = gcl_dtype_size(o->type), in, out;
    ref_sizes(c, count, p->n, &in, &out);
    mref_fill(p->send, o->type, o->op, gcl_ctx_replica(p->ctx), 0, in);
    memset(p->recv, 0xab, out * es);
    GCL_CHECK(run_once(o, p->comm, p->send, p->recv, count));
    uint64_t bad = 0;
    for (size_t i = 0; i < out; i++) {
        char want[8];
        mref_store(want, o->type,
                   ref_expect(c, o->type, o->op, count, o->root, p->members, p->n, rank, i));
        bad += memcmp(want, p->recv + i * es, es) != 0;
    }
    return gcl_all_reduce(p->stats, &bad, wrong, 1, GCL_U64, GCL_SUM);
}

/* One batch of the rule (rule.h): N calls, the slowest replica's wall time for them; the
 * simulated time per call of the slowest replica goes into P->sim_us. */
static double batch(void *arg, long n)
{
    bench_ipu_t *p = arg;
    const bench_opts_t *o = p->o;
    if (gcl_barrier(p->stats) != GCL_OK)
        return -1;
    uint64_t t0 = now_ns();
    double s0 = gcl_sim_time(p->ctx);
    for (long i = 0; i < n; i++)
        if ((p->rc = run_once(o, p->comm, p->send, p->recv, p->count)) != GCL_OK)
            return -1;
    /* Simulated clocks are exact integers of picoseconds, so the difference is too. */
    uint64_t mine[2] = {now_ns() - t0, (uint64_t)((gcl_sim_time(p->ctx) - s0) * 1e12 + 0.5)};
    uint64_t slowest[2];
    if ((p->rc = gcl_all_reduce(p->stats, mine, slowest, 2, GCL_U64, GCL_MAX)) != GCL_OK)
        return -1;
    p->sim_us = (double)slowest[1] / 1e6 / (double)n;
    return (double)slowest[0] / 1e9;
}

/* Real time per call by the rule, and simulated time per call, of the slowest replica. */
static gcl_status_t time_size(const bench_opts_t *o, bench_ipu_t *p, size_t count, bench_row_t *row)
{
    rule_t rule = {
        .warmup = o->warmup, .iters = o->iters, .repeats = o->repeats, .target_s = RULE_TARGET_S};
    rule_result_t r;
    p->count = count;
    p->rc = GCL_OK;
    if (rule_time(&rule, batch, p, &r) != 0)
        return p->rc != GCL_OK ? p->rc : GCL_ERR_INTERNAL;
    row->time_us = r.time_us;
    row->iters = r.iters;
    row->spread = r.spread;
    row->stable = r.stable;
    row->sim_time_us = p->sim_us;
    return GCL_OK;
}

/* --latency: single calls, each followed by a barrier outside the timing (osu_latency's
 * collective form); a sample is the mean over the replicas of one call's time. The simulated
 * time is the slowest replica's mean over its calls, barriers left out. */
static gcl_status_t time_latency(const bench_opts_t *o, bench_ipu_t *p, size_t count,
                                 bench_row_t *row)
{
    long n = o->samples;
    uint64_t *mine = calloc((size_t)n, sizeof *mine), *sum = calloc((size_t)n, sizeof *sum);
    double *v = calloc((size_t)n, sizeof *v);
    uint64_t sim_ps = 0, slowest = 0; /* simulated clocks are exact integers of picoseconds */
    gcl_status_t rc = mine && sum && v ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
    for (long i = 0; i < o->warmup && rc == GCL_OK; i++)
        if ((rc = run_once(o, p->comm, p->send, p->recv, count)) == GCL_OK)
            rc = gcl_barrier(p->stats);
    for (long i = 0; i < n && rc == GCL_OK; i++) {
        double s0 = gcl_sim_time(p->ctx);
        uint64_t t0 = now_ns();
        rc = run_once(o, p->comm, p->send, p->recv, count);
        mine[i] = now_ns() - t0;
        sim_ps += (uint64_t)((gcl_sim_time(p->ctx) - s0) * 1e12 + 0.5);
        if (rc == GCL_OK)
            rc = gcl_barrier(p->stats);
    }
    if (rc == GCL_OK)
        rc = gcl_all_reduce(p->stats, &sim_ps, &slowest, 1, GCL_U64, GCL_MAX);
    if (rc == GCL_OK)
        row->sim_time_us = (double)slowest / 1e6 / (double)n;
    if (rc == GCL_OK)
        rc = gcl_all_reduce(p->stats, mine, sum, (size_t)n, GCL_U64, GCL_SUM);
    int members = gcl_comm_size(p->stats);
    for (long i = 0; i < n && rc == GCL_OK; i++)
        v[i] = (double)sum[i] / 1e3 / members;
    if (rc == GCL_OK) {
        rule_percentiles(v, n, &row->p50_us, &row->p99_us);
        row->time_us = row->p50_us;
        row->iters = n;
        row->stable = 1;
    }
    free(mine);
    free(sum);
    free(v);
    return rc;
}

static gcl_status_t measure(bench_t *b, bench_ipu_t *p, size_t bytes, bench_row_t *row)
{
    const bench_opts_t *o = b->o;
    size_t es = gcl_dtype_size(o->type);
    memset(row, 0, sizeof *row);
    row->count = bench_count(o->collective, bytes, es, p->n);
    /* What the call moves, as nccl-tests' size column and bandwidth count it: the size rounded
     * down to whole elements (whole blocks of N for the collectives of blocks), 0 below one. */
    row->bytes = bench_moved_bytes(o->collective, row->count, es, p->n);
    row->mpi_time_us = row->mpi_busbw = row->sim_time_us = row->sim_busbw = -1;
    row->p50_us = row->p99_us = -1;
    size_t in, out;
    ref_sizes(ref_collective(o->collective), row->count, p->n, &in, &out);
    if (p->send) /* inputs that make any operator's result exact, for the timed runs too */
        mref_fill(p->send, o->type, o->op, gcl_ctx_replica(p->ctx), 0, in);
    if (o->latency)
        GCL_CHECK(time_latency(o, p, row->count, row));
    else
        GCL_CHECK(time_size(o, p, row->count, row));
    const char *algo = gcl_comm_algorithm(p->comm, o->collective);
    snprintf(row->algo, sizeof row->algo, "%s", algo ? algo : "-");
    double factor = bench_bus_factor(o->collective, p->n), moved = (double)row->bytes;
    row->algbw = row->time_us > 0 ? moved / row->time_us / 1e3 : 0;
    row->busbw = row->algbw * factor;
    row->sim_busbw = row->sim_time_us > 0 ? moved / row->sim_time_us / 1e3 * factor : 0;
    if (o->check)
        GCL_CHECK(check_size(o, p, row->count, &row->wrong));
    if (o->compare_in_job) {
        row->mpi_time_us = bench_mpi_time(o, p->send, p->recv, row->count);
        if (row->mpi_time_us > 0)
            row->mpi_busbw = moved / row->mpi_time_us / 1e3 * factor;
    }
    return GCL_OK;
}

static gcl_status_t setup(bench_t *b, bench_ipu_t *p)
{
    const bench_opts_t *o = b->o;
    GCL_CHECK(gcl_comm_create(p->ctx, gcl_group_all(), &p->stats));
    GCL_CHECK(gcl_comm_create(p->ctx, o->group, &p->comm));
    if (o->algo && gcl_comm_set_algorithm(p->comm, o->collective, o->algo) != GCL_OK)
        return GCL_ERR_INVALID_ARGUMENT;
    p->n = gcl_comm_size(p->comm);
    ref_members(o->group, gcl_ctx_num_replicas(p->ctx), gcl_ctx_replica(p->ctx), p->members);
    p->reporter = gcl_ctx_replica(p->ctx) == 0 && gcl_ctx_ipu(p->ctx) == 0;
    if (o->phantom)
        return GCL_OK;
    /* Room for the largest row's input and output, whatever the collective's layout. */
    size_t es = gcl_dtype_size(o->type), in, out;
    size_t largest = o->nsizes ? 0 : o->max_bytes;
    for (int i = 0; i < o->nsizes; i++)
        largest = o->sizes[i] > largest ? o->sizes[i] : largest;
    ref_sizes(ref_collective(o->collective), bench_count(o->collective, largest, es, p->n), p->n,
              &in, &out);
    /* IPU memory (shareable: host-direct calls between processes map it); the host heap when
     * the buffers are larger than an IPU's SRAM. */
    p->ipu_memory =
        gcl_ipu_malloc(p->ctx, (in + 8) * es, "gcl-bench input", (void **)&p->send) == GCL_OK &&
        gcl_ipu_malloc(p->ctx, (out + 8) * es, "gcl-bench output", (void **)&p->recv) == GCL_OK;
    if (!p->ipu_memory) {
        gcl_ipu_free(p->ctx, p->send);
        p->send = malloc((in + 8) * es);
        p->recv = malloc((out + 8) * es);
    }
    return p->send && p->recv ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
}

gcl_status_t bench_program(gcl_ctx_t ctx, void *arg)
{
    bench_t *b = arg;
    const bench_opts_t *o = b->o;
    bench_ipu_t *p = calloc(1, sizeof *p);
    if (!p)
        return GCL_ERR_NO_HOST_MEMORY;
    p->ctx = ctx;
    p->o = o;
    gcl_status_t rc = setup(b, p);
    int nrows = 0;
    size_t bytes = o->nsizes ? o->sizes[0] : o->min_bytes;
    while (rc == GCL_OK && nrows < BENCH_MAX_ROWS) {
        bench_row_t row;
        rc = measure(b, p, bytes, &row);
        if (rc == GCL_OK && p->reporter)
            b->rows[nrows] = row;
        nrows++;
        if (o->nsizes) { /* --sizes, or --latency's */
            if (nrows >= o->nsizes || ref_collective(o->collective) == REF_BARRIER)
                break;
            bytes = o->sizes[nrows];
            continue;
        }
        /* nccl-tests' grid: -b, then times -f while at most -e, and no row off it (-b 8 -e 1M
         * -f 4 ends at 512K); a size of 0 would never grow, so it is the only row. */
        if (bytes == 0 || bytes > o->max_bytes / (size_t)o->factor ||
            ref_collective(o->collective) == REF_BARRIER)
            break;
        bytes *= (size_t)o->factor;
    }
    if (p->reporter)
        b->nrows = nrows;
    if (rc != GCL_OK && p->reporter)
        snprintf(b->error, sizeof b->error, "%s",
                 gcl_last_error(p->comm)[0] ? gcl_last_error(p->comm) : gcl_last_error(p->stats));
    gcl_comm_destroy(p->comm);
    gcl_comm_destroy(p->stats);
    if (p->ipu_memory) {
        gcl_ipu_free(ctx, p->send);
        gcl_ipu_free(ctx, p->recv);
    } else {
        free(p->send);
        free(p->recv);
    }
    free(p);
    return rc;
}

double bench_memcpy_gbs(size_t bytes)
{
    if (bytes < 4096)
        bytes = 4096;
    char *a = malloc(bytes), *b = malloc(bytes);
    double best = 0;
    if (a && b) {
        memset(a, 1, bytes);
        memset(b, 2, bytes); /* touch every page before timing */
        for (int rep = 0; rep < 5; rep++) {
            uint64_t t0 = now_ns();
            memcpy(rep % 2 ? a : b, rep % 2 ? b : a, bytes);
            double gbs = (double)bytes / (double)(now_ns() - t0);
            best = gbs > best ? gbs : best;
        }
    }
    free(a);
    free(b);
    return best;
}
