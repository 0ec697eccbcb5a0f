/*
 * gcl_all_reduce: checks the call, picks and builds the schedule, runs it.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/reduce.h"
#include "exec.h"
#include "log.h"

uint32_t gcl_hash_ints(const int *v, int n);

static uint32_t algo_hash(const char *name)
{
    int v[16] = {0};
    for (int i = 0; name[i] && i < 64; i++)
        v[i % 16] = v[i % 16] * 31 + (unsigned char)name[i];
    return gcl_hash_ints(v, 16);
}

/* GCL_ALLREDUCE_ALGO, or the registry's choice for these arguments. */
static const coll_algo_t *choose(struct gcl_comm *c, coll_collective_t coll, const coll_args_t *a)
{
    const char *forced = c->ctx->inst->params.algo[coll];
    if (strcmp(forced, "auto") != 0)
        return coll_algo_find(coll, forced);
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(coll, &n);
    (void)a;
    return n ? list[0] : NULL;
}

static gcl_status_t finish(struct gcl_comm *c, gcl_status_t rc, const char *what)
{
    if (rc == GCL_OK) {
        c->error[0] = '\0';
        return rc;
    }
    snprintf(c->error, sizeof c->error, "%s", c->ctx->error);
    GCL_WARN(GCL_SUB_COLL, "%s failed (%s): %s", what, gcl_status_name(rc), c->error);
    return rc;
}

gcl_status_t gcl_all_reduce(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type, gcl_redop_t op)
{
    if (!comm)
        return GCL_ERR_INVALID_ARGUMENT;
    struct gcl_ctx *ctx = comm->ctx;
    const char *why = NULL;
    size_t es = gcl_dtype_size(type);
    if (!coll_redop_valid((coll_dtype_t)type, (coll_redop_t)op, &why))
        return finish(comm,
                      gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT, "all_reduce of %s with %s: %s",
                                   gcl_dtype_name(type), gcl_redop_name(op), why),
                      "all_reduce");
    if (count > 0 && (!sendbuf || !recvbuf))
        return finish(comm, gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT,
                                         "all_reduce: a NULL buffer for %zu elements", count),
                      "all_reduce");
    if (count > (SIZE_MAX >> 2) / es)
        return finish(comm, gcl_ctx_fail(ctx, GCL_ERR_INVALID_ARGUMENT,
                                         "all_reduce: %zu elements is too many", count),
                      "all_reduce");
    coll_args_t a = {.coll = COLL_ALLREDUCE, .rank = comm->rank, .nranks = comm->size,
                     .count = count, .root = -1, .dtype = (coll_dtype_t)type,
                     .op = (coll_redop_t)op, .elem_size = es, .node_of = comm->node_of};
    const coll_algo_t *algo = choose(comm, COLL_ALLREDUCE, &a);
    gcl_sig_t sig;
    memset(&sig, 0, sizeof sig);
    sig = (gcl_sig_t){.seq = comm->seq++, .coll = COLL_ALLREDUCE, .dtype = (uint8_t)type,
                      .op = (uint8_t)op, .gkind = (uint8_t)comm->group.kind,
                      .gsize = comm->size, .root = -1, .algo = algo_hash(algo->name),
                      .count = count};
    if (op == GCL_LOCAL || comm->size == 1 || count == 0) {
        /* Nothing to exchange: every replica keeps (or copies) its own input. */
        if (recvbuf != sendbuf && count > 0)
            memmove(recvbuf, sendbuf, count * es);
        return finish(comm, GCL_OK, "all_reduce");
    }
    const void *in = sendbuf;
    if (op == GCL_SQUARE_ADD) {
        /* Square each contribution once, then sum: the schedule only ever adds. */
        coll_square((coll_dtype_t)type, recvbuf, sendbuf, count);
        in = recvbuf;
        a.op = COLL_SUM;
    }
    const char *nwhy = NULL;
    int brc = coll_build(algo, &a, &comm->sched, &nwhy);
    if (brc != 0)
        return finish(comm, gcl_ctx_fail(ctx, brc == -12 ? GCL_ERR_NO_HOST_MEMORY
                                                         : GCL_ERR_INVALID_ARGUMENT,
                                         "all_reduce: algorithm %s cannot run this call: %s",
                                         algo->name, nwhy ? nwhy : "out of memory"),
                      "all_reduce");
    gcl_exec_t x;
    gcl_status_t rc = gcl_exec_start(&x, comm, in, recvbuf, &sig, "all_reduce");
    if (rc == GCL_OK) {
        x.info.op = a.op;
        rc = gcl_exec_wait(&x);
        gcl_exec_finish(&x);
    }
    return finish(comm, rc, "all_reduce");
}
