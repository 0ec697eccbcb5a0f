/*
 * Superstep costs and vector work (sim/cost/bsp_cost.h).
 */
#include "sim/cost/bsp_cost.h"

#include <math.h>

void sim_cost_add(sim_cost_t *a, const sim_cost_t *b)
{
    a->compute = sim_time_add(a->compute, b->compute);
    a->exchange = sim_time_add(a->exchange, b->exchange);
    a->sync = sim_time_add(a->sync, b->sync);
    a->compute_sets += b->compute_sets;
}

sim_time_t sim_ps_of(double seconds)
{
    double ps = ceil(seconds * 1e12);

    return ps >= 1.8e19 ? SIM_TIME_MAX : (sim_time_t)ps;
}

void sim_vector_work(const sim_cost_params_t *cp, const sim_device_t *d, sim_precision_t p,
                     uint64_t values, double ops, uint32_t tensors, uint32_t bytes, uint32_t sets,
                     sim_cost_t *out)
{
    double v = (double)sim_ceil_div(values, d->tiles), clock = (double)d->clock_hz;
    double lanes = (double)cp->vector_lanes[p] * cp->vector_efficiency;
    double sram = (double)d->sram_bandwidth / (double)d->tiles;
    double t_ops = v * ops / (lanes * clock), t_mem = v * (double)bytes * tensors / sram;

    out->compute = sim_time_add(out->compute, sim_ps_of(t_ops > t_mem ? t_ops : t_mem));
    out->compute = sim_time_add(
        out->compute, (sim_time_t)sets * sim_device_cycles_of_gc200(d, cp->compute_set_overhead));
    out->sync =
        sim_time_add(out->sync, (sim_time_t)sets * sim_device_cycles_of_gc200(d, cp->tile_sync));
    out->compute_sets += sets;
}
