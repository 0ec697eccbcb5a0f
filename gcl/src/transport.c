/* Choosing a transport per peer, and the receiver's check of what arrives. */
#include "transport.h"

#include <string.h>

#include "coll/group.h"

const gcl_transport_t *gcl_transport_for(struct gcl_ctx *ctx, int peer)
{
    struct gcl_instance *inst = ctx->inst;
    int same_instance = inst->ipu_instance[peer] == inst->instance_index;
    if (same_instance)
        return &gcl_transport_local;
    if (inst->ipu_hostlocal[peer] >= 0 && strcmp(inst->params.transport, "mpi") != 0)
        return &gcl_transport_shm;
    return &gcl_transport_mpi;
}

void gcl_sig_describe(const gcl_sig_t *s, char *buf, size_t len)
{
    char g[32];
    coll_group_t grp = {(coll_group_kind_t)s->gkind, s->gsize};
    coll_group_format(grp, g, sizeof g);
    if (s->coll == 0xff)
        snprintf(buf, len, "send/recv #%u of %llu x %s", s->seq, (unsigned long long)s->count,
                 coll_dtype_name((coll_dtype_t)s->dtype));
    else
        snprintf(buf, len, "%s #%u of %llu x %s, op %s, root %d, group %s (algorithm %08x)",
                 coll_collective_name((coll_collective_t)s->coll), s->seq,
                 (unsigned long long)s->count, coll_dtype_name((coll_dtype_t)s->dtype),
                 coll_redop_name((coll_redop_t)s->op), s->root, g, s->algo);
}

void gcl_mismatch_text(const struct gcl_instance *inst, int ipu_a, const gcl_sig_t *a, int ipu_b,
                       const gcl_sig_t *b, char *buf, size_t len)
{
    char sa[200], sb[200], wa[160], wb[160];
    gcl_sig_describe(a, sa, sizeof sa);
    gcl_sig_describe(b, sb, sizeof sb);
    gcl_describe_ipu(inst, ipu_a, wa, sizeof wa);
    gcl_describe_ipu(inst, ipu_b, wb, sizeof wb);
    snprintf(buf, len, "mismatched calls: %s called %s; %s called %s", wa, sa, wb, sb);
}

int gcl_xfer_check(gcl_xfer_t *x, const gcl_sig_t *theirs, uint64_t their_total)
{
    if (memcmp(theirs, x->sig, sizeof *theirs) == 0 && their_total == x->bytes)
        return 0;
    char text[600];
    if (memcmp(theirs, x->sig, sizeof *theirs) == 0) {
        char who[160], mine[200];
        gcl_describe_ipu(x->ctx->inst, x->peer_ipu, who, sizeof who);
        gcl_sig_describe(x->sig, mine, sizeof mine);
        snprintf(text, sizeof text,
                 "mismatched call %s: a message of %llu bytes from %s where "
                 "%llu were expected",
                 mine, (unsigned long long)their_total, who, (unsigned long long)x->bytes);
    } else {
        gcl_mismatch_text(x->ctx->inst, x->ctx->global_ipu, x->sig, x->peer_ipu, theirs, text,
                          sizeof text);
    }
    return gcl_ctx_fail(x->ctx, GCL_ERR_MISMATCH, "%s", text);
}
