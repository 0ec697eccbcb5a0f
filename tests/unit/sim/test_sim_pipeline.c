/*
 * Pipelines (sim/schedule/pipeline.h): the gpipe and 1f1b orders, what a stage holds, the balancing
 * rule, and the ideal pipeline's step and bubble against the closed forms.
 */
#include <math.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/schedule/pipeline.h"

static void order_text(sim_schedule_t s, int stage, int k, uint32_t a, char *buf)
{
    sim_pipe_op_t ops[64];

    sim_pipe_order(s, stage, k, a, ops);
    buf[0] = '\0';
    for (uint32_t i = 0; i < 2 * a; i++)
        sprintf(buf + strlen(buf), "%s%c%u", i ? " " : "", ops[i].pass, ops[i].micro);
}

static void test_orders(void **state)
{
    char buf[256];

    (void)state;
    /* The trace of sim/schedule/pipeline.h: 1f1b, 3 stages, 4 micro-batches. */
    order_text(SIM_SCHED_1F1B, 0, 3, 4, buf);
    assert_string_equal(buf, "F0 F1 F2 B0 F3 B1 B2 B3");
    order_text(SIM_SCHED_1F1B, 1, 3, 4, buf);
    assert_string_equal(buf, "F0 F1 B0 F2 B1 F3 B2 B3");
    order_text(SIM_SCHED_1F1B, 2, 3, 4, buf);
    assert_string_equal(buf, "F0 B0 F1 B1 F2 B2 F3 B3");
    order_text(SIM_SCHED_GPIPE, 1, 3, 3, buf);
    assert_string_equal(buf, "F0 F1 F2 B0 B1 B2");
    /* Fewer micro-batches than stages: 1f1b fills with what there is. */
    order_text(SIM_SCHED_1F1B, 0, 4, 2, buf);
    assert_string_equal(buf, "F0 F1 B0 B1");
    assert_int_equal(sim_pipe_in_flight(SIM_SCHED_GPIPE, 0, 4, 192), 192);
    assert_int_equal(sim_pipe_in_flight(SIM_SCHED_1F1B, 0, 4, 192), 4);
    assert_int_equal(sim_pipe_in_flight(SIM_SCHED_1F1B, 3, 4, 192), 1);
    assert_int_equal(sim_pipe_in_flight(SIM_SCHED_1F1B, 0, 4, 2), 2);
    assert_int_equal(sim_schedule_parse("1f1b"), SIM_SCHED_1F1B);
    assert_int_equal(sim_schedule_parse("interleaved"), -1);
}

/* Equal stages, free links: (A + K - 1)(f + b) per step, bubble (K - 1) / (A + K - 1). */
static void test_bubble_formula(void **state)
{
    static const int ks[] = {1, 2, 4, 8};
    static const uint32_t as[] = {1, 3, 8, 96, 192};
    sim_time_t f[8], b[8];

    (void)state;
    for (int i = 0; i < 8; i++)
        f[i] = 1000, b[i] = 2000;
    for (int s = 0; s < SIM_SCHED_COUNT; s++) {
        for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
            for (size_t ai = 0; ai < sizeof(as) / sizeof(as[0]); ai++) {
                int k = ks[ki];
                uint32_t a = as[ai];
                sim_pipe_result_t r;

                assert_int_equal(sim_pipe_simulate((sim_schedule_t)s, k, a, f, b, 0, &r), 0);
                assert_int_equal(r.makespan, (sim_time_t)(a + k - 1) * 3000);
                assert_int_equal(r.idle_max, (sim_time_t)(k - 1) * 3000);
                assert_true(fabs(r.bubble - sim_pipe_bubble_formula(k, a)) < 1e-12);
            }
        }
    }
    assert_true(sim_pipe_bubble_formula(4, 192) == 3.0 / 195);
}

static void test_links_and_imbalance(void **state)
{
    sim_time_t f[4] = {1000, 1000, 1000, 1000}, b[4] = {2000, 2000, 2000, 2000};
    sim_pipe_result_t r;

    (void)state;
    /* gpipe with a link time L: the forward wave and the backward wave each cross K - 1 links. */
    assert_int_equal(sim_pipe_simulate(SIM_SCHED_GPIPE, 4, 8, f, b, 100, &r), 0);
    assert_int_equal(r.makespan, (8 + 3) * 3000 + 2 * 3 * 100);
    /* A slow stage sets the pace: (A - 1) of its passes after the pipeline fills. */
    f[2] = 3000, b[2] = 6000;
    assert_int_equal(sim_pipe_simulate(SIM_SCHED_1F1B, 4, 16, f, b, 0, &r), 0);
    assert_true(r.makespan >= 16 * 9000);
    assert_true(r.makespan <= 16 * 9000 + 3 * 9000);
    assert_int_equal(sim_pipe_simulate(SIM_SCHED_1F1B, 0, 16, f, b, 0, &r), -EINVAL);
}

static void test_balance(void **state)
{
    sim_time_t even[6] = {1, 1, 1, 1, 1, 1}, heavy[6] = {5, 1, 1, 1, 1, 1};
    sim_time_t bert[5] = {1, 10, 10, 10, 10};
    uint32_t first[6];

    (void)state;
    assert_int_equal(sim_pipe_balance(even, 6, 3, 0, first), 0);
    assert_int_equal(first[0], 0), assert_int_equal(first[1], 2), assert_int_equal(first[2], 4);
    /* The bottleneck is the first layer alone (5); the rest packs into the second stage. */
    assert_int_equal(sim_pipe_balance(heavy, 6, 2, 0, first), 0);
    assert_int_equal(first[1], 1);
    /* Every stage gets a layer even when one stage could take them all. */
    assert_int_equal(sim_pipe_balance(heavy, 6, 5, 0, first), 0);
    for (int s = 1; s < 5; s++)
        assert_true(first[s] > first[s - 1]);
    /* A pinned first layer alone on stage 0; the rest balanced over the others. */
    assert_int_equal(sim_pipe_balance(bert, 5, 3, 1, first), 0);
    assert_int_equal(first[0], 0), assert_int_equal(first[1], 1), assert_int_equal(first[2], 3);
    assert_int_equal(sim_pipe_balance(even, 6, 7, 0, first), -EINVAL);
    assert_int_equal(sim_pipe_balance(bert, 5, 6, 1, first), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_orders),
        cmocka_unit_test(test_bubble_formula),
        cmocka_unit_test(test_links_and_imbalance),
        cmocka_unit_test(test_balance),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
