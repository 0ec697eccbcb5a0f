/*
 * Host-direct collectives: all_reduce, reduce_scatter and all_gather over a group whose ranks
 * all share this host, done straight in memory instead of by messages (direct.c; the data
 * movement is direct_move.c).
 */
#ifndef GCL_DIRECT_H
#define GCL_DIRECT_H

#include "engine/exec.h"

extern const gcl_engine_t gcl_engine_direct;

/* Whether a call of COLL with BYTES per replica over PEERS may run host-direct. */
int gcl_direct_eligible(const gcl_peers_t *peers, coll_collective_t coll, size_t bytes);
/* Sets X (started on PEERS) up to run host-direct the call A. */
gcl_status_t gcl_direct_setup(gcl_exec_t *x, const coll_args_t *a);

#endif /* GCL_DIRECT_H */
