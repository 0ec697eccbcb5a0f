/*
 * Every all_reduce algorithm in the registry, run with no communication for groups of 1 to
 * MAX_RANKS ranks and awkward counts, in place and out of place, against references computed
 * independently (a plain fold over the ranks' inputs). Inputs are small integers, so every
 * reduction order gives the exact same answer and the check is exact.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "coll/half.h"
#include "sched_harness.h"

#define MAX_RANKS 33

/* Element i of rank r's input: a small integer (-3 .. 3), exact in every type. */
static int value(int r, uint64_t i)
{
    return (int)((i * 7 + (uint64_t)r * 3) % 7) - 3;
}

/* For MUL the values are 1, 2 or -1 so products stay exact. */
static int mul_value(int r, uint64_t i)
{
    static const int v[3] = {1, 2, -1};
    return (r + (int)(i % 5)) % 4 == 0 ? v[(i + (uint64_t)r) % 3] : 1;
}

static void fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    for (uint64_t i = 0; i < count; i++) {
        int v = a->op == COLL_MUL ? mul_value(r, i) : value(r, i);
        switch (a->dtype) {
        case COLL_F32:
            ((float *)in)[i] = (float)v;
            break;
        case COLL_F16:
            ((uint16_t *)in)[i] = coll_f32_to_f16((float)v);
            break;
        case COLL_I32:
            ((int32_t *)in)[i] = v;
            break;
        case COLL_BOOL:
            ((uint8_t *)in)[i] = v > 0;
            break;
        default:
            fail_msg("type not covered by this test");
        }
    }
}

/* The expected element i as a double, folded over the ranks in order. */
static double expected(const coll_args_t *a, uint64_t i)
{
    double acc = 0;
    for (int r = 0; r < a->nranks; r++) {
        double v = a->op == COLL_MUL ? mul_value(r, i) : value(r, i);
        if (a->dtype == COLL_BOOL)
            v = v > 0;
        if (r == 0) {
            acc = a->op == COLL_SQUARE_ADD ? v * v : v;
            continue;
        }
        switch (a->op) {
        case COLL_SUM:
        case COLL_MEAN:
            acc += v;
            break;
        case COLL_MUL:
            acc *= v;
            break;
        case COLL_MIN:
        case COLL_LOGICAL_AND:
            acc = v < acc ? v : acc;
            break;
        case COLL_MAX:
        case COLL_LOGICAL_OR:
            acc = v > acc ? v : acc;
            break;
        default:
            fail_msg("op not covered by this test");
        }
    }
    return a->op == COLL_MEAN ? acc / a->nranks : acc;
}

static double got(const coll_args_t *a, const void *out, uint64_t i)
{
    switch (a->dtype) {
    case COLL_F32:
        return ((const float *)out)[i];
    case COLL_F16:
        return coll_f16_to_f32(((const uint16_t *)out)[i]);
    case COLL_I32:
        return ((const int32_t *)out)[i];
    default:
        return ((const uint8_t *)out)[i];
    }
}

static void check_case(const coll_algo_t *algo, coll_args_t a, int in_place)
{
    harness_t h;
    if (harness_build(&h, algo, a, in_place, fill) != 0)
        return; /* not supported for these arguments: nothing to check */
    harness_run(&h, a);
    double *want = malloc((a.count + 1) * sizeof *want);
    assert_non_null(want);
    for (uint64_t i = 0; i < a.count; i++) {
        want[i] = expected(&a, i);
        if (a.op == COLL_MEAN) /* the divide happens in the element type */
            want[i] = a.dtype == COLL_F16 ? coll_f16_to_f32(coll_f32_to_f16((float)want[i]))
                                          : (float)want[i];
    }
    for (int r = 0; r < a.nranks; r++) {
        const void *out = harness_out(&h, r);
        for (uint64_t i = 0; i < a.count; i++) {
            if (got(&a, out, i) != want[i])
                fail_msg("%s %s/%s n=%d count=%llu %s: rank %d element %llu is %g, want %g",
                         algo->name, coll_dtype_name(a.dtype), coll_redop_name(a.op), a.nranks,
                         (unsigned long long)a.count, in_place ? "in place" : "out of place", r,
                         (unsigned long long)i, got(&a, out, i), want[i]);
        }
        /* Every rank holds bitwise the same result. */
        if (r > 0)
            assert_memory_equal(out, harness_out(&h, 0), a.count * a.elem_size);
    }
    free(want);
    harness_free(&h);
}

static const struct {
    coll_dtype_t t;
    coll_redop_t op;
} cases[] = {
    {COLL_F32, COLL_SUM},         {COLL_F32, COLL_MEAN},         {COLL_F32, COLL_MAX},
    {COLL_F32, COLL_MIN},         {COLL_F32, COLL_MUL},          {COLL_F16, COLL_SUM},
    {COLL_F16, COLL_MEAN},        {COLL_F16, COLL_MAX},          {COLL_I32, COLL_SUM},
    {COLL_BOOL, COLL_LOGICAL_OR}, {COLL_BOOL, COLL_LOGICAL_AND},
};

static void test_all_algorithms(void **state)
{
    (void)state;
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLREDUCE, &nalgo);
    assert_true(nalgo >= 1);
    for (size_t k = 0; k < nalgo; k++) {
        for (int n = 1; n <= MAX_RANKS; n++) {
            uint64_t counts[] = {0, 1, (uint64_t)n - 1, (uint64_t)n + 1, 997u * (uint64_t)n + 13};
            for (size_t c = 0; c < sizeof counts / sizeof counts[0]; c++) {
                for (size_t t = 0; t < sizeof cases / sizeof cases[0]; t++) {
                    /* The widest cases only for the large count, to keep the test quick. */
                    if (c == 4 && t > 1 && n % 4 != 1)
                        continue;
                    coll_args_t a = {.coll = COLL_ALLREDUCE,
                                     .nranks = n,
                                     .count = counts[c],
                                     .dtype = cases[t].t,
                                     .op = cases[t].op,
                                     .elem_size = coll_dtype_size(cases[t].t)};
                    check_case(algos[k], a, 0);
                    check_case(algos[k], a, 1);
                }
            }
        }
    }
}

/* With inexact data the reduction order matters: every rank must still get the same bits, and
 * the same bits from one run to the next. */
static void fill_random(int r, void *in, uint64_t count, const coll_args_t *a)
{
    (void)a;
    uint32_t x = 2463534242u ^ (uint32_t)(r * 7919);
    for (uint64_t i = 0; i < count; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        ((float *)in)[i] = (float)x / 4294967296.0f - 0.5f;
    }
}

static void test_bitwise_identical(void **state)
{
    (void)state;
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLREDUCE, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (int n = 2; n <= 12; n++) {
            coll_args_t a = {.coll = COLL_ALLREDUCE,
                             .nranks = n,
                             .count = 1031,
                             .dtype = COLL_F32,
                             .op = COLL_SUM,
                             .elem_size = 4};
            harness_t h1, h2;
            if (harness_build(&h1, algos[k], a, 0, fill_random) != 0)
                continue;
            assert_int_equal(harness_build(&h2, algos[k], a, 1, fill_random), 0);
            harness_run(&h1, a);
            harness_run(&h2, a);
            for (int r = 0; r < n; r++) {
                assert_memory_equal(harness_out(&h1, r), harness_out(&h1, 0), 1031 * 4);
                assert_memory_equal(harness_out(&h2, r), harness_out(&h1, 0), 1031 * 4);
            }
            harness_free(&h1);
            harness_free(&h2);
        }
    }
}

static void test_registry(void **state)
{
    (void)state;
    assert_non_null(coll_algo_find(COLL_ALLREDUCE, "clockwise_ring"));
    assert_null(coll_algo_find(COLL_ALLREDUCE, "no_such_algorithm"));
    assert_null(coll_algo_find(COLL_ALLREDUCE, NULL));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_bitwise_identical),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
