/*
 * barrier, dissemination (Hensgen, Finkel and Manber): in round k rank r sends a zero-byte token
 * to r + 2^k and waits for one from r - 2^k (mod n). After round k a rank has heard, directly
 * or through others, from the 2^(k+1) - 1 ranks before it, so after ceil(log2 n) rounds from
 * all: no rank leaves before every rank has arrived.
 *
 * Trace, n = 5:
 *   round 0: r -> r+1    r has heard from r-1
 *   round 1: r -> r+2    r has heard from r-1 .. r-3
 *   round 2: r -> r+4    r has heard from r-1 .. r-7: everyone
 *
 * Cost: ceil(log2 n) steps of one token each way per rank. Any n; a group of one does nothing.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    for (int d = 1; d < n; d *= 2) {
        coll_step(s);
        coll_send_token(s, (r + d) % n);
        coll_recv_token(s, coll_mod(r - d, n));
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_barrier_dissemination = {
    .name = "dissemination",
    .description = "ceil(log2 n) rounds of zero-byte tokens to rank + 2^k",
    .coll = COLL_BARRIER,
    .build = build,
};
