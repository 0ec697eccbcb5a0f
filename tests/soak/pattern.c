/* The soak's periodic inputs and exact checks (pattern.h). */
#include "pattern.h"

#include <stdlib.h>
#include <string.h>

/* Bytes of elements compared by one memcmp, at least. */
enum { RUN_BYTES = 16384 };

double pat_value(int m, int pos, uint64_t i)
{
    return (double)((i + 7u * (uint64_t)m + 3u * (uint64_t)pos) % PAT_PERIOD) - 15.0;
}

void pat_store(void *out, gcl_dtype_t t, double v)
{
    float f = (float)v;
    switch (t) {
    case GCL_F16: {
        _Float16 h = (_Float16)f;
        memcpy(out, &h, 2);
        break;
    }
    case GCL_BF16: { /* small integers: the top half of the f32 is exact */
        uint32_t u;
        memcpy(&u, &f, 4);
        uint16_t b = (uint16_t)(u >> 16);
        memcpy(out, &b, 2);
        break;
    }
    case GCL_I32: {
        int32_t x = (int32_t)v;
        memcpy(out, &x, 4);
        break;
    }
    default:
        memcpy(out, &f, 4);
        break;
    }
}

void pat_set_input(pat_t *p, gcl_dtype_t t, int m, int pos)
{
    memset(p, 0, sizeof *p);
    p->t = t;
    p->es = gcl_dtype_size(t);
    for (int k = 0; k < PAT_PERIOD; k++)
        p->v[k] = pat_value(m, pos, (uint64_t)k);
}

void pat_set_reduced(pat_t *p, gcl_dtype_t t, gcl_redop_t op, const int *members, int n, int pos)
{
    memset(p, 0, sizeof *p);
    p->t = t;
    p->es = gcl_dtype_size(t);
    for (int k = 0; k < PAT_PERIOD; k++) {
        double acc = pat_value(members[0], pos, (uint64_t)k);
        for (int j = 1; j < n; j++) {
            double x = pat_value(members[j], pos, (uint64_t)k);
            acc = op == GCL_MAX ? (x > acc ? x : acc) : acc + x;
        }
        p->v[k] = acc;
    }
}

int pat_build(pat_t *p)
{
    size_t period_bytes = PAT_PERIOD * p->es;
    p->tile_periods = (RUN_BYTES + period_bytes - 1) / period_bytes;
    p->tile = malloc((p->tile_periods + 1) * period_bytes);
    if (!p->tile)
        return -1;
    for (size_t k = 0; k < (p->tile_periods + 1) * PAT_PERIOD; k++)
        pat_store(p->tile + k * p->es, p->t, p->v[k % PAT_PERIOD]);
    return 0;
}

void pat_free(pat_t *p)
{
    free(p->tile);
    p->tile = NULL;
}

void pat_fill(const pat_t *p, void *buf, uint64_t first, size_t n)
{
    size_t run = p->tile_periods * PAT_PERIOD, phase = (size_t)(first % PAT_PERIOD);
    const unsigned char *from = p->tile + phase * p->es;
    unsigned char *out = buf;
    for (size_t done = 0; done < n; done += run) {
        size_t k = n - done < run ? n - done : run;
        memcpy(out + done * p->es, from, k * p->es);
    }
}

size_t pat_check(const pat_t *p, const void *buf, uint64_t first, size_t n)
{
    size_t run = p->tile_periods * PAT_PERIOD, phase = (size_t)(first % PAT_PERIOD);
    const unsigned char *want = p->tile + phase * p->es;
    const unsigned char *got = buf;
    for (size_t done = 0; done < n; done += run) {
        size_t k = n - done < run ? n - done : run;
        if (memcmp(got + done * p->es, want, k * p->es) == 0)
            continue;
        for (size_t i = 0; i < k; i++)
            if (memcmp(got + (done + i) * p->es, want + i * p->es, p->es) != 0)
                return done + i;
    }
    return n;
}
