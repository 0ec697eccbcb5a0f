/*
 * Convolutions as direct loops: for every output pixel and channel, the sum over its window
 * and input channels, and the same loops backward. The reference of conv.c: the unit tests check
 * the lowered convolution against it, and train-conv-bench times the two on the CNN's layers.
 * Training never runs it.
 *
 * Loop order: image, output row, output column, output channel, then kernel row, kernel column
 * and input channel innermost, so the innermost loop reads contiguous memory of both the image
 * (NHWC) and the weights (oc x K x K x C); the compiler may vectorise it. The weight gradient
 * and the input gradient walk the same nest.
 */
#include <string.h>

#include "layers.h"

/* The channels of pixel (IY, IX) of IMG, or NULL where it lies in the padding. */
static const float *pixel(const conv_geom_t *g, const float *img, int iy, int ix)
{
    if (iy < 0 || iy >= g->h || ix < 0 || ix >= g->w)
        return NULL;
    return img + ((size_t)iy * g->w + ix) * g->c;
}

void conv_forward_direct(const conv_geom_t *g, const float *x, const float *w, const float *b,
                         float *y, int rows, int relu)
{
    int k = g->kernel, kk = k * k * g->c;
    for (int n = 0; n < rows; n++) {
        const float *img = x + (size_t)n * g->h * g->w * g->c;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, y += g->oc) {
                int iy0 = oy * g->stride - g->pad, ix0 = ox * g->stride - g->pad;
                for (int o = 0; o < g->oc; o++) {
                    const float *wo = w + (size_t)o * kk;
                    float s = b[o];
                    for (int ky = 0; ky < k; ky++) {
                        for (int kx = 0; kx < k; kx++) {
                            const float *p = pixel(g, img, iy0 + ky, ix0 + kx);
                            const float *wk = wo + (ky * k + kx) * g->c;
                            for (int c = 0; p && c < g->c; c++)
                                s += p[c] * wk[c];
                        }
                    }
                    y[o] = relu && s < 0.0f ? 0.0f : s;
                }
            }
        }
    }
}

void conv_backward_direct(const conv_geom_t *g, const float *x, const float *w, const float *dy,
                          float *dw, float *db, float *dx, int rows)
{
    int k = g->kernel, kk = k * k * g->c;
    if (dx)
        memset(dx, 0, (size_t)rows * g->h * g->w * g->c * sizeof(float));
    for (int n = 0; n < rows; n++) {
        size_t at = (size_t)n * g->h * g->w * g->c;
        const float *img = x + at;
        float *dimg = dx ? dx + at : NULL;
        for (int oy = 0; oy < g->oh; oy++) {
            for (int ox = 0; ox < g->ow; ox++, dy += g->oc) {
                int iy0 = oy * g->stride - g->pad, ix0 = ox * g->stride - g->pad;
                for (int o = 0; o < g->oc; o++) {
                    float d = dy[o];
                    float *dwo = dw + (size_t)o * kk;
                    const float *wo = w + (size_t)o * kk;
                    db[o] += d;
                    for (int ky = 0; ky < k; ky++) {
                        for (int kx = 0; kx < k; kx++) {
                            const float *p = pixel(g, img, iy0 + ky, ix0 + kx);
                            if (!p)
                                continue;
                            int wk = (ky * k + kx) * g->c;
                            for (int c = 0; c < g->c; c++)
                                dwo[wk + c] += d * p[c];
                            if (!dimg)
                                continue;
                            float *q = dimg + (p - img);
                            for (int c = 0; c < g->c; c++)
                                q[c] += d * wo[wk + c];
                        }
                    }
                }
            }
        }
    }
}
