/*
 * The timing rule that gcl-bench and every peer program of the comparison share
 * (examples/bench/peers/: OpenMPI, MPICH, Gloo), so that a ratio between two of them compares
 * the runtimes and not the way each was timed. Pure C: no MPI, no libgcl.
 *
 * Bandwidth (rule_time): W warm-up calls; then, unless the calls per batch are fixed, probe
 * batches of 1, 2, 4, ... calls until one lasts a quarter of the target, and size the batch to
 * last the target (RULE_TARGET_S); then R batches (5), each timed as the slowest rank's wall
 * time for the batch divided by its calls. The result is the median batch; its spread is the
 * distance between the second and fourth of the five, over the median. While the spread is
 * above RULE_STABLE (5%), the batch is doubled and the five are timed again, at most
 * RULE_MAX_DOUBLINGS times and while a round stays under RULE_MAX_ROUND_S; the spread that
 * remains is reported beside the time, and a row whose spread stayed above 5% says so.
 *
 * Latency (rule_percentiles): W warm-up calls, then S single calls, each timed on every rank
 * and followed by a barrier outside the timing (osu_latency's collective form); a sample is
 * the mean over the ranks of one call's time; the result is the median and the 99th
 * percentile of the samples.
 *
 * Every decision is taken from times that every rank holds the same (the batch function
 * returns the slowest rank's time), so every rank makes the same number of calls.
 */
#ifndef GCL_BENCH_RULE_H
#define GCL_BENCH_RULE_H

#ifdef __cplusplus
extern "C" {
#endif

enum { RULE_REPEATS = 5, RULE_MAX_DOUBLINGS = 3, RULE_MAX_CALLS = 1000000 };
#define RULE_TARGET_S    0.02
#define RULE_STABLE      0.05
#define RULE_MAX_ROUND_S 4.0

typedef struct {
    long warmup; /* untimed calls before anything is timed */
    long iters;  /* calls per batch; 0: sized to last RULE_TARGET_S */
    int repeats; /* batches timed; the median is the result */
    double target_s;
} rule_t;

typedef struct {
    long iters;     /* calls per batch, as finally timed */
    int repeats;    /* batches timed in the final round */
    double time_us; /* median batch: the slowest rank's time per call */
    double spread;  /* (4th - 2nd of the sorted batches) / median; 0 with fewer than 3 */
    int stable;     /* spread <= RULE_STABLE */
} rule_result_t;

/* Runs N calls on this rank and returns the slowest rank's wall time for them in seconds, the
 * same value on every rank; a negative value when a call failed. */
typedef double (*rule_batch_fn)(void *arg, long n);

/* The rule's defaults: 5 warm-up calls, calibrated batches, 5 repeats. */
rule_t rule_default(void);
/* Times one size by the rule above. Returns 0, or -1 if a batch failed. */
int rule_time(const rule_t *r, rule_batch_fn fn, void *arg, rule_result_t *out);
/* The median and the 99th percentile (nearest rank) of V[0..N), which it sorts. */
void rule_percentiles(double *v, long n, double *median, double *p99);

#ifdef __cplusplus
}
#endif

#endif
