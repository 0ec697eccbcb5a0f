/*
 * Every all_to_all algorithm, run with no communication for groups of 1 to MAX_RANKS ranks and
 * awkward block sizes, in place (IN and OUT the same blocks, which needs TMP) and out of place,
 * for every element size, against the inputs (sched_harness.h); documented steps and bytes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sched_harness.h"

#define MAX_RANKS 33

static uint64_t big_count(int n)
{
    return 251u + 2u * (uint64_t)n;
}

static void no_fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    (void)r, (void)in, (void)count, (void)a;
}

static void check_costs(const coll_algo_t *algo, coll_args_t a)
{
    harness_t h;
    assert_int_equal(harness_build(&h, algo, a, 0, no_fill), 0);
    int n = a.nranks;
    /* pairwise: n-1 exchanges and a local step; direct: one exchange and a local step. */
    uint32_t want = strcmp(algo->name, "pairwise") == 0 ? (uint32_t)n : 2;
    if (a.count > 0 && n > 1)
        assert_int_equal(harness_max_steps(&h), want);
    assert_int_equal(harness_max_sent(&h), (uint64_t)(n - 1) * a.count);
    harness_free(&h);
}

static void one_case(const coll_algo_t *algo, int n, int ci, uint64_t count)
{
    coll_dtype_t t = (coll_dtype_t)((n * 3 + ci) % COLL_DTYPE_COUNT);
    coll_args_t a = {.coll = COLL_ALLTOALL,
                     .nranks = n,
                     .count = count,
                     .dtype = t,
                     .op = COLL_SUM,
                     .elem_size = coll_dtype_size(t)};
    assert_int_equal(harness_check(algo, a), 0);
    check_costs(algo, a);
}

static void test_all_algorithms(void **state)
{
    (void)state;
    harness_sweep(COLL_ALLTOALL, MAX_RANKS, big_count, one_case);
}

static void test_larger_groups(void **state)
{
    (void)state;
    static const int sizes[] = {48, 64, 65, 100};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_ALLTOALL, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            coll_args_t a = {.coll = COLL_ALLTOALL,
                             .nranks = sizes[si],
                             .count = 3,
                             .dtype = COLL_U32,
                             .elem_size = 4};
            assert_int_equal(harness_check(algos[k], a), 0);
        }
    }
}

static void test_registry(void **state)
{
    (void)state;
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(COLL_ALLTOALL, &n);
    assert_int_equal(n, 2);
    assert_ptr_equal(coll_algo_find(COLL_ALLTOALL, "pairwise"), list[0]);
    assert_ptr_equal(coll_algo_find(COLL_ALLTOALL, "direct"), list[1]);
    assert_string_equal(coll_algo_env_name(COLL_ALLTOALL), "GCL_ALLTOALL_ALGO");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_larger_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
