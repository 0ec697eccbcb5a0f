/* Names, sizes and validity of element types, reduction operators and collectives. */
#include "coll/types.h"

#include <string.h>

static const struct {
    const char *name;
    size_t size;
} dtypes[COLL_DTYPE_COUNT] = {
    [COLL_F32] = {"f32", 4}, [COLL_F16] = {"f16", 2},   [COLL_BF16] = {"bf16", 2},
    [COLL_I32] = {"i32", 4}, [COLL_I64] = {"i64", 8},   [COLL_U32] = {"u32", 4},
    [COLL_U64] = {"u64", 8}, [COLL_BOOL] = {"bool", 1},
};

static const char *const redops[COLL_REDOP_COUNT] = {
    [COLL_SUM] = "sum",
    [COLL_MEAN] = "mean",
    [COLL_MUL] = "mul",
    [COLL_MIN] = "min",
    [COLL_MAX] = "max",
    [COLL_SQUARE_ADD] = "square_add",
    [COLL_LOGICAL_AND] = "logical_and",
    [COLL_LOGICAL_OR] = "logical_or",
    [COLL_LOCAL] = "local",
};

static const char *const collectives[COLL_COLLECTIVE_COUNT] = {
    [COLL_ALLREDUCE] = "all_reduce", [COLL_REDUCE_SCATTER] = "reduce_scatter",
    [COLL_ALLGATHER] = "all_gather", [COLL_BROADCAST] = "broadcast",
    [COLL_ALLTOALL] = "all_to_all",  [COLL_BARRIER] = "barrier",
};

size_t coll_dtype_size(coll_dtype_t t)
{
    return (unsigned)t < COLL_DTYPE_COUNT ? dtypes[t].size : 0;
}

const char *coll_dtype_name(coll_dtype_t t)
{
    return (unsigned)t < COLL_DTYPE_COUNT ? dtypes[t].name : "?";
}

const char *coll_redop_name(coll_redop_t op)
{
    return (unsigned)op < COLL_REDOP_COUNT ? redops[op] : "?";
}

const char *coll_collective_name(coll_collective_t c)
{
    return (unsigned)c < COLL_COLLECTIVE_COUNT ? collectives[c] : "?";
}

int coll_dtype_parse(const char *name, coll_dtype_t *out)
{
    for (int i = 0; name && i < COLL_DTYPE_COUNT; i++) {
        if (strcmp(name, dtypes[i].name) == 0) {
            *out = (coll_dtype_t)i;
            return 0;
        }
    }
    return -1;
}

int coll_redop_parse(const char *name, coll_redop_t *out)
{
    for (int i = 0; name && i < COLL_REDOP_COUNT; i++) {
        if (strcmp(name, redops[i]) == 0) {
            *out = (coll_redop_t)i;
            return 0;
        }
    }
    return -1;
}

int coll_collective_parse(const char *name, coll_collective_t *out)
{
    for (int i = 0; name && i < COLL_COLLECTIVE_COUNT; i++) {
        if (strcmp(name, collectives[i]) == 0) {
            *out = (coll_collective_t)i;
            return 0;
        }
    }
    return -1;
}

bool coll_dtype_is_float(coll_dtype_t t)
{
    return t == COLL_F32 || t == COLL_F16 || t == COLL_BF16;
}

bool coll_redop_valid(coll_dtype_t t, coll_redop_t op, const char **why)
{
    const char *reason = NULL;
    if ((unsigned)t >= COLL_DTYPE_COUNT)
        reason = "unknown element type";
    else if ((unsigned)op >= COLL_REDOP_COUNT)
        reason = "unknown reduction operator";
    else if (coll_dtype_is_float(t) && (op == COLL_LOGICAL_AND || op == COLL_LOGICAL_OR))
        reason = "logical operators are defined on bool and integer types, not floating point";
    else if (!coll_dtype_is_float(t) && op == COLL_MEAN)
        reason = "mean is defined on floating-point types only (its result is a fraction)";
    else if (t == COLL_BOOL && (op == COLL_SUM || op == COLL_MUL || op == COLL_SQUARE_ADD))
        reason = "arithmetic on bool is not defined: use logical_or, logical_and, max or min";
    if (why)
        *why = reason;
    return reason == NULL;
}
