/*
 * Communicators: a replica group seen from one IPU position. Creating one needs no
 * communication. A communicator's key, which names it in every message, is derived from the
 * IPU position and how many communicators that IPU created before: the same on every replica
 * that creates its communicators in the same order, so that a replica which creates them in
 * another order (or over another group) is caught as a mismatch at its first collective.
 */
#include "api/comm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/alloc.h"
#include "base/log.h"

static void comm_free(struct gcl_comm *c)
{
    gcl_peers_free(&c->peers);
    coll_schedule_free(&c->sched);
    gcl_err_clear(&c->err);
    free(c);
}

/* A communicator over SIZE ranks; the caller fills members and ipus, then places them. */
static struct gcl_comm *comm_alloc(struct gcl_ctx *ctx, int size)
{
    struct gcl_comm *c = gcl_calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->ctx = ctx;
    coll_schedule_init(&c->sched);
    if (gcl_peers_init(&c->peers, &ctx->ipu, size, &c->err) != GCL_OK) {
        comm_free(c);
        return NULL;
    }
    return c;
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
    gcl_peers_t *p = &c->peers;
    p->group = g;
    p->rank = coll_group_rank(g, j->num_replicas, ctx->replica);
    for (int r = 0; r < p->size; r++) {
        p->members[r] = coll_group_member(g, j->num_replicas, ctx->replica, r);
        p->ipus[r] = p->members[r] * j->ipus_per_replica + ctx->ipu_pos;
    }
    gcl_peers_place(p);
    /* The same on every replica; another in each gcl_run, so nothing of an earlier run (a
     * message, a published call, a poison) can be taken for this one's. */
    int parts[4] = {0x636f6d6d /* "comm" */, ctx->ipu_pos, (int)ctx->comms_created++,
                    (int)ctx->inst->run.gen};
    p->key = gcl_hash_ints(parts, 4);
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
    struct gcl_comm *c = comm_alloc(ctx, j->ipus_per_replica);
    if (!c)
        return NULL;
    gcl_peers_t *p = &c->peers;
    p->group = (coll_group_t){COLL_GROUP_ALL, 0};
    p->rank = ctx->ipu_pos;
    p->p2p = 1;
    p->record = &ctx->err; /* point-to-point calls fail into the context's record */
    for (int r = 0; r < p->size; r++) {
        p->members[r] = -1;
        p->ipus[r] = ctx->replica * j->ipus_per_replica + r;
    }
    gcl_peers_place(p);
    int parts[2] = {0x70327032 /* "p2p2" */, (int)ctx->inst->run.gen};
    p->key = gcl_hash_ints(parts, 2);
    ctx->p2p = c;
    return c;
}

void gcl_comm_destroy(gcl_comm_t comm)
{
    if (!comm)
        return;
    struct gcl_ctx *ctx = comm->ctx;
    if (ctx->ipu.parked && ctx->ipu.parked->peers == &comm->peers)
        gcl_ipu_settle(&ctx->ipu, 0); /* a failure is recorded in COMM's record: kept below */
    for (struct gcl_comm **p = &ctx->comms; *p; p = &(*p)->next) {
        if (*p == comm) {
            *p = comm->next;
            break;
        }
    }
    if (ctx->ipu.last_failure == &comm->err) { /* the IPU's latest failure outlives its comm */
        gcl_err_move(&ctx->kept, &comm->err);
        ctx->ipu.last_failure = &ctx->kept;
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
    return comm ? comm->peers.rank : -1;
}

int gcl_comm_size(gcl_comm_t comm)
{
    return comm ? comm->peers.size : -1;
}

const char *gcl_last_error(gcl_comm_t comm)
{
    return comm ? gcl_err_text(&comm->err) : "no communicator";
}
