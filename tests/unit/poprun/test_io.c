/*
 * Unit tests of poprun's stream handling: line splitting (output tagging), status markers, the
 * filter of mpirun's stderr, and the exit status and message of a job.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "linebuf.h"
#include "marker.h"
#include "outcome.h"
#include "plan.h"

/* Collects lines as "<line>|" into a buffer. */
struct sink {
    char buf[4096];
    size_t len;
};

static void collect(void *ctx, const char *line, size_t len)
{
    struct sink *s = ctx;
    assert_true(s->len + len + 2 < sizeof(s->buf));
    memcpy(s->buf + s->len, line, len);
    s->len += len;
    s->buf[s->len++] = '|';
    s->buf[s->len] = '\0';
}

static void test_linebuf(void **state)
{
    struct sink s = {{0}, 0};
    struct linebuf lb;
    linebuf_init(&lb, 8, collect, &s);
    linebuf_feed(&lb, "ab\ncd", 5);
    assert_string_equal(s.buf, "ab|");
    linebuf_feed(&lb, "e\n\nfg", 5);
    assert_string_equal(s.buf, "ab|cde||");
    /* A line longer than 8 bytes comes out in pieces of 8. */
    linebuf_feed(&lb, "hijklmnopqrstu\n", 15);
    assert_string_equal(s.buf, "ab|cde||fghijklm|nopqrstu|");
    linebuf_feed(&lb, "tail", 4);
    linebuf_finish(&lb);
    assert_string_equal(s.buf, "ab|cde||fghijklm|nopqrstu|tail|");
    linebuf_finish(&lb); /* nothing left: nothing more */
    assert_string_equal(s.buf, "ab|cde||fghijklm|nopqrstu|tail|");
    linebuf_free(&lb);
}

static void test_marker(void **state)
{
    char line[128];
    struct marker m = {12, MARKER_SIGNAL, 9}, got;
    size_t n = marker_format(line, sizeof(line), "0123abcd", &m);
    assert_string_equal(line, "@@poprun-status 0123abcd 12 signal 9\n");
    assert_int_equal(n, strlen(line));
    size_t start, end;
    assert_true(marker_find(line, n - 1, "0123abcd", &got, &start, &end));
    assert_int_equal(got.instance, 12);
    assert_int_equal(got.kind, MARKER_SIGNAL);
    assert_int_equal(got.value, 9);
    assert_int_equal(start, 0);
    assert_int_equal(end, n - 1);
    /* Found after other text; not found with another token or when malformed. */
    const char *glued = "[instance 1] half@@poprun-status tok 3 exit 42";
    assert_true(marker_find(glued, strlen(glued), "tok", &got, &start, &end));
    assert_int_equal(got.instance, 3);
    assert_int_equal(got.kind, MARKER_EXIT);
    assert_int_equal(got.value, 42);
    assert_int_equal(start, strlen("[instance 1] half"));
    const char *const bad[] = {
        "@@poprun-status other 3 exit 42", "@@poprun-status tok 3 exit",
        "@@poprun-status tok x exit 1",    "@@poprun-status tok 3 quit 1",
        "@@poprun-status tok 3 exit 4x",   "poprun-status tok 3 exit 1",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(marker_find(bad[i], strlen(bad[i]), "tok", &got, &start, &end));
}

static const char frame[] =
    "--------------------------------------------------------------------------";

static void feed_lines(struct outcome *o, const char *const *lines)
{
    for (; *lines; lines++)
        outcome_filter_line(o, *lines, strlen(*lines));
}

static void test_filter(void **state)
{
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    const char *const before[] = {"[instance 0] hello", frame, "mpirun notice", frame, NULL};
    feed_lines(&o, before);
    /* Before any failure, mpirun's notices pass. */
    assert_int_equal(strncmp(s.buf, "[instance 0] hello|---", 22), 0);
    assert_non_null(strstr(s.buf, "|mpirun notice|"));
    s.len = 0;
    s.buf[0] = '\0';
    const char *const after[] = {"@@poprun-status tok 2 exit 3",
                                 "[instance 1] err@@poprun-status tok 1 signal 9",
                                 frame,
                                 "Primary job terminated normally, but 1 process returned",
                                 frame,
                                 "[instance 0] still here",
                                 NULL};
    feed_lines(&o, after);
    assert_string_equal(s.buf, "[instance 1] err|[instance 0] still here|");
    assert_true(o.have_failure);
    assert_int_equal(o.failure.instance, 2); /* the first one reported */
    assert_int_equal(o.failure.value, 3);

    /* With -v the notices stay. */
    struct sink v = {{0}, 0};
    struct outcome ov = {.token = "tok", .verbose = 1, .emit = collect, .emit_ctx = &v};
    feed_lines(&ov, after);
    assert_non_null(strstr(v.buf, "Primary job"));
}

static void test_exit_status(void **state)
{
    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    strvec_push(&hosts, "h1");
    strvec_push(&hosts, "h2");
    struct plan_request req = {4, 4, 1, 0, &hosts};
    char msg[256], err[256];
    assert_int_equal(plan_layout(&req, 1, &p, err, sizeof(err)), 0);

    struct outcome o = {.token = "t"};
    o.mpirun_status = 0;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 0);
    assert_string_equal(msg, "");

    o.have_failure = true;
    o.failure = (struct marker){2, MARKER_EXIT, 3};
    o.mpirun_status = 1 << 8;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 3);
    assert_string_equal(msg, "instance 2 (host h2) exited with status 3");

    o.failure = (struct marker){1, MARKER_SIGNAL, SIGKILL};
    o.interrupt_sig = SIGINT; /* the instance's own failure wins */
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 137);
    assert_string_equal(msg, "instance 1 (host h1) was killed by signal 9 (SIGKILL)");

    o.have_failure = false;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 130);
    assert_string_equal(msg, "interrupted by SIGINT; every instance was ended");

    o.interrupt_sig = 0;
    o.mpirun_status = 213 << 8;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 213);
    assert_string_equal(msg, "mpirun exited with status 213");

    o.mpirun_status = SIGSEGV;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 128 + SIGSEGV);
    assert_string_equal(msg, "mpirun was killed by signal 11 (SIGSEGV)");
    plan_free(&p);
    strvec_free(&hosts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linebuf),
        cmocka_unit_test(test_marker),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_exit_status),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
