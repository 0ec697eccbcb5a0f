/* Sample order and batches; see order.h. */
#include "data/order.h"

#include <stddef.h>

#include "data/rng.h"

void order_epoch(uint64_t seed, long epoch, uint32_t n, uint32_t *perm)
{
    rng_t r;
    rng_seed(&r, seed, 0x5045524d00000000ull + (uint64_t)epoch); /* "PERM" */
    for (uint32_t i = 0; i < n; i++)
        perm[i] = i;
    for (uint32_t i = n - 1; n > 0 && i > 0; i--) {
        uint32_t j = rng_below(&r, i + 1), t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

long order_position(const order_job_t *j, long step, int replica, int m, int i)
{
    long pos = step % j->steps_per_epoch;
    return pos * j->global_batch + (long)replica * j->accumulation * j->micro + (long)m * j->micro +
           i;
}

int order_flipped(uint64_t seed, long epoch, uint32_t sample)
{
    rng_t r;
    rng_seed(&r, seed, 0x464c495000000000ull ^ ((uint64_t)epoch << 32) ^ sample); /* "FLIP" */
    return (int)(rng_next(&r) >> 63);
}

void order_load_images(const float *pixel, const idx_array_t *set, const uint32_t *idx, int rows,
                       const order_flip_t *flip, float *x)
{
    size_t d = (size_t)set->rows * set->cols, w = (size_t)set->cols;
    for (int r = 0; r < rows; r++, x += d) {
        const uint8_t *src = set->data + (size_t)idx[r] * d;
        if (!flip || !order_flipped(flip->seed, flip->epoch, idx[r])) {
            for (size_t k = 0; k < d; k++)
                x[k] = pixel[src[k]];
            continue;
        }
        for (size_t k = 0; k < d; k += w) /* each row of the image mirrored */
            for (size_t c = 0; c < w; c++)
                x[k + c] = pixel[src[k + w - 1 - c]];
    }
}
