/*
 * Convolutions as direct loops: every output pixel's window, multiply-add by multiply-add, with
 * no matrix product. The reference of conv.c: the unit tests check the lowered convolution
 * against it, and train-conv-bench times the two on the CNN's layers. Training never runs it.
 *
 * Written as a direct NHWC convolution is written to be fast, so that the comparison is with a
 * fair direct version, not a strawman: the innermost loop runs over contiguous channels, which
 * the compiler vectorises (this file is built at -O3).
 *
 *   forward  for each output pixel: out[0..OC) = b, then for each window position and input
 *            channel c, out[0..OC) += x[c] * WT[ky][kx][c][0..OC), WT being W with the output
 *            channel innermost (made once per call).
 *   weights  for each output pixel and window position and input channel c,
 *            DWT[ky][kx][c][0..OC) += x[c] * dy[0..OC); DW += DWT transposed back at the end.
 *   input    for each output pixel and window position and output channel o,
 *            dx[0..C) += dy[o] * W[o][ky][kx][0..C).
 *
 * The sums run in another order than conv.c's products, so the two agree within rounding.
 */
#include <stdlib.h>
#include <string.h>

#include "model/layers.h"

/* W (oc x taps x c) with the output channel innermost: taps x c x oc. NULL when out of memory. */
static float *transposed(const conv_geom_t *g, const float *w)
{
    size_t tc = (size_t)g->kernel * g->kernel * g->c, oc = (size_t)g->oc;
    float *t = malloc(tc * oc * sizeof(float));
    for (size_t o = 0; t && o < oc; o++)
        for (size_t i = 0; i < tc; i++)
            t[i * oc + o] = w[o * tc + i];
    return t;
}

/* The window of output (OY, OX) clipped to the image: rows [*Y0, *Y1), columns [*X0, *X1), and
 * where it starts, padding included (*IY, *IX). */
static void window(const conv_geom_t *g, int oy, int ox, int *iy, int *ix, int *y0, int *y1,
                   int *x0, int *x1)
{
    *iy = oy * g->stride - g->pad, *ix = ox * g->stride - g->pad;
    *y0 = *iy < 0 ? 0 : *iy;
    *x0 = *ix < 0 ? 0 : *ix;
    *y1 = *iy + g->kernel < g->h ? *iy + g->kernel : g->h;
    *x1 = *ix + g->kernel < g->w ? *ix + g->kernel : g->w;
}

void conv_forward_direct(const conv_geom_t *g, const float *x, const float *w, const float *b,
                         float *y, int rows, int relu)
{
    size_t c = (size_t)g->c, oc = (size_t)g->oc;
    float *wt = transposed(g, w);
    if (!wt)
        abort(); /* a reference for tests and benchmarks: no graceful path */
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, y += oc) {
                int iy, ix, y0, y1, x0, x1;
                window(g, oy, ox, &iy, &ix, &y0, &y1, &x0, &x1);
                float *restrict out = y;
                for (size_t o = 0; o < oc; o++)
                    out[o] = b[o];
                for (int py = y0; py < y1; py++) {
                    for (int px = x0; px < x1; px++) {
                        const float *p = img + ((size_t)py * g->w + px) * c;
                        size_t tap = (size_t)(py - iy) * g->kernel + (px - ix);
                        for (size_t k = 0; k < c; k++) {
                            const float *restrict wk = wt + (tap * c + k) * oc;
                            float v = p[k];
                            for (size_t o = 0; o < oc; o++)
                                out[o] += v * wk[o];
                        }
                    }
                }
                for (size_t o = 0; relu && o < oc; o++)
                    out[o] = out[o] > 0.0f ? out[o] : 0.0f;
            }
        }
    }
    free(wt);
}

void conv_backward_direct(const conv_geom_t *g, const float *x, const float *w, const float *dy,
                          float *dw, float *db, float *dx, int rows)
{
    size_t c = (size_t)g->c, oc = (size_t)g->oc, tc = (size_t)g->kernel * g->kernel * c;
    float *dwt = calloc(tc * oc, sizeof(float));
    if (!dwt)
        abort();
    if (dx)
        memset(dx, 0, (size_t)rows * g->h * g->w * c * sizeof(float));
    for (int n = 0; n < rows; n++) {
        size_t at = (size_t)n * g->h * g->w * c;
        const float *img = x + at;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, dy += oc) {
                int iy, ix, y0, y1, x0, x1;
                window(g, oy, ox, &iy, &ix, &y0, &y1, &x0, &x1);
                const float *restrict d = dy;
                float *restrict sum = db;
                for (size_t o = 0; o < oc; o++)
                    sum[o] += d[o];
                for (int py = y0; py < y1; py++) {
                    for (int px = x0; px < x1; px++) {
                        size_t pix = ((size_t)py * g->w + px) * c;
                        size_t tap = (size_t)(py - iy) * g->kernel + (px - ix);
                        for (size_t k = 0; k < c; k++) {
                            float *restrict dwk = dwt + (tap * c + k) * oc;
                            float v = img[pix + k];
                            for (size_t o = 0; o < oc; o++)
                                dwk[o] += v * d[o];
                        }
                        if (!dx)
                            continue;
                        float *restrict q = dx + at + pix;
                        for (size_t o = 0; o < oc; o++) {
                            const float *restrict wo = w + o * tc + tap * c;
                            for (size_t k = 0; k < c; k++)
                                q[k] += d[o] * wo[k];
                        }
                    }
                }
            }
        }
    }
    for (size_t o = 0; o < oc; o++)
        for (size_t i = 0; i < tc; i++)
            dw[o * tc + i] += dwt[i * oc + o];
    free(dwt);
}
