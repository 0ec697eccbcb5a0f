/*
 * Building a topology from a spec: validate it, lay out the edges (ILD wiring, explicit links,
 * gateways and GW-Links), index them, and precompute every route.
 *
 * Routes are computed once, here, so that a route query or a flow cost later is a walk along a
 * next-hop table with no search. For every destination IPU we run Dijkstra over the whole graph
 * (links are symmetric, so distances to the destination equal distances from it) with the key
 * (total latency, hops); then each node's next hop towards that destination is its lowest-numbered
 * neighbour that lies on such a shortest path. Both the key and the tie-break are total orders,
 * so the routes are a pure function of the spec.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "sim_internal.h"
#include "topology_spec.h"

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

/* Gateway g (0-based) of ILD d, position m, is node num_ipus + d * per_ild + m. */
static int add_gateways(struct edges *e, const struct sim_topo_spec *s, int ilds)
{
    int per_ild = s->ild_size / s->ipus_per_gateway;
    int rc = 0;

    for (int i = 0; i < s->num_ipus && rc == 0; i++)
        rc = edges_add(e, i, s->num_ipus + i / s->ipus_per_gateway, SIM_LINK_GW_ATTACH,
                       s->ipulink_bandwidth, s->ipulink_latency, 0);
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

/* Links and the CSR adjacency, each node's out-links sorted by neighbour id. */
static int index_links(struct sim_topology *t, const struct edges *e)
{
    int *fill;

    t->num_links = (int)(2 * e->n);
    t->links = malloc((size_t)t->num_links * sizeof(*t->links) + 1);
    t->adj_start = calloc((size_t)t->num_nodes + 1, sizeof(int));
    t->adj = malloc((size_t)t->num_links * sizeof(int) + 1);
    fill = calloc((size_t)t->num_nodes, sizeof(int));
    if (t->links == NULL || t->adj_start == NULL || t->adj == NULL || fill == NULL) {
        free(fill);
        return -ENOMEM;
    }
    for (size_t i = 0; i < e->n; i++) {
        const struct edge *g = &e->v[i];

        t->links[2 * i] = (struct sim_link){g->a, g->b, g->kind, g->bandwidth, g->latency};
        t->links[2 * i + 1] = (struct sim_link){g->b, g->a, g->kind, g->bandwidth, g->latency};
        t->adj_start[g->a + 1]++;
        t->adj_start[g->b + 1]++;
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
            const struct sim_link *l = &t->links[t->adj[i]];
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
            const struct sim_link *l = &t->links[t->adj[i]];

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

static void copy_params(struct sim_topology *t, const struct sim_topo_spec *s)
{
    sim_strlcpy(t->name, s->name, sizeof(t->name));
    t->num_ipus = s->num_ipus;
    t->ild_size = s->ild_size;
    t->num_ilds = s->num_ipus / s->ild_size;
    t->ipus_per_gateway = s->ipus_per_gateway;
    t->gwlinks_per_gateway = s->gwlinks_per_gateway;
    t->num_gateways = t->num_ilds > 1 ? s->num_ipus / s->ipus_per_gateway : 0;
    t->num_nodes = t->num_ipus + t->num_gateways;
    t->wiring = s->wiring;
    t->ipulink_bandwidth = s->ipulink_bandwidth;
    t->gwlink_bandwidth = s->gwlink_bandwidth;
    t->ipulink_latency = s->ipulink_latency;
    t->gwlink_latency = s->gwlink_latency;
    t->sync_latency = s->sync_latency;
    t->gw_sync_latency = s->gw_sync_latency;
    t->cost = s->cost;
}

int sim_topo_build(const struct sim_topo_spec *s, sim_topology_t **out, char *err, size_t errlen)
{
    struct edges e = {0};
    struct sim_topology *t = NULL;
    int rc;

    *out = NULL;
    rc = check_spec(s, err, errlen);
    if (rc != 0)
        return rc;
    rc = collect_edges(s, &e, err, errlen);
    if (rc != 0)
        goto out;
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        rc = -ENOMEM;
        goto out;
    }
    copy_params(t, s);
    rc = index_links(t, &e);
    if (rc != 0) {
        sim_errf(err, errlen, "%s: out of memory", s->origin);
        goto out;
    }
    rc = compute_routes(t, s->origin, err, errlen);
out:
    free(e.v);
    if (rc != 0) {
        sim_topology_free(t);
        return rc;
    }
    *out = t;
    return 0;
}
