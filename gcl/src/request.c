/* Requests and the per-IPU progress engine; see request.h. */
#include "request.h"

#include <stdio.h>
#include <stdlib.h>
#include <sched.h>
#include <string.h>

#include "log.h"

static hb_ipu_t *my_box(struct gcl_ctx *ctx)
{
    return &ctx->inst->hb.ipus[ctx->hostlocal];
}

gcl_status_t gcl_request_launch(struct gcl_request *r)
{
    struct gcl_ctx *ctx = r->comm->ctx;
    struct gcl_request **tail = &ctx->active;
    while (*tail)
        tail = &(*tail)->next;
    r->next = NULL;
    *tail = r;
    if (r->comm != ctx->p2p) {
        /* Peers read the signature only while last_call holds the same key before and after. */
        hb_ipu_t *me = my_box(ctx);
        uint64_t w[4];
        memcpy(w, &r->x.sig, sizeof w);
        atomic_store_explicit(&me->last_call, 0, memory_order_relaxed);
        atomic_thread_fence(memory_order_release);
        for (int i = 0; i < 4; i++)
            atomic_store_explicit(&me->last_sig[i], w[i], memory_order_relaxed);
        atomic_store_explicit(&me->last_call, r->x.key0, memory_order_release);
    }
    gcl_sim_call_begin(&r->x);
    return GCL_OK;
}

/* The poison text of an IPU box is written and read under its lock, held for one copy. */
static void poison_lock(hb_ipu_t *p)
{
    for (int spins = 0;; spins++) {
        uint32_t unlocked = 0;
        if (atomic_compare_exchange_weak_explicit(&p->poison_lock, &unlocked, 1,
                                                  memory_order_acquire, memory_order_relaxed))
            return;
        if (spins > 64)
            sched_yield();
    }
}

int gcl_poisoned(struct gcl_ctx *ctx, uint64_t key0)
{
    hb_ipu_t *me = my_box(ctx);
    uint64_t poison = atomic_load_explicit(&me->poison_key, memory_order_acquire);
    /* That call, or a later one of its communicator: a replica whose own part of the mismatched
     * call completed learns of it at its next call there. */
    if (key0 == 0 || poison == 0 || poison >> 32 != key0 >> 32 || (uint32_t)poison > (uint32_t)key0)
        return 0;
    char text[sizeof me->poison];
    poison_lock(me);
    snprintf(text, sizeof text, "%s", me->poison);
    atomic_store_explicit(&me->poison_lock, 0, memory_order_release);
    if (poison == key0)
        gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "%.400s", text);
    else
        gcl_ctx_fail(ctx, GCL_ERR_MISMATCH, "call #%u of this communicator was mismatched: %.400s",
                     (uint32_t)poison, text);
    return 1;
}

static void fail_request(struct gcl_request *r, gcl_status_t rc)
{
    r->finished = 1;
    r->status = rc;
    snprintf(r->error, sizeof r->error, "%s", r->comm->ctx->error);
    /* Every replica of a mismatched call must hear of it, not just the two that met (the others
     * would only time out): each replica that learns of it tells its own group, once. */
    if (rc == GCL_ERR_MISMATCH)
        gcl_poison_group(r->comm, r->x.key0, r->error);
    gcl_exec_finish(&r->x); /* takes back whatever the transfers still hold */
}

int gcl_ctx_progress(struct gcl_ctx *ctx)
{
    int did = 0;
    for (struct gcl_request *r = ctx->active; r; r = r->next) {
        if (r->finished)
            continue;
        if (gcl_poisoned(ctx, r->x.key0)) {
            fail_request(r, GCL_ERR_MISMATCH);
            did = 1;
            continue;
        }
        int rc = gcl_exec_progress(&r->x);
        if (rc < 0) {
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

static void unlink_request(struct gcl_ctx *ctx, struct gcl_request *r)
{
    for (struct gcl_request **p = &ctx->active; *p; p = &(*p)->next) {
        if (*p == r) {
            *p = r->next;
            return;
        }
    }
}

static void free_request(struct gcl_request *r)
{
    gcl_exec_finish(&r->x);
    coll_schedule_free(&r->own);
    free(r->scratch);
    free(r);
}

/* Hands R's outcome to its caller: the error text goes where gcl_last_error (or, for
 * point-to-point, gcl_ctx_last_error) finds it. */
static gcl_status_t retire(struct gcl_request *r)
{
    struct gcl_ctx *ctx = r->comm->ctx;
    gcl_status_t rc = r->status;
    char *dst = r->comm == ctx->p2p ? ctx->last_error : r->comm->error;
    if (rc == GCL_OK) {
        dst[0] = '\0';
    } else {
        snprintf(dst, GCL_ERRLEN, "%s", r->error);
        GCL_WARN(GCL_SUB_COLL, "%s failed (%s): %s", r->x.what, gcl_status_name(rc), r->error);
    }
    unlink_request(ctx, r);
    free_request(r);
    return rc;
}

static int any_polls(struct gcl_ctx *ctx)
{
    for (struct gcl_request *r = ctx->active; r; r = r->next)
        if (!r->finished && gcl_exec_polls(&r->x))
            return 1;
    return 0;
}

gcl_status_t gcl_request_complete(struct gcl_request *r)
{
    struct gcl_ctx *ctx = r->comm->ctx;
    hostbox_t *hb = &ctx->inst->hb;
    gcl_waiter_t w;
    gcl_waiter_init(&w, &ctx->inst->params);
    while (!r->finished) {
        uint32_t seen = atomic_load(&hb->ipus[ctx->hostlocal].doorbell);
        int did = gcl_ctx_progress(ctx);
        if (r->finished)
            break;
        if (did) {
            gcl_waiter_progress(&w);
            continue;
        }
        if (gcl_waiter_idle(&w, hb, ctx->hostlocal, seen, any_polls(ctx))) {
            gcl_status_t st = gcl_exec_check(&r->x, &w);
            if (st != GCL_OK)
                fail_request(r, st);
        }
    }
    return retire(r);
}

void gcl_request_abandon_all(struct gcl_ctx *ctx)
{
    while (ctx->active) {
        struct gcl_request *r = ctx->active;
        if (!r->finished)
            GCL_WARN(GCL_SUB_COLL, "%s #%u was started but never completed: cancelled", r->x.what,
                     r->x.sig.seq);
        ctx->active = r->next;
        free_request(r);
    }
}

void gcl_poison_group(struct gcl_comm *comm, uint64_t key0, const char *reason)
{
    struct gcl_instance *inst = comm->ctx->inst;
    for (int r = 0; r < comm->size; r++) {
        int hl = inst->ipu_hostlocal[comm->ipus[r]];
        if (r == comm->rank || hl < 0)
            continue;
        hb_ipu_t *p = &inst->hb.ipus[hl];
        /* The first reason for a call stays: the owner may be reading it. */
        if (atomic_load_explicit(&p->poison_key, memory_order_acquire) == key0)
            continue;
        poison_lock(p);
        if (atomic_load(&p->poison_key) != key0) {
            snprintf(p->poison, sizeof p->poison, "%s", reason);
            atomic_store_explicit(&p->poison_key, key0, memory_order_release);
        }
        atomic_store_explicit(&p->poison_lock, 0, memory_order_release);
        hb_ring(&inst->hb, hl);
    }
}

gcl_status_t gcl_wait(gcl_request_t req)
{
    if (!req)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_request_complete(req);
}

gcl_status_t gcl_test(gcl_request_t req, int *done)
{
    if (!req || !done)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_ctx_progress(req->comm->ctx);
    *done = req->finished;
    return req->finished ? retire(req) : GCL_OK;
}
