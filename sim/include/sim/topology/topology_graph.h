/*
 * A built topology: its nodes (IPUs, then IPU-Gateways), its directed links and the route
 * between every two IPUs. It is immutable once built and may be shared between threads. This
 * is the container; sim/topology/topology.h builds one from a preset, a file or overrides (and explains
 * the graph, the numbering, the routes and the presets).
 *
 * Links. Every cable is full duplex and appears as two directed links, each with its own
 * bandwidth (bytes/s) and latency and its own queue: link 2e carries edge e from its
 * lower-numbered end to its higher, link 2e+1 the other way.
 *
 * Routes. A route is the path of least total latency, ties broken by fewer hops and then by the
 * lowest-numbered next node, so every route is a fixed, documented function of the topology.
 * Routes are computed once, by sim_topology_create(): for every destination IPU a Dijkstra over
 * the whole graph (links are symmetric, so distances to the destination equal distances from it)
 * with the key (total latency, hops); each node's next hop towards that destination is its
 * lowest-numbered neighbour on such a shortest path. A route query later is a walk along that
 * next-hop table with no search.
 */
#ifndef SIM_TOPOLOGY_GRAPH_H
#define SIM_TOPOLOGY_GRAPH_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device/device.h"
#include "sim/device/params.h"
#include "sim/base/time.h"

typedef struct sim_topology sim_topology_t;

/* Largest IPU count a topology file may declare, and the longest route a topology may have. */
#define SIM_TOPOLOGY_MAX_IPUS 1024
#define SIM_ROUTE_MAX_HOPS    256

typedef enum sim_link_kind {
    SIM_LINK_IPU = 0,       /* IPU-Link between two IPUs of one ILD */
    SIM_LINK_GW_ATTACH = 1, /* IPU-Link between an IPU and its IPU-M2000's gateway */
    SIM_LINK_GW = 2,        /* GW-Link between the gateways of two ILDs */
} sim_link_kind_t;

typedef struct sim_link_info {
    int from, to; /* node ids (IPUs first, then gateways) */
    sim_link_kind_t kind;
    uint64_t bandwidth; /* bytes/s in this direction */
    sim_time_t latency; /* ps for the first byte to cross */
} sim_link_info_t;

typedef struct sim_route {
    int src, dst;          /* IPU ids */
    int hops;              /* links crossed; 0 when src == dst */
    int gw_hops;           /* of which GW-Links */
    sim_time_t latency;    /* sum of the links' latencies */
    uint64_t bandwidth;    /* the smallest bandwidth on the route; UINT64_MAX when hops == 0 */
    uint64_t gw_bandwidth; /* the smallest GW-Link bandwidth on it; UINT64_MAX if none */
    int links[SIM_ROUTE_MAX_HOPS]; /* directed link ids, in order from src */
} sim_route_t;

/* The parameters a topology was built from (the preset's numbers or the file's). */
typedef struct sim_topology_params {
    int ild_size;               /* IPUs per ILD */
    int ipus_per_gateway;       /* IPUs per IPU-M2000 (per gateway) */
    int gwlinks_per_gateway;    /* GW-Link ports of a gateway */
    const char *wiring;         /* "ladder", "ring", "full" or "none": links inside an ILD */
    uint64_t ipulink_bandwidth; /* bytes/s per direction of one IPU-Link */
    sim_time_t ipulink_latency; /* ps per IPU-Link hop */
    uint64_t gwlink_bandwidth;  /* bytes/s per direction of one GW-Link port */
    sim_time_t gwlink_latency;  /* ps per GW-Link hop */
    sim_time_t sync_latency;    /* ps of a synchronisation inside one ILD */
    sim_time_t gw_sync_latency; /* ps added when a synchronisation spans ILDs */
} sim_topology_params_t;

/* The IPU cost model's and host feed's constants of the pod (sim/cost/ipu_cost.h, sim/device/params.h):
 * the defaults, or what the file or the overrides set. */
const sim_cost_params_t *sim_topology_cost(const sim_topology_t *t);

const char *sim_topology_name(const sim_topology_t *t);
int sim_topology_num_ipus(const sim_topology_t *t);
int sim_topology_num_ilds(const sim_topology_t *t);
/* The ILD that holds IPU (0-based), or -1 when IPU is out of range. */
int sim_topology_ild_of(const sim_topology_t *t, int ipu);

void sim_topology_free(sim_topology_t *t);

/* Nodes (IPUs then gateways) and directed links. */
int sim_topology_num_nodes(const sim_topology_t *t);
int sim_topology_num_links(const sim_topology_t *t);
/* The longest route, in hops, between any two IPUs. */
int sim_topology_diameter(const sim_topology_t *t);

/* Fills OUT with directed link ID. Returns 0, or -EINVAL when ID is out of range. */
int sim_topology_link(const sim_topology_t *t, int id, sim_link_info_t *out);

/* Fills OUT with the route from IPU SRC to IPU DST. Returns 0, or -EINVAL when either is out of
 * range. */
int sim_topology_route(const sim_topology_t *t, int src, int dst, sim_route_t *out);

/* Links on the route from SRC to DST, or -1 when either is out of range. */
int sim_topology_hops(const sim_topology_t *t, int src, int dst);

/* The directed link that joins node A to node B directly, or -1 when there is none. */
int sim_topology_find_link(const sim_topology_t *t, int a, int b);

void sim_topology_get_params(const sim_topology_t *t, sim_topology_params_t *out);

/* The device model of every IPU of the topology (the GC200 today). */
const sim_device_t *sim_topology_device(const sim_topology_t *t);

/* A one-line human description ("POD64: 64 IPUs, 1 ILD of 64 (ladder, 32 rungs), IPU-Link ...").
 * Returns what snprintf returns. */
int sim_topology_describe(const sim_topology_t *t, char *buf, size_t len);

/* ---- Construction (sim/src/topology/topology_build.c lays out the edges of a spec). ---- */

/* What a topology is, apart from its links. */
typedef struct sim_topology_desc {
    const char *name;   /* copied (at most 63 characters kept) */
    const char *origin; /* the file path or preset name that error messages start with */
    int num_ipus, num_gateways;
    sim_topology_params_t params; /* params.wiring must be a string of static storage */
    sim_cost_params_t cost;
} sim_topology_desc_t;

/* Builds the topology of DESC with the N undirected EDGES (from < to, sorted by (from, to), no
 * pair twice; nodes are IPUs 0..num_ipus-1, then gateways): edge i becomes directed links 2i
 * (from -> to) and 2i+1 (to -> from). Computes every route (see the top). Returns 0; -EINVAL
 * with a one-line reason in ERR when an IPU cannot reach another or a route is longer than
 * SIM_ROUTE_MAX_HOPS; -ENOMEM. */
int sim_topology_create(const sim_topology_desc_t *desc, const sim_link_info_t *edges, size_t n,
                        sim_topology_t **out, char *err, size_t errlen);

/* The directed links, [sim_topology_num_links(t)], in id order. */
const sim_link_info_t *sim_topology_links(const sim_topology_t *t);

/* The link out of node NODE on the route to IPU DST (NODE != DST); the caller checks ranges. */
int sim_topology_next_link(const sim_topology_t *t, int node, int dst);

#endif /* SIM_TOPOLOGY_GRAPH_H */
