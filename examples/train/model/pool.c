/*
 * Max pooling (layers.h), NHWC: each output channel is the largest input of its K x K window
 * (stride S; padding, if any, never wins). Backward sends each output's gradient to the first
 * input of its window, in (ky, kx) order, that holds the maximum: recomputed from the stored
 * input, so nothing but the activations is kept, and ties always go the same way.
 *
 * Trace of a 2 x 2 window, stride 2, over one channel of a 4 x 4 image:
 *
 *   x = 1 3 | 2 0      y = 3 2       dy = a b      dx = 0 a | b 0
 *       0 3 | 1 1          4 5            c d           0 0 | 0 0
 *       ---------                                       ---------
 *       4 0 | 5 5                                       c 0 | d 0
 *       4 2 | 0 1                                       0 0 | 0 0
 *
 * (The first window's 3 at (0, 1) comes before the one at (1, 1); the last window's first 5.)
 */
#include <stdint.h>
#include <string.h>

#include "model/layers.h"

/* The window of output (OY, OX) clipped to the image: rows [*Y0, *Y1), columns [*X0, *X1). */
static void window(const conv_geom_t *g, int oy, int ox, int *y0, int *y1, int *x0, int *x1)
{
    int iy = oy * g->stride - g->pad, ix = ox * g->stride - g->pad;
    *y0 = iy < 0 ? 0 : iy;
    *x0 = ix < 0 ? 0 : ix;
    *y1 = iy + g->kernel < g->h ? iy + g->kernel : g->h;
    *x1 = ix + g->kernel < g->w ? ix + g->kernel : g->w;
}

void pool_forward(const conv_geom_t *g, const float *x, float *y, int rows)
{
    size_t c = (size_t)g->c;
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, y += c) {
                int y0, y1, x0, x1;
                window(g, oy, ox, &y0, &y1, &x0, &x1);
                float *restrict out = y;
                const float *restrict first = img + ((size_t)y0 * g->w + x0) * c;
                for (size_t k = 0; k < c; k++)
                    out[k] = first[k];
                for (int iy = y0; iy < y1; iy++) {
                    for (int ix = x0; ix < x1; ix++) {
                        const float *restrict p = img + ((size_t)iy * g->w + ix) * c;
                        for (size_t k = 0; k < c; k++)
                            out[k] = p[k] > out[k] ? p[k] : out[k];
                    }
                }
            }
        }
    }
}

/* Channels at a time in pool_backward's search for each channel's first maximum. */
#define POOL_BLOCK 64

void pool_backward(const conv_geom_t *g, const float *x, const float *dy, float *dx, int rows)
{
    size_t c = (size_t)g->c, per = (size_t)g->h * g->w * c;
    memset(dx, 0, (size_t)rows * per * sizeof(float));
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * per;
        float *dimg = dx + (size_t)n * per;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, dy += c) {
                int y0, y1, x0, x1;
                window(g, oy, ox, &y0, &y1, &x0, &x1);
                for (size_t k0 = 0; k0 < c; k0 += POOL_BLOCK) {
                    size_t nk = c - k0 < POOL_BLOCK ? c - k0 : POOL_BLOCK;
                    float best[POOL_BLOCK];
                    int arg[POOL_BLOCK]; /* the pixel, y * w + x, of each channel's maximum */
                    const float *first = img + ((size_t)y0 * g->w + x0) * c + k0;
                    for (size_t k = 0; k < nk; k++)
                        best[k] = first[k], arg[k] = y0 * g->w + x0;
                    for (int iy = y0; iy < y1; iy++) {
                        for (int ix = x0; ix < x1; ix++) {
                            int pix = iy * g->w + ix;
                            const float *p = img + (size_t)pix * c + k0;
                            for (size_t k = 0; k < nk; k++) { /* masks: vectorised */
                                int32_t more = -(int32_t)(p[k] > best[k]);
                                best[k] = p[k] > best[k] ? p[k] : best[k];
                                arg[k] = (arg[k] & ~more) | (pix & more);
                            }
                        }
                    }
                    for (size_t k = 0; k < nk; k++)
                        dimg[(size_t)arg[k] * c + k0 + k] += dy[k0 + k];
                }
            }
        }
    }
}
