/*
 * train-conv-bench: the compute time of a CNN's convolutions in one training step of one
 * replica, lowered to CBLAS products (conv.c, what train runs) against direct loops
 * (conv_direct.c), measured side by side in one run.
 *
 *   train-conv-bench [--layers LIST] [--batch-size N] [--rounds N]
 *
 * The model is train's CNN (--layers as train takes it; default the default CNN) on 28 x 28 x 1
 * images. Each round times, on this thread's CPU clock (CLOCK_THREAD_CPUTIME_ID, so that other
 * processes on the machine count for little), the forward and backward passes of every
 * convolution for one micro-batch of --batch-size samples, first lowered and then direct, with
 * the same inputs and weights. It prints each layer's median over the rounds, the convolutions'
 * total and their ratio, and checks that both ways agree (within 1e-4 of the largest value;
 * they sum in different orders). Exit 0, 1 when they disagree, 2 on a bad option.
 */
#include <cblas.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/model.h"
#include "data/rng.h"

#define MAX_ROUNDS 1000

typedef struct {
    const conv_geom_t *g;
    int rows;
    float *x, *w, *b, *y, *dy, *dw, *db, *dx, *col;
    int input_grad;
} conv_case_t;

static double cpu_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static float *randoms(size_t n, uint64_t seed)
{
    float *v = malloc((n ? n : 1) * sizeof(float));
    rng_t r;
    rng_seed(&r, seed, 0);
    for (size_t i = 0; v && i < n; i++)
        v[i] = 2.0f * rng_float(&r) - 1.0f;
    return v;
}

/* One training step's passes of one convolution; returns the CPU seconds. */
static double run_case(conv_case_t *c, int lowered)
{
    const conv_geom_t *g = c->g;
    size_t nw = (size_t)g->oc * g->kernel * g->kernel * g->c;
    memset(c->dw, 0, nw * sizeof(float));
    memset(c->db, 0, (size_t)g->oc * sizeof(float));
    float *dx = c->input_grad ? c->dx : NULL;
    double t = cpu_s();
    if (lowered) {
        conv_forward(g, c->x, c->w, c->b, c->y, c->rows, 1, c->col);
        conv_backward(g, c->x, c->w, c->dy, c->dw, c->db, dx, c->rows, c->col, 1);
    } else {
        conv_forward_direct(g, c->x, c->w, c->b, c->y, c->rows, 1);
        conv_backward_direct(g, c->x, c->w, c->dy, c->dw, c->db, dx, c->rows);
    }
    return cpu_s() - t;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Largest |a - b| over the largest |b| of N values. */
static double disagreement(const float *a, const float *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - (double)b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return s > 0 ? d / s : d;
}

static int setup(conv_case_t *c, const layer_t *y, int rows, int first)
{
    const conv_geom_t *g = &y->g;
    size_t nx = (size_t)rows * g->h * g->w * g->c, ny = (size_t)rows * g->oh * g->ow * g->oc;
    memset(c, 0, sizeof *c);
    c->g = g, c->rows = rows, c->input_grad = !first;
    c->x = randoms(nx, 1), c->w = randoms(y->nweights, 2), c->b = randoms(y->nbias, 3);
    c->dy = randoms(ny, 4), c->y = randoms(ny, 5), c->dw = randoms(y->nweights, 6);
    c->db = randoms(y->nbias, 7), c->dx = randoms(nx, 8);
    c->col = randoms(conv_col_floats(g, rows), 9);
    return c->x && c->w && c->b && c->dy && c->y && c->dw && c->db && c->dx && c->col ? 0 : -1;
}

static void release(conv_case_t *c)
{
    free(c->x), free(c->w), free(c->b), free(c->y), free(c->dy), free(c->dw), free(c->db);
    free(c->dx), free(c->col);
}

/* Whether the two ways agree on case C: outputs and every gradient. */
static double compare(conv_case_t *c)
{
    const conv_geom_t *g = c->g;
    size_t nx = (size_t)c->rows * g->h * g->w * g->c, ny = (size_t)c->rows * g->oh * g->ow * g->oc;
    size_t nw = (size_t)g->oc * g->kernel * g->kernel * g->c;
    float *keep[4] = {malloc(ny * 4), malloc(nw * 4), malloc((size_t)g->oc * 4), malloc(nx * 4)};
    double e = INFINITY;
    if (keep[0] && keep[1] && keep[2] && keep[3]) {
        run_case(c, 1);
        memcpy(keep[0], c->y, ny * 4), memcpy(keep[1], c->dw, nw * 4);
        memcpy(keep[2], c->db, (size_t)g->oc * 4), memcpy(keep[3], c->dx, nx * 4);
        run_case(c, 0);
        e = fmax(disagreement(keep[0], c->y, ny), disagreement(keep[1], c->dw, nw));
        e = fmax(e, disagreement(keep[2], c->db, (size_t)g->oc));
        if (c->input_grad)
            e = fmax(e, disagreement(keep[3], c->dx, nx));
    }
    for (int i = 0; i < 4; i++)
        free(keep[i]);
    return e;
}

/* One line of layer L: its medians lowered (TA) and direct (TB) over ROUNDS, and whether the two
 * ways agree. Returns 1 when they do not. */
static int report_layer(const model_shape_t *m, int l, conv_case_t *c, double *ta, double *tb,
                        int rounds)
{
    double e = compare(c);
    char name[48], spec_text[64];
    layer_name(m, l, name, sizeof name);
    layer_text(&m->spec.layer[l], spec_text, sizeof spec_text);
    double a = median(ta, rounds), b = median(tb, rounds);
    printf("  %-6s %-14s %3dx%-3d -> %3dx%-3d lowered %9.3f ms  direct %9.3f ms  %6.1fx  "
           "(disagree %.1e)\n",
           name, spec_text, c->g->h, c->g->w, c->g->oh, c->g->ow, 1e3 * a, 1e3 * b,
           a > 0 ? b / a : 0, e);
    return !(e <= 1e-4);
}

static int usage(const char *what)
{
    fprintf(stderr,
            "train-conv-bench: %s (usage: train-conv-bench [--layers LIST] "
            "[--batch-size N] [--rounds N])\n",
            what);
    return 2;
}

static int parse(int argc, char **argv, model_opts_t *o, int *rows, int *rounds)
{
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc)
            return usage("every option takes a value");
        const char *opt = argv[i], *val = argv[++i];
        char *end;
        errno = 0;
        long v = strtol(val, &end, 10);
        int number = *val && !*end && !errno;
        if (!strcmp(opt, "--layers"))
            o->layers = val;
        else if (!strcmp(opt, "--batch-size") && number && v >= 1 && v <= 4096)
            *rows = (int)v;
        else if (!strcmp(opt, "--rounds") && number && v >= 1 && v <= MAX_ROUNDS)
            *rounds = (int)v;
        else
            return usage("--batch-size takes 1 to 4096, --rounds 1 to 1000, --layers a list");
    }
    return 0;
}

int main(int argc, char **argv)
{
    model_opts_t o = {NULL, 0, NULL, "--layers"};
    int rows = 32, rounds = 20;
    if (parse(argc, argv, &o, &rows, &rounds))
        return 2;
    openblas_set_num_threads(1); /* as train: one thread per caller */
    model_spec_t spec;
    model_shape_t m;
    char err[1024], text[1024];
    if (model_cnn.describe(&o, 1, 28, 28, 10, &spec, err, sizeof err) ||
        model_shape_build(&m, &spec, err, sizeof err)) {
        fprintf(stderr, "train-conv-bench: %s\n", err);
        return 2;
    }
    model_text(&m, text, sizeof text);
    printf("train-conv-bench: %s, micro-batch %d, %d rounds; CPU time of one step's forward and "
           "backward passes, median over the rounds\n",
           text, rows, rounds);
    conv_case_t cases[MODEL_MAX_LAYERS];
    int n = 0, bad = 0;
    for (int l = 0; l < m.nlayers; l++) {
        if (m.layer[l].kind != LAYER_CONV)
            continue;
        if (setup(&cases[n], &m.layer[l], rows, l == 0)) {
            fprintf(stderr, "train-conv-bench: out of host memory\n");
            return 1;
        }
        n++;
    }
    if (n == 0)
        return usage("the layers have no convolution");
    static double t[2][MODEL_MAX_LAYERS][MAX_ROUNDS], sum[2][MAX_ROUNDS];
    for (int r = 0; r < rounds; r++)
        for (int k = 0; k < n; k++)
            for (int way = 0; way < 2; way++) {
                t[way][k][r] = run_case(&cases[k], way == 0);
                sum[way][r] += t[way][k][r];
            }
    for (int k = 0, l = 0; k < n; k++, l++) {
        while (m.layer[l].kind != LAYER_CONV)
            l++;
        bad |= report_layer(&m, l, &cases[k], t[0][k], t[1][k], rounds);
    }
    double a = median(sum[0], rounds), b = median(sum[1], rounds);
    printf("train-conv-bench: convolutions of one step: lowered %.3f ms, direct %.3f ms: the "
           "direct loops take %.1fx the time\n",
           1e3 * a, 1e3 * b, a > 0 ? b / a : 0);
    if (bad)
        printf("train-conv-bench: FAILED: the two ways disagree by more than 1e-4\n");
    for (int k = 0; k < n; k++)
        release(&cases[k]);
    return bad;
}
