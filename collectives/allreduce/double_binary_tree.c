/*
 * all_reduce, double_binary_tree (NCCL's): two complementary binary trees over all ranks, each
 * carrying half the data, pipelined in segments: partial sums stream up each tree to its root
 * while finished segments already stream back down.
 *
 * Tree A is an in-order binary tree: rank r's level is its lowest set bit; its parent is
 * (r ^ bit) | (bit << 1), or r ^ bit when that is past the last rank; its children are r - bit/2
 * and the largest r + bit/2^j inside the group. Rank 0 is the root, with one child. Half of the
 * ranks (the odd ones) are leaves. Tree B is tree A mirrored (rank r plays A's rank n-1-r) when n
 * is even, or shifted by one (r plays A's rank r-1) when n is odd, so that the inner nodes of
 * one tree are leaves of the other (all but rank 0 when n is odd): no rank but one forwards data
 * in both trees, and each tree's half uses links the other leaves idle.
 *
 * Timing: segment s leaves a node for its parent in step s + height(parent) - 1 and arrives in
 * the same step, so a parent folds in all its children's segment s in step s + height - 1
 * (leaves have height 0). The root's segment s is final in step s + H - 1 (H the root's height);
 * it goes down one level per step, reaching depth d in step s + H + d - 1. Every message is sent
 * and received in the same step number, which keeps the per-pair order identical on both sides
 * and makes the schedule deadlock-free even when sends wait for their receiver.
 * A node folds its children's partials and its own input with the operands in rank order; each
 * segment is reduced once, at one node per level, and then only copied down: all ranks get the
 * same bits.
 *
 * Trace, n = 4, one segment per tree (A: 0 - 2 - {1, 3}; B mirrored: 3 - 1 - {2, 0}):
 *   step 0: A: 1->2, 3->2 (2 folds x1 x2 x3)     B: 2->1, 0->1 (1 folds x0 (x1 x2))
 *   step 1: A: 2->0 (0 folds A-half: x0 (x1 x2 x3)) B: 1->3 (3 folds its half)
 *   step 2: A: 0->2                              B: 3->1
 *   step 3: A: 2->1, 2->3                        B: 1->2, 1->0: every rank holds both halves.
 * With k segments per tree, segment s runs the same steps shifted by s.
 *
 * Cost: about k + 2 log2(n) steps for k segments per tree (segments of chunk_bytes, at most
 * COLL_MAX_SEGMENTS); each rank sends about 2 S in all (S/2 up and up to S down in the tree where
 * it is an inner node, S/2 up in the other), with log2(n) latencies once the pipeline is full.
 * TMP holds one segment per tree.
 */
#include <errno.h>
#include <stdlib.h>

#include "builders.h"

typedef struct {
    int par, ch[2]; /* this rank's parent (-1 at the root) and children (-1 when absent) */
    int h, hpar;    /* heights of this rank and of its parent (leaves are 0) */
    int depth, H;   /* this rank's depth and the root's height */
    int D;          /* the deepest node's depth */
} tree_t;

/* Tree A's links of rank r among n. */
static void btree(int n, int r, int *up, int *d0, int *d1)
{
    int bit = 1;
    while (bit < n && !(bit & r))
        bit <<= 1;
    *d0 = -1;
    if (r == 0) {
        *up = -1;
        *d1 = n > 1 ? bit >> 1 : -1;
        return;
    }
    *up = (r ^ bit) | (bit << 1);
    if (*up >= n)
        *up = r ^ bit;
    int low = bit >> 1;
    if (low)
        *d0 = r - low;
    while (low && r + low >= n)
        low >>= 1;
    *d1 = low ? r + low : -1;
}

/* Links of rank r in tree T (0 = A, 1 = B): B maps r to A's rank and the links back. */
static void links(int n, int t, int r, int *up, int ch[2])
{
    int mirror = t == 1 && n % 2 == 0, shift = t == 1 && n % 2 == 1;
    int v = mirror ? n - 1 - r : shift ? (r + n - 1) % n : r;
    int l[3];
    btree(n, v, &l[0], &l[1], &l[2]);
    for (int i = 0; i < 3; i++)
        if (l[i] >= 0)
            l[i] = mirror ? n - 1 - l[i] : shift ? (l[i] + 1) % n : l[i];
    *up = l[0];
    ch[0] = l[1];
    ch[1] = l[2];
}

/* Fills T for RANK from every rank's links: depths by walking up, heights by relaxing. */
static int tree_init(tree_t *T, int n, int t, int rank)
{
    int *par = malloc(sizeof(int) * (size_t)n * 3), *depth = par + n, *height = par + 2 * n;
    int ch[2];
    if (!par)
        return -ENOMEM;
    T->D = 0;
    for (int v = 0; v < n; v++)
        links(n, t, v, &par[v], ch);
    for (int v = 0; v < n; v++) {
        depth[v] = 0;
        height[v] = 0;
        for (int u = par[v]; u >= 0; u = par[u])
            depth[v]++;
        T->D = depth[v] > T->D ? depth[v] : T->D;
    }
    for (int pass = 0; pass < T->D; pass++)
        for (int v = 0; v < n; v++)
            if (par[v] >= 0 && height[par[v]] < height[v] + 1)
                height[par[v]] = height[v] + 1;
    links(n, t, rank, &T->par, T->ch);
    T->h = height[rank];
    T->hpar = T->par >= 0 ? height[T->par] : 0;
    T->depth = depth[rank];
    T->H = 0;
    for (int v = 0; v < n; v++)
        if (par[v] < 0)
            T->H = height[v];
    free(par);
    return 0;
}

/* One tree's share of the data: its range, segments and TMP slot. */
typedef struct {
    tree_t T;
    uint64_t base, len, tmp_off;
} half_t;

static void segment(const half_t *x, int nseg, int sg, uint64_t *off, uint64_t *len)
{
    coll_block(x->len, nseg, sg, off, len);
    *off += x->base;
}

/* Reduction traffic of step t: children's segment t - h + 1 in, own segment t - hpar + 1 out. */
static void up_ops(const coll_args_t *a, coll_schedule_t *s, const half_t *x, int nseg, int t)
{
    const tree_t *T = &x->T;
    uint64_t off, len;
    int sg = t - T->hpar + 1, leaf = T->ch[0] < 0 && T->ch[1] < 0;
    if (T->par >= 0 && sg >= 0 && sg < nseg) {
        segment(x, nseg, sg, &off, &len);
        coll_send(s, T->par, leaf ? COLL_BUF_IN : COLL_BUF_OUT, off, len);
    }
    sg = t - T->h + 1;
    if (leaf || sg < 0 || sg >= nseg)
        return;
    segment(x, nseg, sg, &off, &len);
    int first = T->ch[0] >= 0 ? T->ch[0] : T->ch[1];
    coll_recv_reduce(s, first, COLL_BUF_OUT, off, COLL_BUF_IN, off, len,
                     coll_order_flags(a->rank, first));
    if (T->ch[0] >= 0 && T->ch[1] >= 0) {
        coll_recv(s, T->ch[1], COLL_BUF_TMP, x->tmp_off, len);
        coll_reduce_op(s, COLL_BUF_OUT, off, COLL_BUF_TMP, x->tmp_off, len,
                       T->ch[1] < a->rank ? COLL_OPF_SWAP : 0);
    }
    if (T->par < 0 && a->op == COLL_MEAN)
        coll_divide_op(s, COLL_BUF_OUT, off, len);
}

/* Broadcast traffic of step t: the final segment t - H - depth + 1 in from the parent, segment
 * t - H - depth out to the children. */
static void down_ops(coll_schedule_t *s, const half_t *x, int nseg, int t)
{
    const tree_t *T = &x->T;
    uint64_t off, len;
    int sg = t - T->H - T->depth + 1;
    if (T->par >= 0 && sg >= 0 && sg < nseg) {
        segment(x, nseg, sg, &off, &len);
        coll_recv(s, T->par, COLL_BUF_OUT, off, len);
    }
    sg = t - T->H - T->depth;
    if (sg < 0 || sg >= nseg)
        return;
    segment(x, nseg, sg, &off, &len);
    for (int i = 0; i < 2; i++)
        if (T->ch[i] >= 0)
            coll_send(s, T->ch[i], COLL_BUF_OUT, off, len);
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks;
    half_t x[2];
    if (n == 1) {
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        return coll_schedule_status(s);
    }
    for (int t = 0; t < 2; t++) {
        coll_block(a->count, 2, t, &x[t].base, &x[t].len);
        if (tree_init(&x[t].T, n, t, a->rank))
            return -ENOMEM;
    }
    int nseg = coll_nsegments(a, x[0].len);
    uint64_t seg_max = (x[0].len + (uint64_t)nseg - 1) / (uint64_t)nseg;
    x[0].tmp_off = 0;
    x[1].tmp_off = seg_max;
    s->tmp_count = 2 * seg_max;
    int last = 0;
    for (int t = 0; t < 2; t++) {
        int end = nseg + x[t].T.H + x[t].T.D;
        last = end > last ? end : last;
    }
    /* Tree A's ops before tree B's in every step, on every rank: when both trees link the same
     * two ranks in one step, the per-pair message order is the same on both sides. */
    for (int t = 0; t < last; t++) {
        coll_step(s);
        for (int i = 0; i < 2; i++) {
            up_ops(a, s, &x[i], nseg, t);
            down_ops(s, &x[i], nseg, t);
        }
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_double_binary_tree = {
    .name = "double_binary_tree",
    .description = "two complementary pipelined binary trees, each reducing and broadcasting half",
    .coll = COLL_ALLREDUCE,
    .build = build,
};
