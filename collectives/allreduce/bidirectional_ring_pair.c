/*
 * all_reduce, bidirectional_ring_pair: the data is cut in two halves; the first half goes round
 * a clockwise ring and the second round an anticlockwise ring, both in the same steps. Each rank
 * then sends to both neighbours at once, so a ring of full-duplex links carries traffic in both
 * directions and each direction moves half the bytes of a single ring.
 *
 * Trace, n = 4, halves X (clockwise, blocks X0..X3) and Y (anticlockwise, Y0..Y3):
 *   RS step 0: 0->1 X0, 0->3 Y0   1->2 X1, 1->0 Y1   2->3 X2, 2->1 Y2   3->0 X3, 3->2 Y3
 *   RS step 1: rank r forwards its partial X(r-1) to r+1 and its partial Y(r+1) to r-1.
 *   RS step 2: afterwards rank r holds X(r+1) and Y(r-1) reduced over all four ranks.
 *   AG steps 0-2: the final blocks travel on in the same two directions.
 * The two rings are independent (disjoint ranges), so each half is reduced exactly as a single
 * ring would reduce it and every rank gets the same bits.
 *
 * Cost: 2(n-1) steps; per step each rank sends count/(2n) elements each way: 2(n-1) latencies
 * plus (n-1)/n x S / B when both directions of a link run at bandwidth B. Any group size; with
 * n = 2 both halves go to the one neighbour, in a fixed order.
 */
#include "coll/ring.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    if (a->nranks == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        return coll_schedule_status(s);
    }
    uint64_t off[2], len[2];
    coll_block(a->count, 2, 0, &off[0], &len[0]);
    coll_block(a->count, 2, 1, &off[1], &len[1]);
    for (int k = 0; k < coll_ring_steps(a->nranks); k++) {
        coll_step(s);
        /* Same order on every rank: when both rings link the same two ranks (n = 2), the
         * per-pair message order then matches on both sides. */
        coll_ring_allreduce_step(a, s, off[0], len[0], +1, k);
        coll_ring_allreduce_step(a, s, off[1], len[1], -1, k);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_bidirectional_ring_pair = {
    .name = "bidirectional_ring_pair",
    .description = "two half-size rings in opposite directions, run in the same steps",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
