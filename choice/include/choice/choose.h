/*
 * The automatic choice: the algorithm GCL would run for a call on the simulated pod. Every
 * algorithm of the collective that supports the call (the canonical order's data path excepted:
 * it is not a pod algorithm) is replayed over the group's IPUs from a common start, and the one
 * with the least makespan wins; the registry's order breaks ties. A pure function of the call,
 * the IPUs and the topology, so every instance and every rank picks the same without talking.
 */
#ifndef CHOICE_CHOOSE_H
#define CHOICE_CHOOSE_H

#include <stddef.h>

#include "choice/shape.h"
#include "sim/base/time.h"

typedef struct {
    const coll_algo_t *algo; /* the winner */
    sim_time_t makespan;     /* its simulated time from a common start */
    int tried;               /* candidates replayed */
} choice_t;

/* Chooses for A over IPUS on T. When WINNER is not NULL it receives the winner's shape (the
 * caller frees it), so that it need not be built again. Fills WHY with a sentence for logs.
 * Returns 0, -ENOMEM, or -EINVAL when no algorithm can run the call. */
int choice_choose(const sim_topology_t *t, const coll_args_t *a, const int *ipus, choice_t *out,
                  choice_shape_t *winner, char *why, size_t len);

#endif /* CHOICE_CHOOSE_H */
