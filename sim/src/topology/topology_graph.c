/*
 * The built topology (sim/topology/topology_graph.h): its links, the CSR adjacency, the next-hop table
 * of every route, and the queries.
 */
#include "sim/topology/topology_graph.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

#define NAME_MAX_CHARS 64

struct sim_topology {
    char name[NAME_MAX_CHARS];
    int num_ipus, num_ilds, num_gateways, num_nodes;
    sim_topology_params_t params;
    sim_cost_params_t cost;
    sim_link_info_t *links; /* 2 * edges directed links; 2e and 2e+1 are the two directions */
    int num_links;
    int *adj_start; /* CSR: out-links of node u are adj[adj_start[u] .. adj_start[u+1]) */
    int *adj;       /* sorted by the neighbour's id */
    int32_t *next;  /* next[u * num_ipus + d]: link out of node u towards IPU d, or -1 */
    int diameter;
};

/* The link out of node U on the route to IPU DST (U != DST). Callers have checked ranges. */
static inline int next_link(const struct sim_topology *t, int u, int dst)
{
    return t->next[(size_t)u * (size_t)t->num_ipus + (size_t)dst];
}

/* Links and the CSR adjacency, each node's out-links sorted by neighbour id. */
static int index_links(struct sim_topology *t, const sim_link_info_t *e, size_t n)
{
    int *fill;

    t->num_links = (int)(2 * n);
    t->links = malloc((size_t)t->num_links * sizeof(*t->links) + 1);
    t->adj_start = calloc((size_t)t->num_nodes + 1, sizeof(int));
    t->adj = malloc((size_t)t->num_links * sizeof(int) + 1);
    fill = calloc((size_t)t->num_nodes, sizeof(int));
    if (t->links == NULL || t->adj_start == NULL || t->adj == NULL || fill == NULL) {
        free(fill);
        return -ENOMEM;
    }
    for (size_t i = 0; i < n; i++) {
        const sim_link_info_t *g = &e[i];

        t->links[2 * i] = (sim_link_info_t){g->from, g->to, g->kind, g->bandwidth, g->latency};
        t->links[2 * i + 1] = (sim_link_info_t){g->to, g->from, g->kind, g->bandwidth, g->latency};
        t->adj_start[g->from + 1]++;
        t->adj_start[g->to + 1]++;
    }
    for (int u = 0; u < t->num_nodes; u++)
        t->adj_start[u + 1] += t->adj_start[u];
    for (int l = 0; l < t->num_links; l++) {
        int u = t->links[l].from;
        int pos = t->adj_start[u] + fill[u]++;

        /* Insertion keeps each node's list sorted by neighbour; degrees are small. */
        while (pos > t->adj_start[u] && t->links[t->adj[pos - 1]].to > t->links[l].to) {
            t->adj[pos] = t->adj[pos - 1];
            pos--;
        }
        t->adj[pos] = l;
    }
    free(fill);
    return 0;
}

/* ---- Dijkstra with the key (latency, hops, node), a binary heap with lazy deletion. ---- */

struct hent {
    sim_time_t d;
    int h, node;
};

struct route_ws {
    sim_time_t *dist;
    int *hops;
    struct hent *heap;
    size_t n;
};

static int hent_less(const struct hent *x, const struct hent *y)
{
    if (x->d != y->d)
        return x->d < y->d;
    if (x->h != y->h)
        return x->h < y->h;
    return x->node < y->node;
}

static void heap_push(struct route_ws *w, struct hent v)
{
    size_t i = w->n++;

    while (i > 0 && hent_less(&v, &w->heap[(i - 1) / 2])) {
        w->heap[i] = w->heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    w->heap[i] = v;
}

static struct hent heap_pop(struct route_ws *w)
{
    struct hent top = w->heap[0], last = w->heap[--w->n];
    size_t i = 0;

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= w->n)
            break;
        if (c + 1 < w->n && hent_less(&w->heap[c + 1], &w->heap[c]))
            c++;
        if (!hent_less(&w->heap[c], &last))
            break;
        w->heap[i] = w->heap[c];
        i = c;
    }
    if (w->n > 0)
        w->heap[i] = last;
    return top;
}

static void dijkstra(const struct sim_topology *t, struct route_ws *w, int dst)
{
    for (int u = 0; u < t->num_nodes; u++) {
        w->dist[u] = SIM_TIME_MAX;
        w->hops[u] = INT_MAX;
    }
    w->dist[dst] = 0;
    w->hops[dst] = 0;
    w->n = 0;
    heap_push(w, (struct hent){0, 0, dst});
    while (w->n > 0) {
        struct hent e = heap_pop(w);

        if (e.d != w->dist[e.node] || e.h != w->hops[e.node])
            continue;
        for (int i = t->adj_start[e.node]; i < t->adj_start[e.node + 1]; i++) {
            const sim_link_info_t *l = &t->links[t->adj[i]];
            struct hent c = {sim_time_add(e.d, l->latency), e.h + 1, l->to};

            if (c.d < w->dist[c.node] || (c.d == w->dist[c.node] && c.h < w->hops[c.node])) {
                w->dist[c.node] = c.d;
                w->hops[c.node] = c.h;
                heap_push(w, c);
            }
        }
    }
}

/* Next hops towards DST from the distances; the first match is the lowest-numbered neighbour. */
static int fill_next(struct sim_topology *t, const struct route_ws *w, int dst, char *err,
                     size_t errlen, const char *origin)
{
    for (int u = 0; u < t->num_nodes; u++) {
        int32_t *slot = &t->next[(size_t)u * (size_t)t->num_ipus + (size_t)dst];

        *slot = -1;
        if (u == dst)
            continue;
        if (w->dist[u] == SIM_TIME_MAX) {
            sim_errf(err, errlen, "%s: IPU %d cannot reach IPU %d (the links leave it cut off)",
                     origin, u < t->num_ipus ? u : dst, u < t->num_ipus ? dst : u);
            return -EINVAL;
        }
        for (int i = t->adj_start[u]; i < t->adj_start[u + 1] && *slot < 0; i++) {
            const sim_link_info_t *l = &t->links[t->adj[i]];

            if (w->hops[l->to] + 1 == w->hops[u] &&
                sim_time_add(w->dist[l->to], l->latency) == w->dist[u])
                *slot = t->adj[i];
        }
        if (u < t->num_ipus && w->hops[u] > t->diameter)
            t->diameter = w->hops[u];
    }
    return 0;
}

static int compute_routes(struct sim_topology *t, const char *origin, char *err, size_t errlen)
{
    struct route_ws w;
    int rc = 0;

    t->next = malloc((size_t)t->num_nodes * (size_t)t->num_ipus * sizeof(*t->next));
    w.dist = malloc((size_t)t->num_nodes * sizeof(*w.dist));
    w.hops = malloc((size_t)t->num_nodes * sizeof(*w.hops));
    w.heap = malloc(((size_t)t->num_links + 1) * sizeof(*w.heap));
    if (t->next == NULL || w.dist == NULL || w.hops == NULL || w.heap == NULL) {
        sim_errf(err, errlen, "%s: out of memory", origin);
        rc = -ENOMEM;
        goto out;
    }
    for (int d = 0; d < t->num_ipus && rc == 0; d++) {
        dijkstra(t, &w, d);
        rc = fill_next(t, &w, d, err, errlen, origin);
    }
    if (rc == 0 && t->diameter > SIM_ROUTE_MAX_HOPS) {
        sim_errf(err, errlen, "%s: the longest route has %d hops; at most %d are supported", origin,
                 t->diameter, SIM_ROUTE_MAX_HOPS);
        rc = -EINVAL;
    }
out:
    free(w.heap);
    free(w.hops);
    free(w.dist);
    return rc;
}

int sim_topology_create(const sim_topology_desc_t *desc, const sim_link_info_t *edges, size_t n,
                        sim_topology_t **out, char *err, size_t errlen)
{
    struct sim_topology *t = calloc(1, sizeof(*t));
    int rc;

    *out = NULL;
    if (t == NULL) {
        sim_errf(err, errlen, "%s: out of memory", desc->origin);
        return -ENOMEM;
    }
    sim_strlcpy(t->name, desc->name, sizeof(t->name));
    t->num_ipus = desc->num_ipus;
    t->num_ilds = desc->num_ipus / desc->params.ild_size;
    t->num_gateways = desc->num_gateways;
    t->num_nodes = t->num_ipus + t->num_gateways;
    t->params = desc->params;
    t->cost = desc->cost;
    rc = index_links(t, edges, n);
    if (rc != 0)
        sim_errf(err, errlen, "%s: out of memory", desc->origin);
    else
        rc = compute_routes(t, desc->origin, err, errlen);
    if (rc != 0) {
        sim_topology_free(t);
        return rc;
    }
    *out = t;
    return 0;
}

const sim_link_info_t *sim_topology_links(const sim_topology_t *t)
{
    return t->links;
}

int sim_topology_next_link(const sim_topology_t *t, int node, int dst)
{
    return next_link(t, node, dst);
}

const sim_cost_params_t *sim_topology_cost(const sim_topology_t *t)
{
    return &t->cost;
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
    return ipu / t->params.ild_size;
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
    if (id < 0 || id >= t->num_links)
        return -EINVAL;
    *out = t->links[id];
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
        int id = next_link(t, u, dst);
        const sim_link_info_t *l = &t->links[id];

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
        u = t->links[next_link(t, u, dst)].to;
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
    *out = t->params;
}

const sim_device_t *sim_topology_device(const sim_topology_t *t)
{
    return sim_cost_params_device(sim_topology_cost(t));
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

    const sim_topology_params_t *p = &t->params;

    format_gbs(p->ipulink_bandwidth, ipu_bw, sizeof(ipu_bw));
    format_gbs(p->gwlink_bandwidth, gw_bw, sizeof(gw_bw));
    if (t->num_ilds == 1)
        return snprintf(buf, len, "%s: %d IPUs, 1 ILD (%s), IPU-Link %s GB/s %" PRIu64 " ns",
                        t->name, t->num_ipus, p->wiring, ipu_bw,
                        p->ipulink_latency / SIM_PS_PER_NS);
    return snprintf(buf, len,
                    "%s: %d IPUs, %d ILDs of %d (%s), IPU-Link %s GB/s %" PRIu64
                    " ns, %d gateways with %d GW-Link ports of %s GB/s %" PRIu64 " ns",
                    t->name, t->num_ipus, t->num_ilds, p->ild_size, p->wiring, ipu_bw,
                    p->ipulink_latency / SIM_PS_PER_NS, t->num_gateways, p->gwlinks_per_gateway,
                    gw_bw, p->gwlink_latency / SIM_PS_PER_NS);
}
