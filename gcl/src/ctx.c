/*
 * IPU contexts: gcl_run's thread per simulated IPU, and what a context knows about its peers.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "request.h"

gcl_status_t gcl_ctx_fail(struct gcl_ctx *ctx, gcl_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    return status;
}

void gcl_describe_ipu(const struct gcl_instance *inst, int ipu, char *buf, size_t len)
{
    int i = inst->ipu_instance[ipu];
    const gcl_peer_info_t *p = &inst->peers[i];
    if (inst->ipr > 1)
        snprintf(buf, len, "replica %d IPU %d (instance %d on host %s, pid %d)", ipu / inst->ipr,
                 ipu % inst->ipr, i, p->hostname, (int)p->pid);
    else
        snprintf(buf, len, "replica %d (instance %d on host %s, pid %d)", ipu, i, p->hostname,
                 (int)p->pid);
}

int gcl_peer_gone(struct gcl_ctx *ctx, int ipu, char *why, size_t len)
{
    struct gcl_instance *inst = ctx->inst;
    int hl = inst->ipu_hostlocal[ipu];
    if (hl < 0)
        return 0; /* on another host: only the timeout tells */
    hb_ipu_t *p = &inst->hb.ipus[hl];
    uint32_t state = atomic_load(&p->state), gen = atomic_load(&p->run_gen);
    char who[160];
    gcl_describe_ipu(inst, ipu, who, sizeof who);
    if (state == HB_IPU_FAILED) {
        snprintf(why, len, "%s failed: %.200s", who, p->reason);
        return 1;
    }
    if (state == HB_IPU_EXITED) {
        snprintf(why, len, "%s has left the job (its instance called gcl_finalize)", who);
        return 1;
    }
    if (state == HB_IPU_FINISHED && gen >= inst->run_gen) {
        snprintf(why, len, "%s returned from its program without making this call", who);
        return 1;
    }
    if (p->pid > 0 && p->pid != getpid() && kill(p->pid, 0) != 0 && errno == ESRCH) {
        snprintf(why, len, "%s is gone: its process exited", who);
        return 1;
    }
    return 0;
}

static void *ipu_thread(void *arg)
{
    struct gcl_ctx *ctx = arg;
    struct gcl_instance *inst = ctx->inst;
    hb_ipu_t *me = &inst->hb.ipus[ctx->hostlocal];
    gcl_log_set_replica(ctx->replica);
    atomic_store(&me->last_call, 0);
    atomic_store(&me->run_gen, inst->run_gen);
    atomic_store(&me->state, HB_IPU_RUNNING);
    ctx->status = ctx->program(ctx, ctx->arg);
    gcl_request_abandon_all(ctx);
    gcl_ctx_free_comms(ctx);
    if (ctx->status == GCL_OK) {
        atomic_store(&me->state, HB_IPU_FINISHED);
    } else {
        if (!ctx->error[0])
            snprintf(ctx->error, sizeof ctx->error, "the program returned %s",
                     gcl_status_name(ctx->status));
        snprintf(me->reason, sizeof me->reason, "%.199s", ctx->error);
        atomic_store(&me->state, HB_IPU_FAILED);
        int none = -1;
        atomic_compare_exchange_strong(&inst->first_failure, &none, ctx->local_index);
        /* Wake every IPU thread of the host: the local ones abort, the remote ones notice. */
        atomic_store(&inst->abort, 1);
        for (int i = 0; i < inst->hb.num_ipus; i++)
            hb_ring(&inst->hb, i);
    }
    /* Peers sleeping on a message from this IPU learn that it will never come. */
    for (int i = 0; i < inst->hb.num_ipus; i++)
        if (i != ctx->hostlocal)
            hb_ring(&inst->hb, i);
    return NULL;
}

gcl_status_t gcl_run(gcl_instance_t inst, gcl_program_t program, void *arg)
{
    if (!inst || !program)
        return GCL_ERR_INVALID_ARGUMENT;
    inst->run_gen++;
    atomic_store(&inst->abort, 0);
    atomic_store(&inst->first_failure, -1);
    inst->error[0] = '\0';
    int started = 0;
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < inst->num_local_ipus; k++) {
        struct gcl_ctx *ctx = &inst->ctxs[k];
        memset(ctx, 0, sizeof *ctx);
        ctx->inst = inst;
        ctx->local_index = k;
        ctx->global_ipu = inst->first_ipu + k;
        ctx->replica = ctx->global_ipu / inst->ipr;
        ctx->ipu_pos = ctx->global_ipu % inst->ipr;
        ctx->hostlocal = inst->ipu_hostlocal[ctx->global_ipu];
        ctx->program = program;
        ctx->arg = arg;
        int err = pthread_create(&ctx->thread, NULL, ipu_thread, ctx);
        if (err) {
            snprintf(inst->error, sizeof inst->error, "cannot start IPU thread %d: %s", k,
                     strerror(err));
            atomic_store(&inst->abort, 1);
            rc = GCL_ERR_SYSTEM;
            break;
        }
        started++;
    }
    for (int k = 0; k < started; k++)
        pthread_join(inst->ctxs[k].thread, NULL);
    /* Report the failure that came first: the others are usually its consequences. */
    int first = atomic_load(&inst->first_failure);
    if (rc == GCL_OK && first >= 0) {
        struct gcl_ctx *ctx = &inst->ctxs[first];
        rc = ctx->status;
        snprintf(inst->error, sizeof inst->error, "replica %d IPU %d: %.440s", ctx->replica,
                 ctx->ipu_pos, ctx->error);
    }
    if (rc != GCL_OK)
        inst->failed = 1;
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
    return ctx->inst->num_replicas;
}
