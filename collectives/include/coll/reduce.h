/*
 * Reduction kernels: element-wise operations on buffers of any collective element type.
 *
 * f16 and bf16 are converted to f32 in blocks, reduced, and rounded back to nearest even once per
 * call, so a reduction's rounding depends only on the order of calls, which schedules fix.
 * Integer arithmetic wraps (two's complement) rather than overflowing.
 */
#ifndef COLL_REDUCE_H
#define COLL_REDUCE_H

#include <stdint.h>

#include "coll/types.h"

/*
 * dst[i] = a[i] OP b[i] for i < n. dst may be a or b (exactly, not partially overlapping).
 * MEAN reduces as SUM (coll_divide finishes it); SQUARE_ADD adds partial sums of squares (callers
 * square each contribution first with coll_square); LOCAL copies a.
 */
void coll_reduce(coll_dtype_t t, coll_redop_t op, void *dst, const void *a, const void *b,
                 size_t n);

/* dst[i] = src[i] * src[i]; dst may be src. */
void coll_square(coll_dtype_t t, void *dst, const void *src, size_t n);

/* buf[i] = buf[i] / divisor, for floating-point types (finishes a MEAN). */
void coll_divide(coll_dtype_t t, void *buf, size_t n, unsigned divisor);

/* Bulk conversions between f32 and f16 / bf16. */
void coll_f16_from_f32(uint16_t *dst, const float *src, size_t n);
void coll_f32_from_f16(float *dst, const uint16_t *src, size_t n);
void coll_bf16_from_f32(uint16_t *dst, const float *src, size_t n);
void coll_f32_from_bf16(float *dst, const uint16_t *src, size_t n);

#endif /* COLL_REDUCE_H */
