/*
 * reduce_scatter, recursive_halving: the first half of Rabenseifner's all-reduce. In step k
 * (masks p/2, p/4, .. 1) each rank and its partner split the blocks they share: each keeps the
 * half on its side, sends the other half and folds the partner's copy of its half into TMP
 * (lower rank's data on the left). After log2(p) steps each rank holds its own block reduced
 * over all ranks, computed once; it copies it to OUT.
 *
 * Groups that are not a power of two (n = p + extra): each even rank r < 2*extra first sends its
 * whole input to r+1 and sits out; the p remaining ranks run the halving on "super-blocks": new
 * rank i < extra stands for ranks 2i and 2i+1 and owns their two blocks, new rank i >= extra owns
 * block i + extra. Super-blocks are runs of consecutive blocks, so every range sent is one
 * contiguous range of IN or TMP. At the end each odd rank r < 2*extra sends block r-1 to r-1.
 *
 * Trace, n = 4 (blocks A B C D owned by ranks 0 1 2 3; xq is rank q's input):
 *   step 0 (mask 2): 0<->2, 1<->3   0 sends C D to 2 and folds 2's A B: 0 has A B over {0,2};
 *                                    1 has A B over {1,3}, 2 has C D over {0,2}, 3 over {1,3}
 *   step 1 (mask 1): 0<->1, 2<->3   0 sends B, folds A: 0 has A over all; 1 B, 2 C, 3 D
 * With n = 5, rank 0 first sends all five blocks to rank 1, which then owns blocks A B as new
 * rank 0; ranks 2, 3, 4 own C, D, E as new ranks 1, 2, 3; finally rank 1 sends A to rank 0.
 *
 * Cost: log2(p) steps, each rank sending (p-1)/p of the input (n x COUNT elements); 2 more steps
 * when n is not a power of two, in which the extra ranks send all of theirs. TMP holds n x COUNT
 * elements (a folded-in rank's whole sum).
 */
#include "builders.h"

typedef struct {
    coll_pof2_t f;
    uint64_t c;
} rh_t;

/* Elements of super-blocks [lo, lo + w). */
static void super_range(const rh_t *h, int lo, int w, uint64_t *off, uint64_t *len)
{
    int e = h->f.extra, hi = lo + w - 1;
    uint64_t first = (uint64_t)(lo < e ? 2 * lo : lo + e);
    uint64_t end = (uint64_t)(hi < e ? 2 * hi + 2 : hi + e + 1);
    *off = first * h->c;
    *len = (end - first) * h->c;
}

static void halve(const rh_t *h, const coll_args_t *a, coll_schedule_t *s, coll_buf_t cur)
{
    int nr = h->f.newrank, lo = 0, w = h->f.p;
    uint64_t koff, klen, soff, slen;
    for (int mask = h->f.p / 2; mask >= 1; mask >>= 1) {
        int peer = coll_pof2_rank(&h->f, nr ^ mask), upper = (nr & mask) != 0;
        w /= 2;
        super_range(h, upper ? lo + w : lo, w, &koff, &klen);
        super_range(h, upper ? lo : lo + w, w, &soff, &slen);
        lo = upper ? lo + w : lo;
        coll_step(s);
        coll_send(s, peer, cur, soff, slen);
        coll_recv_reduce(s, peer, COLL_BUF_TMP, koff, cur, koff, klen,
                         coll_order_flags(a->rank, peer));
        cur = COLL_BUF_TMP;
    }
    /* Still in the last halving step: its send read the other half, not this super-block. */
    super_range(h, nr, 1, &koff, &klen);
    if (a->op == COLL_MEAN)
        coll_divide_op(s, COLL_BUF_TMP, koff, klen);
    coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_TMP, (uint64_t)a->rank * h->c, h->c);
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    rh_t h = {.c = a->count};
    coll_pof2_init(&h.f, n, r);
    if (n == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, h.c);
        return coll_schedule_status(s);
    }
    uint64_t all = (uint64_t)n * h.c;
    s->tmp_count = all;
    coll_pof2_fold_in(s, &h.f, r, COLL_BUF_TMP, all);
    if (h.f.newrank >= 0)
        halve(&h, a, s, r < 2 * h.f.extra ? COLL_BUF_TMP : COLL_BUF_IN);
    coll_pof2_fold_out(s, &h.f, r, COLL_BUF_TMP, (uint64_t)(r - 1) * h.c, h.c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_reducescatter_recursive_halving = {
    .name = "recursive_halving",
    .description = "log2(n) steps exchanging halves of the shrinking range; extra ranks fold in",
    .coll = COLL_REDUCE_SCATTER,
    .build = build,
};
