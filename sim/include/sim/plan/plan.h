/*
 * A training job's plan on the simulated pod: the model's layers split into pipeline stages,
 * what each stage costs per micro-batch, what it sends to the next stage, and what it holds in
 * its IPU's memory.
 *
 * Stages and fragments. A stage is one IPU of a replica. Its layers are a contiguous run of the
 * model (the balancing rule, or the user's --pipeline-splits), or, with a placement, the
 * attention and feed-forward sublayers the placement counts for it (IPU 0 also holds the
 * embedding and the heads, which share the word embedding's weights, as in Graphcore's BERT).
 * A fragment is a forward pipeline stage: the layers of one IPU that run one after another.
 * Without a placement the fragments are the stages; with one, the heads are a last fragment, on
 * IPU 0 again (the data returns to IPU 0 for them). Under PopART's schedule a step of A
 * micro-batches over P fragments takes A + 2P - 2 cycles (sim/schedule/pipeline.h).
 *
 * A placement's counts are charged as they are: IPU k holds att[k] attention and ffn[k]
 * feed-forward sublayers, assigned in model order kind by kind. Graphcore's published
 * placements (4/5 on IPU 0: 4 attention, 5 feed-forward) cannot all follow each other in IPU
 * order; the plan does not check that they can: each IPU's work and memory are those of its
 * counts, and the pipeline runs its IPUs in order.
 *
 * Memory of stage s (one IPU), against the GC200's 1472 x 624 KiB = 940,572,672 bytes:
 *   weights      every layer's weights (tied ones too) in the layer's precision
 *   gradients    an accumulator of the same count, in the gradient precision
 *   optimizer    the optimizer's state vectors of the stage's parameters (not of tied weights:
 *                their state stays with the weights' owner), f32 (4 bytes) each: on chip,
 *                divided by the replicas when sharded, none when in Streaming Memory
 *   stash        what each fragment keeps per micro-batch in flight (sim_pipe_in_flight()):
 *                recompute none: every layer's stored values (sim_layer_stored_values(); a
 *                tensor kept by a one-input elementwise layer is not kept again by the layer
 *                after it, which reads the same tensor); checkpoints: the stage's input and
 *                every checkpoint layer's output; stage: the stage's input
 *   activations  the working set of one micro-batch: with recomputation, the stored values of
 *                the largest recomputed segment (checkpoints) or of the whole stage (stage);
 *                and the largest layer's input plus output
 *   code         code_bytes_per_tile x 1472, plus code_bytes_per_layer x 1472 per layer
 * Headroom is capacity minus the total (negative when the stage does not fit). When it does
 * not fit, the overflowing layer is the first at which the running sum, taken layer by layer
 * (each layer's weights, gradients, state, code and stash, after the stage's fixed part), passes
 * the capacity.
 */
#ifndef SIM_PLAN_H
#define SIM_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device/device.h"
#include "sim/cost/ipu_cost.h"
#include "sim/model/model_def.h"
#include "sim/schedule/pipeline.h"
#include "sim/schedule/placement.h"

typedef struct sim_plan_params {
    int stages;            /* pipeline stages = IPUs per replica */
    int replicas;          /* data-parallel replicas (sharded state is split over them) */
    uint64_t micro_batch;  /* samples per micro-batch; a multiple of samples_per_unit */
    uint32_t accumulation; /* micro-batches per step */
    sim_schedule_t schedule;
    sim_recompute_t recompute;
    sim_optimizer_t optimizer;
    sim_state_place_t state;
    sim_precision_t grad_prec; /* the gradient accumulator and all-reduce */
    const uint32_t *splits;    /* first layers of stages 1..K-1, or NULL for the balancing rule */
    const sim_placement_t *placement; /* or NULL; not with SPLITS; PopART's schedule only */
} sim_plan_params_t;

typedef struct sim_stage_mem {
    uint64_t weights, gradients, optimizer, stash, activations, code;
    uint64_t total, capacity;
    int64_t headroom;
    int64_t overflow_layer; /* the layer at which the stage overflows, or -1 */
} sim_stage_mem_t;

typedef struct sim_stage {
    uint32_t first, last;     /* its first layer and one past its last (a placement's IPU holds
                                 only some of the layers between) */
    uint32_t layers;          /* layers it holds */
    uint64_t weights;         /* values: the gradient all-reduce's count (tied weights too) */
    uint64_t params;          /* values the optimizer updates (a tied layer's weights are
                                 updated, and their state kept, with the layer they belong to) */
    uint32_t tensors;         /* weight tensors */
    uint64_t out_values;      /* values per micro-batch sent to the next stage */
    uint32_t in_flight;       /* micro-batches held at once */
    sim_cost_t fwd, bwd, rec; /* per micro-batch: forward, backward, recomputation */
    sim_stage_mem_t mem;
} sim_stage_t;

typedef struct sim_plan {
    sim_plan_params_t p;
    uint64_t units; /* units per micro-batch */
    int num_stages;
    sim_stage_t *stages;
    int num_fragments;
    sim_fragment_t *fragments;
    uint32_t *order;                   /* [num_layers]: layer indices, fragment by fragment */
    sim_cost_t *layer_fwd, *layer_bwd; /* [num_layers]: each layer's passes per micro-batch */
} sim_plan_t;

/* Builds the plan of model M on device D with cost constants CP. Checks the parameters (one line
 * in ERR: "--micro-batch 3: bert-large packs 2 samples per unit; ...", a split that is not
 * increasing, more stages than layers, a placement whose length is not the stage count or whose
 * counts do not sum to the model's sublayers). A stage that does not fit is not an error here:
 * see sim_plan_overflow(). Returns 0, -EINVAL or -ENOMEM. */
int sim_plan_build(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                   const sim_plan_params_t *p, sim_plan_t *out, char *err, size_t errlen);
void sim_plan_free(sim_plan_t *plan);

/* Each layer's forward and backward per micro-batch of UNITS units (what sim_plan_build costs
 * first), into FWD and BWD (M's layer count each). Returns 0, or what sim_layer_cost returns. */
int sim_plan_layer_costs(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                         uint64_t units, sim_cost_t *fwd, sim_cost_t *bwd);

/* sim_plan_build with the layer costs of sim_plan_layer_costs for P's units given (copied):
 * the same plan, without costing every layer again (a planner builds many plans of one model). */
int sim_plan_build_costed(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                          const sim_plan_params_t *p, const sim_cost_t *fwd, const sim_cost_t *bwd,
                          sim_plan_t *out, char *err, size_t errlen);

/* The first stage that does not fit, or -1. */
int sim_plan_overflow(const sim_plan_t *plan);

/* The smallest stage count above P->stages (up to MAX_STAGES) at which every stage fits with the
 * balancing rule and the same replicas (no placement), or -1 when none does. */
int sim_plan_min_stages(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                        const sim_plan_params_t *p, int max_stages);

/* Which stage counts K from 1 to MAX_STAGES (and at most the model's layers) fit with the
 * balancing rule and P's replicas, micro-batch and options (no splits, no placement):
 * FITS[K] = 1 or 0, FITS of MAX_STAGES + 1 entries. Fewer stages need not fit where more do, nor
 * the other way round: more stages hold fewer layers each but stash more micro-batches. Returns
 * how many fit, or -1 when the layers could not be costed. */
int sim_plan_fitting_stages(const sim_model_t *m, const sim_cost_params_t *cp,
                            const sim_device_t *d, const sim_plan_params_t *p, int max_stages,
                            unsigned char *fits);

/* "stage counts that fit: 1-4, 6, 13-64" of FITS (sim_plan_fitting_stages), or "no stage count
 * up to MAX_STAGES fits". */
void sim_plan_fit_text(const unsigned char *fits, int max_stages, char *buf, size_t len);

/* One line for a plan whose stage S overflows: "stage 1 (layers l0_qkv .. l23_ln2) needs
 * 1234567890 bytes of 940572672: 293995218 over, from layer l17_ffn1 on (weights ...); FIT",
 * FIT being sim_plan_fit_text's line (NULL or "": nothing more). */
void sim_plan_overflow_text(const sim_plan_t *plan, const sim_model_t *m, int s, const char *fit,
                            char *buf, size_t len);

/* Steps of GLOBAL_BATCH samples to reach SAMPLES (rounded up), times STEP_S seconds, plus
 * OVERHEAD_S: the predicted time to train, in seconds. */
double sim_time_to_train(double step_s, uint64_t global_batch, uint64_t samples, double overhead_s);

#endif /* SIM_PLAN_H */
