/*
 * Building a topology from a spec (topology_build.h): validate it, lay out the edges (ILD
 * wiring, explicit links, gateways and GW-Links) in their final order, and hand them to the
 * container (sim_topology_create), which indexes them and computes every route.
 */
#include "topology/topology_build.h"

#include <errno.h>
#include <stdlib.h>

#include "base/text.h"

struct edge {
    int a, b; /* a < b */
    sim_link_kind_t kind;
    uint64_t bandwidth;
    sim_time_t latency;
    int line; /* > 0 for a "link" line of a file, 0 for wiring and gateways */
};

struct edges {
    struct edge *v;
    size_t n, cap;
};

static int edges_add(struct edges *e, int a, int b, sim_link_kind_t kind, uint64_t bw,
                     sim_time_t lat, int line)
{
    if (e->n == e->cap) {
        size_t cap = e->cap ? e->cap * 2 : 256;
        struct edge *v = realloc(e->v, cap * sizeof(*v));

        if (v == NULL)
            return -ENOMEM;
        e->v = v;
        e->cap = cap;
    }
    e->v[e->n++] = (struct edge){
        .a = a < b ? a : b,
        .b = a < b ? b : a,
        .kind = kind,
        .bandwidth = bw,
        .latency = lat,
        .line = line,
    };
    return 0;
}

/* Local index of the IPU at column C, rung R of a ladder (the snake numbering of topology.h). */
static int ladder_index(int c, int r)
{
    int j = (r % 2 == 0) ? c : 1 - c;

    return 2 * r + j;
}

static int add_ladder(struct edges *e, const struct sim_topo_spec *s, int base)
{
    int rungs = s->ild_size / 2;
    int rc = 0;

    for (int r = 0; r < rungs && rc == 0; r++)
        rc = edges_add(e, base + ladder_index(0, r), base + ladder_index(1, r), SIM_LINK_IPU,
                       s->ipulink_bandwidth, s->ipulink_latency, 0);
    for (int c = 0; c < 2 && rc == 0; c++) {
        for (int r = 0; r + 1 < rungs && rc == 0; r++)
            rc = edges_add(e, base + ladder_index(c, r), base + ladder_index(c, r + 1),
                           SIM_LINK_IPU, s->ipulink_bandwidth, s->ipulink_latency, 0);
        /* The torus wrap; with 2 rungs it would repeat the column link just added. */
        if (rungs > 2 && rc == 0)
            rc = edges_add(e, base + ladder_index(c, rungs - 1), base + ladder_index(c, 0),
                           SIM_LINK_IPU, s->ipulink_bandwidth, s->ipulink_latency, 0);
    }
    return rc;
}

static int add_wiring(struct edges *e, const struct sim_topo_spec *s, int base)
{
    int k = s->ild_size;
    int rc = 0;

    switch (s->wiring) {
    case SIM_WIRING_LADDER:
        return add_ladder(e, s, base);
    case SIM_WIRING_RING:
        /* A ring of 2 is a single link (i+1 would wrap onto the same pair); of 1, no link. */
        if (k == 2)
            return edges_add(e, base, base + 1, SIM_LINK_IPU, s->ipulink_bandwidth,
                             s->ipulink_latency, 0);
        for (int i = 0; i < k && k > 2 && rc == 0; i++)
            rc = edges_add(e, base + i, base + (i + 1) % k, SIM_LINK_IPU, s->ipulink_bandwidth,
                           s->ipulink_latency, 0);
        return rc;
    case SIM_WIRING_FULL:
        for (int i = 0; i < k && rc == 0; i++)
            for (int j = i + 1; j < k && rc == 0; j++)
                rc = edges_add(e, base + i, base + j, SIM_LINK_IPU, s->ipulink_bandwidth,
                               s->ipulink_latency, 0);
        return rc;
    case SIM_WIRING_NONE:
        break;
    }
    return 0;
}

/* Gateway g (0-based) of ILD d, position m, is node num_ipus + d * per_ild + m. Each IPU's hop
 * to its gateway runs at the cost model's gateway_ipu_bandwidth (its PCIe link, one way). The
 * rate at which a whole domain sends to the others (gateway_domain_gbs) is not a link here: the
 * program that reduces across domains charges it (sim-step; docs/validation.md). */
static int add_gateways(struct edges *e, const struct sim_topo_spec *s, int ilds)
{
    int per_ild = s->ild_size / s->ipus_per_gateway;
    int rc = 0;

    for (int i = 0; i < s->num_ipus && rc == 0; i++)
        rc = edges_add(e, i, s->num_ipus + i / s->ipus_per_gateway, SIM_LINK_GW_ATTACH,
                       s->cost.gateway_ipu_bandwidth, s->ipulink_latency, 0);
    for (int d = 0; d < ilds && rc == 0; d++) {
        /* Two ILDs: every port goes to the one neighbour. A ring of ILDs: half to each side. */
        int next = (d + 1) % ilds;
        int ports = ilds == 2 ? s->gwlinks_per_gateway : s->gwlinks_per_gateway / 2;

        if (ilds == 2 && d == 1)
            break;
        if (ports < 1)
            ports = 1;
        for (int m = 0; m < per_ild && rc == 0; m++)
            rc =
                edges_add(e, s->num_ipus + d * per_ild + m, s->num_ipus + next * per_ild + m,
                          SIM_LINK_GW, (uint64_t)ports * s->gwlink_bandwidth, s->gwlink_latency, 0);
    }
    return rc;
}

static int check_link_spec(const struct sim_topo_spec *s, const struct sim_topo_link_spec *l,
                           char *err, size_t errlen)
{
    if (l->a < 0 || l->a >= s->num_ipus || l->b < 0 || l->b >= s->num_ipus) {
        sim_errf(err, errlen, "%s:%d: link %d %d names an IPU outside 0..%d", s->origin, l->line,
                 l->a, l->b, s->num_ipus - 1);
        return -EINVAL;
    }
    if (l->a == l->b) {
        sim_errf(err, errlen, "%s:%d: link %d %d joins an IPU to itself", s->origin, l->line, l->a,
                 l->b);
        return -EINVAL;
    }
    if (l->a / s->ild_size != l->b / s->ild_size) {
        sim_errf(err, errlen,
                 "%s:%d: link %d %d joins two ILDs; IPU-Links stay inside an ILD of %d IPUs "
                 "and ILDs are joined by GW-Links",
                 s->origin, l->line, l->a, l->b, s->ild_size);
        return -EINVAL;
    }
    return 0;
}

static int edge_cmp(const void *x, const void *y)
{
    const struct edge *p = x, *q = y;

    if (p->a != q->a)
        return p->a < q->a ? -1 : 1;
    if (p->b != q->b)
        return p->b < q->b ? -1 : 1;
    return (p->line > q->line) - (p->line < q->line);
}

/* Sorts the edges into their final order (their ids) and rejects a pair joined twice. */
static int sort_and_check_duplicates(struct edges *e, const char *origin, char *err, size_t errlen)
{
    if (e->n < 2)
        return 0; /* nothing to order, and qsort must not see a NULL array */
    qsort(e->v, e->n, sizeof(*e->v), edge_cmp);
    for (size_t i = 1; i < e->n; i++) {
        const struct edge *p = &e->v[i - 1], *q = &e->v[i];

        if (p->a != q->a || p->b != q->b)
            continue;
        if (p->line > 0)
            sim_errf(err, errlen, "%s:%d: link %d %d repeats the link of line %d", origin, q->line,
                     q->a, q->b, p->line);
        else if (q->line > 0)
            sim_errf(err, errlen, "%s:%d: link %d %d is already part of the ILD wiring", origin,
                     q->line, q->a, q->b);
        else
            sim_errf(err, errlen, "%s: the wiring joins IPUs %d and %d twice", origin, q->a, q->b);
        return -EINVAL;
    }
    return 0;
}

static int check_spec(const struct sim_topo_spec *s, char *err, size_t errlen)
{
    const char *o = s->origin;

    if (s->num_ipus < 1 || s->num_ipus > SIM_TOPOLOGY_MAX_IPUS) {
        sim_errf(err, errlen, "%s: ipus must be 1..%d (got %d)", o, SIM_TOPOLOGY_MAX_IPUS,
                 s->num_ipus);
        return -EINVAL;
    }
    if (s->ild_size < 1 || s->num_ipus % s->ild_size != 0) {
        sim_errf(err, errlen, "%s: ild_size %d does not divide ipus %d", o, s->ild_size,
                 s->num_ipus);
        return -EINVAL;
    }
    if (s->wiring == SIM_WIRING_LADDER && s->ild_size % 4 != 0) {
        sim_errf(err, errlen,
                 "%s: wiring ladder needs ild_size to be a multiple of 4 (got %d); "
                 "use wiring ring, full or none",
                 o, s->ild_size);
        return -EINVAL;
    }
    if (s->wiring == SIM_WIRING_FULL && s->ild_size > 64) {
        sim_errf(err, errlen, "%s: wiring full allows at most 64 IPUs per ILD (got %d)", o,
                 s->ild_size);
        return -EINVAL;
    }
    if (s->num_ipus > s->ild_size &&
        (s->ipus_per_gateway < 1 || s->ild_size % s->ipus_per_gateway != 0)) {
        sim_errf(err, errlen, "%s: ipus_per_gateway %d does not divide ild_size %d", o,
                 s->ipus_per_gateway, s->ild_size);
        return -EINVAL;
    }
    if (s->ipulink_bandwidth == 0 || s->gwlink_bandwidth == 0 || s->gwlinks_per_gateway < 1) {
        sim_errf(err, errlen, "%s: link bandwidths and gateway ports must be positive", o);
        return -EINVAL;
    }
    for (size_t i = 0; i < s->num_links; i++)
        if (check_link_spec(s, &s->links[i], err, errlen) != 0)
            return -EINVAL;
    return 0;
}

static int collect_edges(const struct sim_topo_spec *s, struct edges *e, char *err, size_t errlen)
{
    int ilds = s->num_ipus / s->ild_size;
    int rc = 0;

    for (int d = 0; d < ilds && rc == 0; d++)
        rc = add_wiring(e, s, d * s->ild_size);
    for (size_t i = 0; i < s->num_links && rc == 0; i++) {
        const struct sim_topo_link_spec *l = &s->links[i];

        rc = edges_add(e, l->a, l->b, SIM_LINK_IPU, (uint64_t)l->count * s->ipulink_bandwidth,
                       s->ipulink_latency, l->line);
    }
    if (rc == 0 && ilds > 1)
        rc = add_gateways(e, s, ilds);
    if (rc == 0)
        rc = sort_and_check_duplicates(e, s->origin, err, errlen);
    else
        sim_errf(err, errlen, "%s: out of memory", s->origin);
    return rc;
}

int sim_topo_build(const struct sim_topo_spec *s, sim_topology_t **out, char *err, size_t errlen)
{
    struct edges e = {0};
    sim_link_info_t *links = NULL;
    int ilds, rc;

    *out = NULL;
    rc = check_spec(s, err, errlen);
    if (rc != 0)
        return rc;
    rc = collect_edges(s, &e, err, errlen);
    if (rc == 0 && !(links = malloc((e.n ? e.n : 1) * sizeof(*links)))) {
        sim_errf(err, errlen, "%s: out of memory", s->origin);
        rc = -ENOMEM;
    }
    ilds = s->num_ipus / s->ild_size;
    for (size_t i = 0; rc == 0 && i < e.n; i++)
        links[i] =
            (sim_link_info_t){e.v[i].a, e.v[i].b, e.v[i].kind, e.v[i].bandwidth, e.v[i].latency};
    if (rc == 0) {
        sim_topology_desc_t d = {
            .name = s->name,
            .origin = s->origin,
            .num_ipus = s->num_ipus,
            .num_gateways = ilds > 1 ? s->num_ipus / s->ipus_per_gateway : 0,
            .params = {.ild_size = s->ild_size,
                       .ipus_per_gateway = s->ipus_per_gateway,
                       .gwlinks_per_gateway = s->gwlinks_per_gateway,
                       .wiring = sim_wiring_name(s->wiring),
                       .ipulink_bandwidth = s->ipulink_bandwidth,
                       .ipulink_latency = s->ipulink_latency,
                       .gwlink_bandwidth = s->gwlink_bandwidth,
                       .gwlink_latency = s->gwlink_latency,
                       .sync_latency = s->sync_latency,
                       .gw_sync_latency = s->gw_sync_latency},
            .cost = s->cost,
        };

        rc = sim_topology_create(&d, links, e.n, out, err, errlen);
    }
    free(links);
    free(e.v);
    return rc;
}
