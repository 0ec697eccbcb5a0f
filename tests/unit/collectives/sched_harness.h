/*
 * Test harness: builds the schedules of every rank of a group for one algorithm and runs them in
 * memory (coll_run_local), in place or out of place, and checks the results against references
 * computed independently from the inputs. Shared by the schedule tests of all collectives.
 */
#ifndef SCHED_HARNESS_H
#define SCHED_HARNESS_H

#include "coll/algo.h"
#include "coll/run.h"

typedef struct {
    int n;
    coll_schedule_t *scheds;
    coll_schedule_t **ptrs;
    void *(*bufs)[COLL_BUF_COUNT];
    void *(*allocs)[3]; /* what to free per rank */
} harness_t;

typedef void (*harness_fill_fn)(int rank, void *in, uint64_t count, const coll_args_t *a);

/*
 * Builds and validates the schedules of every rank (failing the test on any error) and allocates
 * per-rank buffers of the sizes they need. IN is filled by FILL(rank, in, count_in); when
 * IN_PLACE, IN and OUT share memory as the collective prescribes. Returns -1 (and builds nothing)
 * when the algorithm does not support the arguments.
 */
int harness_build(harness_t *h, const coll_algo_t *algo, coll_args_t args, int in_place,
                  harness_fill_fn fill);
/* Runs all schedules; fails the test on deadlock or mismatch. */
void harness_run(harness_t *h, coll_args_t args);
/* Rank R's output buffer. */
void *harness_out(harness_t *h, int r);
void harness_free(harness_t *h);

/* The most steps, and the most elements sent, by any rank's schedule. */
uint32_t harness_max_steps(const harness_t *h);
uint64_t harness_max_sent(const harness_t *h);
/* The length of the longest chain of dependent steps, in steps: each step with traffic takes a
 * unit and a receive ends a unit after its send's step began. This is the number of latencies
 * the collective pays, e.g. k + n - 2 for a chain broadcast of k segments, while each rank of
 * that chain only has k + 1 steps of its own. */
uint32_t harness_critical_path(const harness_t *h);

/*
 * Inputs with exactly known results. For all_reduce and reduce_scatter they are small integers
 * (-3..3, 0..6 for unsigned types, 0/1 for bool; for MUL mostly 1 with a few 2 and -1 or 3), so
 * every reduction order gives the same exact answer in every type. For the other collectives
 * they are distinct-looking values that fit the type exactly, so a misplaced block shows.
 * harness_input is element I of rank R's IN as a double; harness_fill writes them in A's type.
 */
double harness_input(const coll_args_t *a, int r, uint64_t i);
void harness_fill(int r, void *in, uint64_t count, const coll_args_t *a);
/* Inexact inputs: random floats in (-0.5, 0.5) for float types, random bits otherwise; with
 * op MIN or MAX on floats, a mix of +0, -0 and NaNs with different payloads, on which the two
 * operand orders give different bits. */
void harness_fill_random(int r, void *in, uint64_t count, const coll_args_t *a);
/* Element I of BUF (of type T) as a double. */
double harness_get(coll_dtype_t t, const void *buf, uint64_t i);
/* The expected element I of rank R's OUT, folded from harness_input over the ranks in order. */
double harness_expected(const coll_args_t *a, int r, uint64_t i);

/*
 * Builds, validates and runs ALGO on A with harness_fill's inputs, out of place and then in
 * place, and checks: every rank's OUT against harness_expected; that the out-of-place call left
 * IN untouched; that the in-place call gives bitwise the same OUT; for all_reduce and broadcast,
 * that all ranks hold bitwise the same OUT. Fails the test on any difference; returns -1 when the
 * algorithm does not support A, else 0. Not reentrant.
 */
int harness_check(const coll_algo_t *algo, coll_args_t a);

/*
 * Determinism with inexact data (harness_fill_random): runs ALGO on A twice out of place and once
 * in place and checks that every rank gets bitwise the same OUT each time and, for all_reduce,
 * the same as every other rank. Returns -1 when the algorithm does not support A, else 0.
 */
int harness_check_deterministic(const coll_algo_t *algo, coll_args_t a);

/* The valid (type, operator) pairs of coll_redop_valid, in a fixed order; returns how many. */
int harness_pairs(coll_dtype_t *types, coll_redop_t *ops, int max);

/* A node layout for N ranks of L per node (L divides N): node_of[q] = q / L when CONTIGUOUS,
 * else q % (N / L) (the nodes interleave). NODE_OF must hold N ints. */
void harness_layout(int *node_of, int n, int per_node, int contiguous);

/* Runs F(algo, n, count index, count) over every algorithm of C, n = 1 .. MAX_N and the counts
 * 0, 1, n-1, n+1 and BIG(n). */
void harness_sweep(coll_collective_t c, int max_n, uint64_t (*big)(int n),
                   void (*f)(const coll_algo_t *algo, int n, int ci, uint64_t count));

#endif
