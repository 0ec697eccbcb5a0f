/* The MLP's math; see model.h. */
#include "model.h"

#include <cblas.h>
#include <float.h>
#include <math.h>
#include <string.h>

#include "rng.h"

int model_shape_init(model_shape_t *m, int in, const int *hidden, int nhidden, int classes)
{
    if (nhidden < 0 || nhidden + 1 > MODEL_MAX_LAYERS)
        return -1;
    memset(m, 0, sizeof *m);
    m->nlayers = nhidden + 1;
    m->dims[0] = in;
    for (int i = 0; i < nhidden; i++)
        m->dims[i + 1] = hidden[i];
    m->dims[m->nlayers] = classes;
    for (int l = 0; l < m->nlayers; l++)
        m->offset[l + 1] = m->offset[l] + (size_t)m->dims[l + 1] * ((size_t)m->dims[l] + 1);
    return 0;
}

/* The smallest largest-stage size for layers [from, n) over K stages, and where the first of
 * them ends; a plain dynamic program, as there are at most 16 layers. */
int model_split(const model_shape_t *m, int k, int *first)
{
    int n = m->nlayers;
    if (k < 1 || k > n)
        return -1;
    /* best[s][i]: the least possible maximum when layers [i, n) go to s stages. */
    size_t best[MODEL_MAX_LAYERS + 1][MODEL_MAX_LAYERS + 1];
    int cut[MODEL_MAX_LAYERS + 1][MODEL_MAX_LAYERS + 1];
    for (int i = 0; i < n; i++)
        best[1][i] = m->offset[n] - m->offset[i];
    for (int s = 2; s <= k; s++) {
        for (int i = 0; i + s <= n; i++) {
            best[s][i] = SIZE_MAX;
            for (int j = i + 1; j + s - 1 <= n; j++) {
                size_t here = m->offset[j] - m->offset[i];
                size_t worst = here > best[s - 1][j] ? here : best[s - 1][j];
                if (worst < best[s][i]) {
                    best[s][i] = worst;
                    cut[s][i] = j;
                }
            }
        }
    }
    first[0] = 0;
    for (int s = k, i = 0, idx = 1; s > 1; s--, idx++) {
        i = cut[s][i];
        first[idx] = i;
    }
    first[k] = n;
    return 0;
}

void model_init_layer(const model_shape_t *m, int l, uint64_t seed, float *params)
{
    int in = m->dims[l], out = m->dims[l + 1];
    rng_t r;
    rng_seed(&r, seed, 0x4c41594552ull + (uint64_t)l); /* "LAYER" + l: one stream per layer */
    float bound = sqrtf(6.0f / (float)in);
    size_t nw = (size_t)in * (size_t)out;
    for (size_t i = 0; i < nw; i++)
        params[i] = (2.0f * rng_float(&r) - 1.0f) * bound;
    memset(params + nw, 0, (size_t)out * sizeof(float));
}

void dense_forward(const float *x, const float *w, const float *b, float *y, int rows, int in,
                   int out, int relu)
{
    for (int i = 0; i < rows; i++)
        memcpy(y + (size_t)i * out, b, (size_t)out * sizeof(float));
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, rows, out, in, 1.0f, x, in, w, in, 1.0f, y,
                out);
    if (relu) {
        size_t n = (size_t)rows * (size_t)out;
        for (size_t i = 0; i < n; i++)
            y[i] = y[i] > 0.0f ? y[i] : 0.0f;
    }
}

void dense_backward(const float *x, const float *w, const float *dy, float *dw, float *db,
                    float *dx, int rows, int in, int out)
{
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, out, in, rows, 1.0f, dy, out, x, in, 1.0f,
                dw, in);
    for (int i = 0; i < rows; i++) {
        const float *row = dy + (size_t)i * out;
        for (int j = 0; j < out; j++)
            db[j] += row[j];
    }
    if (dx)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, rows, in, out, 1.0f, dy, out, w, in,
                    0.0f, dx, in);
}

void relu_backward(const float *y, float *dy, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dy[i] = y[i] > 0.0f ? dy[i] : 0.0f;
}

double softmax_xent(const float *logits, const uint8_t *labels, int rows, int classes, float scale,
                    float *dlogits, long *correct)
{
    double loss = 0.0;
    for (int i = 0; i < rows; i++) {
        const float *z = logits + (size_t)i * classes;
        int arg = 0;
        for (int c = 1; c < classes; c++)
            arg = z[c] > z[arg] ? c : arg;
        float zmax = z[arg];
        double sum = 0.0;
        for (int c = 0; c < classes; c++)
            sum += exp((double)(z[c] - zmax));
        /* log-sum-exp with the maximum taken out: no overflow for large logits. */
        double lse = (double)zmax + log(sum);
        loss += lse - (double)z[labels[i]];
        *correct += arg == labels[i];
        if (dlogits) {
            float *d = dlogits + (size_t)i * classes;
            for (int c = 0; c < classes; c++) {
                double p = exp((double)z[c] - lse);
                d[c] = scale * (float)(p - (c == labels[i]));
            }
        }
    }
    return loss;
}

double layer_flops(const model_shape_t *m, int l, int rows)
{
    return 2.0 * rows * (double)m->dims[l] * (double)m->dims[l + 1];
}
