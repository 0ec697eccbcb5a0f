/*
 * all_reduce, the canonical order across hosts: the data path of allreduce/canonical.c when the
 * group spans hosts that each hold one aligned block of L consecutive ranks (replicas go to
 * instances and hosts in equal contiguous blocks: then a host's block is a subtree of the
 * canonical tree, coll/canon.h). It reduces inside each host first and moves only the hosts'
 * partial sums across, spread over all of a host's ranks, in pipelined chunks so that the
 * network and the hosts work at once.
 *
 * With H hosts of L ranks, local rank j of host h is group rank h*L + j; the ranks j of every
 * host form rail j. The vector is cut into K chunks; chunk c, slice j of it (L slices), and
 * sub-slice g of that (H sub-slices) are coll_block pieces. Chunk c goes through four stages in
 * steps c, c+1, c+2 and c+3, so that step t carries stage 0 of chunk t, stage 1 of chunk t-1, ...:
 *   0 host reduce-scatter  rank j receives slice j of every local rank's input and folds the
 *                          host's partial P = canonical(L) over them, into its OUT slice j
 *   1 rail reduce-scatter  rank (h, j) receives sub-slice h of P from every host and folds
 *                          canonical(H) over them in host order (a MEAN divides here): the final
 *                          value, since the tree over n = H x L ranks is canonical(H) over the
 *                          hosts' subtrees
 *   2 rail all-gather      rank (h, j) sends its final sub-slice to its rail, receives the rest
 *   3 host all-gather      rank j sends its final slice j to its host, receives the others
 * Two operands are folded straight out of the message (RECV_REDUCE, the lower rank on the left);
 * more are received into TMP and folded along the tree. In the first step every rank also
 * sends a token to each rank it exchanges nothing with (neither of its host nor of its rail):
 * every message carries its sender's simulated clock, and libgcl replays the pod algorithm from
 * all of them. With L = 1 the host stages are empty; with one host this form is not used.
 *
 * Trace, H = 2 hosts x L = 2 ranks (ranks 0 1 | 2 3), K = 1, slices A (j = 0) and B, sub-slices
 * A0 A1 and B0 B1:
 *   step 0: 0<->1 swap the other's slice: 0 folds A = x0[A] + x1[A], 1 folds B; 2 and 3 the same
 *           on host 1; 0<->3 and 1<->2 send tokens
 *   step 1: rail 0 (ranks 0 and 2) swap sub-slices: 0 folds A0 = A(h0)[A0] + A(h1)[A0], 2 A1;
 *           rail 1 (1 and 3) folds B0 and B1
 *   step 2: 0 sends A0 to 2 and receives A1: both hold A; 1 and 3 hold B
 *   step 3: 0<->1 (and 2<->3) swap A and B: everyone holds A B.
 * Cost: K + 3 steps; each rank sends (L-1)/L x S inside its host in each host stage, and
 * (H-1)/(H L) x S across hosts in each rail stage: a host's ranks together send 2 (H-1)/H x S
 * across, the least an all-reduce can. TMP holds one chunk's tree operands per stage that needs
 * them (more than two operands).
 */
#include "builders.h"

int coll_canon_host_blocks(const coll_args_t *a, int *hosts, int *per_host)
{
    enum { MAX = 1024 };
    int n = a->nranks;
    coll_canon_piece_t pieces[MAX];
    if (!a->host_of || n < 2 || n > MAX)
        return 0;
    int k = coll_canon_pieces(n, a->host_of, pieces);
    if (k < 2)
        return 0;
    for (int i = 0; i < k; i++) {
        if (pieces[i].count != pieces[0].count)
            return 0;
        for (int q = 0; q < i; q++) /* one piece per host */
            if (a->host_of[pieces[q].first] == a->host_of[pieces[i].first])
                return 0;
    }
    *hosts = k;
    *per_host = pieces[0].count;
    return 1;
}

typedef struct {
    const coll_args_t *a;
    int H, L, h, j;  /* hosts, ranks per host, this rank's host and local index */
    int K;           /* chunks */
    coll_buf_t pbuf; /* where the host's partial is: OUT, or IN when L = 1 */
    uint64_t tmp_host, tmp_rail, stride_host, stride_rail; /* TMP regions and their strides */
} hosts_t;

static int rank_of(const hosts_t *p, int h, int j)
{
    return h * p->L + j;
}

/* Chunk C, slice J of it and (G >= 0) sub-slice G of that: offset in the vector and length. */
static void piece(const hosts_t *p, int c, int j, int g, uint64_t *off, uint64_t *len)
{
    uint64_t coff, clen, soff, slen, uoff, ulen;
    coll_block(p->a->count, p->K, c, &coff, &clen);
    coll_block(clen, p->L, j, &soff, &slen);
    *off = coff + soff;
    *len = slen;
    if (g >= 0) {
        coll_block(slen, p->H, g, &uoff, &ulen);
        *off += uoff;
        *len = ulen;
    }
}

/* Receives the other operands of an N-way fold into DST[off, +len) (own operand OWN[off],
 * PEERS[i] the rank of operand i, ME this rank's): two straight into DST, more into TMP at
 * BASE + i x STRIDE. */
static void receive_operands(coll_schedule_t *s, int n, int me, const int *peers, coll_buf_t own,
                             uint64_t off, uint64_t len, uint64_t base, uint64_t stride)
{
    for (int i = 0; i < n; i++) {
        if (i == me)
            continue;
        if (n == 2)
            coll_recv_reduce(s, peers[i], COLL_BUF_OUT, off, own, off, len,
                             coll_order_flags(me, i));
        else
            coll_recv(s, peers[i], COLL_BUF_TMP, base + (uint64_t)i * stride, len);
    }
}

/* The local ops that finish an N-way fold after its receives: the tree over TMP (own operand
 * copied in) into OUT, and a MEAN's division when DIVIDE. */
static void fold(coll_schedule_t *s, int n, int me, int divide, coll_buf_t own, uint64_t off,
                 uint64_t len, uint64_t base, uint64_t stride)
{
    if (n > 2) {
        coll_copy(s, COLL_BUF_TMP, base + (uint64_t)me * stride, own, off, len);
        coll_canon_fold_ops(s, n, divide ? COLL_MEAN : COLL_SUM, off, base, stride, len);
    } else if (divide) {
        coll_divide_op(s, COLL_BUF_OUT, off, len);
    }
}

/* Stage 0 of chunk C: slice j of the host's partial, into OUT (FINISH: its local ops). */
static void host_rs(const hosts_t *p, coll_schedule_t *s, int c, int finish)
{
    uint64_t off, len;
    int peers[1024];
    for (int l = 0; l < p->L; l++)
        peers[l] = rank_of(p, p->h, l);
    piece(p, c, p->j, -1, &off, &len);
    if (finish) {
        fold(s, p->L, p->j, 0, COLL_BUF_IN, off, len, p->tmp_host, p->stride_host);
        return;
    }
    for (int l = 0; l < p->L; l++) {
        uint64_t lo, ll;
        piece(p, c, l, -1, &lo, &ll);
        if (l != p->j)
            coll_send(s, peers[l], COLL_BUF_IN, lo, ll);
    }
    receive_operands(s, p->L, p->j, peers, COLL_BUF_IN, off, len, p->tmp_host, p->stride_host);
}

/* Stage 1 of chunk C: sub-slice h of slice j, final, into OUT (FINISH: its local ops). */
static void rail_rs(const hosts_t *p, coll_schedule_t *s, int c, int finish)
{
    uint64_t off, len;
    int peers[1024];
    for (int g = 0; g < p->H; g++)
        peers[g] = rank_of(p, g, p->j);
    piece(p, c, p->j, p->h, &off, &len);
    int divide = p->a->op == COLL_MEAN;
    if (finish) {
        fold(s, p->H, p->h, divide, p->pbuf, off, len, p->tmp_rail, p->stride_rail);
        return;
    }
    for (int g = 0; g < p->H; g++) {
        uint64_t go, gl;
        piece(p, c, p->j, g, &go, &gl);
        if (g != p->h)
            coll_send(s, peers[g], p->pbuf, go, gl);
    }
    receive_operands(s, p->H, p->h, peers, p->pbuf, off, len, p->tmp_rail, p->stride_rail);
}

/* Stage 2 of chunk C: the rail's final sub-slices of slice j, into OUT. */
static void rail_ag(const hosts_t *p, coll_schedule_t *s, int c)
{
    uint64_t off, len;
    piece(p, c, p->j, p->h, &off, &len);
    for (int g = 0; g < p->H; g++) {
        uint64_t go, gl;
        if (g == p->h)
            continue;
        piece(p, c, p->j, g, &go, &gl);
        coll_send(s, rank_of(p, g, p->j), COLL_BUF_OUT, off, len);
        coll_recv(s, rank_of(p, g, p->j), COLL_BUF_OUT, go, gl);
    }
}

/* Stage 3 of chunk C: the host's final slices, into OUT. */
static void host_ag(const hosts_t *p, coll_schedule_t *s, int c)
{
    uint64_t off, len;
    piece(p, c, p->j, -1, &off, &len);
    for (int l = 0; l < p->L; l++) {
        uint64_t lo, ll;
        if (l == p->j)
            continue;
        piece(p, c, l, -1, &lo, &ll);
        coll_send(s, rank_of(p, p->h, l), COLL_BUF_OUT, off, len);
        coll_recv(s, rank_of(p, p->h, l), COLL_BUF_OUT, lo, ll);
    }
}

/* Tokens to the ranks this one exchanges nothing else with, for their clocks. */
static void tokens(const hosts_t *p, coll_schedule_t *s)
{
    for (int q = 0; q < p->a->nranks; q++) {
        if (q / p->L == p->h || q % p->L == p->j)
            continue;
        coll_send_token(s, q);
        coll_recv_token(s, q);
    }
}

int coll_canon_hosts_build(const coll_args_t *a, coll_schedule_t *s, int hosts, int per_host)
{
    size_t bytes = (size_t)a->count * (a->elem_size ? a->elem_size : 1);
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : bytes / COLL_CANON_CHUNKS;
    if (!a->chunk_bytes)
        chunk = chunk < COLL_CANON_CHUNK_MIN   ? COLL_CANON_CHUNK_MIN
                : chunk > COLL_CANON_CHUNK_MAX ? COLL_CANON_CHUNK_MAX
                                               : chunk;
    coll_args_t chunked = *a;
    chunked.chunk_bytes = chunk;
    hosts_t p = {.a = a,
                 .H = hosts,
                 .L = per_host,
                 .h = a->rank / per_host,
                 .j = a->rank % per_host,
                 .K = coll_nsegments(&chunked, a->count)};
    p.pbuf = p.L > 1 ? COLL_BUF_OUT : COLL_BUF_IN;
    uint64_t off, slice, sub;
    piece(&p, 0, 0, -1, &off, &slice); /* the first chunk, slice and sub-slice are the largest */
    piece(&p, 0, 0, 0, &off, &sub);
    p.stride_host = slice;
    p.stride_rail = sub;
    p.tmp_host = 0;
    p.tmp_rail = p.L > 2 ? coll_canon_tmp(p.L, slice) : 0;
    s->tmp_count = p.tmp_rail + (p.H > 2 ? coll_canon_tmp(p.H, sub) : 0);
    for (int t = 0; t < p.K + 3; t++) {
        coll_step(s);
        if (t == 0)
            tokens(&p, s);
        if (t < p.K)
            host_rs(&p, s, t, 0);
        if (t >= 1 && t - 1 < p.K)
            rail_rs(&p, s, t - 1, 0);
        if (t >= 2 && t - 2 < p.K)
            rail_ag(&p, s, t - 2);
        if (t >= 3 && t - 3 < p.K)
            host_ag(&p, s, t - 3);
        if (t < p.K)
            host_rs(&p, s, t, 1);
        if (t >= 1 && t - 1 < p.K)
            rail_rs(&p, s, t - 1, 1);
    }
    return coll_schedule_status(s);
}
