/*
 * Optimizers of the weight update, and what one update costs on a GC200: vector work over the
 * weights, gradients and state at SRAM speed (sim/cost/bsp_cost.h), one compute set, the per-tensor
 * norms of the optimizers that take them, and the state's round trip to Streaming Memory when it
 * lives there. The operation counts are at the top of sim/src/cost/optimizer.c.
 */
#ifndef SIM_OPTIMIZER_H
#define SIM_OPTIMIZER_H

#include <stdint.h>

#include "sim/cost/bsp_cost.h"
#include "sim/device/device.h"
#include "sim/device/params.h"

typedef enum sim_optimizer {
    SIM_OPTIM_SGD = 0,
    SIM_OPTIM_MOMENTUM,
    SIM_OPTIM_ADAM,
    SIM_OPTIM_LAMB,
    SIM_OPTIM_LARS, /* momentum scaled per layer by a trust ratio (You et al. 2017) */
    SIM_OPTIM_COUNT
} sim_optimizer_t;

const char *sim_optimizer_name(sim_optimizer_t o);
int sim_optimizer_parse(const char *name); /* -1 when unknown */
/* State vectors per parameter: 0 (sgd), 1 (momentum, lars), 2 (adam, lamb). */
uint32_t sim_optimizer_states(sim_optimizer_t o);

/* One weight update of PARAMS parameters in TENSORS tensors. */
typedef struct sim_update {
    sim_optimizer_t optimizer;
    uint64_t params;  /* parameters this IPU updates (a shard, with sharded state) */
    uint32_t tensors; /* weight tensors (LAMB normalises each one) */
    uint32_t weight_bytes, grad_bytes, state_bytes; /* bytes of one value of each */
    int streaming; /* 1: the state lives in Streaming Memory and is read and written */
} sim_update_t;

/* The cost of update U: vector work over the weights, gradients and state at SRAM speed (and the
 * state's round trip to Streaming Memory when U->streaming), one compute set, plus two reduction
 * supersteps per tensor for the norms of LAMB's and LARS's trust ratios. Returns 0 or -EINVAL. */
int sim_update_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_update_t *u,
                    sim_cost_t *out);

#endif /* SIM_OPTIMIZER_H */
