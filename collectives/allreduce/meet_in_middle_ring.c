/*
 * all_reduce, meet_in_middle_ring: each block's reduction travels half the ring from each side
 * and the two halves meet at the block's owner; the result then spreads back out both ways.
 *
 * GCL lists a "meet-in-the-middle ring" collective method but the documentation we could find
 * does not describe it, so this is our interpretation: the bidirectional use of one ring that
 * halves the number of steps of a ring all-reduce while moving the same bytes.
 *
 * Block b (of n, coll_block) is owned by rank b. Its contributions flow towards b along two arms:
 * R = floor(n/2) ranks b-R .. b-1 pass a partial clockwise (rank r sends to r+1), and
 * L = floor((n-1)/2) ranks b+L .. b+1 pass one anticlockwise. Every rank is on the clockwise arm
 * of R blocks and the anticlockwise arm of L blocks, and the arms of all blocks advance together:
 *   reduce step k (0 <= k < R): rank r sends block r+R-k clockwise (its input at k = 0, else the
 *     partial it formed at step k-1) and receives block r+R-k-1 from r-1, folding in its input;
 *     while k < L it also sends block r-L+k anticlockwise and receives block r-L+k+1 from r+1.
 *     The last receive of each arm is block r itself: the clockwise partial is folded with the
 *     rank's input, the anticlockwise one lands in TMP and is folded in after: block r is then
 *     (x[r-R] .. x[r-1] x[r]) OP (x[r+1] .. x[r+L]), computed once, at rank r.
 *   gather step k (0 <= k < R): rank r sends block r-k to r+1 and receives block r-k-1 from r-1;
 *     while k < L it sends block r+k to r-1 and receives block r+k+1 from r+1.
 *
 * Trace, n = 5 (R = L = 2; blocks A..E = 0..4; xq is rank q's input), seen from rank 0; every
 * rank does the same shifted by its rank:
 *   reduce 0: 0->1 C, 0->4 D (inputs)   from 4: B, kept as B' = x4 OP x0
 *                                       from 1: E, kept as E' = x0 OP x1
 *   reduce 1: 0->1 B', 0->4 E'          from 4: A' = x3 x4, folded: (x3 x4) OP x0
 *                                       from 1: A'' = x1 x2 into TMP: A = ((x3 x4) x0) OP (x1 x2)
 *   gather 0: 0->1 A, 0->4 A            from 4: E, from 1: B
 *   gather 1: 0->1 E, 0->4 B            from 4: D, from 1: C; rank 0 holds A B C D E.
 *
 * Cost: 2 floor(n/2) steps (n for even n, n-1 for odd; the ring needs 2(n-1)), each rank moving
 * 2(n-1)/n x S in all, half in each direction: the latency term is halved and a ring of
 * full-duplex links carries the same bytes in half the time of a one-way ring. TMP holds one
 * block. Any group size; n = 2 is a plain exchange, n = 1 a copy.
 */
#include "builders.h"

typedef struct {
    int n, r, R, L;
    uint64_t count;
} mim_t;

static void block(const mim_t *m, int b, uint64_t *off, uint64_t *len)
{
    coll_block(m->count, m->n, coll_mod(b, m->n), off, len);
}

static void reduce_step(const mim_t *m, const coll_args_t *a, coll_schedule_t *s, int k)
{
    int n = m->n, r = m->r;
    uint64_t off, len, own, ownlen;
    coll_buf_t src = k == 0 ? COLL_BUF_IN : COLL_BUF_OUT;
    block(m, r + m->R - k, &off, &len);
    coll_send(s, (r + 1) % n, src, off, len);
    block(m, r + m->R - k - 1, &off, &len);
    coll_recv_reduce(s, coll_mod(r - 1, n), COLL_BUF_OUT, off, COLL_BUF_IN, off, len,
                     COLL_OPF_SWAP);
    if (k < m->L) {
        block(m, r - m->L + k, &off, &len);
        coll_send(s, coll_mod(r - 1, n), src, off, len);
        block(m, r - m->L + k + 1, &off, &len);
        if (k < m->L - 1)
            coll_recv_reduce(s, (r + 1) % n, COLL_BUF_OUT, off, COLL_BUF_IN, off, len, 0);
        else
            coll_recv(s, (r + 1) % n, COLL_BUF_TMP, 0, len);
    }
    if (k == m->R - 1) {
        block(m, r, &own, &ownlen);
        if (m->L > 0)
            coll_reduce_op(s, COLL_BUF_OUT, own, COLL_BUF_TMP, 0, ownlen, 0);
        if (a->op == COLL_MEAN)
            coll_divide_op(s, COLL_BUF_OUT, own, ownlen);
    }
}

static void gather_step(const mim_t *m, coll_schedule_t *s, int k)
{
    int n = m->n, r = m->r;
    uint64_t off, len;
    block(m, r - k, &off, &len);
    coll_send(s, (r + 1) % n, COLL_BUF_OUT, off, len);
    block(m, r - k - 1, &off, &len);
    coll_recv(s, coll_mod(r - 1, n), COLL_BUF_OUT, off, len);
    if (k < m->L) {
        block(m, r + k, &off, &len);
        coll_send(s, coll_mod(r - 1, n), COLL_BUF_OUT, off, len);
        block(m, r + k + 1, &off, &len);
        coll_recv(s, (r + 1) % n, COLL_BUF_OUT, off, len);
    }
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks;
    if (n == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        return coll_schedule_status(s);
    }
    mim_t m = {.n = n, .r = a->rank, .R = n / 2, .L = (n - 1) / 2, .count = a->count};
    s->tmp_count = a->count / (uint64_t)n + 1;
    for (int k = 0; k < m.R; k++) {
        coll_step(s);
        reduce_step(&m, a, s, k);
    }
    for (int k = 0; k < m.R; k++) {
        coll_step(s);
        gather_step(&m, s, k);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_meet_in_middle_ring = {
    .name = "meet_in_middle_ring",
    .description = "each block is reduced along both arms of the ring, meeting at its owner",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
