/* gcl-bench's output: the table on stdout and the JSON rows. */
#include <stdio.h>

#include "bench.h"

/* Whether the rows carry the rule's columns (iterations per batch, spread) or latency's. */
static int ruled(const bench_opts_t *o)
{
    return o->repeats > 1 || o->iters == 0;
}

static void header(const bench_t *b, int nreplicas)
{
    const bench_opts_t *o = b->o;
    char g[32];
    gcl_group_format(o->group, g, sizeof g);
    char timing[160];
    if (o->latency)
        snprintf(timing, sizeof timing, "latency: %ld single calls after %ld warm-up", o->samples,
                 o->warmup);
    else if (o->iters == 0)
        snprintf(timing, sizeof timing, "calibrated batches after %ld warm-up, median of %d",
                 o->warmup, o->repeats);
    else
        snprintf(timing, sizeof timing, "%ld iterations after %ld warm-up%s", o->iters, o->warmup,
                 o->repeats > 1 ? ", median of batches" : "");
    printf("# gcl-bench %s: %d replicas over %d instances on %d host(s), type %s, op %s, group %s, "
           "algorithm %s, %s%s; simulated pod %s\n",
           o->collective, nreplicas, b->info.num_instances, b->info.num_hosts,
           gcl_dtype_name(o->type), gcl_redop_name(o->op), g, o->algo ? o->algo : "auto", timing,
           o->phantom ? ", phantom buffers" : "", b->topology);
    if (b->memcpy_gbs >= 0)
        printf("# memcpy: %.3f GB/s (one thread, %zu bytes)\n", b->memcpy_gbs, o->max_bytes);
    printf("# %12s %12s %5s %11s %22s %11s %11s %11s %7s", "size(B)", "count", "type", "redop",
           "algorithm", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    if (o->compare_in_job)
        printf(" %12s %11s %6s", "mpi_time(us)", "mpi_busbw", "ratio");
    printf(" %12s %11s", "sim_time(us)", "sim_busbw");
    if (o->latency)
        printf(" %10s %10s", "p50(us)", "p99(us)");
    else if (ruled(o))
        printf(" %8s %7s", "iters", "spread");
    printf("\n");
}

static void row_line(const bench_t *b, const bench_row_t *r)
{
    const bench_opts_t *o = b->o;
    char wrong[24] = "-";
    if (o->check)
        snprintf(wrong, sizeof wrong, "%llu", (unsigned long long)r->wrong);
    printf("  %12zu %12zu %5s %11s %22s %11.2f %11.3f %11.3f %7s", r->bytes, r->count,
           gcl_dtype_name(o->type), gcl_redop_name(o->op), r->algo, r->time_us, r->algbw, r->busbw,
           wrong);
    if (o->compare_in_job) {
        if (r->mpi_time_us > 0)
            printf(" %12.2f %11.3f %6.2f", r->mpi_time_us, r->mpi_busbw,
                   r->mpi_busbw > 0 ? r->busbw / r->mpi_busbw : 0.0);
        else
            printf(" %12s %11s %6s", "n/a", "n/a", "n/a");
    }
    printf(" %12.3f %11.3f", r->sim_time_us, r->sim_busbw);
    if (o->latency)
        printf(" %10.2f %10.2f", r->p50_us, r->p99_us);
    else if (ruled(o))
        printf(" %8ld %6.1f%%%s", r->iters, 100 * r->spread, r->stable ? "" : " (spread above 5%)");
    printf("\n");
}

/* The comparison's CSV (examples/bench/peers/peer.h has the same columns). */
static int write_csv(const bench_t *b, int nreplicas)
{
    const bench_opts_t *o = b->o;
    FILE *f = fopen(o->csv, "a");
    if (!f) {
        perror(o->csv);
        return -1;
    }
    for (int i = 0; i < b->nrows; i++) {
        const bench_row_t *r = &b->rows[i];
        fprintf(f, "gcl,%s,%s,%s,%d,%d,%zu,%ld,%d,%.3f,%.4f,%.6f,%.3f,%llu\n", r->algo,
                o->collective, o->latency ? "latency" : "bandwidth", nreplicas, b->info.num_hosts,
                r->bytes, r->iters, o->latency ? 1 : o->repeats, r->time_us,
                o->latency ? 0.0 : r->spread, r->busbw, o->latency ? r->p99_us : -1.0,
                (unsigned long long)r->wrong);
    }
    return fclose(f) == 0 ? 0 : -1;
}

static int write_json(const bench_t *b, int nreplicas)
{
    const bench_opts_t *o = b->o;
    FILE *f = fopen(o->json, "w");
    if (!f) {
        perror(o->json);
        return -1;
    }
    fprintf(f, "[\n");
    for (int i = 0; i < b->nrows; i++) {
        const bench_row_t *r = &b->rows[i];
        fprintf(f,
                "  {\"collective\": \"%s\", \"algo\": \"%s\", \"type\": \"%s\", \"op\": \"%s\", "
                "\"replicas\": %d, \"instances\": %d, \"size_bytes\": %zu, \"count\": %zu, "
                "\"time_us\": %.3f, \"algbw_gbs\": %.6f, \"busbw_gbs\": %.6f, \"wrong\": %llu",
                o->collective, r->algo, gcl_dtype_name(o->type), gcl_redop_name(o->op), nreplicas,
                b->info.num_instances, r->bytes, r->count, r->time_us, r->algbw, r->busbw,
                (unsigned long long)r->wrong);
        if (ruled(o) || o->latency)
            fprintf(f, ", \"iters\": %ld, \"repeats\": %d, \"spread\": %.4f", r->iters,
                    o->latency ? 1 : o->repeats, r->spread);
        if (o->latency)
            fprintf(f, ", \"p50_us\": %.3f, \"p99_us\": %.3f", r->p50_us, r->p99_us);
        if (o->compare_in_job)
            fprintf(f, ", \"mpi_time_us\": %.3f, \"mpi_busbw_gbs\": %.6f", r->mpi_time_us,
                    r->mpi_busbw);
        if (r->sim_time_us >= 0)
            fprintf(f, ", \"sim_time_us\": %.6f, \"sim_busbw_gbs\": %.6f", r->sim_time_us,
                    r->sim_busbw);
        if (b->memcpy_gbs >= 0)
            fprintf(f, ", \"memcpy_gbs\": %.6f", b->memcpy_gbs);
        fprintf(f, "}%s\n", i + 1 < b->nrows ? "," : "");
    }
    fprintf(f, "]\n");
    return fclose(f) == 0 ? 0 : -1;
}

int bench_report(const bench_t *b, int nreplicas)
{
    header(b, nreplicas);
    for (int i = 0; i < b->nrows; i++)
        row_line(b, &b->rows[i]);
    uint64_t wrong = 0;
    for (int i = 0; i < b->nrows; i++)
        wrong += b->rows[i].wrong;
    if (b->o->check)
        printf("# check: %llu wrong element(s) in all\n", (unsigned long long)wrong);
    fflush(stdout);
    int rc = b->o->json ? write_json(b, nreplicas) : 0;
    if (b->o->csv && write_csv(b, nreplicas) != 0)
        rc = -1;
    return rc;
}
