/*
 * Liveness and the timeout, for every engine: what a waiting call checks about every 100 ms.
 * In order: a mismatch another replica marked (it explains any peer that has given up since),
 * this instance aborting, a mismatch the host's memory proves, a peer the call waits on that is
 * gone, then the stall warning and the timeout, at which a few more proofs of a mismatch count.
 */
#include "engine/liveness.h"

#include <stdio.h>

#include "base/log.h"

/* The context of every message about this call: "all_reduce #3 (group all, rank 2 of 8, step
 * 4 of 14)". */
void gcl_exec_describe(gcl_exec_t *x, char *buf, size_t len)
{
    char g[32], where[64];
    coll_group_format(x->peers->group, g, sizeof g);
    x->engine->where(x, where, sizeof where);
    snprintf(buf, len, "%s #%u (group %s, rank %d of %d, %s)", x->what, x->sig.seq, g,
             x->peers->rank, x->peers->size, where);
}

/* Remote members of the group (learnt from the control plane): one whose latest call is this
 * one made another way (BEHIND 0, a proof, with its sentence), or one still in an earlier call of
 * the communicator (BEHIND 1). */
static int remote_members(gcl_exec_t *x, const gcl_call_view_t *v, int behind, char *why,
                          size_t len)
{
    gcl_ctrl_t *ctrl = x->peers->ipu->ctrl;
    for (int r = 0; ctrl && r < v->n; r++) {
        gcl_peer_life_t l;
        if (r == v->rank || !gcl_ctrl_life(ctrl, v->ipus[r], &l))
            continue;
        if (behind ? gcl_diag_behind(v, &l)
                   : gcl_diag_same_call_differs(v, v->ipus[r], &l, why, len))
            return 1;
    }
    return 0;
}

/* A peer IPU that went past this call: on this host from its host box, on another from what
 * its instance's beats said. */
static int went_past(gcl_exec_t *x, const gcl_call_view_t *v, int ipu, int timed_out, char *why,
                     size_t len)
{
    gcl_peer_life_t l;
    if (gcl_ctrl_life(x->peers->ipu->ctrl, ipu, &l))
        return gcl_diag_past(v, ipu, &l, timed_out, why, len);
    return gcl_diag_went_past(v, ipu, timed_out, why, len);
}

/* What IPU's own record says of it: on this host its host box, on another its beats. */
static int life_of(const gcl_exec_t *x, int ipu, gcl_peer_life_t *l)
{
    const gcl_ipu_t *me = x->peers->ipu;
    int hl = me->job->ipu_hostlocal[ipu];
    if (hl < 0)
        return gcl_ctrl_life(me->ctrl, ipu, l) && l->valid;
    gcl_diag_life(&me->host->hb, hl, l);
    return 1;
}

int gcl_exec_returned_in_call(const gcl_exec_t *x, int ipu)
{
    gcl_peer_life_t l;
    return life_of(x, ipu, &l) && l.run_gen == x->peers->ipu->gen && l.last_call == x->key0 &&
           (l.state == GCL_IPU_FINISHED || l.state == GCL_IPU_CLOSING || l.state == GCL_IPU_EXITED);
}

/* A member of the group gone without having returned in this call: the cause, rather than the
 * peer that left it after entering it (faults_mismatch_ofi, barrier skip, under load: replica
 * 1 named replica 0, which had failed in the barrier for want of replica 3 and returned, as
 * "returned from its program without making this call"). 1 with IPU and WHY. */
static int cause_of_return(const gcl_exec_t *x, const gcl_call_view_t *v, int *ipu, char *why,
                           size_t len)
{
    const gcl_ipu_t *me = x->peers->ipu;
    for (int r = 0; r < v->n; r++) {
        int q = v->ipus[r];
        if (r == v->rank || gcl_exec_returned_in_call(x, q))
            continue;
        if (gcl_diag_peer_gone(me->job, &me->host->hb, me->gen, q, why, len) ||
            gcl_ctrl_peer_gone(me->ctrl, me->gen, q, why, len)) {
            *ipu = q;
            return 1;
        }
    }
    return 0;
}

/* At the timeout, the proofs that need one: a peer's later call in our slots, a peer we wait on
 * that went past this call. 1 with the sentence in WHY. */
static int late_mismatch(gcl_exec_t *x, const gcl_call_view_t *v, char *why, size_t len)
{
    int ipus[64];
    if (gcl_diag_find_mismatch(v, 1, why, len))
        return 1;
    int n = x->engine->waiting(x, ipus, 64);
    for (int i = 0; i < n; i++)
        if (went_past(x, v, ipus[i], 1, why, len))
            return 1;
    return 0;
}

static gcl_status_t stall_or_timeout(gcl_exec_t *x, gcl_waiter_t *w, const gcl_call_view_t *v,
                                     double stalled)
{
    char call[200], pending[768], absent[768];
    gcl_exec_describe(x, call, sizeof call);
    x->engine->pending(x, pending, sizeof pending);
    gcl_diag_absent(v, absent, sizeof absent);
    const char *sep = absent[0] ? "; not in this call yet: " : "";
    if (stalled >= w->timeout_s)
        return gcl_err_set(x->err, GCL_ERR_TIMEOUT,
                           "%s: no progress for %.1f s (GCL_TIMEOUT_S)%s%s; waited for %s", call,
                           stalled, sep, absent, pending);
    if (!w->warned) {
        w->warned = 1;
        GCL_WARN(GCL_SUB_COLL, "%s: stalled for %.1f s (GCL_STALL_WARN_S)%s%s; waiting for %s",
                 call, stalled, sep, absent, pending);
    }
    return GCL_OK;
}

/* This instance is aborting: another of its IPUs failed first. Its reason is written before
 * the abort is raised: quote it, so that a peer that finds this IPU failed learns the cause, not
 * the consequence. */
static gcl_status_t aborted(gcl_exec_t *x)
{
    const gcl_ipu_t *me = x->peers->ipu;
    const gcl_job_t *j = me->job;
    char call[200], who[160];
    gcl_exec_describe(x, call, sizeof call);
    int first = atomic_load(me->first_failure);
    if (first < 0 || first >= j->num_local_ipus)
        return gcl_err_set(x->err, GCL_ERR_ABORTED,
                           "%s: aborted because another IPU of this instance failed", call);
    int hl = j->ipu_hostlocal[j->first_ipu + first];
    gcl_job_describe_ipu(j, j->first_ipu + first, who, sizeof who);
    return gcl_err_set(x->err, GCL_ERR_ABORTED,
                       "%s: aborted because another IPU of this instance failed: %s: %.300s", call,
                       who, me->host->hb.ipus[hl].reason);
}

/* A peer of the call failed. When an IPU of this instance failed first, this is its
 * consequence (the failed peer may be that IPU, seen before the abort was raised): the abort. */
static gcl_status_t peer_failed(gcl_exec_t *x, const char *why)
{
    char call[200];
    if (atomic_load(x->peers->ipu->first_failure) >= 0)
        return aborted(x);
    gcl_exec_describe(x, call, sizeof call);
    return gcl_err_set(x->err, GCL_ERR_PEER_FAILED, "%s: %s", call, why);
}

gcl_status_t gcl_exec_check(gcl_exec_t *x, gcl_waiter_t *w)
{
    const gcl_ipu_t *me = x->peers->ipu;
    gcl_call_view_t v = gcl_peers_view(x->peers, x->key0, &x->sig);
    char why[512], mism[640];
    if (gcl_diag_poisoned(&me->host->hb, me->hostlocal, x->key0, x->err))
        return GCL_ERR_MISMATCH;
    if (atomic_load(me->abort))
        return aborted(x);
    /* An elastic job: poprun's store says an instance of the membership was lost. */
    if (me->news && atomic_load(&me->news->lost) != 0)
        return peer_failed(x, me->news->why);
    if (gcl_diag_find_mismatch(&v, 0, mism, sizeof mism) ||
        remote_members(x, &v, 0, mism, sizeof mism))
        return gcl_err_set(x->err, GCL_ERR_MISMATCH, "%s", mism);
    int ipu;
    if (x->engine->gone(x, &ipu, why, sizeof why)) {
        if (went_past(x, &v, ipu, 0, mism, sizeof mism))
            return gcl_err_set(x->err, GCL_ERR_MISMATCH, "%s", mism);
        if (gcl_exec_returned_in_call(x, ipu) && !cause_of_return(x, &v, &ipu, why, sizeof why)) {
            char who[160];
            gcl_job_describe_ipu(me->job, ipu, who, sizeof who);
            snprintf(why, sizeof why, "%s returned from its program during this call", who);
        }
        return peer_failed(x, why);
    }
    /* A member of the group failed, though this rank waits on another now: the call can never
     * complete (the peer it waits on will not come either, or hangs on the failed one). */
    if (gcl_diag_member_failed(&v, why, sizeof why) ||
        gcl_ctrl_member_failed(me->ctrl, v.ipus, v.n, why, sizeof why))
        return peer_failed(x, why);
    double stalled = gcl_waiter_stalled(w);
    if (stalled < w->stall_warn_s && stalled < w->timeout_s)
        return GCL_OK;
    if (stalled >= w->timeout_s) {
        if (late_mismatch(x, &v, mism, sizeof mism))
            return gcl_err_set(x->err, GCL_ERR_MISMATCH, "%s", mism);
        /* A local peer still in an earlier call of this communicator has waited longer than
         * this rank: its verdict (a mismatch, which marks the communicator, or its own
         * failure) explains this wait, and comes soon. Wait for it, up to twice the timeout. */
        if (stalled < 2 * w->timeout_s &&
            (gcl_diag_peer_behind(&v) || remote_members(x, &v, 1, NULL, 0)))
            return GCL_OK;
    }
    return stall_or_timeout(x, w, &v, stalled);
}
