/* allreduce-check's inputs and references; see check_values.h. */
#include "check_values.h"

#include <string.h>

/* IEEE binary16 conversions, written here again on purpose: the reference must not share code
 * with the library it checks. Only small integers and their quotients pass through them. */
static float half_to_float(uint16_t h)
{
    int exp = (h >> 10) & 0x1f, mant = h & 0x3ff;
    float v;
    if (exp == 0)
        v = (float)mant / 16777216.0f;
    else if (exp == 31)
        v = mant ? 0.0f / 0.0f : 1.0f / 0.0f;
    else
        v = (1.0f + (float)mant / 1024.0f) * (float)(1 << exp) / 32768.0f;
    return (h & 0x8000) ? -v : v;
}

static uint16_t float_to_half(float f)
{
    /* Round to nearest even by searching the two neighbours: slow, obviously right. */
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = f < 0 ? -f : f;
    uint16_t lo = 0, hi = 0x7c00;
    while (hi - lo > 1) {
        uint16_t mid = (uint16_t)((lo + hi) / 2);
        if (half_to_float(mid) <= a)
            lo = mid;
        else
            hi = mid;
    }
    float dl = a - half_to_float(lo), dh = half_to_float(hi) - a;
    uint16_t r = dl < dh ? lo : dh < dl ? hi : (lo & 1) ? hi : lo;
    return sign | r;
}

static int value(int replica, size_t i)
{
    return (int)(((size_t)replica * 7 + i) % 9) - 4;
}

void check_fill(void *buf, gcl_dtype_t type, size_t count, int replica)
{
    uint16_t h[9];
    for (int k = 0; k < 9; k++)
        h[k] = float_to_half((float)value(replica, (size_t)k));
    for (size_t i = 0; i < count; i++) {
        if (type == GCL_F32)
            ((float *)buf)[i] = (float)value(replica, i);
        else
            ((uint16_t *)buf)[i] = h[i % 9];
    }
}

/* The replicas of REPLICA's group, computed from the definitions in gcl/types.h. */
static int members(gcl_group_t g, int n, int replica, int *out)
{
    if (g.kind == GCL_GROUP_ALL) {
        for (int j = 0; j < n; j++)
            out[j] = j;
        return n;
    }
    int k = g.size, stride = n / k;
    for (int j = 0; j < k; j++)
        out[j] =
            g.kind == GCL_GROUP_CONSECUTIVE ? replica / k * k + j : replica % stride + j * stride;
    return k;
}

void check_expected(check_result_t *r, gcl_comm_t comm, gcl_group_t group, int nreplicas,
                    int replica, gcl_dtype_t type, gcl_redop_t op)
{
    (void)comm;
    int m[4096];
    int k = members(group, nreplicas < 4096 ? nreplicas : 4096, replica, m);
    for (int res = 0; res < 9; res++) {
        double acc = value(m[0], (size_t)res);
        for (int j = 1; j < k; j++) {
            double v = value(m[j], (size_t)res);
            if (op == GCL_SUM || op == GCL_MEAN)
                acc += v;
            else if (op == GCL_MAX)
                acc = v > acc ? v : acc;
            else
                acc = v < acc ? v : acc;
        }
        if (op == GCL_MEAN) {
            float q = (float)acc / (float)k;
            acc = type == GCL_F16 ? half_to_float(float_to_half(q)) : q;
        }
        r->want[res] = acc;
    }
}

double check_element(const void *buf, gcl_dtype_t type, size_t i)
{
    return type == GCL_F32 ? ((const float *)buf)[i] : half_to_float(((const uint16_t *)buf)[i]);
}

double check_want(const check_result_t *r, size_t i)
{
    return r->want[i % 9];
}

size_t check_compare(const void *buf, gcl_dtype_t type, size_t count, const check_result_t *r)
{
    if (type == GCL_F32) {
        float w[9];
        for (int k = 0; k < 9; k++)
            w[k] = (float)r->want[k];
        const float *f = buf;
        for (size_t i = 0; i < count; i++)
            if (f[i] != w[i % 9])
                return i;
        return SIZE_MAX;
    }
    uint16_t w[9];
    for (int k = 0; k < 9; k++)
        w[k] = float_to_half((float)r->want[k]);
    const uint16_t *h = buf;
    for (size_t i = 0; i < count; i++)
        if (h[i] != w[i % 9])
            return i;
    return SIZE_MAX;
}

uint64_t check_hash(const void *buf, size_t bytes)
{
    const unsigned char *p = buf;
    uint64_t h = 1469598103934665603ull;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = (h ^ w) * 1099511628211ull;
    }
    for (; i < bytes; i++)
        h = (h ^ p[i]) * 1099511628211ull;
    return h ^ bytes;
}
