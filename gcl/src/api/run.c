/*
 * The program's side of an instance, in its IPU threads: gcl_run starts one thread per local
 * simulated IPU, each running the program on its IPU context and then telling its peers how it
 * ended (finished, or failed and why, which aborts this instance's other IPUs), and returns once
 * every thread has ended and the host's instances have their verdicts. gcl_init and gcl_finalize
 * are thin calls around instance/instance.c, which builds and tears down the process's state;
 * nothing here touches the bootstrap, the host box or the transports. Declared in gcl/gcl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "api/comm.h"
#include "api/ctx.h"
#include "engine/request.h"
#include "instance/membership.h"
#include "api/preempt.h"

/* How long a failed run waits for the host's other instances to reach their own verdicts (see
 * await_verdicts): the time poprun's wrapper of a killed program gives the survivors, too. */
#define VERDICT_WAIT_S 1.0
/* How long a consequence waits for an instance that failed for a cause of its own to leave:
 * that one is on its way out already, but on a loaded machine its exit can take over a second
 * (chaos_disk_full at a load average of 22: a train --resume that refused with status 2 left
 * after its peer, whose status 1 became the job's). */
#define CAUSE_WAIT_S 5.0

gcl_status_t gcl_init(const gcl_config_t *config, gcl_instance_t *out)
{
    struct gcl_instance *inst = NULL;
    *out = NULL;
    GCL_CHECK(gcl_instance_open(config, &inst));
    inst->run.ctxs = gcl_calloc((size_t)inst->job.num_local_ipus, sizeof *inst->run.ctxs);
    if (!inst->run.ctxs) {
        gcl_instance_abandon(inst, GCL_ERR_NO_HOST_MEMORY,
                             "out of host memory for the IPU contexts");
        return GCL_ERR_NO_HOST_MEMORY;
    }
    *out = inst;
    return GCL_OK;
}

gcl_status_t gcl_finalize(gcl_instance_t inst)
{
    if (!inst)
        return GCL_OK;
    gcl_preempt_free(inst);
    free(inst->run.ctxs);
    inst->run.ctxs = NULL;
    return gcl_instance_close(inst);
}

/* What the program's failure was, for the instance's record and for peers' messages. */
static const char *failure_text(struct gcl_ctx *ctx, char *buf, size_t len)
{
    if (ctx->ipu.last_failure && ctx->ipu.last_failure->status != GCL_OK)
        return gcl_err_text(ctx->ipu.last_failure);
    snprintf(buf, len, "the program returned %s", gcl_status_name(ctx->status));
    return buf;
}

/* A failed program: its peers learn why, this instance's other IPUs abort. */
static void fail_ipu(struct gcl_ctx *ctx, gcl_hostbox_ipu_t *me)
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
    const gcl_err_t *call = ctx->ipu.last_failure;
    gcl_status_t how = call ? call->status : GCL_OK;
    me->consequence = how == GCL_ERR_PEER_FAILED || how == GCL_ERR_ABORTED;
    gcl_hostbox_set_state(me, GCL_IPU_FAILED);
    gcl_ctrl_ipu_failed(inst->ctrl, ctx->ipu.global_ipu, me->reason); /* and the other hosts */
    /* Wake every IPU thread of the host: the local ones abort, the remote ones notice. */
    atomic_store(&inst->run.abort, 1);
    for (int i = 0; i < inst->host.hb.num_ipus; i++)
        gcl_hostbox_alarm(&inst->host.hb, i);
}

static void *ipu_thread(void *arg)
{
    struct gcl_ctx *ctx = arg;
    struct gcl_instance *inst = ctx->inst;
    gcl_hostbox_ipu_t *me = &inst->host.hb.ipus[ctx->ipu.hostlocal];
    gcl_log_set_replica(ctx->replica);
    atomic_store(&me->last_call, 0);
    atomic_store(&me->life, gcl_life(inst->run.gen, GCL_IPU_RUNNING));
    ctx->status = ctx->program(ctx, ctx->arg);
    if (ctx->status == GCL_OK) /* its last call may have returned before it finished */
        ctx->status = gcl_ipu_settle(&ctx->ipu, 0);
    gcl_request_abandon_all(&ctx->ipu);
    if (ctx->status == GCL_OK) {
        gcl_hostbox_set_state(me, GCL_IPU_FINISHED);
        gcl_ctrl_ipu_changed(inst->ctrl);
    } else {
        fail_ipu(ctx, me);
    }
    gcl_ctx_free_comms(ctx);
    gcl_err_clear(&ctx->err);
    gcl_err_clear(&ctx->kept);
    /* Peers sleeping on a message from this IPU learn that it will never come. */
    for (int i = 0; i < inst->host.hb.num_ipus; i++)
        if (i != ctx->ipu.hostlocal)
            gcl_hostbox_alarm(&inst->host.hb, i);
    return NULL;
}

static void ctx_init(struct gcl_instance *inst, int k, gcl_program_t program, void *arg)
{
    struct gcl_ctx *ctx = &inst->run.ctxs[k];
    const gcl_job_t *j = &inst->job;
    int global = j->first_ipu + k;
    memset(ctx, 0, sizeof *ctx);
    ctx->ipu = (gcl_ipu_t){.job = j,
                           .params = &inst->params,
                           .host = &inst->host,
                           .fabric = &inst->fabric,
                           .ctrl = inst->ctrl,
                           .sim = &inst->sim,
                           .clock = &inst->sim.ipus[k],
                           .abort = &inst->run.abort,
                           .first_failure = &inst->run.first_failure,
                           .news = gcl_membership_news(inst->elastic),
                           .gen = inst->run.gen,
                           .global_ipu = global,
                           .hostlocal = j->ipu_hostlocal[global],
                           .phantom = inst->phantom};
    /* Alarms from before this run (an earlier run's ends) are not news to its checks. */
    ctx->ipu.alarms_seen = atomic_load(&inst->host.hb.ipus[ctx->ipu.hostlocal].bell.alarms);
    ctx->inst = inst;
    ctx->local_index = k;
    ctx->replica = global / j->ipus_per_replica;
    ctx->ipu_pos = global % j->ipus_per_replica;
    ctx->program = program;
    ctx->arg = arg;
}

/* Whether a failed run must still wait for another process of this host: 1 when one of its
 * IPUs still runs its program (its verdict is to come), 2 when, this run's failure being a
 * consequence of a peer's (CONSEQUENCE), it failed first for a cause of its own and has not yet
 * left; 0 when neither. */
static int must_wait(gcl_hostbox_t *hb, int consequence)
{
    int why = 0;
    for (int i = 0; i < hb->num_ipus; i++) {
        const gcl_hostbox_ipu_t *p = &hb->ipus[i];
        if (p->pid <= 0 || p->pid == getpid())
            continue;
        uint32_t state = gcl_hostbox_state(p);
        int cause = state == GCL_IPU_FAILED && !p->after_other && !p->consequence;
        if (state == GCL_IPU_RUNNING && !gcl_hostbox_pid_gone(p->pid))
            return 1;
        if (consequence && cause && !gcl_hostbox_pid_gone(p->pid))
            why = 2;
    }
    return why;
}

/* After a failed run (FIRST, the local IPU that failed first), before the program hears of it. The
 * first instance to exit ends the job (mpirun ends every instance when one fails), and whoever is
 * still at work is cut off without a word. So (usually for a few milliseconds):
 *   - an instance of this host still in its program may be in a call with the IPU that failed:
 *     alarmed by fail_ipu, it checks at once and fails saying why; wait for that verdict, up to
 *     VERDICT_WAIT_S;
 *   - a failure that is a consequence of a peer's (its call failed with GCL_ERR_PEER_FAILED or
 *     GCL_ERR_ABORTED; a program that returns GCL_ERR_ABORTED of its own is a cause) lets
 *     an instance of this host that failed for a cause of its own leave first (up to
 *     CAUSE_WAIT_S), so that its report (the cause) is whole; the consequences have said theirs
 *     as they failed.
 * Not where the mpi transport carries messages, where alarms are not heeded either (request.c): a
 * failing call's clean-up there can wait in MPI for a peer (OpenMPI's ob1 does not cancel a send,
 * and a large one completes only once received), and a peer that stopped to wait would hold it. */
static void await_verdicts(struct gcl_instance *inst, int first)
{
    gcl_hostbox_t *hb = &inst->host.hb;
    if (!hb->base || gcl_fabric_mpi_carries(&inst->fabric))
        return;
    int consequence = first >= 0 && hb->ipus[inst->run.ctxs[first].ipu.hostlocal].consequence;
    double start = gcl_now();
    struct timespec nap = {0, 1000000};
    for (int why; (why = must_wait(hb, consequence)) != 0;) {
        if (gcl_now() - start >= (why == 1 ? VERDICT_WAIT_S : CAUSE_WAIT_S))
            break;
        nanosleep(&nap, NULL);
    }
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
    if (rc != GCL_OK) {
        inst->run.failed = 1;
        /* An elastic job goes on: nobody ends it for the first instance that exits. */
        if (!inst->elastic)
            await_verdicts(inst, first);
    }
    return rc;
}
