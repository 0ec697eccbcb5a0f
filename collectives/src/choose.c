/*
 * The automatic choice of an algorithm, and GCL_<COLLECTIVE>_ALGO overrides.
 *
 * A simple heuristic over three things the caller knows: the message size in bytes, the group
 * size n, and (from coll_args_t.node_of) how many nodes the ranks span and how many ranks each
 * node holds. Latency dominates small messages, so they go to the algorithms with the fewest
 * steps; bandwidth dominates large ones, so they go to algorithms that send each byte about
 * twice (rings, Rabenseifner, trees), and to the hierarchical all-reduce when several nodes hold
 * several ranks each, because it keeps most bytes inside a node. The thresholds are round
 * numbers in the ranges where MPI and NCCL switch; sim/'s cost model can refine them later.
 *
 *   all_reduce      n = 1: clockwise_ring (a copy)
 *                   <= 4 KiB and n <= 8: broadcast;  <= 64 KiB: recursive_doubling
 *                   >= 1 MiB, >= 2 nodes of >= 2 ranks each (even): hierarchical
 *                   <= 1 MiB: halving_doubling
 *                   <= 16 MiB and n >= 16: double_binary_tree
 *                   otherwise: bidirectional_ring_pair (clockwise_ring for n = 2)
 *   reduce_scatter  (size of IN, n blocks) <= 16 KiB and n <= 16: direct;
 *                   <= 1 MiB: recursive_halving; otherwise ring
 *   all_gather      (size of OUT) <= 16 KiB and n <= 16: direct; <= 1 MiB: bruck; otherwise ring
 *   broadcast       <= 64 KiB: binomial_tree; n <= 16: chain; otherwise scatter_allgather
 *   all_to_all      (size of IN) <= 64 KiB and n <= 32: direct; otherwise pairwise
 *   barrier         dissemination
 * When the pick does not support the arguments, the first algorithm of the registry that does
 * is used instead.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)

/* How the ranks spread over nodes: the number of nodes and, when every node holds the same
 * number of ranks, that number (0 when uneven or unknown). */
typedef struct {
    int nodes, per_node;
} spread_t;

static int by_value(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return a < b ? -1 : a > b;
}

static spread_t spread(const coll_args_t *a)
{
    spread_t sp = {1, 0};
    int n = a->nranks, *v = a->node_of ? malloc(sizeof(int) * (size_t)n) : NULL;
    if (!v)
        return sp; /* unknown (or no memory to work it out): as if on one node */
    memcpy(v, a->node_of, sizeof(int) * (size_t)n);
    qsort(v, (size_t)n, sizeof *v, by_value);
    /* Runs of equal values are nodes; they are even when every run is as long as the first. */
    int run = 1, first = 0, even = 1;
    sp.nodes = 1;
    for (int q = 1; q <= n; q++) {
        if (q < n && v[q] == v[q - 1]) {
            run++;
            continue;
        }
        if (!first)
            first = run;
        even &= run == first;
        if (q < n)
            sp.nodes++;
        run = 1;
    }
    sp.per_node = even ? first : 0;
    free(v);
    return sp;
}

typedef struct {
    const char *name, *reason;
} pick_t;

static pick_t pick_allreduce(const coll_args_t *a, uint64_t bytes)
{
    int n = a->nranks;
    if (n == 1)
        return (pick_t){"clockwise_ring", "a group of one only copies"};
    if (bytes <= 4 * KIB && n <= 8)
        return (pick_t){"broadcast", "tiny message on a small group: one step"};
    if (bytes <= 64 * KIB)
        return (pick_t){"recursive_doubling", "small message: log2(n) steps"};
    if (bytes >= MIB) {
        spread_t sp = spread(a);
        if (sp.nodes >= 2 && sp.per_node >= 2)
            return (pick_t){"hierarchical", "large message on several nodes of several ranks"};
    }
    if (bytes <= MIB)
        return (pick_t){"halving_doubling", "medium message: 2 log2(n) steps, each byte twice"};
    if (bytes <= 16 * MIB && n >= 16)
        return (pick_t){"double_binary_tree", "large message on a large group: log2(n) depth"};
    if (n == 2)
        return (pick_t){"clockwise_ring", "large message on two ranks"};
    return (pick_t){"bidirectional_ring_pair", "large message: rings both ways round"};
}

static pick_t pick(const coll_args_t *a)
{
    int n = a->nranks;
    uint64_t bytes = a->count * (uint64_t)a->elem_size, total = bytes * (uint64_t)n;
    switch (a->coll) {
    case COLL_ALLREDUCE:
        return pick_allreduce(a, bytes);
    case COLL_REDUCE_SCATTER:
        if (total <= 16 * KIB && n <= 16)
            return (pick_t){"direct", "small message on a small group: one step"};
        if (total <= MIB)
            return (pick_t){"recursive_halving", "medium message: log2(n) steps"};
        return (pick_t){"ring", "large message: bandwidth-optimal ring"};
    case COLL_ALLGATHER:
        if (total <= 16 * KIB && n <= 16)
            return (pick_t){"direct", "small message on a small group: one step"};
        if (total <= MIB)
            return (pick_t){"bruck", "medium message: log2(n) steps"};
        return (pick_t){"ring", "large message: bandwidth-optimal ring"};
    case COLL_BROADCAST:
        if (bytes <= 64 * KIB)
            return (pick_t){"binomial_tree", "small message: log2(n) steps"};
        if (n <= 16)
            return (pick_t){"chain", "large message on a small group: pipelined chain"};
        return (pick_t){"scatter_allgather", "large message on a large group"};
    case COLL_ALLTOALL:
        if (total <= 64 * KIB && n <= 32)
            return (pick_t){"direct", "small message on a small group: one step"};
        return (pick_t){"pairwise", "one peer per step"};
    default:
        return (pick_t){"dissemination", "log2(n) rounds of tokens"};
    }
}

static int supported(const coll_algo_t *algo, const coll_args_t *a)
{
    const char *why;
    return algo && (!algo->supports || algo->supports(a, &why) == 0);
}

/* "all_reduce of 4096 bytes over 16 ranks (2 nodes of 8)": what a choice was made for. */
static void describe(const coll_args_t *a, char *buf, size_t len)
{
    int used = snprintf(buf, len, "%s of %llu bytes over %d ranks", coll_collective_name(a->coll),
                        (unsigned long long)(a->count * (uint64_t)a->elem_size), a->nranks);
    if (!a->node_of || used < 0 || (size_t)used >= len)
        return;
    spread_t sp = spread(a);
    if (sp.per_node)
        snprintf(buf + used, len - (size_t)used, " (%d nodes of %d)", sp.nodes, sp.per_node);
    else
        snprintf(buf + used, len - (size_t)used, " (%d nodes, uneven)", sp.nodes);
}

const coll_algo_t *coll_algo_choose(const coll_args_t *a, char *why, unsigned len)
{
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(a->coll, &n);
    if (!list || n == 0)
        return NULL;
    pick_t p = pick(a);
    const coll_algo_t *algo = coll_algo_find(a->coll, p.name);
    if (!supported(algo, a)) {
        p.reason = "the first in the registry that can run these arguments";
        algo = NULL;
        for (size_t i = 0; i < n && !algo; i++)
            algo = supported(list[i], a) ? list[i] : NULL;
        if (!algo)
            algo = list[0]; /* none can: coll_build will say why */
    }
    if (why && len) {
        char what[96];
        describe(a, what, sizeof what);
        snprintf(why, len, "%s: %s (%s)", what, algo->name, p.reason);
    }
    return algo;
}

const coll_algo_t *coll_algo_auto(const coll_args_t *a)
{
    return coll_algo_choose(a, NULL, 0);
}

int coll_algo_select(const coll_args_t *a, const char *name, const coll_algo_t **out, char *why,
                     unsigned len)
{
    *out = NULL;
    if (!why)
        len = 0;
    if (!name || !*name || strcmp(name, "auto") == 0) {
        *out = coll_algo_choose(a, why, len);
        return *out ? 0 : -EINVAL;
    }
    const coll_algo_t *algo = coll_algo_find(a->coll, name);
    if (!algo) {
        size_t n, used;
        const coll_algo_t *const *list = coll_algo_list(a->coll, &n);
        used = (size_t)snprintf(why, len, "%s has no algorithm called \"%s\"; it has auto",
                                coll_collective_name(a->coll), name);
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
    if (why && len) {
        char what[96];
        describe(a, what, sizeof what);
        snprintf(why, len, "%s: %s (forced)", what, name);
    }
    *out = algo;
    return 0;
}
