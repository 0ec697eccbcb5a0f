/*
 * Topology specs: the GC200 IPU-POD link numbers, the presets and the wirings (topology_spec.h).
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
#include "topology/topology_spec.h"

#include <errno.h>
#include <string.h>
#include <strings.h>

#include "base/text.h"

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
    sim_cost_params_default(&s->cost);        /* sim/src/device/params.c */
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

int sim_topo_is_preset(const char *name)
{
    return find_preset(name) != NULL;
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

const char *sim_topo_smallest_preset(int num_ipus)
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
