/*
 * IEEE binary16 (f16) and bfloat16 (bf16) conversions, round to nearest even.
 *
 * Written with integer and float operations only, no branches on the hot path of normal numbers,
 * so that loops over arrays vectorise. f16 subnormals, infinities and NaNs are handled exactly.
 */
#ifndef COLL_HALF_H
#define COLL_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint32_t coll_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

static inline float coll_bits_f32(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static inline float coll_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t rest = (uint32_t)(h & 0x7fffu) << 13; /* exponent and mantissa in f32 position */
    uint32_t exp = rest & 0x0f800000u;
    float f;
    if (exp == 0x0f800000u) { /* infinity or NaN: keep the payload */
        f = coll_bits_f32(rest | 0x7f800000u);
    } else if (exp == 0) { /* zero or subnormal: the mantissa times 2^-24 is exact in f32 */
        f = (float)(h & 0x3ffu) * 0x1p-24f;
    } else { /* normal: rebias the exponent from 15 to 127 */
        f = coll_bits_f32(rest + ((127u - 15u) << 23));
    }
    return coll_bits_f32(coll_f32_bits(f) | sign);
}

static inline uint16_t coll_f32_to_f16(float f)
{
    uint32_t x = coll_f32_bits(f);
    uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    x &= 0x7fffffffu;
    if (x >= 0x7f800000u) /* infinity stays infinity; NaN becomes a quiet NaN */
        return sign | (x > 0x7f800000u ? 0x7e00u : 0x7c00u);
    if (x >= 0x477ff000u) /* 65520 and above round to infinity */
        return sign | 0x7c00u;
    if (x < 0x38800000u) {
        /* Below the smallest normal f16 (2^-14): adding 0.5 lines the f16 subnormal unit (2^-24)
         * up with the last mantissa bit of the sum, so the FPU rounds to nearest even for us. */
        float t = coll_bits_f32(x) + 0.5f;
        return sign | (uint16_t)(coll_f32_bits(t) - 0x3f000000u);
    }
    /* Normal: rebias the exponent, then round the 13 dropped bits to nearest even. */
    uint32_t odd = (x >> 13) & 1u;
    x += ((uint32_t)(15 - 127) << 23) + 0xfffu + odd;
    return sign | (uint16_t)(x >> 13);
}

static inline float coll_bf16_to_f32(uint16_t h)
{
    return coll_bits_f32((uint32_t)h << 16);
}

static inline uint16_t coll_f32_to_bf16(float f)
{
    uint32_t x = coll_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) /* NaN: keep it a (quiet) NaN */
        return (uint16_t)((x >> 16) | 0x40u);
    x += 0x7fffu + ((x >> 16) & 1u);
    return (uint16_t)(x >> 16);
}

#endif /* COLL_HALF_H */
