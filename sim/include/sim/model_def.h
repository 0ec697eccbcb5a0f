/*
 * Models: an ordered list of layers (sim/layer.h) and how the model trains.
 *
 * Built in:
 *   resnet50     ResNet-50 v1.5 at 224 x 224 (the stride-2 of each down-sampling bottleneck in
 *                its 3x3 convolution, as in the MLPerf reference): 25,557,032 parameters and
 *                4.09 G multiply-adds (8.2 GFLOP) per image forward. conv1 computes no input
 *                gradient. Checkpoints at every bottleneck's output. Momentum SGD, uint8 images
 *                from the host (150,528 bytes each), ImageNet's 1,281,167 training images.
 *   bert-large   BERT-Large pre-training: embeddings (word 30522, position 512, type 2), 24
 *                encoder layers of hidden 1024, 16 heads, FFN 4096, and both pre-training heads
 *                (pooler and next-sentence, and the masked-LM transform and decoder, whose
 *                weights are the word embedding's): 336,226,108 parameters. At sequence length
 *                128 one unit is one sequence with 20 masked predictions; at 512 one unit is a
 *                pack of 512 tokens holding 2 sequences on average (packed BERT), with 76
 *                predictions. Checkpoints at every encoder layer's output. LAMB, with the
 *                embedding pinned alone on stage 0 when there are 4 or more stages (as
 *                Graphcore's MLPerf runs place it).
 *
 * Model files: the format is in sim/README.md ("Model files") and model_file.c.
 */
#ifndef SIM_MODEL_DEF_H
#define SIM_MODEL_DEF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/ipu_cost.h"
#include "sim/layer.h"

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
    SIM_STATE_COUNT
} sim_state_place_t;

#define SIM_MODEL_NAME_MAX   64
#define SIM_MODEL_MAX_LAYERS 100000

typedef struct sim_model {
    char name[SIM_MODEL_NAME_MAX];
    sim_layer_t *layers;
    size_t num_layers, cap;
    uint32_t samples_per_unit;   /* samples one unit holds (packing); default 1 */
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

/* The built-in models. SEQ is BERT's sequence length (128 or 512). Return 0, -EINVAL or
 * -ENOMEM. */
int sim_model_resnet50(sim_model_t *m);
int sim_model_bert_large(sim_model_t *m, int seq);

/* Reads a model file. Returns 0, or -EINVAL / -ENOENT / -ENOMEM with one line in ERR: the file,
 * the line, the layer type and, for a type the model does not know, the supported types. */
int sim_model_load(const char *path, sim_model_t *m, char *err, size_t errlen);

/* NAME is "resnet50", "bert-large" or a file path. Errors as sim_model_load, plus BERT's
 * sequence length. */
int sim_model_open(const char *name, int seq, sim_model_t *m, char *err, size_t errlen);

/* Writes M as a model file that sim_model_load reads back to the same model. Returns 0 or -EIO. */
int sim_model_write(const sim_model_t *m, FILE *f);

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
