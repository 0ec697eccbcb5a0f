/*
 * IPU contexts: the accessors of the public API, and a program's own reason for failing.
 * gcl_run's threads, which the contexts are, are run.c's.
 */
#include "api/ctx.h"

#include <stdarg.h>
#include <stdio.h>

gcl_instance_t gcl_ctx_instance(gcl_ctx_t ctx)
{
    return ctx->inst;
}

int gcl_ctx_replica(gcl_ctx_t ctx)
{
    return ctx->replica;
}

int gcl_ctx_ipu(gcl_ctx_t ctx)
{
    return ctx->ipu_pos;
}

int gcl_ctx_global_ipu(gcl_ctx_t ctx)
{
    return ctx->ipu.global_ipu;
}

int gcl_ctx_num_replicas(gcl_ctx_t ctx)
{
    return ctx->inst->job.num_replicas;
}

gcl_status_t gcl_ctx_set_error(gcl_ctx_t ctx, gcl_status_t status, const char *fmt, ...)
{
    /* Only a failure's status: GCL_OK or GCL_ERR_IN_PROGRESS would not fail the program. */
    if (!ctx || !fmt || status > GCL_ERR_INVALID_ARGUMENT || status < GCL_ERR_INTERNAL)
        return GCL_ERR_INVALID_ARGUMENT;
    char text[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    return gcl_ctx_fail(ctx, status, "%s", text);
}
