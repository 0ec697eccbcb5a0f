/*
 * The registry: every algorithm of every collective, in one table per collective. Adding an
 * algorithm means adding its file and one line here.
 */
#include "coll/algo.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

extern const coll_algo_t coll_allreduce_clockwise_ring, coll_allreduce_anticlockwise_ring,
    coll_allreduce_bidirectional_ring_pair, coll_allreduce_meet_in_middle_ring,
    coll_allreduce_broadcast, coll_allreduce_recursive_doubling, coll_allreduce_halving_doubling,
    coll_allreduce_double_binary_tree, coll_allreduce_hierarchical, coll_allreduce_canonical;
extern const coll_algo_t coll_reducescatter_ring, coll_reducescatter_recursive_halving,
    coll_reducescatter_direct, coll_reducescatter_canonical;
extern const coll_algo_t coll_allgather_ring, coll_allgather_bruck, coll_allgather_direct;
extern const coll_algo_t coll_broadcast_binomial_tree, coll_broadcast_scatter_allgather,
    coll_broadcast_chain;
extern const coll_algo_t coll_alltoall_pairwise, coll_alltoall_direct;
extern const coll_algo_t coll_barrier_dissemination, coll_barrier_ring;

static const coll_algo_t *const allreduce_algos[] = {
    &coll_allreduce_clockwise_ring,
    &coll_allreduce_anticlockwise_ring,
    &coll_allreduce_bidirectional_ring_pair,
    &coll_allreduce_meet_in_middle_ring,
    &coll_allreduce_broadcast,
    &coll_allreduce_recursive_doubling,
    &coll_allreduce_halving_doubling,
    &coll_allreduce_double_binary_tree,
    &coll_allreduce_hierarchical,
    &coll_allreduce_canonical,
};
static const coll_algo_t *const reducescatter_algos[] = {
    &coll_reducescatter_ring,
    &coll_reducescatter_recursive_halving,
    &coll_reducescatter_direct,
    &coll_reducescatter_canonical,
};
static const coll_algo_t *const allgather_algos[] = {
    &coll_allgather_ring,
    &coll_allgather_bruck,
    &coll_allgather_direct,
};
static const coll_algo_t *const broadcast_algos[] = {
    &coll_broadcast_binomial_tree,
    &coll_broadcast_scatter_allgather,
    &coll_broadcast_chain,
};
static const coll_algo_t *const alltoall_algos[] = {
    &coll_alltoall_pairwise,
    &coll_alltoall_direct,
};
static const coll_algo_t *const barrier_algos[] = {
    &coll_barrier_dissemination,
    &coll_barrier_ring,
};

#define COUNT_OF(x) (sizeof(x) / sizeof((x)[0]))

static const struct {
    const coll_algo_t *const *list;
    size_t n;
    const char *env; /* the variable that forces one of them */
} registry[COLL_COLLECTIVE_COUNT] = {
    [COLL_ALLREDUCE] = {allreduce_algos, COUNT_OF(allreduce_algos), "GCL_ALLREDUCE_ALGO"},
    [COLL_REDUCE_SCATTER] = {reducescatter_algos, COUNT_OF(reducescatter_algos),
                             "GCL_REDUCE_SCATTER_ALGO"},
    [COLL_ALLGATHER] = {allgather_algos, COUNT_OF(allgather_algos), "GCL_ALLGATHER_ALGO"},
    [COLL_BROADCAST] = {broadcast_algos, COUNT_OF(broadcast_algos), "GCL_BROADCAST_ALGO"},
    [COLL_ALLTOALL] = {alltoall_algos, COUNT_OF(alltoall_algos), "GCL_ALLTOALL_ALGO"},
    [COLL_BARRIER] = {barrier_algos, COUNT_OF(barrier_algos), "GCL_BARRIER_ALGO"},
};

const char *coll_algo_env_name(coll_collective_t c)
{
    return (unsigned)c < COLL_COLLECTIVE_COUNT ? registry[c].env : NULL;
}

const coll_algo_t *const *coll_algo_list(coll_collective_t c, size_t *n)
{
    if ((unsigned)c >= COLL_COLLECTIVE_COUNT) {
        *n = 0;
        return NULL;
    }
    *n = registry[c].n;
    return registry[c].list;
}

const coll_algo_t *coll_algo_find(coll_collective_t c, const char *name)
{
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(c, &n);
    for (size_t i = 0; name && i < n; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

/* Buffer sizes and in-place aliasing that each collective implies (see coll/algo.h). */
static void shape(const coll_args_t *a, coll_schedule_t *s)
{
    uint64_t n = (uint64_t)a->nranks, r = (uint64_t)a->rank, c = a->count;
    s->in_count = s->out_count = c;
    switch (a->coll) {
    case COLL_REDUCE_SCATTER:
        s->in_count = n * c;
        s->out_alias = r * c;
        break;
    case COLL_ALLGATHER:
        s->out_count = n * c;
        s->in_alias = r * c;
        break;
    case COLL_ALLTOALL:
        s->in_count = s->out_count = n * c;
        break;
    case COLL_BARRIER:
        s->in_count = s->out_count = 0;
        break;
    default:
        break;
    }
}

static int reduces(coll_collective_t c)
{
    return c == COLL_ALLREDUCE || c == COLL_REDUCE_SCATTER;
}

/* Checks what no algorithm can run: returns 0 or -EINVAL with *WHY set. */
static int check_args(const coll_algo_t *algo, const coll_args_t *a, const char **why)
{
    const char *reason = NULL;
    if (a->nranks < 1 || a->rank < 0 || a->rank >= a->nranks)
        reason = "the rank is outside the group";
    else if (algo->coll != a->coll)
        reason = "the algorithm belongs to another collective";
    else if (a->coll == COLL_BROADCAST && (a->root < 0 || a->root >= a->nranks))
        reason = "the broadcast root is outside the group";
    else if (reduces(a->coll))
        coll_redop_valid(a->dtype, a->op, &reason);
    if (why)
        *why = reason;
    return reason ? -EINVAL : 0;
}

int coll_build(const coll_algo_t *algo, const coll_args_t *a, coll_schedule_t *s, const char **why)
{
    /* Algorithms may always write a reason: give them somewhere to write it. */
    const char *ignored = NULL;
    if (!why)
        why = &ignored;
    coll_schedule_reset(s);
    *why = NULL;
    if (check_args(algo, a, why))
        return -EINVAL;
    /* LOCAL keeps every rank's own values: no algorithm has anything to do. */
    int local = reduces(a->coll) && a->op == COLL_LOCAL;
    if (!local && algo->supports && algo->supports(a, why) != 0)
        return -EINVAL;
    s->algo = local ? "local" : algo->name;
    s->rank = a->rank;
    s->nranks = a->nranks;
    shape(a, s);
    if (local) {
        uint64_t src = a->coll == COLL_REDUCE_SCATTER ? (uint64_t)a->rank * a->count : 0;
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, src, a->count);
        return coll_schedule_status(s);
    }
    return algo->build(a, s);
}

int coll_algo_select(const coll_args_t *a, const char *name, const coll_algo_t **out, char *why,
                     unsigned len)
{
    *out = NULL;
    if (!why)
        len = 0;
    const coll_algo_t *algo = name ? coll_algo_find(a->coll, name) : NULL;
    if (!algo) {
        size_t n, used;
        const coll_algo_t *const *list = coll_algo_list(a->coll, &n);
        used = (size_t)snprintf(why, len, "%s has no algorithm called \"%s\"; it has auto",
                                coll_collective_name(a->coll), name ? name : "");
        for (size_t i = 0; i < n && why && used < len; i++)
            used += (size_t)snprintf(why + used, len - used, ", %s", list[i]->name);
        return -EINVAL;
    }
    const char *reason = NULL;
    if (algo->supports && algo->supports(a, &reason) != 0) {
        snprintf(why, len, "%s cannot run this %s: %s", name, coll_collective_name(a->coll),
                 reason ? reason : "unsupported");
        return -EINVAL;
    }
    snprintf(why, len, "%s of %llu bytes over %d ranks: %s (forced)", coll_collective_name(a->coll),
             (unsigned long long)(a->count * a->elem_size), a->nranks, name);
    *out = algo;
    return 0;
}
