/*
 * The inside of a topology, shared by the builder (topology.c), the file parser
 * (topology_parse.c) and the link cost model (cost.c). Not part of the API.
 */
#ifndef SIM_TOPOLOGY_SPEC_H
#define SIM_TOPOLOGY_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "sim/ipu_cost.h"
#include "sim/topology.h"

#define SIM_TOPO_NAME_MAX  64
#define SIM_TOPO_MAX_COUNT 16 /* IPU-Links bonded into one edge, GW ports per gateway */

enum sim_wiring { SIM_WIRING_LADDER, SIM_WIRING_RING, SIM_WIRING_FULL, SIM_WIRING_NONE };

/* An explicit "link A B COUNT" line of a topology file. */
struct sim_topo_link_spec {
    int a, b, count;
    int line; /* line of the file, for error messages */
};

/* Everything a topology is built from; presets fill it from constants, the parser from a file. */
struct sim_topo_spec {
    char name[SIM_TOPO_NAME_MAX];
    const char *origin; /* the file path or preset name that error messages start with */
    int num_ipus;
    int ild_size;
    enum sim_wiring wiring;
    int ipus_per_gateway;
    int gwlinks_per_gateway;
    uint64_t ipulink_bandwidth, gwlink_bandwidth;
    sim_time_t ipulink_latency, gwlink_latency, sync_latency, gw_sync_latency;
    const struct sim_topo_link_spec *links;
    size_t num_links;
    sim_cost_params_t cost; /* the IPU cost model and host feed constants (sim/params.h) */
};

struct sim_link {
    int from, to;
    sim_link_kind_t kind;
    uint64_t bandwidth;
    sim_time_t latency;
};

struct sim_topology {
    char name[SIM_TOPO_NAME_MAX];
    int num_ipus, ild_size, num_ilds, num_gateways, num_nodes;
    int ipus_per_gateway, gwlinks_per_gateway;
    enum sim_wiring wiring;
    uint64_t ipulink_bandwidth, gwlink_bandwidth;
    sim_time_t ipulink_latency, gwlink_latency, sync_latency, gw_sync_latency;
    sim_cost_params_t cost;
    struct sim_link *links; /* 2 * edges directed links; 2e and 2e+1 are the two directions */
    int num_links;
    int *adj_start; /* CSR: out-links of node u are adj[adj_start[u] .. adj_start[u+1]) */
    int *adj;       /* sorted by the neighbour's id */
    int32_t *next;  /* next[u * num_ipus + d]: link out of node u towards IPU d, or -1 */
    int diameter;
};

/* Fills S with the GC200 IPU-POD numbers (sources in topology.c) and no IPUs. */
void sim_topo_spec_defaults(struct sim_topo_spec *s);

/* Fills S with preset NAME (not built). Returns 0 or -EINVAL with the presets in ERR. */
int sim_topo_preset_spec(const char *name, struct sim_topo_spec *s, char *err, size_t errlen);

/* SPEC is "BASE,KEY=VALUE,...": a preset or file, then settings that replace its values
 * (topology-file keys other than name, ipus, ild_size, wiring and link). Builds the result. */
int sim_topo_open_overrides(const char *spec, sim_topology_t **out, char *err, size_t errlen);

/* Validates S and builds the topology. Returns 0, -EINVAL with a one-line reason in ERR (starting
 * with S->origin, and the line when one is to blame), or -ENOMEM. */
int sim_topo_build(const struct sim_topo_spec *s, sim_topology_t **out, char *err, size_t errlen);

const char *sim_wiring_name(enum sim_wiring w);
/* Returns 0 and sets OUT when WORD names a wiring, else -EINVAL. */
int sim_wiring_parse(const char *word, enum sim_wiring *out);

/* The link out of node U on the route to IPU DST (U != DST). Callers have checked ranges. */
static inline int sim_topo_next(const struct sim_topology *t, int u, int dst)
{
    return t->next[(size_t)u * (size_t)t->num_ipus + (size_t)dst];
}

#endif /* SIM_TOPOLOGY_SPEC_H */
