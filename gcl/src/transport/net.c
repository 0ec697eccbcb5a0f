/*
 * The transports between hosts: tcp, ofi and mpi, one protocol over any network backend
 * (net/backends.h). Declared in transport/transport.h (gcl_transport_tcp, _ofi, _mpi).
 * A message is a header (its keys, signature, size and simulated times), then pieces of at most
 * the backend's chunk size. The receiver checks the header, then copies pieces straight into
 * place, or receives them into scratch pieces (kept between transfers) and reduces one while
 * the next arrives. With exact tags (ofi) the first pieces' receives are posted with the
 * header's, so that the pieces find them waiting; they are used only once the header passed.
 * A message of at most NET_INLINE_BYTES travels inside its header's network message instead:
 * one message, not two, for the small calls whose time is the network's latency (both sides
 * decide it alike, from the transfer's size, which the header's check then confirms).
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "transport/net/backends.h"
#include "transport/transport.h"
#include "transport/wire.h"

typedef gcl_wire_header_t net_header_t;

enum { RECV_DEPTH = 8 };

/* 64 KiB, not 4: on 2 namespace hosts x 1, 16 KiB all_reduce took 0.63x the time, 64 KiB 0.84x.
 * And the header's receive is posted with room for it: with every posted receive at most
 * 16 KiB (ofi_rxm's buffer size), 4 instances on 2 cores took 4.0 ms for an 8 B all_reduce
 * across hosts, 0.3-0.5 ms with a larger one (libgcl.md; why is not established). */
#define NET_INLINE_BYTES 65536

/* What the header's network message carries: the header, then the data of an inline message. */
typedef struct {
    net_header_t hdr;
    char data[NET_INLINE_BYTES];
} net_msg_t;

typedef struct {
    gcl_net_t *net;
    void *hreq;
    int header_posted, header_done;
    void **reqs; /* send: one per piece; receive: RECV_DEPTH in flight */
    uint32_t nreqs, npieces, posted, completed;
    char *scratch[RECV_DEPTH];
    uint64_t scratch_off[RECV_DEPTH], scratch_len[RECV_DEPTH];
    int in_scratch[RECV_DEPTH]; /* the piece in that slot went to its scratch piece */
    int failed;                 /* the status it failed with (its handles are gone), or 0 */
    net_msg_t m;                /* last: its inline data is not zeroed (net_start) */
} net_xfer_t;

static gcl_net_t *net_of(const gcl_xfer_t *x)
{
    return x->tp == &gcl_transport_tcp   ? x->fab->tcp
           : x->tp == &gcl_transport_ofi ? x->fab->ofi
                                         : x->fab->mpi;
}

static int peer_instance(const gcl_xfer_t *x)
{
    return x->fab->job->ipu_instance[x->peer_ipu];
}

static gcl_net_tag_t tag_of(const gcl_xfer_t *x, uint32_t piece)
{
    const gcl_job_t *j = x->fab->job;
    int me = x->me_ipu;
    gcl_net_tag_t t = {(uint32_t)(x->key0 >> 32),
                       (uint32_t)x->key0,
                       (uint32_t)(x->key1 >> 32),
                       piece,
                       gcl_job_local_index(j, x->is_send ? me : x->peer_ipu),
                       gcl_job_local_index(j, x->is_send ? x->peer_ipu : me)};
    return t;
}

static uint64_t chunk(const gcl_xfer_t *x)
{
    size_t c = net_of(x)->chunk_bytes;
    return c / x->info->elem_size * x->info->elem_size;
}

static uint64_t piece_len(const gcl_xfer_t *x, uint32_t p)
{
    uint64_t off = (uint64_t)p * chunk(x);
    return x->bytes - off < chunk(x) ? x->bytes - off : chunk(x);
}

/* Bytes of data X carries in its header's message: all of it when small, else none. */
static uint64_t inline_bytes(const gcl_xfer_t *x)
{
    return !x->phantom && x->bytes > 0 && x->bytes <= NET_INLINE_BYTES ? x->bytes : 0;
}

void gcl_net_pool_init(gcl_net_t *n)
{
    pthread_mutex_init(&n->pool.lock, NULL);
    n->pool.n = 0;
}

void gcl_net_pool_fini(gcl_net_t *n)
{
    while (n->pool.n > 0)
        free(n->pool.free[--n->pool.n]);
    pthread_mutex_destroy(&n->pool.lock);
}

/* A scratch piece of the backend's chunk size: a kept one, or a new one. */
static char *scratch_get(gcl_net_t *n)
{
    char *b = NULL;
    pthread_mutex_lock(&n->pool.lock);
    if (n->pool.n > 0)
        b = n->pool.free[--n->pool.n];
    pthread_mutex_unlock(&n->pool.lock);
    return b ? b : gcl_malloc(n->chunk_bytes);
}

static void scratch_put(gcl_net_t *n, char *b)
{
    if (!b)
        return;
    pthread_mutex_lock(&n->pool.lock);
    if (n->pool.n < GCL_NET_POOL) {
        n->pool.free[n->pool.n++] = b;
        b = NULL;
    }
    pthread_mutex_unlock(&n->pool.lock);
    free(b);
}

/* Frees a transfer's state. Its scratch pieces go back to the pool when KEEP (a finished
 * transfer: the network is done with them); a cancelled one's are freed, never reused. */
static void free_state(net_xfer_t *t, int keep)
{
    for (int i = 0; i < RECV_DEPTH; i++)
        if (keep)
            scratch_put(t->net, t->scratch[i]);
        else
            free(t->scratch[i]);
    free(t->reqs);
    free(t);
}

/* The backend could not take a transfer with the peer (GCL_ERR_TRANSPORT). */
static gcl_status_t fail(gcl_xfer_t *x, gcl_status_t rc)
{
    char who[160];
    gcl_job_describe_ipu(x->fab->job, x->peer_ipu, who, sizeof who);
    return gcl_err_set(x->err, rc, "%s (with %s)", net_of(x)->error, who);
}

/* A posted transfer failed: the connection to the peer's instance is gone (the network
 * reports a closed or reset connection at once, where the heartbeats would take
 * GCL_PEER_TIMEOUT_S), so the peer is. */
static gcl_status_t lost(gcl_xfer_t *x)
{
    char who[160];
    gcl_job_describe_ipu(x->fab->job, x->peer_ipu, who, sizeof who);
    return gcl_err_set(x->err, GCL_ERR_PEER_FAILED,
                       "%s is gone: the connection to its instance failed (%s): its process or "
                       "its host stopped",
                       who, net_of(x)->error);
}

static gcl_status_t net_start(gcl_xfer_t *x)
{
    gcl_net_t *net = net_of(x);
    net_xfer_t *t = gcl_malloc(sizeof *t);
    if (!t)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", net->name);
    memset(t, 0, offsetof(net_xfer_t, m.data)); /* not the inline data: 64 KiB a transfer */
    x->priv = t;
    t->net = net;
    t->npieces = x->phantom || x->bytes == 0 || inline_bytes(x)
                     ? 0
                     : (uint32_t)((x->bytes + chunk(x) - 1) / chunk(x));
    uint32_t nreqs = x->is_send ? t->npieces : RECV_DEPTH;
    if (!(t->reqs = gcl_calloc(nreqs ? nreqs : 1, sizeof *t->reqs)))
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", net->name);
    t->nreqs = nreqs; /* only now: a cancel walks the requests */
    if (!x->is_send)
        return GCL_OK; /* the header's receive is posted by progress, in order */
    t->m.hdr =
        (net_header_t){x->key0, x->key1, x->bytes, x->sim_send, x->sim_arrival, {0}, *x->sig};
    memcpy(t->m.hdr.token, x->fab->token, sizeof t->m.hdr.token);
    return GCL_OK; /* the header and pieces are posted by progress, as the network takes them */
}

/* Posts what the network will take now: the header, then pieces in order. Returns 1 if it
 * posted anything, 0 if the network is busy, or a status. */
static int post_sends(gcl_xfer_t *x, net_xfer_t *t)
{
    int did = 0, rc;
    gcl_net_tag_t tag = tag_of(x, 0);
    const char *src = coll_buf_at(x->bufs, x->op->buf, x->op->off, x->info->elem_size);
    if (!t->header_posted) {
        uint64_t inl = inline_bytes(x);
        if (inl)
            memcpy(t->m.data, src, inl);
        rc = t->net->isend(t->net, peer_instance(x), &t->m, sizeof t->m.hdr + inl, &tag, &t->hreq);
        if (rc)
            return rc < 0 ? fail(x, GCL_ERR_TRANSPORT) : 0;
        t->header_posted = did = 1;
    }
    while (t->posted < t->npieces) {
        uint32_t p = t->posted;
        tag = tag_of(x, p + 1);
        rc = t->net->isend(t->net, peer_instance(x), src + (uint64_t)p * chunk(x), piece_len(x, p),
                           &tag, &t->reqs[p]);
        if (rc)
            return rc < 0 ? fail(x, GCL_ERR_TRANSPORT) : did;
        t->posted++;
        did = 1;
    }
    return did;
}

static int net_send_progress(gcl_xfer_t *x, net_xfer_t *t)
{
    int did = post_sends(x, t), f;
    if (did < 0)
        return did;
    if (!t->header_posted)
        return 0;
    if (!t->header_done) {
        if ((f = t->net->test(t->net, t->hreq)) != 0)
            t->hreq = NULL; /* completed or failed: the handle is gone either way */
        if (f < 0)
            return lost(x);
        t->header_done = f;
        did |= f;
    }
    while (t->completed < t->posted) {
        if ((f = t->net->test(t->net, t->reqs[t->completed])) != 0)
            t->reqs[t->completed] = NULL;
        if (f < 0)
            return lost(x);
        if (!f)
            break;
        t->completed++;
        did = 1;
    }
    if (t->header_done && t->completed == t->npieces)
        x->done = 1;
    return did;
}

/* Whether piece receives may go straight into place before the header is checked: not when
 * that place is the caller's input too (an in-place call), which a peer's mismatched message
 * must not overwrite. */
static int may_land_early(const gcl_xfer_t *x)
{
    return x->op->buf != COLL_BUF_OUT || x->bufs[COLL_BUF_OUT] != x->bufs[COLL_BUF_IN];
}

/* Posts the receive of piece P into its place (a copy) or into a scratch piece (a reduction,
 * or a copy posted before the header's check that may not land in place yet). */
static int post_piece(gcl_xfer_t *x, net_xfer_t *t, uint32_t p)
{
    uint32_t slot = p % RECV_DEPTH;
    uint64_t off = (uint64_t)p * chunk(x), len = piece_len(x, p);
    void *dst;
    t->in_scratch[slot] = x->op->kind != COLL_OP_RECV || (!t->header_done && !may_land_early(x));
    if (!t->in_scratch[slot]) {
        dst = (char *)coll_buf_at(x->bufs, x->op->buf, x->op->off, x->info->elem_size) + off;
    } else {
        if (!t->scratch[slot] && !(t->scratch[slot] = scratch_get(t->net)))
            return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory",
                               t->net->name);
        dst = t->scratch[slot];
    }
    t->scratch_off[slot] = off;
    t->scratch_len[slot] = len;
    gcl_net_tag_t tag = tag_of(x, p + 1);
    int rc = t->net->irecv(t->net, peer_instance(x), dst, len, &tag, &t->reqs[slot]);
    if (rc < 0)
        return fail(x, GCL_ERR_TRANSPORT);
    if (rc == 0)
        t->posted++;
    return 0; /* posted, or the network is busy: tried again on the next progress */
}

/* Keeps up to RECV_DEPTH pieces posted ahead of the ones completed. */
static int post_receives(gcl_xfer_t *x, net_xfer_t *t)
{
    while (t->posted < t->npieces && t->posted < t->completed + RECV_DEPTH) {
        uint32_t before = t->posted;
        int rc = post_piece(x, t, t->posted);
        if (rc)
            return rc;
        if (t->posted == before)
            break; /* busy */
    }
    return 0;
}

/* Whether receive X has posted every receive it will make. */
static int all_posted(const gcl_xfer_t *x)
{
    const net_xfer_t *t = x->priv;
    return x->done || (t && t->header_done && t->posted == t->npieces);
}

/* Delivers the data that came inside the header's message: copied into place, or reduced. */
static void take_inline(gcl_xfer_t *x, net_xfer_t *t)
{
    size_t es = x->info->elem_size;
    if (x->op->kind == COLL_OP_RECV)
        memcpy(coll_buf_at(x->bufs, x->op->buf, x->op->off, es), t->m.data, x->bytes);
    else
        coll_exec_incoming(x->op, x->bufs, t->m.data, 0, x->bytes / es, x->info);
}

static int recv_header(gcl_xfer_t *x, net_xfer_t *t)
{
    if (!t->header_posted) {
        /* Without exact tags, a receive posted early would take an earlier message's piece. */
        if (!t->net->exact_tags && x->after && !all_posted(x->after))
            return 0;
        gcl_net_tag_t tag = tag_of(x, 0);
        /* Room for inline data whatever this side expects: a peer that sent more is then
         * refused by the header's check (a mismatch), not by the network (a lost peer). */
        int rc = t->net->irecv(t->net, peer_instance(x), &t->m, sizeof t->m, &tag, &t->hreq);
        if (rc)
            return rc < 0 ? fail(x, GCL_ERR_TRANSPORT) : 0;
        t->header_posted = 1;
        /* With exact tags the pieces' receives go with the header's, so that the pieces,
         * sent right behind it, find them posted: the network then receives them straight
         * into place (libfabric's tcp under ofi_rxm reads a matched message into the posted
         * buffer, an unexpected one into memory it allocates, faults in and copies from).
         * They are looked at only once the header has passed its check. */
        if (t->net->exact_tags && (rc = post_receives(x, t)) != 0)
            return rc;
    }
    int f = t->net->test(t->net, t->hreq);
    if (f != 0)
        t->hreq = NULL;
    if (f <= 0)
        return f < 0 ? lost(x) : 0;
    t->header_done = 1;
    char why[160];
    net_header_t h;
    if (gcl_wire_decode(&t->m.hdr, sizeof t->m.hdr, x->fab->token, &h, why, sizeof why) != 0)
        return gcl_err_set(x->err, GCL_ERR_TRANSPORT,
                           "%s: refused %s, claimed to come from instance %d", t->net->name, why,
                           peer_instance(x));
    int rc = gcl_xfer_check(x, &t->m.hdr.sig, t->m.hdr.total);
    if (rc == 0 && (t->m.hdr.key0 != x->key0 || t->m.hdr.key1 != x->key1))
        rc = gcl_err_set(x->err, GCL_ERR_MISMATCH,
                         "%s: a message from instance %d belongs to another call", t->net->name,
                         peer_instance(x));
    x->sim_send = t->m.hdr.sim_send;
    x->sim_arrival = t->m.hdr.sim_time;
    if (rc == 0 && inline_bytes(x))
        take_inline(x, t);
    if (rc == 0)
        rc = post_receives(x, t);
    return rc ? rc : 1;
}

static int net_recv_progress(gcl_xfer_t *x, net_xfer_t *t)
{
    int did = 0;
    if (!t->header_done) {
        int rc = recv_header(x, t);
        if (rc <= 0)
            return rc;
        did = 1;
    }
    while (t->completed < t->posted) {
        uint32_t slot = t->completed % RECV_DEPTH;
        int f = t->net->test(t->net, t->reqs[slot]);
        if (f != 0)
            t->reqs[slot] = NULL;
        if (f < 0)
            return lost(x);
        if (!f)
            break;
        size_t es = x->info->elem_size;
        if (x->op->kind == COLL_OP_RECV_REDUCE)
            coll_exec_incoming(x->op, x->bufs, t->scratch[slot], t->scratch_off[slot] / es,
                               t->scratch_len[slot] / es, x->info);
        else if (t->in_scratch[slot])
            memcpy((char *)coll_buf_at(x->bufs, x->op->buf, x->op->off, es) + t->scratch_off[slot],
                   t->scratch[slot], t->scratch_len[slot]);
        t->completed++;
        did = 1;
    }
    int rc = post_receives(x, t);
    if (rc)
        return rc;
    if (t->completed == t->npieces) {
        x->pos = x->bytes;
        x->done = 1;
    }
    return did;
}

/* A transfer that failed stays failed: the handle of the request that failed is gone (NULL),
 * and a second look (a liveness check's, then the request's own progress) must not hand it to
 * the network again. That crashed an instance of an elastic chaos run: tcp_test(NULL). */
static int net_progress(gcl_xfer_t *x)
{
    net_xfer_t *t = x->priv;
    if (t->failed)
        return t->failed;
    int rc = x->is_send ? net_send_progress(x, t) : net_recv_progress(x, t);
    if (rc < 0)
        t->failed = rc;
    if (x->done) {
        free_state(t, 1);
        x->priv = NULL;
    }
    return rc;
}

static void net_cancel(gcl_xfer_t *x)
{
    net_xfer_t *t = x->priv;
    if (!t)
        return;
    /* Outstanding posts are cancelled, so the network no longer touches our memory. */
    if (t->hreq)
        t->net->cancel(t->net, t->hreq);
    for (uint32_t i = 0; i < t->nreqs; i++)
        if (t->reqs[i])
            t->net->cancel(t->net, t->reqs[i]);
    free_state(t, 0);
    x->priv = NULL;
}

static int mpi_can_connect(const gcl_fabric_t *f, int me, int peer)
{
    return f->mpi != NULL && f->job->ipu_instance[me] != f->job->ipu_instance[peer];
}

static int ofi_can_connect(const gcl_fabric_t *f, int me, int peer)
{
    return f->ofi != NULL && f->job->ipu_instance[me] != f->job->ipu_instance[peer];
}

static int tcp_can_connect(const gcl_fabric_t *f, int me, int peer)
{
    return f->tcp != NULL && f->job->ipu_instance[me] != f->job->ipu_instance[peer];
}

const gcl_transport_t gcl_transport_mpi = {
    .name = "mpi",
    .can_connect = mpi_can_connect,
    .start = net_start,
    .progress = net_progress,
    .cancel = net_cancel,
    .polls = 1,
};

const gcl_transport_t gcl_transport_ofi = {
    .name = "ofi",
    .can_connect = ofi_can_connect,
    .start = net_start,
    .progress = net_progress,
    .cancel = net_cancel,
    .polls = 1,
};

const gcl_transport_t gcl_transport_tcp = {
    .name = "tcp",
    .can_connect = tcp_can_connect,
    .start = net_start,
    .progress = net_progress,
    .cancel = net_cancel,
    .polls = 1,
};
