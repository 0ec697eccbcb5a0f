/*
 * What a topology is built from (a spec), the presets and the wirings inside an ILD: shared by
 * the front (topology.c), the file parser (topology_parse.c) and the builder (topology_build.c).
 * Not part of the API.
 */
#ifndef SIM_TOPOLOGY_SPEC_H
#define SIM_TOPOLOGY_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device/params.h"
#include "sim/base/time.h"

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
    sim_cost_params_t cost; /* the IPU cost model and host feed constants (sim/device/params.h) */
};

/* Fills S with the GC200 IPU-POD numbers (sources in topology_spec.c) and no IPUs. */
void sim_topo_spec_defaults(struct sim_topo_spec *s);

/* Fills S with preset NAME (not built). Returns 0 or -EINVAL with the presets in ERR. */
int sim_topo_preset_spec(const char *name, struct sim_topo_spec *s, char *err, size_t errlen);

/* Whether NAME is a preset (Graphcore's spellings "IPU-POD64", "POD4" too). */
int sim_topo_is_preset(const char *name);

/* The smallest preset that holds NUM_IPUS IPUs, or NULL (NUM_IPUS < 1 or above 256). */
const char *sim_topo_smallest_preset(int num_ipus);

/* "ladder", "ring", "full" or "none" (static storage). */
const char *sim_wiring_name(enum sim_wiring w);
/* Returns 0 and sets OUT when WORD names a wiring, else -EINVAL. */
int sim_wiring_parse(const char *word, enum sim_wiring *out);

#endif /* SIM_TOPOLOGY_SPEC_H */
