/*
 * all_gather, direct: for small messages. Every rank sends its input to every other rank in one
 * step and receives each rank's block straight into its place in OUT.
 *
 * Trace, n = 4: step 0: rank r sends block r to the three others and receives their blocks.
 *
 * Cost: 1 step; each rank sends (n-1) x COUNT elements, to n-1 peers at once. No TMP.
 */
#include "builders.h"

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    int n = a->nranks, r = a->rank;
    uint64_t c = a->count;
    coll_step(s);
    for (int q = 0; q < n; q++) {
        if (q == r)
            continue;
        coll_send(s, q, COLL_BUF_IN, 0, c);
        coll_recv(s, q, COLL_BUF_OUT, (uint64_t)q * c, c);
    }
    coll_copy(s, COLL_BUF_OUT, (uint64_t)r * c, COLL_BUF_IN, 0, c);
    return coll_schedule_status(s);
}

const coll_algo_t coll_allgather_direct = {
    .name = "direct",
    .description = "small messages: everyone sends its block to everyone in one step",
    .coll = COLL_ALLGATHER,
    .build = build,
};
