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

static void describe_sig(const gcl_sig_t *s, char *buf, size_t len)
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

int gcl_xfer_check(gcl_xfer_t *x, const gcl_sig_t *theirs, uint64_t their_total)
{
    if (memcmp(theirs, x->sig, sizeof *theirs) == 0 && their_total == x->bytes)
        return 0;
    char mine[200], other[200], who[160];
    describe_sig(x->sig, mine, sizeof mine);
    describe_sig(theirs, other, sizeof other);
    gcl_describe_ipu(x->ctx->inst, x->peer_ipu, who, sizeof who);
    if (memcmp(theirs, x->sig, sizeof *theirs) == 0)
        return gcl_ctx_fail(x->ctx, GCL_ERR_MISMATCH,
                            "mismatched call: this replica expects %llu bytes in %s, but %s sent "
                            "%llu",
                            (unsigned long long)x->bytes, mine, who,
                            (unsigned long long)their_total);
    return gcl_ctx_fail(x->ctx, GCL_ERR_MISMATCH,
                        "mismatched collectives: this replica called %s; %s called %s", mine, who,
                        other);
}
