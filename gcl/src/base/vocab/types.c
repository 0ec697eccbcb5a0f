/* The public types are the collectives layer's, value for value; these wrappers say so.
 * Declared in gcl/types.h. */
#include "gcl/types.h"

#include <ctype.h>
#include <string.h>

#include "coll/group.h"
#include "coll/types.h"

_Static_assert(GCL_F32 == (int)COLL_F32 && GCL_BOOL == (int)COLL_BOOL && GCL_BF16 == (int)COLL_BF16,
               "gcl_dtype_t and coll_dtype_t must agree");
_Static_assert(GCL_SUM == (int)COLL_SUM && GCL_LOCAL == (int)COLL_LOCAL &&
                   GCL_SQUARE_ADD == (int)COLL_SQUARE_ADD,
               "gcl_redop_t and coll_redop_t must agree");
_Static_assert(GCL_GROUP_ORTHOGONAL == (int)COLL_GROUP_ORTHOGONAL,
               "gcl_group_kind_t and coll_group_kind_t must agree");

size_t gcl_dtype_size(gcl_dtype_t type)
{
    return coll_dtype_size((coll_dtype_t)type);
}

const char *gcl_dtype_name(gcl_dtype_t type)
{
    return coll_dtype_name((coll_dtype_t)type);
}

const char *gcl_redop_name(gcl_redop_t op)
{
    return coll_redop_name((coll_redop_t)op);
}

/* NAME in lower case in BUF (CAP bytes); NULL when it does not fit. */
static const char *lower(const char *name, char *buf, size_t cap)
{
    size_t n = strlen(name);
    if (n >= cap)
        return NULL;
    for (size_t i = 0; i <= n; i++)
        buf[i] = (char)tolower((unsigned char)name[i]);
    return buf;
}

int gcl_dtype_parse(const char *name, gcl_dtype_t *out)
{
    char buf[32];
    coll_dtype_t t;
    if (!lower(name, buf, sizeof buf) || coll_dtype_parse(buf, &t) != 0)
        return -1;
    *out = (gcl_dtype_t)t;
    return 0;
}

int gcl_redop_parse(const char *name, gcl_redop_t *out)
{
    char buf[32];
    coll_redop_t op;
    const char *n = lower(name, buf, sizeof buf);
    if (n && strcmp(n, "add") == 0) /* GCL's CollectiveOperator::ADD */
        n = "sum";
    if (!n || coll_redop_parse(n, &op) != 0)
        return -1;
    *out = (gcl_redop_t)op;
    return 0;
}

int gcl_redop_check(gcl_dtype_t type, gcl_redop_t op, const char **why)
{
    return coll_redop_valid((coll_dtype_t)type, (coll_redop_t)op, why) ? 0 : -1;
}

int gcl_group_parse(const char *text, gcl_group_t *out)
{
    coll_group_t g;
    if (coll_group_parse(text, &g) != 0)
        return -1;
    out->kind = (gcl_group_kind_t)g.kind;
    out->size = g.size;
    return 0;
}

char *gcl_group_format(gcl_group_t group, char *buf, size_t len)
{
    coll_group_t g = {(coll_group_kind_t)group.kind, group.size};
    return coll_group_format(g, buf, (unsigned)len);
}
