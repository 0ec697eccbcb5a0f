/*
 * all_reduce, anticlockwise_ring: the ring of clockwise_ring.c run the other way round, every
 * rank sending to rank-1. On a physical ring whose clockwise links are busy (another collective,
 * or the other half of a bidirectional pair) it uses the idle direction.
 *
 * Trace, n = 4 (blocks A B C D = 0 1 2 3; "x->y" is a send from rank x to rank y):
 *   RS step 0: 0->3 A   1->0 B   2->1 C   3->2 D     3 has A30, 0 has B01, 1 has C12, 2 has D23
 *   RS step 1: 0->3 B01 1->0 C12 2->1 D23 3->2 A30   3 has B013, 0 has C120, 1 D231, 2 A302
 *   RS step 2: 0->3 C120 ...                          rank r holds block r-1 reduced over all four
 *   AG steps 0-2: each rank passes the final blocks on to rank-1 until all hold A B C D.
 *
 * Cost: 2(n-1) steps, each moving count/n elements per rank: 2(n-1) latencies plus
 * 2(n-1)/n x S / B. Any group size; a group of one copies IN to OUT.
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
        coll_ring_allreduce_step(a, s, 0, a->count, -1, k);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_anticlockwise_ring = {
    .name = "anticlockwise_ring",
    .description = "ring reduce-scatter then all-gather, sending to rank-1",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
