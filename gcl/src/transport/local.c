/*
 * The local transport: two IPU threads of one process. The sender posts a pointer to its own
 * buffer in a slot; the receiver reduces (or copies) straight out of it and frees the slot, which
 * completes the send. Zero copies beyond the reduction itself. Declared in
 * transport/transport.h (gcl_transport_local).
 */
#include "transport/transport.h"

static int local_can_connect(const gcl_fabric_t *f, int me, int peer)
{
    return f->job->ipu_instance[me] == f->job->ipu_instance[peer];
}

static gcl_status_t local_start(gcl_xfer_t *x)
{
    x->slot = -1;
    return GCL_OK;
}

static int local_send(gcl_xfer_t *x)
{
    gcl_hostbox_t *hb = x->fab->hb;
    int me = x->me_hl;
    if (x->slot >= 0) {
        gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, me, x->peer_hl, x->slot);
        /* FULL or BUSY: not taken yet; REJECTED: the receiver's mismatch mark decides. */
        if (atomic_load_explicit(&s->state, memory_order_acquire) != GCL_SLOT_FREE)
            return 0;
        x->done = 1;
        return 1;
    }
    int i = gcl_hostbox_free_slot(hb, me, x->peer_hl);
    if (i < 0)
        return 0;
    gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, me, x->peer_hl, i);
    s->buf = GCL_HOSTBOX_NO_CHUNK;
    s->key0 = x->key0;
    s->key1 = x->key1;
    s->offset = 0;
    s->bytes = s->total = x->bytes;
    s->ptr = x->phantom ? 0
                        : (uint64_t)(uintptr_t)coll_buf_at(x->bufs, x->op->buf, x->op->off,
                                                           x->info->elem_size);
    s->sig = *x->sig;
    s->sim_send = x->sim_send;
    s->sim_time = x->sim_arrival;
    atomic_store_explicit(&s->state, GCL_SLOT_FULL, memory_order_release);
    gcl_hostbox_notify(hb, x->peer_hl);
    x->slot = i;
    return 1;
}

static int local_recv(gcl_xfer_t *x)
{
    gcl_hostbox_t *hb = x->fab->hb;
    int me = x->me_hl;
    int i = gcl_hostbox_claim_slot(hb, x->peer_hl, me, x->key0, x->key1);
    if (i < 0)
        return 0;
    gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, x->peer_hl, me, i);
    int rc = gcl_xfer_check(x, &s->sig, s->total);
    x->sim_send = s->sim_send;
    x->sim_arrival = s->sim_time;
    if (rc == 0 && !x->phantom && x->op->count > 0)
        coll_exec_incoming(x->op, x->bufs, (const void *)(uintptr_t)s->ptr, 0, x->op->count,
                           x->info);
    if (rc != 0) {
        /* The sender must not see its send taken: it fails with this receiver's mark. */
        gcl_hostbox_reject_slot(hb, x->peer_hl, me, i);
        return rc;
    }
    gcl_hostbox_release_slot(hb, x->peer_hl, me, i);
    x->pos = x->bytes;
    x->done = 1;
    return 1;
}

static int local_progress(gcl_xfer_t *x)
{
    return x->is_send ? local_send(x) : local_recv(x);
}

static void local_cancel(gcl_xfer_t *x)
{
    /* A posted pointer must not outlive the call: take it back before the buffer goes. */
    if (x->is_send && x->slot >= 0 && !x->done)
        gcl_hostbox_retract_slot(x->fab->hb, x->me_hl, x->peer_hl, x->slot);
}

const gcl_transport_t gcl_transport_local = {
    .name = "local",
    .can_connect = local_can_connect,
    .start = local_start,
    .progress = local_progress,
    .cancel = local_cancel,
    .polls = 0,
};
