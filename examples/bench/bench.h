/*
 * gcl-bench: a benchmark of libgcl's collectives in the manner of nccl-tests, run under poprun.
 * One row per size: bytes, count, type, op, time, algorithm and bus bandwidth, and the number of
 * wrong elements from a check whose exact answer is known whatever the reduction order.
 */
#ifndef GCL_BENCH_H
#define GCL_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "gcl/gcl.h"
#include "rule.h"

enum { BENCH_MAX_ROWS = 64 };

typedef struct {
    const char *collective;
    size_t min_bytes, max_bytes;
    const char *min_text, *max_text; /* -b and -e as given, NULL for the defaults */
    size_t sizes[BENCH_MAX_ROWS];    /* --sizes, or --latency's defaults: these rows instead */
    int nsizes;
    long factor, iters, warmup; /* iters 0: -n auto (the rule's calibrated batches) */
    int repeats;                /* batches timed per size; the median is reported */
    int latency;                /* --latency: single calls, median and p99 */
    long samples;               /* --latency: timed calls per size */
    gcl_dtype_t type;
    gcl_redop_t op;
    gcl_group_t group;
    const char *algo; /* NULL: automatic */
    int root;
    int check;
    int compare_in_job; /* --compare mpi-in-job: MPI inside this job, on the same buffers */
    int memcpy_ref;     /* --memcpy: measure one thread's memcpy bandwidth in the same run */
    int phantom;
    const char *json;
    const char *csv; /* --csv: the comparison's rows (examples/bench/peers/peer.h) */
    const char *topology;
    int replicas; /* without poprun */
} bench_opts_t;

typedef struct {
    size_t bytes, count;
    char algo[48];
    double time_us, algbw, busbw;
    long iters;            /* calls per timed batch */
    double spread;         /* of the timed batches (rule.h) */
    int stable;            /* spread <= 5% */
    double p50_us, p99_us; /* --latency */
    uint64_t wrong;
    double mpi_time_us, mpi_busbw; /* < 0 when not measured */
    double sim_time_us, sim_busbw; /* < 0 when not simulated */
} bench_row_t;

typedef struct {
    const bench_opts_t *o;
    gcl_job_info_t info;
    bench_row_t rows[BENCH_MAX_ROWS];
    int nrows;
    int failed;
    char error[512];
    char topology[64];
    double memcpy_gbs; /* < 0 when not measured */
} bench_t;

/* Parses ARGV: 0, 1 after printing help, or 2 after printing a one-line error. */
int bench_parse(int argc, char **argv, bench_opts_t *o);
/* The per-IPU program. */
gcl_status_t bench_program(gcl_ctx_t ctx, void *arg);
/* nccl-tests' bus-bandwidth factor of COLLECTIVE over N ranks. */
double bench_bus_factor(const char *collective, int n);
/* Elements per rank call for a size of BYTES (nccl-tests' meaning of size). */
size_t bench_count(const char *collective, size_t bytes, size_t elem, int n);
/* The bytes a call of COUNT elements per rank moves, as nccl-tests' size column shows them and
 * its bandwidth counts them: COUNT elements, or N blocks of COUNT for reduce_scatter,
 * all_gather and all_to_all. */
size_t bench_moved_bytes(const char *collective, size_t count, size_t elem, int n);
/* --compare mpi-in-job: times ITERS runs of the MPI collective matching O on SEND/RECV inside
 * this job (MPI initialised by libgcl, its threads beside it, poprun's --bind-to none: not how
 * MPI's users run it; scripts/bench-collectives --peers runs MPI in its own job); the slowest
 * rank's mean time per iteration in microseconds, or a negative value when there is no MPI
 * equivalent. */
double bench_mpi_time(const bench_opts_t *o, const void *send, void *recv, size_t count);
/* One thread's memcpy bandwidth (GB/s of bytes copied) over buffers of BYTES, best of a few. */
double bench_memcpy_gbs(size_t bytes);
/* Prints the table (and writes the JSON file). Returns 0, or -1 if the JSON file failed. */
int bench_report(const bench_t *b, int nreplicas);

#endif
