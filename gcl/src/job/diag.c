/* Diagnostics; see diag.h. */
#include "job/diag.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

void gcl_diag_mismatch_text(const gcl_job_t *j, int ipu_a, const gcl_sig_t *a, int ipu_b,
                            const gcl_sig_t *b, char *buf, size_t len)
{
    char sa[200], sb[200], wa[160], wb[160];
    gcl_sig_describe(a, sa, sizeof sa);
    gcl_sig_describe(b, sb, sizeof sb);
    gcl_job_describe_ipu(j, ipu_a, wa, sizeof wa);
    gcl_job_describe_ipu(j, ipu_b, wb, sizeof wb);
    /* A sentence longer than BUF is cut at its end (the names come first): by design, so the
     * length it would have had is only looked at for an encoding error. */
    if (snprintf(buf, len, "mismatched calls: %s called %s; %s called %s", wa, sa, wb, sb) < 0)
        snprintf(buf, len, "mismatched calls");
}

gcl_status_t gcl_diag_check_message(gcl_err_t *err, const gcl_job_t *j, int me_ipu, int peer_ipu,
                                    const gcl_sig_t *mine, const gcl_sig_t *theirs,
                                    uint64_t my_bytes, uint64_t their_bytes)
{
    int same_call = memcmp(theirs, mine, sizeof *theirs) == 0;
    if (same_call && their_bytes == my_bytes)
        return GCL_OK;
    char text[600];
    if (same_call) {
        char who[160], call[200];
        gcl_job_describe_ipu(j, peer_ipu, who, sizeof who);
        gcl_sig_describe(mine, call, sizeof call);
        snprintf(text, sizeof text,
                 "mismatched call %s: a message of %llu bytes from %s where %llu were expected",
                 call, (unsigned long long)their_bytes, who, (unsigned long long)my_bytes);
    } else {
        gcl_diag_mismatch_text(j, me_ipu, mine, peer_ipu, theirs, text, sizeof text);
    }
    return gcl_err_set(err, GCL_ERR_MISMATCH, "%s", text);
}

/*
 * "replica 0 (...) failed: REASON" for the failed global IPU IPU of this host. An IPU that failed
 * after another of its instance (aborted by it, or stopped by its failure) is explained by that
 * one, the cause, named with its own reason: its own reason would only quote the cause's, and a
 * quote of a quote is cut before it says anything.
 */
static void describe_failed(const gcl_job_t *j, gcl_hostbox_t *hb, int ipu, char *why, size_t len)
{
    int hl = j->ipu_hostlocal[ipu];
    gcl_hostbox_ipu_t *p = &hb->ipus[hl];
    char who[160], cause[160];
    gcl_job_describe_ipu(j, ipu, who, sizeof who);
    for (int i = 0; p->after_other && i < hb->num_ipus; i++) {
        gcl_hostbox_ipu_t *c = &hb->ipus[i];
        if (i == hl || c->pid != p->pid || c->global_ipu < 0 || c->global_ipu >= j->num_ipus ||
            gcl_hostbox_state(c) != GCL_IPU_FAILED || c->after_other ||
            gcl_life_gen(gcl_hostbox_life(c)) != gcl_life_gen(gcl_hostbox_life(p)))
            continue;
        gcl_job_describe_ipu(j, c->global_ipu, cause, sizeof cause);
        snprintf(why, len, "%s failed after %s of its instance, which failed first: %.300s", who,
                 cause, c->reason);
        return;
    }
    snprintf(why, len, "%s failed: %.300s", who, p->reason);
}

int gcl_diag_peer_gone(const gcl_job_t *j, gcl_hostbox_t *hb, uint32_t run_gen, int ipu, char *why,
                       size_t len)
{
    int hl = j->ipu_hostlocal[ipu];
    if (hl < 0)
        return 0;
    gcl_hostbox_ipu_t *p = &hb->ipus[hl];
    uint64_t life = gcl_hostbox_life(p);
    uint32_t state = gcl_life_state(life), gen = gcl_life_gen(life);
    char who[160];
    gcl_job_describe_ipu(j, ipu, who, sizeof who);
    if (state == GCL_IPU_FAILED) {
        describe_failed(j, hb, ipu, why, len);
        return 1;
    }
    if (state == GCL_IPU_EXITED && gen >= run_gen) { /* returned in this run, then left */
        snprintf(why, len,
                 "%s returned from its program without making this call (its instance has "
                 "since left the job)",
                 who);
        return 1;
    }
    if (state == GCL_IPU_EXITED) {
        snprintf(why, len, "%s has left the job (its instance called gcl_finalize)", who);
        return 1;
    }
    if ((state == GCL_IPU_FINISHED || state == GCL_IPU_CLOSING) && gen >= run_gen) {
        snprintf(why, len, "%s returned from its program without making this call", who);
        return 1;
    }
    if (state == GCL_IPU_CLOSING) { /* this run is one it will never make */
        snprintf(why, len, "%s has left the job (its instance called gcl_finalize)", who);
        return 1;
    }
    if (p->pid > 0 && p->pid != getpid() && kill(p->pid, 0) != 0 && errno == ESRCH) {
        snprintf(why, len, "%s is gone: its process exited", who);
        return 1;
    }
    return 0;
}

int gcl_diag_member_failed(const gcl_call_view_t *v, char *why, size_t len)
{
    for (int r = 0; r < v->n; r++) {
        int hl = v->job->ipu_hostlocal[v->ipus[r]];
        if (r == v->rank || hl < 0 || gcl_hostbox_state(&v->hb->ipus[hl]) != GCL_IPU_FAILED)
            continue;
        describe_failed(v->job, v->hb, v->ipus[r], why, len);
        return 1;
    }
    return 0;
}

int gcl_diag_other_failed(const gcl_job_t *j, gcl_hostbox_t *hb, char *why, size_t len)
{
    for (int g = 0; g < j->num_ipus; g++) {
        int hl = j->ipu_hostlocal[g];
        if (hl < 0 || j->ipu_instance[g] == j->instance_index ||
            gcl_hostbox_state(&hb->ipus[hl]) != GCL_IPU_FAILED)
            continue;
        describe_failed(j, hb, g, why, len);
        return 1;
    }
    return 0;
}

void gcl_diag_publish_call(gcl_hostbox_t *hb, int hl, uint64_t key0, const gcl_sig_t *sig)
{
    /* Peers read the signature only while last_call holds the same key before and after. */
    gcl_hostbox_ipu_t *me = &hb->ipus[hl];
    uint64_t w[4];
    memcpy(w, sig, sizeof w);
    atomic_store_explicit(&me->last_call, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    for (int i = 0; i < 4; i++)
        atomic_store_explicit(&me->last_sig[i], w[i], memory_order_relaxed);
    atomic_store_explicit(&me->last_call, key0, memory_order_release);
}

void gcl_diag_life(gcl_hostbox_t *hb, int hl, gcl_peer_life_t *out)
{
    gcl_hostbox_ipu_t *p = &hb->ipus[hl];
    memset(out, 0, sizeof *out);
    uint64_t life = gcl_hostbox_life(p);
    out->state = gcl_life_state(life);
    out->run_gen = gcl_life_gen(life);
    /* The signature is read only while last_call holds the same key before and after. */
    uint64_t key = atomic_load_explicit(&p->last_call, memory_order_acquire), w[4];
    for (int i = 0; i < 4; i++)
        w[i] = atomic_load_explicit(&p->last_sig[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (key != 0 && atomic_load_explicit(&p->last_call, memory_order_relaxed) == key) {
        out->last_call = key;
        memcpy(&out->sig, w, sizeof w);
        out->valid = 1;
    }
}

int gcl_diag_same_call_differs(const gcl_call_view_t *v, int ipu, const gcl_peer_life_t *l,
                               char *why, size_t len)
{
    if (!l->valid || (l->last_call >> 32) != (v->key0 >> 32))
        return 0;
    /* An earlier call: a peer that made it another way (over another group with the same
     * communicator number, say) may have completed it, or returned, before this IPU could see
     * its call; this IPU's own record of that call still proves the mismatch. */
    uint32_t seq = (uint32_t)l->last_call;
    const gcl_sig_t *mine = NULL;
    if (l->last_call == v->key0)
        mine = v->sig;
    else if (seq < (uint32_t)v->key0 && v->hist && v->nhist > 0 &&
             v->hist[seq % (uint32_t)v->nhist].seq == seq)
        mine = &v->hist[seq % (uint32_t)v->nhist];
    if (!mine || memcmp(&l->sig, mine, sizeof l->sig) == 0)
        return 0;
    gcl_diag_mismatch_text(v->job, v->me_ipu, mine, ipu, &l->sig, why, len);
    return 1;
}

/*
 * A peer that went past this call of the communicator (its latest call is a later one) and
 * never sent or took what this rank waits for: it made this call another way (over another
 * group, say, with the same communicator number), since messages it sent for it would be here.
 * Proof once the peer has returned from its program; with TIMED_OUT also while it waits in its
 * later call (a non-blocking call may legally be overtaken, but not for GCL_TIMEOUT_S).
 */
int gcl_diag_past(const gcl_call_view_t *v, int ipu, const gcl_peer_life_t *l, int timed_out,
                  char *why, size_t len)
{
    int finished = l->state == GCL_IPU_FINISHED || l->state == GCL_IPU_CLOSING;
    if (!(finished || (timed_out && l->state == GCL_IPU_RUNNING)) || l->run_gen < v->run_gen ||
        !l->valid || (l->last_call >> 32) != (v->key0 >> 32) ||
        (uint32_t)l->last_call <= (uint32_t)v->key0)
        return 0;
    char mine[200], later[200], who_me[160], who[160];
    gcl_sig_describe(v->sig, mine, sizeof mine);
    gcl_sig_describe(&l->sig, later, sizeof later);
    gcl_job_describe_ipu(v->job, v->me_ipu, who_me, sizeof who_me);
    gcl_job_describe_ipu(v->job, ipu, who, sizeof who);
    /* In two parts: a message longer than WHY is cut, not refused. */
    snprintf(why, len, "mismatched calls: %s called %s; ", who_me, mine);
    size_t used = strlen(why);
    snprintf(why + used, len - used,
             "%s made call #%u of this communicator another way (nothing of it came here), "
             "then called %s, %s",
             who, v->sig->seq, later,
             finished ? "and returned from its program" : "where it waits");
    return 1;
}

int gcl_diag_behind(const gcl_call_view_t *v, const gcl_peer_life_t *l)
{
    return l->state == GCL_IPU_RUNNING && l->run_gen >= v->run_gen && l->valid &&
           (l->last_call >> 32) == (v->key0 >> 32) && (uint32_t)l->last_call < (uint32_t)v->key0;
}

static int local_life(const gcl_call_view_t *v, int ipu, gcl_peer_life_t *l)
{
    int hl = v->job->ipu_hostlocal[ipu];
    if (hl < 0)
        return 0;
    gcl_diag_life(v->hb, hl, l);
    return 1;
}

int gcl_diag_went_past(const gcl_call_view_t *v, int ipu, int timed_out, char *why, size_t len)
{
    gcl_peer_life_t l;
    return local_life(v, ipu, &l) && gcl_diag_past(v, ipu, &l, timed_out, why, len);
}

/*
 * A message addressed to this IPU that waits unclaimed and gives the peer away: one of this call
 * (same key) with another signature is proof of a mismatch at any time; one of another call of
 * this communicator from a peer this rank waits for is proof once the wait has timed out (the
 * peer went past, or skipped, this call). So is a peer whose latest call is this one, made
 * another way, even when no message of it comes here.
 */
int gcl_diag_find_mismatch(const gcl_call_view_t *v, int timed_out, char *why, size_t len)
{
    gcl_hostbox_t *hb = v->hb;
    int me = v->job->ipu_hostlocal[v->me_ipu];
    for (int r = 0; r < v->n; r++) {
        int ipu = v->ipus[r], hl = v->job->ipu_hostlocal[ipu];
        gcl_peer_life_t l;
        if (r == v->rank || !local_life(v, ipu, &l))
            continue;
        if (gcl_diag_same_call_differs(v, ipu, &l, why, len))
            return 1;
        for (int i = 0; i < hb->nslots; i++) {
            gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, hl, me, i);
            if (atomic_load_explicit(&s->state, memory_order_acquire) != GCL_SLOT_FULL)
                continue;
            gcl_sig_t theirs = s->sig;
            uint64_t key = s->key0;
            int same_call = key == v->key0 && memcmp(&theirs, v->sig, sizeof theirs) != 0;
            int other_call = timed_out && (key >> 32) == (v->key0 >> 32) && key != v->key0;
            if (!same_call && !other_call)
                continue;
            gcl_diag_mismatch_text(v->job, v->me_ipu, v->sig, ipu, &theirs, why, len);
            return 1;
        }
    }
    return 0;
}

int gcl_diag_peer_behind(const gcl_call_view_t *v)
{
    for (int r = 0; r < v->n; r++) {
        gcl_peer_life_t l;
        if (r != v->rank && local_life(v, v->ipus[r], &l) && gcl_diag_behind(v, &l))
            return 1;
    }
    return 0;
}

void gcl_diag_absent(const gcl_call_view_t *v, char *buf, size_t len)
{
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < v->n && shown < 6; r++) {
        gcl_peer_life_t l;
        if (r == v->rank || !local_life(v, v->ipus[r], &l))
            continue;
        /* Absent: it entered no call yet, or only earlier calls of this communicator. A peer
         * whose last call was on another communicator may be anywhere: not listed. */
        uint64_t last = l.valid ? l.last_call : 0;
        if (last != 0 && ((last >> 32) != (v->key0 >> 32) || (uint32_t)last >= (uint32_t)v->key0))
            continue;
        char who[160];
        gcl_job_describe_ipu(v->job, v->ipus[r], who, sizeof who);
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                 shown++ ? ", " : "", who);
    }
}

/* The poison text of an IPU box is written and read under its lock, held for one copy by any
 * process of the host. The lock word is the holder's pid: a holder that died with it (kill -9
 * in the middle of the copy) is found out and the lock taken over, so nobody waits forever;
 * the text it was writing may then be cut short, which readers bound. */
static void poison_lock(gcl_hostbox_ipu_t *p)
{
    uint32_t me = (uint32_t)getpid();
    for (unsigned spins = 0;; spins++) {
        uint32_t holder = 0;
        if (atomic_compare_exchange_weak_explicit(&p->poison_lock, &holder, me,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
        if (spins % 1024 == 1023 && holder != 0 && gcl_hostbox_pid_gone((int32_t)holder) &&
            atomic_compare_exchange_strong(&p->poison_lock, &holder, me))
            return;
        if (spins > 64)
            sched_yield();
    }
}

static void poison_unlock(gcl_hostbox_ipu_t *p)
{
    atomic_store_explicit(&p->poison_lock, 0, memory_order_release);
}

int gcl_diag_poisoned(gcl_hostbox_t *hb, int hl, uint64_t key0, gcl_err_t *err)
{
    gcl_hostbox_ipu_t *me = &hb->ipus[hl];
    uint64_t poison = atomic_load_explicit(&me->poison_key, memory_order_acquire);
    /* That call, or a later one of its communicator: a replica whose own part of the mismatched
     * call completed learns of it at its next call there. */
    if (key0 == 0 || poison == 0 || poison >> 32 != key0 >> 32 || (uint32_t)poison > (uint32_t)key0)
        return 0;
    char text[sizeof me->poison];
    poison_lock(me);
    snprintf(text, sizeof text, "%.*s", (int)sizeof me->poison - 1, me->poison);
    poison_unlock(me);
    if (poison == key0)
        gcl_err_set(err, GCL_ERR_MISMATCH, "%s", text);
    else
        gcl_err_set(err, GCL_ERR_MISMATCH, "call #%u of this communicator was mismatched: %s",
                    (uint32_t)poison, text);
    return 1;
}

void gcl_diag_poison_ipu(gcl_hostbox_t *hb, int hl, uint64_t key0, const char *reason)
{
    gcl_hostbox_ipu_t *p = &hb->ipus[hl];
    /* The first reason for a call stays: the owner may be reading it. */
    if (atomic_load_explicit(&p->poison_key, memory_order_acquire) == key0)
        return;
    poison_lock(p);
    if (atomic_load(&p->poison_key) != key0) {
        snprintf(p->poison, sizeof p->poison, "%s", reason);
        atomic_store_explicit(&p->poison_key, key0, memory_order_release);
    }
    poison_unlock(p);
    gcl_hostbox_alarm(hb, hl);
}

void gcl_diag_poison_group(const gcl_call_view_t *v, const char *reason)
{
    for (int r = 0; r < v->n; r++) {
        int hl = v->job->ipu_hostlocal[v->ipus[r]];
        if (r != v->rank && hl >= 0)
            gcl_diag_poison_ipu(v->hb, hl, v->key0, reason);
    }
}
