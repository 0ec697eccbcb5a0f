/* Communicators: a replica group seen from one IPU position. No communication to create one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "log.h"

/* FNV-1a over a few integers: communicator keys and algorithm hashes. */
uint32_t gcl_hash_ints(const int *v, int n);
uint32_t gcl_hash_ints(const int *v, int n)
{
    uint32_t h = 2166136261u;
    for (int i = 0; i < n; i++) {
        uint32_t x = (uint32_t)v[i];
        for (int b = 0; b < 4; b++) {
            h ^= (x >> (8 * b)) & 0xffu;
            h *= 16777619u;
        }
    }
    return h;
}

/* How many communicators over GROUP this IPU created before; counts this one. */
static int next_serial(struct gcl_ctx *ctx, coll_group_t group, uint32_t *serial)
{
    for (int i = 0; i < ctx->nspecs; i++) {
        if (ctx->specs[i].group.kind == group.kind && ctx->specs[i].group.size == group.size) {
            *serial = ctx->specs[i].created++;
            return 0;
        }
    }
    void *p = realloc(ctx->specs, (size_t)(ctx->nspecs + 1) * sizeof *ctx->specs);
    if (!p)
        return -1;
    ctx->specs = p;
    ctx->specs[ctx->nspecs].group = group;
    ctx->specs[ctx->nspecs].created = 1;
    ctx->nspecs++;
    *serial = 0;
    return 0;
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
    struct gcl_comm *c = calloc(1, sizeof *c);
    int size = coll_group_size(g, inst->num_replicas);
    uint32_t serial;
    if (!c || !(c->members = malloc((size_t)size * sizeof(int))) ||
        !(c->node_of = malloc((size_t)size * sizeof(int))) || next_serial(ctx, g, &serial)) {
        if (c) {
            free(c->members);
            free(c->node_of);
        }
        free(c);
        return gcl_ctx_fail(ctx, GCL_ERR_NO_HOST_MEMORY, "gcl_comm_create: out of memory");
    }
    c->ctx = ctx;
    c->group = g;
    c->size = size;
    c->rank = coll_group_rank(g, inst->num_replicas, ctx->replica);
    for (int r = 0; r < size; r++) {
        c->members[r] = coll_group_member(g, inst->num_replicas, ctx->replica, r);
        c->node_of[r] = inst->ipu_instance[c->members[r] * inst->ipr];
    }
    int parts[4] = {(int)g.kind, g.size, ctx->ipu_pos, (int)serial};
    c->key = gcl_hash_ints(parts, 4);
    coll_schedule_init(&c->sched);
    c->next = ctx->comms;
    ctx->comms = c;
    *out = c;
    return GCL_OK;
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
    coll_schedule_free(&comm->sched);
    free(comm->members);
    free(comm->node_of);
    free(comm);
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
