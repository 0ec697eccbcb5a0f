/*
 * all_reduce, canonical: every element folded along the canonical tree (coll/canon.h), the order
 * libgcl's automatic choice keeps whatever carries the bytes. It is the message form of that
 * order, for calls that do not run host-direct (non-blocking calls, groups that span hosts); the
 * simulated time of such a call is that of the pod algorithm the cost model picks, not this
 * schedule's, so it is built for the real network: few steps, large messages, every peer at once.
 *
 * Small vectors (at most COLL_CANON_SMALL_BYTES sent by each rank, or fewer elements than ranks):
 * one step in which every rank sends its whole input to every other and folds all n in tree
 * order itself. Larger ones: a direct reduce-scatter (rank q sends block b of its input to rank
 * b, which folds the n copies of its block), then a direct all-gather of the folded blocks.
 * Either way each rank hears from every other in the first step, which is how libgcl learns
 * every rank's simulated entry clock for the pod algorithm's replay. A group that spans hosts
 * holding aligned blocks of ranks (coll_args_t.host_of) takes the pipelined form of
 * allreduce/canonical_hosts.c instead: reduce inside each host first, cross with partial sums.
 *
 * Trace, n = 4, large (blocks A B C D; xq[b] is block b of rank q's input):
 *   step 0: rank 1 sends x1[A] to 0, x1[C] to 2, x1[D] to 3, receives x0[B], x2[B], x3[B]
 *           into TMP, copies its own x1[B] beside them, and folds
 *           OUT[B] = (x0[B] + x1[B]) + (x2[B] + x3[B]). Every rank alike for its block.
 *   step 1: rank 1 sends OUT[B] to 0, 2 and 3, and receives OUT[A], OUT[C], OUT[D].
 * Small, n = 4: step 0: every rank sends x to the 3 others and folds (x0 + x1) + (x2 + x3).
 *
 * Cost: large, 2 steps, each rank sending 2(n-1)/n x S bytes to n-1 peers at once (the ring's
 * volume in 2 steps instead of 2(n-1)); small, 1 step of (n-1) x S. TMP holds n + depth blocks
 * (large) or vectors (small).
 */
#include "builders.h"

/* Each rank sends at most this much in the small form. */
#define COLL_CANON_SMALL_BYTES ((uint64_t)256 << 10)

static void small(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    s->tmp_count = coll_canon_tmp(n, c);
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == r)
            continue;
        coll_send(s, q, COLL_BUF_IN, 0, c);
        coll_recv(s, q, COLL_BUF_TMP, (uint64_t)q * c, c);
    }
    coll_copy(s, COLL_BUF_TMP, (uint64_t)r * c, COLL_BUF_IN, 0, c);
    coll_step(s); /* the fold writes OUT, which is IN in place, so after the sends of IN */
    coll_canon_fold_ops(s, n, a->op, 0, 0, c, c);
}

static void large(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count, off, len, stride;
    coll_block(c, n, 0, &off, &stride); /* the first block is the largest */
    s->tmp_count = coll_canon_tmp(n, stride);
    coll_block(c, n, r, &off, &len);
    coll_step(s);
    for (int q = 0; q < n; q++) {
        uint64_t qoff, qlen;
        if (q == r)
            continue;
        coll_block(c, n, q, &qoff, &qlen);
        coll_send(s, q, COLL_BUF_IN, qoff, qlen);
        coll_recv(s, q, COLL_BUF_TMP, (uint64_t)q * stride, len);
    }
    coll_copy(s, COLL_BUF_TMP, (uint64_t)r * stride, COLL_BUF_IN, off, len);
    coll_canon_fold_ops(s, n, a->op, off, 0, stride, len);
    coll_step(s);
    for (int q = 0; q < n; q++) {
        uint64_t qoff, qlen;
        if (q == r)
            continue;
        coll_block(c, n, q, &qoff, &qlen);
        coll_send(s, q, COLL_BUF_OUT, off, len);
        coll_recv(s, q, COLL_BUF_OUT, qoff, qlen);
    }
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    uint64_t c = a->count;
    int hosts, per_host;
    if (a->nranks == 1)
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, c);
    else if (c < (uint64_t)a->nranks ||
             c * a->elem_size * (uint64_t)(a->nranks - 1) <= COLL_CANON_SMALL_BYTES)
        small(a, s);
    else if (coll_canon_host_blocks(a, &hosts, &per_host))
        return coll_canon_hosts_build(a, s, hosts, per_host);
    else
        large(a, s);
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_canonical = {
    .name = "canonical",
    .description = "the canonical tree order over direct messages (libgcl's default data path)",
    .coll = COLL_ALLREDUCE,
    .build = build,
    .canonical = 1,
};
