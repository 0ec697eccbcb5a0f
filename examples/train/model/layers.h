/*
 * The math of the layers a model is made of, in f32, one micro-batch of ROWS samples at a time.
 * Activations are row-major, one sample after the other; an image is stored NHWC (height, width,
 * then channels, the channels of a pixel side by side), so a flattened image is the input of a
 * dense layer as it is, and a convolution lowered to a matrix product needs no transpose.
 *
 *   dense.c        dense layers, the ReLU, softmax cross-entropy (CBLAS)
 *   conv.c         convolutions lowered to one CBLAS product per micro-batch (im2col)
 *   conv_direct.c  the same convolutions as direct loops: the reference of the tests and of
 *                  train-conv-bench, never what training runs
 *   pool.c         max pooling
 *
 * Every function is deterministic: the same call shapes and inputs give bitwise the same
 * outputs. OpenBLAS's single-threaded products are (one thread per caller, main.c), as long as
 * each call has the same shape; see docs/train.md on why every replica makes the same calls.
 */
#ifndef TRAIN_LAYERS_H
#define TRAIN_LAYERS_H

#include <stddef.h>
#include <stdint.h>

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

/*
 * A 2-D convolution or pooling window over an H x W x C image (NHWC): a KERNEL x KERNEL window
 * moved by STRIDE over the image padded with PAD zeros on every side, giving OH x OW outputs of
 * OC channels (pooling: OC = C).
 */
typedef struct {
    int c, h, w;             /* input */
    int oc, oh, ow;          /* output */
    int kernel, stride, pad; /* the window */
} conv_geom_t;

/* OH and OW of G from its input, kernel, stride and padding: (h + 2 pad - kernel) / stride + 1,
 * or 0 when the window does not fit. */
void conv_geom_finish(conv_geom_t *g);

/* Floats of the im2col matrix of ROWS images: rows x oh x ow lines of kernel x kernel x c. */
size_t conv_col_floats(const conv_geom_t *g, int rows);

/*
 * Convolution forward, lowered to one matrix product: the im2col matrix COL (conv_col_floats)
 * of X, whose line for output pixel (n, y, x) holds the window under it in (ky, kx, c) order,
 * times W^T, where W is oc x (kernel x kernel x c) in the same order; plus the bias B, then ReLU
 * when RELU. Y is rows x oh x ow x oc: NHWC.
 */
void conv_forward(const conv_geom_t *g, const float *x, const float *w, const float *b, float *y,
                  int rows, int relu, float *col);
/*
 * Convolution backward for DY (the gradient at the pre-activation, NHWC): DW += DY^T COL and
 * DB += DY's sums per channel, and, when DX is not NULL, DX = col2im(DY W): each window's
 * gradient added back to the pixels under it, in a fixed order. COL_READY: COL still holds X's
 * im2col matrix from conv_forward (else it is rebuilt from X). Computing DX overwrites COL.
 */
void conv_backward(const conv_geom_t *g, const float *x, const float *w, const float *dy, float *dw,
                   float *db, float *dx, int rows, float *col, int col_ready);

/* The same two functions as direct loops over every output, window position and channel (the
 * reference; sums in another order, so equal to the lowered ones within rounding only). */
void conv_forward_direct(const conv_geom_t *g, const float *x, const float *w, const float *b,
                         float *y, int rows, int relu);
void conv_backward_direct(const conv_geom_t *g, const float *x, const float *w, const float *dy,
                          float *dw, float *db, float *dx, int rows);

/* Max pooling forward: each output the largest value of its window (padding never wins). */
void pool_forward(const conv_geom_t *g, const float *x, float *y, int rows);
/* Max pooling backward: DX = 0, then each output's gradient DY goes to the first input of its
 * window (in (ky, kx) order) that holds the window's maximum, recomputed from X. */
void pool_backward(const conv_geom_t *g, const float *x, const float *dy, float *dx, int rows);

#endif
