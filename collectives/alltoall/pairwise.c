/*
 * all_to_all, pairwise: n rounds; in round k rank r swaps blocks with rank p = k - r (mod n),
 * which in the same round pairs with r again (k - p = r), so every exchange is a matched pair
 * and each rank talks to one peer at a time. The round where p = r is the rank's own block.
 *
 * In place, IN and OUT are the same blocks: the block arriving from p must not overwrite
 * IN's block p while it is being sent. So it lands in TMP and is copied to OUT block p in the
 * next round (TMP has two slots, one filling while the other is copied) or a final local step.
 *
 * Trace, n = 4 (xq[b] is block b of rank q's input; rank r's OUT block q gets xq[r]):
 *   round 0: 1<->3                (0 and 2 pair with themselves: their own block)
 *   round 1: 0<->1, 2<->3
 *   round 2: 0<->2                (1 and 3 pair with themselves)
 *   round 3: 0<->3, 1<->2
 *   then each rank copies its last arrival and its own block: all 4 x 4 blocks are in place.
 *
 * Cost: n-1 exchange steps (plus a local one), each rank sending (n-1) x COUNT elements, one
 * peer per step. TMP holds two blocks.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank, prev = -1, j = 0;
    uint64_t c = a->count;
    s->tmp_count = n > 1 ? 2 * c : 0;
    for (int k = 0; k < n; k++) {
        int p = coll_mod(k - r, n);
        if (p == r)
            continue;
        coll_step(s);
        coll_send(s, p, COLL_BUF_IN, (uint64_t)p * c, c);
        coll_recv(s, p, COLL_BUF_TMP, (uint64_t)(j % 2) * c, c);
        if (prev >= 0) /* the previous arrival: its block of IN was sent in an earlier step */
            coll_copy(s, COLL_BUF_OUT, (uint64_t)prev * c, COLL_BUF_TMP,
                      (uint64_t)((j - 1) % 2) * c, c);
        prev = p;
        j++;
    }
    coll_step(s);
    if (prev >= 0)
        coll_copy(s, COLL_BUF_OUT, (uint64_t)prev * c, COLL_BUF_TMP, (uint64_t)((j - 1) % 2) * c,
                  c);
    coll_copy(s, COLL_BUF_OUT, (uint64_t)r * c, COLL_BUF_IN, (uint64_t)r * c, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_alltoall_pairwise = {
    .name = "pairwise",
    .description = "n rounds of matched pairwise exchanges, one peer per step",
    .coll = COLL_ALLTOALL,
    .build = build,
};
