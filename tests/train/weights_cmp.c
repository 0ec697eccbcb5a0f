/*
 * train-weights-cmp: compares the parameters of two files written by train --save-weights (or
 * two checkpoints).
 *
 *   train-weights-cmp --exact A B     parameters and optimizer state bitwise equal
 *   train-weights-cmp --rtol X A B    every layer's weights and biases within X relative:
 *                                     max |a - b| <= X * max |b| over the tensor
 *
 * The relative error is taken per tensor, not per element: an element near zero has no useful
 * relative error of its own. Prints the worst tensor; exit 0 when the files agree, 1 when not,
 * 2 on bad usage or an unreadable file.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/ckpt.h"

/* Max |a - b| / max |b| over N floats. */
static double tensor_error(const float *a, const float *b, size_t n)
{
    double diff = 0, scale = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - (double)b[i]);
        diff = d > diff ? d : diff;
        scale = fabs((double)b[i]) > scale ? fabs((double)b[i]) : scale;
    }
    return scale > 0 ? diff / scale : diff;
}

static int compare(const ckpt_t *a, const ckpt_t *b, int exact, double rtol)
{
    if (!ckpt_same_model(&a->meta, &b->meta) || a->meta.nstate != b->meta.nstate) {
        printf("train-weights-cmp: the files hold different models\n");
        return 1;
    }
    if (exact) {
        size_t n = (1 + (size_t)a->meta.nstate) * a->meta.nparams;
        for (size_t i = 0; i < n; i++) {
            if (memcmp(&a->data[i], &b->data[i], sizeof(float))) {
                printf("train-weights-cmp: DIFFERENT: value %zu of %zu is %.9g and %.9g\n", i, n,
                       a->data[i], b->data[i]);
                return 1;
            }
        }
        printf("train-weights-cmp: bitwise identical (%zu values)\n", n);
        return 0;
    }
    double worst = 0;
    int worst_layer = 0;
    model_shape_t m;
    char err[512];
    if (ckpt_model(&a->meta, &m, err, sizeof err)) { /* ckpt_read checked it already */
        printf("train-weights-cmp: %s\n", err);
        return 1;
    }
    for (int l = 0; l < m.nlayers; l++) {
        size_t off = m.offset[l], nw = m.layer[l].nweights, nb = m.layer[l].nbias;
        if (nw + nb == 0) /* pooling */
            continue;
        double e = fmax(tensor_error(a->data + off, b->data + off, nw),
                        tensor_error(a->data + off + nw, b->data + off + nw, nb));
        if (e > worst || worst_layer == 0) {
            worst = e;
            worst_layer = l + 1;
        }
    }
    printf("train-weights-cmp: %s: worst relative difference %.3g (layer %d), tolerance %.3g\n",
           worst <= rtol ? "within tolerance" : "DIFFERENT", worst, worst_layer, rtol);
    return worst <= rtol ? 0 : 1;
}

int main(int argc, char **argv)
{
    int exact = argc == 4 && !strcmp(argv[1], "--exact");
    double rtol = argc == 5 && !strcmp(argv[1], "--rtol") ? atof(argv[2]) : -1;
    if (!exact && !(rtol > 0)) {
        fprintf(stderr, "usage: train-weights-cmp --exact A B | --rtol X A B\n");
        return 2;
    }
    ckpt_t a, b;
    char err[1024];
    if (ckpt_read(argv[argc - 2], &a, err, sizeof err)) {
        fprintf(stderr, "train-weights-cmp: %s\n", err);
        return 2;
    }
    if (ckpt_read(argv[argc - 1], &b, err, sizeof err)) {
        fprintf(stderr, "train-weights-cmp: %s\n", err);
        ckpt_free(&a);
        return 2;
    }
    int rc = compare(&a, &b, exact, rtol);
    ckpt_free(&a);
    ckpt_free(&b);
    return rc;
}
