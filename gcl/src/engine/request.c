/* Requests and the per-IPU progress engine; see request.h. */
#include "engine/request.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "engine/liveness.h"
#include "engine/simtime.h"

struct gcl_request *gcl_request_new(gcl_peers_t *peers)
{
    struct gcl_request *r = gcl_calloc(1, sizeof *r);
    if (!r) {
        gcl_peers_fail(peers, GCL_ERR_NO_HOST_MEMORY, "out of host memory");
        return NULL;
    }
    r->peers = peers;
    coll_schedule_init(&r->own);
    return r;
}

void gcl_request_reuse(struct gcl_request *r, gcl_peers_t *peers)
{
    /* Its last call's free_request left X's memory and OWN released and their pointers NULL
     * (a kept request starts zeroed); gcl_exec_start fills X. Without an engine, a call that
     * fails before then is discarded without running the last call's engine again. */
    r->x.engine = NULL;
    r->peers = peers;
    r->next = NULL;
    r->finished = 0;
    r->status = GCL_OK;
    r->scratch = NULL;
    r->err = (gcl_err_t)GCL_ERR_INIT;
    r->kept = 1;
    r->resume = NULL;
}

static void free_request(struct gcl_request *r)
{
    gcl_exec_finish(&r->x);
    if (r->own.steps || r->own.ops) /* a blocking call's request never builds its own */
        coll_schedule_free(&r->own);
    gcl_err_clear(&r->err);
    if (r->scratch) /* not free(NULL): see exec.c, drop */
        free(r->scratch);
    r->scratch = NULL;
    if (!r->kept)
        free(r);
}

void gcl_request_discard(struct gcl_request *r)
{
    if (r)
        free_request(r);
}

/* Adds R to its IPU's outstanding requests, its waiter fresh. */
static void enqueue(struct gcl_request *r)
{
    gcl_ipu_t *me = r->peers->ipu;
    struct gcl_request **tail = &me->active;
    while (*tail)
        tail = &(*tail)->next;
    r->next = NULL;
    *tail = r;
    gcl_waiter_init(&r->w, me->params);
}

void gcl_request_launch(struct gcl_request *r)
{
    gcl_ipu_t *me = r->peers->ipu;
    enqueue(r);
    if (!r->peers->p2p)
        gcl_diag_publish_call(&me->host->hb, me->hostlocal, r->x.key0, &r->x.sig);
    gcl_sim_call_begin(&r->x);
}

void gcl_request_launch_entered(struct gcl_request *r, const gcl_sim_entry_t *at)
{
    enqueue(r);
    gcl_sim_call_entered(&r->x, at);
}

void gcl_request_park(struct gcl_request *r, gcl_status_t (*resume)(struct gcl_request *, void *),
                      void *arg)
{
    r->resume = resume;
    r->resume_arg = arg;
    r->peers->ipu->parked = r;
}

static void fail_request(struct gcl_request *r, gcl_status_t rc)
{
    r->finished = 1;
    r->status = rc;
    if (r->err.status == GCL_OK) /* a status with no sentence yet */
        gcl_err_set(&r->err, rc, "%s #%u: %s", r->x.what, r->x.sig.seq, gcl_status_string(rc));
    /* Every replica of a mismatched call must hear of it, not just the two that met (the others
     * would only time out): each replica that learns of it tells its own group, once. */
    if (rc == GCL_ERR_MISMATCH) {
        gcl_call_view_t v = gcl_peers_view(r->peers, r->x.key0, &r->x.sig);
        gcl_diag_poison_group(&v, gcl_err_text(&r->err));
        gcl_ctrl_poison(r->peers->ipu->ctrl, r->peers->ipus, r->peers->size, r->x.key0,
                        gcl_err_text(&r->err));
    }
    gcl_exec_finish(&r->x); /* takes back whatever the transfers still hold */
}

int gcl_ipu_progress(gcl_ipu_t *ipu)
{
    int did = 0;
    gcl_progress_pass++;
    for (struct gcl_request *r = ipu->active; r; r = r->next) {
        if (r->finished)
            continue;
        if (gcl_diag_poisoned(&ipu->host->hb, ipu->hostlocal, r->x.key0, &r->err)) {
            fail_request(r, GCL_ERR_MISMATCH);
            did = 1;
            continue;
        }
        int rc = r->x.engine->progress(&r->x);
        if (rc < 0) {
            if (rc == GCL_ERR_PEER_FAILED || rc == GCL_ERR_TRANSPORT) { /* a transport's */
                char call[224];
                gcl_exec_describe(&r->x, call, sizeof call - 2);
                strcat(call, ": ");
                gcl_err_prefix(&r->err, call);
            }
            fail_request(r, (gcl_status_t)rc);
            did = 1;
        } else if (r->x.done) {
            r->finished = 1;
            r->status = GCL_OK;
            did = 1;
        } else {
            did |= rc;
        }
    }
    return did;
}

static void unlink_request(gcl_ipu_t *ipu, struct gcl_request *r)
{
    for (struct gcl_request **p = &ipu->active; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            return;
        }
    }
}

/* Hands R's outcome to its caller: its error record moves into its group's record, where
 * gcl_last_error (or, for point-to-point, gcl_ctx_last_error) finds it. */
static gcl_status_t retire(struct gcl_request *r)
{
    gcl_ipu_t *ipu = r->peers->ipu;
    gcl_status_t rc = r->status;
    gcl_err_t *dst = r->peers->record;
    if (rc == GCL_OK) {
        gcl_sim_call_retire(&r->x);
        gcl_err_clear(dst);
    } else {
        GCL_WARN(GCL_SUB_COLL, "%s failed (%s): %s", r->x.what, gcl_status_name(rc),
                 gcl_err_text(&r->err));
        gcl_err_move(dst, &r->err);
        ipu->last_failure = dst;
    }
    unlink_request(ipu, r);
    free_request(r);
    return rc;
}

static int any_polls(gcl_ipu_t *ipu)
{
    for (struct gcl_request *r = ipu->active; r; r = r->next)
        if (!r->finished && r->x.engine->polls(&r->x))
            return 1;
    return 0;
}

/* The liveness, mismatch and timeout checks of R, which fail it when they find something.
 * A peer that did its part of this call and then failed or ended leaves what R still needs
 * (its data, its acknowledgements) published before its record said so, and the pass that
 * found nothing to do may have run just before it: one more pass, after the record was read,
 * sees all of it. So a peer's end fails R only when R cannot complete without it (a peer that
 * gave the wrong flags failed right after the all_gather that showed it, and its partner
 * reported that all_gather failed: nccl_layout under load). */
static void check(struct gcl_request *r)
{
    gcl_status_t st = gcl_exec_check(&r->x, &r->w);
    if (st == GCL_OK)
        return;
    if (st == GCL_ERR_PEER_FAILED) {
        gcl_ipu_progress(r->peers->ipu);
        if (r->finished) {
            if (r->status == GCL_OK)
                gcl_err_clear(&r->err);
            return;
        }
    }
    fail_request(r, st);
}

/* Whether an alarm rang for IPU since it last looked: its checks are then due at once. Not
 * where the mpi transport carries messages: a failing call's clean-up there waits in MPI for
 * its peers (OpenMPI's ob1 does not cancel a send, and a large one completes only once
 * received), and peers that all failed at once, each with a large send to the other posted,
 * each gave up only at the bound of mpi_cancel's wait (faults_inject_post_2inst-mpi). The
 * checks' ~100 ms turn lets a peer that has not failed yet receive what was sent to it. The
 * mpi backend that GCL_TRANSPORT=auto makes beside tcp across hosts carries nothing: alarms
 * ring there. */
static int alarmed(gcl_ipu_t *ipu, gcl_doorbell_t *bell)
{
    return !gcl_fabric_mpi_carries(ipu->fabric) && gcl_doorbell_alarmed(bell, &ipu->alarms_seen);
}

/* The pass a thread makes after announcing that it is about to sleep (wait.h). */
static int recheck(void *ipu)
{
    return gcl_ipu_progress(ipu);
}

/* Waits until R has finished, or (PARK) until its caller's part is done: its buffers are
 * written or read, and only the call's own bookkeeping is left (exec.h, returned). */
static void await(struct gcl_request *r, int park)
{
    gcl_ipu_t *ipu = r->peers->ipu;
    gcl_doorbell_t *bell = &ipu->host->hb.ipus[ipu->hostlocal].bell;
    gcl_waiter_resume(&r->w);
    unsigned busy = 0; /* passes that moved something: the clock is read every 64th */
    while (!r->finished && !(park && r->x.returned)) {
        uint32_t seen = gcl_doorbell_read(bell);
        int did = gcl_ipu_progress(ipu);
        if (r->finished || (park && r->x.returned))
            break;
        if (did) {
            /* Other work moving (another request, a phase with a live peer) does not put off
             * the checks: a peer this call waits on may be gone meanwhile. */
            gcl_waiter_progress(&r->w);
            int alarm = alarmed(ipu, bell);
            if ((++busy % 64 == 0 && gcl_waiter_due(&r->w)) || alarm)
                check(r);
            continue;
        }
        int due = gcl_waiter_idle(&r->w, bell, seen, any_polls(ipu), recheck, ipu);
        /* An alarm (a failure, a mismatch, an abort): the checks at once, not at their turn. */
        if ((alarmed(ipu, bell) || due) && !r->finished)
            check(r);
    }
}

gcl_status_t gcl_ipu_settle(gcl_ipu_t *ipu, int keep_failure)
{
    struct gcl_request *r = ipu->parked;
    if (!r)
        return GCL_OK;
    if (r->resume) {
        gcl_status_t (*resume)(struct gcl_request *, void *) = r->resume;
        r->resume = NULL;
        gcl_status_t rc = resume(r, r->resume_arg);
        if (rc != GCL_OK)
            fail_request(r, rc);
    }
    await(r, 0);
    if (r->status != GCL_OK && keep_failure)
        return r->status;
    ipu->parked = NULL;
    return retire(r);
}

gcl_status_t gcl_ipu_settle_for(gcl_ipu_t *ipu, gcl_err_t *record)
{
    gcl_status_t rc = gcl_ipu_settle(ipu, 0);
    const gcl_err_t *said = ipu->last_failure;
    if (rc == GCL_OK || said == record)
        return rc;
    gcl_err_set(record, rc, "%s", said ? gcl_err_text(said) : gcl_status_string(rc));
    ipu->last_failure = record;
    return rc;
}

gcl_status_t gcl_request_complete(struct gcl_request *r)
{
    gcl_ipu_t *ipu = r->peers->ipu;
    /* A request started before the parked call retires after it, as the program ordered. */
    gcl_status_t first = ipu->parked && ipu->parked != r ? gcl_ipu_settle(ipu, 0) : GCL_OK;
    await(r, r->kept && first == GCL_OK);
    if (!r->finished) {
        ipu->parked = r; /* the caller's part is done: the rest retires at the IPU's next call */
        return GCL_OK;
    }
    gcl_status_t rc = retire(r);
    return first != GCL_OK ? first : rc;
}

void gcl_request_abandon_all(gcl_ipu_t *ipu)
{
    while (ipu->active) {
        struct gcl_request *r = ipu->active;
        if (!r->finished && r != ipu->parked)
            GCL_WARN(GCL_SUB_COLL, "%s #%u was started but never completed: cancelled", r->x.what,
                     r->x.sig.seq);
        ipu->active = r->next;
        free_request(r);
    }
    if (ipu->parked && ipu->parked->resume) { /* parked, never launched: not in the list */
        ipu->parked->resume = NULL;
        free_request(ipu->parked);
    }
    ipu->parked = NULL;
}

gcl_status_t gcl_request_test(struct gcl_request *req, int *done)
{
    *done = 0;
    GCL_CHECK(gcl_ipu_settle(req->peers->ipu, 0));
    gcl_waiter_resume(&req->w);
    int did = gcl_ipu_progress(req->peers->ipu);
    if (!req->finished) {
        if (did)
            gcl_waiter_progress(&req->w);
        gcl_ipu_t *ipu = req->peers->ipu;
        int alarm = alarmed(ipu, &ipu->host->hb.ipus[ipu->hostlocal].bell);
        if (gcl_waiter_due(&req->w) || alarm)
            check(req); /* the same checks as gcl_wait's: a poll loop fails as a wait would */
    }
    *done = req->finished;
    return req->finished ? retire(req) : GCL_OK;
}
