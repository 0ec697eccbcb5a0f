/*
 * The steps every ring all-reduce is made of, over a sub-range of the buffers, so that the ring
 * family (clockwise, anticlockwise, bidirectional pair, meet in the middle) shares them.
 */
#ifndef COLL_RING_H
#define COLL_RING_H

#include "coll/algo.h"

/* Steps in a ring all-reduce over N ranks: n-1 of reduce-scatter, then n-1 of all-gather. */
static inline int coll_ring_steps(int n)
{
    return n > 1 ? 2 * (n - 1) : 0;
}

/*
 * Appends to the current step of S the ops of step K (0 <= K < coll_ring_steps(n)) of a ring
 * all-reduce of elements [base, base + len), in direction DIR: +1 means rank r sends to r+1
 * ("clockwise"), -1 to r-1. Steps 0 .. n-2 reduce-scatter, n-1 .. 2n-3 all-gather; a MEAN's
 * divide is a local op at the end of step n-2. Appending the steps of two rings into the same
 * steps of S runs them side by side.
 */
void coll_ring_allreduce_step(const coll_args_t *a, coll_schedule_t *s, uint64_t base, uint64_t len,
                              int dir, int k);

#endif /* COLL_RING_H */
