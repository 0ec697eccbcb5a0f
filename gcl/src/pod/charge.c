/*
 * Charging layers, weight updates, the host feed and transfers to a simulated IPU's clock: the
 * glue between a program's description of its work (gcl/sim.h's layers) and sim/'s per-layer
 * cost model. The pod's cost constants are its topology's (sim_topology_cost()). The public
 * calls, which take an IPU context, are api/sim.c's.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/charge.h"

#include "base/alloc.h"

static const sim_layer_type_t types[] = {
    [GCL_LAYER_MATMUL] = SIM_LAYER_MATMUL,       [GCL_LAYER_CONV] = SIM_LAYER_CONV,
    [GCL_LAYER_ATTENTION] = SIM_LAYER_ATTENTION, [GCL_LAYER_ELEMENTWISE] = SIM_LAYER_ELEMENTWISE,
    [GCL_LAYER_NORM] = SIM_LAYER_NORM,           [GCL_LAYER_POOL] = SIM_LAYER_POOL,
    [GCL_LAYER_EMBEDDING] = SIM_LAYER_EMBEDDING, [GCL_LAYER_LOSS] = SIM_LAYER_LOSS,
};

/* Every count a layer field may hold; sim_layer_check() bounds the products. */
static int fits(long v)
{
    return v >= 0 && v <= (1L << 31);
}

int gcl_layer_to_sim(const gcl_layer_t *g, sim_layer_t *l, char *err, size_t errlen)
{
    const long all[] = {g->rows, g->in,       g->out,      g->values, g->h,     g->w,
                        g->c_in, g->c_out,    g->kernel,   g->stride, g->pad,   g->heads,
                        g->seq,  g->head_dim, g->channels, g->ops,    g->inputs};

    if ((int)g->type < 0 || (size_t)g->type >= sizeof(types) / sizeof(types[0])) {
        snprintf(err, errlen, "unknown layer type %d (supported types: %s)", (int)g->type,
                 sim_layer_type_list());
        return -EINVAL;
    }
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (!fits(all[i])) {
            snprintf(err, errlen, "%s: a dimension is negative or above 2^31 (%ld)",
                     sim_layer_type_name(types[g->type]), all[i]);
            return -EINVAL;
        }
    }
    sim_layer_init(l, types[g->type], g->name);
    l->prec = g->dtype == GCL_F32 ? SIM_PREC_F32 : SIM_PREC_F16;
    l->rows = (uint64_t)g->rows;
    l->in = (uint64_t)g->in;
    l->out = (uint64_t)g->out;
    l->values = (uint64_t)g->values;
    l->h = (uint32_t)g->h, l->w = (uint32_t)g->w, l->cin = (uint32_t)g->c_in;
    l->cout = (uint32_t)g->c_out, l->kernel = (uint32_t)g->kernel;
    l->stride = (uint32_t)g->stride, l->pad = (uint32_t)g->pad;
    l->heads = (uint32_t)g->heads, l->seq = (uint32_t)g->seq, l->head_dim = (uint32_t)g->head_dim;
    l->channels = (uint32_t)g->channels, l->ops = (uint32_t)g->ops;
    l->inputs = (uint32_t)g->inputs;
    l->bias = g->bias != 0;
    l->input_grad = g->no_input_grad == 0;
    if (g->dtype != GCL_F32 && g->dtype != GCL_F16 && g->dtype != GCL_BF16) {
        snprintf(err, errlen, "%s: dtype must be f16, bf16 or f32", sim_layer_type_name(l->type));
        return -EINVAL;
    }
    return sim_layer_check(l, err, errlen);
}

void gcl_layer_from_sim(const sim_layer_t *l, gcl_layer_t *g)
{
    *g = (gcl_layer_t)GCL_LAYER_INIT;
    for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
        if (types[i] == l->type)
            g->type = (gcl_layer_type_t)i;
    g->name = l->name;
    g->dtype = l->prec == SIM_PREC_F32 ? GCL_F32 : GCL_F16;
    g->rows = (long)l->rows, g->in = (long)l->in, g->out = (long)l->out;
    g->values = (long)l->values;
    g->h = (int)l->h, g->w = (int)l->w, g->c_in = (int)l->cin, g->c_out = (int)l->cout;
    g->kernel = (int)l->kernel, g->stride = (int)l->stride, g->pad = (int)l->pad;
    g->heads = (int)l->heads, g->seq = (int)l->seq, g->head_dim = (int)l->head_dim;
    g->channels = (int)l->channels, g->ops = (int)l->ops, g->inputs = (int)l->inputs;
    g->bias = l->bias;
    g->no_input_grad = !l->input_grad;
}

void gcl_pod_advance(gcl_sim_ipu_t *ipu, const sim_cost_t *c, const char *name)
{
    sim_time_t start = ipu->stats.clock;

    sim_stats_advance(&ipu->stats, SIM_ACT_COMPUTE, c->compute);
    sim_stats_advance(&ipu->stats, SIM_ACT_SYNC, c->sync);
    sim_stats_advance(&ipu->stats, SIM_ACT_EXCHANGE, c->exchange);
    if (ipu->trace)
        sim_trace_add(ipu->trace, name, SIM_ACT_COMPUTE, start, ipu->stats.clock - start, 0);
}

static const char *pass_name(sim_pass_t p)
{
    return p == SIM_PASS_BACKWARD ? "backward" : p == SIM_PASS_RECOMPUTE ? "recompute" : "forward";
}

void gcl_pod_advance_layer(gcl_sim_ipu_t *ipu, const sim_cost_t *c, sim_layer_type_t type,
                           sim_pass_t pass)
{
    char label[64];

    label[0] = '\0';
    if (ipu->trace)
        snprintf(label, sizeof label, "%s %s", sim_layer_type_name(type), pass_name(pass));
    gcl_pod_advance(ipu, c, label);
}

int gcl_pod_charge_layer(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const sim_layer_t *l,
                         sim_pass_t pass, uint64_t units, const char *name)
{
    char label[64];
    sim_cost_t c;

    if (sim_layer_cost(sim_topology_cost(s->topo), s->dev, l, pass, units, &c) != 0)
        return -1;
    if (name == NULL) {
        snprintf(label, sizeof label, "%s %s", sim_layer_type_name(l->type), pass_name(pass));
        name = label;
    }
    gcl_pod_advance(ipu, &c, name);
    return 0;
}

static uint32_t dtype_bytes(gcl_dtype_t t)
{
    return t == GCL_F32 ? 4 : 2;
}

int gcl_pod_update_cost(const gcl_sim_t *s, const gcl_update_t *u, sim_cost_t *c)
{
    sim_update_t su = {(sim_optimizer_t)u->optimizer,
                       (uint64_t)u->params,
                       (uint32_t)u->tensors,
                       dtype_bytes(u->weight_type),
                       dtype_bytes(u->grad_type),
                       4,
                       u->streaming != 0};

    return sim_update_cost(sim_topology_cost(s->topo), s->dev, &su, c) == 0 ? 0 : -1;
}

int gcl_pod_charge_update(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const gcl_update_t *u)
{
    sim_cost_t c;

    if (gcl_pod_update_cost(s, u, &c) != 0)
        return -1;
    gcl_pod_advance(ipu, &c, "optimizer");
    return 0;
}

/* The IPU's feed stream, set up from FEED at its first use. */
static sim_feed_t *feed_of(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const gcl_sim_feed_t *feed,
                           int num_replicas, int num_ipus)
{
    sim_cost_params_t cp;
    sim_feed_limit_t limit;
    double rate;

    if (ipu->feed)
        return ipu->feed;
    ipu->feed = gcl_malloc(sizeof(*ipu->feed));
    if (!ipu->feed)
        return NULL;
    cp = *sim_topology_cost(s->topo);
    if (feed->host_servers > 0)
        cp.host_servers = feed->host_servers;
    rate = sim_feed_rate(&cp, (uint64_t)feed->samples_per_s, (uint64_t)feed->bytes_per_sample,
                         num_ipus, &limit);
    sim_feed_init(ipu->feed, rate, num_replicas, cp.prefetch_depth);
    return ipu->feed;
}

gcl_status_t gcl_pod_feed(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, const gcl_sim_feed_t *feed,
                          long samples, int num_replicas, int num_ipus)
{
    sim_feed_t *f = feed_of(s, ipu, feed, num_replicas, num_ipus);
    sim_time_t ready, start;

    if (!f)
        return GCL_ERR_NO_HOST_MEMORY;
    start = ipu->stats.clock;
    ready = sim_feed_take(f, start, (uint64_t)samples);
    sim_stats_advance_to(&ipu->stats, SIM_ACT_HOST, ready);
    /* The stream copy from Streaming Memory, which holds the IPU's compute (TensorFlow's
     * StreamCopyMid; sim/device/params.h streaming_gbs). */
    if (feed->bytes_per_sample > 0)
        sim_stats_advance(&ipu->stats, SIM_ACT_HOST,
                          sim_ps_of((double)samples * feed->bytes_per_sample /
                                    (double)sim_topology_cost(s->topo)->streaming_bandwidth));
    if (ipu->trace && ipu->stats.clock > start)
        sim_trace_add(ipu->trace, "host feed", SIM_ACT_HOST, start, ipu->stats.clock - start, 0);
    return GCL_OK;
}

int gcl_pod_charge_transfer(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, int me, int dst, size_t bytes)
{
    sim_route_t route;
    sim_time_t start;

    if (sim_topology_route(s->topo, me, dst, &route) != 0)
        return -1;
    start = ipu->stats.clock;
    sim_stats_advance(&ipu->stats, SIM_ACT_EXCHANGE, sim_xfer_time(bytes, route.bandwidth));
    if (ipu->trace && ipu->stats.clock > start)
        sim_trace_add(ipu->trace, "transfer", SIM_ACT_EXCHANGE, start, ipu->stats.clock - start,
                      bytes);
    return 0;
}

void gcl_pod_host_exchange(const gcl_sim_t *s, gcl_sim_ipu_t *ipu)
{
    sim_time_t start = ipu->stats.clock;

    sim_stats_advance(&ipu->stats, SIM_ACT_HOST, sim_topology_cost(s->topo)->host_sync);
    if (ipu->trace && ipu->stats.clock > start)
        sim_trace_add(ipu->trace, "host sync", SIM_ACT_HOST, start, ipu->stats.clock - start, 0);
}

void gcl_pod_charge_syncs(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, uint64_t local, uint64_t spanning)
{
    sim_topology_params_t p;
    sim_time_t start = ipu->stats.clock, t;

    sim_topology_get_params(s->topo, &p);
    t = sim_time_add(local * p.sync_latency,
                     spanning * sim_time_add(p.sync_latency, p.gw_sync_latency));
    sim_stats_advance(&ipu->stats, SIM_ACT_SYNC, t);
    if (ipu->trace && t > 0)
        sim_trace_add(ipu->trace, "syncs", SIM_ACT_SYNC, start, t, 0);
}

void gcl_pod_charge_uplink(const gcl_sim_t *s, gcl_sim_ipu_t *ipu, double bytes)
{
    sim_time_t start = ipu->stats.clock;
    sim_time_t t = sim_ps_of(bytes / (double)sim_topology_cost(s->topo)->gateway_domain_bandwidth);

    sim_stats_advance(&ipu->stats, SIM_ACT_EXCHANGE, t);
    if (ipu->trace && t > 0)
        sim_trace_add(ipu->trace, "domain uplink", SIM_ACT_EXCHANGE, start, t, (uint64_t)bytes);
}
