/*
 * Matrix products on the GC200's tiles: the cost of one split of a product over the tiles, and
 * the planner that picks the cheapest split.
 *
 * Products (matmul, conv as an implicit matrix product, the two products of attention) are
 * planned as Poplar's planner does, in spirit: the m x k x n product (g independent ones for
 * attention heads) is split over p_g x p_m x p_n x p_k tiles; each tile multiplies a
 * ceil(m/p_m) x ceil(k/p_k) block by a ceil(k/p_k) x ceil(n/p_n) block, with k padded to the
 * AMP's input-channel group (16 values for f16, 8 for f32; for a conv, the input channels of
 * each kernel position are padded) and n to its output group (4); it receives its activation
 * block (for a conv, only the input pixels its output block needs), the weight block too when
 * the weights are replicated over p_m > 1 row blocks (weights live once, spread over the tiles),
 * and, when k is split (p_k > 1), the partial sums it reduces in a second compute set. The plan
 * is the split with the least total time; ties keep the first in the search order (p_k, then
 * p_m ascending). The AMP runs at amp_efficiency of its peak (250 TFLOPS f16, 62.5 f32). The
 * formulas and a worked example are at the top of sim/src/cost/ipu_gemm.c.
 */
#ifndef SIM_IPU_GEMM_H
#define SIM_IPU_GEMM_H

#include <stdint.h>

#include "sim/cost/bsp_cost.h"
#include "sim/device/device.h"
#include "sim/device/params.h"

/* One matrix product: G independent products of (M x K) by (K x N). */
typedef struct sim_gemm {
    uint64_t g, m, k, n;
    uint64_t k_padded;       /* K after AMP padding: sim_gemm_pad_k(), or per kernel position
                                for a conv */
    uint32_t kernel, stride; /* a conv's kernel side and stride (0 for a plain product): a tile
                                then receives only the input pixels its output block reads */
    int b_resident;          /* 1: the K x N operand is weights, stored on the tiles that use it */
    int spatial;             /* 1: a convolution (conv_efficiency multiplies amp_efficiency) */
    sim_precision_t prec;
} sim_gemm_t;

/* One split of a product over the tiles, and what it costs. */
typedef struct sim_gemm_plan {
    uint32_t pg, pm, pn, pk;
    sim_cost_t cost;
} sim_gemm_plan_t;

/* K padded to the AMP's input-channel group of precision P. */
uint64_t sim_gemm_pad_k(const sim_cost_params_t *cp, sim_precision_t p, uint64_t k);

/* The cost of product G split as PG x PM x PN x PK (the closed form at the top of ipu_gemm.c).
 * Returns 0, or -EINVAL when the split uses more tiles than D has or a factor is 0. */
int sim_gemm_cost_split(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                        uint32_t pg, uint32_t pm, uint32_t pn, uint32_t pk, sim_cost_t *out);

/* The planner: the cheapest split over p_g = min(g, tiles), p_k in {1, 2, 4, ..., 64} and p_m in
 * a geometric ladder of 1..tiles (1..16, then steps of a fifth), p_n as large as the tiles allow.
 * Returns 0 or -EINVAL. */
int sim_gemm_plan(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                  sim_gemm_plan_t *out);

#endif /* SIM_IPU_GEMM_H */
