/*
 * all_reduce, clockwise_ring: the classic bandwidth-optimal ring (reduce-scatter, then
 * all-gather), every rank sending to rank+1. See ring_steps.c for the step trace.
 *
 * Cost: 2(n-1) steps, each moving count/n elements per rank: 2(n-1) latencies plus
 * 2(n-1)/n x S / B. The choice for large tensors when the ranks' neighbours are cheap to reach.
 * A group of one copies IN to OUT.
 */
#include "coll/ring.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    if (a->nranks == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        return coll_schedule_status(s);
    }
    for (int k = 0; k < coll_ring_steps(a->nranks); k++) {
        coll_step(s);
        coll_ring_allreduce_step(a, s, 0, a->count, +1, k);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_clockwise_ring = {
    .name = "clockwise_ring",
    .description = "ring reduce-scatter then all-gather, sending to rank+1",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
