/*
 * Building a topology from a spec (topology_spec.h). Not part of the API.
 */
#ifndef SIM_TOPOLOGY_BUILD_H
#define SIM_TOPOLOGY_BUILD_H

#include <stddef.h>

#include "sim/topology/topology_graph.h"
#include "topology/topology_spec.h"

/* Validates S and builds the topology. Returns 0, -EINVAL with a one-line reason in ERR (starting
 * with S->origin, and the line when one is to blame), or -ENOMEM. */
int sim_topo_build(const struct sim_topo_spec *s, sim_topology_t **out, char *err, size_t errlen);

#endif /* SIM_TOPOLOGY_BUILD_H */
