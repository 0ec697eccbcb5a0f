/* The one error path; see err.h. */
#include "base/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

/* What a record says when even its sentence could not be allocated. */
static char no_memory[] = "(out of host memory while describing the failure)";

static void release(gcl_err_t *e)
{
    if (e->text && e->text != no_memory) /* clearing a clear record is every call's end */
        free(e->text);
    e->text = NULL;
}

gcl_status_t gcl_err_set(gcl_err_t *e, gcl_status_t status, const char *fmt, ...)
{
    char *text = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vasprintf(&text, fmt, ap);
    va_end(ap);
    release(e);
    e->status = status;
    e->text = n >= 0 ? text : no_memory;
    return status;
}

void gcl_err_move(gcl_err_t *dst, gcl_err_t *src)
{
    if (dst == src)
        return;
    release(dst);
    *dst = *src;
    src->status = GCL_OK;
    src->text = NULL;
}

void gcl_err_clear(gcl_err_t *e)
{
    release(e);
    e->status = GCL_OK;
}

void gcl_err_prefix(gcl_err_t *e, const char *prefix)
{
    char *text = NULL;
    if (e->status == GCL_OK || asprintf(&text, "%s%s", prefix, gcl_err_text(e)) < 0)
        return;
    release(e);
    e->text = text;
}

const char *gcl_err_text(const gcl_err_t *e)
{
    return e->text ? e->text : "";
}
