/*
 * The simulated pod behind libgcl: the topology, and per local IPU its clock and statistics,
 * simulated SRAM and trace. Collectives charge time through the executor (simcost.c); programs
 * charge compute and allocate memory through gcl/sim.h.
 */
#ifndef GCL_SIMGLUE_H
#define GCL_SIMGLUE_H

#include <stdatomic.h>

#include "gcl/status.h"
#include "sim/sim.h"

struct gcl_instance;
struct gcl_comm;
struct gcl_exec_s;

typedef struct {
    void *ptr;
    uint64_t id;
} gcl_sim_alloc_t;

/* One local IPU's simulated state; it lives as long as the instance (clocks run across
 * gcl_run calls). */
typedef struct {
    sim_ipu_stats_t stats;
    sim_mem_t *mem;
    sim_trace_t *trace; /* NULL unless GCL_SIM_TRACE is set */
    gcl_sim_alloc_t *allocs;
    int nallocs, cap;
} gcl_sim_ipu_t;

typedef struct {
    sim_topology_t *topo;
    const sim_device_t *dev;
    gcl_sim_ipu_t *ipus; /* [num_local_ipus] */
    /* Phantom mode: gcl_ipu_malloc hands out addresses in a reserved, inaccessible range, so
     * allocations have identities but no memory, and collectives know not to touch them. */
    char *phantom_base;
    size_t phantom_size;
    _Atomic size_t phantom_next;
} gcl_sim_t;

/* Whether P is a phantom allocation (holds no data). */
static inline int gcl_sim_is_phantom(const gcl_sim_t *s, const void *p)
{
    return s->phantom_base && (const char *)p >= s->phantom_base &&
           (const char *)p < s->phantom_base + s->phantom_size;
}

/* Opens the topology (GCL_TOPOLOGY, POPDIST_TOPOLOGY or the smallest preset that holds the job)
 * and sets up every local IPU. Errors (an unknown topology, a job larger than the pod) go to
 * inst->error. */
gcl_status_t gcl_sim_init(struct gcl_instance *inst);
/* Writes GCL_SIM_REPORT and GCL_SIM_TRACE, then frees everything. */
void gcl_sim_fini(struct gcl_instance *inst);

/* Per-communicator cache of link contention for one call shape (simcost.c). */
struct gcl_simcache;
void gcl_simcache_free(struct gcl_simcache *c);

#endif /* GCL_SIMGLUE_H */
