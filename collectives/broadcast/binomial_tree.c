/*
 * broadcast, binomial_tree: ranks are renumbered relative to the root (v = r - root mod n). In
 * round k, every v < 2^k that holds the data sends it to v + 2^k; after ceil(log2 n) rounds all
 * have it. Large messages are cut into segments (chunk_bytes each, see coll_nsegments) that
 * follow each other down the tree one step apart: relative rank v receives segment s in step
 * s + k_v (k_v the round in which v is reached, floor(log2 v)) and sends it to its child of
 * round k in step s + k, in the same step as that child receives it.
 *
 * Trace, n = 5, root 0, one segment:
 *   step 0: 0->1
 *   step 1: 0->2, 1->3
 *   step 2: 0->4                all five hold the data
 * With root 2 the relative ranks 0..4 are ranks 2, 3, 4, 0, 1.
 *
 * Cost: ceil(log2 n) + k - 1 steps for k segments; the root sends ceil(log2 n) x S bytes (a
 * segment to each child), so for small messages; large ones belong to chain or
 * scatter_allgather. No TMP.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, v = coll_mod(a->rank - a->root, n);
    int rounds = coll_log2_ceil(n), kv = v > 0 ? coll_log2_floor(v) : -1;
    int nseg = coll_nsegments(a, a->count);
    uint64_t off, len;
    if (n == 1)
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
    for (int t = 0; t < nseg + rounds - 1; t++) {
        coll_step(s);
        if (t == 0 && v == 0) /* OUT is IN when in place: the copy writes nothing a send reads */
            coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        int sg = t - kv;
        if (v > 0 && sg >= 0 && sg < nseg) {
            coll_block(a->count, nseg, sg, &off, &len);
            coll_recv(s, (a->root + v - (1 << kv)) % n, COLL_BUF_OUT, off, len);
        }
        for (int k = kv + 1; k < rounds && v + (1 << k) < n; k++) {
            sg = t - k;
            if (sg < 0 || sg >= nseg)
                continue;
            coll_block(a->count, nseg, sg, &off, &len);
            coll_send(s, (a->root + v + (1 << k)) % n, v == 0 ? COLL_BUF_IN : COLL_BUF_OUT, off,
                      len);
        }
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_broadcast_binomial_tree = {
    .name = "binomial_tree",
    .description = "binomial tree from the root, pipelined in segments",
    .coll = COLL_BROADCAST,
    .build = build,
};
