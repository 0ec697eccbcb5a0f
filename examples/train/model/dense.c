/*
 * Dense layers, the ReLU and the softmax cross-entropy loss (layers.h). The matrix products go
 * through CBLAS (OpenBLAS, one thread per caller).
 */
#include <cblas.h>
#include <math.h>
#include <string.h>

#include "model/layers.h"

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
