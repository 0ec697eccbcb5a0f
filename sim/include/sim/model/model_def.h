/*
 * The model container: an ordered list of layers (sim/cost/layer.h) and how the model trains (its
 * optimizer, recomputation and where the optimizer state lives), with the totals over its
 * layers. The built-in models (sim/model/model_builtin.h) and model files (sim/model/model_file.h) fill
 * one; sim/model/model.h opens either by name.
 */
#ifndef SIM_MODEL_DEF_H
#define SIM_MODEL_DEF_H

#include <stddef.h>
#include <stdint.h>

#include "sim/cost/layer.h"
#include "sim/cost/optimizer.h"

/* How activations are kept for the backward pass. */
typedef enum sim_recompute {
    SIM_RECOMPUTE_NONE = 0,    /* every layer's stored values, per micro-batch in flight */
    SIM_RECOMPUTE_CHECKPOINTS, /* only checkpoint layers' outputs; each segment recomputed
                                  just before its backward */
    SIM_RECOMPUTE_STAGE,       /* only the stage's input; the whole stage recomputed */
    SIM_RECOMPUTE_COUNT
} sim_recompute_t;

/* Where the optimizer state lives. */
typedef enum sim_state_place {
    SIM_STATE_ONCHIP = 0, /* in every replica's tile memory */
    SIM_STATE_SHARDED,    /* on chip, split over the replicas (replicated tensor sharding):
                             gradients are reduce-scattered and weights all-gathered */
    SIM_STATE_STREAMING,  /* in Streaming Memory, read and written at every update */
    SIM_STATE_STREAMING_SHARDED, /* in Streaming Memory, each replica reading and writing its
                                    shard (replicated tensor sharding of off-chip state) */
    SIM_STATE_COUNT
} sim_state_place_t;

#define SIM_MODEL_NAME_MAX   64
#define SIM_MODEL_MAX_LAYERS 100000

typedef struct sim_model {
    char name[SIM_MODEL_NAME_MAX];
    sim_layer_t *layers;
    size_t num_layers, cap;
    double samples_per_unit;     /* samples one unit holds (packing: sequences per pack, a
                                    fraction allowed); default 1 */
    uint64_t input_bytes;        /* host -> IPU bytes per sample */
    uint64_t host_samples_per_s; /* samples/s one host server prepares (0: not limiting) */
    uint64_t dataset_samples;    /* samples per epoch, 0 when unknown */
    sim_optimizer_t optimizer;   /* defaults of a run */
    sim_recompute_t recompute;
    sim_state_place_t state;
    uint32_t pin_first;      /* layers [0, pin_first) alone on stage 0 ... */
    uint32_t pin_min_stages; /* ... when there are at least this many stages */
} sim_model_t;

/* An empty model called NAME (momentum, no recomputation, on-chip state). */
int sim_model_init(sim_model_t *m, const char *name);
void sim_model_free(sim_model_t *m);
/* Appends a copy of L. Returns 0, -ENOMEM, or -E2BIG past SIM_MODEL_MAX_LAYERS. */
int sim_model_add(sim_model_t *m, const sim_layer_t *l);

/* Totals over the layers: parameters (tied weights once), forward multiply-adds per sample
 * (the model's FLOPs per sample are twice this), weight tensors. */
uint64_t sim_model_params(const sim_model_t *m);
double sim_model_macs_per_sample(const sim_model_t *m);
uint32_t sim_model_tensors(const sim_model_t *m, size_t first, size_t last);

const char *sim_recompute_name(sim_recompute_t r);
int sim_recompute_parse(const char *name); /* -1 when unknown */
const char *sim_state_place_name(sim_state_place_t s);
int sim_state_place_parse(const char *name); /* -1 when unknown */

#endif /* SIM_MODEL_DEF_H */
