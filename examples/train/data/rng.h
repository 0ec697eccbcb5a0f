/*
 * The one random number generator of the training program: xoshiro256** seeded through
 * splitmix64 (Blackman and Vigna). Everything random in a run (initial weights, the order of the
 * samples in each epoch) comes from --seed through a stream of its own, so every replica and
 * every stage computes the same values without talking to the others.
 */
#ifndef TRAIN_RNG_H
#define TRAIN_RNG_H

#include <stdint.h>

typedef struct {
    uint64_t s[4];
} rng_t;

static inline uint64_t rng_splitmix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* The stream STREAM of SEED. */
static inline void rng_seed(rng_t *r, uint64_t seed, uint64_t stream)
{
    uint64_t x = seed ^ (stream * 0xd1342543de82ef95ull);
    for (int i = 0; i < 4; i++)
        r->s[i] = rng_splitmix(&x);
}

static inline uint64_t rng_next(rng_t *r)
{
    uint64_t *s = r->s;
    uint64_t x = s[1] * 5, result = ((x << 7) | (x >> 57)) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = (s[3] << 45) | (s[3] >> 19);
    return result;
}

/* A float in [0, 1) with 24 random bits: exact, the same on every machine. */
static inline float rng_float(rng_t *r)
{
    return (float)(rng_next(r) >> 40) * (1.0f / 16777216.0f);
}

/* An integer in [0, n), n > 0, without modulo bias (Lemire's multiply-shift with rejection). */
static inline uint32_t rng_below(rng_t *r, uint32_t n)
{
    uint64_t m = (rng_next(r) >> 32) * (uint64_t)n;
    if ((uint32_t)m < n) {
        uint32_t floor = (uint32_t)(-n) % n;
        while ((uint32_t)m < floor)
            m = (rng_next(r) >> 32) * (uint64_t)n;
    }
    return (uint32_t)(m >> 32);
}

#endif
