/*
 * The automatic choice (coll_algo_auto / coll_algo_choose) and forced names
 * (coll_algo_select): what the documented heuristic picks, that every pick can run its
 * arguments, and the messages for names that do not exist or cannot run.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <string.h>

#include "sched_harness.h"

#define KIB ((uint64_t)1 << 10)
#define MIB ((uint64_t)1 << 20)

static const coll_algo_t *pick(coll_collective_t c, int n, uint64_t bytes, const int *node_of)
{
    coll_args_t a = {.coll = c,
                     .nranks = n,
                     .count = bytes / 4,
                     .dtype = COLL_F32,
                     .op = COLL_SUM,
                     .elem_size = 4,
                     .node_of = node_of};
    char why[200];
    const coll_algo_t *algo = coll_algo_choose(&a, why, sizeof why);
    assert_non_null(algo);
    assert_ptr_equal(algo, coll_algo_auto(&a));
    /* The sentence for the log names the pick and the size. */
    assert_non_null(strstr(why, algo->name));
    assert_non_null(strstr(why, coll_collective_name(c)));
    return algo;
}

static void expect(coll_collective_t c, int n, uint64_t bytes, const int *node_of, const char *name)
{
    const coll_algo_t *algo = pick(c, n, bytes, node_of);
    if (strcmp(algo->name, name) != 0)
        fail_msg("%s of %llu bytes on %d ranks: auto picked %s, want %s", coll_collective_name(c),
                 (unsigned long long)bytes, n, algo->name, name);
}

static void test_heuristic(void **state)
{
    (void)state;
    int two_nodes[16], one_per_node[16], uneven[16];
    harness_layout(two_nodes, 16, 8, 1);
    harness_layout(one_per_node, 16, 1, 1);
    for (int q = 0; q < 16; q++)
        uneven[q] = q < 10 ? 0 : 1;

    expect(COLL_ALLREDUCE, 1, 64 * MIB, NULL, "clockwise_ring");
    expect(COLL_ALLREDUCE, 8, 16, NULL, "broadcast");
    expect(COLL_ALLREDUCE, 8, 4 * KIB, NULL, "broadcast");
    expect(COLL_ALLREDUCE, 16, 16, NULL, "recursive_doubling");
    expect(COLL_ALLREDUCE, 8, 64 * KIB, NULL, "recursive_doubling");
    expect(COLL_ALLREDUCE, 8, 256 * KIB, NULL, "halving_doubling");
    expect(COLL_ALLREDUCE, 16, 64 * MIB, two_nodes, "hierarchical");
    expect(COLL_ALLREDUCE, 16, MIB, two_nodes, "hierarchical");
    expect(COLL_ALLREDUCE, 16, 64 * MIB, one_per_node, "bidirectional_ring_pair");
    expect(COLL_ALLREDUCE, 16, 4 * MIB, one_per_node, "double_binary_tree");
    expect(COLL_ALLREDUCE, 16, 4 * MIB, uneven, "double_binary_tree");
    expect(COLL_ALLREDUCE, 16, 64 * MIB, uneven, "bidirectional_ring_pair");
    expect(COLL_ALLREDUCE, 8, 4 * MIB, NULL, "bidirectional_ring_pair");
    expect(COLL_ALLREDUCE, 2, 64 * MIB, NULL, "clockwise_ring");

    expect(COLL_REDUCE_SCATTER, 8, 256, NULL, "direct");
    expect(COLL_REDUCE_SCATTER, 8, 16 * KIB, NULL, "recursive_halving");
    expect(COLL_REDUCE_SCATTER, 8, MIB, NULL, "ring");
    expect(COLL_ALLGATHER, 4, 1 * KIB, NULL, "direct");
    expect(COLL_ALLGATHER, 64, 1 * KIB, NULL, "bruck");
    expect(COLL_ALLGATHER, 8, MIB, NULL, "ring");
    expect(COLL_BROADCAST, 64, 4 * KIB, NULL, "binomial_tree");
    expect(COLL_BROADCAST, 8, 16 * MIB, NULL, "chain");
    expect(COLL_BROADCAST, 64, 16 * MIB, NULL, "scatter_allgather");
    expect(COLL_ALLTOALL, 8, 1 * KIB, NULL, "direct");
    expect(COLL_ALLTOALL, 8, MIB, NULL, "pairwise");
    expect(COLL_BARRIER, 8, 0, NULL, "dissemination");

    /* The sentence for the log says where the ranks are. */
    coll_args_t a = {.coll = COLL_ALLREDUCE,
                     .nranks = 16,
                     .count = 16 * MIB,
                     .dtype = COLL_F32,
                     .elem_size = 4,
                     .node_of = two_nodes};
    char why[200];
    coll_algo_choose(&a, why, sizeof why);
    assert_non_null(strstr(why, "67108864 bytes over 16 ranks (2 nodes of 8): hierarchical"));
    a.node_of = uneven;
    coll_algo_choose(&a, why, sizeof why);
    assert_non_null(strstr(why, "(2 nodes, uneven)"));
}

/* Whatever the sizes and layouts, auto picks an algorithm of the right collective that builds. */
static void test_picks_always_build(void **state)
{
    (void)state;
    static const int sizes[] = {1, 2, 3, 4, 7, 8, 16, 17, 33, 64};
    static const uint64_t bytes[] = {0, 4, 4 * KIB, 64 * KIB, MIB, 16 * MIB, 256 * MIB};
    int node_of[64];
    for (int c = 0; c < COLL_COLLECTIVE_COUNT; c++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            for (size_t b = 0; b < sizeof bytes / sizeof bytes[0]; b++) {
                for (int layout = 0; layout < 3; layout++) {
                    int n = sizes[si];
                    harness_layout(node_of, n, n % 2 == 0 && layout == 1 ? 2 : 1, 1);
                    if (layout == 2 && n > 2)
                        node_of[0] = -1; /* uneven */
                    coll_args_t a = {.coll = (coll_collective_t)c,
                                     .rank = n - 1,
                                     .nranks = n,
                                     .count = bytes[b] / 4,
                                     .dtype = COLL_F32,
                                     .op = COLL_SUM,
                                     .elem_size = 4,
                                     .node_of = layout ? node_of : NULL};
                    const coll_algo_t *algo = coll_algo_auto(&a);
                    assert_non_null(algo);
                    assert_int_equal(algo->coll, c);
                    coll_schedule_t s;
                    coll_schedule_init(&s);
                    const char *why = NULL;
                    assert_int_equal(coll_build(algo, &a, &s, &why), 0);
                    coll_schedule_free(&s);
                }
            }
        }
    }
}

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
    assert_int_equal(coll_algo_select(&a, NULL, &algo, why, sizeof why), 0);
    assert_ptr_equal(algo, coll_algo_auto(&a));
    assert_int_equal(coll_algo_select(&a, "auto", &algo, why, sizeof why), 0);
    assert_ptr_equal(algo, coll_algo_auto(&a));
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
        cmocka_unit_test(test_heuristic),
        cmocka_unit_test(test_picks_always_build),
        cmocka_unit_test(test_select),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
