/*
 * The bridge to sim's topologies (sim/include/sim/topology/topology.h): --topology and the default.
 */
#ifndef POPRUN_TOPO_H
#define POPRUN_TOPO_H

#include <stddef.h>

#include "plan/plan.h"

/* Opens SPEC (a preset name or a topology file) through sim, or, when SPEC is NULL, the smallest
 * preset that holds NUM_REPLICAS x IPUS_PER_REPLICA IPUs, and fills T. *INSTANCE_SPEC gets what
 * the instances are told in POPDIST_TOPOLOGY: the preset's name, or the file's absolute path
 * (the caller frees it). Returns 0, or -1 with one line in ERR. */
int topo_resolve(const char *spec, int num_replicas, int ipus_per_replica, struct plan_topology *t,
                 char **instance_spec, char *err, size_t errlen);

#endif /* POPRUN_TOPO_H */
