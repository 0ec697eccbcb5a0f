/* Pipeline schedules (examples/train/pipeline/pipe.c): the exact 1f1b and gpipe orders, their
 * invariants for many shapes, and that stages which block on their receives never deadlock. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <stdio.h>
#include <string.h>

#include "pipeline/pipe.h"

enum { MAXK = 8, MAXG = 24 };

static void format_ops(const pipe_op_t *ops, int n, char *buf, size_t len)
{
    size_t at = 0;
    for (int i = 0; i < n; i++)
        at +=
            (size_t)snprintf(buf + at, len - at, "%s%c%d", i ? " " : "", ops[i].pass, ops[i].micro);
}

static void expect_order(pipe_schedule_t s, int stage, int k, int g, const char *want)
{
    pipe_op_t ops[2 * MAXG];
    char got[256];
    pipe_schedule(s, stage, k, g, ops);
    format_ops(ops, 2 * g, got, sizeof got);
    if (strcmp(got, want))
        fail_msg("%s stage %d of %d, %d micro-batches: \"%s\", expected \"%s\"",
                 pipe_schedule_name(s), stage, k, g, got, want);
}

static void test_exact_orders(void **state)
{
    /* The trace in pipe.h. */
    expect_order(PIPE_1F1B, 0, 3, 4, "F0 F1 F2 B0 F3 B1 B2 B3");
    expect_order(PIPE_1F1B, 1, 3, 4, "F0 F1 B0 F2 B1 F3 B2 B3");
    expect_order(PIPE_1F1B, 2, 3, 4, "F0 B0 F1 B1 F2 B2 F3 B3");
    expect_order(PIPE_GPIPE, 1, 3, 4, "F0 F1 F2 F3 B0 B1 B2 B3");
    expect_order(PIPE_1F1B, 0, 1, 2, "F0 B0 F1 B1"); /* unsplit: micro-batch by micro-batch */
    assert_int_equal(pipe_slots(PIPE_1F1B, 0, 4, 8), 4);
    assert_int_equal(pipe_slots(PIPE_1F1B, 3, 4, 8), 1);
    assert_int_equal(pipe_slots(PIPE_GPIPE, 3, 4, 8), 8);
    pipe_schedule_t s;
    assert_int_equal(pipe_schedule_parse("1f1b", &s), 0);
    assert_int_equal(s, PIPE_1F1B);
    assert_int_equal(pipe_schedule_parse("zigzag", &s), -1);
}

/* Each micro-batch runs forward then backward once, backwards in micro-batch order, and never
 * more in flight than the slots (so slot m % slots is free when micro-batch m needs it). */
static void check_stage(pipe_schedule_t s, int stage, int k, int g)
{
    pipe_op_t ops[2 * MAXG];
    pipe_schedule(s, stage, k, g, ops);
    int fwd = 0, bwd = 0, slots = pipe_slots(s, stage, k, g);
    for (int i = 0; i < 2 * g; i++) {
        if (ops[i].pass == 'F') {
            assert_int_equal(ops[i].micro, fwd++);
            assert_true(fwd - bwd <= slots);
        } else {
            assert_int_equal(ops[i].pass, 'B');
            assert_int_equal(ops[i].micro, bwd++);
            assert_true(bwd <= fwd);
        }
    }
    assert_true(fwd == g && bwd == g);
}

/* Runs K stages through their orders OPS with blocking receives: F(m) on stage s waits for
 * F(m) of stage s-1, B(m) for B(m) of stage s+1; sends never block. Returns 1 when every stage
 * finishes, 0 on a deadlock. */
static int simulate(int k, int g, pipe_op_t ops[][2 * MAXG])
{
    int pc[MAXK] = {0}, fdone[MAXK] = {0}, bdone[MAXK] = {0};
    for (int progress = 1; progress;) {
        progress = 0;
        for (int st = 0; st < k; st++) {
            if (pc[st] == 2 * g)
                continue;
            pipe_op_t op = ops[st][pc[st]];
            int ready = op.pass == 'F' ? st == 0 || fdone[st - 1] > op.micro
                                       : st == k - 1 || bdone[st + 1] > op.micro;
            if (!ready)
                continue;
            (op.pass == 'F' ? fdone : bdone)[st]++;
            pc[st]++;
            progress = 1;
        }
    }
    for (int st = 0; st < k; st++)
        if (pc[st] != 2 * g)
            return 0;
    return 1;
}

static int runs_to_the_end(pipe_schedule_t s, int k, int g)
{
    pipe_op_t ops[MAXK][2 * MAXG];
    for (int st = 0; st < k; st++)
        pipe_schedule(s, st, k, g, ops[st]);
    return simulate(k, g, ops);
}

static void test_all_shapes(void **state)
{
    for (int sched = 0; sched < 2; sched++) {
        for (int k = 1; k <= MAXK; k++) {
            for (int g = k; g <= MAXG; g++) {
                for (int st = 0; st < k; st++)
                    check_stage((pipe_schedule_t)sched, st, k, g);
                if (!runs_to_the_end((pipe_schedule_t)sched, k, g))
                    fail_msg("%s deadlocks with %d stages and %d micro-batches",
                             pipe_schedule_name((pipe_schedule_t)sched), k, g);
            }
        }
    }
}

/* The simulation must be able to fail: stages 0 and 1 wanting B0 before they have run F0
 * wait for stage 2, which waits for their F0. */
static void test_detects_deadlock(void **state)
{
    pipe_op_t ops[3][2 * MAXG] = {{{'B', 0}, {'F', 0}, {'F', 1}, {'B', 1}},
                                  {{'B', 0}, {'F', 0}, {'F', 1}, {'B', 1}},
                                  {{'F', 0}, {'B', 0}, {'F', 1}, {'B', 1}}};
    assert_int_equal(simulate(3, 2, ops), 0);
    pipe_schedule(PIPE_GPIPE, 0, 3, 2, ops[0]);
    pipe_schedule(PIPE_GPIPE, 1, 3, 2, ops[1]);
    assert_int_equal(simulate(3, 2, ops), 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_orders),
        cmocka_unit_test(test_all_shapes),
        cmocka_unit_test(test_detects_deadlock),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
