/*
 * Element types, reduction operators and replica groups of the public API.
 */
#ifndef GCL_TYPES_H
#define GCL_TYPES_H

#include <stddef.h>

/* Element types. bool is one byte (0 or 1); f16 is IEEE binary16; bf16 is bfloat16. */
typedef enum {
    GCL_F32 = 0,
    GCL_F16 = 1,
    GCL_BF16 = 2,
    GCL_I32 = 3,
    GCL_I64 = 4,
    GCL_U32 = 5,
    GCL_U64 = 6,
    GCL_BOOL = 7,
} gcl_dtype_t;

/* Reduction operators, as GCL's CollectiveOperator. Which types take which operators:
 *   f32 f16 bf16   sum mean mul min max square_add local
 *   integers       sum mul min max square_add logical_and logical_or local
 *   bool           min max logical_and logical_or local
 * Anything else is GCL_ERR_INVALID_ARGUMENT. square_add sums the squares of the inputs; local
 * leaves every replica with its own input (no communication). */
typedef enum {
    GCL_SUM = 0,
    GCL_MEAN = 1,
    GCL_MUL = 2,
    GCL_MIN = 3,
    GCL_MAX = 4,
    GCL_SQUARE_ADD = 5,
    GCL_LOGICAL_AND = 6,
    GCL_LOGICAL_OR = 7,
    GCL_LOCAL = 8,
} gcl_redop_t;

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)

/* Bytes per element of TYPE, or 0 if TYPE is not one. */
size_t gcl_dtype_size(gcl_dtype_t type);
/* "f32", "sum", ...; "?" for a value that is not one. */
const char *gcl_dtype_name(gcl_dtype_t type);
const char *gcl_redop_name(gcl_redop_t op);
/* Parse those names, in any case. gcl_redop_parse also takes GCL's CollectiveOperator names
 * (ADD for sum, MEAN, MUL, MIN, MAX, SQUARE_ADD, LOGICAL_AND, LOGICAL_OR, LOCAL). Return 0, or
 * -1 when NAME is not one. */
int gcl_dtype_parse(const char *name, gcl_dtype_t *out);
int gcl_redop_parse(const char *name, gcl_redop_t *out);
/* Whether OP can reduce elements of TYPE, by the table above (what the reducing collectives
 * accept). Returns 0, or -1 with *WHY (when WHY is not NULL) pointing to a static sentence that
 * says why not ("mean is defined on floating-point types only ..."). */
int gcl_redop_check(gcl_dtype_t type, gcl_redop_t op, const char **why);

#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

/*
 * Replica groups, as GCL's CommGroup. With N replicas:
 *   ALL            one group of all N replicas
 *   CONSECUTIVE k  {0..k-1}, {k..2k-1}, ...             (k divides N)
 *   ORTHOGONAL k   {0, N/k, 2N/k, ...}, {1, 1+N/k, ...} (k divides N)
 */
typedef enum {
    GCL_GROUP_ALL = 0,
    GCL_GROUP_CONSECUTIVE = 1,
    GCL_GROUP_ORTHOGONAL = 2,
} gcl_group_kind_t;

typedef struct {
    gcl_group_kind_t kind;
    int size; /* replicas per group; ignored for ALL */
} gcl_group_t;

static inline gcl_group_t gcl_group_all(void)
{
    gcl_group_t g = {GCL_GROUP_ALL, 0};
    return g;
}

static inline gcl_group_t gcl_group_consecutive(int size)
{
    gcl_group_t g = {GCL_GROUP_CONSECUTIVE, size};
    return g;
}

static inline gcl_group_t gcl_group_orthogonal(int size)
{
    gcl_group_t g = {GCL_GROUP_ORTHOGONAL, size};
    return g;
}

#ifdef __cplusplus
extern "C" {
#endif
#pragma GCC visibility push(default)
/* Parses "all", "consecutive:K" or "orthogonal:K". Returns 0, or -1. */
int gcl_group_parse(const char *text, gcl_group_t *out);
/* Formats GROUP as gcl_group_parse takes it; returns BUF. */
char *gcl_group_format(gcl_group_t group, char *buf, size_t len);
#pragma GCC visibility pop
#ifdef __cplusplus
}
#endif

#endif /* GCL_TYPES_H */
