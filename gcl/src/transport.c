/* Choosing a transport per peer, and the receiver's check of what arrives. */
#include "transport.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "net.h"

#include "coll/group.h"

const gcl_transport_t *gcl_transport_for(struct gcl_ctx *ctx, int peer)
{
    struct gcl_instance *inst = ctx->inst;
    const char *forced = inst->params.transport;
    if (inst->ipu_instance[peer] == inst->instance_index)
        return &gcl_transport_local;
    if (!strcmp(forced, "mpi"))
        return &gcl_transport_mpi;
    if (!strcmp(forced, "ofi"))
        return &gcl_transport_ofi;
    if (inst->ipu_hostlocal[peer] >= 0)
        return &gcl_transport_shm;
    return inst->net_ofi ? &gcl_transport_ofi : &gcl_transport_mpi;
}

/* Which backends the job needs: forced by GCL_TRANSPORT, or (auto) ofi between hosts when
 * libfabric works on every instance, else mpi. Every instance decides the same. */
gcl_status_t gcl_transports_init(struct gcl_instance *inst)
{
    const char *forced = inst->params.transport;
    int remote = inst->num_hosts > 1, several = inst->num_instances > 1;
    if (remote && !strcmp(forced, "shm")) {
        snprintf(inst->error, sizeof inst->error, "GCL_TRANSPORT=shm, but the job spans %d hosts",
                 inst->num_hosts);
        return GCL_ERR_INVALID_ARGUMENT;
    }
    int want_ofi = several && (!strcmp(forced, "ofi") || (remote && !strcmp(forced, "auto")));
    int want_mpi = several && (!strcmp(forced, "mpi") || (remote && !strcmp(forced, "auto")));
    char why[256] = "";
    if (want_ofi) {
        gcl_status_t rc = gcl_net_ofi_create(inst, &inst->net_ofi, why, sizeof why);
        int ok = rc == GCL_OK, all_ok = 0;
        /* All or none: an instance that cannot talk ofi means nobody does. */
        int *votes = calloc((size_t)inst->num_instances, sizeof(int));
        if (votes && inst->boot->allgather(inst->boot, &ok, votes, sizeof ok) == GCL_OK) {
            all_ok = 1;
            for (int i = 0; i < inst->num_instances; i++)
                all_ok &= votes[i];
        }
        free(votes);
        if (!all_ok && inst->net_ofi) {
            inst->net_ofi->destroy(inst->net_ofi);
            inst->net_ofi = NULL;
        }
        if (!all_ok && !strcmp(forced, "ofi")) {
            snprintf(inst->error, sizeof inst->error, "GCL_TRANSPORT=ofi, but %s",
                     why[0] ? why : "libfabric failed on another instance");
            return GCL_ERR_TRANSPORT;
        }
        if (!all_ok)
            GCL_INFO(GCL_SUB_OFI, "libfabric unavailable (%s): using mpi between hosts",
                     why[0] ? why : "on another instance");
    }
    if (want_mpi || (want_ofi && !inst->net_ofi))
        return gcl_net_mpi_create(inst, &inst->net_mpi, inst->error, sizeof inst->error);
    return GCL_OK;
}

void gcl_transports_fini(struct gcl_instance *inst)
{
    if (inst->net_ofi)
        inst->net_ofi->destroy(inst->net_ofi);
    if (inst->net_mpi)
        inst->net_mpi->destroy(inst->net_mpi);
    inst->net_ofi = inst->net_mpi = NULL;
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
