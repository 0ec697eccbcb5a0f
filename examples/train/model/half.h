/*
 * IEEE binary16 conversions for the f16 gradient all-reduce, in plain C so that the result does
 * not depend on the compiler or the CPU's conversion instructions: round to nearest, ties to
 * even; overflow to infinity; NaN kept NaN.
 */
#ifndef TRAIN_HALF_H
#define TRAIN_HALF_H

#include <stdint.h>
#include <string.h>

static inline uint16_t half_from_float(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t sign = (x >> 16) & 0x8000u, mag = x & 0x7fffffffu;
    if (mag >= 0x7f800000u) /* inf or NaN */
        return (uint16_t)(sign | 0x7c00u | (mag > 0x7f800000u ? 0x200u : 0));
    if (mag >= 0x477ff000u) /* rounds to at least 65520: overflows */
        return (uint16_t)(sign | 0x7c00u);
    if (mag < 0x38800000u) { /* below the smallest normal half: subnormal or zero */
        if (mag < 0x33000000u)
            return (uint16_t)sign;
        uint32_t m = (mag & 0x7fffffu) | 0x800000u;
        int shift = 126 - (int)(mag >> 23);
        uint32_t q = m >> shift, rem = m & ((1u << shift) - 1), half = 1u << (shift - 1);
        q += rem > half || (rem == half && (q & 1));
        return (uint16_t)(sign | q);
    }
    uint32_t q = (mag - 0x38000000u) >> 13, rem = mag & 0x1fffu;
    q += rem > 0x1000u || (rem == 0x1000u && (q & 1));
    return (uint16_t)(sign | q);
}

static inline float half_to_float(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu, x;
    if (e == 0x1f) {
        x = sign | 0x7f800000u | (m << 13);
    } else if (e != 0) {
        x = sign | ((e + 112) << 23) | (m << 13);
    } else if (m == 0) {
        x = sign;
    } else { /* subnormal: normalise */
        e = 113;
        while (!(m & 0x400u)) {
            m <<= 1;
            e--;
        }
        x = sign | (e << 23) | ((m & 0x3ffu) << 13);
    }
    float f;
    memcpy(&f, &x, 4);
    return f;
}

#endif
