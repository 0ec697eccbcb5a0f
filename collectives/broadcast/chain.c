/*
 * broadcast, chain: the ranks form a chain from the root (relative ranks v = r - root mod n,
 * 0 -> 1 -> .. -> n-1) and the data, cut into segments of chunk_bytes, streams down it: v
 * receives segment s from v-1 in step s + v - 1 and passes it to v+1 in step s + v.
 *
 * Trace, n = 4, root 0, three segments a b c:
 *   step 0: 0->1 a
 *   step 1: 0->1 b, 1->2 a
 *   step 2: 0->1 c, 1->2 b, 2->3 a
 *   step 3: 1->2 c, 2->3 b
 *   step 4: 2->3 c              all four hold a b c
 *
 * Cost: k + n - 2 steps for k segments; every rank but the last sends S once: bandwidth-optimal
 * once k is large against n (time about (k + n - 2) x S/k / B), for large messages on groups of
 * moderate size. No TMP.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, v = coll_mod(a->rank - a->root, n);
    int nseg = coll_nsegments(a, a->count);
    uint64_t off, len;
    if (n == 1)
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
    for (int t = 0; t < nseg + n - 2; t++) {
        coll_step(s);
        if (t == 0 && v == 0) /* OUT is IN when in place: the copy writes nothing a send reads */
            coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
        int sg = t - v + 1;
        if (v > 0 && sg >= 0 && sg < nseg) {
            coll_block(a->count, nseg, sg, &off, &len);
            coll_recv(s, coll_mod(a->rank - 1, n), COLL_BUF_OUT, off, len);
        }
        sg = t - v;
        if (v < n - 1 && sg >= 0 && sg < nseg) {
            coll_block(a->count, nseg, sg, &off, &len);
            coll_send(s, (a->rank + 1) % n, v == 0 ? COLL_BUF_IN : COLL_BUF_OUT, off, len);
        }
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_broadcast_chain = {
    .name = "chain",
    .description = "pipelined chain from the root: segments stream down the ranks",
    .coll = COLL_BROADCAST,
    .build = build,
};
