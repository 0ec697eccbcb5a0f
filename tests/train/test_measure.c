/* Per-step measurements (examples/train/pipeline/measure.c): nearest-rank percentiles, the warm-up
 * rule, a replica's step as its slowest stage, the share of time in the gradient all-reduce; and
 * the sample order both backends share (order.c): a permutation, the same for the same seed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/measure.h"
#include "data/order.h"

static void test_percentiles(void **state)
{
    (void)state;
    double v[100];
    for (int i = 0; i < 100; i++)
        v[i] = 100 - i; /* 100 .. 1, unsorted */
    measure_dist_t d;
    measure_dist(v, 100, &d);
    assert_true(d.p50 == 50 && d.p90 == 90 && d.p99 == 99 && d.max == 100);
    assert_true(d.mean == 50.5 && d.count == 100);
    double one = 7;
    measure_dist(&one, 1, &d);
    assert_true(d.p50 == 7 && d.p99 == 7 && d.max == 7 && d.count == 1);
    double three[3] = {3, 1, 2}; /* ranks ceil(1.5) = 2, ceil(2.7) = 3, ceil(2.97) = 3 */
    measure_dist(three, 3, &d);
    assert_true(d.p50 == 2 && d.p90 == 3 && d.p99 == 3);
    measure_dist(NULL, 0, &d);
    assert_true(d.p50 == 0 && d.max == 0 && d.count == 0);
}

static void test_warmup(void **state)
{
    (void)state;
    assert_int_equal(measure_warmup(3510), MEASURE_WARMUP);
    assert_int_equal(measure_warmup(20), 5);
    assert_int_equal(measure_warmup(19), 4);
    assert_int_equal(measure_warmup(8), 2);
    assert_int_equal(measure_warmup(4), 1);
    assert_int_equal(measure_warmup(3), 0);
    assert_int_equal(measure_warmup(0), 0);
}

/* 2 replicas x 2 stages, 24 steps: stage 1 of replica 1 is the slow one (step i takes i + 10
 * there, i elsewhere), and every IPU spends a quarter of each step in the all-reduce. */
static void test_summary(void **state)
{
    (void)state;
    enum { R = 2, K = 2, N = 24 };
    step_measures_t m = {R * K, N, NULL, NULL, NULL, NULL};
    m.ipu = calloc(R * K, sizeof *m.ipu);
    m.step_s = calloc(R * K * N, sizeof(double));
    m.coll_s = calloc(R * K * N, sizeof(double));
    m.p2p_s = calloc(R * K * N, sizeof(double));
    for (int g = 0; g < R * K; g++) {
        m.ipu[g].first_step_s = g;
        m.ipu[g].host_peak_bytes = 100 * g;
        for (int i = 0; i < N; i++) {
            double t = (i + 1) + (g == 3 ? 10 : 0);
            m.step_s[g * N + i] = t;
            m.coll_s[g * N + i] = t / 4;
            m.p2p_s[g * N + i] = g % 2 ? t / 8 : 0;
        }
    }
    measure_summary_t s;
    assert_int_equal(measure_summarise(&m, R, K, &s), 0);
    assert_int_equal(s.warmup, 5);
    for (int i = 0; i < 5; i++)
        assert_true(s.first[i] == i + 11); /* replica 1's slow stage */
    /* Steps 6..24: replica 0 takes 6..24, replica 1 16..34; 38 values. */
    assert_int_equal(s.step.count, 38);
    assert_true(s.step.max == 34 && s.step.p50 == 20); /* rank 19 of 6..24 and 16..34 */
    assert_true(s.coll_fraction == 0.25);
    assert_true(s.p2p_fraction == (285.0 + 475.0) / 8 / (3 * 285.0 + 475.0)); /* IPUs 1 and 3 */
    assert_true(s.time_to_first_step_s == 3 && s.host_peak_bytes == 300);
    assert_true(measure_coll_fraction(&m, R, K, 1) == 0.25);
    assert_true(measure_coll_fraction(&m, R, K, 2) == 0);
    measure_free(&m);
    assert_null(m.ipu);
}

static void test_order(void **state)
{
    (void)state;
    enum { N = 1000 };
    uint32_t a[N], b[N], c[N];
    order_epoch(7, 3, N, a);
    order_epoch(7, 3, N, b);
    order_epoch(7, 4, N, c);
    assert_memory_equal(a, b, sizeof a);
    assert_true(memcmp(a, c, sizeof a) != 0);
    char seen[N] = {0};
    for (int i = 0; i < N; i++) {
        assert_true(a[i] < N && !seen[a[i]]);
        seen[a[i]] = 1;
    }
    /* Step 5 of 4-step epochs: position 1 of its epoch; replica 2 of 4, 3 micro-batches of 8. */
    order_job_t j = {4, 4 * 3 * 8, 3, 8};
    assert_int_equal(order_position(&j, 5, 2, 1, 3), 96 + 2 * 24 + 8 + 3);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_percentiles),
        cmocka_unit_test(test_warmup),
        cmocka_unit_test(test_summary),
        cmocka_unit_test(test_order),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
