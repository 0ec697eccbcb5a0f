/*
 * A model: a chain of layers (dense, convolution, max pooling; a ReLU after every dense and
 * convolution layer but the last) ending in a softmax cross-entropy loss, in f32, with the math
 * of layers.h. Which layers is a model's own business: mlp.c builds a multi-layer perceptron
 * from --hidden, cnn.c a convolutional network from a layer list (--layers, or a model file);
 * everything else (the pipeline split, the training step, checkpoints, the MPI baseline, the
 * simulated cost) reads the model through this header, so a new model is a file of its own.
 *
 * Parameters of all layers live in one vector, layer by layer, each layer's weights followed by
 * its biases (a dense layer's weights out x in, a convolution's oc x kernel x kernel x c, both
 * row-major; pooling has none); a pipeline stage owns the contiguous slice of its layers, so
 * checkpoints do not depend on how the model is split.
 */
#ifndef TRAIN_MODEL_H
#define TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "model/layers.h"

#define MODEL_MAX_LAYERS 16
/* Values per sample at any layer boundary: a checkpoint's header keeps each in 24 bits. */
#define MODEL_MAX_VALUES (1 << 24)

typedef enum { LAYER_DENSE = 0, LAYER_CONV = 1, LAYER_POOL = 2 } layer_kind_t;

/* One layer as a model file or option names it. */
typedef struct {
    layer_kind_t kind;
    int out;                 /* dense: outputs; conv: output channels; pool: 0 */
    int kernel, stride, pad; /* conv and pool; 0 for dense */
} layer_spec_t;

/* A model as it is described: its input image and its layers (the last a dense layer to the
 * classes). */
typedef struct {
    int c, h,
        w; /* the input: channels, height, width (an MLP reads c x h x w values as they lie) */
    int nlayers;
    layer_spec_t layer[MODEL_MAX_LAYERS];
} model_spec_t;

/* One layer with its shapes worked out. */
typedef struct {
    layer_kind_t kind;
    int relu;        /* a ReLU after it */
    conv_geom_t g;   /* input c x h x w and output oc x oh x ow; a dense layer's input is
                        c = its input values, h = w = 1 (and its output oc, oh = ow = 1) */
    size_t nweights; /* weights (dense: in x out; conv: oc x kernel x kernel x c) */
    size_t nbias;    /* biases (dense: out; conv: oc; pool: 0) */
    double macs;     /* multiply-adds of its forward pass per sample */
} layer_t;

typedef struct {
    model_spec_t spec;
    int nlayers;
    layer_t layer[MODEL_MAX_LAYERS];
    int dims[MODEL_MAX_LAYERS + 1];      /* values per sample: input of layer l; dims[nlayers]
                                            the classes */
    size_t offset[MODEL_MAX_LAYERS + 1]; /* layer l's parameters start at offset[l]; total at
                                            the end */
} model_shape_t;

/* The models train knows: "mlp" (mlp.c) and "cnn" (cnn.c). */
typedef struct {
    const int *hidden; /* mlp: hidden widths */
    int nhidden;
    const char *layers; /* cnn: the layer list (NULL: the model's default) */
    const char *source; /* where LAYERS came from, for messages ("--layers", "model file X") */
} model_opts_t;

typedef struct {
    const char *name;  /* as --model names it */
    const char *title; /* as the banner names it: "MLP", "CNN" */
    int epochs;        /* train's defaults for it: --epochs, --augment, and --lr for sgd and adam */
    int augment;
    int warmup_epochs; /* --warmup-steps: this many epochs of steps */
    double sgd_lr, adam_lr;
    double weight_decay; /* --weight-decay */
    /* Fills SPEC for images of C x H x W and CLASSES classes from O. Returns 0, or -1 with one
     * line in ERR naming what is wrong (an unknown layer, a value out of range). */
    int (*describe)(const model_opts_t *o, int c, int h, int w, int classes, model_spec_t *spec,
                    char *err, size_t errlen);
} model_def_t;

extern const model_def_t model_mlp, model_cnn;
/* The model called NAME, or NULL. */
const model_def_t *model_find(const char *name);
/* The title of the model SPEC describes: "CNN" when it has a convolution or pooling layer,
 * "MLP" otherwise. */
const char *model_title(const model_spec_t *spec);

/*
 * Works out the shapes of SPEC: each layer's input and output, its parameters and where they
 * lie. Returns 0, or -1 with one line in ERR naming the layer (1-based) and the numbers that do
 * not fit: a window larger than its padded input, a stride or padding out of range, a layer
 * whose output has more than MODEL_MAX_VALUES values per sample, or too many parameters.
 */
int model_shape_build(model_shape_t *m, const model_spec_t *spec, char *err, size_t errlen);
/* The MLP IN - HIDDEN[0] - ... - CLASSES (the tests' shorthand). Returns 0, or -1. */
int model_shape_init(model_shape_t *m, int in, const int *hidden, int nhidden, int classes);

static inline size_t model_params(const model_shape_t *m)
{
    return m->offset[m->nlayers];
}
static inline size_t layer_params(const model_shape_t *m, int l)
{
    return m->offset[l + 1] - m->offset[l];
}
static inline int model_classes(const model_shape_t *m)
{
    return m->dims[m->nlayers];
}

/* "conv:16:3", "pool:2", "dense:128" (with ":S:P" when they are not the defaults): the layer
 * as a layer list names it. */
void layer_text(const layer_spec_t *s, char *buf, size_t len);
/* "conv2", "pool1", "dense3": layer L's kind and its rank among the layers of that kind. */
void layer_name(const model_shape_t *m, int l, char *buf, size_t len);
/* The model in one line: "MLP 784-256-128-10" or "CNN 28x28x1 conv:16:3 pool:2 ... dense:10". */
void model_text(const model_shape_t *m, char *buf, size_t len);

/*
 * Splits the layers over K pipeline stages, contiguously: stage s gets layers
 * [first[s], first[s+1]). The split minimises the largest stage's parameter count (what decides
 * whether a stage fits in its IPU's memory), ties going to the split that sends fewer values
 * between the stages, then to the earlier one; a CNN's convolutions and poolings, with few
 * parameters, end up together before its dense layers. Returns 0, or -1
 * when K is not between 1 and the number of layers.
 */
int model_split(const model_shape_t *m, int k, int *first);

/*
 * Initial parameters of layer L from SEED: He-uniform weights (bound sqrt(6 / fan-in), the
 * variance that keeps ReLU activations from shrinking or growing layer to layer) and zero biases.
 * Each layer has its own random stream, so a stage initialises its layers alone and gets what the
 * whole model would.
 */
void model_init_layer(const model_shape_t *m, int l, uint64_t seed, float *params);

/* Floats of the im2col matrices of the convolutions of layers [L0, L1) for ROWS samples, one
 * after the other: the forward pass leaves each there for the backward pass of the same
 * micro-batch, which then needs no second im2col. */
size_t model_col_floats(const model_shape_t *m, int l0, int l1, int rows);
/* The largest input of layers (L0, L1) per sample: what each backward scratch buffer holds. */
size_t model_inner_values(const model_shape_t *m, int l0, int l1);

/*
 * Forward of layers [L0, L1) for ROWS samples: ACT[i] is the input of layer L0 + i (ACT[0]
 * given), ACT[L1 - L0] the output. W is the parameter vector's slice from layer L0's
 * parameters on; COL holds model_col_floats and keeps the convolutions' im2col matrices for
 * model_backward.
 */
void model_forward(const model_shape_t *m, int l0, int l1, const float *w, float *const *act,
                   int rows, float *col);
/*
 * Backward of layers [L0, L1): DY is the gradient at the output of layer L1 - 1 (before its
 * ReLU is applied backward; it is overwritten), G (the slice as W) accumulates the parameter
 * gradients, and DX, when not NULL, receives the gradient at the input of layer L0. SCRATCH is
 * two buffers of ROWS x model_inner_values floats each; COL is what model_forward of the same
 * ROWS samples left there (it is overwritten).
 */
void model_backward(const model_shape_t *m, int l0, int l1, const float *w, float *const *act,
                    float *dy, float *g, float *dx, int rows, float *const scratch[2], float *col);

#endif
