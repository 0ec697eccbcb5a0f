/*
 * Convolutions lowered to matrix products (im2col), one CBLAS call per pass and micro-batch.
 *
 * For a micro-batch of N images of H x W x C (NHWC), a K x K kernel, stride S and padding P,
 * giving OH x OW outputs of OC channels:
 *
 *   im2col   COL is (N OH OW) x (K K C): line (n, y, x) holds the window of image n under output
 *            pixel (y, x), in (ky, kx, c) order, zeros where it hangs over the padding.
 *   forward  Y (N OH OW x OC) = COL W^T, one sgemm, M = N OH OW, N = OC, K = K K C; then the
 *            bias and the ReLU in one pass. Y is NHWC as it comes out of the product.
 *   weights  DW (OC x K K C) += DY^T COL: one sgemm over all N OH OW lines; DB += DY's column
 *            sums. COL is rebuilt from the stored input (the forward's is long overwritten).
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

#include "layers.h"

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

/* The im2col matrix of ROWS images X into COL. Plain loops, not memcpy: a line's pieces are C
 * floats each, one float for a first layer on grey images. */
static void im2col(const conv_geom_t *g, const float *x, int rows, float *col)
{
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * g->c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++) {
                for (int ky = 0; ky < g->kernel; ky++) {
                    int iy = oy * g->stride - g->pad + ky;
                    for (int kx = 0; kx < g->kernel; kx++, col += g->c) {
                        int ix = ox * g->stride - g->pad + kx;
                        const float *p = img + ((size_t)iy * g->w + ix) * g->c;
                        int in = iy >= 0 && iy < g->h && ix >= 0 && ix < g->w;
                        for (int c = 0; c < g->c; c++)
                            col[c] = in ? p[c] : 0.0f;
                    }
                }
            }
        }
    }
}

/* DX = the sum of COL's windows over the pixels they came from (the adjoint of im2col). */
static void col2im(const conv_geom_t *g, const float *col, int rows, float *dx)
{
    memset(dx, 0, (size_t)rows * g->h * g->w * g->c * sizeof(float));
    for (int n = 0; n < rows; n++) {
        float *img = dx + (size_t)n * g->h * g->w * g->c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++) {
                for (int ky = 0; ky < g->kernel; ky++) {
                    int iy = oy * g->stride - g->pad + ky;
                    for (int kx = 0; kx < g->kernel; kx++, col += g->c) {
                        int ix = ox * g->stride - g->pad + kx;
                        if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
                            continue;
                        float *p = img + ((size_t)iy * g->w + ix) * g->c;
                        for (int c = 0; c < g->c; c++)
                            p[c] += col[c];
                    }
                }
            }
        }
    }
}

void conv_forward(const conv_geom_t *g, const float *x, const float *w, const float *b, float *y,
                  int rows, int relu, float *col)
{
    int m = rows * g->oh * g->ow, k = g->kernel * g->kernel * g->c;
    im2col(g, x, rows, col);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, m, g->oc, k, 1.0f, col, k, w, k, 0.0f, y,
                g->oc);
    for (int i = 0; i < m; i++) { /* the bias after the product, with the ReLU: one pass */
        float *row = y + (size_t)i * g->oc;
        for (int j = 0; j < g->oc; j++) {
            float v = row[j] + b[j];
            row[j] = relu && v < 0.0f ? 0.0f : v;
        }
    }
}

void conv_backward(const conv_geom_t *g, const float *x, const float *w, const float *dy, float *dw,
                   float *db, float *dx, int rows, float *col)
{
    int m = rows * g->oh * g->ow, k = g->kernel * g->kernel * g->c;
    im2col(g, x, rows, col);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, g->oc, k, m, 1.0f, dy, g->oc, col, k, 1.0f,
                dw, k);
    for (int i = 0; i < m; i++) {
        const float *row = dy + (size_t)i * g->oc;
        for (int j = 0; j < g->oc; j++)
            db[j] += row[j];
    }
    if (!dx)
        return;
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, k, g->oc, 1.0f, dy, g->oc, w, k, 0.0f,
                col, k);
    col2im(g, col, rows, dx);
}
