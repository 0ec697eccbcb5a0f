/*
 * reduce_scatter, canonical: rank b's block folded along the canonical tree (coll/canon.h), the
 * order libgcl's automatic choice keeps whatever carries the bytes. The message form of that
 * order (see allreduce/canonical.c): every rank sends block b of its input straight to rank b,
 * which folds the n copies in tree order. Each rank hears from every other in its one step.
 *
 * Trace, n = 4 (xq[b] is block b of rank q's input):
 *   step 0: rank 2 sends x2[0] to 0, x2[1] to 1, x2[3] to 3, receives x0[2], x1[2], x3[2] into
 *           TMP, copies its own x2[2] beside them, and folds
 *           OUT = (x0[2] + x1[2]) + (x2[2] + x3[2]).
 *
 * Cost: 1 step; each rank sends (n-1) x COUNT elements to n-1 peers at once. TMP holds n + depth
 * blocks.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    s->tmp_count = coll_canon_tmp(n, c);
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == r)
            continue;
        coll_send(s, q, COLL_BUF_IN, (uint64_t)q * c, c);
        coll_recv(s, q, COLL_BUF_TMP, (uint64_t)q * c, c);
    }
    coll_copy(s, COLL_BUF_TMP, (uint64_t)r * c, COLL_BUF_IN, (uint64_t)r * c, c);
    coll_canon_fold_ops(s, n, a->op, 0, 0, c, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_reducescatter_canonical = {
    .name = "canonical",
    .description = "the canonical tree order over direct messages (libgcl's default data path)",
    .coll = COLL_REDUCE_SCATTER,
    .build = build,
    .canonical = 1,
};
