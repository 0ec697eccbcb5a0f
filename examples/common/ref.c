#include "ref.h"

#include <string.h>

static int is_float(gcl_dtype_t t)
{
    return t == GCL_F32 || t == GCL_F16 || t == GCL_BF16;
}

int mref_valid(gcl_dtype_t t, gcl_redop_t op)
{
    if (is_float(t))
        return op != GCL_LOGICAL_AND && op != GCL_LOGICAL_OR;
    if (t == GCL_BOOL)
        return op == GCL_MIN || op == GCL_MAX || op == GCL_LOGICAL_AND || op == GCL_LOGICAL_OR ||
               op == GCL_LOCAL;
    return op != GCL_MEAN;
}

double mref_value(int r, size_t i, gcl_dtype_t t, gcl_redop_t op)
{
    size_t k = (size_t)r * 5 + i * 3;
    if (t == GCL_BOOL)
        return ((size_t)r * 3 + i) % 4 != 0;
    if (op == GCL_MUL) /* mostly ones, some twos and minus ones: products stay small */
        return ((size_t)r + i) % 5 == 0 ? ((t == GCL_U32 || t == GCL_U64 || i % 2) ? 2 : -1) : 1;
    if (t == GCL_U32 || t == GCL_U64)
        return (double)(k % 7);
    return (double)(k % 7) - 3;
}

static uint16_t bf16_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, 4);
    x += 0x7fffu + ((x >> 16) & 1u); /* round to nearest even (no NaN here) */
    return (uint16_t)(x >> 16);
}

void mref_store(void *p, gcl_dtype_t t, double v)
{
    switch (t) {
    case GCL_F32: {
        float f = (float)v;
        memcpy(p, &f, 4);
        break;
    }
    case GCL_F16: {
        _Float16 h = (_Float16)(float)v;
        memcpy(p, &h, 2);
        break;
    }
    case GCL_BF16: {
        uint16_t b = bf16_of((float)v);
        memcpy(p, &b, 2);
        break;
    }
    case GCL_I32: {
        int32_t x = (int32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case GCL_I64: {
        int64_t x = (int64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    case GCL_U32: {
        uint32_t x = (uint32_t)v;
        memcpy(p, &x, 4);
        break;
    }
    case GCL_U64: {
        uint64_t x = (uint64_t)v;
        memcpy(p, &x, 8);
        break;
    }
    case GCL_BOOL: {
        uint8_t x = v != 0;
        memcpy(p, &x, 1);
        break;
    }
    }
}

void mref_fill(void *buf, gcl_dtype_t t, gcl_redop_t op, int r, size_t first, size_t n)
{
    size_t es = gcl_dtype_size(t);
    for (size_t i = 0; i < n; i++)
        mref_store((char *)buf + i * es, t, mref_value(r, first + i, t, op));
}

double mref_reduce(const int *members, int n, size_t i, gcl_dtype_t t, gcl_redop_t op)
{
    double acc = 0;
    for (int q = 0; q < n; q++) {
        double v = mref_value(members[q], i, t, op);
        if (op == GCL_SQUARE_ADD)
            v = v * v;
        if (op == GCL_LOGICAL_AND || op == GCL_LOGICAL_OR)
            v = v != 0; /* logical operators answer 0 or 1 */
        if (q == 0) {
            acc = v;
            continue;
        }
        switch (op) {
        case GCL_MUL:
            acc *= v;
            break;
        case GCL_MIN:
        case GCL_LOGICAL_AND:
            acc = v < acc ? v : acc;
            break;
        case GCL_MAX:
        case GCL_LOGICAL_OR:
            acc = v > acc ? v : acc;
            break;
        default:
            acc += v;
            break;
        }
    }
    if (op == GCL_MEAN) /* the library divides the exact sum once, in f32 */
        acc = (double)((float)acc / (float)n);
    if (op == GCL_LOCAL)
        acc = mref_value(members[0], i, t, op);
    return acc;
}

const char *const ref_collectives[REF_NCOLL] = {"all_reduce", "reduce_scatter", "all_gather",
                                                "broadcast",  "all_to_all",     "barrier"};

int ref_collective(const char *name)
{
    for (int i = 0; name && i < REF_NCOLL; i++)
        if (!strcmp(name, ref_collectives[i]))
            return i;
    return -1;
}

int ref_members(gcl_group_t g, int nreplicas, int replica, int *out)
{
    int n = g.kind == GCL_GROUP_ALL ? nreplicas : g.size;
    for (int q = 0; q < n; q++)
        out[q] = g.kind == GCL_GROUP_ALL ? q
                 : g.kind == GCL_GROUP_CONSECUTIVE
                     ? replica / n * n + q
                     : replica % (nreplicas / n) + q * (nreplicas / n);
    return n;
}

void ref_sizes(int coll, size_t count, int n, size_t *in, size_t *out)
{
    *in = *out = count;
    if (coll == REF_REDUCE_SCATTER)
        *in = (size_t)n * count;
    if (coll == REF_ALL_GATHER)
        *out = (size_t)n * count;
    if (coll == REF_ALL_TO_ALL)
        *in = *out = (size_t)n * count;
    if (coll == REF_BARRIER)
        *in = *out = 0;
}

double ref_expect(int coll, gcl_dtype_t t, gcl_redop_t op, size_t count, int root,
                  const int *members, int n, int rank, size_t i)
{
    int me = members[rank];
    switch (coll) {
    case REF_ALL_REDUCE:
        return op == GCL_LOCAL ? mref_value(me, i, t, op) : mref_reduce(members, n, i, t, op);
    case REF_REDUCE_SCATTER: {
        size_t k = (size_t)rank * count + i;
        return op == GCL_LOCAL ? mref_value(me, k, t, op) : mref_reduce(members, n, k, t, op);
    }
    case REF_ALL_GATHER:
        return mref_value(members[i / count], i % count, t, op);
    case REF_BROADCAST:
        return mref_value(members[root], i, t, op);
    default: /* all_to_all: block q came from rank q's block RANK */
        return mref_value(members[i / count], (size_t)rank * count + i % count, t, op);
    }
}
