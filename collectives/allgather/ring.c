/*
 * all_gather, ring: in step k (0 <= k < n-1) rank r sends block r-k to r+1 (its own input at
 * k = 0) and receives block r-k-1 from r-1, so every block travels once round the ring.
 * Blocks are COUNT elements; OUT holds n of them, block q from rank q.
 *
 * Trace, n = 4 (block q is rank q's input):
 *   step 0: 0->1 0, 1->2 1, 2->3 2, 3->0 3   (and each rank copies its input to its OUT block)
 *   step 1: 0->1 3, 1->2 0, 2->3 1, 3->0 2
 *   step 2: 0->1 2, 1->2 3, 2->3 0, 3->0 1   every rank holds blocks 0 1 2 3
 *
 * Cost: n-1 steps, each rank sending (n-1) x COUNT elements: bandwidth-optimal, n-1 latencies.
 * In place (IN is block r of OUT) the copy is a no-op. No TMP.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    coll_step(s);
    coll_copy(s, COLL_BUF_OUT, (uint64_t)r * c, COLL_BUF_IN, 0, c);
    for (int k = 0; k < n - 1; k++) {
        if (k > 0)
            coll_step(s);
        if (k == 0)
            coll_send(s, (r + 1) % n, COLL_BUF_IN, 0, c);
        else
            coll_send(s, (r + 1) % n, COLL_BUF_OUT, (uint64_t)coll_mod(r - k, n) * c, c);
        coll_recv(s, coll_mod(r - 1, n), COLL_BUF_OUT, (uint64_t)coll_mod(r - k - 1, n) * c, c);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allgather_ring = {
    .name = "ring",
    .description = "each block travels once round the ring",
    .coll = COLL_ALLGATHER,
    .build = build,
};
