/*
 * all_reduce, hierarchical: three phases that keep most bytes inside a node (an instance: the
 * ranks of one process, whose links are cheap) and send across nodes only 1/L of the data per
 * rank, all L ranks of a node using their own links at once:
 *   1. ring reduce-scatter among the L ranks of each node: node-local rank i ends with block
 *      i+1 (of L) reduced over its node;
 *   2. ring all-reduce of that block across the M nodes, among the ranks with the same node-local
 *      index (a MEAN divides at the end of its reduce-scatter, once per element);
 *   3. ring all-gather among the ranks of each node.
 * Each element is reduced once per phase-1 ring and once in phase 2, at one rank each time, and
 * only copied afterwards: every rank gets the same bits.
 *
 * Locality comes from coll_args_t.node_of. Nodes are ordered by node_of value and ranks within a
 * node by group rank, so all ranks agree on both rings. Every node must hold the same number of
 * ranks. With one node it is a ring all-reduce in two phases; with one rank per node, a ring
 * all-reduce across nodes.
 *
 * Trace, n = 4 on 2 nodes (node_of = {0, 0, 1, 1}; halves A B; xq is rank q's input):
 *   phase 1, step 0: 0->1 A, 1->0 B, 2->3 A, 3->2 B   0 holds B01, 1 A01, 2 B23, 3 A23
 *   phase 2, steps 1-2: 0<->2 all-reduce B, 1<->3 all-reduce A (each a 2-rank ring over the
 *            two quarters of its half)                 0, 2 hold B; 1, 3 hold A, over all four
 *   phase 3, step 3: 0->1 B, 1->0 A, 2->3 B, 3->2 A   everyone holds A B
 *
 * Cost: 2(L-1) + 2(M-1) steps; each rank sends 2(L-1)/L x S inside its node and 2(M-1)/(M L) x S
 * across nodes. No TMP.
 */
#include <errno.h>
#include <stdlib.h>

#include "builders.h"
#include "coll/ring.h"

typedef struct {
    int node, rank;
} member_t;

typedef struct {
    int L, M;          /* ranks per node, nodes */
    int local, node;   /* this rank's node-local index and node index */
    int *node_ranks;   /* L group ranks of this rank's node, by node-local index */
    int *cross_ranks;  /* M group ranks with this rank's node-local index, by node index */
    member_t *members; /* all ranks sorted by (node_of, rank) */
} layout_t;

static int by_node(const void *x, const void *y)
{
    const member_t *a = x, *b = y;
    if (a->node != b->node)
        return a->node < b->node ? -1 : 1;
    return a->rank < b->rank ? -1 : a->rank > b->rank;
}

static void layout_free(layout_t *l)
{
    free(l->members);
    free(l->node_ranks);
    free(l);
}

/* Works out the two rings of A's rank; NULL with *WHY set when the ranks cannot form them. */
static layout_t *layout_new(const coll_args_t *a, const char **why)
{
    int n = a->nranks;
    *why = "hierarchical needs to know which node each rank is on (coll_args_t.node_of)";
    if (!a->node_of)
        return NULL;
    layout_t *l = calloc(1, sizeof *l);
    *why = "out of memory";
    if (!l || !(l->members = malloc(sizeof(member_t) * (size_t)n)) ||
        !(l->node_ranks = malloc(sizeof(int) * (size_t)(2 * n)))) {
        if (l)
            layout_free(l);
        return NULL;
    }
    for (int q = 0; q < n; q++)
        l->members[q] = (member_t){a->node_of[q], q};
    qsort(l->members, (size_t)n, sizeof *l->members, by_node);
    while (l->L < n && l->members[l->L].node == l->members[0].node)
        l->L++;
    l->M = n / l->L;
    l->cross_ranks = l->node_ranks + l->L;
    /* Nodes of L ranks each: sorted position q starts a new node exactly when q % L == 0. */
    int even = n % l->L == 0;
    for (int q = 1; q < n && even; q++)
        even = (q % l->L == 0) == (l->members[q].node != l->members[q - 1].node);
    if (!even) {
        *why = "hierarchical needs the same number of ranks on every node";
        layout_free(l);
        return NULL;
    }
    for (int q = 0; q < n; q++) {
        if (l->members[q].rank == a->rank) {
            l->node = q / l->L;
            l->local = q % l->L;
        }
    }
    for (int i = 0; i < l->L; i++)
        l->node_ranks[i] = l->members[l->node * l->L + i].rank;
    for (int j = 0; j < l->M; j++)
        l->cross_ranks[j] = l->members[j * l->L + l->local].rank;
    *why = NULL;
    return l;
}

static int supports(const coll_args_t *a, const char **why)
{
    layout_t *l = layout_new(a, why);
    if (!l)
        return -1;
    layout_free(l);
    return 0;
}

static int build(const coll_args_t *a, coll_schedule_t *s)
{
    const char *why;
    layout_t *l = layout_new(a, &why);
    if (!l)
        return -ENOMEM; /* supports() has already accepted the layout */
    int L = l->L, M = l->M, mean = a->op == COLL_MEAN;
    coll_ring_t node = {.n = L, .pos = l->local, .dir = +1, .members = l->node_ranks};
    coll_ring_t cross = {.n = M, .pos = l->node, .dir = +1, .members = l->cross_ranks};
    uint64_t boff, blen;
    coll_block(a->count, L, (l->local + 1) % L, &boff, &blen);
    if (a->nranks == 1)
        coll_copy(s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, a->count);
    for (int k = 0; k < L - 1; k++) {
        coll_step(s);
        coll_ring_rs_step(&node, s, COLL_BUF_IN, 0, a->count, k, mean && M == 1);
    }
    for (int k = 0; k < 2 * (M - 1); k++) {
        coll_step(s);
        if (k < M - 1)
            coll_ring_rs_step(&cross, s, L > 1 ? COLL_BUF_OUT : COLL_BUF_IN, boff, blen, k, mean);
        else
            coll_ring_ag_step(&cross, s, boff, blen, k - (M - 1));
    }
    for (int k = 0; k < L - 1; k++) {
        coll_step(s);
        coll_ring_ag_step(&node, s, 0, a->count, k);
    }
    layout_free(l);
    return coll_schedule_status(s);
}

const coll_algo_t coll_allreduce_hierarchical = {
    .name = "hierarchical",
    .description = "reduce-scatter inside each node, all-reduce across nodes, all-gather back",
    .coll = COLL_ALLREDUCE,
    .build = build,
    .supports = supports,
};
