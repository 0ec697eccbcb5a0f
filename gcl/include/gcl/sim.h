/*
 * Simulated time and memory: what every run would cost on a real pod.
 *
 * Each simulated IPU keeps a clock, charged by the cost model of sim/ (a GC200 device, IPU-Links
 * inside an IPU-Link domain, GW-Links between domains): collectives and point-to-point messages
 * charge link time and synchronisation, and a program charges its compute with
 * gcl_charge_compute. Simulated times are a pure function of the program and configuration:
 * bitwise the same from run to run, whatever the host's load.
 *
 * The pod is GCL_TOPOLOGY (or poprun --topology): a preset (M2000, POD16, POD64, POD128, POD256)
 * or a topology file; by default the smallest preset that holds the job's IPUs. Global IPU g of
 * the job is IPU g of the pod.
 *
 * GCL_SIM_REPORT=PATH writes a JSON report per instance at gcl_finalize (%i in PATH becomes the
 * instance index); GCL_SIM_TRACE=PATH writes a Chrome trace (open it in https://ui.perfetto.dev).
 */
#ifndef GCL_SIM_H
#define GCL_SIM_H

#include <stddef.h>

#include "gcl/gcl.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Allocates BYTES of this IPU's simulated SRAM (about 900 MB on a GC200), backed by host memory
 * that *OUT points to (64-byte aligned). In phantom mode the pointer names an allocation that
 * holds no data: collectives given it move sizes only, and touching it faults. LABEL
 * names the allocation in reports. Returns GCL_OK, GCL_ERR_OUT_OF_MEMORY when the IPU's SRAM
 * would overflow (gcl_ctx_last_error then lists what is allocated on the IPU, largest first),
 * GCL_ERR_NO_HOST_MEMORY, or GCL_ERR_INVALID_ARGUMENT.
 */
gcl_status_t gcl_ipu_malloc(gcl_ctx_t ctx, size_t bytes, const char *label, void **out);
/* Frees memory from gcl_ipu_malloc on the same IPU (NULL is fine). */
void gcl_ipu_free(gcl_ctx_t ctx, void *ptr);

/*
 * Charges compute to this IPU's clock: FLOPS floating-point operations at the precision of TYPE
 * (f16/bf16 run at the f16 peak, everything else at the f32 peak) that move BYTES to and from
 * tile memory. The time is the roofline max(flops / peak, bytes / SRAM bandwidth). NAME labels
 * the slice in the trace. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT.
 */
gcl_status_t gcl_charge_compute(gcl_ctx_t ctx, const char *name, double flops, double bytes,
                                gcl_dtype_t type);

/* This IPU's simulated clock, in seconds since the start of the job. */
double gcl_sim_time(gcl_ctx_t ctx);

typedef struct {
    double total_s;                                   /* the clock */
    double compute_s;                                 /* charged compute */
    double exchange_s;                                /* moving data over IPU-Links and GW-Links */
    double sync_s;                                    /* synchronisation */
    double idle_s;                                    /* waiting for peers */
    size_t memory_used, memory_peak, memory_capacity; /* simulated SRAM, bytes */
} gcl_sim_stats_t;

/* This IPU's simulated statistics so far. */
void gcl_sim_stats(gcl_ctx_t ctx, gcl_sim_stats_t *out);

/* The simulated pod's name ("POD16", or the file's name) and its number of IPUs. */
const char *gcl_sim_topology(gcl_instance_t inst);
int gcl_sim_topology_ipus(gcl_instance_t inst);

#ifdef __cplusplus
}
#endif

#endif /* GCL_SIM_H */
