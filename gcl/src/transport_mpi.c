/*
 * The mpi transport: IPUs in instances on different hosts (or anywhere, with GCL_TRANSPORT=mpi).
 * A message is a header (its keys, signature and size) followed by pieces of at most
 * GCL_MPI_CHUNK_BYTES, all with one tag, so MPI's non-overtaking order keeps them in sequence.
 * The receiver copies pieces straight into place, or receives them into two scratch pieces and
 * reduces one while the next arrives.
 *
 * Tags: 8 bits each of the destination's and the source's local IPU index, 8 bits of the
 * collective sequence number and 6 of the communicator key, so that concurrent collectives and
 * IPU threads do not take each other's messages.
 */
#include "transport.h"

#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct gcl_mpi_state {
    MPI_Comm comm;
    int serialize; /* MPI is not MPI_THREAD_MULTIPLE: one call at a time */
    pthread_mutex_t lock;
};

typedef struct {
    uint64_t key0, key1, total, sim_send, sim_time;
    gcl_sig_t sig;
} mpi_header_t;

enum { MAX_LOCAL_IPUS = 256, RECV_DEPTH = 2 };

typedef struct {
    mpi_header_t hdr;
    MPI_Request hreq;
    int header_done;
    MPI_Request *reqs; /* send: one per piece; receive: RECV_DEPTH in flight */
    uint32_t nreqs, npieces, posted, completed;
    char *scratch[RECV_DEPTH];
    uint64_t scratch_off[RECV_DEPTH], scratch_len[RECV_DEPTH];
} mpi_xfer_t;

static struct gcl_mpi_state *state(gcl_xfer_t *x)
{
    return x->ctx->inst->mpi;
}

static void lock(struct gcl_mpi_state *m)
{
    if (m->serialize)
        pthread_mutex_lock(&m->lock);
}

static void unlock(struct gcl_mpi_state *m)
{
    if (m->serialize)
        pthread_mutex_unlock(&m->lock);
}

static int tag_of(gcl_xfer_t *x)
{
    struct gcl_instance *inst = x->ctx->inst;
    int src = x->is_send ? x->ctx->global_ipu : x->peer_ipu;
    int dst = x->is_send ? x->peer_ipu : x->ctx->global_ipu;
    int src_local = src - inst->peers[inst->ipu_instance[src]].replica_offset * inst->ipr;
    int dst_local = dst - inst->peers[inst->ipu_instance[dst]].replica_offset * inst->ipr;
    uint32_t seq = (uint32_t)x->key0 & 0xff, comm = (uint32_t)(x->key0 >> 32) & 0x3f;
    return (int)((comm << 24) | (seq << 16) | ((uint32_t)dst_local << 8) | (uint32_t)src_local);
}

static int peer_rank(gcl_xfer_t *x)
{
    return x->ctx->inst->ipu_instance[x->peer_ipu];
}

static uint64_t piece_len(gcl_xfer_t *x, uint32_t piece)
{
    uint64_t chunk = (uint64_t)x->ctx->inst->params.mpi_chunk_bytes;
    chunk = chunk / x->info->elem_size * x->info->elem_size;
    uint64_t off = (uint64_t)piece * chunk;
    return x->bytes - off < chunk ? x->bytes - off : chunk;
}

static int npieces(gcl_xfer_t *x)
{
    if (x->phantom || x->bytes == 0)
        return 0;
    uint64_t chunk = (uint64_t)x->ctx->inst->params.mpi_chunk_bytes;
    chunk = chunk / x->info->elem_size * x->info->elem_size;
    return (int)((x->bytes + chunk - 1) / chunk);
}

static gcl_status_t mpi_start(gcl_xfer_t *x)
{
    struct gcl_mpi_state *m = state(x);
    mpi_xfer_t *t = calloc(1, sizeof *t);
    if (!t)
        return gcl_ctx_fail(x->ctx, GCL_ERR_NO_HOST_MEMORY, "mpi: out of host memory");
    x->priv = t;
    t->npieces = (uint32_t)npieces(x);
    t->nreqs = x->is_send ? t->npieces : RECV_DEPTH;
    t->reqs = calloc(t->nreqs ? t->nreqs : 1, sizeof *t->reqs);
    if (!t->reqs)
        return gcl_ctx_fail(x->ctx, GCL_ERR_NO_HOST_MEMORY, "mpi: out of host memory");
    for (uint32_t i = 0; i < t->nreqs; i++)
        t->reqs[i] = MPI_REQUEST_NULL;
    int tag = tag_of(x), rc = MPI_SUCCESS;
    lock(m);
    if (x->is_send) {
        t->hdr = (mpi_header_t){x->key0, x->key1, x->bytes, x->sim_send, x->sim_arrival, *x->sig};
        rc = MPI_Isend(&t->hdr, sizeof t->hdr, MPI_BYTE, peer_rank(x), tag, m->comm, &t->hreq);
        const char *src = coll_buf_at(x->bufs, x->op->buf, x->op->off, x->info->elem_size);
        for (uint32_t p = 0; rc == MPI_SUCCESS && p < t->npieces; p++) {
            uint64_t off = (uint64_t)p * piece_len(x, 0);
            rc = MPI_Isend(src + off, (int)piece_len(x, p), MPI_BYTE, peer_rank(x), tag, m->comm,
                           &t->reqs[p]);
        }
        t->posted = t->npieces;
    } else {
        rc = MPI_Irecv(&t->hdr, sizeof t->hdr, MPI_BYTE, peer_rank(x), tag, m->comm, &t->hreq);
    }
    unlock(m);
    if (rc != MPI_SUCCESS)
        return gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: posting a message to instance %d failed",
                            peer_rank(x));
    return GCL_OK;
}

/* Tests one request; 1 when it completed, 0 when not yet, -1 on error. */
static int test_req(struct gcl_mpi_state *m, MPI_Request *r)
{
    int flag = 0;
    if (*r == MPI_REQUEST_NULL)
        return 1;
    lock(m);
    int rc = MPI_Test(r, &flag, MPI_STATUS_IGNORE);
    unlock(m);
    return rc != MPI_SUCCESS ? -1 : flag;
}

static int mpi_send_progress(gcl_xfer_t *x, mpi_xfer_t *t)
{
    struct gcl_mpi_state *m = state(x);
    int did = 0;
    if (!t->header_done) {
        int f = test_req(m, &t->hreq);
        if (f < 0)
            return gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: sending to instance %d failed",
                                peer_rank(x));
        t->header_done = f;
        did |= f;
    }
    while (t->completed < t->npieces) {
        int f = test_req(m, &t->reqs[t->completed]);
        if (f < 0)
            return gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: sending to instance %d failed",
                                peer_rank(x));
        if (!f)
            break;
        t->completed++;
        did = 1;
    }
    if (t->header_done && t->completed == t->npieces)
        x->done = 1;
    return did;
}

/* Posts the receive of piece P into its place (a copy) or into a scratch piece (a reduction). */
static int post_recv_piece(gcl_xfer_t *x, mpi_xfer_t *t, uint32_t p)
{
    struct gcl_mpi_state *m = state(x);
    uint32_t slot = p % RECV_DEPTH;
    uint64_t off = (uint64_t)p * piece_len(x, 0), len = piece_len(x, p);
    void *dst;
    if (x->op->kind == COLL_OP_RECV) {
        dst = (char *)coll_buf_at(x->bufs, x->op->buf, x->op->off, x->info->elem_size) + off;
    } else {
        if (!t->scratch[slot] && !(t->scratch[slot] = malloc(piece_len(x, 0))))
            return gcl_ctx_fail(x->ctx, GCL_ERR_NO_HOST_MEMORY, "mpi: out of host memory");
        dst = t->scratch[slot];
    }
    t->scratch_off[slot] = off;
    t->scratch_len[slot] = len;
    lock(m);
    int rc = MPI_Irecv(dst, (int)len, MPI_BYTE, peer_rank(x), tag_of(x), m->comm, &t->reqs[slot]);
    unlock(m);
    if (rc != MPI_SUCCESS)
        return gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: receiving from instance %d failed",
                            peer_rank(x));
    t->posted++;
    return 0;
}

static int mpi_recv_header(gcl_xfer_t *x, mpi_xfer_t *t)
{
    int f = test_req(state(x), &t->hreq);
    if (f <= 0)
        return f < 0 ? gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: receiving from instance %d failed",
                                    peer_rank(x))
                     : 0;
    t->header_done = 1;
    int rc = gcl_xfer_check(x, &t->hdr.sig, t->hdr.total);
    x->sim_send = t->hdr.sim_send;
    x->sim_arrival = t->hdr.sim_time;
    if (rc == 0 && (t->hdr.key0 != x->key0 || t->hdr.key1 != x->key1))
        rc = gcl_ctx_fail(x->ctx, GCL_ERR_MISMATCH,
                          "mpi: a message from instance %d belongs to another collective call",
                          peer_rank(x));
    for (uint32_t p = 0; rc == 0 && p < RECV_DEPTH && p < t->npieces; p++)
        rc = post_recv_piece(x, t, p);
    return rc ? rc : 1;
}

static int mpi_recv_progress(gcl_xfer_t *x, mpi_xfer_t *t)
{
    int did = 0;
    if (!t->header_done) {
        int rc = mpi_recv_header(x, t);
        if (rc <= 0)
            return rc;
        did = 1;
    }
    while (t->completed < t->npieces) {
        uint32_t slot = t->completed % RECV_DEPTH;
        int f = test_req(state(x), &t->reqs[slot]);
        if (f < 0)
            return gcl_ctx_fail(x->ctx, GCL_ERR_MPI, "mpi: receiving from instance %d failed",
                                peer_rank(x));
        if (!f)
            break;
        size_t es = x->info->elem_size;
        if (x->op->kind == COLL_OP_RECV_REDUCE)
            coll_exec_incoming(x->op, x->bufs, t->scratch[slot], t->scratch_off[slot] / es,
                               t->scratch_len[slot] / es, x->info);
        t->completed++;
        did = 1;
        if (t->posted < t->npieces) {
            int rc = post_recv_piece(x, t, t->posted);
            if (rc)
                return rc;
        }
    }
    if (t->completed == t->npieces) {
        x->pos = x->bytes;
        x->done = 1;
    }
    return did;
}

static int mpi_progress(gcl_xfer_t *x)
{
    mpi_xfer_t *t = x->priv;
    int rc = x->is_send ? mpi_send_progress(x, t) : mpi_recv_progress(x, t);
    if (x->done) {
        for (int i = 0; i < RECV_DEPTH; i++)
            free(t->scratch[i]);
        free(t->reqs);
        free(t);
        x->priv = NULL;
    }
    return rc;
}

static void mpi_cancel(gcl_xfer_t *x)
{
    mpi_xfer_t *t = x->priv;
    if (!t)
        return;
    /* Outstanding requests are cancelled and completed, so MPI no longer touches our memory. */
    struct gcl_mpi_state *m = state(x);
    lock(m);
    if (t->hreq != MPI_REQUEST_NULL) {
        MPI_Cancel(&t->hreq);
        MPI_Wait(&t->hreq, MPI_STATUS_IGNORE);
    }
    for (uint32_t i = 0; i < t->nreqs; i++) {
        if (t->reqs[i] != MPI_REQUEST_NULL) {
            MPI_Cancel(&t->reqs[i]);
            MPI_Wait(&t->reqs[i], MPI_STATUS_IGNORE);
        }
    }
    unlock(m);
    for (int i = 0; i < RECV_DEPTH; i++)
        free(t->scratch[i]);
    free(t->reqs);
    free(t);
    x->priv = NULL;
}

const gcl_transport_t gcl_transport_mpi = {
    .name = "mpi",
    .start = mpi_start,
    .progress = mpi_progress,
    .cancel = mpi_cancel,
    .polls = 1,
};

gcl_status_t gcl_mpi_transport_init(struct gcl_instance *inst, char *err, size_t len)
{
    int multiple = 0;
    MPI_Comm *comm = gcl_boot_mpi_comm(inst->boot, &multiple);
    if (!comm) {
        snprintf(err, len, "the mpi transport needs the MPI bootstrap (a poprun job)");
        return GCL_ERR_NOT_SUPPORTED;
    }
    int max_local = 0;
    for (int i = 0; i < inst->num_instances; i++)
        if (inst->peers[i].num_local_replicas * inst->ipr > max_local)
            max_local = inst->peers[i].num_local_replicas * inst->ipr;
    if (max_local > MAX_LOCAL_IPUS) {
        snprintf(err, len, "the mpi transport carries at most %d IPUs per instance, not %d",
                 MAX_LOCAL_IPUS, max_local);
        return GCL_ERR_NOT_SUPPORTED;
    }
    int *tag_ub = NULL, found = 0;
    MPI_Comm_get_attr(*comm, MPI_TAG_UB, &tag_ub, &found);
    if (!found || *tag_ub < (1 << 30) - 1) {
        snprintf(err, len, "this MPI's tags stop at %d; the mpi transport needs 2^30",
                 found ? *tag_ub : 0);
        return GCL_ERR_NOT_SUPPORTED;
    }
    struct gcl_mpi_state *m = calloc(1, sizeof *m);
    if (!m)
        return GCL_ERR_NO_HOST_MEMORY;
    m->comm = *comm;
    m->serialize = !multiple;
    pthread_mutex_init(&m->lock, NULL);
    if (m->serialize)
        GCL_INFO(GCL_SUB_MPI, "MPI is not MPI_THREAD_MULTIPLE: serialising MPI calls");
    inst->mpi = m;
    return GCL_OK;
}

void gcl_mpi_transport_fini(struct gcl_instance *inst)
{
    if (!inst->mpi)
        return;
    pthread_mutex_destroy(&inst->mpi->lock);
    free(inst->mpi);
    inst->mpi = NULL;
}
