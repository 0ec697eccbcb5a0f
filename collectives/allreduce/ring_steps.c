/*
 * Ring all-reduce steps, shared by the ring family.
 *
 * The range is cut into n blocks (coll_block). In direction dir, rank r's right neighbour is
 * r+dir and its left neighbour r-dir (mod n).
 *
 * Reduce-scatter, step s = 0 .. n-2: rank r sends block (r - dir*s) to the right and receives
 * block (r - dir*(s+1)) from the left, combining it with its own input: OUT = incoming OP IN.
 * At step 0 the block sent is the rank's own input; later it is the partial result it received
 * and combined one step earlier. After n-1 steps rank r holds block (r + dir) fully reduced,
 * accumulated in ring order starting from rank (r + 2*dir), which fixes the rounding.
 *
 * All-gather, step s = 0 .. n-2: rank r sends block (r + dir - dir*s) to the right and receives
 * block (r - dir*s) from the left as a copy. Every rank ends with the same bits in every block,
 * because each block is reduced once, at one rank, and only copied after that.
 *
 * Trace, clockwise, n = 4 (blocks A B C D = 0 1 2 3; "x->y" is a send from rank x to rank y):
 *   RS step 0: 0->1 A   1->2 B   2->3 C   3->0 D     1 has A01, 2 has B12, 3 has C23, 0 has D30
 *   RS step 1: 0->1 D30 1->2 A01 2->3 B12 3->0 C23   1 has D301, 2 has A012, 3 has B123, 0 C230
 *   RS step 2: 0->1 C230 ...                         rank r holds block r+1 reduced over all four
 *   AG step 0: 0->1 B   1->2 C   2->3 D   3->0 A     (each final block moves one hop)
 *   AG steps 1, 2: the blocks move on until every rank holds A B C D.
 * Each rank sends and receives 2(n-1)/n of the data: bandwidth-optimal, with 2(n-1) latencies.
 */
#include "coll/ring.h"

static int mod(int x, int n)
{
    return ((x % n) + n) % n;
}

static int peer_at(const coll_ring_t *g, int pos)
{
    int p = mod(pos, g->n);
    return g->members ? g->members[p] : p;
}

void coll_ring_rs_step(const coll_ring_t *g, coll_schedule_t *s, coll_buf_t src, uint64_t base,
                       uint64_t len, int k, int divide)
{
    int n = g->n, p = g->pos, dir = g->dir;
    uint64_t soff, slen, roff, rlen;
    coll_block(len, n, mod(p - dir * k, n), &soff, &slen);
    coll_block(len, n, mod(p - dir * (k + 1), n), &roff, &rlen);
    coll_send(s, peer_at(g, p + dir), k == 0 ? src : COLL_BUF_OUT, base + soff, slen);
    coll_recv_reduce(s, peer_at(g, p - dir), COLL_BUF_OUT, base + roff, src, base + roff, rlen,
                     COLL_OPF_SWAP);
    if (k == n - 2 && divide)
        coll_divide_op(s, COLL_BUF_OUT, base + roff, rlen);
}

void coll_ring_ag_step(const coll_ring_t *g, coll_schedule_t *s, uint64_t base, uint64_t len, int k)
{
    int n = g->n, p = g->pos, dir = g->dir;
    uint64_t soff, slen, roff, rlen;
    coll_block(len, n, mod(p + dir - dir * k, n), &soff, &slen);
    coll_block(len, n, mod(p - dir * k, n), &roff, &rlen);
    coll_send(s, peer_at(g, p + dir), COLL_BUF_OUT, base + soff, slen);
    coll_recv(s, peer_at(g, p - dir), COLL_BUF_OUT, base + roff, rlen);
}

void coll_ring_allreduce_step(const coll_args_t *a, coll_schedule_t *s, uint64_t base, uint64_t len,
                              int dir, int k)
{
    coll_ring_t g = {.n = a->nranks, .pos = a->rank, .dir = dir, .members = NULL};
    if (k < a->nranks - 1)
        coll_ring_rs_step(&g, s, COLL_BUF_IN, base, len, k, a->op == COLL_MEAN);
    else
        coll_ring_ag_step(&g, s, base, len, k - (a->nranks - 1));
}
