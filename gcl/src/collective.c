/*
 * The collectives of the public API: one path for all of them. Check the call, pick the
 * algorithm (GCL_<COLLECTIVE>_ALGO or the automatic choice), build the schedule, start it.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "coll/reduce.h"
#include "log.h"
#include "request.h"

static uint32_t algo_hash(const char *name)
{
    int v[16] = {0};
    for (int i = 0; name[i] && i < 64; i++)
        v[i % 16] = v[i % 16] * 31 + (unsigned char)name[i];
    return gcl_hash_ints(v, 16);
}

static gcl_status_t reject(struct gcl_comm *c, gcl_status_t rc, const char *what, const char *fmt,
                           ...) __attribute__((format(printf, 4, 5)));

static gcl_status_t reject(struct gcl_comm *c, gcl_status_t rc, const char *what, const char *fmt,
                           ...)
{
    char msg[GCL_ERRLEN - 32];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(c->error, sizeof c->error, "%s: %s", what, msg);
    GCL_WARN(GCL_SUB_COLL, "%s", c->error);
    return rc;
}

/* Elements of IN and OUT for CALL over N ranks, as coll/algo.h lays them out. */
static void shape(const gcl_call_t *call, int n, int rank, uint64_t *in, uint64_t *out,
                  uint64_t *in_alias, uint64_t *out_alias)
{
    uint64_t c = call->count, un = (uint64_t)n, ur = (uint64_t)rank;
    *in = *out = c;
    *in_alias = *out_alias = 0;
    if (call->coll == COLL_REDUCE_SCATTER) {
        *in = un * c;
        *out_alias = ur * c;
    } else if (call->coll == COLL_ALLGATHER) {
        *out = un * c;
        *in_alias = ur * c;
    } else if (call->coll == COLL_ALLTOALL) {
        *in = *out = un * c;
    } else if (call->coll == COLL_BARRIER) {
        *in = *out = 0;
    }
}

static gcl_status_t check_call(struct gcl_comm *c, const gcl_call_t *call)
{
    const char *why = NULL;
    size_t es = gcl_dtype_size(call->type);
    int reducing = call->coll == COLL_ALLREDUCE || call->coll == COLL_REDUCE_SCATTER;
    if (call->coll != COLL_BARRIER && es == 0)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "unknown element type %d",
                      (int)call->type);
    if (reducing && !coll_redop_valid((coll_dtype_t)call->type, (coll_redop_t)call->op, &why))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "%s with %s: %s",
                      gcl_dtype_name(call->type), gcl_redop_name(call->op), why);
    if (call->coll == COLL_BROADCAST && (call->root < 0 || call->root >= c->size))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what,
                      "root %d is not a rank of the group (0 .. %d)", call->root, c->size - 1);
    uint64_t in, out, ia, oa;
    shape(call, c->size, c->rank, &in, &out, &ia, &oa);
    if (es && (call->count > (SIZE_MAX / 4) / es / (size_t)c->size))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "%zu elements is too many",
                      call->count);
    if (c->ctx->inst->phantom &&
        (!call->recv || gcl_sim_is_phantom(&c->ctx->inst->sim, call->recv)))
        return GCL_OK; /* phantom mode: a NULL or phantom output means sizes only */
    int needs_send = call->coll != COLL_BROADCAST || c->rank == call->root;
    if ((in && needs_send && !call->send) || (out && !call->recv))
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "a NULL buffer for %zu elements",
                      call->count);
    const char *s = call->send, *r = call->recv;
    if (in && out && needs_send && s < r + out * es && r < s + in * es &&
        s - ia * es != r - oa * es)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what,
                      "the input and output overlap, but not in the in-place layout");
    return GCL_OK;
}

/* Bytes per replica of a call, as GCL_DIRECT_MIN_BYTES counts them (the larger buffer). */
static size_t call_bytes(const gcl_call_t *call, int n)
{
    size_t b = call->count * gcl_dtype_size(call->type);
    return call->coll == COLL_ALLREDUCE ? b : b * (size_t)n;
}

/* The algorithm for A: the forced one, else the automatic choice (logged when it changes).
 * *DIRECT says whether a blocking call runs host-direct; ALGO then names the pod algorithm whose
 * schedule its simulated time follows. Non-blocking calls never do, so that the choice is the
 * same on every replica (a blocking call does not match a non-blocking one, as in MPI). */
static gcl_status_t pick(struct gcl_comm *c, const gcl_call_t *call, const coll_args_t *a,
                         int blocking, const coll_algo_t **algo, int *direct)
{
    char why[256];
    const char *forced =
        c->algo[a->coll][0] ? c->algo[a->coll] : c->ctx->inst->params.algo[a->coll];
    int automatic = strcmp(forced, "auto") == 0;
    const coll_algo_t *cheapest = automatic ? gcl_sim_choose(c, a, why, sizeof why) : NULL;
    if (cheapest)
        *algo = cheapest; /* the cost model's pick */
    else if (coll_algo_select(a, forced, algo, why, sizeof why) != 0)
        return reject(c, GCL_ERR_INVALID_ARGUMENT, call->what, "%s", why);
    *direct = automatic && blocking && a->op != COLL_LOCAL &&
              gcl_direct_eligible(c, a->coll, call_bytes(call, c->size));
    const void *choice = *direct ? (const void *)&c->last_algo : (const void *)*algo;
    if (automatic && c->last_algo[a->coll] != choice) {
        c->last_algo[a->coll] = choice;
        if (*direct)
            GCL_INFO(GCL_SUB_COLL,
                     "%s over %d replicas on one host: host-direct through shared memory "
                     "(simulated as %s)",
                     call->what, c->size, (*algo)->name);
        else
            GCL_INFO(GCL_SUB_COLL, "%s over %d replicas: %s", call->what, c->size, why);
    }
    return GCL_OK;
}

/* Operators that transform each contribution before combining them: a SQUARE_ADD squares it,
 * a logical operator turns it into 0 or 1 (so one replica's answer is 0 or 1 too). The
 * transformed input goes into memory the call owns; the caller's input is left alone. */
static int transforms_input(coll_redop_t op)
{
    return op == COLL_SQUARE_ADD || op == COLL_LOGICAL_AND || op == COLL_LOGICAL_OR;
}

static gcl_status_t transform_input(struct gcl_comm *c, const gcl_call_t *call, uint64_t in,
                                    struct gcl_request *r, const void **input)
{
    size_t bytes = in * gcl_dtype_size(call->type);
    coll_dtype_t t = (coll_dtype_t)call->type;
    if (bytes == 0 || !call->send || gcl_sim_is_phantom(&c->ctx->inst->sim, call->send))
        return GCL_OK;
    if (!(r->scratch = malloc(bytes)))
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "out of host memory");
    if (call->op == GCL_SQUARE_ADD)
        coll_square(t, r->scratch, call->send, in);
    else /* x AND x, x OR x: the truth value of x */
        coll_reduce(t, (coll_redop_t)call->op, r->scratch, call->send, call->send, in);
    *input = r->scratch;
    return GCL_OK;
}

gcl_status_t gcl_collective(struct gcl_comm *c, const gcl_call_t *call, int blocking,
                            struct gcl_request **out)
{
    if (!blocking && out)
        *out = NULL;
    GCL_CHECK(check_call(c, call));
    coll_args_t a = {.coll = call->coll,
                     .rank = c->rank,
                     .nranks = c->size,
                     .count = call->count,
                     .root = call->root,
                     .dtype = (coll_dtype_t)call->type,
                     .op = (coll_redop_t)call->op,
                     .elem_size = gcl_dtype_size(call->type),
                     .node_of = c->node_of};
    if (call->coll == COLL_BARRIER ||
        (call->coll != COLL_ALLREDUCE && call->coll != COLL_REDUCE_SCATTER))
        a.op = COLL_SUM; /* not a reduction: the operator is not part of the call */
    if (a.elem_size == 0)
        a.elem_size = 1, a.dtype = COLL_BOOL;
    const coll_algo_t *algo;
    int direct = 0;
    GCL_CHECK(pick(c, call, &a, blocking, &algo, &direct));
    c->last_used[call->coll] = direct ? "host_direct" : algo->name;
    struct gcl_request *r = calloc(1, sizeof *r);
    if (!r)
        return reject(c, GCL_ERR_NO_HOST_MEMORY, call->what, "out of host memory");
    r->comm = c;
    coll_schedule_init(&r->own);
    gcl_sig_t sig;
    memset(&sig, 0, sizeof sig);
    sig.seq = c->seq++;
    sig.coll = (uint8_t)call->coll;
    sig.dtype = (uint8_t)a.dtype;
    sig.op = (uint8_t)a.op;
    sig.gkind = (uint8_t)c->group.kind;
    sig.gsize = c->size;
    sig.root = call->coll == COLL_BROADCAST ? call->root : -1;
    sig.algo = algo_hash(algo->name);
    sig.count = call->count;
    const void *input = call->send;
    uint64_t in, outc, ia, oa;
    shape(call, c->size, c->rank, &in, &outc, &ia, &oa);
    gcl_status_t rc = GCL_OK;
    if ((call->coll == COLL_ALLREDUCE || call->coll == COLL_REDUCE_SCATTER) &&
        transforms_input(a.op)) {
        rc = transform_input(c, call, in, r, &input);
        if (a.op == COLL_SQUARE_ADD)
            a.op = COLL_SUM; /* the squares are summed */
    }
    coll_schedule_t *sched = blocking ? &c->sched : &r->own;
    const char *why = NULL;
    if (direct)
        coll_schedule_reset(sched); /* no messages: the host-direct engine does the work */
    int brc = rc == GCL_OK && !direct ? coll_build(algo, &a, sched, &why) : 0;
    if (brc != 0)
        rc = reject(c, brc == -12 ? GCL_ERR_NO_HOST_MEMORY : GCL_ERR_INVALID_ARGUMENT, call->what,
                    "algorithm %s cannot run this call: %s", algo->name,
                    why ? why : "out of memory");
    uint64_t key = ((uint64_t)c->key << 32) | sig.seq;
    if (rc == GCL_OK)
        rc = gcl_exec_start(&r->x, c, sched, input, call->recv, &sig, key, call->what);
    if (rc != GCL_OK) {
        coll_schedule_free(&r->own);
        free(r->scratch);
        free(r);
        return rc;
    }
    r->x.info.op = a.op;
    r->x.sim_sync = 1;
    if (direct)
        gcl_direct_setup(&r->x, algo, &a);
    else if (gcl_simcost_prepare(c, algo, &a, sched, &r->x.sim_mult) != GCL_OK)
        r->x.sim_mult = NULL; /* out of memory: cost without contention rather than fail */
    if (!blocking && r->x.sim_mult && sched->nops &&
        (r->x.sim_mult_own = malloc(sched->nops * sizeof(uint32_t)))) {
        memcpy(r->x.sim_mult_own, r->x.sim_mult, sched->nops * sizeof(uint32_t));
        r->x.sim_mult = r->x.sim_mult_own;
    }
    gcl_request_launch(r);
    if (blocking)
        return gcl_request_complete(r);
    *out = r;
    return GCL_OK;
}

int gcl_algorithms(const char *collective, const char **names, int max)
{
    coll_collective_t c;
    if (coll_collective_parse(collective, &c) != 0)
        return -1;
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(c, &n);
    for (int i = 0; names && i < max && (size_t)i < n; i++)
        names[i] = list[i]->name;
    return (int)n;
}

gcl_status_t gcl_comm_set_algorithm(gcl_comm_t comm, const char *collective, const char *algorithm)
{
    coll_collective_t c;
    if (!comm || !algorithm || coll_collective_parse(collective, &c) != 0)
        return GCL_ERR_INVALID_ARGUMENT;
    if (strcmp(algorithm, "auto") != 0 && !coll_algo_find(c, algorithm))
        return reject(comm, GCL_ERR_INVALID_ARGUMENT, "gcl_comm_set_algorithm",
                      "%s has no algorithm called \"%.40s\"", collective, algorithm);
    snprintf(comm->algo[c], sizeof comm->algo[c], "%s", algorithm);
    return GCL_OK;
}

const char *gcl_comm_algorithm(gcl_comm_t comm, const char *collective)
{
    coll_collective_t c;
    if (!comm || coll_collective_parse(collective, &c) != 0)
        return NULL;
    return comm->last_used[c];
}
