/*
 * The link cost model of sim/cost/cost.h: single messages, flows that queue on shared links, the ring
 * closed forms and synchronisation.
 *
 * Link bookings live in the workspace as "free at" times. Resetting must be O(1) because the
 * caller resets once per collective, so each booking carries the epoch it was made in, and a
 * booking from an older epoch reads as "free since time 0".
 */
#include "sim/cost/cost.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

struct sim_flow_ws {
    const sim_topology_t *topo;
    sim_time_t *link_free; /* per directed link: free from this time (if epoch matches) */
    uint32_t *link_epoch;
    uint32_t epoch;
    size_t cap;          /* flows the order buffers hold */
    size_t *order, *tmp; /* merge sort of flow indices */
};

sim_time_t sim_route_time(const sim_route_t *r, uint64_t bytes)
{
    if (r->hops == 0)
        return 0;
    return sim_time_add(r->latency, sim_xfer_time(bytes, r->bandwidth));
}

int sim_message_time(const sim_topology_t *t, int src, int dst, uint64_t bytes, sim_time_t *out)
{
    sim_route_t r;
    int rc = sim_topology_route(t, src, dst, &r);

    if (rc != 0)
        return rc;
    *out = sim_route_time(&r, bytes);
    return 0;
}

static int ws_grow(sim_flow_ws_t *ws, size_t cap)
{
    size_t *order = realloc(ws->order, cap * sizeof(size_t));
    size_t *tmp;

    if (order == NULL)
        return -ENOMEM;
    ws->order = order;
    tmp = realloc(ws->tmp, cap * sizeof(size_t));
    if (tmp == NULL)
        return -ENOMEM;
    ws->tmp = tmp;
    ws->cap = cap;
    return 0;
}

int sim_flow_ws_create(const sim_topology_t *t, size_t max_flows, sim_flow_ws_t **out)
{
    sim_flow_ws_t *ws;
    size_t links;

    if (t == NULL || out == NULL)
        return -EINVAL;
    *out = NULL;
    ws = calloc(1, sizeof(*ws));
    if (ws == NULL)
        return -ENOMEM;
    links = (size_t)sim_topology_num_links(t) + 1;
    ws->topo = t;
    ws->epoch = 1;
    ws->link_free = calloc(links, sizeof(*ws->link_free));
    ws->link_epoch = calloc(links, sizeof(*ws->link_epoch));
    if (ws->link_free == NULL || ws->link_epoch == NULL ||
        ws_grow(ws, max_flows ? max_flows : 1) != 0) {
        sim_flow_ws_destroy(ws);
        return -ENOMEM;
    }
    *out = ws;
    return 0;
}

void sim_flow_ws_reset(sim_flow_ws_t *ws)
{
    if (++ws->epoch == 0) {
        /* After 2^32 resets the epochs wrap: forget every booking for real, once. */
        memset(ws->link_epoch, 0,
               ((size_t)sim_topology_num_links(ws->topo) + 1) * sizeof(uint32_t));
        ws->epoch = 1;
    }
}

void sim_flow_ws_destroy(sim_flow_ws_t *ws)
{
    if (ws == NULL)
        return;
    free(ws->tmp);
    free(ws->order);
    free(ws->link_epoch);
    free(ws->link_free);
    free(ws);
}

/* The service order: (send_time, src, dst, index), a total order. */
static int flow_before(const sim_flow_t *f, size_t i, size_t j)
{
    const sim_flow_t *a = &f[i], *b = &f[j];

    if (a->send_time != b->send_time)
        return a->send_time < b->send_time;
    if (a->src != b->src)
        return a->src < b->src;
    if (a->dst != b->dst)
        return a->dst < b->dst;
    return i < j;
}

/* Bottom-up merge sort of ws->order[0..n) by flow_before, using ws->tmp; no allocation. */
static void sort_flows(sim_flow_ws_t *ws, const sim_flow_t *f, size_t n)
{
    size_t *src = ws->order, *dst = ws->tmp;

    for (size_t width = 1; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            size_t mid = lo + width < n ? lo + width : n;
            size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;

            while (i < mid && j < hi)
                dst[k++] = flow_before(f, src[j], src[i]) ? src[j++] : src[i++];
            while (i < mid)
                dst[k++] = src[i++];
            while (j < hi)
                dst[k++] = src[j++];
        }
        size_t *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != ws->order)
        memcpy(ws->order, src, n * sizeof(size_t));
}

static sim_time_t link_free_at(const sim_flow_ws_t *ws, int l)
{
    return ws->link_epoch[l] == ws->epoch ? ws->link_free[l] : 0;
}

/* Books the route of F (src != dst) on the links and sets its start and arrival. */
static void serve_flow(sim_flow_ws_t *ws, sim_flow_t *f)
{
    const sim_topology_t *t = ws->topo;
    const sim_link_info_t *links = sim_topology_links(t);
    sim_time_t start = f->send_time, latency = 0, hold, end;
    uint64_t bw = UINT64_MAX;

    /* First walk: when is the whole route free, and what are its latency and bottleneck? */
    for (int u = f->src; u != f->dst;) {
        int l = sim_topology_next_link(t, u, f->dst);

        start = sim_time_max(start, link_free_at(ws, l));
        latency = sim_time_add(latency, links[l].latency);
        if (links[l].bandwidth < bw)
            bw = links[l].bandwidth;
        u = links[l].to;
    }
    hold = sim_xfer_time(f->bytes, bw);
    end = sim_time_add(start, hold);
    /* Second walk: hold every link for the transfer time. */
    for (int u = f->src; u != f->dst;) {
        int l = sim_topology_next_link(t, u, f->dst);

        ws->link_free[l] = end;
        ws->link_epoch[l] = ws->epoch;
        u = links[l].to;
    }
    f->start = start;
    f->arrival = sim_time_add(end, latency);
}

int sim_flows_cost(sim_flow_ws_t *ws, sim_flow_t *flows, size_t n)
{
    int ipus = sim_topology_num_ipus(ws->topo);

    for (size_t i = 0; i < n; i++)
        if (flows[i].src < 0 || flows[i].src >= ipus || flows[i].dst < 0 || flows[i].dst >= ipus)
            return -EINVAL;
    if (n > ws->cap && ws_grow(ws, n) != 0)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        ws->order[i] = i;
    sort_flows(ws, flows, n);
    for (size_t k = 0; k < n; k++) {
        sim_flow_t *f = &flows[ws->order[k]];

        if (f->src == f->dst) {
            f->start = f->send_time;
            f->arrival = f->send_time;
            continue;
        }
        serve_flow(ws, f);
    }
    return 0;
}

static int ring_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes, int steps,
                     sim_ring_cost_t *out)
{
    if (t == NULL || ipus == NULL || out == NULL || n < 1)
        return -EINVAL;
    memset(out, 0, sizeof(*out));
    for (int i = 0; i < n; i++)
        if (ipus[i] < 0 || ipus[i] >= sim_topology_num_ipus(t))
            return -EINVAL;
    if (n == 1)
        return 0;
    out->steps = steps;
    out->chunk = bytes / (uint64_t)n + (bytes % (uint64_t)n != 0);
    for (int i = 0; i < n; i++) {
        sim_route_t r;
        sim_time_t beta, step;

        sim_topology_route(t, ipus[i], ipus[(i + 1) % n], &r);
        beta = r.hops ? sim_xfer_time(out->chunk, r.bandwidth) : 0;
        step = sim_time_add(r.latency, beta);
        if (r.gw_hops > 0)
            out->gw_edges++;
        if (i == 0 || step > out->step) {
            out->step = step;
            out->alpha = r.latency;
            out->beta = beta;
            out->slowest_edge = i;
        }
    }
    out->total =
        out->step > SIM_TIME_MAX / (uint64_t)steps ? SIM_TIME_MAX : out->step * (uint64_t)steps;
    return 0;
}

int sim_ring_allreduce_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                            sim_ring_cost_t *out)
{
    return ring_cost(t, ipus, n, bytes, 2 * (n - 1), out);
}

int sim_ring_reduce_scatter_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                                 sim_ring_cost_t *out)
{
    return ring_cost(t, ipus, n, bytes, n - 1, out);
}

int sim_ring_all_gather_cost(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes,
                             sim_ring_cost_t *out)
{
    return ring_cost(t, ipus, n, bytes, n - 1, out);
}

sim_time_t sim_ring_allreduce_time(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes)
{
    sim_ring_cost_t c;

    if (sim_ring_allreduce_cost(t, ipus, n, bytes, &c) != 0)
        return SIM_TIME_MAX;
    return c.total;
}

int sim_sync_time(const sim_topology_t *t, const int *ipus, int n, sim_time_t *out)
{
    sim_topology_params_t p;
    int spans = 0;

    if (t == NULL || out == NULL || n < 0 || (n > 0 && ipus == NULL))
        return -EINVAL;
    for (int i = 0; i < n; i++) {
        if (ipus[i] < 0 || ipus[i] >= sim_topology_num_ipus(t))
            return -EINVAL;
        if (sim_topology_ild_of(t, ipus[i]) != sim_topology_ild_of(t, ipus[0]))
            spans = 1;
    }
    *out = 0;
    sim_topology_get_params(t, &p);
    if (n > 1)
        *out = spans ? sim_time_add(p.sync_latency, p.gw_sync_latency) : p.sync_latency;
    return 0;
}
