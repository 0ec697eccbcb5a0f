/*
 * reduce_scatter, ring: the first half of a ring all-reduce. Rank r ends with block r of the
 * reduction (blocks of COUNT elements: IN holds n of them, OUT one).
 *
 * In step k (0 <= k < n-1) rank r sends to r+1 its partial of block r-k-1 (its own input block
 * at k = 0) and receives from r-1 the partial of block r-k-2, folding in its input block. A
 * block's partial starts at the rank after its owner and goes once round the ring, ending at the
 * owner in step n-2 (where a MEAN divides); it is reduced in ring order from rank b+1, at one rank
 * per hop, so every run gives the same bits. Partials wait in TMP between steps, in two slots so
 * that a step never writes the slot it sends from.
 *
 * Trace, n = 4 (blocks A B C D owned by ranks 0 1 2 3; D01 is block D reduced over x0, x1):
 *   step 0: 0->1 D, 1->2 A, 2->3 B, 3->0 C            1 has D01, 2 A12, 3 B23, 0 C30
 *   step 1: 1->2 D01, 2->3 A12, 3->0 B23, 0->1 C30    2 has D012, 3 A123, 0 B230, 1 C301
 *   step 2: 2->3 D012, 3->0 A123, 0->1 B230, 1->2 C301
 *           3 has D0123, 0 A1230, 1 B2301, 2 C3012: each rank its own block, in OUT
 *
 * Cost: n-1 steps, each rank sending (n-1) x COUNT elements: bandwidth-optimal, n-1 latencies.
 * TMP holds two blocks (none for n <= 2).
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    if (n == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, c);
        return coll_schedule_status(s);
    }
    s->tmp_count = n > 2 ? 2 * c : 0;
    for (int k = 0; k < n - 1; k++) {
        uint64_t sb = (uint64_t)coll_mod(r - k - 1, n), rb = (uint64_t)coll_mod(r - k - 2, n);
        coll_step(s);
        if (k == 0)
            coll_send(s, (r + 1) % n, COLL_BUF_IN, sb * c, c);
        else
            coll_send(s, (r + 1) % n, COLL_BUF_TMP, (uint64_t)((k - 1) % 2) * c, c);
        if (k < n - 2) {
            coll_recv_reduce(s, coll_mod(r - 1, n), COLL_BUF_TMP, (uint64_t)(k % 2) * c,
                             COLL_BUF_IN, rb * c, c, COLL_OPF_SWAP);
            continue;
        }
        coll_recv_reduce(s, coll_mod(r - 1, n), COLL_BUF_OUT, 0, COLL_BUF_IN, rb * c, c,
                         COLL_OPF_SWAP);
        if (a->op == COLL_MEAN)
            coll_divide_op(s, COLL_BUF_OUT, 0, c);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_reducescatter_ring = {
    .name = "ring",
    .description = "each block's partial goes once round the ring, ending at its owner",
    .coll = COLL_REDUCE_SCATTER,
    .build = build,
};
