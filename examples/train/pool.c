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
#include <float.h>
#include <string.h>

#include "layers.h"

/* Offset in the image of the first largest input of the window at (IY0, IX0), channel C. */
static size_t argmax(const conv_geom_t *g, const float *img, int iy0, int ix0, int c)
{
    size_t best = 0;
    float top = -FLT_MAX;
    int found = 0;
    for (int ky = 0; ky < g->kernel; ky++) {
        int iy = iy0 + ky;
        for (int kx = 0; iy >= 0 && iy < g->h && kx < g->kernel; kx++) {
            int ix = ix0 + kx;
            if (ix < 0 || ix >= g->w)
                continue;
            size_t at = ((size_t)iy * g->w + ix) * g->c + c;
            if (!found || img[at] > top) {
                top = img[at];
                best = at;
                found = 1;
            }
        }
    }
    return best;
}

void pool_forward(const conv_geom_t *g, const float *x, float *y, int rows)
{
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * g->c;
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++, y += g->c)
                for (int c = 0; c < g->c; c++)
                    y[c] = img[argmax(g, img, oy * g->stride - g->pad, ox * g->stride - g->pad, c)];
    }
}

void pool_backward(const conv_geom_t *g, const float *x, const float *dy, float *dx, int rows)
{
    size_t per = (size_t)g->h * g->w * g->c;
    memset(dx, 0, (size_t)rows * per * sizeof(float));
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * per;
        float *dimg = dx + (size_t)n * per;
        for (int oy = 0; oy < g->oh; oy++)
            for (int ox = 0; ox < g->ow; ox++, dy += g->c)
                for (int c = 0; c < g->c; c++)
                    dimg[argmax(g, img, oy * g->stride - g->pad, ox * g->stride - g->pad, c)] +=
                        dy[c];
    }
}
