/* The CNN's layers and model (examples/train/model/conv.c, conv_direct.c, pool.c, cnn.c, model.c):
 * the lowered convolution against the direct loops, max pooling on a worked example, the whole
 * network's gradients against finite differences, the layer list's errors, the split, and the
 * model's round trip through a checkpoint header. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "data/ckpt.h"
#include "model/model.h"
#include "data/rng.h"

static void fill(float *v, size_t n, uint64_t seed)
{
    rng_t r;
    rng_seed(&r, seed, 0);
    for (size_t i = 0; i < n; i++)
        v[i] = 2.0f * rng_float(&r) - 1.0f;
}

/* max |a - b| / max |b| */
static double rel_error(const float *a, const float *b, size_t n)
{
    double d = 0, s = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs((double)a[i] - b[i]));
        s = fmax(s, fabs((double)b[i]));
    }
    return s > 0 ? d / s : d;
}

/* One geometry: im2col + sgemm against the direct loops, forward and backward, and the lowered
 * one twice gives the same bits. */
static void check_conv(int c, int h, int w, int oc, int k, int stride, int pad, int rows)
{
    conv_geom_t g = {.c = c, .h = h, .w = w, .oc = oc, .kernel = k, .stride = stride, .pad = pad};
    conv_geom_finish(&g);
    assert_true(g.oh > 0 && g.ow > 0);
    size_t nx = (size_t)rows * h * w * c, ny = (size_t)rows * g.oh * g.ow * oc;
    size_t nw = (size_t)oc * k * k * c;
    float *x = malloc(nx * 4), *wt = malloc(nw * 4), *b = malloc((size_t)oc * 4);
    float *y1 = malloc(ny * 4), *y2 = malloc(ny * 4), *y3 = malloc(ny * 4), *dy = malloc(ny * 4);
    float *col = malloc(conv_col_floats(&g, rows) * 4);
    float *dw1 = calloc(nw, 4), *dw2 = calloc(nw, 4), *db1 = calloc((size_t)oc, 4);
    float *db2 = calloc((size_t)oc, 4), *dx1 = malloc(nx * 4), *dx2 = malloc(nx * 4);
    fill(x, nx, 1);
    fill(wt, nw, 2);
    fill(b, (size_t)oc, 3);
    fill(dy, ny, 4);
    conv_forward(&g, x, wt, b, y1, rows, 1, col);
    conv_forward_direct(&g, x, wt, b, y2, rows, 1);
    conv_forward(&g, x, wt, b, y3, rows, 1, col);
    assert_memory_equal(y1, y3, ny * 4);
    double e = rel_error(y1, y2, ny);
    if (e > 1e-5)
        fail_msg("forward %dx%dx%d k%d s%d p%d: %g", h, w, c, k, stride, pad, e);
    conv_backward(&g, x, wt, dy, dw1, db1, dx1, rows, col, 1);
    conv_backward_direct(&g, x, wt, dy, dw2, db2, dx2, rows);
    e = fmax(rel_error(dw1, dw2, nw),
             fmax(rel_error(db1, db2, (size_t)oc), rel_error(dx1, dx2, nx)));
    if (e > 1e-5)
        fail_msg("backward %dx%dx%d k%d s%d p%d: %g", h, w, c, k, stride, pad, e);
    conv_backward(&g, x, wt, dy, dw1, db1, NULL, rows, col, 0); /* accumulates; no input grad */
    for (size_t i = 0; i < nw; i++)
        assert_true(fabsf(dw1[i] - 2 * dw2[i]) <= 1e-4f * (1 + fabsf(dw2[i])));
    free(x), free(wt), free(b), free(y1), free(y2), free(y3), free(dy), free(col);
    free(dw1), free(dw2), free(db1), free(db2), free(dx1), free(dx2);
}

static void test_conv_lowered_equals_direct(void **state)
{
    check_conv(1, 28, 28, 16, 3, 1, 1, 2);
    check_conv(16, 14, 14, 32, 3, 1, 1, 3);
    check_conv(3, 9, 7, 5, 5, 2, 2, 2);
    check_conv(4, 6, 6, 3, 1, 1, 0, 2);
    check_conv(2, 8, 8, 4, 4, 3, 0, 1); /* the window leaves pixels out */
}

static void test_pool_worked_example(void **state)
{
    /* pool.c's trace: one channel of 4 x 4, 2 x 2 windows, stride 2. */
    float x[16] = {1, 3, 2, 0, 0, 3, 1, 1, 4, 0, 5, 5, 4, 2, 0, 1}, y[4], dx[16];
    float dy[4] = {10, 20, 30, 40};
    conv_geom_t g = {.c = 1, .h = 4, .w = 4, .oc = 1, .kernel = 2, .stride = 2};
    conv_geom_finish(&g);
    assert_true(g.oh == 2 && g.ow == 2);
    pool_forward(&g, x, y, 1);
    assert_true(y[0] == 3 && y[1] == 2 && y[2] == 4 && y[3] == 5);
    pool_backward(&g, x, dy, dx, 1);
    float want[16] = {0, 10, 20, 0, 0, 0, 0, 0, 30, 0, 40, 0, 0, 0, 0, 0};
    assert_memory_equal(dx, want, sizeof want);
    /* Two channels side by side (NHWC), overlapping windows of 3 with stride 1 and padding 1:
     * padding never wins, even against negative values. */
    float x2[2 * 2 * 2] = {-1, 5, -2, 6, -3, 7, -4, 8}, y2[2 * 2 * 2];
    conv_geom_t g2 = {.c = 2, .h = 2, .w = 2, .oc = 2, .kernel = 3, .stride = 1, .pad = 1};
    conv_geom_finish(&g2);
    pool_forward(&g2, x2, y2, 1);
    for (int i = 0; i < 4; i++)
        assert_true(y2[2 * i] == -1 && y2[2 * i + 1] == 8);
}

/* A small CNN: 6x6x2 -> conv:3:3 -> pool:2 -> conv:4:2:1:0 -> dense:5 -> dense:3. */
enum { ROWS = 3 };

typedef struct {
    model_shape_t m;
    float *w, *g, *x, *act[MODEL_MAX_LAYERS + 1], *scratch[2], *col;
    uint8_t labels[ROWS];
} net_t;

static double loss_of(net_t *n)
{
    long correct = 0;
    memcpy(n->act[0], n->x, (size_t)ROWS * n->m.dims[0] * 4);
    model_forward(&n->m, 0, n->m.nlayers, n->w, n->act, ROWS, n->col);
    return softmax_xent(n->act[n->m.nlayers], n->labels, ROWS, model_classes(&n->m), 1.0f, NULL,
                        &correct);
}

static void test_cnn_gradients(void **state)
{
    net_t n;
    model_opts_t o = {NULL, 0, "conv:3:3,pool:2,conv:4:2:1:0,dense:5", NULL};
    model_spec_t spec;
    char err[256];
    assert_int_equal(model_cnn.describe(&o, 2, 6, 6, 3, &spec, err, sizeof err), 0);
    assert_int_equal(model_shape_build(&n.m, &spec, err, sizeof err), 0);
    assert_true(n.m.dims[1] == 6 * 6 * 3 && n.m.dims[2] == 3 * 3 * 3 && n.m.dims[3] == 2 * 2 * 4);
    size_t np = model_params(&n.m);
    assert_int_equal(np, (3 * 9 * 2 + 3) + 0 + (4 * 4 * 3 + 4) + (16 * 5 + 5) + (5 * 3 + 3));
    n.w = malloc(np * 4), n.g = calloc(np, 4), n.x = malloc((size_t)ROWS * 72 * 4);
    for (int l = 0; l <= n.m.nlayers; l++)
        n.act[l] = malloc((size_t)ROWS * n.m.dims[l] * 4);
    size_t inner = model_inner_values(&n.m, 0, n.m.nlayers);
    n.scratch[0] = malloc(ROWS * inner * 4), n.scratch[1] = malloc(ROWS * inner * 4);
    n.col = malloc(model_col_floats(&n.m, 0, n.m.nlayers, ROWS) * 4);
    fill(n.w, np, 7); /* biases too, so ReLUs and maxima sit away from their kinks */
    fill(n.x, (size_t)ROWS * 72, 8);
    for (int i = 0; i < ROWS; i++)
        n.labels[i] = (uint8_t)(i % 3);
    long correct = 0;
    loss_of(&n);
    float *dy = n.act[n.m.nlayers];
    softmax_xent(dy, n.labels, ROWS, 3, 1.0f, dy, &correct);
    model_backward(&n.m, 0, n.m.nlayers, n.w, n.act, dy, n.g, NULL, ROWS, n.scratch, n.col);
    const float h = 1e-3f;
    double worst = 0;
    for (size_t i = 0; i < np; i++) {
        float keep = n.w[i];
        n.w[i] = keep + h;
        double up = loss_of(&n);
        n.w[i] = keep - h;
        double down = loss_of(&n);
        n.w[i] = keep;
        double numeric = (up - down) / (2.0 * h), e = fabs(numeric - n.g[i]);
        if (e > 2e-3 + 1e-2 * fabs(numeric))
            fail_msg("parameter %zu: analytic %g, finite difference %g", i, n.g[i], numeric);
        worst = e > worst ? e : worst;
    }
    printf("  worst gradient error %.2e over %zu parameters\n", worst, np);
    free(n.w), free(n.g), free(n.x), free(n.scratch[0]), free(n.scratch[1]), free(n.col);
    for (int l = 0; l <= n.m.nlayers; l++)
        free(n.act[l]);
}

/* The layer list's error for TEXT on 28x28x1 images, or "" when it builds. */
static const char *build_error(const char *text, const char *source, char *err, size_t len)
{
    model_opts_t o = {NULL, 0, text, source};
    model_spec_t spec;
    model_shape_t m;
    err[0] = '\0';
    if (model_cnn.describe(&o, 1, 28, 28, 10, &spec, err, len) == 0)
        model_shape_build(&m, &spec, err, len);
    return err;
}

static void test_layer_list_errors(void **state)
{
    char e[512];
    assert_string_equal(build_error("conv:16:3,pool:2,dense:64", NULL, e, sizeof e), "");
    assert_string_equal(build_error("conv:16:3,bn:16", NULL, e, sizeof e),
                        "--layers: unknown layer 'bn:16' (expected conv:C:K[:S[:P]], "
                        "pool:K[:S[:P]] or dense:N)");
    assert_string_equal(build_error("conv:16", NULL, e, sizeof e),
                        "--layers: bad numbers in layer 'conv:16' (expected conv:C:K[:S[:P]], "
                        "pool:K[:S[:P]] or dense:N)");
    assert_string_equal(
        build_error("# the model\nconv:8:3\n\npool:2, relu\n", "model file m.txt", e, sizeof e),
        "model file m.txt line 4: unknown layer 'relu' (expected "
        "conv:C:K[:S[:P]], pool:K[:S[:P]] or dense:N)");
    assert_string_equal(build_error("pool:2,pool:2,pool:2,conv:8:5:1:0", NULL, e, sizeof e),
                        "layer 4 (conv:8:5:1:0): a 5x5 window does not fit its 3x3x1 input "
                        "padded by 0 (3x3)");
    assert_string_equal(build_error("conv:8:3:0", NULL, e, sizeof e),
                        "layer 1 (conv:8:3:0:1) on a 28x28x1 input: kernel 3, stride 0, padding "
                        "1: expected a kernel from 1 to 65535, a stride from 1 to the padded "
                        "input (30), a padding below the kernel");
    assert_string_equal(build_error("conv:8:3:40", NULL, e, sizeof e),
                        "layer 1 (conv:8:3:40:1) on a 28x28x1 input: kernel 3, stride 40, padding "
                        "1: expected a kernel from 1 to 65535, a stride from 1 to the padded "
                        "input (30), a padding below the kernel");
    assert_string_equal(build_error("conv:65536:3", NULL, e, sizeof e),
                        "layer 1 (conv:65536:3) on a 28x28x1 input: 51380224 output values per "
                        "sample and 589824 weights: expected at most 16777216 values and 2^34 "
                        "weights");
    assert_string_equal(build_error(" , ", NULL, e, sizeof e),
                        "--layers: no layers (expected items such as "
                        "conv:16:3,pool:2,conv:32:3,pool:2,dense:128)");
}

static void test_default_cnn(void **state)
{
    model_opts_t o = {NULL, 0, NULL, NULL};
    model_spec_t spec;
    model_shape_t m;
    char err[256], text[512];
    assert_int_equal(model_cnn.describe(&o, 1, 28, 28, 10, &spec, err, sizeof err), 0);
    assert_int_equal(model_shape_build(&m, &spec, err, sizeof err), 0);
    model_text(&m, text, sizeof text);
    assert_string_equal(text, "CNN 28x28x1 conv:16:3 pool:2 conv:32:3 pool:2 dense:128 dense:10");
    assert_int_equal(model_params(&m), 206922);
    int dims[] = {784, 28 * 28 * 16, 14 * 14 * 16, 14 * 14 * 32, 7 * 7 * 32, 128, 10};
    for (int l = 0; l <= m.nlayers; l++)
        assert_int_equal(m.dims[l], dims[l]);
    layer_name(&m, 2, text, sizeof text);
    assert_string_equal(text, "conv2");
    /* Split over 2 IPUs: the convolutions and poolings on the first, the dense layers on the
     * second (the least largest stage by parameters). */
    int first[MODEL_MAX_LAYERS + 1];
    assert_int_equal(model_split(&m, 2, first), 0);
    assert_true(first[0] == 0 && first[1] == 4 && first[2] == 6);
    /* The checkpoint header records it, and gives it back; an MLP's differs. */
    ckpt_meta_t a, b;
    memset(&a, 0, sizeof a);
    ckpt_set_model(&a, &m);
    model_shape_t back;
    assert_int_equal(ckpt_model(&a, &back, err, sizeof err), 0);
    assert_int_equal(memcmp(back.offset, m.offset, sizeof m.offset), 0);
    assert_int_equal(memcmp(back.dims, m.dims, sizeof m.dims), 0);
    model_text(&back, text, sizeof text);
    assert_string_equal(text, "CNN 28x28x1 conv:16:3 pool:2 conv:32:3 pool:2 dense:128 dense:10");
    int hidden[2] = {256, 128};
    model_shape_t mlp;
    model_shape_init(&mlp, 784, hidden, 2, 10);
    memset(&b, 0, sizeof b);
    ckpt_set_model(&b, &mlp);
    assert_int_equal(ckpt_same_model(&a, &b), 0);
    assert_int_equal(ckpt_same_model(&a, &a), 1);
    assert_true(b.in_c == 0 && b.kind[0] == 0); /* what a file from before CNNs holds */
    a.kind[2] = 7;
    assert_int_equal(ckpt_model(&a, &back, err, sizeof err), -1);
    assert_string_equal(err, "implausible header (layer 3 of kind 7)");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_conv_lowered_equals_direct),
        cmocka_unit_test(test_pool_worked_example),
        cmocka_unit_test(test_cnn_gradients),
        cmocka_unit_test(test_layer_list_errors),
        cmocka_unit_test(test_default_cnn),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
