/*
 * Reduction kernels. Each type gets a loop per operator so that the compiler vectorises it; f16
 * and bf16 go through f32 in blocks that stay in L1.
 */
#include "coll/reduce.h"
#include "coll/half.h"

#include <stdint.h>
#include <string.h>

/* Blocks of f16/bf16 converted to f32 at a time: 3 x 1 KiB of f32 on the stack. */
enum { HALF_BLOCK = 256 };

/* min/max that propagate NaN, so a diverged replica shows in the result instead of vanishing. */
#define NAN_MIN(x, y) (((x) != (x) || (x) < (y)) ? (x) : (y))
#define NAN_MAX(x, y) (((x) != (x) || (x) > (y)) ? (x) : (y))

static void reduce_f32(coll_redop_t op, float *d, const float *a, const float *b, size_t n)
{
    size_t i;
    switch (op) {
    case COLL_SUM:
    case COLL_MEAN:
    case COLL_SQUARE_ADD:
        for (i = 0; i < n; i++)
            d[i] = a[i] + b[i];
        break;
    case COLL_MUL:
        for (i = 0; i < n; i++)
            d[i] = a[i] * b[i];
        break;
    case COLL_MIN:
        for (i = 0; i < n; i++)
            d[i] = NAN_MIN(a[i], b[i]);
        break;
    case COLL_MAX:
        for (i = 0; i < n; i++)
            d[i] = NAN_MAX(a[i], b[i]);
        break;
    default: /* LOCAL, and logical operators which are not valid on floats */
        if (d != a)
            memmove(d, a, n * sizeof *d);
        break;
    }
}

typedef void (*to_f32_fn)(float *, const uint16_t *, size_t);
typedef void (*from_f32_fn)(uint16_t *, const float *, size_t);

static void reduce_half(coll_redop_t op, uint16_t *d, const uint16_t *a, const uint16_t *b,
                        size_t n, to_f32_fn widen, from_f32_fn narrow)
{
    float fa[HALF_BLOCK], fb[HALF_BLOCK];
    for (size_t i = 0; i < n; i += HALF_BLOCK) {
        size_t m = n - i < HALF_BLOCK ? n - i : HALF_BLOCK;
        widen(fa, a + i, m);
        widen(fb, b + i, m);
        reduce_f32(op, fa, fa, fb, m);
        narrow(d + i, fa, m);
    }
}

/*
 * Integer kernels. Sums and products are computed in the unsigned type of the same width so that
 * overflow wraps instead of being undefined; comparisons use the declared type.
 */
#define DEFINE_REDUCE_INT(NAME, T, U)                                                              \
    static void NAME(coll_redop_t op, T *d, const T *a, const T *b, size_t n)                      \
    {                                                                                              \
        size_t i;                                                                                  \
        switch (op) {                                                                              \
        case COLL_SUM:                                                                             \
        case COLL_SQUARE_ADD:                                                                      \
            for (i = 0; i < n; i++)                                                                \
                d[i] = (T)((U)a[i] + (U)b[i]);                                                     \
            break;                                                                                 \
        case COLL_MUL:                                                                             \
            for (i = 0; i < n; i++)                                                                \
                d[i] = (T)((U)a[i] * (U)b[i]);                                                     \
            break;                                                                                 \
        case COLL_MIN:                                                                             \
            for (i = 0; i < n; i++)                                                                \
                d[i] = a[i] < b[i] ? a[i] : b[i];                                                  \
            break;                                                                                 \
        case COLL_MAX:                                                                             \
            for (i = 0; i < n; i++)                                                                \
                d[i] = a[i] > b[i] ? a[i] : b[i];                                                  \
            break;                                                                                 \
        case COLL_LOGICAL_AND:                                                                     \
            for (i = 0; i < n; i++)                                                                \
                d[i] = (T)(a[i] != 0 && b[i] != 0);                                                \
            break;                                                                                 \
        case COLL_LOGICAL_OR:                                                                      \
            for (i = 0; i < n; i++)                                                                \
                d[i] = (T)(a[i] != 0 || b[i] != 0);                                                \
            break;                                                                                 \
        default:                                                                                   \
            if (d != a)                                                                            \
                memmove(d, a, n * sizeof *d);                                                      \
            break;                                                                                 \
        }                                                                                          \
    }

DEFINE_REDUCE_INT(reduce_i32, int32_t, uint32_t)
DEFINE_REDUCE_INT(reduce_i64, int64_t, uint64_t)
DEFINE_REDUCE_INT(reduce_u32, uint32_t, uint32_t)
DEFINE_REDUCE_INT(reduce_u64, uint64_t, uint64_t)

/* bool is one byte holding 0 or 1; any non-zero byte counts as true. */
static void reduce_bool(coll_redop_t op, uint8_t *d, const uint8_t *a, const uint8_t *b, size_t n)
{
    size_t i;
    switch (op) {
    case COLL_LOGICAL_AND:
    case COLL_MIN:
        for (i = 0; i < n; i++)
            d[i] = (uint8_t)(a[i] != 0 && b[i] != 0);
        break;
    case COLL_LOGICAL_OR:
    case COLL_MAX:
        for (i = 0; i < n; i++)
            d[i] = (uint8_t)(a[i] != 0 || b[i] != 0);
        break;
    default:
        if (d != a)
            memmove(d, a, n);
        break;
    }
}

void coll_reduce(coll_dtype_t t, coll_redop_t op, void *dst, const void *a, const void *b, size_t n)
{
    if (n == 0)
        return;
    switch (t) {
    case COLL_F32:
        reduce_f32(op, dst, a, b, n);
        break;
    case COLL_F16:
        reduce_half(op, dst, a, b, n, coll_f32_from_f16, coll_f16_from_f32);
        break;
    case COLL_BF16:
        reduce_half(op, dst, a, b, n, coll_f32_from_bf16, coll_bf16_from_f32);
        break;
    case COLL_I32:
        reduce_i32(op, dst, a, b, n);
        break;
    case COLL_I64:
        reduce_i64(op, dst, a, b, n);
        break;
    case COLL_U32:
        reduce_u32(op, dst, a, b, n);
        break;
    case COLL_U64:
        reduce_u64(op, dst, a, b, n);
        break;
    case COLL_BOOL:
        reduce_bool(op, dst, a, b, n);
        break;
    default:
        break;
    }
}

void coll_square(coll_dtype_t t, void *dst, const void *src, size_t n)
{
    /* x * x is the product of a buffer with itself, so the MUL kernels do it with their own
     * rounding and wrapping rules. */
    coll_reduce(t, COLL_MUL, dst, src, src, n);
}

void coll_divide(coll_dtype_t t, void *buf, size_t n, unsigned divisor)
{
    if (divisor <= 1 || n == 0)
        return;
    if (t == COLL_F32) {
        float *f = buf;
        for (size_t i = 0; i < n; i++)
            f[i] = f[i] / (float)divisor;
        return;
    }
    if (t != COLL_F16 && t != COLL_BF16)
        return;
    uint16_t *h = buf;
    float tmp[HALF_BLOCK];
    for (size_t i = 0; i < n; i += HALF_BLOCK) {
        size_t m = n - i < HALF_BLOCK ? n - i : HALF_BLOCK;
        if (t == COLL_F16)
            coll_f32_from_f16(tmp, h + i, m);
        else
            coll_f32_from_bf16(tmp, h + i, m);
        for (size_t j = 0; j < m; j++)
            tmp[j] = tmp[j] / (float)divisor;
        if (t == COLL_F16)
            coll_f16_from_f32(h + i, tmp, m);
        else
            coll_bf16_from_f32(h + i, tmp, m);
    }
}

void coll_f16_from_f32(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = coll_f32_to_f16(src[i]);
}

void coll_f32_from_f16(float *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = coll_f16_to_f32(src[i]);
}

void coll_bf16_from_f32(uint16_t *dst, const float *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = coll_f32_to_bf16(src[i]);
}

void coll_f32_from_bf16(float *dst, const uint16_t *src, size_t n)
{
    for (size_t i = 0; i < n; i++)
        dst[i] = coll_bf16_to_f32(src[i]);
}
