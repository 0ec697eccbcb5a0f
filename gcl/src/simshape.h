/*
 * Call shapes analysed for the simulator. A shape is one algorithm's call (collective, count,
 * type, operator, root) over one group of IPUs: every rank's schedule, and the place each send
 * takes in the queues of the links it shares with the other sends of its step (which is how
 * flows that share a link queue behind each other). Pure functions of the shape and the
 * topology, so an instance builds each once and its IPU threads share it.
 */
#ifndef GCL_SIMSHAPE_H
#define GCL_SIMSHAPE_H

#include "coll/algo.h"

struct gcl_comm;
struct gcl_instance;

typedef struct {
    const coll_algo_t *algo;
    coll_args_t a; /* the call; rank and node_of are not part of the shape */
    int n;
    int *ipus;          /* [n]: the group's IPUs in rank order */
    coll_schedule_t *s; /* [n]: every rank's schedule */
    uint32_t **mult;    /* [n][ops]: queue place of each send (1 when it shares nothing) */
    uint64_t used;      /* for eviction */
} gcl_shape_t;

/*
 * The shape of ALGO's call A over C's group, built on first use. Returns with the instance's
 * shape lock held, to be released with gcl_shape_release once the caller is done reading it;
 * returns NULL (lock released) when out of memory or when the algorithm cannot build it.
 */
gcl_shape_t *gcl_shape_acquire(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a);
void gcl_shape_release(struct gcl_comm *c);
void gcl_shapes_free(struct gcl_instance *inst);

#endif /* GCL_SIMSHAPE_H */
