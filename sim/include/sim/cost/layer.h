/*
 * Layers of a model, as the IPU cost model sees them: a type, a shape per unit and a precision.
 *
 * A unit is what one layer shape describes: one sample, or one pack of samples when sequences are
 * packed (sim_model_t.samples_per_unit). A micro-batch of M samples is M / samples_per_unit units.
 *
 * The shape fields each type reads (everything per unit; fields a type does not read are 0):
 *
 *   type         fields                                  parameters        forward MACs
 *   matmul       rows, in, out, bias                     in*out (+out)     rows*in*out
 *   conv         h, w, cin, cout, kernel, stride, pad,   k*k*cin*cout      ho*wo*k*k*cin*cout
 *                bias                                    (+cout)
 *   attention    heads, seq, head_dim                    0                 2*heads*seq*seq*head_dim
 *   elementwise  values, ops, inputs                     0                 0
 *   norm         values, channels                        2*channels        0
 *   pool         h, w, cin (channels), kernel, stride,   0                 0
 *                pad
 *   embedding    rows (tokens), in (vocab), out (width)  in*out            0
 *   loss         rows (predictions), out (classes)       0                 0
 *
 * with ho = (h + 2 pad - kernel) / stride + 1 (and wo alike). FLOPs are 2 per multiply-add, the
 * convention of published model FLOP counts; elementwise work (ReLU, softmax, normalisation) is
 * charged by the cost model but not counted as FLOPs. A tied layer (the BERT MLM decoder, whose
 * weights are the word embedding's) holds its weights in its stage's memory, but its in*out
 * weights are not counted again in the model's parameters (its bias is).
 *
 * Activations: out_values is what the layer hands to the next (and sends over a stage
 * boundary); stored_values is what its backward pass needs kept from the forward pass:
 *   matmul, conv, pool, norm: the input; attention: Q, K, V and the probabilities
 *   (3*seq*heads*head_dim + heads*seq*seq); elementwise: its values when it reads one input (ReLU,
 *   GELU, dropout), nothing when it reads two (a residual add); embedding: the token ids; loss:
 *   the logits.
 */
#ifndef SIM_LAYER_H
#define SIM_LAYER_H

#include <stddef.h>
#include <stdint.h>

#include "sim/device/device.h"

typedef enum sim_layer_type {
    SIM_LAYER_MATMUL = 0,
    SIM_LAYER_CONV,
    SIM_LAYER_ATTENTION,
    SIM_LAYER_ELEMENTWISE,
    SIM_LAYER_NORM,
    SIM_LAYER_POOL,
    SIM_LAYER_EMBEDDING,
    SIM_LAYER_LOSS,
    SIM_LAYER_COUNT
} sim_layer_type_t;

/* The passes a layer is charged for: forward, backward (input and weight gradients), and the
 * forward again when activations are recomputed instead of stored. */
typedef enum sim_pass { SIM_PASS_FORWARD = 0, SIM_PASS_BACKWARD, SIM_PASS_RECOMPUTE } sim_pass_t;

#define SIM_LAYER_NAME_MAX 40

/* What part of a transformer a layer belongs to, for placements that count attention and
 * feed-forward sublayers per IPU (sim-step --att-ffn-placement): consecutive layers of one part
 * form one sublayer. Other models leave every layer SIM_PART_NONE. */
typedef enum sim_part {
    SIM_PART_NONE = 0,
    SIM_PART_EMBEDDING, /* on IPU 0 under a placement */
    SIM_PART_ATTENTION, /* an attention sublayer: QKV, attention, projection, add, norm */
    SIM_PART_FFN,       /* a feed-forward sublayer: two products, activation, add, norm */
    SIM_PART_HEAD,      /* the heads; on IPU 0 under a placement (tied to the embedding) */
    SIM_PART_COUNT
} sim_part_t;

/* "none", "embedding", "attention", "ffn", "head" ("unknown" out of range); -1 when unknown. */
const char *sim_part_name(sim_part_t p);
int sim_part_parse(const char *name);

typedef struct sim_layer {
    char name[SIM_LAYER_NAME_MAX];
    sim_layer_type_t type;
    sim_precision_t prec; /* compute precision: f16 (AMP at the f16 rate) or f32 */
    uint64_t rows;        /* matmul: rows per unit (tokens; 1 for a plain dense layer); embedding:
                             tokens; loss: predictions */
    uint64_t in, out;     /* matmul: features in and out; embedding: vocabulary and width; loss:
                             classes (out) */
    uint64_t values;      /* elementwise, norm: values per unit */
    uint32_t h, w, cin, cout, kernel, stride, pad; /* conv and pool (pool: cin channels) */
    uint32_t heads, seq, head_dim;                 /* attention */
    uint32_t channels;                             /* norm */
    uint32_t ops;       /* elementwise: vector operations per value in the forward pass */
    uint32_t inputs;    /* elementwise: tensors read */
    uint8_t bias;       /* matmul, conv: a bias of out (cout) values */
    uint8_t input_grad; /* 1: backward computes the gradient of the input (0 for a first layer) */
    uint8_t checkpoint; /* 1: a recomputation checkpoint (its output is kept) */
    uint8_t tied;       /* 1: weights shared with another layer (not counted twice) */
    uint8_t part;       /* sim_part_t */
} sim_layer_t;

/* "matmul", "conv", ... ("unknown" out of range). */
const char *sim_layer_type_name(sim_layer_type_t t);
/* The type called NAME; -1 when none is. */
int sim_layer_type_parse(const char *name);
/* "matmul, conv, attention, elementwise, norm, pool, embedding, loss". */
const char *sim_layer_type_list(void);

/* Bytes of one value at precision P: 2 for f16, 4 for f32. */
uint32_t sim_prec_bytes(sim_precision_t p);

/* A layer of TYPE with every field at its default: f16, bias 0, input_grad 1, ops 1, inputs 1,
 * stride 1. */
void sim_layer_init(sim_layer_t *l, sim_layer_type_t type, const char *name);

/* Checks the fields TYPE needs: 0, or -EINVAL with a reason ("conv: cin must be at least 1") in
 * ERR. Also rejects shapes whose counts would overflow 2^62. */
int sim_layer_check(const sim_layer_t *l, char *err, size_t errlen);

/* Output height and width of a conv or pool. */
uint32_t sim_layer_out_h(const sim_layer_t *l);
uint32_t sim_layer_out_w(const sim_layer_t *l);

/* Parameters counted for the model (tied weights: the bias only). */
uint64_t sim_layer_params(const sim_layer_t *l);
/* Weights held in memory (tied weights included). */
uint64_t sim_layer_weights(const sim_layer_t *l);
/* Forward multiply-adds per unit; FLOPs are twice this. */
uint64_t sim_layer_macs(const sim_layer_t *l);
/* Values per unit the layer reads, hands on, and keeps for its backward pass (see the top). */
uint64_t sim_layer_in_values(const sim_layer_t *l);
uint64_t sim_layer_out_values(const sim_layer_t *l);
uint64_t sim_layer_stored_values(const sim_layer_t *l);
/* Weight tensors (weights, bias, norm scale and shift): what LAMB computes a norm for. */
uint32_t sim_layer_tensors(const sim_layer_t *l);

#endif /* SIM_LAYER_H */
