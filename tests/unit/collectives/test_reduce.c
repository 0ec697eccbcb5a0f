/* Reduction kernels and f16/bf16 conversions, against independent references. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <string.h>

#include "coll/half.h"
#include "coll/reduce.h"

/* GCC's _Float16 converts through libgcc or F16C: an implementation independent of ours. */
static uint16_t ref_f32_to_f16(float f)
{
    _Float16 h = (_Float16)f;
    uint16_t u;
    memcpy(&u, &h, 2);
    return u;
}

static float ref_f16_to_f32(uint16_t u)
{
    _Float16 h;
    memcpy(&h, &u, 2);
    return (float)h;
}

static void test_f16_to_f32_exhaustive(void **state)
{
    (void)state;
    for (uint32_t u = 0; u < 65536; u++) {
        float ours = coll_f16_to_f32((uint16_t)u), ref = ref_f16_to_f32((uint16_t)u);
        if (isnan(ref)) {
            assert_true(isnan(ours));
            continue;
        }
        assert_int_equal(coll_f32_bits(ours), coll_f32_bits(ref));
        /* Round trip: every non-NaN f16 survives f16 -> f32 -> f16 exactly. */
        assert_int_equal(coll_f32_to_f16(ours), u);
    }
}

static void test_f32_to_f16_rounding(void **state)
{
    (void)state;
    /* A walk over f32 bit patterns that hits every exponent and many mantissas, including the
     * halfway cases (the low 13 bits 0x1000) that round to even. */
    for (uint64_t x = 0; x <= 0xffffffffu; x += 0x0000f01du) {
        uint32_t bits = (uint32_t)x;
        float f = coll_bits_f32(bits);
        uint16_t ref = ref_f32_to_f16(f), ours = coll_f32_to_f16(f);
        if (isnan(f)) {
            assert_int_equal(ours & 0x7c00u, 0x7c00u);
            assert_true((ours & 0x3ffu) != 0);
            continue;
        }
        assert_int_equal(ours, ref);
        uint32_t half = (bits & ~0x1fffu) | 0x1000u;
        assert_int_equal(coll_f32_to_f16(coll_bits_f32(half)), ref_f32_to_f16(coll_bits_f32(half)));
    }
    assert_int_equal(coll_f32_to_f16(65504.0f), 0x7bff);
    assert_int_equal(coll_f32_to_f16(65520.0f), 0x7c00);
    assert_int_equal(coll_f32_to_f16(-0.0f), 0x8000);
    assert_int_equal(coll_f32_to_f16(0x1p-24f), 0x0001);
    assert_int_equal(coll_f32_to_f16(0x1p-25f), 0x0000); /* halfway to the smallest: to even */
}

static void test_bf16(void **state)
{
    (void)state;
    assert_int_equal(coll_f32_to_bf16(1.0f), 0x3f80);
    /* 1 + 2^-8 is halfway between bf16 1.0 and 1.0078125: to even (1.0). */
    assert_int_equal(coll_f32_to_bf16(1.00390625f), 0x3f80);
    /* 1 + 3 * 2^-8 is halfway between 1.0078125 (odd) and 1.015625: to even (up). */
    assert_int_equal(coll_f32_to_bf16(1.01171875f), 0x3f82);
    assert_true(isnan(coll_bf16_to_f32(coll_f32_to_bf16(NAN))));
    for (uint32_t u = 0; u < 65536; u++) {
        float f = coll_bf16_to_f32((uint16_t)u);
        if (!isnan(f))
            assert_int_equal(coll_f32_to_bf16(f), u);
    }
}

static void test_reduce_f32_ops(void **state)
{
    (void)state;
    float a[5] = {1, -2, 3, NAN, 0.5f}, b[5] = {4, 5, -6, 1, 0.25f}, d[5];
    coll_reduce(COLL_F32, COLL_SUM, d, a, b, 5);
    assert_true(d[0] == 5 && d[1] == 3 && d[2] == -3 && isnan(d[3]) && d[4] == 0.75f);
    coll_reduce(COLL_F32, COLL_MUL, d, a, b, 5);
    assert_true(d[0] == 4 && d[1] == -10 && d[2] == -18 && d[4] == 0.125f);
    coll_reduce(COLL_F32, COLL_MAX, d, a, b, 5);
    assert_true(d[0] == 4 && d[1] == 5 && d[2] == 3 && isnan(d[3]) && d[4] == 0.5f);
    coll_reduce(COLL_F32, COLL_MIN, d, b, a, 5);
    assert_true(d[0] == 1 && d[1] == -2 && d[2] == -6 && isnan(d[3]) && d[4] == 0.25f);
    coll_reduce(COLL_F32, COLL_LOCAL, d, a, b, 5);
    assert_true(d[0] == 1 && d[2] == 3);
    /* In place, aliasing the first operand. */
    coll_reduce(COLL_F32, COLL_SUM, a, a, b, 3);
    assert_true(a[0] == 5 && a[1] == 3 && a[2] == -3);
    float sq[3] = {3, -4, 0.5f};
    coll_square(COLL_F32, sq, sq, 3);
    assert_true(sq[0] == 9 && sq[1] == 16 && sq[2] == 0.25f);
    float m[2] = {9, 1};
    coll_divide(COLL_F32, m, 2, 4);
    assert_true(m[0] == 2.25f && m[1] == 0.25f);
}

static void test_reduce_half_types(void **state)
{
    (void)state;
    uint16_t a[300], b[300], d[300];
    for (int i = 0; i < 300; i++) {
        a[i] = coll_f32_to_f16((float)i);
        b[i] = coll_f32_to_f16(0.5f);
    }
    coll_reduce(COLL_F16, COLL_SUM, d, a, b, 300);
    for (int i = 0; i < 300; i++)
        assert_true(coll_f16_to_f32(d[i]) == (float)i + 0.5f);
    /* 2049 is not an f16: 2048 + 1 rounds to even (2048). */
    uint16_t x = coll_f32_to_f16(2048), one = coll_f32_to_f16(1), y;
    coll_reduce(COLL_F16, COLL_SUM, &y, &x, &one, 1);
    assert_true(coll_f16_to_f32(y) == 2048.0f);
    for (int i = 0; i < 300; i++)
        a[i] = coll_f32_to_bf16((float)i);
    coll_reduce(COLL_BF16, COLL_MAX, d, a, a, 300);
    assert_memory_equal(d, a, sizeof a);
    uint16_t h = coll_f32_to_f16(3.0f);
    coll_divide(COLL_F16, &h, 1, 4);
    assert_true(coll_f16_to_f32(h) == 0.75f);
}

static void test_reduce_integers(void **state)
{
    (void)state;
    int32_t a[4] = {INT32_MAX, -5, 0, 7}, b[4] = {1, 3, 0, -7}, d[4];
    coll_reduce(COLL_I32, COLL_SUM, d, a, b, 4); /* wraps, without undefined behaviour */
    assert_true(d[0] == INT32_MIN && d[1] == -2 && d[2] == 0 && d[3] == 0);
    coll_reduce(COLL_I32, COLL_MIN, d, a, b, 4);
    assert_true(d[0] == 1 && d[1] == -5 && d[3] == -7);
    coll_reduce(COLL_I32, COLL_LOGICAL_AND, d, a, b, 4);
    assert_true(d[0] == 1 && d[1] == 1 && d[2] == 0 && d[3] == 1);
    coll_reduce(COLL_I32, COLL_LOGICAL_OR, d, a, b, 4);
    assert_true(d[0] == 1 && d[2] == 0);
    uint64_t ua[2] = {UINT64_MAX, 3}, ub[2] = {2, 5}, ud[2];
    coll_reduce(COLL_U64, COLL_SUM, ud, ua, ub, 2);
    assert_true(ud[0] == 1 && ud[1] == 8);
    coll_reduce(COLL_U64, COLL_MUL, ud, ua, ub, 2);
    assert_true(ud[0] == UINT64_MAX - 1 && ud[1] == 15);
    int64_t ia[1] = {-3}, id[1];
    coll_square(COLL_I64, id, ia, 1);
    assert_true(id[0] == 9);
    uint8_t ba[4] = {0, 1, 0, 1}, bb[4] = {0, 0, 1, 1}, bd[4];
    coll_reduce(COLL_BOOL, COLL_LOGICAL_AND, bd, ba, bb, 4);
    assert_true(bd[0] == 0 && bd[1] == 0 && bd[2] == 0 && bd[3] == 1);
    coll_reduce(COLL_BOOL, COLL_LOGICAL_OR, bd, ba, bb, 4);
    assert_true(bd[0] == 0 && bd[1] == 1 && bd[2] == 1 && bd[3] == 1);
}

static void test_validity_and_names(void **state)
{
    (void)state;
    const char *why;
    assert_false(coll_redop_valid(COLL_I32, COLL_MEAN, &why));
    assert_non_null(strstr(why, "mean"));
    assert_false(coll_redop_valid(COLL_F32, COLL_LOGICAL_AND, &why));
    assert_non_null(strstr(why, "logical"));
    assert_false(coll_redop_valid(COLL_BOOL, COLL_SUM, &why));
    assert_true(coll_redop_valid(COLL_F16, COLL_MEAN, &why));
    assert_null(why);
    assert_true(coll_redop_valid(COLL_U32, COLL_LOGICAL_OR, NULL));
    assert_false(coll_redop_valid((coll_dtype_t)99, COLL_SUM, NULL));
    coll_dtype_t t;
    coll_redop_t op;
    coll_collective_t c;
    assert_int_equal(coll_dtype_parse("bf16", &t), 0);
    assert_int_equal(t, COLL_BF16);
    assert_int_equal(coll_dtype_parse("f64", &t), -1);
    assert_int_equal(coll_redop_parse("square_add", &op), 0);
    assert_int_equal(op, COLL_SQUARE_ADD);
    assert_int_equal(coll_collective_parse("all_to_all", &c), 0);
    assert_int_equal(c, COLL_ALLTOALL);
    assert_string_equal(coll_dtype_name(COLL_U64), "u64");
    assert_int_equal(coll_dtype_size(COLL_BOOL), 1);
    assert_int_equal(coll_dtype_size((coll_dtype_t)-1), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_to_f32_exhaustive),
        cmocka_unit_test(test_f32_to_f16_rounding),
        cmocka_unit_test(test_bf16),
        cmocka_unit_test(test_reduce_f32_ops),
        cmocka_unit_test(test_reduce_half_types),
        cmocka_unit_test(test_reduce_integers),
        cmocka_unit_test(test_validity_and_names),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
