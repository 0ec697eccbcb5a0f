/*
 * Topology presets, the GC200 IPU-POD link numbers, and the queries of sim/topology.h.
 *
 * Sources of the link numbers (see also sim/README.md):
 *   [M2000]  Graphcore, "IPU-M2000 datasheet" and "Bow-2000 datasheet" (docs.graphcore.ai):
 *            4 GC200 IPUs and one IPU-Gateway per machine; "IPU-Link 512 Gbps for communication
 *            within pods" (64 GB/s per link both ways together, i.e. 32 GB/s per direction,
 *            which matches 10 IPU-Links at 320 GB/s per GC200); "GW-Link 2x 100 Gbps
 *            Gateway-Links for communication between pods".
 *   [POD]    Graphcore, "IPU-POD64 / IPU-POD128 datasheets" and "Getting started with IPU-POD
 *            systems": POD16 = 4 IPU-M2000s, POD64 = 16 IPU-M2000s with a 2D-torus IPU-Link
 *            topology, POD128 and POD256 = 2 and 4 IPU-POD64 racks joined by GW-Links.
 * Latencies are not published as datasheet numbers and are assumed (marked below). Jia et al.,
 * "Dissecting the Graphcore IPU Architecture via Microbenchmarking" (arXiv:1912.03413) measured
 * Mk1 IPU-Link latencies of the order of a microsecond under load; we take 500 ns per hop.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "sim_internal.h"
#include "topology_spec.h"

void sim_topo_spec_defaults(struct sim_topo_spec *s)
{
    memset(s, 0, sizeof(*s));
    s->origin = "topology";
    s->wiring = SIM_WIRING_LADDER;
    s->ipus_per_gateway = 4;                  /* [M2000]: one gateway per 4 IPUs */
    s->gwlinks_per_gateway = 2;               /* [M2000]: 2 GW-Link ports */
    s->ipulink_bandwidth = 32000000000ULL;    /* [M2000]: 512 Gb/s = 2 x 32 GB/s per link;
                                                 assumed one link per edge (32..128 GB/s) */
    s->ipulink_latency = 500 * SIM_PS_PER_NS; /* assumed (see above), 200..2000 ns */
    s->gwlink_bandwidth = 12500000000ULL;     /* [M2000]: 100 Gb/s per port */
    s->gwlink_latency = 3 * SIM_PS_PER_US;    /* assumed: a 100 GbE RoCE hop, 1..10 us */
    s->sync_latency = 1 * SIM_PS_PER_US;      /* assumed: Sync-Link BSP in one ILD, 0.3..3 us */
    s->gw_sync_latency = 5 * SIM_PS_PER_US;   /* assumed: sync over GW-Links, 2..20 us */
    sim_cost_params_default(&s->cost);        /* sim/src/params.c */
}

/* All presets are ladders of IPU-M2000s (2 rungs each); [POD] for the sizes. The M2000 itself is
 * a ladder of 2 rungs, i.e. a ring of 4: Graphcore does not publish the in-box wiring in detail,
 * so treating the box as two rungs of the pod ladder is our assumption. */
static const struct preset {
    const char *name;
    int ipus, ild_size;
} presets[] = {
    {"M2000", 4, 4}, {"POD16", 16, 16}, {"POD64", 64, 64}, {"POD128", 128, 64}, {"POD256", 256, 64},
};

#define NUM_PRESETS (int)(sizeof(presets) / sizeof(presets[0]))

static const struct preset *find_preset(const char *name)
{
    if (name == NULL)
        return NULL;
    /* Graphcore's own spellings ("IPU-POD64", "IPU-M2000", "POD4") are accepted too. */
    if (strncasecmp(name, "IPU-", 4) == 0)
        name += 4;
    if (strcasecmp(name, "POD4") == 0)
        name = "M2000";
    for (int i = 0; i < NUM_PRESETS; i++)
        if (strcasecmp(name, presets[i].name) == 0)
            return &presets[i];
    return NULL;
}

int sim_topo_preset_spec(const char *name, struct sim_topo_spec *s, char *err, size_t errlen)
{
    const struct preset *p = find_preset(name);

    if (p == NULL) {
        sim_errf(err, errlen,
                 "unknown topology preset '%s' (presets: M2000, POD16, POD64, POD128, POD256)",
                 name ? name : "(null)");
        return -EINVAL;
    }
    sim_topo_spec_defaults(s);
    sim_strlcpy(s->name, p->name, sizeof(s->name));
    s->origin = p->name;
    s->num_ipus = p->ipus;
    s->ild_size = p->ild_size;
    return 0;
}

int sim_topology_preset(const char *name, sim_topology_t **out, char *err, size_t errlen)
{
    struct sim_topo_spec s;
    int rc = sim_topo_preset_spec(name, &s, err, errlen);

    *out = NULL;
    return rc != 0 ? rc : sim_topo_build(&s, out, err, errlen);
}

int sim_topology_open(const char *spec, sim_topology_t **out, char *err, size_t errlen)
{
    int rc;

    *out = NULL;
    if (spec == NULL || spec[0] == '\0') {
        sim_errf(err, errlen, "empty topology: give a preset name or a topology file");
        return -EINVAL;
    }
    if (strchr(spec, ',') != NULL)
        return sim_topo_open_overrides(spec, out, err, errlen);
    if (find_preset(spec) != NULL)
        return sim_topology_preset(spec, out, err, errlen);
    rc = sim_topology_load(spec, out, err, errlen);
    if (rc == -ENOENT)
        sim_errf(err, errlen,
                 "unknown topology '%s': not a preset (M2000, POD16, POD64, POD128, POD256) "
                 "and no such file",
                 spec);
    return rc;
}

const sim_cost_params_t *sim_topology_cost(const sim_topology_t *t)
{
    return &t->cost;
}

const char *sim_topology_smallest_preset(int num_ipus)
{
    if (num_ipus < 1)
        return NULL;
    for (int i = 0; i < NUM_PRESETS; i++)
        if (num_ipus <= presets[i].ipus)
            return presets[i].name;
    return NULL;
}

const char *sim_wiring_name(enum sim_wiring w)
{
    switch (w) {
    case SIM_WIRING_LADDER:
        return "ladder";
    case SIM_WIRING_RING:
        return "ring";
    case SIM_WIRING_FULL:
        return "full";
    case SIM_WIRING_NONE:
        break;
    }
    return "none";
}

int sim_wiring_parse(const char *word, enum sim_wiring *out)
{
    static const enum sim_wiring all[] = {SIM_WIRING_LADDER, SIM_WIRING_RING, SIM_WIRING_FULL,
                                          SIM_WIRING_NONE};

    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(word, sim_wiring_name(all[i])) == 0) {
            *out = all[i];
            return 0;
        }
    }
    return -EINVAL;
}

const char *sim_topology_name(const sim_topology_t *t)
{
    return t->name;
}

int sim_topology_num_ipus(const sim_topology_t *t)
{
    return t->num_ipus;
}

int sim_topology_num_ilds(const sim_topology_t *t)
{
    return t->num_ilds;
}

int sim_topology_ild_of(const sim_topology_t *t, int ipu)
{
    if (ipu < 0 || ipu >= t->num_ipus)
        return -1;
    return ipu / t->ild_size;
}

void sim_topology_free(sim_topology_t *t)
{
    if (t == NULL)
        return;
    free(t->next);
    free(t->adj);
    free(t->adj_start);
    free(t->links);
    free(t);
}

int sim_topology_num_nodes(const sim_topology_t *t)
{
    return t->num_nodes;
}

int sim_topology_num_links(const sim_topology_t *t)
{
    return t->num_links;
}

int sim_topology_diameter(const sim_topology_t *t)
{
    return t->diameter;
}

int sim_topology_link(const sim_topology_t *t, int id, sim_link_info_t *out)
{
    const struct sim_link *l;

    if (id < 0 || id >= t->num_links)
        return -EINVAL;
    l = &t->links[id];
    *out = (sim_link_info_t){l->from, l->to, l->kind, l->bandwidth, l->latency};
    return 0;
}

int sim_topology_route(const sim_topology_t *t, int src, int dst, sim_route_t *out)
{
    int u = src;

    if (src < 0 || src >= t->num_ipus || dst < 0 || dst >= t->num_ipus)
        return -EINVAL;
    out->src = src;
    out->dst = dst;
    out->hops = 0;
    out->gw_hops = 0;
    out->latency = 0;
    out->bandwidth = UINT64_MAX;
    out->gw_bandwidth = UINT64_MAX;
    while (u != dst && out->hops < SIM_ROUTE_MAX_HOPS) {
        int id = sim_topo_next(t, u, dst);
        const struct sim_link *l = &t->links[id];

        out->links[out->hops++] = id;
        out->latency = sim_time_add(out->latency, l->latency);
        if (l->bandwidth < out->bandwidth)
            out->bandwidth = l->bandwidth;
        if (l->kind == SIM_LINK_GW) {
            out->gw_hops++;
            if (l->bandwidth < out->gw_bandwidth)
                out->gw_bandwidth = l->bandwidth;
        }
        u = l->to;
    }
    return 0;
}

int sim_topology_hops(const sim_topology_t *t, int src, int dst)
{
    int hops = 0;

    if (src < 0 || src >= t->num_ipus || dst < 0 || dst >= t->num_ipus)
        return -1;
    for (int u = src; u != dst; hops++)
        u = t->links[sim_topo_next(t, u, dst)].to;
    return hops;
}

int sim_topology_find_link(const sim_topology_t *t, int a, int b)
{
    if (a < 0 || a >= t->num_nodes || b < 0 || b >= t->num_nodes)
        return -1;
    for (int i = t->adj_start[a]; i < t->adj_start[a + 1]; i++)
        if (t->links[t->adj[i]].to == b)
            return t->adj[i];
    return -1;
}

void sim_topology_get_params(const sim_topology_t *t, sim_topology_params_t *out)
{
    *out = (sim_topology_params_t){
        .ild_size = t->ild_size,
        .ipus_per_gateway = t->ipus_per_gateway,
        .gwlinks_per_gateway = t->gwlinks_per_gateway,
        .wiring = sim_wiring_name(t->wiring),
        .ipulink_bandwidth = t->ipulink_bandwidth,
        .ipulink_latency = t->ipulink_latency,
        .gwlink_bandwidth = t->gwlink_bandwidth,
        .gwlink_latency = t->gwlink_latency,
        .sync_latency = t->sync_latency,
        .gw_sync_latency = t->gw_sync_latency,
    };
}

const sim_device_t *sim_topology_device(const sim_topology_t *t)
{
    (void)t;
    return sim_device_gc200();
}

/* "12.5" for 12.5e9 bytes/s: GB/s with up to 3 decimals, trailing zeros dropped, exact. */
static void format_gbs(uint64_t bytes_per_s, char *buf, size_t len)
{
    uint64_t milli = bytes_per_s / 1000000ULL;

    int decimals = 3;
    uint64_t frac = milli % 1000;

    while (decimals > 0 && frac % 10 == 0) {
        frac /= 10;
        decimals--;
    }
    if (decimals == 0)
        snprintf(buf, len, "%" PRIu64, milli / 1000);
    else
        snprintf(buf, len, "%" PRIu64 ".%0*" PRIu64, milli / 1000, decimals, frac);
}

int sim_topology_describe(const sim_topology_t *t, char *buf, size_t len)
{
    char ipu_bw[32], gw_bw[32];

    format_gbs(t->ipulink_bandwidth, ipu_bw, sizeof(ipu_bw));
    format_gbs(t->gwlink_bandwidth, gw_bw, sizeof(gw_bw));
    if (t->num_ilds == 1)
        return snprintf(buf, len, "%s: %d IPUs, 1 ILD (%s), IPU-Link %s GB/s %" PRIu64 " ns",
                        t->name, t->num_ipus, sim_wiring_name(t->wiring), ipu_bw,
                        t->ipulink_latency / SIM_PS_PER_NS);
    return snprintf(buf, len,
                    "%s: %d IPUs, %d ILDs of %d (%s), IPU-Link %s GB/s %" PRIu64
                    " ns, %d gateways with %d GW-Link ports of %s GB/s %" PRIu64 " ns",
                    t->name, t->num_ipus, t->num_ilds, t->ild_size, sim_wiring_name(t->wiring),
                    ipu_bw, t->ipulink_latency / SIM_PS_PER_NS, t->num_gateways,
                    t->gwlinks_per_gateway, gw_bw, t->gwlink_latency / SIM_PS_PER_NS);
}
