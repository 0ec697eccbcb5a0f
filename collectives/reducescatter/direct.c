/*
 * reduce_scatter, direct: for small messages. Every rank sends block q of its input straight to
 * rank q, all in one step, and folds the n contributions to its own block in rank order
 * 0 .. n-1 (so the result does not depend on arrival order; see coll_fold_ranks).
 *
 * Trace, n = 4 (xq[b] is block b of rank q's input):
 *   step 0: rank 1 sends x1[0] to 0, x1[2] to 2, x1[3] to 3, and receives x0[1], x2[1], x3[1]
 *           into TMP; then folds OUT = ((x0[1] OP x1[1]) OP x2[1]) OP x3[1]. All ranks alike.
 *
 * Cost: 1 step; each rank sends and receives (n-1) x COUNT elements, to and from n-1 peers at
 * once. TMP holds n-1 blocks.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    coll_exchange_blocks(s, n, r, c);
    /* The fold writes OUT (block r of IN when in place), which no send of this step reads. */
    coll_fold_ranks(s, n, r, 0, COLL_BUF_IN, (uint64_t)r * c, 0, c, c);
    if (a->op == COLL_MEAN)
        coll_divide_op(s, COLL_BUF_OUT, 0, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_reducescatter_direct = {
    .name = "direct",
    .description = "small messages: each block sent straight to its owner, folded in rank order",
    .coll = COLL_REDUCE_SCATTER,
    .build = build,
};
