/*
 * Call shapes: one algorithm's call over one group of IPUs on a simulated pod, as the cost model
 * sees it. A shape holds every rank's schedule and, for every send, its place in the queue of
 * the busiest link it shares with the other sends of the same step (so flows that share a link
 * arrive one after the other; see sim/cost.h). A pure function of the algorithm, the call, the
 * group's IPUs and the topology: every instance that builds one gets the same.
 *
 * The choice layer (choice/) has no threads, no locks and no I/O; it imports only collectives/
 * and sim/. libgcl keeps the caches around it.
 */
#ifndef CHOICE_SHAPE_H
#define CHOICE_SHAPE_H

#include <stdint.h>

#include "coll/algo.h"
#include "sim/topology.h"

typedef struct {
    const coll_algo_t *algo;
    coll_args_t a; /* the call; rank and node_of are not part of a shape */
    int n;
    int *ipus;          /* [n]: the group's global IPUs in rank order */
    coll_schedule_t *s; /* [n]: every rank's schedule */
    uint32_t **mult;    /* [n][ops + 1]: queue place of each send (1 when it shares nothing) */
} choice_shape_t;

/* Builds the shape of ALGO's call A over IPUS[0..a->nranks-1] on T into SH. Returns 0, -ENOMEM,
 * or -EINVAL when the algorithm cannot build the call or an IPU is not on the pod (then SH holds
 * nothing). */
int choice_shape_build(choice_shape_t *sh, const sim_topology_t *t, const coll_algo_t *algo,
                       const coll_args_t *a, const int *ipus);
void choice_shape_free(choice_shape_t *sh);

/* Whether SH is ALGO's call A over IPUS (every field of A but rank and node_of). */
int choice_shape_is(const choice_shape_t *sh, const coll_algo_t *algo, const coll_args_t *a,
                    const int *ipus);

/* Whether two calls have the same shape (the fields a shape keeps). */
int choice_same_call(const coll_args_t *x, const coll_args_t *y);

/* A hash of the call A over IPUS (for the caches around the layer). */
uint64_t choice_call_hash(const coll_args_t *a, const int *ipus);

#endif /* CHOICE_SHAPE_H */
