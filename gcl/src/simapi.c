/*
 * The public calls of gcl/sim.h: simulated SRAM, compute charges, clocks and statistics, the
 * simulated pod's name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctx.h"
#include "gcl/sim.h"
#include "base/fault.h"
#include "base/log.h"
#include "job/shmem.h"

static gcl_sim_ipu_t *sim_ipu(struct gcl_ctx *ctx)
{
    return &ctx->inst->sim.ipus[ctx->local_index];
}

gcl_status_t gcl_ipu_malloc(gcl_ctx_t ctx, size_t bytes, const char *label, void **out)
{
    if (!ctx || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    gcl_sim_ipu_t *ipu = sim_ipu(ctx);
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
    gcl_sim_ipu_t *ipu = sim_ipu(ctx);
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

/* ---- for simlayer.c and simmodel.c ---- */

gcl_sim_ipu_t *gcl_sim_ctx_ipu(struct gcl_ctx *ctx)
{
    return sim_ipu(ctx);
}

gcl_sim_t *gcl_sim_of(struct gcl_instance *inst)
{
    return &inst->sim;
}

struct gcl_instance *gcl_sim_ctx_instance(struct gcl_ctx *ctx)
{
    return ctx->inst;
}

void gcl_sim_ctx_error(struct gcl_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    char *text = NULL;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT, "%s", n >= 0 ? text : "(out of host memory)");
    free(text);
}
