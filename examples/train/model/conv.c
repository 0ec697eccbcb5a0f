/*
 * Convolutions lowered to matrix products (im2col), one CBLAS call per pass and micro-batch.
 *
 * For a micro-batch of N images of H x W x C (NHWC), a K x K kernel, stride S and padding P,
 * giving OH x OW outputs of OC channels:
 *
 *   im2col   COL is (N OH OW) x (K K C): line (n, y, x) holds the window of image n under output
 *            pixel (y, x), in (ky, kx, c) order, zeros where it hangs over the padding.
 *   forward  Y (N OH OW x OC) = COL W^T, one sgemm, M = N OH OW, N = OC, K = K K C; then the
 *            bias and the ReLU, line by line. Y is NHWC as it comes out of the product.
 *   weights  DW (OC x K K C) += DY^T COL: one sgemm over all N OH OW lines; DB += DY's column
 *            sums. COL is the forward's, kept for the backward pass (model.c keeps one per
 *            convolution and micro-batch in flight), or rebuilt from the stored input.
 *   input    DCOL (N OH OW x K K C) = DY W, one sgemm into COL's buffer, then col2im: each
 *            line's window added back onto DX's pixels, lines in order, so overlapping windows
 *            sum in a fixed order.
 *
 * Example: 32 images of 14 x 14 x 16, a 3 x 3 kernel to 32 channels, stride 1, padding 1: COL
 * is 6272 x 144, the forward one 6272 x 144 by 144 x 32 product (28.9 MFLOP), the weight
 * gradient 32 x 6272 by 6272 x 144, the input gradient 6272 x 32 by 32 x 144.
 *
 * The price is COL's memory (K K times the input) and its copies; the gain is that all the
 * arithmetic runs in OpenBLAS's blocked, vectorised kernels (train-conv-bench measures it
 * against conv_direct.c). The products' shapes depend only on the micro-batch and the layer, so
 * every replica of a job makes the same calls and gets bitwise the same results.
 */
#include <cblas.h>
#include <string.h>

#include "model/layers.h"

void conv_geom_finish(conv_geom_t *g)
{
    int ph = g->h + 2 * g->pad - g->kernel, pw = g->w + 2 * g->pad - g->kernel;
    int ok = g->stride > 0 && ph >= 0 && pw >= 0;
    g->oh = ok ? ph / g->stride + 1 : 0;
    g->ow = ok ? pw / g->stride + 1 : 0;
}

size_t conv_col_floats(const conv_geom_t *g, int rows)
{
    return (size_t)rows * g->oh * g->ow * g->kernel * g->kernel * g->c;
}

/* The columns [*LO, *HI) of a window starting at column IX0 that fall inside the image. */
static void inside(const conv_geom_t *g, int ix0, int *lo, int *hi)
{
    *lo = ix0 < 0 ? -ix0 : 0;
    *hi = ix0 + g->kernel > g->w ? g->w - ix0 : g->kernel;
    *hi = *hi < *lo ? *lo : *hi;
}

/* The im2col matrix of ROWS images X into COL. A window's row inside the image is one run of
 * pixels, contiguous in NHWC: copied as one, with zeros either side where it hangs over the
 * padding. Plain loops: a first layer's runs on grey images are 3 floats, too short for a call. */
static void im2col(const conv_geom_t *g, const float *x, int rows, float *col)
{
    size_t c = (size_t)g->c, run = (size_t)g->kernel * c;
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++) {
                int ix0 = ox * g->stride - g->pad, lo, hi;
                inside(g, ix0, &lo, &hi);
                for (int ky = 0; ky < g->kernel; ky++, col += run) {
                    int iy = oy * g->stride - g->pad + ky;
                    size_t a = (size_t)lo * c, b = (size_t)hi * c;
                    if (iy < 0 || iy >= g->h)
                        a = b = run;
                    const float *restrict src = img + ((size_t)iy * g->w + ix0) * c;
                    float *restrict dst = col;
                    size_t i = 0;
                    for (; i < a; i++)
                        dst[i] = 0.0f;
                    for (; i < b; i++)
                        dst[i] = src[i];
                    for (; i < run; i++)
                        dst[i] = 0.0f;
                }
            }
        }
    }
}

/* DX = the sum of COL's windows over the pixels they came from (the adjoint of im2col), window
 * after window in COL's order. */
static void col2im(const conv_geom_t *g, const float *col, int rows, float *dx)
{
    size_t c = (size_t)g->c, run = (size_t)g->kernel * c;
    memset(dx, 0, (size_t)rows * g->h * g->w * c * sizeof(float));
    for (int n = 0; n < rows; n++) {
        float *img = dx + (size_t)n * g->h * g->w * c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++) {
                int ix0 = ox * g->stride - g->pad, lo, hi;
                inside(g, ix0, &lo, &hi);
                for (int ky = 0; ky < g->kernel; ky++, col += run) {
                    int iy = oy * g->stride - g->pad + ky;
                    if (iy < 0 || iy >= g->h)
                        continue;
                    float *restrict p = img + ((size_t)iy * g->w + ix0 + lo) * c;
                    const float *restrict q = col + (size_t)lo * c;
                    size_t len = (size_t)(hi - lo) * c;
                    for (size_t i = 0; i < len; i++)
                        p[i] += q[i];
                }
            }
        }
    }
}

/* Y += B on every line of M x N, then the ReLU when RELU. */
static void bias_relu(float *restrict y, const float *restrict b, int m, int n, int relu)
{
    for (int i = 0; i < m; i++, y += n) {
        for (int j = 0; j < n; j++)
            y[j] += b[j];
        if (relu)
            for (int j = 0; j < n; j++)
                y[j] = y[j] > 0.0f ? y[j] : 0.0f;
    }
}

void conv_forward(const conv_geom_t *g, const float *x, const float *w, const float *b, float *y,
                  int rows, int relu, float *col)
{
    int m = rows * g->oh * g->ow, k = g->kernel * g->kernel * g->c;
    im2col(g, x, rows, col);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, g->oc, k, 1.0f, col, k, w, k, 0.0f, y,
                g->oc);
    bias_relu(y, b, m, g->oc, relu); /* the bias after the product, then the ReLU */
}

void conv_backward(const conv_geom_t *g, const float *x, const float *w, const float *dy, float *dw,
                   float *db, float *dx, int rows, float *col, int col_ready)
{
    int m = rows * g->oh * g->ow, k = g->kernel * g->kernel * g->c;
    if (!col_ready)
        im2col(g, x, rows, col);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g->oc, k, m, 1.0f, dy, g->oc, col, k, 1.0f,
                dw, k);
    for (int i = 0; i < m; i++) {
        const float *restrict row = dy + (size_t)i * g->oc;
        float *restrict sum = db;
        for (int j = 0; j < g->oc; j++)
            sum[j] += row[j];
    }
    if (!dx)
        return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, g->oc, 1.0f, dy, g->oc, w, k, 0.0f,
                col, k);
    col2im(g, col, rows, dx);
}
