/*
 * The shm transport: IPU threads of different processes on one host. The sender copies the
 * message piece by piece into its own staging chunks in the host box and posts a slot per piece;
 * the receiver reduces (or copies) straight out of the chunk, then gives the chunk and the slot
 * back. With several chunks per IPU and several slots per pair, copying in and reducing out
 * overlap: the message is pipelined. The send completes once every piece is posted.
 * Declared in transport/transport.h (gcl_transport_shm).
 */
#include "transport/transport.h"

#include <string.h>

#include "base/fault.h"

/* Bytes per piece: whole elements that fit in a chunk. */
static uint64_t piece_bytes(const gcl_xfer_t *x, const gcl_hostbox_t *hb)
{
    uint64_t es = x->info->elem_size;
    return hb->chunk_bytes / es * es;
}

static int shm_can_connect(const gcl_fabric_t *f, int me, int peer)
{
    return f->job->ipu_hostlocal[peer] >= 0 && f->job->ipu_hostlocal[me] >= 0;
}

static gcl_status_t shm_start(gcl_xfer_t *x)
{
    x->slot = -1;
    return GCL_OK;
}

/* Posts piece x->piece; returns 1, 0 when no slot or chunk is free yet, or a status. */
static int post_piece(gcl_xfer_t *x, gcl_hostbox_t *hb, int me)
{
    uint64_t n = x->phantom ? x->bytes : x->bytes - x->pos;
    if (n > piece_bytes(x, hb) && !x->phantom)
        n = piece_bytes(x, hb);
    int i = gcl_hostbox_free_slot(hb, me, x->peer_hl);
    if (i < 0)
        return 0;
    uint32_t chunk = GCL_HOSTBOX_NO_CHUNK;
    if (n > 0 && !x->phantom) {
        chunk = gcl_hostbox_take_chunk(hb, me);
        if (chunk == GCL_HOSTBOX_NO_CHUNK)
            return 0;
    }
    if (gcl_fault_hit(GCL_FAULT_POST)) { /* GCL_FAULT_INJECT: as if the slot could not be had */
        if (chunk != GCL_HOSTBOX_NO_CHUNK)
            gcl_hostbox_give_chunk(hb, me, chunk);
        return gcl_err_set(x->err, GCL_ERR_TRANSPORT,
                           "shm: posting piece %u failed: injected (GCL_FAULT_INJECT)", x->piece);
    }
    if (chunk != GCL_HOSTBOX_NO_CHUNK) {
        const char *src = coll_buf_at(x->bufs, x->op->buf, x->op->off, x->info->elem_size);
        memcpy(gcl_hostbox_chunk(hb, me, chunk), src + x->pos, n);
    }
    gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, me, x->peer_hl, i);
    s->buf = chunk;
    s->key0 = x->key0;
    s->key1 = x->key1 | x->piece;
    s->offset = x->pos;
    s->bytes = n;
    s->total = x->bytes;
    s->ptr = 0;
    s->sig = *x->sig;
    s->sim_send = x->sim_send;
    s->sim_time = x->sim_arrival;
    atomic_store_explicit(&s->state, GCL_SLOT_FULL, memory_order_release);
    gcl_hostbox_notify(hb, x->peer_hl);
    x->pos += n;
    x->piece++;
    return 1;
}

static int shm_send(gcl_xfer_t *x)
{
    gcl_hostbox_t *hb = x->fab->hb;
    int me = x->me_hl, did = 0;
    while (!x->done) {
        int rc = post_piece(x, hb, me);
        if (rc < 0)
            return rc;
        if (!rc)
            break;
        did = 1;
        if (x->pos >= x->bytes)
            x->done = 1;
    }
    return did;
}

static int shm_recv(gcl_xfer_t *x)
{
    gcl_hostbox_t *hb = x->fab->hb;
    int me = x->me_hl, did = 0;
    while (!x->done) {
        int i = gcl_hostbox_claim_slot(hb, x->peer_hl, me, x->key0, x->key1 | x->piece);
        if (i < 0)
            break;
        gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, x->peer_hl, me, i);
        int rc = gcl_xfer_check(x, &s->sig, s->total);
        x->sim_send = s->sim_send;
        x->sim_arrival = s->sim_time;
        if (rc == 0 && (s->offset != x->pos || s->offset + s->bytes > x->bytes))
            rc = gcl_err_set(x->err, GCL_ERR_TRANSPORT, "shm: piece %u out of order", x->piece);
        size_t es = x->info->elem_size;
        if (rc == 0 && s->bytes > 0 && !x->phantom)
            coll_exec_incoming(x->op, x->bufs, gcl_hostbox_chunk(hb, x->peer_hl, s->buf),
                               s->offset / es, s->bytes / es, x->info);
        if (s->buf != GCL_HOSTBOX_NO_CHUNK)
            gcl_hostbox_give_chunk(hb, x->peer_hl, s->buf);
        x->pos += s->bytes;
        gcl_hostbox_release_slot(hb, x->peer_hl, me, i);
        if (rc != 0)
            return rc;
        x->piece++;
        did = 1;
        if (x->pos >= x->bytes)
            x->done = 1;
    }
    return did;
}

static int shm_progress(gcl_xfer_t *x)
{
    return x->is_send ? shm_send(x) : shm_recv(x);
}

static void shm_cancel(gcl_xfer_t *x)
{
    if (!x->is_send)
        return;
    /* Retract the pieces nobody has claimed, so their chunks come back to us. */
    gcl_hostbox_t *hb = x->fab->hb;
    int me = x->me_hl;
    for (int i = 0; i < hb->nslots; i++) {
        gcl_hostbox_slot_t *s = gcl_hostbox_slot(hb, me, x->peer_hl, i);
        if (s->key0 != x->key0 || (s->key1 >> 32) != (x->key1 >> 32))
            continue;
        uint32_t chunk = s->buf;
        if (gcl_hostbox_retract_slot(hb, me, x->peer_hl, i) && chunk != GCL_HOSTBOX_NO_CHUNK)
            gcl_hostbox_give_chunk(hb, me, chunk);
    }
}

const gcl_transport_t gcl_transport_shm = {
    .name = "shm",
    .can_connect = shm_can_connect,
    .start = shm_start,
    .progress = shm_progress,
    .cancel = shm_cancel,
    .polls = 0,
};
