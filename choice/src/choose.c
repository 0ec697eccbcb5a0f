/* The automatic choice by the cost model; see choice/choose.h. */
#include "choice/choose.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice/replay.h"

int choice_choose(const sim_topology_t *t, const coll_args_t *a, const int *ipus, choice_t *out,
                  choice_shape_t *winner, char *why, size_t len)
{
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(a->coll, &n);
    choice_shape_t best_shape, sh;
    memset(&best_shape, 0, sizeof best_shape);
    *out = (choice_t){0};
    coll_args_t pa = *a; /* the call on the pod: its nodes are IPU-Link domains */
    int *nodes = choice_pod_nodes(t, ipus, a->nranks);
    pa.node_of = nodes;
    pa.host_of = NULL;
    int oom = nodes == NULL;
    for (size_t i = 0; i < n && pa.node_of; i++) {
        const char *no = NULL;
        sim_time_t span;
        if (list[i]->canonical || (list[i]->supports && list[i]->supports(&pa, &no) != 0))
            continue;
        int rc = choice_shape_build(&sh, t, list[i], a, ipus);
        if (rc == 0)
            rc = choice_makespan(&sh, t, &span);
        oom |= rc == -ENOMEM;
        if (rc == 0) {
            out->tried++;
            if (!out->algo || span < out->makespan) {
                out->algo = list[i];
                out->makespan = span;
                choice_shape_free(&best_shape);
                best_shape = sh;
                continue;
            }
        }
        choice_shape_free(&sh);
    }
    free(nodes);
    /* Out of memory for one candidate would make the choice depend on the machine: refuse. */
    if (oom || !out->algo) {
        choice_shape_free(&best_shape);
        *out = (choice_t){0};
        if (why && len)
            snprintf(why, len, "%s", oom ? "out of memory" : "no algorithm can run the call");
        return oom ? -ENOMEM : -EINVAL;
    }
    if (why && len)
        snprintf(why, len, "%s (simulated %.3f us on %s, fastest of %d algorithms)",
                 out->algo->name, (double)out->makespan * 1e-6, sim_topology_name(t), out->tried);
    if (winner)
        *winner = best_shape;
    else
        choice_shape_free(&best_shape);
    return 0;
}
