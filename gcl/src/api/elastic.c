/*
 * The elastic calls of the API that need an IPU context or a run's state (gcl/elastic.h); the
 * resize itself is instance/resize.c's. Declared in gcl/elastic.h.
 */
#include "gcl/elastic.h"

#include "api/ctx.h"
#include "instance/resize.h"
#include "instance/instance.h"
#include "api/preempt.h"

gcl_status_t gcl_elastic_resize(gcl_instance_t inst, gcl_elastic_info_t *out)
{
    if (!inst)
        return GCL_ERR_INVALID_ARGUMENT;
    if (!inst->elastic)
        return gcl_err_set(&inst->err, GCL_ERR_NOT_SUPPORTED,
                           "gcl_elastic_resize: not an elastic job (poprun --elastic)");
    GCL_CHECK(gcl_elastic_rebuild(inst));
    gcl_preempt_free(inst); /* a meeting of the old membership is of no use */
    return out ? gcl_elastic_info(inst, out) : GCL_OK;
}

int gcl_elastic_pending(gcl_ctx_t ctx)
{
    return ctx && ctx->inst->elastic ? gcl_preempt_joiners(ctx->inst) : 0;
}
