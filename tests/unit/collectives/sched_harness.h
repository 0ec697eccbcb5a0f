/*
 * Test harness: builds the schedules of every rank of a group for one algorithm and runs them in
 * memory (coll_run_local), in place or out of place. Shared by the schedule tests of all
 * collectives.
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

/*
 * Builds and validates the schedules of every rank (failing the test on any error) and allocates
 * per-rank buffers of the sizes they need. IN is filled by FILL(rank, in, count_in); when
 * IN_PLACE, IN and OUT share memory as the collective prescribes. Returns -1 (and builds nothing)
 * when the algorithm does not support the arguments.
 */
int harness_build(harness_t *h, const coll_algo_t *algo, coll_args_t args, int in_place,
                  void (*fill)(int rank, void *in, uint64_t count, const coll_args_t *a));
/* Runs all schedules; fails the test on deadlock or mismatch. */
void harness_run(harness_t *h, coll_args_t args);
/* Rank R's output buffer. */
void *harness_out(harness_t *h, int r);
void harness_free(harness_t *h);

#endif
