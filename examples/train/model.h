/*
 * The model: a multi-layer perceptron of dense layers with ReLU between them and a softmax
 * cross-entropy loss, in f32. Parameters of all layers live in one vector, layer by layer, each
 * layer's weights (out x in, row-major) followed by its biases; a pipeline stage owns the
 * contiguous slice of its layers, so checkpoints do not depend on how the model is split.
 *
 * The dense math goes through CBLAS (OpenBLAS, one thread per caller).
 */
#ifndef TRAIN_MODEL_H
#define TRAIN_MODEL_H

#include <stddef.h>
#include <stdint.h>

#define MODEL_MAX_LAYERS 16

typedef struct {
    int nlayers;                    /* dense layers */
    int dims[MODEL_MAX_LAYERS + 1]; /* dims[0] inputs ... dims[nlayers] classes */
    size_t
        offset[MODEL_MAX_LAYERS + 1]; /* layer l's weights start at offset[l]; total at the end */
} model_shape_t;

/* The shape IN - HIDDEN[0] - ... - CLASSES. Returns 0, or -1 when there are too many layers. */
int model_shape_init(model_shape_t *m, int in, const int *hidden, int nhidden, int classes);
static inline size_t model_params(const model_shape_t *m)
{
    return m->offset[m->nlayers];
}
static inline size_t layer_params(const model_shape_t *m, int l)
{
    return m->offset[l + 1] - m->offset[l];
}

/*
 * Splits the layers over K pipeline stages, contiguously: stage s gets layers
 * [first[s], first[s+1]). The split minimises the largest stage's parameter count (what decides
 * whether a stage fits in its IPU's memory), ties going to the earlier split. Returns 0, or -1
 * when K is not between 1 and the number of layers.
 */
int model_split(const model_shape_t *m, int k, int *first);

/*
 * Initial parameters of layer L from SEED: He-uniform weights (the variance that keeps ReLU
 * activations from shrinking or growing layer to layer) and zero biases. Each layer has its own
 * random stream, so a stage initialises its layers alone and gets what the whole model would.
 */
void model_init_layer(const model_shape_t *m, int l, uint64_t seed, float *params);

/* Y (rows x out) = X (rows x in) W^T + b, then ReLU when RELU. */
void dense_forward(const float *x, const float *w, const float *b, float *y, int rows, int in,
                   int out, int relu);
/*
 * Backward of a dense layer for DY (rows x out, the gradient at its pre-activation):
 * DW += DY^T X and DB += column sums of DY (accumulating over micro-batches), and, when DX is not
 * NULL, DX (rows x in) = DY W.
 */
void dense_backward(const float *x, const float *w, const float *dy, float *dw, float *db,
                    float *dx, int rows, int in, int out);
/* DY[i] = 0 where the ReLU output Y[i] is 0: the gradient through the ReLU. */
void relu_backward(const float *y, float *dy, size_t n);

/*
 * Softmax cross-entropy of LOGITS (rows x classes) against LABELS. Returns the summed loss
 * (double) and adds the rows whose largest logit is the label to *CORRECT. When DLOGITS is not
 * NULL it receives SCALE x (softmax - onehot), the gradient of SCALE x the summed loss; it may
 * be LOGITS itself.
 */
double softmax_xent(const float *logits, const uint8_t *labels, int rows, int classes, float scale,
                    float *dlogits, long *correct);

/* Floating-point operations of a forward matmul of ROWS rows through layer L (2 x m x n x k). */
double layer_flops(const model_shape_t *m, int l, int rows);

#endif
