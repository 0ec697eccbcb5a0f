/* The model's math (examples/train/model/model.c, optim.c, half.h): gradients against finite
 * differences, the stage split, initialisation, the optimizers and the f16 casts. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/half.h"
#include "model/model.h"
#include "model/optim.h"
#include "data/rng.h"

enum { ROWS = 4, MAXW = 8 };

typedef struct {
    model_shape_t m;
    float *params, *grads;
    float x[ROWS * MAXW];
    uint8_t labels[ROWS];
    float act[MODEL_MAX_LAYERS + 1][ROWS * MAXW];
} net_t;

/* The loss of the whole model, as the training step computes it. */
static double loss_of(net_t *n)
{
    const model_shape_t *m = &n->m;
    memcpy(n->act[0], n->x, sizeof n->x);
    for (int l = 0; l < m->nlayers; l++) {
        const float *w = n->params + m->offset[l];
        dense_forward(n->act[l], w, w + m->dims[l] * m->dims[l + 1], n->act[l + 1], ROWS,
                      m->dims[l], m->dims[l + 1], l < m->nlayers - 1);
    }
    long correct = 0;
    return softmax_xent(n->act[m->nlayers], n->labels, ROWS, m->dims[m->nlayers], 1.0f, NULL,
                        &correct);
}

/* The analytic gradient of loss_of, through the backward functions. */
static void backward(net_t *n)
{
    const model_shape_t *m = &n->m;
    float dy[ROWS * MAXW], dx[ROWS * MAXW];
    long correct = 0;
    loss_of(n);
    softmax_xent(n->act[m->nlayers], n->labels, ROWS, m->dims[m->nlayers], 1.0f, dy, &correct);
    memset(n->grads, 0, model_params(m) * sizeof(float));
    for (int l = m->nlayers - 1; l >= 0; l--) {
        int in = m->dims[l], out = m->dims[l + 1];
        if (l < m->nlayers - 1)
            relu_backward(n->act[l + 1], dy, (size_t)ROWS * out);
        float *g = n->grads + m->offset[l];
        dense_backward(n->act[l], n->params + m->offset[l], dy, g, g + in * out, l ? dx : NULL,
                       ROWS, in, out);
        memcpy(dy, dx, sizeof dx);
    }
}

static void test_gradients(void **state)
{
    net_t n;
    int hidden[2] = {7, 5};
    model_shape_init(&n.m, 6, hidden, 2, 3);
    size_t np = model_params(&n.m);
    n.params = malloc(np * sizeof(float));
    n.grads = malloc(np * sizeof(float));
    rng_t r;
    rng_seed(&r, 3, 0);
    for (size_t i = 0; i < np; i++)
        n.params[i] = rng_float(&r) - 0.5f; /* biases too, so ReLUs sit away from their kink */
    for (int i = 0; i < ROWS * 6; i++)
        n.x[i] = 2.0f * rng_float(&r) - 1.0f;
    for (int i = 0; i < ROWS; i++)
        n.labels[i] = (uint8_t)(i % 3);
    backward(&n);
    const float h = 1e-3f; /* small enough that no ReLU crosses its kink */
    double worst = 0;
    for (size_t i = 0; i < np; i++) {
        float keep = n.params[i];
        n.params[i] = keep + h;
        double up = loss_of(&n);
        n.params[i] = keep - h;
        double down = loss_of(&n);
        n.params[i] = keep;
        double numeric = (up - down) / (2.0 * h), err = fabs(numeric - n.grads[i]);
        if (err > 2e-3 + 1e-2 * fabs(numeric))
            fail_msg("parameter %zu: analytic %g, finite difference %g", i, n.grads[i], numeric);
        worst = err > worst ? err : worst;
    }
    printf("  worst gradient error %.2e over %zu parameters\n", worst, np);
    free(n.params);
    free(n.grads);
}

static void test_softmax(void **state)
{
    /* Huge logits: the log-sum-exp does not overflow. */
    float z[2 * 3] = {1000, 0, -1000, 0, 0, 0}, d[6];
    uint8_t y[2] = {0, 2};
    long correct = 0;
    double loss = softmax_xent(z, y, 2, 3, 0.5f, d, &correct);
    assert_true(fabs(loss - log(3.0)) < 1e-6);
    assert_int_equal(correct, 1); /* ties go to the first class, which row 1's label is not */
    assert_true(fabsf(d[0]) < 1e-7f && fabsf(d[5] - 0.5f * (1.0f / 3 - 1)) < 1e-6f);
}

static void test_split(void **state)
{
    model_shape_t m;
    int first[MODEL_MAX_LAYERS + 1];
    int h2[2] = {256, 128}, h3[3] = {8192, 8192, 8192};
    model_shape_init(&m, 784, h2, 2, 10);
    assert_int_equal(model_params(&m), 235146);
    assert_int_equal(model_split(&m, 1, first), 0);
    assert_true(first[0] == 0 && first[1] == 3);
    assert_int_equal(model_split(&m, 2, first), 0);
    assert_true(first[0] == 0 && first[1] == 1 && first[2] == 3);
    assert_int_equal(model_split(&m, 3, first), 0);
    assert_true(first[1] == 1 && first[2] == 2 && first[3] == 3);
    assert_int_equal(model_split(&m, 4, first), -1);
    model_shape_init(&m, 784, h3, 3, 10);
    assert_int_equal(model_split(&m, 2, first), 0);
    assert_true(first[1] == 2); /* 784x8192 + 8192x8192 | 8192x8192 + 8192x10 */
    assert_int_equal(model_split(&m, 4, first), 0);
    assert_true(first[1] == 1 && first[2] == 2 && first[3] == 3 && first[4] == 4);
}

static void test_init(void **state)
{
    model_shape_t m;
    int h[2] = {16, 8};
    model_shape_init(&m, 32, h, 2, 4);
    float *a = malloc(model_params(&m) * sizeof(float)), *b = malloc(model_params(&m) * 4);
    for (int l = 0; l < 3; l++)
        model_init_layer(&m, l, 5, a + m.offset[l]);
    for (int l = 2; l >= 0; l--) /* any order, any subset: the same values */
        model_init_layer(&m, l, 5, b + m.offset[l]);
    assert_memory_equal(a, b, model_params(&m) * sizeof(float));
    float bound = sqrtf(6.0f / 32);
    for (int i = 0; i < 32 * 16; i++)
        assert_true(fabsf(a[i]) <= bound);
    assert_true(a[32 * 16] == 0.0f); /* biases start at zero */
    model_init_layer(&m, 0, 6, b);
    assert_memory_not_equal(a, b, 32 * 16 * sizeof(float));
    free(a);
    free(b);
}

static void test_sgd(void **state)
{
    optim_cfg_t c = {.kind = OPTIM_SGD, .lr = 0.5, .momentum = 0.5, .weight_decay = 0.25};
    float w[2] = {1.0f, 2.0f}, g[2] = {1.0f, -1.0f}, v[2] = {0, 0};
    optim_update(&c, 0.5, 0, w, g, v, NULL, 2, 1);
    /* v = g + wd w = (1.25, -0.5); w -= 0.5 v */
    assert_true(v[0] == 1.25f && v[1] == -0.5f && w[0] == 0.375f && w[1] == 2.25f);
    optim_update(&c, 0.5, 1, w, g, v, NULL, 2, 0);
    /* no decay (a bias): v = 0.5 v + g = (1.625, -1.25) */
    assert_true(v[0] == 1.625f && v[1] == -1.25f && w[0] == 0.375f - 0.8125f);
}

static void test_adam(void **state)
{
    optim_cfg_t c = {.kind = OPTIM_ADAM, .lr = 0.01, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    float w[3] = {0, 0, 0}, g[3] = {4.0f, -0.001f, 0}, m[3] = {0}, v[3] = {0};
    optim_update(&c, 0.01, 0, w, g, m, v, 3, 1);
    /* The first bias-corrected step is lr x sign(g), whatever the gradient's size. */
    assert_true(fabsf(w[0] + 0.01f) < 1e-6f && fabsf(w[1] - 0.01f) < 1e-5f && w[2] == 0.0f);
    assert_int_equal(optim_state_vectors(&c), 2);
}

static void test_schedule(void **state)
{
    optim_cfg_t c = {.kind = OPTIM_SGD, .lr = 0.1, .schedule = LR_COSINE};
    assert_true(optim_lr(&c, 0, 100) == 0.1);
    assert_true(fabs(optim_lr(&c, 50, 100) - 0.05) < 1e-12);
    assert_true(optim_lr(&c, 99, 100) < 0.0001);
    c.warmup_steps = 10;
    assert_true(fabs(optim_lr(&c, 0, 100) - 0.01) < 1e-12);
    assert_true(fabs(optim_lr(&c, 9, 100) - 0.1) < 1e-12);
    c.schedule = LR_CONSTANT;
    assert_true(optim_lr(&c, 99, 100) == 0.1);
}

static void test_half(void **state)
{
    static const struct {
        float f;
        uint16_t h;
    } cases[] = {
        {0.0f, 0x0000},           {-0.0f, 0x8000},          {1.0f, 0x3c00},
        {-2.0f, 0xc000},          {65504.0f, 0x7bff},       {65520.0f, 0x7c00}, /* rounds up: inf */
        {65519.0f, 0x7bff},       {6.1035156e-05f, 0x0400}, /* smallest normal */
        {5.9604645e-08f, 0x0001},                           /* smallest subnormal */
        {2.9802322e-08f, 0x0000},                           /* half of it: ties to even, 0 */
        {4.4703484e-08f, 0x0001},                           /* 0.75 of it: rounds up */
        {1.00048828125f, 0x3c00},                           /* a tie between 1 and 1+2^-10: even */
        {1.00146484375f, 0x3c02},                           /* a tie: up to even */
        {INFINITY, 0x7c00},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        uint16_t h = half_from_float(cases[i].f);
        if (h != cases[i].h)
            fail_msg("half_from_float(%g) = %04x, expected %04x", cases[i].f, h, cases[i].h);
    }
    assert_true(isnan(half_to_float(half_from_float(NAN))));
    /* Every finite half converts to float and back unchanged. */
    for (uint32_t h = 0; h < 0x10000; h++) {
        if ((h & 0x7c00) == 0x7c00)
            continue;
        assert_int_equal(half_from_float(half_to_float((uint16_t)h)), h);
    }
    assert_true(half_to_float(0x0001) == 5.9604645e-08f);
    assert_true(half_to_float(0x3555) == 0.333251953125f);
}

int main(void)
{
    openblas_set_num_threads(1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gradients), cmocka_unit_test(test_softmax),
        cmocka_unit_test(test_split),     cmocka_unit_test(test_init),
        cmocka_unit_test(test_sgd),       cmocka_unit_test(test_adam),
        cmocka_unit_test(test_schedule),  cmocka_unit_test(test_half),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
