/* gcl-bench's output: the table on stdout and the JSON rows. */
#include <stdio.h>

#include "bench.h"

static void header(const bench_t *b, int nreplicas)
{
    const bench_opts_t *o = b->o;
    char g[32];
    gcl_group_format(o->group, g, sizeof g);
    printf("# gcl-bench %s: %d replicas over %d instances on %d host(s), type %s, op %s, group %s, "
           "algorithm %s, %ld iterations after %ld warm-up%s; simulated pod %s\n",
           o->collective, nreplicas, b->info.num_instances, b->info.num_hosts,
           gcl_dtype_name(o->type), gcl_redop_name(o->op), g, o->algo ? o->algo : "auto", o->iters,
           o->warmup, o->phantom ? ", phantom buffers" : "", b->topology);
    if (b->memcpy_gbs >= 0)
        printf("# memcpy: %.3f GB/s (one thread, %zu bytes)\n", b->memcpy_gbs, o->max_bytes);
    printf("# %12s %12s %5s %11s %22s %11s %11s %11s %7s", "size(B)", "count", "type", "redop",
           "algorithm", "time(us)", "algbw(GB/s)", "busbw(GB/s)", "#wrong");
    if (o->compare_mpi)
        printf(" %12s %11s %6s", "mpi_time(us)", "mpi_busbw", "ratio");
    printf(" %12s %11s\n", "sim_time(us)", "sim_busbw");
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
    if (o->compare_mpi) {
        if (r->mpi_time_us > 0)
            printf(" %12.2f %11.3f %6.2f", r->mpi_time_us, r->mpi_busbw,
                   r->mpi_busbw > 0 ? r->busbw / r->mpi_busbw : 0.0);
        else
            printf(" %12s %11s %6s", "n/a", "n/a", "n/a");
    }
    printf(" %12.3f %11.3f\n", r->sim_time_us, r->sim_busbw);
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
        if (o->compare_mpi)
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
    return b->o->json ? write_json(b, nreplicas) : 0;
}
