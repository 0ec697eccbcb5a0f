/* The schedule executor; see exec.h. */
#include "exec.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "request.h"

gcl_status_t gcl_exec_start(gcl_exec_t *x, struct gcl_comm *comm, const coll_schedule_t *sched,
                            const void *in, void *out, const gcl_sig_t *sig, uint64_t key,
                            const char *what)
{
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->sched = sched;
    x->sig = *sig;
    x->what = what;
    x->key0 = key;
    /* Phantom mode moves no data for calls whose output is NULL (sizes only); calls with real
     * buffers (a benchmark's timings, a checksum) still move theirs. */
    const void *data = out ? out : in;
    x->phantom =
        comm->ctx->inst->phantom && (!data || gcl_sim_is_phantom(&comm->ctx->inst->sim, data));
    x->info = (coll_exec_info_t){(coll_dtype_t)sig->dtype, (coll_redop_t)sig->op,
                                 coll_dtype_size((coll_dtype_t)sig->dtype), comm->size};
    x->bufs[COLL_BUF_IN] = (void *)in;
    x->bufs[COLL_BUF_OUT] = out;
    size_t n = (size_t)comm->size;
    x->sent = calloc(n, sizeof *x->sent);
    x->recvd = calloc(n, sizeof *x->recvd);
    if (x->sched->tmp_count > 0)
        x->bufs[COLL_BUF_TMP] = x->tmp_alloc = malloc(x->sched->tmp_count * x->info.elem_size);
    if (!x->sent || !x->recvd || (x->sched->tmp_count > 0 && !x->tmp_alloc)) {
        gcl_exec_finish(x);
        return gcl_ctx_fail(comm->ctx, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", what);
    }
    return GCL_OK;
}

/* Starts the transfers of the current step. */
static gcl_status_t post_step(gcl_exec_t *x)
{
    const coll_step_t *st = &x->sched->steps[x->step];
    struct gcl_comm *c = x->comm;
    if (st->count > x->xcap) {
        gcl_xfer_t *nx = realloc(x->xfers, st->count * sizeof *nx);
        if (!nx)
            return gcl_ctx_fail(c->ctx, GCL_ERR_NO_HOST_MEMORY, "%s: out of memory", x->what);
        x->xfers = nx;
        x->xcap = st->count;
    }
    x->nxfers = 0;
    for (uint32_t i = 0; i < st->count; i++) {
        const coll_op_t *op = &x->sched->ops[st->first + i];
        if (op->kind > COLL_OP_RECV_REDUCE)
            continue;
        gcl_xfer_t *t = &x->xfers[x->nxfers++];
        int peer = gcl_comm_peer_ipu(c, op->peer);
        int is_send = op->kind == COLL_OP_SEND;
        uint32_t idx = is_send ? x->sent[op->peer]++ : x->recvd[op->peer]++;
        *t = (gcl_xfer_t){.tp = gcl_transport_for(c->ctx, peer),
                          .ctx = c->ctx,
                          .comm = c,
                          .is_send = is_send,
                          .peer_ipu = peer,
                          .peer_hl = c->ctx->inst->ipu_hostlocal[peer],
                          .op = op,
                          .bufs = x->bufs,
                          .info = &x->info,
                          .sig = &x->sig,
                          .key0 = x->key0,
                          .key1 = (uint64_t)idx << 32,
                          .bytes = op->count * x->info.elem_size,
                          .phantom = x->phantom,
                          .slot = -1};
    }
    for (uint32_t i = 0; i < x->nxfers; i++) /* same-peer receives keep their order */
        for (uint32_t j = i; j-- > 0;)
            if (!x->xfers[i].is_send && !x->xfers[j].is_send &&
                x->xfers[j].peer_ipu == x->xfers[i].peer_ipu) {
                x->xfers[i].after = &x->xfers[j];
                break;
            }
    /* The simulated times travel with the messages, so they are set before anything is sent. */
    gcl_sim_step_post(x);
    for (uint32_t i = 0; i < x->nxfers; i++) {
        gcl_status_t rc = x->xfers[i].tp->start(&x->xfers[i]);
        if (rc != GCL_OK)
            return rc;
    }
    x->posted = 1;
    return GCL_OK;
}

/* Runs the local ops of the current step, after its traffic. */
static void finish_step(gcl_exec_t *x)
{
    const coll_step_t *st = &x->sched->steps[x->step];
    gcl_sim_step_done(x);
    for (uint32_t i = 0; i < st->count; i++) {
        const coll_op_t *op = &x->sched->ops[st->first + i];
        if (op->kind > COLL_OP_RECV_REDUCE && !x->phantom)
            coll_exec_local(op, x->bufs, &x->info);
    }
    x->step++;
    x->posted = 0;
    x->nxfers = 0;
}

int gcl_exec_progress(gcl_exec_t *x)
{
    if (x->direct.on)
        return gcl_direct_progress(x);
    int did = 0;
    while (!x->done) {
        if (x->step >= x->sched->nsteps) {
            x->done = 1;
            gcl_sim_call_end(x);
            return 1;
        }
        if (!x->posted) {
            gcl_status_t rc = post_step(x);
            if (rc != GCL_OK)
                return rc;
            did = 1;
        }
        int pending = 0;
        for (uint32_t i = 0; i < x->nxfers; i++) {
            gcl_xfer_t *t = &x->xfers[i];
            if (t->done)
                continue;
            int rc = t->tp->progress(t);
            if (rc < 0)
                return rc;
            did |= rc;
            pending += !t->done;
        }
        if (pending)
            return did;
        finish_step(x);
        did = 1;
    }
    return did;
}

/* "replica 5 (instance 2 on host h1, pid 77) to send 4096 bytes; replica 6 (...) ..." */
static void describe_pending(gcl_exec_t *x, char *buf, size_t len)
{
    size_t used = 0;
    int shown = 0, more = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < x->nxfers; i++) {
        gcl_xfer_t *t = &x->xfers[i];
        if (t->done)
            continue;
        if (shown == 4) {
            more++;
            continue;
        }
        char who[160];
        gcl_describe_ipu(x->comm->ctx->inst, t->peer_ipu, who, sizeof who);
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s to %s %llu bytes",
                                 shown ? "; " : "", who, t->is_send ? "take" : "send",
                                 (unsigned long long)(t->bytes - t->pos));
        shown++;
    }
    if (more && used < len)
        snprintf(buf + used, len - used, "; and %d more", more);
}

/* Members of the group on this host that have not entered this call yet: the usual root cause of a
 * stall, which the peers a rank waits on directly only pass along. */
static void describe_absent(gcl_exec_t *x, char *buf, size_t len)
{
    struct gcl_comm *c = x->comm;
    struct gcl_instance *inst = c->ctx->inst;
    uint64_t key0 = x->key0;
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < c->size && shown < 6; r++) {
        int ipu = gcl_comm_peer_ipu(c, r), hl = inst->ipu_hostlocal[ipu];
        if (r == c->rank || hl < 0)
            continue;
        /* Absent: it entered no call yet, or only earlier calls of this communicator. A peer
         * whose last call was on another communicator may be anywhere: not listed. */
        uint64_t last = atomic_load(&inst->hb.ipus[hl].last_call);
        if (last != 0 && ((last >> 32) != (key0 >> 32) || (uint32_t)last >= (uint32_t)key0))
            continue;
        char who[160];
        gcl_describe_ipu(inst, ipu, who, sizeof who);
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s",
                                 shown++ ? ", " : "", who);
    }
}

/* The signature a local peer published for its latest call, if that call is key0. */
static int peer_sig(hb_ipu_t *p, uint64_t key0, gcl_sig_t *sig)
{
    uint64_t w[4];
    if (atomic_load_explicit(&p->last_call, memory_order_acquire) != key0)
        return 0;
    for (int i = 0; i < 4; i++)
        w[i] = atomic_load_explicit(&p->last_sig[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&p->last_call, memory_order_relaxed) != key0)
        return 0;
    memcpy(sig, w, sizeof w);
    return 1;
}

/*
 * A local peer that went past this call of the communicator (its latest call is a later one)
 * and never sent or took what this rank waits for: it made this call another way (over
 * another group, say, with the same communicator number), since messages it sent for it would
 * be here. Proof once the peer has returned from its program; with TIMED_OUT also while it
 * waits in its later call (a non-blocking call may legally be overtaken, but not for
 * GCL_TIMEOUT_S). Returns 1 and a sentence naming both sides; 0 otherwise.
 */
static int went_past(gcl_exec_t *x, int ipu, int timed_out, char *why, size_t len)
{
    struct gcl_instance *inst = x->comm->ctx->inst;
    int hl = inst->ipu_hostlocal[ipu];
    if (hl < 0)
        return 0;
    hb_ipu_t *p = &inst->hb.ipus[hl];
    uint64_t last = atomic_load_explicit(&p->last_call, memory_order_acquire);
    uint32_t state = atomic_load(&p->state);
    int finished = state == HB_IPU_FINISHED;
    if (!(finished || (timed_out && state == HB_IPU_RUNNING)) ||
        atomic_load(&p->run_gen) < inst->run_gen || (last >> 32) != (x->key0 >> 32) ||
        (uint32_t)last <= (uint32_t)x->key0)
        return 0;
    gcl_sig_t theirs;
    if (!peer_sig(p, last, &theirs))
        return 0;
    char mine[200], later[200], who_me[160], who[160];
    gcl_sig_describe(&x->sig, mine, sizeof mine);
    gcl_sig_describe(&theirs, later, sizeof later);
    gcl_describe_ipu(inst, x->comm->ctx->global_ipu, who_me, sizeof who_me);
    gcl_describe_ipu(inst, ipu, who, sizeof who);
    /* In two parts: a message longer than WHY is cut, not refused. */
    snprintf(why, len, "mismatched calls: %s called %s; ", who_me, mine);
    size_t used = strlen(why);
    snprintf(why + used, len - used,
             "%s made call #%u of this communicator another way (nothing of it came here), "
             "then called %s, %s",
             who, x->sig.seq, later, finished ? "and returned from its program" : "where it waits");
    return 1;
}

/*
 * A message addressed to this IPU that waits unclaimed and gives the peer away: one of this call
 * (same key) with another signature is proof of a mismatch at any time; one of another call of
 * this communicator from a peer this rank waits for is proof once the wait has timed out (the
 * peer went past, or skipped, this call). Returns 1 and a sentence naming both sides.
 */
static int find_mismatch(gcl_exec_t *x, int timed_out, char *why, size_t len)
{
    struct gcl_comm *c = x->comm;
    struct gcl_instance *inst = c->ctx->inst;
    hostbox_t *hb = &inst->hb;
    int me = c->ctx->hostlocal;
    for (int r = 0; r < c->size; r++) {
        int ipu = c->ipus[r], hl = inst->ipu_hostlocal[ipu];
        if (r == c->rank || hl < 0)
            continue;
        /* The peer's latest call is this one, made another way: proof even when no message of
         * it comes here (it may have returned already, its part of the call done). */
        gcl_sig_t theirs;
        if (peer_sig(&hb->ipus[hl], x->key0, &theirs) &&
            memcmp(&theirs, &x->sig, sizeof theirs) != 0) {
            gcl_mismatch_text(inst, c->ctx->global_ipu, &x->sig, ipu, &theirs, why, len);
            return 1;
        }
        for (int i = 0; i < hb->nslots; i++) {
            hb_slot_t *s = hb_slot(hb, hl, me, i);
            if (atomic_load_explicit(&s->state, memory_order_acquire) != HB_SLOT_FULL)
                continue;
            theirs = s->sig;
            uint64_t key = s->key0;
            int same_call = key == x->key0 && memcmp(&theirs, &x->sig, sizeof theirs) != 0;
            int other_call = timed_out && (key >> 32) == (x->key0 >> 32) && key != x->key0;
            if (!same_call && !other_call)
                continue;
            gcl_mismatch_text(inst, c->ctx->global_ipu, &x->sig, ipu, &theirs, why, len);
            return 1;
        }
    }
    return 0;
}

/* Is a local member of the group still running an earlier call of this communicator? */
static int peer_behind(gcl_exec_t *x)
{
    struct gcl_instance *inst = x->comm->ctx->inst;
    for (int r = 0; r < x->comm->size; r++) {
        int hl = inst->ipu_hostlocal[x->comm->ipus[r]];
        if (r == x->comm->rank || hl < 0)
            continue;
        hb_ipu_t *p = &inst->hb.ipus[hl];
        uint64_t last = atomic_load_explicit(&p->last_call, memory_order_acquire);
        if (atomic_load(&p->state) == HB_IPU_RUNNING && atomic_load(&p->run_gen) >= inst->run_gen &&
            last != 0 && (last >> 32) == (x->key0 >> 32) && (uint32_t)last < (uint32_t)x->key0)
            return 1;
    }
    return 0;
}

/* The context of every message about this call: "all_reduce #3 (all, rank 2 of 8, step 4/14)". */
static void describe_call(gcl_exec_t *x, char *buf, size_t len)
{
    char g[32];
    coll_group_format(x->comm->group, g, sizeof g);
    if (x->direct.on)
        snprintf(buf, len, "%s #%u (group %s, rank %d of %d, host-direct round %llu of %llu)",
                 x->what, x->sig.seq, g, x->comm->rank, x->comm->size,
                 (unsigned long long)x->direct.round + 1, (unsigned long long)x->direct.nrounds);
    else
        snprintf(buf, len, "%s #%u (group %s, rank %d of %d, step %u of %u)", x->what, x->sig.seq,
                 g, x->comm->rank, x->comm->size, x->step + 1, x->sched->nsteps);
}

/* Every ~100 ms of waiting: did a peer die, did this instance abort, is it time to warn? */
gcl_status_t gcl_exec_check(gcl_exec_t *x, gcl_waiter_t *w)
{
    struct gcl_ctx *ctx = x->comm->ctx;
    char call[160], why[256], pending[768];
    /* A mismatch first: it explains any peer that has given up since. */
    if (gcl_poisoned(ctx, x->key0))
        return GCL_ERR_MISMATCH;
    if (atomic_load(&ctx->inst->abort)) {
        describe_call(x, call, sizeof call);
        return gcl_ctx_fail(ctx, GCL_ERR_ABORTED,
                            "%s: aborted because another IPU of this "
                            "instance failed",
                            call);
    }
    /* Then a mismatch found here: it explains a peer that returned or failed since. */
    char mism[640];
    if (find_mismatch(x, 0, mism, sizeof mism))
        return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
    for (int r = 0; x->direct.on && r < x->comm->size; r++) {
        int hl = ctx->inst->ipu_hostlocal[x->comm->ipus[r]];
        if (atomic_load(&ctx->inst->hb.ipus[hl].epoch) < x->direct.target &&
            gcl_peer_gone(ctx, x->comm->ipus[r], why, sizeof why)) {
            if (went_past(x, x->comm->ipus[r], 0, mism, sizeof mism))
                return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
            describe_call(x, call, sizeof call);
            return gcl_ctx_fail(ctx, GCL_ERR_PEER_FAILED, "%s: %s", call, why);
        }
    }
    for (uint32_t i = 0; i < x->nxfers; i++) {
        gcl_xfer_t *t = &x->xfers[i];
        /* A peer that has finished may have left what we wait for in its slots: only a
         * message that is not there is missing. */
        if (t->done || !gcl_peer_gone(ctx, t->peer_ipu, why, sizeof why))
            continue;
        if (!t->is_send && t->peer_hl >= 0 &&
            hb_has_message(&ctx->inst->hb, t->peer_hl, ctx->hostlocal, x->key0))
            continue;
        /* The peer may have finished after taking our message: look once more. */
        if (t->tp->progress(t) >= 0 && t->done)
            continue;
        if (went_past(x, t->peer_ipu, 0, mism, sizeof mism))
            return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
        describe_call(x, call, sizeof call);
        return gcl_ctx_fail(ctx, GCL_ERR_PEER_FAILED, "%s: %s", call, why);
    }
    double stalled = gcl_waiter_stalled(w);
    if (stalled < w->stall_warn_s && stalled < w->timeout_s)
        return GCL_OK;
    if (stalled >= w->timeout_s) {
        if (find_mismatch(x, 1, mism, sizeof mism))
            return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
        for (uint32_t i = 0; !x->direct.on && i < x->nxfers; i++)
            if (!x->xfers[i].done && went_past(x, x->xfers[i].peer_ipu, 1, mism, sizeof mism))
                return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
        for (int r = 0; x->direct.on && r < x->comm->size; r++)
            if (r != x->comm->rank && went_past(x, x->comm->ipus[r], 1, mism, sizeof mism))
                return gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%s", mism);
        /* A local peer still in an earlier call of this communicator has waited longer than
         * this rank: its verdict (a mismatch, which marks the communicator, or its own
         * failure) explains this wait, and comes soon. Wait for it, up to twice the timeout. */
        if (stalled < 2 * w->timeout_s && peer_behind(x))
            return GCL_OK;
    }
    char absent[768];
    describe_call(x, call, sizeof call);
    if (x->direct.on)
        gcl_direct_describe_pending(x, pending, sizeof pending);
    else
        describe_pending(x, pending, sizeof pending);
    describe_absent(x, absent, sizeof absent);
    if (stalled >= w->timeout_s)
        return gcl_ctx_fail(ctx, GCL_ERR_TIMEOUT,
                            "%s: no progress for %.1f s (GCL_TIMEOUT_S)%s%s; waited for %s", call,
                            stalled, absent[0] ? "; not in this call yet: " : "", absent, pending);
    if (!w->warned) {
        w->warned = 1;
        GCL_WARN(GCL_SUB_COLL, "%s: stalled for %.1f s (GCL_STALL_WARN_S)%s%s; waiting for %s",
                 call, stalled, absent[0] ? "; not in this call yet: " : "", absent, pending);
    }
    return GCL_OK;
}

int gcl_exec_polls(const gcl_exec_t *x)
{
    for (uint32_t i = 0; i < x->nxfers; i++)
        if (!x->xfers[i].done && x->xfers[i].tp->polls)
            return 1;
    return 0;
}

void gcl_exec_finish(gcl_exec_t *x)
{
    for (uint32_t i = 0; i < x->nxfers; i++)
        if (!x->xfers[i].done && x->xfers[i].tp->cancel)
            x->xfers[i].tp->cancel(&x->xfers[i]);
    free(x->xfers);
    free(x->sent);
    free(x->recvd);
    free(x->tmp_alloc);
    free(x->sim_mult_own);
    x->sim_mult_own = NULL;
    free(x->direct.entry);
    free(x->direct.acc);
    free(x->direct.in_at);
    x->direct.in_at = x->direct.out_at = NULL;
    x->direct.entry = NULL;
    x->direct.acc = x->direct.tmp = NULL;
    x->xfers = NULL;
    x->nxfers = x->xcap = 0;
    x->sent = x->recvd = NULL;
    x->tmp_alloc = NULL;
}
