/* Replica-group arithmetic: every layout partitions the replicas, ranks are consistent. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "coll/group.h"

static void check_partition(coll_group_t g, int n)
{
    int size = coll_group_size(g, n);
    int seen[64] = {0};
    for (int r = 0; r < n; r++) {
        int rank = coll_group_rank(g, n, r);
        assert_true(rank >= 0 && rank < size);
        /* The member at my rank in my group is me. */
        assert_int_equal(coll_group_member(g, n, r, rank), r);
        for (int q = 0; q < size; q++) {
            int m = coll_group_member(g, n, r, q);
            assert_true(m >= 0 && m < n);
            assert_int_equal(coll_group_index(g, n, m), coll_group_index(g, n, r));
            assert_int_equal(coll_group_rank(g, n, m), q);
        }
        seen[coll_group_index(g, n, r) * size + rank]++;
    }
    for (int i = 0; i < n; i++)
        assert_int_equal(seen[i], 1);
}

static void test_layouts(void **state)
{
    (void)state;
    for (int n = 1; n <= 24; n++) {
        check_partition((coll_group_t){COLL_GROUP_ALL, 0}, n);
        for (int k = 1; k <= n; k++) {
            if (n % k)
                continue;
            check_partition((coll_group_t){COLL_GROUP_CONSECUTIVE, k}, n);
            check_partition((coll_group_t){COLL_GROUP_ORTHOGONAL, k}, n);
        }
    }
}

static void test_examples(void **state)
{
    (void)state;
    coll_group_t c4 = {COLL_GROUP_CONSECUTIVE, 4}, o4 = {COLL_GROUP_ORTHOGONAL, 4};
    /* 16 replicas, consecutive 4: replica 9 is rank 1 of {8, 9, 10, 11}. */
    assert_int_equal(coll_group_index(c4, 16, 9), 2);
    assert_int_equal(coll_group_rank(c4, 16, 9), 1);
    assert_int_equal(coll_group_member(c4, 16, 9, 3), 11);
    /* 16 replicas, orthogonal 4 (stride 4): replica 9 is rank 2 of {1, 5, 9, 13}. */
    assert_int_equal(coll_group_index(o4, 16, 9), 1);
    assert_int_equal(coll_group_rank(o4, 16, 9), 2);
    assert_int_equal(coll_group_member(o4, 16, 9, 3), 13);
}

static void test_check_and_parse(void **state)
{
    (void)state;
    const char *why;
    assert_int_equal(coll_group_check((coll_group_t){COLL_GROUP_CONSECUTIVE, 3}, 8, &why), -1);
    assert_non_null(strstr(why, "divide"));
    assert_int_equal(coll_group_check((coll_group_t){COLL_GROUP_ORTHOGONAL, 0}, 8, &why), -1);
    assert_int_equal(coll_group_check((coll_group_t){COLL_GROUP_ORTHOGONAL, 16}, 8, &why), -1);
    assert_int_equal(coll_group_check((coll_group_t){COLL_GROUP_ORTHOGONAL, 4}, 8, &why), 0);
    coll_group_t g;
    char buf[32];
    assert_int_equal(coll_group_parse("consecutive:4", &g), 0);
    assert_string_equal(coll_group_format(g, buf, sizeof buf), "consecutive:4");
    assert_int_equal(coll_group_parse("orthogonal:2", &g), 0);
    assert_int_equal(g.kind, COLL_GROUP_ORTHOGONAL);
    assert_int_equal(coll_group_parse("all", &g), 0);
    assert_string_equal(coll_group_format(g, buf, sizeof buf), "all");
    assert_int_equal(coll_group_parse("consecutive:", &g), -1);
    assert_int_equal(coll_group_parse("consecutive:0", &g), -1);
    assert_int_equal(coll_group_parse("orthogonal:4x", &g), -1);
    assert_int_equal(coll_group_parse("ring", &g), -1);
    assert_int_equal(coll_group_parse(NULL, &g), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_layouts),
        cmocka_unit_test(test_examples),
        cmocka_unit_test(test_check_and_parse),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
