/*
 * The topology file parser and the overrides of a preset or file (format in sim/topology/topology.h and
 * sim/README.md). Not part of the API: sim/topology/topology.h's sim_topology_load and sim_topology_open
 * call these.
 */
#ifndef SIM_TOPOLOGY_PARSE_H
#define SIM_TOPOLOGY_PARSE_H

#include <stddef.h>

#include "sim/topology/topology_graph.h"

/* Parses and builds the topology file at PATH. Returns 0, or a negative errno with a one-line
 * reason naming the file and line in ERR. */
int sim_topo_parse_file(const char *path, sim_topology_t **out, char *err, size_t errlen);

/* SPEC is "BASE,KEY=VALUE,...": a preset or file, then settings that replace its values
 * (topology-file keys other than name, ipus, ild_size, wiring and link). Builds the result. */
int sim_topo_parse_overrides(const char *spec, sim_topology_t **out, char *err, size_t errlen);

#endif /* SIM_TOPOLOGY_PARSE_H */
