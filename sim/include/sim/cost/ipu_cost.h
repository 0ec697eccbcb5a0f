/*
 * The per-layer IPU cost model: what one layer, or one optimizer update, costs on a GC200.
 *
 * Poplar runs a program as a sequence of bulk-synchronous supersteps: every tile computes (a
 * compute set), all 1472 tiles synchronise, then they exchange data over the on-chip exchange.
 * A layer is a few such supersteps, and its time is the sum of
 *
 *   compute   the busiest tile's work: AMP multiply-adds for matmul, conv and attention products,
 *             vector operations (or SRAM traffic, whichever is slower) for the rest, plus a
 *             fixed vertex overhead per compute set;
 *   exchange  the busiest tile's incoming bytes at its share of the 8 TB/s exchange;
 *   sync      one tile synchronisation per compute set.
 *
 * Products (matmul, conv as an implicit matrix product, the two products of attention) are
 * planned over the tiles by sim/cost/ipu_gemm.h; the rest is vector work (sim/cost/bsp_cost.h).
 *
 * Backward of a product is two products: the input gradient (m x n x k, skipped for a layer
 * without input_grad) and the weight gradient (k x m x n, both operands activations). Other
 * layers' backward passes cost about their forward's vector work again (see ipu_cost.c).
 *
 * Every constant is in sim_cost_params_t with its source or "assumed" (sim/device/params.h,
 * sim/src/device/params.c and docs/validation.md list them with their ranges). This header is the front
 * of the cost model: it includes the cost container, the product planner and the optimizers.
 */
#ifndef SIM_IPU_COST_H
#define SIM_IPU_COST_H

#include <stddef.h>
#include <stdint.h>

#include "sim/cost/bsp_cost.h"
#include "sim/device/device.h"
#include "sim/cost/ipu_gemm.h"
#include "sim/cost/layer.h"
#include "sim/cost/optimizer.h"
#include "sim/device/params.h"
#include "sim/base/time.h"

/* The cost of PASS of layer L over UNITS units (a micro-batch) on device D. Returns 0, or
 * -EINVAL for a layer sim_layer_check() refuses or UNITS == 0. */
int sim_layer_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                   sim_pass_t pass, uint64_t units, sim_cost_t *out);

#endif /* SIM_IPU_COST_H */
