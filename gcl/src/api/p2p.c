/*
 * Point-to-point between the IPUs of one replica (pipeline stages): a one-op schedule on the
 * IPU's replica communicator, so it rides the same transports, checks and progress engine as
 * the collectives. Messages of one (pair, tag) are numbered in order on both sides; the number
 * is the message's sequence, so tags are independent of each other. Declared in gcl/gcl.h.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"
#include "api/comm.h"
#include "engine/engines.h"
#include "engine/request.h"

#define P2P_MAX_TAG (1 << 20)

struct gcl_p2p_count {
    int peer, tag, is_send;
    uint32_t n;
};

static int next_number(struct gcl_ctx *ctx, int peer, int tag, int is_send, uint32_t *out)
{
    for (int i = 0; i < ctx->np2p_counts; i++) {
        struct gcl_p2p_count *c = &ctx->p2p_counts[i];
        if (c->peer == peer && c->tag == tag && c->is_send == is_send) {
            *out = c->n++;
            return 0;
        }
    }
    if (ctx->np2p_counts == ctx->p2p_cap) {
        int cap = ctx->p2p_cap ? ctx->p2p_cap * 2 : 8;
        void *p = gcl_realloc(ctx->p2p_counts, (size_t)cap * sizeof *ctx->p2p_counts);
        if (!p)
            return -1;
        ctx->p2p_counts = p;
        ctx->p2p_cap = cap;
    }
    ctx->p2p_counts[ctx->np2p_counts++] = (struct gcl_p2p_count){peer, tag, is_send, 1};
    *out = 0;
    return 0;
}

static gcl_status_t refuse(struct gcl_ctx *ctx, const char *what, const char *why, int value)
{
    gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT, "%s: %s (%d)", what, why, value);
    GCL_WARN(GCL_SUB_COLL, "%s", gcl_err_text(&ctx->err));
    return GCL_ERR_INVALID_ARGUMENT;
}

/* The one-op schedule of a send or receive of COUNT elements with PEER. */
static void one_op(coll_schedule_t *s, int me, int ipus_per_replica, int peer, size_t count,
                   int is_send)
{
    coll_schedule_init(s);
    s->algo = "p2p";
    s->rank = me;
    s->nranks = ipus_per_replica;
    s->in_count = s->out_count = count;
    coll_step(s);
    if (count == 0 && is_send)
        coll_send_token(s, peer);
    else if (count == 0)
        coll_recv_token(s, peer);
    else if (is_send)
        coll_send(s, peer, COLL_BUF_IN, 0, count);
    else
        coll_recv(s, peer, COLL_BUF_OUT, 0, count);
}

static gcl_status_t p2p(struct gcl_ctx *ctx, int peer, const void *buf, size_t count,
                        gcl_dtype_t type, int tag, int is_send, gcl_request_t *req)
{
    const char *what = is_send ? "send" : "recv";
    if (!ctx)
        return GCL_ERR_INVALID_ARGUMENT;
    int ipus_per_replica = ctx->ipu.job->ipus_per_replica;
    size_t es = gcl_dtype_size(type);
    if (peer < 0 || peer >= ipus_per_replica || peer == ctx->ipu_pos)
        return refuse(ctx, what, "the peer must be another IPU of this replica", peer);
    if (tag < 0 || tag >= P2P_MAX_TAG)
        return refuse(ctx, what, "the tag must be in 0 .. 2^20-1", tag);
    if (es == 0)
        return refuse(ctx, what, "unknown element type", (int)type);
    if (count > (SIZE_MAX / 4) / es) {
        gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT,
                     "%s: %zu elements is too many: at most %zu of %zu bytes (2^62 bytes, "
                     "docs/libgcl.md#limits)",
                     what, count, (SIZE_MAX / 4) / es, es);
        GCL_WARN(GCL_SUB_COLL, "%s", gcl_err_text(&ctx->err));
        return GCL_ERR_INVALID_ARGUMENT;
    }
    if (count > 0 && !buf && !ctx->ipu.phantom)
        return refuse(ctx, what, "a NULL buffer for elements", count > INT32_MAX ? -1 : (int)count);
    GCL_CHECK(gcl_ipu_settle_for(&ctx->ipu, &ctx->err));
    struct gcl_comm *comm = gcl_ctx_p2p_comm(ctx);
    struct gcl_request *r = comm ? gcl_calloc(1, sizeof *r) : NULL;
    uint32_t number;
    if (!r || next_number(ctx, peer, tag, is_send, &number)) {
        free(r);
        return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", what);
    }
    r->peers = &comm->peers;
    one_op(&r->own, ctx->ipu_pos, ipus_per_replica, peer, count, is_send);
    gcl_sig_t sig;
    memset(&sig, 0, sizeof sig);
    sig.seq = number;
    sig.coll = GCL_SIG_P2P;
    sig.dtype = (uint8_t)type;
    sig.root = tag;
    sig.count = count;
    /* The key names the pair's tag, so each tag keeps its own order. */
    int parts[2] = {(int)comm->peers.key, tag};
    uint64_t key = ((uint64_t)gcl_hash_ints(parts, 2) << 32) | number;
    gcl_status_t rc = coll_schedule_status(&r->own) ? GCL_ERR_NO_HOST_MEMORY : GCL_OK;
    if (rc == GCL_OK)
        rc =
            gcl_exec_start(&r->x, &gcl_engine_messages, &comm->peers, &r->own, is_send ? buf : NULL,
                           is_send ? NULL : (void *)buf, &sig, key, what, &r->err, 0);
    if (rc != GCL_OK) {
        if (r->err.status != GCL_OK)
            gcl_err_move(&ctx->err, &r->err);
        else
            gcl_ctx_fail(ctx, rc, "%s: out of host memory", what);
        ctx->ipu.last_failure = &ctx->err;
        gcl_request_discard(r);
        return rc;
    }
    gcl_request_launch(r);
    if (!req)
        return gcl_request_complete(r);
    *req = r;
    return GCL_OK;
}

gcl_status_t gcl_send(gcl_ctx_t ctx, int dst, const void *buf, size_t count, gcl_dtype_t type,
                      int tag)
{
    return p2p(ctx, dst, buf, count, type, tag, 1, NULL);
}

gcl_status_t gcl_recv(gcl_ctx_t ctx, int src, void *buf, size_t count, gcl_dtype_t type, int tag)
{
    return p2p(ctx, src, buf, count, type, tag, 0, NULL);
}

gcl_status_t gcl_send_start(gcl_ctx_t ctx, int dst, const void *buf, size_t count, gcl_dtype_t type,
                            int tag, gcl_request_t *req)
{
    return req ? p2p(ctx, dst, buf, count, type, tag, 1, req) : GCL_ERR_INVALID_ARGUMENT;
}

gcl_status_t gcl_recv_start(gcl_ctx_t ctx, int src, void *buf, size_t count, gcl_dtype_t type,
                            int tag, gcl_request_t *req)
{
    return req ? p2p(ctx, src, buf, count, type, tag, 0, req) : GCL_ERR_INVALID_ARGUMENT;
}

const char *gcl_ctx_last_error(gcl_ctx_t ctx)
{
    return ctx ? gcl_err_text(&ctx->err) : "no context";
}
