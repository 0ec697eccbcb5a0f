/*
 * The steps every ring all-reduce is made of, over a sub-range of the buffers, so that the ring
 * family (clockwise, anticlockwise, bidirectional pair, meet in the middle) and the phases of the
 * hierarchical algorithm share them.
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
 * A ring over some ranks of the group. Position i is group rank members[i] (position i is group
 * rank i when MEMBERS is NULL). In direction DIR = +1 position i sends to i+1 ("clockwise"); in
 * direction -1 to i-1. A range of elements is cut into n blocks (coll_block), block b belonging
 * to position b.
 */
typedef struct {
    int n;              /* positions in the ring */
    int pos;            /* this rank's position, 0 .. n-1 */
    int dir;            /* +1 or -1 */
    const int *members; /* group rank at each position, or NULL for the identity */
} coll_ring_t;

/*
 * Appends to the current step of S the ops of step K (0 <= K < n-1) of a ring reduce-scatter of
 * elements [base, base + len). After the n-1 steps, position p holds block p + dir reduced over
 * the ring in OUT; other blocks of OUT hold partial results. SRC is the buffer holding this
 * rank's contribution (IN, or OUT when an earlier phase left it there). When DIVIDE, a MEAN's
 * divide follows the last step's reduction.
 */
void coll_ring_rs_step(const coll_ring_t *g, coll_schedule_t *s, coll_buf_t src, uint64_t base,
                       uint64_t len, int k, int divide);

/*
 * Appends the ops of step K (0 <= K < n-1) of a ring all-gather of OUT[base, base + len) that
 * continues a reduce-scatter: position p starts with block p + dir, and after n-1 steps every
 * position holds every block.
 */
void coll_ring_ag_step(const coll_ring_t *g, coll_schedule_t *s, uint64_t base, uint64_t len,
                       int k);

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
