/*
 * all_reduce, recursive_doubling: latency-optimal. In step k every rank exchanges its whole
 * partial result with the rank whose (new) rank differs in bit k, and both fold the two with the
 * lower rank's data on the left, so partners compute the same bits. After log2(p) steps every
 * rank holds the full reduction.
 *
 * Groups that are not a power of two (n = p + extra, p the largest power of two below n): first
 * each even rank r < 2*extra sends its input to r+1, which folds it in and stands for both during
 * the doubling; at the end the odd rank sends the result back (see builders.h, coll_pof2_t).
 *
 * The exchanged buffer may not be written in the step that sends it, so partial results
 * alternate between TMP and OUT; when the last lands in TMP a final local step copies it to OUT.
 *
 * Trace, n = 5 (p = 4, extra = 1; xq is rank q's input; new ranks 0..3 are ranks 1..4):
 *   step 0: 0->1 x0                      rank 1 holds x0 OP x1 (rank 0 now waits for the result)
 *   step 1: 1<->2, 3<->4 (bit 0)         1, 2 hold (x0 x1) OP x2; 3, 4 hold x3 OP x4
 *   step 2: 1<->3, 2<->4 (bit 1)         all four hold ((x0 x1) x2) OP (x3 x4)
 *   step 3: 1->0 the result              every rank holds the same bits
 * Rank 1 wrote its partials to TMP (step 0), OUT (step 1) and TMP (step 2), so it copies TMP to
 * OUT in a local step before step 3; ranks 2-4 wrote TMP, then OUT, and need no copy.
 *
 * Cost: log2(p) steps of S bytes each, plus 2 more (one of S bytes for the extra ranks) when n
 * is not a power of two, plus a local copy step on ranks whose result lands in TMP: log2(n)
 * latencies and log2(n) x S bytes per rank, for small messages. TMP holds count elements.
 */
#include "builders.h"

/* Folds the partner's partial (from the main phase) into this rank's: reads CUR, writes the
 * other of TMP and OUT. Returns the buffer now holding the partial. */
static coll_buf_t exchange(coll_schedule_t *s, int rank, int peer, coll_buf_t cur, uint64_t c)
{
    coll_buf_t next = cur == COLL_BUF_TMP ? COLL_BUF_OUT : COLL_BUF_TMP;
    coll_step(s);
    coll_send(s, peer, cur, 0, c);
    coll_recv_reduce(s, peer, next, 0, cur, 0, c, coll_order_flags(rank, peer));
    return next;
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int r = a->rank;
    uint64_t c = a->count;
    coll_pof2_t f;
    coll_pof2_init(&f, a->nranks, r);
    coll_buf_t cur = COLL_BUF_IN;
    s->tmp_count = c;

    /* Pair up: the even rank hands its input to the odd one, which continues from TMP. */
    coll_pof2_fold_in(s, &f, r, COLL_BUF_TMP, c);
    if (r < 2 * f.extra && f.newrank >= 0)
        cur = COLL_BUF_TMP;
    if (f.newrank >= 0) {
        for (int mask = 1; mask < f.p; mask <<= 1)
            cur = exchange(s, r, coll_pof2_rank(&f, f.newrank ^ mask), cur, c);
        /* A result in OUT was written from TMP, which the last step sent: dividing it in that
         * step is safe. A result elsewhere needs a local step to copy it first. */
        if (cur != COLL_BUF_OUT) {
            coll_step(s);
            coll_copy(s, COLL_BUF_OUT, 0, cur, 0, c);
        }
        if (a->op == COLL_MEAN)
            coll_divide_op(s, COLL_BUF_OUT, 0, c);
    }
    coll_pof2_fold_out(s, &f, r, COLL_BUF_OUT, 0, c); /* hand the result back */
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_recursive_doubling = {
    .name = "recursive_doubling",
    .description = "log2(n) full-size pairwise exchanges; extra ranks fold in and out",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
