/*
 * The simulated pod behind libgcl (simglue.h), and the public calls of gcl/sim.h: simulated
 * SRAM, compute charges, clocks and statistics, reports and traces.
 */
#include "simglue.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gcl/sim.h"
#include "internal.h"
#include "log.h"
#include "shmem.h"

static gcl_status_t open_topology(struct gcl_instance *inst)
{
    gcl_sim_t *s = &inst->sim;
    const char *spec = inst->params.topology[0] ? inst->params.topology : inst->pd.topology;
    char err[256];
    if (!spec || !spec[0]) {
        spec = sim_topology_smallest_preset(inst->num_ipus);
        if (!spec) {
            snprintf(inst->error, sizeof inst->error,
                     "the job has %d IPUs: more than the largest preset pod (POD256) holds; "
                     "describe a larger pod in a topology file (GCL_TOPOLOGY)",
                     inst->num_ipus);
            return GCL_ERR_INVALID_ARGUMENT;
        }
    }
    if (sim_topology_open(spec, &s->topo, err, sizeof err) != 0) {
        snprintf(inst->error, sizeof inst->error, "simulated topology: %s", err);
        return GCL_ERR_INVALID_ARGUMENT;
    }
    if (sim_topology_num_ipus(s->topo) < inst->num_ipus) {
        snprintf(inst->error, sizeof inst->error,
                 "the job has %d IPUs (%d replicas x %d), but the simulated pod %s has %d",
                 inst->num_ipus, inst->num_replicas, inst->ipr, sim_topology_name(s->topo),
                 sim_topology_num_ipus(s->topo));
        return GCL_ERR_INVALID_ARGUMENT;
    }
    s->dev = sim_topology_device(s->topo);
    return GCL_OK;
}

gcl_status_t gcl_sim_init(struct gcl_instance *inst)
{
    gcl_sim_t *s = &inst->sim;
    GCL_CHECK(open_topology(inst));
    s->ipus = calloc((size_t)inst->num_local_ipus, sizeof *s->ipus);
    if (!s->ipus)
        return GCL_ERR_NO_HOST_MEMORY;
    for (int k = 0; k < inst->num_local_ipus; k++) {
        gcl_sim_ipu_t *ipu = &s->ipus[k];
        ipu->stats = (sim_ipu_stats_t)SIM_IPU_STATS_INIT;
        if (sim_mem_create(sim_device_memory(s->dev), &ipu->mem) != 0)
            return GCL_ERR_NO_HOST_MEMORY;
        if (inst->params.sim_trace[0] &&
            sim_trace_create((size_t)inst->params.sim_trace_events, &ipu->trace) != 0)
            return GCL_ERR_NO_HOST_MEMORY;
    }
    if (inst->phantom) {
        /* Address space only: PROT_NONE and no reservation, so it costs no memory. */
        s->phantom_size = (size_t)1 << 40;
        s->phantom_base = mmap(NULL, s->phantom_size, PROT_NONE,
                               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s->phantom_base == MAP_FAILED) {
            s->phantom_base = NULL;
            return GCL_ERR_NO_HOST_MEMORY;
        }
    }
    GCL_INFO(GCL_SUB_SIM, "simulated pod %s: %d IPUs in %d IPU-Link domain(s); the job uses %d",
             sim_topology_name(s->topo), sim_topology_num_ipus(s->topo),
             sim_topology_num_ilds(s->topo), inst->num_ipus);
    return GCL_OK;
}

/* Writes the report or trace at PATTERN (with %i expanded) for every local IPU. */
static void write_output(struct gcl_instance *inst, const char *pattern, int trace)
{
    gcl_sim_t *s = &inst->sim;
    char path[512];
    if (sim_report_expand_path(pattern, inst->instance_index, path, sizeof path) != 0) {
        GCL_WARN(GCL_SUB_SIM, "cannot expand the path %s", pattern);
        return;
    }
    sim_report_ipu_t *ipus = calloc((size_t)inst->num_local_ipus, sizeof *ipus);
    if (!ipus)
        return;
    for (int k = 0; k < inst->num_local_ipus; k++)
        ipus[k] =
            (sim_report_ipu_t){inst->first_ipu + k, &s->ipus[k].stats, sim_mem_peak(s->ipus[k].mem),
                               sim_mem_capacity(s->ipus[k].mem), s->ipus[k].trace};
    sim_report_info_t info = SIM_REPORT_INFO_INIT;
    info.topology = sim_topology_name(s->topo);
    info.device = s->dev;
    info.instance = inst->instance_index;
    info.num_instances = inst->num_instances;
    int rc = trace ? sim_trace_write_json_path(path, &info, ipus, (size_t)inst->num_local_ipus)
                   : sim_report_write_json_path(path, &info, ipus, (size_t)inst->num_local_ipus);
    if (rc != 0)
        GCL_WARN(GCL_SUB_SIM, "cannot write the simulated %s to %s: %s", trace ? "trace" : "report",
                 path, strerror(-rc));
    else
        GCL_INFO(GCL_SUB_SIM, "wrote the simulated %s to %s", trace ? "trace" : "report", path);
    free(ipus);
}

void gcl_sim_fini(struct gcl_instance *inst)
{
    gcl_sim_t *s = &inst->sim;
    if (s->ipus && s->topo) {
        if (inst->params.sim_report[0])
            write_output(inst, inst->params.sim_report, 0);
        if (inst->params.sim_trace[0])
            write_output(inst, inst->params.sim_trace, 1);
    }
    for (int k = 0; s->ipus && k < inst->num_local_ipus; k++) {
        gcl_sim_ipu_t *ipu = &s->ipus[k];
        for (int i = 0; i < ipu->nallocs; i++)
            if (!gcl_sim_is_phantom(s, ipu->allocs[i].ptr) && !gcl_shmem_free(ipu->allocs[i].ptr))
                free(ipu->allocs[i].ptr);
        free(ipu->allocs);
        sim_mem_destroy(ipu->mem);
        sim_trace_destroy(ipu->trace);
    }
    free(s->ipus);
    sim_topology_free(s->topo);
    if (s->phantom_base)
        munmap(s->phantom_base, s->phantom_size);
    memset(s, 0, sizeof *s);
}

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
        void *p = realloc(ipu->allocs, (size_t)cap * sizeof *ipu->allocs);
        if (!p)
            return GCL_ERR_NO_HOST_MEMORY;
        ipu->allocs = p;
        ipu->cap = cap;
    }
    uint64_t id;
    int rc = sim_mem_alloc(ipu->mem, bytes, label ? label : "unnamed", &id);
    if (rc == -ENOSPC) {
        char report[1600];
        sim_mem_report(ipu->mem, report, sizeof report, 12);
        snprintf(ctx->last_error, sizeof ctx->last_error,
                 "out of simulated IPU memory on replica %d IPU %d: %zu bytes for \"%s\" do not "
                 "fit; %llu of %llu bytes are allocated:\n%.1500s",
                 ctx->replica, ctx->ipu_pos, bytes, label ? label : "unnamed",
                 (unsigned long long)sim_mem_used(ipu->mem),
                 (unsigned long long)sim_mem_capacity(ipu->mem), report);
        return GCL_ERR_OUT_OF_MEMORY;
    }
    if (rc != 0)
        return GCL_ERR_NO_HOST_MEMORY;
    void *p = NULL;
    size_t rounded = (bytes + 63) / 64 * 64;
    gcl_sim_t *s = &ctx->inst->sim;
    if (s->phantom_base) {
        size_t at = atomic_fetch_add(&s->phantom_next, rounded ? rounded : 64);
        p = at + rounded <= s->phantom_size ? s->phantom_base + at : NULL;
    } else if (!(p = gcl_shmem_alloc(rounded)) && posix_memalign(&p, 64, rounded ? rounded : 64)) {
        p = NULL; /* shareable memory first (host-direct calls map it), the heap otherwise */
    }
    if (!p) {
        sim_mem_free(ipu->mem, id);
        return GCL_ERR_NO_HOST_MEMORY;
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
