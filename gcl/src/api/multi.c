/*
 * gcl_all_reduce_multi: several tensors of mixed types, all-reduced in one fused call per type.
 * Declared in gcl/gcl.h.
 *
 * GCL all-reduces a list of tensors in one operation, so that a model's per-layer gradients cost
 * one collective instead of one each. Here the tensors of each type are laid end to end and
 * reduced by one all_reduce through the ordinary collective path (gcl_collective), so the
 * algorithm choice, host-direct engine, reduction order and simulated cost are those of one
 * all_reduce of the total count. Example, tensors w1 (f32 x 6), b1 (f32 x 2), s (i32 x 3):
 *
 *   f32: [w1 w1 w1 w1 w1 w1 b1 b1] -> one all_reduce of 8 f32 -> back into w1 and b1
 *   i32: [s s s]                   -> one all_reduce of 3 i32
 *
 * Tensors of a type that already lie end to end (each sendbuf and recvbuf right after the
 * previous one's, as the layers of one gradient vector do) are reduced in place of the copies.
 * Each call carries a hash of the whole list in its signature (gcl_call_t.layout), so replicas
 * that pass different lists fail with GCL_ERR_MISMATCH instead of folding unrelated elements.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "api/call.h"
#include "base/alloc.h"
#include "base/log.h"

/* A hash of the list: the number of tensors, then each type and count (never 0). */
static uint32_t layout_hash(const gcl_tensor_t *t, int n)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
    for (int i = 0; i < n; i++) {
        uint64_t words[2] = {(uint64_t)t[i].type, (uint64_t)t[i].count};
        for (int k = 0; k < 2; k++)
            h = (h ^ words[k]) * 1099511628211ull;
    }
    uint32_t x = (uint32_t)(h ^ (h >> 32));
    return x ? x : 1;
}

/* Whether the tensors of TYPE lie end to end from the first one of that type, and their count. */
static int contiguous(const gcl_tensor_t *t, int n, gcl_dtype_t type, size_t *total)
{
    size_t es = gcl_dtype_size(type);
    const char *s = NULL, *r = NULL;
    int ok = 1;
    *total = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].type != type)
            continue;
        if (*total && (t[i].sendbuf != s || t[i].recvbuf != r))
            ok = 0;
        s = (const char *)t[i].sendbuf + t[i].count * es;
        r = (char *)t[i].recvbuf + t[i].count * es;
        *total += t[i].count;
    }
    return ok;
}

/* The first tensor of TYPE, for the buffers of a contiguous run. */
static const gcl_tensor_t *first_of(const gcl_tensor_t *t, int n, gcl_dtype_t type)
{
    for (int i = 0; i < n; i++)
        if (t[i].type == type)
            return &t[i];
    return NULL;
}

/* Copies the inputs of TYPE into STAGE (TO_STAGE), or the result out of it into the outputs. */
static void stage_copy(const gcl_tensor_t *t, int n, gcl_dtype_t type, char *stage, int to_stage)
{
    size_t es = gcl_dtype_size(type), at = 0;
    for (int i = 0; i < n; i++) {
        if (t[i].type != type)
            continue;
        if (to_stage)
            memcpy(stage + at, t[i].sendbuf, t[i].count * es);
        else
            memcpy(t[i].recvbuf, stage + at, t[i].count * es);
        at += t[i].count * es;
    }
}

/* Whether the tensors of TYPE carry no data: phantom mode with a phantom (or NULL) output. */
static int phantom(struct gcl_comm *c, const gcl_tensor_t *t, int n, gcl_dtype_t type)
{
    if (!c->peers.ipu->phantom)
        return 0;
    for (int i = 0; i < n; i++)
        if (t[i].type == type &&
            (!t[i].recvbuf || gcl_sim_is_phantom(c->peers.ipu->sim, t[i].recvbuf)))
            return 1;
    return 0;
}

/* One fused all_reduce of the tensors of TYPE. */
static gcl_status_t reduce_type(struct gcl_comm *c, const gcl_tensor_t *t, int n, gcl_dtype_t type,
                                gcl_redop_t op, uint32_t layout)
{
    size_t total;
    int direct = contiguous(t, n, type, &total), sizes_only = phantom(c, t, n, type);
    const gcl_tensor_t *f = first_of(t, n, type);
    gcl_call_t call = {COLL_ALLREDUCE,     f->sendbuf, f->recvbuf, total, type, op, -1,
                       "all_reduce_multi", layout};
    if (sizes_only)
        call.send = call.recv = NULL;
    if (direct || sizes_only)
        return gcl_collective(c, &call, 1, NULL);
    char *stage = gcl_malloc(total * gcl_dtype_size(type) + 1);
    if (!stage) {
        return gcl_comm_fail(c, GCL_ERR_NO_HOST_MEMORY, "all_reduce_multi: out of host memory");
    }
    stage_copy(t, n, type, stage, 1);
    call.send = call.recv = stage;
    gcl_status_t rc = gcl_collective(c, &call, 1, NULL);
    if (rc == GCL_OK)
        stage_copy(t, n, type, stage, 0);
    free(stage);
    return rc;
}

gcl_status_t gcl_all_reduce_multi(gcl_comm_t comm, const gcl_tensor_t *tensors, int n,
                                  gcl_redop_t op)
{
    if (!comm)
        return GCL_ERR_INVALID_ARGUMENT;
    if (n < 0 || (n > 0 && !tensors)) {
        return gcl_comm_fail(comm, GCL_ERR_INVALID_ARGUMENT, "all_reduce_multi: %d tensors at %p",
                             n, (const void *)tensors);
    }
    uint32_t layout = layout_hash(tensors, n);
    unsigned done = 0; /* the types already reduced, one bit each */
    for (int i = 0; i < n; i++) {
        gcl_dtype_t type = tensors[i].type;
        if (gcl_dtype_size(type) == 0) {
            return gcl_comm_fail(comm, GCL_ERR_INVALID_ARGUMENT,
                                 "all_reduce_multi: tensor %d has unknown element type %d", i,
                                 (int)type);
        }
        if (done & (1u << type))
            continue;
        done |= 1u << type;
        GCL_DEBUG(GCL_SUB_COLL, "all_reduce_multi: the %s tensors of %d, fused",
                  gcl_dtype_name(type), n);
        GCL_CHECK(reduce_type(comm, tensors, n, type, op, layout));
    }
    return GCL_OK;
}
