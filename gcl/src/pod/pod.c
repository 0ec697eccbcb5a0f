/* The simulated pod behind libgcl: setting it up, reports and traces; see pod.h. */
#include "pod/pod.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "base/alloc.h"
#include "base/log.h"
#include "job/shmem.h"
#include "pod/cache.h"

static gcl_status_t open_topology(gcl_sim_t *s, const gcl_sim_setup_t *w, gcl_err_t *e)
{
    const char *spec = w->params->topology[0] ? w->params->topology : w->pd->topology;
    char err[256];
    if (!spec || !spec[0]) {
        spec = sim_topology_smallest_preset(w->job->num_ipus);
        if (!spec) {
            return gcl_err_set(e, GCL_ERR_INVALID_ARGUMENT,
                               "the job has %d IPUs: more than the largest preset pod (POD256) "
                               "holds; describe a larger pod in a topology file (GCL_TOPOLOGY)",
                               w->job->num_ipus);
        }
    }
    if (sim_topology_open(spec, &s->topo, err, sizeof err) != 0) {
        return gcl_err_set(e, GCL_ERR_INVALID_ARGUMENT, "simulated topology: %s", err);
    }
    if (sim_topology_num_ipus(s->topo) < w->job->num_ipus) {
        return gcl_err_set(
            e, GCL_ERR_INVALID_ARGUMENT,
            "the job has %d IPUs (%d replicas x %d), but the simulated pod %s has %d",
            w->job->num_ipus, w->job->num_replicas, w->job->ipus_per_replica,
            sim_topology_name(s->topo), sim_topology_num_ipus(s->topo));
    }
    s->dev = sim_topology_device(s->topo);
    return GCL_OK;
}

gcl_status_t gcl_sim_init(gcl_sim_t *s, const gcl_sim_setup_t *w, gcl_err_t *e)
{
    GCL_CHECK(open_topology(s, w, e));
    s->ipus = gcl_calloc((size_t)w->job->num_local_ipus, sizeof *s->ipus);
    if (!s->ipus || gcl_simcache_create(&s->cache) != GCL_OK)
        return GCL_ERR_NO_HOST_MEMORY;
    for (int k = 0; k < w->job->num_local_ipus; k++) {
        gcl_sim_ipu_t *ipu = &s->ipus[k];
        ipu->stats = (sim_ipu_stats_t)SIM_IPU_STATS_INIT;
        if (sim_mem_create(sim_device_memory(s->dev), &ipu->mem) != 0)
            return GCL_ERR_NO_HOST_MEMORY;
        if (w->params->sim_trace[0] &&
            sim_trace_create((size_t)w->params->sim_trace_events, &ipu->trace) != 0)
            return GCL_ERR_NO_HOST_MEMORY;
    }
    if (w->phantom) {
        /* Address space only: PROT_NONE and no reservation, so it costs no memory. */
        s->phantom_size = (size_t)1 << 40;
        s->phantom_base = gcl_mmap(NULL, s->phantom_size, PROT_NONE,
                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (s->phantom_base == MAP_FAILED) {
            s->phantom_base = NULL;
            return GCL_ERR_NO_HOST_MEMORY;
        }
    }
    GCL_INFO(GCL_SUB_SIM, "simulated pod %s: %d IPUs in %d IPU-Link domain(s); the job uses %d",
             sim_topology_name(s->topo), sim_topology_num_ipus(s->topo),
             sim_topology_num_ilds(s->topo), w->job->num_ipus);
    return GCL_OK;
}

/* Writes the report or trace at PATTERN (with %i expanded) for every local IPU. */
static void write_output(gcl_sim_t *s, const gcl_sim_setup_t *w, const char *pattern, int trace)
{
    char path[512];
    if (sim_report_expand_path(pattern, w->job->instance_index, path, sizeof path) != 0) {
        GCL_WARN(GCL_SUB_SIM, "cannot expand the path %s", pattern);
        return;
    }
    sim_report_ipu_t *ipus = gcl_calloc((size_t)w->job->num_local_ipus, sizeof *ipus);
    if (!ipus)
        return;
    for (int k = 0; k < w->job->num_local_ipus; k++)
        ipus[k] = (sim_report_ipu_t){w->job->first_ipu + k, &s->ipus[k].stats,
                                     sim_mem_peak(s->ipus[k].mem), sim_mem_capacity(s->ipus[k].mem),
                                     s->ipus[k].trace};
    sim_report_info_t info = SIM_REPORT_INFO_INIT;
    info.topology = sim_topology_name(s->topo);
    info.device = s->dev;
    info.instance = w->job->instance_index;
    info.num_instances = w->job->num_instances;
    int rc = trace ? sim_trace_write_json_path(path, &info, ipus, (size_t)w->job->num_local_ipus)
                   : sim_report_write_json_path(path, &info, ipus, (size_t)w->job->num_local_ipus);
    if (rc != 0)
        GCL_WARN(GCL_SUB_SIM, "cannot write the simulated %s to %s: %s", trace ? "trace" : "report",
                 path, strerror(-rc));
    else
        GCL_INFO(GCL_SUB_SIM, "wrote the simulated %s to %s", trace ? "trace" : "report", path);
    free(ipus);
}

void gcl_sim_fini(gcl_sim_t *s, const gcl_sim_setup_t *w)
{
    if (s->ipus && s->topo) {
        if (w->params->sim_report[0])
            write_output(s, w, w->params->sim_report, 0);
        if (w->params->sim_trace[0])
            write_output(s, w, w->params->sim_trace, 1);
    }
    for (int k = 0; s->ipus && k < w->job->num_local_ipus; k++) {
        gcl_sim_ipu_t *ipu = &s->ipus[k];
        for (int i = 0; i < ipu->nallocs; i++)
            if (!gcl_sim_is_phantom(s, ipu->allocs[i].ptr) && !gcl_shmem_free(ipu->allocs[i].ptr))
                free(ipu->allocs[i].ptr);
        free(ipu->allocs);
        free(ipu->feed);
        sim_mem_destroy(ipu->mem);
        sim_trace_destroy(ipu->trace);
    }
    free(s->ipus);
    gcl_simcache_destroy(s->cache);
    sim_topology_free(s->topo);
    if (s->phantom_base)
        munmap(s->phantom_base, s->phantom_size);
    memset(s, 0, sizeof *s);
}
