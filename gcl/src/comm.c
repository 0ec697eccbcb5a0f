/*
 * Communicators: a replica group seen from one IPU position. Creating one needs no
 * communication. A communicator's key, which names it in every message, is derived from the
 * IPU position and how many communicators that IPU created before: the same on every replica
 * that creates its communicators in the same order, so that a replica which creates them in
 * another order (or over another group) is caught as a mismatch at its first collective.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

uint32_t gcl_hash_ints(const int *v, int n)
{
    uint32_t h = 2166136261u; /* FNV-1a */
    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)v[i];
        for (int b = 0; b < 4; b++) {
            h ^= (x >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    }
    return h;
}

/* A communicator over SIZE ranks; the caller fills members, ipus and node_of. */
static struct gcl_comm *comm_alloc(struct gcl_ctx *ctx, int size)
{
    struct gcl_comm *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->members = malloc((size_t)size * sizeof(int));
    c->ipus = malloc((size_t)size * sizeof(int));
    c->node_of = malloc((size_t)size * sizeof(int));
    if (!c->members || !c->ipus || !c->node_of) {
        free(c->members);
        free(c->ipus);
        free(c->node_of);
        free(c);
        return NULL;
    }
    c->ctx = ctx;
    c->size = size;
    coll_schedule_init(&c->sched);
    return c;
}

gcl_status_t gcl_comm_create(gcl_ctx_t ctx, gcl_group_t group, gcl_comm_t *out)
{
    if (!ctx || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    struct gcl_instance *inst = ctx->inst;
    coll_group_t g = {(coll_group_kind_t)group.kind, group.kind == GCL_GROUP_ALL ? 0 : group.size};
    const char *why = NULL;
    if (coll_group_check(g, inst->num_replicas, &why) != 0) {
        char text[32];
        return gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT,
                            "gcl_comm_create: group %s over %d replicas: %s",
                            coll_group_format(g, text, sizeof text), inst->num_replicas, why);
    }
    struct gcl_comm *c = comm_alloc(ctx, coll_group_size(g, inst->num_replicas));
    if (!c)
        return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY, "gcl_comm_create: out of memory");
    c->group = g;
    c->rank = coll_group_rank(g, inst->num_replicas, ctx->replica);
    for (int r = 0; r < c->size; r++) {
        c->members[r] = coll_group_member(g, inst->num_replicas, ctx->replica, r);
        c->ipus[r] = c->members[r] * inst->ipr + ctx->ipu_pos;
        c->node_of[r] = inst->ipu_instance[c->ipus[r]];
    }
    /* The same on every replica; another in each gcl_run, so nothing of an earlier run (a
     * message, a published call, a poison) can be taken for this one's. */
    int parts[4] = {0x636f6d6d /* "comm" */, ctx->ipu_pos, (int)ctx->comms_created++,
                    (int)inst->run_gen};
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
    struct gcl_instance *inst = ctx->inst;
    struct gcl_comm *c = comm_alloc(ctx, inst->ipr);
    if (!c)
        return NULL;
    c->group = (coll_group_t){COLL_GROUP_ALL, 0};
    c->rank = ctx->ipu_pos;
    for (int r = 0; r < c->size; r++) {
        c->members[r] = -1;
        c->ipus[r] = ctx->replica * inst->ipr + r;
        c->node_of[r] = inst->instance_index;
    }
    int parts[2] = {0x70327032 /* "p2p2" */, (int)inst->run_gen};
    c->key = gcl_hash_ints(parts, 2);
    ctx->p2p = c;
    return c;
}

static void comm_free(struct gcl_comm *c)
{
    gcl_simcache_free(c->simcache);
    coll_schedule_free(&c->sched);
    free(c->members);
    free(c->ipus);
    free(c->node_of);
    free(c);
}

void gcl_comm_destroy(gcl_comm_t comm)
{
    if (!comm)
        return;
    for (struct gcl_comm **p = &comm->ctx->comms; *p; p = &(*p)->next) {
        if (*p == comm) {
            *p = comm->next;
            break;
        }
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
    return comm ? comm->error : "no communicator";
}
