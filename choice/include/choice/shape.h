/*
 * Call shapes: one algorithm's call over one group of IPUs on a simulated pod, as the cost model
 * sees it. A shape holds every rank's schedule and, for every send, its place in the queue of
 * the busiest link it shares with the other sends of the same step (so flows that share a link
 * arrive one after the other; see sim/cost/cost.h). A pure function of the algorithm, the call, the
 * group's IPUs and the topology: every instance that builds one gets the same.
 *
 * The choice layer (choice/) has no threads, no locks and no I/O; it imports only collectives/
 * and sim/. libgcl keeps the caches around it.
 */
#ifndef CHOICE_SHAPE_H
#define CHOICE_SHAPE_H

#include <stdint.h>

#include "coll/algo.h"
#include "sim/topology/topology.h"

typedef struct {
    const coll_algo_t *algo;
    coll_args_t a; /* the call; rank and node_of are not part of a shape */
    int n;
    int *ipus;          /* [n]: the group's global IPUs in rank order */
    coll_schedule_t *s; /* [n]: every rank's schedule */
    uint32_t **mult;    /* [n][ops + 1]: each send's time over its route's bottleneck time, in
                           thousandths (CHOICE_MULT_ONE when it shares nothing; see shape.c) */
} choice_shape_t;

/* The multiplier of a send that shares no link. */
#define CHOICE_MULT_ONE 1000u

/* A send's time: ceil(BASE (its bytes at its route's bottleneck) x MULT / CHOICE_MULT_ONE);
 * MULT 0 counts as CHOICE_MULT_ONE. */
static inline uint64_t choice_mult_time(uint64_t base, uint32_t mult)
{
    uint64_t m = mult ? mult : CHOICE_MULT_ONE;
    return (base * m + CHOICE_MULT_ONE - 1) / CHOICE_MULT_ONE;
}

/* Builds the shape of ALGO's call A over IPUS[0..a->nranks-1] on T into SH. On the pod a node
 * is an IPU-Link domain: a hierarchical algorithm reduces inside each ILD and crosses the
 * GW-Links between them (A's node_of, the real layout's, is not used). Returns 0, -ENOMEM, or
 * -EINVAL when the algorithm cannot build the call or an IPU is not on the pod (then SH holds
 * nothing). */
int choice_shape_build(choice_shape_t *sh, const sim_topology_t *t, const coll_algo_t *algo,
                       const coll_args_t *a, const int *ipus);
void choice_shape_free(choice_shape_t *sh);

/* The ILD of each of the N IPUS on T, for coll_args_t.node_of (malloc'd; NULL when out of
 * memory or an IPU is not on T). */
int *choice_pod_nodes(const sim_topology_t *t, const int *ipus, int n);

/* Whether SH is ALGO's call A over IPUS (every field of A but rank and node_of). */
int choice_shape_is(const choice_shape_t *sh, const coll_algo_t *algo, const coll_args_t *a,
                    const int *ipus);

/* Whether two calls have the same shape (the fields a shape keeps). */
int choice_same_call(const coll_args_t *x, const coll_args_t *y);

/* A hash of the call A over IPUS (for the caches around the layer). */
uint64_t choice_call_hash(const coll_args_t *a, const int *ipus);

#endif /* CHOICE_SHAPE_H */
