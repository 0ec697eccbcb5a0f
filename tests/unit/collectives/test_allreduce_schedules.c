/*
 * Every all_reduce algorithm in the registry, run with no communication for groups of 1 to
 * MAX_RANKS ranks and awkward counts, in place and out of place, for every valid type/operator
 * pair, against references computed independently (plain folds over the ranks' inputs; see
 * sched_harness.h). Also: bitwise identity across ranks, runs and in-place/out-of-place with
 * inexact data, the documented step counts and bytes, hierarchical layouts, and segmenting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sched_harness.h"

#define MAX_RANKS 33
#define MAX_PAIRS 80

static coll_dtype_t pair_type[MAX_PAIRS];
static coll_redop_t pair_op[MAX_PAIRS];
static int npairs;

static int log2_floor(int n)
{
    int k = 0;
    while ((2 << k) <= n)
        k++;
    return k;
}

static int log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* The most steps any rank may take, as each algorithm's header comment documents. */
static uint32_t step_bound(const char *name, int n, uint64_t count, const coll_args_t *a,
                           int per_node)
{
    int lg = log2_floor(n), np2 = (1 << lg) != n;
    if (n == 1)
        return 1;
    if (strstr(name, "ring") && strcmp(name, "meet_in_middle_ring") != 0)
        return (uint32_t)(2 * (n - 1));
    if (strcmp(name, "meet_in_middle_ring") == 0)
        return (uint32_t)(2 * (n / 2));
    if (strcmp(name, "broadcast") == 0 || strcmp(name, "canonical") == 0)
        return 2;
    if (strcmp(name, "recursive_doubling") == 0)
        return (uint32_t)(lg + 1 + 2 * np2);
    if (strcmp(name, "halving_doubling") == 0)
        return (uint32_t)(2 * lg + 2 * np2);
    if (strcmp(name, "hierarchical") == 0)
        return (uint32_t)(2 * (per_node - 1) + 2 * (n / per_node - 1));
    /* double_binary_tree: k segments per tree plus the trees' heights and depths. */
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : COLL_CHUNK_BYTES;
    uint64_t per = chunk / a->elem_size ? chunk / a->elem_size : 1;
    uint64_t k = ((count + 1) / 2 + per - 1) / per;
    k = k < 1 ? 1 : k > COLL_MAX_SEGMENTS ? COLL_MAX_SEGMENTS : k;
    return (uint32_t)k + 2 * (uint32_t)log2_ceil(n) + 2;
}

/* The most elements any rank may send: about 2 x count for the bandwidth-optimal algorithms. */
static uint64_t sent_bound(const char *name, int n, uint64_t count, size_t es)
{
    if (n == 1)
        return 0;
    if (strcmp(name, "broadcast") == 0)
        return (uint64_t)(n - 1) * count;
    if (strcmp(name, "canonical") == 0) /* small vectors go whole to every peer */
        return count * es * (uint64_t)(n - 1) <= (256u << 10) || count < (uint64_t)n
                   ? (uint64_t)(n - 1) * count
                   : 2 * count;
    if (strcmp(name, "recursive_doubling") == 0)
        return (uint64_t)(log2_floor(n) + 1) * count;
    if (strcmp(name, "halving_doubling") == 0 && (1 << log2_floor(n)) != n)
        return 3 * count + 4 * (uint64_t)n; /* the rank standing for two sends the result back */
    return 2 * count + 4 * (uint64_t)n + 2 * COLL_MAX_SEGMENTS;
}

/* A ranks-per-node count that divides n, varying with the case. */
static int per_node_for(int n, int ci)
{
    int divs[64], nd = 0;
    for (int d = 1; d <= n; d++)
        if (n % d == 0)
            divs[nd++] = d;
    return divs[(ci + n) % nd];
}

static void no_fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    (void)r, (void)in, (void)count, (void)a;
}

static void check_costs(const coll_algo_t *algo, coll_args_t a, int per_node)
{
    harness_t h;
    if (harness_build(&h, algo, a, 0, no_fill) != 0)
        return;
    uint32_t bound = step_bound(algo->name, a.nranks, a.count, &a, per_node);
    uint32_t steps = harness_max_steps(&h), path = harness_critical_path(&h);
    /* The bound holds for a rank's own steps and for the longest chain of dependent steps
     * (longer than any rank's own in a pipeline, or when small counts leave blocks empty). */
    steps = path > steps ? path : steps;
    if (steps > bound)
        fail_msg("%s n=%d count=%llu: %u steps, documented at most %u", algo->name, a.nranks,
                 (unsigned long long)a.count, steps, bound);
    uint64_t sent = harness_max_sent(&h);
    if (sent > sent_bound(algo->name, a.nranks, a.count, a.elem_size))
        fail_msg("%s n=%d count=%llu: a rank sends %llu elements", algo->name, a.nranks,
                 (unsigned long long)a.count, (unsigned long long)sent);
    harness_free(&h);
}

static uint64_t big_count(int n)
{
    return 997u * (uint64_t)n + 13;
}

static void one_case(const coll_algo_t *algo, int n, int ci, uint64_t count)
{
    int node_of[MAX_RANKS], per_node = per_node_for(n, ci);
    /* broadcast is for tiny tensors and moves n-1 copies of everything: its large case is
     * smaller (still not a multiple of n) to keep the suite quick under sanitizers. */
    if (ci == 4 && strcmp(algo->name, "broadcast") == 0)
        count = 97u * (uint64_t)n + 13;
    harness_layout(node_of, n, per_node, (n + ci) % 2);
    /* Every pair appears several times per algorithm over the sweep: two per small count, one
     * for the large count, rotating. */
    int per = ci < 4 ? 2 : 1;
    for (int j = 0; j < per; j++) {
        int p = ((n * 5 + ci) * 2 + j) % npairs;
        coll_args_t a = {.coll = COLL_ALLREDUCE,
                         .nranks = n,
                         .count = count,
                         .dtype = pair_type[p],
                         .op = pair_op[p],
                         .elem_size = coll_dtype_size(pair_type[p]),
                         .node_of = node_of,
                         .chunk_bytes = (n + ci + j) % 3 == 0 ? 0 : 40};
        harness_check(algo, a);
        if (j == 0)
            check_costs(algo, a, per_node);
    }
}

static void test_all_algorithms(void **state)
{
    (void)state;
    harness_sweep(COLL_ALLREDUCE, MAX_RANKS, big_count, one_case);
}

/* With inexact data the reduction order matters: every rank must still get the same bits, the
 * same bits in place and out of place, and the same bits from one run to the next. MIN and MAX
 * run on signed zeros and NaN payloads, where the operand order changes the bits. */
static void test_bitwise_identical(void **state)
{
    (void)state;
    static const struct {
        coll_dtype_t t;
        coll_redop_t op;
    } cases[] = {{COLL_F32, COLL_SUM}, {COLL_F16, COLL_SUM}, {COLL_BF16, COLL_MEAN},
                 {COLL_F32, COLL_MIN}, {COLL_F32, COLL_MAX}, {COLL_BF16, COLL_MAX},
                 {COLL_F16, COLL_MIN}, {COLL_F32, COLL_MUL}};
    static const int sizes[] = {2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 31};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLREDUCE, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int n = sizes[si], node_of[MAX_RANKS];
            harness_layout(node_of, n, per_node_for(n, (int)si), (int)si % 2);
            coll_args_t a = {.coll = COLL_ALLREDUCE,
                             .nranks = n,
                             .count = 1031,
                             .dtype = cases[si % 8].t,
                             .op = cases[si % 8].op,
                             .elem_size = coll_dtype_size(cases[si % 8].t),
                             .node_of = node_of,
                             .chunk_bytes = 256};
            harness_check_deterministic(algos[k], a);
        }
    }
}

/* hierarchical: declines without locality or with uneven nodes, and runs any even layout,
 * including one node and one rank per node, in 2(L-1) + 2(M-1) steps. */
static void test_hierarchical_layouts(void **state)
{
    (void)state;
    const coll_algo_t *algo = coll_algo_find(COLL_ALLREDUCE, "hierarchical");
    assert_non_null(algo);
    coll_schedule_t s;
    coll_schedule_init(&s);
    const char *why = NULL;
    coll_args_t a = {.coll = COLL_ALLREDUCE,
                     .nranks = 6,
                     .count = 100,
                     .dtype = COLL_F32,
                     .op = COLL_SUM,
                     .elem_size = 4};
    assert_int_equal(coll_build(algo, &a, &s, &why), -EINVAL);
    assert_non_null(strstr(why, "node_of"));
    int uneven[6] = {0, 0, 0, 1, 1, 2};
    a.node_of = uneven;
    assert_int_equal(coll_build(algo, &a, &s, &why), -EINVAL);
    assert_non_null(strstr(why, "same number of ranks"));
    int scattered[6] = {7, 3, 7, 3, 3, 7}; /* even, but nodes interleave with odd ids */
    a.node_of = scattered;
    assert_int_equal(coll_build(algo, &a, &s, &why), 0);
    coll_schedule_free(&s);

    static const int layouts[][2] = {{12, 12}, {12, 1}, {12, 3}, {12, 4}, {8, 2}, {9, 3}, {1, 1}};
    for (size_t i = 0; i < sizeof layouts / sizeof layouts[0]; i++) {
        int n = layouts[i][0], L = layouts[i][1], node_of[MAX_RANKS];
        for (int contiguous = 0; contiguous < 2; contiguous++) {
            harness_layout(node_of, n, L, contiguous);
            coll_args_t b = {.coll = COLL_ALLREDUCE,
                             .nranks = n,
                             .count = 1000,
                             .dtype = COLL_I32,
                             .op = COLL_SUM,
                             .elem_size = 4,
                             .node_of = node_of};
            assert_int_equal(harness_check(algo, b), 0);
            harness_t h;
            assert_int_equal(harness_build(&h, algo, b, 0, harness_fill), 0);
            assert_int_equal(harness_max_steps(&h), n == 1 ? 1 : 2 * (L - 1) + 2 * (n / L - 1));
            harness_free(&h);
        }
    }
}

/* LOCAL needs no communication whatever the algorithm; invalid arguments are refused. */
static void test_local_and_invalid(void **state)
{
    (void)state;
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLREDUCE, &nalgo);
    coll_schedule_t s;
    coll_schedule_init(&s);
    const char *why;
    for (size_t k = 0; k < nalgo; k++) {
        coll_args_t a = {.coll = COLL_ALLREDUCE,
                         .rank = 2,
                         .nranks = 4,
                         .count = 10,
                         .dtype = COLL_F32,
                         .op = COLL_LOCAL,
                         .elem_size = 4};
        assert_int_equal(coll_build(algos[k], &a, &s, &why), 0);
        assert_string_equal(s.algo, "local");
        assert_int_equal(s.nops, 1);
        assert_int_equal(s.ops[0].kind, COLL_OP_COPY);
        a.op = COLL_MEAN;
        a.dtype = COLL_I32;
        assert_int_equal(coll_build(algos[k], &a, &s, &why), -EINVAL);
        assert_non_null(strstr(why, "mean"));
        a.dtype = COLL_F32;
        a.rank = 4;
        assert_int_equal(coll_build(algos[k], &a, &s, &why), -EINVAL);
        a.rank = 0;
        a.coll = COLL_ALLGATHER;
        assert_int_equal(coll_build(algos[k], &a, &s, &why), -EINVAL);
    }
    coll_schedule_free(&s);
}

/* Pipelined algorithms cut large messages into segments of about chunk_bytes, and never into
 * more than COLL_MAX_SEGMENTS: messages stay small and step counts reasonable. */
static void test_segments(void **state)
{
    (void)state;
    const coll_algo_t *algo = coll_algo_find(COLL_ALLREDUCE, "double_binary_tree");
    static const uint64_t counts[] = {1u << 20, 1u << 22, (uint64_t)3 << 30};
    for (size_t i = 0; i < 3; i++) {
        for (int r = 0; r < 8; r++) {
            coll_args_t a = {.coll = COLL_ALLREDUCE,
                             .rank = r,
                             .nranks = 8,
                             .count = counts[i],
                             .dtype = COLL_F32,
                             .op = COLL_SUM,
                             .elem_size = 4};
            coll_schedule_t s;
            coll_schedule_init(&s);
            const char *why;
            assert_int_equal(coll_build(algo, &a, &s, &why), 0);
            uint64_t per = COLL_CHUNK_BYTES / 4, half = counts[i] / 2;
            uint64_t seg = half / per <= COLL_MAX_SEGMENTS ? per : half / COLL_MAX_SEGMENTS + 1;
            uint64_t nseg = (half + seg - 1) / seg;
            for (uint32_t k = 0; k < s.nops; k++)
                assert_true(s.ops[k].count <= seg);
            assert_true(s.nsteps <= nseg + 2 * 3 + 2);
            assert_true(s.nsteps >= nseg);
            coll_schedule_free(&s);
        }
    }
}

/* Larger groups than the sweep, with a few counts: tree shapes, non-powers of two, layouts. */
static void test_larger_groups(void **state)
{
    (void)state;
    static const int sizes[] = {48, 64, 65, 100, 127};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLREDUCE, &nalgo);
    int *node_of = malloc(128 * sizeof *node_of);
    assert_non_null(node_of);
    for (size_t k = 0; k < nalgo; k++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            int n = sizes[si];
            harness_layout(node_of, n, n % 4 == 0 ? 4 : n % 5 == 0 ? 5 : 1, (int)si % 2);
            coll_args_t a = {.coll = COLL_ALLREDUCE,
                             .nranks = n,
                             .count = 3 * (uint64_t)n + 1,
                             .dtype = COLL_I64,
                             .op = COLL_SUM,
                             .elem_size = 8,
                             .node_of = node_of,
                             .chunk_bytes = 64};
            harness_check(algos[k], a);
        }
    }
    free(node_of);
}

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {
        "clockwise_ring",      "anticlockwise_ring", "bidirectional_ring_pair",
        "meet_in_middle_ring", "broadcast",          "recursive_doubling",
        "halving_doubling",    "double_binary_tree", "hierarchical",
        "canonical"};
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(COLL_ALLREDUCE, &n);
    assert_int_equal(n, sizeof names / sizeof names[0]);
    for (size_t i = 0; i < n; i++) {
        const coll_algo_t *algo = coll_algo_find(COLL_ALLREDUCE, names[i]);
        assert_non_null(algo);
        assert_ptr_equal(algo, list[i]);
        assert_int_equal(algo->coll, COLL_ALLREDUCE);
        assert_non_null(algo->description);
    }
    assert_null(coll_algo_find(COLL_ALLREDUCE, "no_such_algorithm"));
    assert_null(coll_algo_find(COLL_ALLREDUCE, NULL));
    assert_string_equal(coll_algo_env_name(COLL_ALLREDUCE), "GCL_ALLREDUCE_ALGO");
}

static int setup(void **state)
{
    (void)state;
    npairs = harness_pairs(pair_type, pair_op, MAX_PAIRS);
    return npairs > 0 ? 0 : -1;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),          cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_bitwise_identical), cmocka_unit_test(test_hierarchical_layouts),
        cmocka_unit_test(test_local_and_invalid), cmocka_unit_test(test_segments),
        cmocka_unit_test(test_larger_groups),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
