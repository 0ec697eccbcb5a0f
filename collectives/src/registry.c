/*
 * The registry: every algorithm of every collective, in one table per collective. Adding an
 * algorithm means adding its file and one line here.
 */
#include "coll/algo.h"

#include <errno.h>
#include <string.h>

extern const coll_algo_t coll_allreduce_clockwise_ring;

static const coll_algo_t *const allreduce_algos[] = {
    &coll_allreduce_clockwise_ring,
};

#define COUNT_OF(x) (sizeof(x) / sizeof((x)[0]))

static const struct {
    const coll_algo_t *const *list;
    size_t n;
} registry[COLL_COLLECTIVE_COUNT] = {
    [COLL_ALLREDUCE] = {allreduce_algos, COUNT_OF(allreduce_algos)},
};

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

int coll_build(const coll_algo_t *algo, const coll_args_t *a, coll_schedule_t *s, const char **why)
{
    coll_schedule_reset(s);
    if (why)
        *why = NULL;
    if (a->nranks < 1 || a->rank < 0 || a->rank >= a->nranks) {
        if (why)
            *why = "the rank is outside the group";
        return -EINVAL;
    }
    if (algo->supports && algo->supports(a, why) != 0)
        return -EINVAL;
    s->algo = algo->name;
    s->rank = a->rank;
    s->nranks = a->nranks;
    shape(a, s);
    return algo->build(a, s);
}
