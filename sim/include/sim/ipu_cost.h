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
 * planned as Poplar's planner does, in spirit: the m x k x n product (g independent ones for
 * attention heads) is split over p_g x p_m x p_n x p_k tiles; each tile multiplies a
 * ceil(m/p_m) x ceil(k/p_k) block by a ceil(k/p_k) x ceil(n/p_n) block, with k padded to the
 * AMP's input-channel group (16 values for f16, 8 for f32; for a conv, the input channels of
 * each kernel position are padded) and n to its output group (4); it receives its activation
 * block (for a conv, only the input pixels its output block needs), the weight block too when
 * the weights are replicated over p_m > 1 row blocks (weights live once, spread over the tiles),
 * and, when k is split (p_k > 1), the partial sums it reduces in a second compute set. The plan
 * is the split with the least total time; ties keep the first in the search order (p_k, then
 * p_m ascending). The AMP runs at amp_efficiency of its peak (250 TFLOPS f16, 62.5 f32).
 *
 * Backward of a product is two products: the input gradient (m x n x k, skipped for a layer
 * without input_grad) and the weight gradient (k x m x n, both operands activations). Other
 * layers' backward passes cost about their forward's vector work again (see ipu_cost.c).
 *
 * Every constant is in sim_cost_params_t with its source or "assumed" (sim/src/params.c and
 * docs/validation.md list them with their ranges). All durations are rounded up to whole
 * picoseconds; the arithmetic is IEEE double with + - * / and sqrt only (correctly rounded on
 * every platform), so a cost is a pure function of its inputs.
 */
#ifndef SIM_IPU_COST_H
#define SIM_IPU_COST_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device.h"
#include "sim/layer.h"
#include "sim/time.h"

typedef struct sim_cost_params {
    /* Compute (fitted: docs/validation.md says to what). */
    double amp_efficiency;  /* fraction of the AMP peak reached inside a product's compute set */
    double conv_efficiency; /* multiplies amp_efficiency for convolutions with kernels above 1x1 */
    /* Compute (assumed). */
    double vector_efficiency;   /* fraction of the vector units' peak in elementwise work */
    double exchange_efficiency; /* fraction of the exchange bandwidth a compiled exchange gets */
    sim_time_t compute_set_overhead; /* ps: launching one compute set's vertices on every tile */
    sim_time_t tile_sync;            /* ps: one synchronisation of the 1472 tiles */
    uint32_t amp_k_group[SIM_PREC_COUNT];  /* AMP input-channel group (k padding) per precision */
    uint32_t amp_n_group;                  /* AMP output-channel group (n padding) */
    uint32_t vector_lanes[SIM_PREC_COUNT]; /* vector operations per tile per cycle */
    /* Memory (assumed). */
    uint64_t code_bytes_per_tile;  /* code, stacks and exchange code every program has */
    uint64_t code_bytes_per_layer; /* per tile, per layer: its vertices, descriptors, exchanges */
    /* Host, gateway and streaming memory. */
    int host_servers;             /* host servers feeding the job; 0: one per 16 IPUs */
    uint64_t host_nic_bandwidth;  /* bytes/s of one host server's RoCE NIC */
    uint64_t gateway_bandwidth;   /* bytes/s into one IPU-M2000 (its RoCE NIC) */
    uint32_t prefetch_depth;      /* micro-batches the host may prepare ahead */
    uint64_t streaming_bandwidth; /* bytes/s between one IPU and its Streaming Memory */
} sim_cost_params_t;

/* The defaults (calibrated; every one sourced or assumed in sim/src/params.c). */
void sim_cost_params_default(sim_cost_params_t *cp);

typedef struct sim_cost {
    sim_time_t compute;    /* AMP, vector and vertex-launch time of the busiest tile */
    sim_time_t exchange;   /* on-chip exchange */
    sim_time_t sync;       /* tile synchronisations */
    uint32_t compute_sets; /* supersteps */
} sim_cost_t;

static inline sim_time_t sim_cost_total(const sim_cost_t *c)
{
    return sim_time_add(sim_time_add(c->compute, c->exchange), c->sync);
}

/* Adds B to A. */
void sim_cost_add(sim_cost_t *a, const sim_cost_t *b);

/* The cost of PASS of layer L over UNITS units (a micro-batch) on device D. Returns 0, or
 * -EINVAL for a layer sim_layer_check() refuses or UNITS == 0. */
int sim_layer_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                   sim_pass_t pass, uint64_t units, sim_cost_t *out);

/* One matrix product: G independent products of (M x K) by (K x N). */
typedef struct sim_gemm {
    uint64_t g, m, k, n;
    uint64_t k_padded;       /* K after AMP padding: sim_gemm_pad_k(), or per kernel position
                                for a conv */
    uint32_t kernel, stride; /* a conv's kernel side and stride (0 for a plain product): a tile
                                then receives only the input pixels its output block reads */
    int b_resident;          /* 1: the K x N operand is weights, stored on the tiles that use it */
    int spatial;             /* 1: a conv with a kernel above 1x1 (conv_efficiency applies) */
    sim_precision_t prec;
} sim_gemm_t;

/* One split of a product over the tiles, and what it costs. */
typedef struct sim_gemm_plan {
    uint32_t pg, pm, pn, pk;
    sim_cost_t cost;
} sim_gemm_plan_t;

/* K padded to the AMP's input-channel group of precision P. */
uint64_t sim_gemm_pad_k(const sim_cost_params_t *cp, sim_precision_t p, uint64_t k);

/* The cost of product G split as PG x PM x PN x PK (the closed form at the top). Returns 0, or
 * -EINVAL when the split uses more tiles than D has or a factor is 0. */
int sim_gemm_cost_split(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                        uint32_t pg, uint32_t pm, uint32_t pn, uint32_t pk, sim_cost_t *out);

/* The planner: the cheapest split over p_g = min(g, tiles), p_k in {1, 2, 4, ..., 64} and p_m in
 * a geometric ladder of 1..tiles (1..16, then steps of a fifth), p_n as large as the tiles allow.
 * Returns 0 or -EINVAL. */
int sim_gemm_plan(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                  sim_gemm_plan_t *out);

/* Optimizers of the weight update. */
typedef enum sim_optimizer {
    SIM_OPTIM_SGD = 0,
    SIM_OPTIM_MOMENTUM,
    SIM_OPTIM_ADAM,
    SIM_OPTIM_LAMB,
    SIM_OPTIM_COUNT
} sim_optimizer_t;

const char *sim_optimizer_name(sim_optimizer_t o);
int sim_optimizer_parse(const char *name); /* -1 when unknown */
/* State vectors per parameter: 0 (sgd), 1 (momentum), 2 (adam, lamb). */
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
 * supersteps per tensor for LAMB's norms. Returns 0 or -EINVAL. */
int sim_update_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_update_t *u,
                    sim_cost_t *out);

#endif /* SIM_IPU_COST_H */
