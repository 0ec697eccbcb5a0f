/*
 * Every reduce_scatter algorithm, run with no communication for groups of 1 to MAX_RANKS ranks
 * and awkward block sizes, in place (OUT is block r of IN) and out of place, for every valid
 * type/operator pair, against plain folds over the inputs (sched_harness.h); determinism with
 * inexact data; documented step counts and bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
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

/* Block sizes are per rank: the large one need not be large per block, just awkward. */
static uint64_t big_count(int n)
{
    return 509u + 2u * (uint64_t)n;
}

static void no_fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    (void)r, (void)in, (void)count, (void)a;
}

/* Steps and elements sent, as each algorithm's header comment documents. */
static void check_costs(const coll_algo_t *algo, coll_args_t a)
{
    harness_t h;
    assert_int_equal(harness_build(&h, algo, a, 0, no_fill), 0);
    int n = a.nranks, lg = log2_floor(n), np2 = (1 << lg) != n;
    uint64_t c = a.count, all = (uint64_t)n * c;
    uint32_t steps = harness_max_steps(&h), want_steps;
    uint64_t sent = harness_max_sent(&h), max_sent;
    if (strcmp(algo->name, "ring") == 0) {
        want_steps = (uint32_t)(n - 1);
        max_sent = (uint64_t)(n - 1) * c;
    } else if (strcmp(algo->name, "recursive_halving") == 0) {
        want_steps = (uint32_t)(lg + 2 * np2);
        max_sent = np2 ? all + c : all - all / (uint64_t)(1 << lg);
    } else {
        want_steps = 1;
        max_sent = (uint64_t)(n - 1) * c;
    }
    if (c > 0 && n > 1 && steps != want_steps)
        fail_msg("%s n=%d: %u steps, documented %u", algo->name, n, steps, want_steps);
    if (sent > max_sent)
        fail_msg("%s n=%d count=%llu: a rank sends %llu elements, documented at most %llu",
                 algo->name, n, (unsigned long long)c, (unsigned long long)sent,
                 (unsigned long long)max_sent);
    harness_free(&h);
}

static void one_case(const coll_algo_t *algo, int n, int ci, uint64_t count)
{
    int per = ci < 4 ? 2 : 1;
    for (int j = 0; j < per; j++) {
        int p = ((n * 5 + ci) * 2 + j) % npairs;
        coll_args_t a = {.coll = COLL_REDUCE_SCATTER,
                         .nranks = n,
                         .count = count,
                         .dtype = pair_type[p],
                         .op = pair_op[p],
                         .elem_size = coll_dtype_size(pair_type[p])};
        assert_int_equal(harness_check(algo, a), 0);
        if (j == 0 && a.op != COLL_LOCAL) /* LOCAL does not communicate */
            check_costs(algo, a);
    }
}

static void test_all_algorithms(void **state)
{
    (void)state;
    harness_sweep(COLL_REDUCE_SCATTER, MAX_RANKS, big_count, one_case);
}

static void test_deterministic(void **state)
{
    (void)state;
    static const struct {
        coll_dtype_t t;
        coll_redop_t op;
    } cases[] = {{COLL_F32, COLL_SUM}, {COLL_F16, COLL_MEAN}, {COLL_BF16, COLL_SUM},
                 {COLL_F32, COLL_MAX}, {COLL_F32, COLL_MIN},  {COLL_F16, COLL_MAX}};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_REDUCE_SCATTER, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (int n = 2; n <= 13; n++) {
            coll_args_t a = {.coll = COLL_REDUCE_SCATTER,
                             .nranks = n,
                             .count = 257,
                             .dtype = cases[n % 6].t,
                             .op = cases[n % 6].op,
                             .elem_size = coll_dtype_size(cases[n % 6].t)};
            assert_int_equal(harness_check_deterministic(algos[k], a), 0);
        }
    }
}

/* LOCAL keeps each rank's own block, without communication. */
static void test_local(void **state)
{
    (void)state;
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_REDUCE_SCATTER, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        coll_args_t a = {.coll = COLL_REDUCE_SCATTER,
                         .nranks = 5,
                         .count = 7,
                         .dtype = COLL_I32,
                         .op = COLL_LOCAL,
                         .elem_size = 4};
        assert_int_equal(harness_check(algos[k], a), 0);
        harness_t h;
        assert_int_equal(harness_build(&h, algos[k], a, 0, no_fill), 0);
        assert_int_equal(harness_max_sent(&h), 0);
        harness_free(&h);
    }
}

static void test_larger_groups(void **state)
{
    (void)state;
    static const int sizes[] = {48, 64, 65, 100};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_REDUCE_SCATTER, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            coll_args_t a = {.coll = COLL_REDUCE_SCATTER,
                             .nranks = sizes[si],
                             .count = 3,
                             .dtype = COLL_U64,
                             .op = COLL_MAX,
                             .elem_size = 8};
            assert_int_equal(harness_check(algos[k], a), 0);
        }
    }
}

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {"ring", "recursive_halving", "direct", "canonical"};
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(COLL_REDUCE_SCATTER, &n);
    assert_int_equal(n, 4);
    for (size_t i = 0; i < n; i++) {
        assert_ptr_equal(coll_algo_find(COLL_REDUCE_SCATTER, names[i]), list[i]);
        assert_int_equal(list[i]->coll, COLL_REDUCE_SCATTER);
    }
    assert_string_equal(coll_algo_env_name(COLL_REDUCE_SCATTER), "GCL_REDUCE_SCATTER_ALGO");
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
        cmocka_unit_test(test_registry),      cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_deterministic), cmocka_unit_test(test_local),
        cmocka_unit_test(test_larger_groups),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
