/*
 * all_reduce, halving_doubling (Rabenseifner): a reduce-scatter by recursive halving, then an
 * all-gather by recursive doubling. Bandwidth-optimal like the ring, in 2 log2(p) steps instead
 * of 2(n-1): the choice for medium messages.
 *
 * With p ranks (a power of two) and the data cut into p blocks: in halving step k (masks p/2,
 * p/4, .. 1) each rank and its partner (new rank XOR mask) split the range they share; each keeps
 * the half on its side, sends the other half, and folds the partner's copy of its half into OUT.
 * After log2(p) steps new rank i holds block i reduced over all ranks, computed once. The
 * doubling steps (masks 1, 2, .. p/2) then swap ever larger ranges of finished blocks.
 *
 * Groups that are not a power of two: as in recursive_doubling.c, the even ranks below 2*extra
 * hand their input to the odd rank above first and get the result back at the end.
 *
 * Trace, n = 4 (blocks A B C D; xq is rank q's input):
 *   halve 0 (mask 2): 0<->2, 1<->3   0 and 1 keep A B and send C D; 2 and 3 keep C D and send
 *                                     A B: 0 holds A B over {0,2}, 1 holds A B over {1,3}, ...
 *   halve 1 (mask 1): 0<->1, 2<->3   0 keeps A (sends B), 1 keeps B, 2 keeps C, 3 keeps D, each
 *                                     reduced over all four; a MEAN divides here.
 *   double 0 (mask 1): 0<->1 swap A/B, 2<->3 swap C/D
 *   double 1 (mask 2): 0<->2 swap AB/CD, 1<->3 swap AB/CD: everyone holds A B C D.
 * With n = 5, rank 0 first sends its input to rank 1, ranks 1-4 run the trace above as new
 * ranks 0-3, and rank 1 sends the result back to rank 0 in a last step.
 *
 * Cost: 2 log2(p) steps, each rank sending 2(p-1)/p x S; when n is not a power of two, 2 more
 * steps in which the extra ranks send S. No TMP.
 */
#include "builders.h"

typedef struct {
    const coll_pof2_t *f;
    int rank;
    uint64_t count;
} hd_t;

static void blocks(const hd_t *h, int lo, int w, uint64_t *off, uint64_t *len)
{
    coll_block_range(h->count, h->f->p, lo, w, off, len);
}

/* Recursive halving; returns the first block of the range this rank ends with (its new rank). */
static int halve(const hd_t *h, coll_schedule_t *s, coll_buf_t cur, int divide)
{
    int nr = h->f->newrank, lo = 0, w = h->f->p;
    uint64_t koff, klen, soff, slen;
    for (int mask = h->f->p / 2; mask >= 1; mask >>= 1) {
        int peer = coll_pof2_rank(h->f, nr ^ mask), keep_upper = (nr & mask) != 0;
        w /= 2;
        blocks(h, keep_upper ? lo + w : lo, w, &koff, &klen);
        blocks(h, keep_upper ? lo : lo + w, w, &soff, &slen);
        lo = keep_upper ? lo + w : lo;
        coll_step(s);
        coll_send(s, peer, cur, soff, slen);
        coll_recv_reduce(s, peer, COLL_BUF_OUT, koff, cur, koff, klen,
                         coll_order_flags(h->rank, peer));
        cur = COLL_BUF_OUT;
    }
    if (divide) {
        blocks(h, lo, 1, &koff, &klen);
        coll_divide_op(s, COLL_BUF_OUT, koff, klen);
    }
    return lo;
}

static void double_up(const hd_t *h, coll_schedule_t *s, int lo)
{
    int nr = h->f->newrank, w = 1;
    uint64_t moff, mlen, poff, plen;
    for (int mask = 1; mask < h->f->p; mask <<= 1) {
        int peer = coll_pof2_rank(h->f, nr ^ mask);
        int plo = (nr & mask) ? lo - w : lo + w;
        blocks(h, lo, w, &moff, &mlen);
        blocks(h, plo, w, &poff, &plen);
        coll_step(s);
        coll_send(s, peer, COLL_BUF_OUT, moff, mlen);
        coll_recv(s, peer, COLL_BUF_OUT, poff, plen);
        lo = plo < lo ? plo : lo;
        w *= 2;
    }
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int r = a->rank;
    uint64_t c = a->count;
    coll_pof2_t f;
    coll_pof2_init(&f, a->nranks, r);
    hd_t h = {.f = &f, .rank = r, .count = c};
    if (a->nranks == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, c);
        return coll_schedule_status(s);
    }
    coll_pof2_fold_in(s, &f, r, COLL_BUF_OUT, c);
    if (f.newrank >= 0) {
        coll_buf_t cur = r < 2 * f.extra ? COLL_BUF_OUT : COLL_BUF_IN;
        int lo = halve(&h, s, cur, a->op == COLL_MEAN);
        double_up(&h, s, lo);
    }
    coll_pof2_fold_out(s, &f, r, COLL_BUF_OUT, 0, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_halving_doubling = {
    .name = "halving_doubling",
    .description = "Rabenseifner: recursive-halving reduce-scatter, recursive-doubling all-gather",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
