/*
 * barrier, ring: a token goes round the ring twice. The first lap (0 -> 1 -> .. -> n-1 -> 0)
 * tells rank 0 that everyone has arrived; the second tells everyone that rank 0 knows. Each
 * rank waits for the token before passing it on, so the two are separate steps.
 *
 * Trace, n = 4:
 *   0->1, 1->2, 2->3, 3->0      arrival lap: rank 0 has heard from all
 *   0->1, 1->2, 2->3            release lap: rank r leaves once the token has passed it
 *
 * Cost: 2n - 1 token hops in sequence (2n-1 latencies), for testing and for comparison; the
 * dissemination barrier needs ceil(log2 n).
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    if (n == 1)
        return coll_schedule_status(s);
    if (r == 0) {
        coll_step(s);
        coll_send_token(s, 1);
        coll_step(s);
        coll_recv_token(s, n - 1);
        coll_step(s);
        coll_send_token(s, 1);
        return coll_schedule_status(s);
    }
    for (int lap = 0; lap < 2; lap++) {
        coll_step(s);
        coll_recv_token(s, r - 1);
        if (lap == 1 && r == n - 1)
            break;
        coll_step(s);
        coll_send_token(s, (r + 1) % n);
    }
    return coll_schedule_status(s);
}

const coll_algo_t coll_barrier_ring = {
    .name = "ring",
    .description = "a token twice round the ring: arrival, then release",
    .coll = COLL_BARRIER,
    .build = build,
};
