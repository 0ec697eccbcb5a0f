/*
 * Communicators: a replica group seen from one IPU position. Creating one needs no
 * communication. A communicator's key, which names it in every message, is derived from the
 * IPU position and how many communicators that IPU created before: the same on every replica
 * that creates its communicators in the same order, so that a replica which creates them in
 * another order (or over another group) is caught as a mismatch at its first collective.
 */
#include "comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fault.h"
#include "base/log.h"

void gcl_charge_memo_free(gcl_charge_memo_t *m)
{
    free(m->mult);
    memset(m, 0, sizeof *m);
}

static void comm_free(struct gcl_comm *c)
{
    gcl_charge_memo_free(&c->charge);
    coll_schedule_free(&c->sched);
    gcl_err_clear(&c->err);
    free(c->members);
    free(c->ipus);
    free(c->node_of);
    free(c->host_of);
    free(c->tp);
    free(c);
}

/* A communicator over SIZE ranks; the caller fills members and ipus, then calls place(). */
static struct gcl_comm *comm_alloc(struct gcl_ctx *ctx, int size)
{
    struct gcl_comm *c = gcl_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ctx = ctx;
    c->size = size;
    coll_schedule_init(&c->sched);
    c->members = gcl_malloc((size_t)size * sizeof(int));
    c->ipus = gcl_malloc((size_t)size * sizeof(int));
    c->node_of = gcl_malloc((size_t)size * sizeof(int));
    c->host_of = gcl_malloc((size_t)size * sizeof(int));
    c->tp = gcl_malloc((size_t)size * sizeof *c->tp);
    if (!c->members || !c->ipus || !c->node_of || !c->host_of || !c->tp) {
        comm_free(c);
        return NULL;
    }
    return c;
}

/* Where every rank runs, and the transport to each: decided once, here. */
static void place(struct gcl_comm *c)
{
    struct gcl_instance *inst = c->ctx->inst;
    const gcl_job_t *j = &inst->job;
    c->one_host = c->one_process = 1;
    for (int r = 0; r < c->size; r++) {
        int ipu = c->ipus[r];
        c->node_of[r] = j->ipu_instance[ipu];
        c->host_of[r] = j->peers[j->ipu_instance[ipu]].host;
        c->one_host &= j->ipu_hostlocal[ipu] >= 0;
        c->one_process &= j->ipu_instance[ipu] == j->instance_index;
        c->tp[r] = gcl_transport_pick(&inst->fabric, c->ctx->global_ipu, ipu);
    }
}

gcl_status_t gcl_comm_create(gcl_ctx_t ctx, gcl_group_t group, gcl_comm_t *out)
{
    if (!ctx || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    const gcl_job_t *j = &ctx->inst->job;
    coll_group_t g = {(coll_group_kind_t)group.kind, group.kind == GCL_GROUP_ALL ? 0 : group.size};
    const char *why = NULL;
    if (coll_group_check(g, j->num_replicas, &why) != 0) {
        char text[32];
        return gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT,
                            "gcl_comm_create: group %s over %d replicas: %s",
                            coll_group_format(g, text, sizeof text), j->num_replicas, why);
    }
    struct gcl_comm *c = comm_alloc(ctx, coll_group_size(g, j->num_replicas));
    if (!c)
        return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY, "gcl_comm_create: out of memory");
    c->group = g;
    c->rank = coll_group_rank(g, j->num_replicas, ctx->replica);
    for (int r = 0; r < c->size; r++) {
        c->members[r] = coll_group_member(g, j->num_replicas, ctx->replica, r);
        c->ipus[r] = c->members[r] * j->ipr + ctx->ipu_pos;
    }
    place(c);
    /* The same on every replica; another in each gcl_run, so nothing of an earlier run (a
     * message, a published call, a poison) can be taken for this one's. */
    int parts[4] = {0x636f6d6d /* "comm" */, ctx->ipu_pos, (int)ctx->comms_created++,
                    (int)ctx->inst->run.gen};
    c->key = gcl_hash_ints(parts, 4);
    c->next = ctx->comms;
    ctx->comms = c;
    *out = c;
    return GCL_OK;
}

struct gcl_comm *gcl_ctx_p2p_comm(struct gcl_ctx *ctx)
{
    if (ctx->p2p)
        return ctx->p2p;
    const gcl_job_t *j = &ctx->inst->job;
    struct gcl_comm *c = comm_alloc(ctx, j->ipr);
    if (!c)
        return NULL;
    c->group = (coll_group_t){COLL_GROUP_ALL, 0};
    c->rank = ctx->ipu_pos;
    for (int r = 0; r < c->size; r++) {
        c->members[r] = -1;
        c->ipus[r] = ctx->replica * j->ipr + r;
    }
    place(c);
    int parts[2] = {0x70327032 /* "p2p2" */, (int)ctx->inst->run.gen};
    c->key = gcl_hash_ints(parts, 2);
    ctx->p2p = c;
    return c;
}

void gcl_comm_destroy(gcl_comm_t comm)
{
    if (!comm)
        return;
    struct gcl_ctx *ctx = comm->ctx;
    for (struct gcl_comm **p = &ctx->comms; *p; p = &(*p)->next) {
        if (*p == comm) {
            *p = comm->next;
            break;
        }
    }
    if (ctx->last_failure == &comm->err) { /* the IPU's latest failure outlives its comm */
        gcl_err_move(&ctx->kept, &comm->err);
        ctx->last_failure = &ctx->kept;
    }
    comm_free(comm);
}

void gcl_ctx_free_comms(struct gcl_ctx *ctx)
{
    while (ctx->comms)
        gcl_comm_destroy(ctx->comms);
    if (ctx->p2p)
        comm_free(ctx->p2p);
    ctx->p2p = NULL;
    free(ctx->p2p_counts);
    ctx->p2p_counts = NULL;
    ctx->np2p_counts = ctx->p2p_cap = 0;
}

int gcl_comm_rank(gcl_comm_t comm)
{
    return comm ? comm->rank : -1;
}

int gcl_comm_size(gcl_comm_t comm)
{
    return comm ? comm->size : -1;
}

const char *gcl_last_error(gcl_comm_t comm)
{
    return comm ? gcl_err_text(&comm->err) : "no communicator";
}
