/*
 * IPU contexts: gcl_run's thread per simulated IPU, what each tells its peers about its life,
 * and the accessors of the public API.
 */
#include "ctx.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "comm.h"
#include "base/log.h"
#include "engine/request.h"

/* What the program's failure was, for the instance's record and for peers' messages. */
static const char *failure_text(struct gcl_ctx *ctx, char *buf, size_t len)
{
    if (ctx->last_failure && ctx->last_failure->status != GCL_OK)
        return gcl_err_text(ctx->last_failure);
    snprintf(buf, len, "the program returned %s", gcl_status_name(ctx->status));
    return buf;
}

/* A failed program: its peers learn why, this instance's other IPUs abort. */
static void fail_ipu(struct gcl_ctx *ctx, hb_ipu_t *me)
{
    struct gcl_instance *inst = ctx->inst;
    char buf[96];
    const char *why = failure_text(ctx, buf, sizeof buf);
    snprintf(me->reason, sizeof me->reason, "%s", why);
    int none = -1;
    int first = atomic_compare_exchange_strong(&inst->run.first_failure, &none, ctx->local_index);
    if (first)
        gcl_err_set(&inst->err, ctx->status, "replica %d IPU %d: %.440s", ctx->replica,
                    ctx->ipu_pos, why);
    me->after_other = !first;
    atomic_store(&me->state, HB_IPU_FAILED);
    gcl_ctrl_ipu_failed(inst->ctrl, ctx->global_ipu, me->reason); /* and the other hosts */
    /* Wake every IPU thread of the host: the local ones abort, the remote ones notice. */
    atomic_store(&inst->run.abort, 1);
    for (int i = 0; i < inst->host.hb.num_ipus; i++)
        hb_ring(&inst->host.hb, i);
}

static void *ipu_thread(void *arg)
{
    struct gcl_ctx *ctx = arg;
    struct gcl_instance *inst = ctx->inst;
    hb_ipu_t *me = &inst->host.hb.ipus[ctx->hostlocal];
    gcl_log_set_replica(ctx->replica);
    atomic_store(&me->last_call, 0);
    atomic_store(&me->run_gen, inst->run.gen);
    atomic_store(&me->state, HB_IPU_RUNNING);
    ctx->status = ctx->program(ctx, ctx->arg);
    gcl_request_abandon_all(ctx);
    if (ctx->status == GCL_OK) {
        atomic_store(&me->state, HB_IPU_FINISHED);
        gcl_ctrl_ipu_changed(inst->ctrl);
    } else {
        fail_ipu(ctx, me);
    }
    gcl_ctx_free_comms(ctx);
    gcl_err_clear(&ctx->err);
    gcl_err_clear(&ctx->kept);
    /* Peers sleeping on a message from this IPU learn that it will never come. */
    for (int i = 0; i < inst->host.hb.num_ipus; i++)
        if (i != ctx->hostlocal)
            hb_ring(&inst->host.hb, i);
    return NULL;
}

static void ctx_init(struct gcl_instance *inst, int k, gcl_program_t program, void *arg)
{
    struct gcl_ctx *ctx = &inst->run.ctxs[k];
    memset(ctx, 0, sizeof *ctx);
    ctx->inst = inst;
    ctx->local_index = k;
    ctx->global_ipu = inst->job.first_ipu + k;
    ctx->replica = ctx->global_ipu / inst->job.ipr;
    ctx->ipu_pos = ctx->global_ipu % inst->job.ipr;
    ctx->hostlocal = inst->job.ipu_hostlocal[ctx->global_ipu];
    ctx->program = program;
    ctx->arg = arg;
}

gcl_status_t gcl_run(gcl_instance_t inst, gcl_program_t program, void *arg)
{
    if (!inst || !program)
        return GCL_ERR_INVALID_ARGUMENT;
    inst->run.gen++;
    atomic_store(&inst->run.abort, 0);
    atomic_store(&inst->run.first_failure, -1);
    gcl_err_clear(&inst->err);
    int started = 0;
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < inst->job.num_local_ipus; k++) {
        ctx_init(inst, k, program, arg);
        int err = pthread_create(&inst->run.ctxs[k].thread, NULL, ipu_thread, &inst->run.ctxs[k]);
        if (err) {
            rc = gcl_err_set(&inst->err, GCL_ERR_SYSTEM, "cannot start IPU thread %d: %s", k,
                             strerror(err));
            atomic_store(&inst->run.abort, 1);
            break;
        }
        started++;
    }
    for (int k = 0; k < started; k++)
        pthread_join(inst->run.ctxs[k].thread, NULL);
    /* Report the failure that came first: the others are usually its consequences. */
    int first = atomic_load(&inst->run.first_failure);
    if (rc == GCL_OK && first >= 0)
        rc = inst->run.ctxs[first].status;
    if (rc != GCL_OK)
        inst->run.failed = 1;
    return rc;
}

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
    return ctx->global_ipu;
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
