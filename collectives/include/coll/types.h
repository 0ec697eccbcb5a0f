/*
 * Element types, reduction operators and collectives known to the collectives layer.
 *
 * libgcl's public enums (gcl/include/gcl/types.h) have the same values; gcl checks that at compile
 * time, so a value passes between the layers unchanged. collectives/ knows nothing of gcl/.
 */
#ifndef COLL_TYPES_H
#define COLL_TYPES_H

#include <stdbool.h>
#include <stddef.h>

typedef enum {
    COLL_F32 = 0,
    COLL_F16 = 1,
    COLL_BF16 = 2,
    COLL_I32 = 3,
    COLL_I64 = 4,
    COLL_U32 = 5,
    COLL_U64 = 6,
    COLL_BOOL = 7,
    COLL_DTYPE_COUNT
} coll_dtype_t;

typedef enum {
    COLL_SUM = 0,
    COLL_MEAN = 1, /* sum, then divided by the group size */
    COLL_MUL = 2,
    COLL_MIN = 3,
    COLL_MAX = 4,
    COLL_SQUARE_ADD = 5,  /* sum of squares: each contribution is squared, then summed */
    COLL_LOGICAL_AND = 6, /* on bool and integers: 1 when every value is non-zero */
    COLL_LOGICAL_OR = 7,  /* on bool and integers: 1 when any value is non-zero */
    COLL_LOCAL = 8,       /* no reduction: every replica keeps its own values */
    COLL_REDOP_COUNT
} coll_redop_t;

typedef enum {
    COLL_ALLREDUCE = 0,
    COLL_REDUCE_SCATTER = 1,
    COLL_ALLGATHER = 2,
    COLL_BROADCAST = 3,
    COLL_ALLTOALL = 4,
    COLL_BARRIER = 5,
    COLL_COLLECTIVE_COUNT
} coll_collective_t;

/* Bytes per element (bool is one byte). 0 for an invalid type. */
size_t coll_dtype_size(coll_dtype_t t);
/* Lower-case names ("f32", "sum", "all_reduce"); "?" for an invalid value. */
const char *coll_dtype_name(coll_dtype_t t);
const char *coll_redop_name(coll_redop_t op);
const char *coll_collective_name(coll_collective_t c);
/* Parses a name as printed above. Returns 0, or -1 when NAME is not one. */
int coll_dtype_parse(const char *name, coll_dtype_t *out);
int coll_redop_parse(const char *name, coll_redop_t *out);
int coll_collective_parse(const char *name, coll_collective_t *out);

bool coll_dtype_is_float(coll_dtype_t t);
/* Whether OP makes sense on elements of type T; when it does not, *WHY (if not NULL) gets a
 * sentence saying why ("mean is not defined on integer types"). */
bool coll_redop_valid(coll_dtype_t t, coll_redop_t op, const char **why);

#endif /* COLL_TYPES_H */
