/*
 * The public calls of gcl/sim.h that take an IPU context or an instance: simulated SRAM,
 * compute, layer, update, host feed and transfer charges, clocks and statistics, plans and
 * constants of the instance's pod, the pod's name. They check what the program gave and record
 * a refusal on the context; the work on the pod's state is pod/'s. Declared in gcl/sim.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "api/ctx.h"
#include "engine/request.h"
#include "gcl/sim.h"
#include "job/shmem.h"
#include "pod/charge.h"
#include "pod/cache.h"
#include "pod/workload.h"

/* CTX's simulated IPU, once its parked call (engine/request.h) has charged its clock: a failure
 * there stays parked, for the IPU's next call to report. */
static gcl_sim_ipu_t *sim_ipu(struct gcl_ctx *ctx)
{
    gcl_ipu_settle(&ctx->ipu, 1);
    return ctx->ipu.clock;
}

gcl_status_t gcl_ipu_malloc(gcl_ctx_t ctx, size_t bytes, const char *label, void **out)
{
    if (!ctx || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gcl_sim_ipu_t *ipu = ctx->ipu.clock;
    if (ipu->nallocs == ipu->cap) {
        int cap = ipu->cap ? ipu->cap * 2 : 16;
        void *p = gcl_realloc(ipu->allocs, (size_t)cap * sizeof *ipu->allocs);
        if (!p)
            return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY, "gcl_ipu_malloc: out of host memory");
        ipu->allocs = p;
        ipu->cap = cap;
    }
    uint64_t id;
    int rc = sim_mem_alloc(ipu->mem, bytes, label ? label : "unnamed", &id);
    if (rc == -ENOSPC) {
        char report[1600];
        sim_mem_report(ipu->mem, report, sizeof report, 12);
        return gcl_ctx_fail(ctx, GCL_ERR_OUT_OF_MEMORY,
                            "out of simulated IPU memory on replica %d IPU %d: %zu bytes for "
                            "\"%s\" do not fit; %llu of %llu bytes are allocated:\n%.1500s",
                            ctx->replica, ctx->ipu_pos, bytes, label ? label : "unnamed",
                            (unsigned long long)sim_mem_used(ipu->mem),
                            (unsigned long long)sim_mem_capacity(ipu->mem), report);
    }
    if (rc != 0)
        return GCL_ERR_NO_HOST_MEMORY;
    void *p = NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    gcl_sim_t *s = &ctx->inst->sim;
    if (s->phantom_base) {
        size_t at = atomic_fetch_add(&s->phantom_next, rounded ? rounded : 64);
        p = at + rounded <= s->phantom_size ? s->phantom_base + at : NULL;
    } else if (!(p = gcl_shmem_alloc(rounded)) &&
               gcl_posix_memalign(&p, 64, rounded ? rounded : 64)) {
        p = NULL; /* shareable memory first (host-direct calls map it), the heap otherwise */
    }
    if (!p) {
        sim_mem_free(ipu->mem, id);
        return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY,
                            "gcl_ipu_malloc: out of host memory for %zu bytes of \"%s\"", bytes,
                            label ? label : "unnamed");
    }
    ipu->allocs[ipu->nallocs++] = (gcl_sim_alloc_t){p, id};
    *out = p;
    return GCL_OK;
}

void gcl_ipu_free(gcl_ctx_t ctx, void *ptr)
{
    if (!ctx || !ptr)
        return;
    gcl_sim_ipu_t *ipu = ctx->ipu.clock;
    for (int i = 0; i < ipu->nallocs; i++) {
        if (ipu->allocs[i].ptr == ptr) {
            sim_mem_free(ipu->mem, ipu->allocs[i].id);
            if (!gcl_sim_is_phantom(&ctx->inst->sim, ptr) && !gcl_shmem_free(ptr))
                free(ptr);
            ipu->allocs[i] = ipu->allocs[--ipu->nallocs];
            return;
        }
    }
    GCL_WARN(GCL_SUB_SIM, "gcl_ipu_free: %p was not allocated on this IPU", ptr);
}

gcl_status_t gcl_charge_compute(gcl_ctx_t ctx, const char *name, double flops, double bytes,
                                gcl_dtype_t type)
{
    if (!ctx || !(flops >= 0) || !(bytes >= 0) || flops > 1e21 || bytes > 1e21)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_sim_ipu_t *ipu = sim_ipu(ctx);
    sim_precision_t p = type == GCL_F16 || type == GCL_BF16 ? SIM_PREC_F16 : SIM_PREC_F32;
    sim_time_t t = sim_device_compute_time(ctx->inst->sim.dev, p, (uint64_t)flops, (uint64_t)bytes);
    if (ipu->trace)
        sim_trace_add(ipu->trace, name ? name : "compute", SIM_ACT_COMPUTE, ipu->stats.clock, t,
                      (uint64_t)bytes);
    sim_stats_advance(&ipu->stats, SIM_ACT_COMPUTE, t);
    return GCL_OK;
}

double gcl_sim_time(gcl_ctx_t ctx)
{
    return ctx ? (double)sim_ipu(ctx)->stats.clock * 1e-12 : 0.0;
}

void gcl_sim_stats(gcl_ctx_t ctx, gcl_sim_stats_t *out)
{
    memset(out, 0, sizeof *out);
    if (!ctx)
        return;
    const gcl_sim_ipu_t *ipu = sim_ipu(ctx);
    out->total_s = (double)ipu->stats.clock * 1e-12;
    out->compute_s = (double)ipu->stats.time[SIM_ACT_COMPUTE] * 1e-12;
    out->exchange_s = (double)ipu->stats.time[SIM_ACT_EXCHANGE] * 1e-12;
    out->sync_s = (double)ipu->stats.time[SIM_ACT_SYNC] * 1e-12;
    out->idle_s = (double)ipu->stats.time[SIM_ACT_IDLE] * 1e-12;
    out->host_wait_s = (double)ipu->stats.time[SIM_ACT_HOST] * 1e-12;
    out->memory_used = sim_mem_used(ipu->mem);
    out->memory_peak = sim_mem_peak(ipu->mem);
    out->memory_capacity = sim_mem_capacity(ipu->mem);
}

const char *gcl_sim_topology(gcl_instance_t inst)
{
    return inst && inst->sim.topo ? sim_topology_name(inst->sim.topo) : "?";
}

int gcl_sim_topology_ipus(gcl_instance_t inst)
{
    return inst && inst->sim.topo ? sim_topology_num_ipus(inst->sim.topo) : 0;
}

int gcl_sim_topology_ilds(gcl_instance_t inst)
{
    return inst && inst->sim.topo ? sim_topology_num_ilds(inst->sim.topo) : 0;
}

const char *gcl_sim_device(gcl_instance_t inst)
{
    return inst && inst->sim.dev ? inst->sim.dev->name : "";
}

/* A refusal of a program's call, recorded on CTX (gcl_ctx_last_error). */
static gcl_status_t refuse(struct gcl_ctx *ctx, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static gcl_status_t refuse(struct gcl_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT, "%s", n >= 0 ? text : "(out of host memory)");
    free(text);
    return GCL_ERR_INVALID_ARGUMENT;
}

gcl_status_t gcl_charge_layer(gcl_ctx_t ctx, const gcl_layer_t *layer, gcl_pass_t pass, long units)
{
    sim_layer_t l;
    char why[256];

    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    if (!layer || units < 1 || units > (1L << 31) || (int)pass < 0 || pass > GCL_PASS_RECOMPUTE)
        return refuse(ctx, "gcl_charge_layer: %s",
                      !layer                            ? "no layer"
                      : units < 1 || units > (1L << 31) ? "units must be 1..2^31"
                                                        : "unknown pass");
    if (gcl_layer_to_sim(layer, &l, why, sizeof why) != 0)
        return refuse(ctx, "gcl_charge_layer: %s", why);
    if (gcl_pod_charge_layer(&ctx->inst->sim, sim_ipu(ctx), &l, (sim_pass_t)pass, (uint64_t)units,
                             layer->name) != 0)
        return refuse(ctx, "%s: cannot cost %ld units of this layer", l.name, units);
    return GCL_OK;
}

gcl_status_t gcl_charge_update(gcl_ctx_t ctx, const gcl_update_t *u)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    if (!u || !(u->params >= 0) || u->params > 1e15 || u->tensors < 0 || (int)u->optimizer < 0 ||
        u->optimizer > GCL_OPTIM_LARS)
        return refuse(ctx, "gcl_charge_update: no update, a negative count or an unknown "
                           "optimizer");
    if (gcl_pod_charge_update(&ctx->inst->sim, sim_ipu(ctx), u) != 0)
        return GCL_ERR_INVALID_ARGUMENT;
    return GCL_OK;
}

gcl_status_t gcl_sim_update_time(gcl_instance_t inst, const gcl_update_t *u, double *seconds)
{
    sim_cost_t c;

    if (!inst || !seconds || !u || !(u->params >= 0) || u->params > 1e15 || u->tensors < 0 ||
        (int)u->optimizer < 0 || u->optimizer > GCL_OPTIM_LARS ||
        gcl_pod_update_cost(&inst->sim, u, &c) != 0)
        return GCL_ERR_INVALID_ARGUMENT;
    *seconds = (double)sim_cost_total(&c) * 1e-12;
    return GCL_OK;
}

gcl_status_t gcl_sim_collective_time(gcl_instance_t inst, const char *coll, size_t count,
                                     gcl_dtype_t type, const int *ipus, int n, double *seconds)
{
    coll_collective_t which;
    char why[256];
    sim_time_t sync = 0, longest = 0;

    if (!inst || !coll || !ipus || !seconds || n < 1 || coll_collective_parse(coll, &which) != 0 ||
        (which != COLL_ALLREDUCE && which != COLL_REDUCE_SCATTER && which != COLL_ALLGATHER) ||
        gcl_dtype_size(type) == 0)
        return GCL_ERR_INVALID_ARGUMENT;
    for (int q = 0; q < n; q++)
        if (ipus[q] < 0 || ipus[q] >= gcl_sim_topology_ipus(inst))
            return GCL_ERR_INVALID_ARGUMENT;
    *seconds = 0;
    if (n == 1 || count == 0)
        return GCL_OK;
    gcl_sim_t *s = &inst->sim;
    coll_args_t a = {.coll = which,
                     .nranks = n,
                     .count = count,
                     .dtype = (coll_dtype_t)type,
                     .op = COLL_SUM,
                     .elem_size = gcl_dtype_size(type)};
    const coll_algo_t *algo = gcl_simcache_choose(s->cache, s->topo, &a, ipus, why, sizeof why);
    sim_time_t *entry = gcl_calloc((size_t)n, sizeof *entry);
    gcl_status_t rc = algo && entry ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;

    for (int q = 0; rc == GCL_OK && q < n; q++) {
        sim_time_t idle = 0, exch = 0;

        rc = gcl_simcache_replay(s->cache, s->topo, algo, &a, ipus, entry, q, &idle, &exch);
        longest = idle + exch > longest ? idle + exch : longest;
    }
    free(entry);
    if (rc == GCL_OK && sim_sync_time(s->topo, ipus, n, &sync) != 0)
        rc = GCL_ERR_INVALID_ARGUMENT;
    *seconds = rc == GCL_OK ? (double)(sync + longest) * 1e-12 : 0;
    return rc;
}

gcl_status_t gcl_sim_feed(gcl_ctx_t ctx, const gcl_sim_feed_t *feed, long samples)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    if (!feed || samples < 1 || !(feed->samples_per_s >= 0) || !(feed->bytes_per_sample >= 0) ||
        feed->samples_per_s > 1e15 || feed->bytes_per_sample > 1e15 || feed->host_servers < 0)
        return refuse(ctx, "gcl_sim_feed: no feed, samples < 1 or a negative rate");
    const gcl_job_t *j = ctx->ipu.job;
    return gcl_pod_feed(&ctx->inst->sim, sim_ipu(ctx), feed, samples, j->num_replicas,
                        j->num_replicas * j->ipus_per_replica);
}

gcl_status_t gcl_charge_transfer(gcl_ctx_t ctx, int peer, size_t bytes)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    int per_replica = ctx->ipu.job->ipus_per_replica;
    int dst = ctx->replica * per_replica + peer;
    if (peer < 0 || peer >= per_replica || peer == ctx->ipu_pos ||
        gcl_pod_charge_transfer(&ctx->inst->sim, sim_ipu(ctx), ctx->ipu.global_ipu, dst, bytes))
        return refuse(ctx, "gcl_charge_transfer: IPU %d is not another IPU of this replica", peer);
    return GCL_OK;
}

gcl_status_t gcl_sim_plan_create(gcl_instance_t inst, gcl_sim_model_t m,
                                 const gcl_sim_plan_config_t *config, gcl_sim_plan_t *out,
                                 char *err, size_t len)
{
    if (!inst)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_pod_plan_create(&inst->sim, m, config, out, err, len);
}

gcl_status_t gcl_sim_charge_stage(gcl_ctx_t ctx, gcl_sim_plan_t p, int s, gcl_pass_t pass)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_pod_charge_stage(sim_ipu(ctx), p, s, pass);
}

gcl_status_t gcl_sim_charge_fragment(gcl_ctx_t ctx, gcl_sim_plan_t p, int f, gcl_pass_t pass)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_pod_charge_fragment(sim_ipu(ctx), p, f, pass);
}

gcl_status_t gcl_sim_host_exchange(gcl_ctx_t ctx)
{
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_pod_host_exchange(&ctx->inst->sim, sim_ipu(ctx));
    return GCL_OK;
}

gcl_status_t gcl_sim_charge_syncs(gcl_ctx_t ctx, long local, long spanning)
{
    if (!ctx || local < 0 || spanning < 0)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_pod_charge_syncs(&ctx->inst->sim, sim_ipu(ctx), (uint64_t)local, (uint64_t)spanning);
    return GCL_OK;
}

gcl_status_t gcl_sim_charge_uplink(gcl_ctx_t ctx, double bytes)
{
    if (!ctx || !(bytes >= 0) || bytes > 1e18)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_pod_charge_uplink(&ctx->inst->sim, sim_ipu(ctx), bytes);
    return GCL_OK;
}

int gcl_sim_param(gcl_instance_t inst, int i, gcl_sim_param_t *out)
{
    return inst ? gcl_pod_param(&inst->sim, i, out) : -1;
}
