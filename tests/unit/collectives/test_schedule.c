/*
 * The schedule contract itself: what coll_schedule_validate refuses, zero-byte tokens, and the
 * errors coll_run_local reports (deadlock, size mismatch, unreceived messages). Each rule gets a
 * schedule that breaks it and one that keeps it, so no check here passes by doing nothing.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "coll/run.h"
#include "coll/schedule.h"

static void init(coll_schedule_t *s, int rank, int nranks, uint64_t count, uint64_t tmp)
{
    coll_schedule_init(s);
    s->algo = "test";
    s->rank = rank;
    s->nranks = nranks;
    s->in_count = s->out_count = count;
    s->tmp_count = tmp;
}

static int valid(const coll_schedule_t *s, const char *expect_in_why)
{
    char why[200] = "";
    int rc = coll_schedule_validate(s, why, sizeof why);
    if (expect_in_why && !strstr(why, expect_in_why))
        fail_msg("expected \"%s\" in \"%s\"", expect_in_why, why);
    return rc;
}

static void test_local_ops_and_sends(void **state)
{
    (void)state;
    coll_schedule_t s;
    /* A local op may not write what a send of its step reads (IN and OUT may be one range). */
    init(&s, 0, 2, 8, 8);
    coll_step(&s);
    coll_send(&s, 1, COLL_BUF_IN, 0, 4);
    coll_reduce_op(&s, COLL_BUF_OUT, 2, COLL_BUF_TMP, 0, 4, 0);
    assert_int_equal(valid(&s, "writes what send"), -1);
    coll_schedule_free(&s);
    /* ... but may write elsewhere, or TMP. */
    init(&s, 0, 2, 8, 8);
    coll_step(&s);
    coll_send(&s, 1, COLL_BUF_IN, 0, 4);
    coll_reduce_op(&s, COLL_BUF_OUT, 4, COLL_BUF_TMP, 0, 4, 0);
    coll_copy(&s, COLL_BUF_TMP, 0, COLL_BUF_IN, 0, 4);
    assert_int_equal(valid(&s, NULL), 0);
    coll_schedule_free(&s);
    /* A COPY onto its own source range writes nothing in place: allowed. */
    init(&s, 0, 2, 8, 0);
    coll_step(&s);
    coll_send(&s, 1, COLL_BUF_IN, 0, 8);
    coll_copy(&s, COLL_BUF_OUT, 0, COLL_BUF_IN, 0, 8);
    assert_int_equal(valid(&s, NULL), 0);
    coll_schedule_free(&s);
    /* In the next step the same write is fine. */
    init(&s, 0, 2, 8, 8);
    coll_step(&s);
    coll_send(&s, 1, COLL_BUF_IN, 0, 4);
    coll_step(&s);
    coll_reduce_op(&s, COLL_BUF_OUT, 2, COLL_BUF_TMP, 0, 4, 0);
    assert_int_equal(valid(&s, NULL), 0);
    coll_schedule_free(&s);
}

static void test_no_writes_to_in(void **state)
{
    (void)state;
    coll_schedule_t s;
    init(&s, 0, 2, 8, 8);
    coll_recv(&s, 1, COLL_BUF_IN, 0, 4);
    assert_int_equal(valid(&s, "writes IN"), -1);
    coll_schedule_free(&s);
    init(&s, 0, 2, 8, 8);
    coll_copy(&s, COLL_BUF_IN, 0, COLL_BUF_TMP, 0, 4);
    assert_int_equal(valid(&s, "writes IN"), -1);
    coll_schedule_free(&s);
}

static void test_receives_and_ranges(void **state)
{
    (void)state;
    coll_schedule_t s;
    init(&s, 0, 3, 8, 0);
    coll_recv(&s, 1, COLL_BUF_OUT, 0, 4);
    coll_recv(&s, 2, COLL_BUF_OUT, 3, 4);
    assert_int_equal(valid(&s, "writes what"), -1);
    coll_schedule_free(&s);
    init(&s, 0, 3, 8, 0);
    coll_recv(&s, 1, COLL_BUF_OUT, 6, 4);
    assert_int_equal(valid(&s, "outside"), -1);
    coll_schedule_free(&s);
    init(&s, 1, 3, 8, 0);
    coll_send(&s, 1, COLL_BUF_IN, 0, 4);
    assert_int_equal(valid(&s, "peer"), -1);
    coll_schedule_free(&s);
}

/* Zero-byte tokens are kept; other empty ops are dropped, and so are the steps they leave empty. */
static void test_tokens(void **state)
{
    (void)state;
    coll_schedule_t s;
    init(&s, 0, 2, 0, 0);
    coll_step(&s);
    coll_send(&s, 1, COLL_BUF_OUT, 0, 0);
    coll_step(&s);
    coll_send_token(&s, 1);
    coll_recv_token(&s, 1);
    assert_int_equal(coll_schedule_status(&s), 0);
    assert_int_equal(s.nsteps, 1);
    assert_int_equal(s.nops, 2);
    assert_int_equal(s.ops[0].count, 0);
    assert_int_equal(s.ops[0].flags, 0); /* COLL_KEEP_EMPTY does not leak into the op */
    assert_int_equal(valid(&s, NULL), 0);
    coll_schedule_free(&s);
}

static int run2(coll_schedule_t *a, coll_schedule_t *b, char *why, unsigned len)
{
    float in[2][8] = {{0}}, out[2][8], tmp[2][8];
    coll_schedule_t *scheds[2] = {a, b};
    void *bufs[2][COLL_BUF_COUNT] = {{in[0], out[0], tmp[0]}, {in[1], out[1], tmp[1]}};
    coll_exec_info_t x = {COLL_F32, COLL_SUM, 4, 2};
    return coll_run_local(scheds, (void *const(*)[COLL_BUF_COUNT])bufs, 2, &x, why, len);
}

static void test_runner_errors(void **state)
{
    (void)state;
    coll_schedule_t a, b;
    char why[200];
    /* Both wait for the other first: deadlock. */
    init(&a, 0, 2, 8, 0);
    init(&b, 1, 2, 8, 0);
    coll_recv(&a, 1, COLL_BUF_OUT, 0, 4);
    coll_step(&a);
    coll_send(&a, 1, COLL_BUF_IN, 0, 4);
    coll_recv(&b, 0, COLL_BUF_OUT, 0, 4);
    coll_step(&b);
    coll_send(&b, 0, COLL_BUF_IN, 0, 4);
    assert_int_equal(run2(&a, &b, why, sizeof why), -1);
    assert_non_null(strstr(why, "deadlock"));
    coll_schedule_free(&a);
    coll_schedule_free(&b);
    /* Sizes disagree. */
    init(&a, 0, 2, 8, 0);
    init(&b, 1, 2, 8, 0);
    coll_send(&a, 1, COLL_BUF_IN, 0, 4);
    coll_recv(&b, 0, COLL_BUF_OUT, 0, 3);
    assert_int_equal(run2(&a, &b, why, sizeof why), -1);
    if (!strstr(why, "sent 4"))
        fail_msg("%s", why);
    coll_schedule_free(&a);
    coll_schedule_free(&b);
    /* A message nobody receives. */
    init(&a, 0, 2, 8, 0);
    init(&b, 1, 2, 8, 0);
    coll_send(&a, 1, COLL_BUF_IN, 0, 4);
    assert_int_equal(run2(&a, &b, why, sizeof why), -1);
    assert_non_null(strstr(why, "never received"));
    coll_schedule_free(&a);
    coll_schedule_free(&b);
    /* And a matched pair runs. */
    init(&a, 0, 2, 8, 0);
    init(&b, 1, 2, 8, 0);
    coll_send(&a, 1, COLL_BUF_IN, 0, 4);
    coll_recv(&b, 0, COLL_BUF_OUT, 0, 4);
    assert_int_equal(run2(&a, &b, why, sizeof why), 0);
    coll_schedule_free(&a);
    coll_schedule_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_local_ops_and_sends), cmocka_unit_test(test_no_writes_to_in),
        cmocka_unit_test(test_receives_and_ranges), cmocka_unit_test(test_tokens),
        cmocka_unit_test(test_runner_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
