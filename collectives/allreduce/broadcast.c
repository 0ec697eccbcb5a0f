/*
 * all_reduce, broadcast: for tiny tensors. Every rank sends its whole input to every other rank
 * in one step, then folds the n contributions itself, in rank order 0 .. n-1, so every rank runs
 * the same operations on the same operands and gets the same bits.
 *
 * Trace, n = 4 (xq is rank q's input):
 *   step 0: rank r sends x_r to each of the other three and receives their inputs into TMP
 *           (rank 2: TMP slots hold x0, x1, x3)
 *   step 1: local only: OUT = ((x0 OP x1) OP x2) OP x3 on every rank (rank 2 folds x0 OP x1 in
 *           TMP's slot 0, then brings in its own x2, then x3), and a MEAN divides once.
 * The fold gets a step of its own because in place it overwrites IN, which step 0's sends read.
 *
 * Cost: 2 steps (one latency), each rank sending and receiving (n-1) x S: the least latency
 * there is, at n-1 times the bytes of a ring, so only for messages of a few KiB. TMP holds
 * (n-1) x count elements.
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
    s->tmp_count = (uint64_t)(n - 1) * c;
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == r)
            continue;
        uint64_t slot = (uint64_t)(q < r ? q : q - 1);
        coll_send(s, q, COLL_BUF_IN, 0, c);
        coll_recv(s, q, COLL_BUF_TMP, slot * c, c);
    }
    coll_step(s);
    coll_fold_ranks(s, n, r, 0, COLL_BUF_IN, 0, 0, c, c);
    if (a->op == COLL_MEAN)
        coll_divide_op(s, COLL_BUF_OUT, 0, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_broadcast = {
    .name = "broadcast",
    .description = "tiny tensors: everyone sends its input to everyone, all fold in rank order",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
