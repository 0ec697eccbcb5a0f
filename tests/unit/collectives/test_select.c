/*
 * Forced names (coll_algo_select): the algorithm a name gives, and the messages for names that
 * do not exist or cannot run the call. The automatic choice is the choice layer's
 * (tests/unit/choice).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sched_harness.h"

static void test_select(void **state)
{
    (void)state;
    coll_args_t a = {.coll = COLL_ALLREDUCE,
                     .nranks = 8,
                     .count = 1000,
                     .dtype = COLL_F32,
                     .op = COLL_SUM,
                     .elem_size = 4};
    const coll_algo_t *algo;
    char why[300];
    assert_int_equal(coll_algo_select(&a, NULL, &algo, why, sizeof why), -EINVAL);
    assert_null(algo);
    assert_int_equal(coll_algo_select(&a, "auto", &algo, why, sizeof why), -EINVAL);
    assert_null(algo);
    assert_int_equal(coll_algo_select(&a, "canonical", &algo, why, sizeof why), 0);
    assert_true(algo->canonical);
    assert_int_equal(coll_algo_select(&a, "halving_doubling", &algo, why, sizeof why), 0);
    assert_string_equal(algo->name, "halving_doubling");
    assert_non_null(strstr(why, "forced"));
    assert_int_equal(coll_algo_select(&a, "nope", &algo, why, sizeof why), -EINVAL);
    assert_null(algo);
    assert_non_null(strstr(why, "nope"));
    assert_non_null(strstr(why, "meet_in_middle_ring")); /* lists the known names */
    assert_int_equal(coll_algo_select(&a, "hierarchical", &algo, why, sizeof why), -EINVAL);
    assert_non_null(strstr(why, "node_of"));
    assert_int_equal(coll_algo_select(&a, "nope", &algo, NULL, 0), -EINVAL);
    a.coll = COLL_BROADCAST;
    assert_int_equal(coll_algo_select(&a, "chain", &algo, why, sizeof why), 0);
    assert_int_equal(algo->coll, COLL_BROADCAST);
    assert_null(coll_algo_env_name(COLL_COLLECTIVE_COUNT));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
