/*
 * The instance's caches around the choice layer (choice/): call shapes, automatic choices and
 * replayed outcomes, shared by the instance's IPU threads. Everything in them is a pure
 * function of its key, so a cache only saves work: which thread computes an entry, and when,
 * never changes a result. The lock is held to look up and insert, never while a shape is built,
 * a choice evaluated or a timeline replayed; a communicator's last choice is kept on the
 * communicator (api/comm.h) so that a call of the same shape takes no lock at all.
 */
#ifndef GCL_SIMCACHE_H
#define GCL_SIMCACHE_H

#include <stddef.h>

#include "choice/shape.h"
#include "gcl/status.h"
#include "sim/base/time.h"
#include "sim/topology/topology.h"

typedef struct gcl_simcache gcl_simcache_t;

gcl_status_t gcl_simcache_create(gcl_simcache_t **out);
void gcl_simcache_destroy(gcl_simcache_t *c);

/* The shape of ALGO's call A over IPUS on T, built on first use. Hold it until
 * gcl_simcache_release; NULL when out of memory or when ALGO cannot build the call. */
const choice_shape_t *gcl_simcache_shape(gcl_simcache_t *c, const sim_topology_t *t,
                                         const coll_algo_t *algo, const coll_args_t *a,
                                         const int *ipus);
void gcl_simcache_release(gcl_simcache_t *c, const choice_shape_t *sh);

/* The automatic choice for A over IPUS on T (choice/choose.h), with a sentence in WHY; NULL
 * (and WHY saying why) when out of memory or when no algorithm can run the call. */
const coll_algo_t *gcl_simcache_choose(gcl_simcache_t *c, const sim_topology_t *t,
                                       const coll_args_t *a, const int *ipus, char *why,
                                       size_t len);

/* Rank RANK's idle and exchange time in ALGO's call A over IPUS, replayed from the ranks'
 * entry clocks ENTRY. Replays depend only on the clocks' offsets from the earliest, so the
 * ranks of one call (and later calls with the same offsets) share one. */
gcl_status_t gcl_simcache_replay(gcl_simcache_t *c, const sim_topology_t *t,
                                 const coll_algo_t *algo, const coll_args_t *a, const int *ipus,
                                 const sim_time_t *entry, int rank, sim_time_t *idle,
                                 sim_time_t *exch);

#endif /* GCL_SIMCACHE_H */
