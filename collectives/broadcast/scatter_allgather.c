/*
 * broadcast, scatter_allgather (van de Geijn): the root scatters the data in n blocks down a
 * binomial tree, then a ring all-gather gives every rank every block. Ranks are renumbered
 * relative to the root (v = r - root mod n) and block j goes to relative rank j.
 *
 * Scatter: in step t (masks m = 2^(K-1), .. 2, 1 for K = ceil(log2 n), t = K-1-log2 m), a rank v
 * that is a multiple of 2m and holds blocks v .. v+2m-1 sends blocks v+m .. v+2m-1 to v+m; v+m
 * receives them in the same step. All-gather: in step k (0 <= k < n-1) v sends block v-k to
 * v+1 and receives block v-k-1 from v-1.
 *
 * Trace, n = 5, root 0 (blocks A..E for ranks 0..4):
 *   scatter (m = 4): 0->4 E
 *   scatter (m = 2): 0->2 C D
 *   scatter (m = 1): 0->1 B, 2->3 D          rank v now holds block v (rank 0 all of them)
 *   gather 0..3: the ring passes blocks on until every rank holds A..E.
 *
 * Cost: ceil(log2 n) + n - 1 steps; the root sends (n-1)/n x S in the scatter and every rank
 * (n-1)/n x S in the all-gather: about 2 S / B in all, for large messages on large groups. No TMP.
 */
#include "builders.h"

typedef struct {
    int n, v, root;
    uint64_t count;
} sag_t;

static int real(const sag_t *g, int v)
{
    return (g->root + coll_mod(v, g->n)) % g->n;
}

static void scatter(const sag_t *g, coll_schedule_t *s)
{
    int K = coll_log2_ceil(g->n), v = g->v;
    uint64_t off, len;
    for (int t = 0; t < K; t++) {
        int m = 1 << (K - 1 - t);
        coll_step(s);
        if (t == 0 && v == 0) /* OUT is IN when in place: the copy writes nothing a send reads */
            coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, g->count);
        if (v % (2 * m) == m) { /* reached in this step */
            int w = v + m <= g->n ? m : g->n - v;
            coll_block_range(g->count, g->n, v, w, &off, &len);
            coll_recv(s, real(g, v - m), COLL_BUF_OUT, off, len);
        } else if (v % (2 * m) == 0 && v + m < g->n) {
            int w = v + 2 * m <= g->n ? m : g->n - v - m;
            coll_block_range(g->count, g->n, v + m, w, &off, &len);
            coll_send(s, real(g, v + m), v == 0 ? COLL_BUF_IN : COLL_BUF_OUT, off, len);
        }
    }
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    sag_t g = {a->nranks, coll_mod(a->rank - a->root, a->nranks), a->root, a->count};
    uint64_t off, len;
    if (g.n == 1)
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
    scatter(&g, s);
    for (int k = 0; k < g.n - 1; k++) {
        coll_step(s);
        coll_block(g.count, g.n, coll_mod(g.v - k, g.n), &off, &len);
        coll_send(s, real(&g, g.v + 1), COLL_BUF_OUT, off, len);
        coll_block(g.count, g.n, coll_mod(g.v - k - 1, g.n), &off, &len);
        coll_recv(s, real(&g, g.v - 1), COLL_BUF_OUT, off, len);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_broadcast_scatter_allgather = {
    .name = "scatter_allgather",
    .description = "van de Geijn: binomial scatter of n blocks, then a ring all-gather",
    .coll = COLL_BROADCAST,
    .build = build,
};
