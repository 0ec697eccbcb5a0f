/*
 * What the peer programs of the comparison share (mpi-peer for OpenMPI and MPICH, gloo-peer
 * for Gloo): the command line, the size sweep and the output, one row per size on stdout and,
 * with --csv, the comparison's CSV row (the same columns gcl-bench --csv writes). Each program
 * supplies only its runtime's calls. Pure C.
 */
#ifndef GCL_BENCH_PEER_H
#define GCL_BENCH_PEER_H

#include <stddef.h>

#include "../rule.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { PEER_MAX_SIZES = 64 };

typedef struct {
    const char *collective; /* all_reduce, broadcast or barrier (--latency only) */
    const char *algo;       /* the peer's algorithm (gloo: ring_chunked or bcube) */
    size_t sizes[PEER_MAX_SIZES];
    int nsizes;
    rule_t rule;
    int latency;  /* --latency: per-call median and p99 */
    long samples; /* --latency: timed calls per size */
    int check;    /* check one result per size (default on) */
    const char *csv;
} peer_opts_t;

typedef struct {
    size_t bytes;
    rule_result_t r;       /* bandwidth mode */
    double p50_us, p99_us; /* latency mode */
    long samples;
    unsigned long long wrong;
} peer_row_t;

/* Parses ARGV for PROG, whose algorithms are ALGOS (NULL-terminated; the first is the
 * default). Returns 0, 1 after printing help, or 2 after a one-line error. */
int peer_parse(int argc, char **argv, const char *prog, const char *const *algos, peer_opts_t *o);
/* nccl-tests' bus factor: all_reduce 2(n-1)/n, broadcast 1. */
double peer_bus_factor(const char *collective, int n);
/* Prints the header (rank 0 only). */
void peer_header(const peer_opts_t *o, const char *impl, int ranks, int hosts);
/* Prints ROW and appends it to --csv; returns 0 or -1 if the file cannot be written. */
int peer_row(const peer_opts_t *o, const char *impl, int ranks, int hosts, const peer_row_t *row);
/* The value rank R contributes at element I, and the exact sum over N ranks (small integers,
 * exact in f32 whatever the order of the folds). */
float peer_fill(int r, size_t i);
float peer_sum(int n, size_t i);

#ifdef __cplusplus
}
#endif

#endif
