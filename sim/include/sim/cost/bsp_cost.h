/*
 * What a piece of IPU work costs, as Poplar runs it: bulk-synchronous supersteps, each a compute
 * set on every tile, a synchronisation of the 1472 tiles, and an exchange. sim_cost_t adds their
 * parts up; the layer cost model (sim/cost/ipu_cost.h), the matrix-product planner (sim/cost/ipu_gemm.h)
 * and the optimizer update (sim/cost/optimizer.h) fill it.
 *
 * Vector work of V values with o operations per value, reading r and writing w tensors of b
 * bytes per value, spread evenly over the T tiles:
 *     v = ceil(V / T) values per tile,
 *     compute = max(v o / (lanes x vector_efficiency), v b (r + w) / (SRAM bandwidth / T)) +
 *               compute-set overhead,
 * in tile-clock seconds, one compute set (one tile sync) unless stated.
 *
 * Durations are rounded up to whole picoseconds; the arithmetic is IEEE double with + - * / and
 * sqrt only (correctly rounded on every platform), so a cost is a pure function of its inputs.
 */
#ifndef SIM_BSP_COST_H
#define SIM_BSP_COST_H

#include <stdint.h>

#include "sim/device/device.h"
#include "sim/device/params.h"
#include "sim/base/time.h"

typedef struct sim_cost {
    sim_time_t compute;    /* AMP, vector and vertex-launch time of the busiest tile */
    sim_time_t exchange;   /* on-chip exchange (and streaming-memory traffic) */
    sim_time_t sync;       /* tile synchronisations */
    uint32_t compute_sets; /* supersteps */
} sim_cost_t;

static inline sim_time_t sim_cost_total(const sim_cost_t *c)
{
    return sim_time_add(sim_time_add(c->compute, c->exchange), c->sync);
}

/* Adds B to A. */
void sim_cost_add(sim_cost_t *a, const sim_cost_t *b);

/* SECONDS in whole picoseconds, rounded up (saturating). */
sim_time_t sim_ps_of(double seconds);

/* ceil(A / B) for B > 0. */
static inline uint64_t sim_ceil_div(uint64_t a, uint64_t b)
{
    return a / b + (a % b != 0);
}

/* Adds to OUT the vector work (see the top) of VALUES values with OPS operations each, reading
 * and writing TENSORS tensors of BYTES bytes per value, in SETS compute sets, at precision P's
 * vector width. */
void sim_vector_work(const sim_cost_params_t *cp, const sim_device_t *d, sim_precision_t p,
                     uint64_t values, double ops, uint32_t tensors, uint32_t bytes, uint32_t sets,
                     sim_cost_t *out);

#endif /* SIM_BSP_COST_H */
