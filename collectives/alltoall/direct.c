/*
 * all_to_all, direct: for small messages. Every rank sends block q of its input to rank q, all
 * in one step, receiving the blocks meant for it into TMP; a local step then copies them to
 * their places in OUT (in place, OUT is IN, which the first step's sends read).
 *
 * Trace, n = 3: step 0: rank 0 sends x0[1] to 1 and x0[2] to 2, receives x1[0] and x2[0];
 *               step 1: rank 0 copies x1[0], x2[0] to OUT blocks 1, 2 and x0[0] to block 0.
 *
 * Cost: 2 steps (one latency); each rank sends (n-1) x COUNT elements to n-1 peers at once.
 * TMP holds n-1 blocks.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    coll_exchange_blocks(s, n, r, c);
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == r)
            coll_copy(s, COLL_BUF_OUT, (uint64_t)q * c, COLL_BUF_IN, (uint64_t)q * c, c);
        else
            coll_copy(s, COLL_BUF_OUT, (uint64_t)q * c, COLL_BUF_TMP,
                      (uint64_t)(q < r ? q : q - 1) * c, c);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_alltoall_direct = {
    .name = "direct",
    .description = "small messages: all blocks sent at once, copied into place after",
    .coll = COLL_ALLTOALL,
    .build = build,
};
