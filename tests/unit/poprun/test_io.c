/*
 * Unit tests of poprun's stream handling: line splitting (output tagging), status markers,
 * mpirun's notices, the filter of mpirun's stderr, and the exit status and message of a job.
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

#include "common/linebuf.h"
#include "common/marker.h"
#include "launcher/notice.h"
#include "launcher/outcome.h"
#include "plan/plan.h"

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
    /* The stops that did not come from poprun. */
    struct marker stops[] = {{2, MARKER_STOP, 15}, {0, MARKER_STOPPED, 2}};
    const char *const stop_lines[] = {"@@poprun-status tok 2 stop 15\n",
                                      "@@poprun-status tok 0 stopped 2\n"};
    for (int i = 0; i < 2; i++) {
        n = marker_format(line, sizeof(line), "tok", &stops[i]);
        assert_string_equal(line, stop_lines[i]);
        assert_true(marker_find(line, n - 1, "tok", &got, &start, &end));
        assert_int_equal(got.instance, stops[i].instance);
        assert_int_equal(got.kind, stops[i].kind);
        assert_int_equal(got.value, stops[i].value);
    }
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
    /* A death by a signal wins over an exit status reported before it (the survivors of a
     * kill -9 on another host may be reported first). */
    assert_int_equal(o.failure.instance, 1);
    assert_int_equal(o.failure.kind, MARKER_SIGNAL);
    assert_int_equal(o.failure.value, 9);

    /* With -v the notices stay. */
    struct sink v = {{0}, 0};
    struct outcome ov = {.token = "tok", .verbose = 1, .emit = collect, .emit_ctx = &v};
    feed_lines(&ov, after);
    assert_non_null(strstr(v.buf, "Primary job"));
}

/* A program's stdout line, plain or behind mpirun's --tag-output / --timestamp-output tag. */
static void test_filter_stdout(void **state)
{
    struct sink out = {{0}, 0};
    /* One sink for both: the lines that are not this job's stdout pass to emit, in order. */
    struct outcome o = {.token = "tok", .emit = collect, .emit_out = collect, .emit_ctx = &out};
    const char *const lines[] = {"@@poprun-out tok [instance 0] plain",
                                 "[1,7]<stderr>:@@poprun-out tok [instance 7] tagged",
                                 "Thu Dec  3 22:00:00 2026[1,2]<stderr>:@@poprun-out tok x",
                                 "@@poprun-out other [instance 1] not ours",
                                 "@@poprun-out tok",
                                 NULL};
    feed_lines(&o, lines);
    assert_string_equal(out.buf, "[instance 0] plain|[1,7]<stdout>:[instance 7] tagged|"
                                 "Thu Dec  3 22:00:00 2026[1,2]<stdout>:x|"
                                 "@@poprun-out other [instance 1] not ours|@@poprun-out tok|");
    (void)state;
}

/* mpirun's notice of a rank's death by a signal, as OpenMPI 4.1 prints it. */
static const char death9[] =
    "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9 (Killed).";

static void test_notice(void **state)
{
    struct notice_death d;
    assert_true(notice_parse_death(death9, strlen(death9), &d));
    assert_int_equal(d.rank, 1);
    assert_int_equal(d.signo, 9);
    assert_string_equal(d.node, "vm");
    /* Another launcher's name; no signal name; a node name cut to fit. */
    const char *other = "mpiexec noticed that process rank 12 with PID 4242 on node h2 exited "
                        "on signal 11.";
    assert_true(notice_parse_death(other, strlen(other), &d));
    assert_int_equal(d.rank, 12);
    assert_int_equal(d.signo, 11);
    assert_string_equal(d.node, "h2");
    char longer[256];
    snprintf(longer, sizeof(longer),
             "mpirun noticed that process rank 3 with PID 1 on node %0100d exited on signal 6", 0);
    assert_true(notice_parse_death(longer, strlen(longer), &d));
    assert_int_equal(strlen(d.node), NOTICE_NODE_MAX - 1);
    assert_int_equal(d.rank, 3);
    assert_int_equal(d.signo, 6);
    const char *const bad[] = {
        /* A program's line, tagged by its wrapper. */
        "[instance 0] mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9",
        " mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9",
        "mpirun noticed that process rank x with PID 0 on node vm exited on signal 9",
        "mpirun noticed that process rank 1 with PID 0 on node  exited on signal 9",
        "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 0",
        "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal 9x",
        "mpirun noticed that process rank 1 with PID 0 on node vm exited on signal",
        "mpirun noticed that the job aborted, but has no info as to the process",
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(notice_parse_death(bad[i], strlen(bad[i]), &d));

    const char *restate = "Primary job  terminated normally, but 1 process returned";
    assert_true(notice_is_restatement(restate, strlen(restate)));
    const char *const not_restate[] = {
        "[instance 0] Primary job  terminated normally, but 1 process returned",
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "While primary job  terminated normally, 1 process returned",
    };
    for (size_t i = 0; i < sizeof(not_restate) / sizeof(not_restate[0]); i++)
        assert_false(notice_is_restatement(not_restate[i], strlen(not_restate[i])));

    assert_true(notice_is_frame(frame, strlen(frame)));
    assert_false(notice_is_frame("-----", 5));
    assert_false(notice_is_frame("------------------------- x", 27));
    /* A line as the reader holds it: LEN bytes of dashes with no NUL after them (under ASan a
     * read past LEN is an error). */
    char *dashes = malloc(30);
    assert_non_null(dashes);
    memset(dashes, '-', 30);
    assert_true(notice_is_frame(dashes, 30));
    dashes[29] = 'x';
    assert_false(notice_is_frame(dashes, 30));
    free(dashes);
}

/* What mpirun 4.1 writes when the wrapper of instance 1 is killed with SIGKILL. */
static const char *const wrapper_killed[] = {
    "[instance 0] step",
    frame,
    "Primary job  terminated normally, but 1 process returned",
    "a non-zero exit code. Per user-direction, the job has been aborted.",
    frame,
    frame,
    death9,
    frame,
    NULL,
};

static void reset(struct sink *s)
{
    s->len = 0;
    s->buf[0] = '\0';
}

/* Feeds LINES (with poprun interrupted by INTERRUPT_SIG, or not) and checks the failure named. */
static void check_named(const char *const *lines, int interrupt_sig, int instance, int kind,
                        int value)
{
    struct sink s = {{0}, 0};
    struct outcome o = {
        .token = "tok", .interrupt_sig = interrupt_sig, .emit = collect, .emit_ctx = &s};
    feed_lines(&o, lines);
    outcome_filter_finish(&o);
    assert_string_equal(s.buf, "");
    assert_true(o.have_failure);
    assert_int_equal(o.failure.instance, instance);
    assert_int_equal(o.failure.kind, kind);
    assert_int_equal(o.failure.value, value);
}

/* Which marker names the failure: the first, unless a death by a signal follows exit statuses. */
static void test_filter_marker_order(void **state)
{
    const char *const exit_then_kill[] = {"@@poprun-status tok 0 exit 1",
                                          "@@poprun-status tok 3 signal 9", NULL};
    const char *const kill_then_exit[] = {"@@poprun-status tok 3 signal 9",
                                          "@@poprun-status tok 0 exit 1", NULL};
    const char *const exits[] = {"@@poprun-status tok 2 exit 1", "@@poprun-status tok 0 exit 4",
                                 NULL};
    const char *const kills[] = {"@@poprun-status tok 1 signal 11",
                                 "@@poprun-status tok 2 signal 9", NULL};
    const char *const exit_then_kills[] = {"@@poprun-status tok 0 exit 1",
                                           "@@poprun-status tok 1 signal 6",
                                           "@@poprun-status tok 2 signal 9", NULL};
    check_named(exit_then_kill, 0, 3, MARKER_SIGNAL, 9);
    check_named(kill_then_exit, 0, 3, MARKER_SIGNAL, 9);
    check_named(exits, 0, 2, MARKER_EXIT, 1);
    check_named(kills, 0, 1, MARKER_SIGNAL, 11);
    check_named(exit_then_kills, 0, 1, MARKER_SIGNAL, 6);
    /* Interrupted: the deaths are part of ending the job; the first failure stays. */
    check_named(exit_then_kill, SIGTERM, 0, MARKER_EXIT, 1);
}

static void test_filter_wrapper_death(void **state)
{
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed_lines(&o, wrapper_killed);
    outcome_filter_finish(&o);
    /* Both notices go: the first only restates the second. */
    assert_string_equal(s.buf, "[instance 0] step|");
    assert_true(o.have_failure);
    assert_true(o.wrapper_died);
    assert_int_equal(o.failure.instance, 1);
    assert_int_equal(o.failure.kind, MARKER_SIGNAL);
    assert_int_equal(o.failure.value, 9);
    assert_string_equal(o.wrapper_node, "vm");

    /* Across hosts, the survivors' lines may come between the two notices. */
    struct outcome o1 = {.token = "tok", .emit = collect, .emit_ctx = &s};
    reset(&s);
    feed_lines(&o1, (const char *const[]){frame, "Primary job  terminated normally, but 1 x",
                                          "a non-zero exit code.", frame, "[instance 0] error",
                                          frame, death9, frame, "[instance 2] error", NULL});
    outcome_filter_finish(&o1);
    assert_string_equal(s.buf, "[instance 0] error|[instance 2] error|");
    assert_true(o1.wrapper_died);
    assert_int_equal(o1.failure.instance, 1);

    /* A marker that came first was most likely a consequence: the wrapper's death wins. */
    struct outcome o2 = {.token = "tok", .emit = collect, .emit_ctx = &s};
    reset(&s);
    const char *const marker_first[] = {"@@poprun-status tok 0 exit 1", NULL};
    feed_lines(&o2, marker_first);
    feed_lines(&o2, wrapper_killed);
    outcome_filter_finish(&o2);
    assert_string_equal(s.buf, "[instance 0] step|");
    assert_true(o2.wrapper_died);
    assert_int_equal(o2.failure.instance, 1);

    /* Once poprun was interrupted, a death is part of ending the job. */
    struct outcome o3 = {.token = "tok", .interrupt_sig = SIGINT, .emit = collect, .emit_ctx = &s};
    feed_lines(&o3, wrapper_killed);
    assert_false(o3.have_failure);

    /* Only a notice's first line counts: not a line outside notices. */
    struct outcome o4 = {.token = "tok", .emit = collect, .emit_ctx = &s};
    reset(&s);
    const char *const loose[] = {death9, NULL};
    feed_lines(&o4, loose);
    assert_false(o4.have_failure);
    assert_string_equal(s.buf, "mpirun noticed that process rank 1 with PID 0 on node vm exited "
                               "on signal 9 (Killed).|");

    /* With -v every line stays, in order. */
    struct sink v = {{0}, 0};
    struct outcome ov = {.token = "tok", .verbose = 1, .emit = collect, .emit_ctx = &v};
    feed_lines(&ov, wrapper_killed);
    outcome_filter_finish(&ov);
    assert_true(ov.wrapper_died);
    char want[2048];
    want[0] = '\0';
    for (const char *const *l = wrapper_killed; *l; l++)
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s|", *l);
    assert_string_equal(v.buf, want);
}

/* A restating notice is only held back: another failure's notices pass, whole and in order. */
static void test_filter_held(void **state)
{
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    const char *const other[] = {
        frame,
        "Primary job  terminated normally, but 1 process returned",
        "a non-zero exit code. Per user-direction, the job has been aborted.",
        frame,
        frame,
        "mpirun detected that one or more processes exited with non-zero status, thus causing",
        "  Exit code:    143",
        frame,
        NULL,
    };
    char want[2048];
    want[0] = '\0';
    for (const char *const *l = other; *l; l++)
        snprintf(want + strlen(want), sizeof(want) - strlen(want), "%s|", *l);
    feed_lines(&o, other);
    outcome_filter_finish(&o);
    assert_string_equal(s.buf, want);
    assert_false(o.have_failure);

    /* Held until mpirun's next notice or the end; the instances' lines meanwhile pass it. */
    reset(&s);
    struct outcome o2 = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed_lines(&o2, (const char *const[]){frame, "Primary job  terminated normally, but 1 x", frame,
                                          "[instance 0] late", NULL});
    assert_string_equal(s.buf, "[instance 0] late|");
    outcome_filter_finish(&o2);
    snprintf(want, sizeof(want),
             "[instance 0] late|%s|Primary job  terminated normally, but 1 x|%s|", frame, frame);
    assert_string_equal(s.buf, want);
    reset(&s);
    feed_lines(&o2, (const char *const[]){frame, "Primary job  terminated normally, but 1 x", frame,
                                          "[instance 1] err", frame, "other notice", frame, NULL});
    snprintf(want, sizeof(want),
             "[instance 1] err|%s|Primary job  terminated normally, but 1 x|%s|%s|other notice|%s|",
             frame, frame, frame, frame);
    assert_string_equal(s.buf, want);

    /* A failure known by the end drops it. */
    reset(&s);
    struct outcome o3 = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed_lines(&o3, (const char *const[]){frame, "Primary job  terminated normally, but 1 x", frame,
                                          "@@poprun-status tok 1 exit 2", NULL});
    outcome_filter_finish(&o3);
    assert_string_equal(s.buf, "");
    assert_int_equal(o3.failure.value, 2);
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

    o.have_failure = true;
    o.wrapper_died = true;
    o.failure = (struct marker){3, MARKER_SIGNAL, SIGKILL};
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 137);
    assert_string_equal(msg, "instance 3 (host h2) was killed by signal 9 (SIGKILL): its poprun "
                             "wrapper died, and its program with it");
    /* A rank beyond the plan: mpirun's name of its node. */
    o.failure.instance = 7;
    snprintf(o.wrapper_node, sizeof(o.wrapper_node), "node7");
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 137);
    assert_string_equal(msg, "instance 7 (host node7) was killed by signal 9 (SIGKILL): its "
                             "poprun wrapper died, and its program with it");
    o.have_failure = false;
    o.wrapper_died = false;

    o.mpirun_status = SIGSEGV;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 128 + SIGSEGV);
    assert_string_equal(msg, "mpirun was killed by signal 11 (SIGSEGV)");
    plan_free(&p);
    strvec_free(&hosts);
}

/* mpirun could not start a daemon: ssh's line and mpirun's banner become one line (exit 1);
 * with -v both pass, in order; once an instance spoke, the lines kept back pass. */
static void test_start_failure(void **state)
{
    (void)state;
    const char *ssh = "ssh: connect to host h2 port 22: Connection refused";
    const char *const lines[] = {ssh,
                                 frame,
                                 "ORTE was unable to reliably start one or more daemons.",
                                 "This usually is caused by:",
                                 frame,
                                 NULL};
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed_lines(&o, lines);
    outcome_filter_finish(&o);
    assert_string_equal(s.buf, "");
    assert_true(o.start_failed);

    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    strvec_push(&hosts, "h1");
    strvec_push(&hosts, "h2.example.org");
    struct plan_request req = {2, 2, 1, 0, &hosts};
    char msg[512], err[256];
    assert_int_equal(plan_layout(&req, 1, &p, err, sizeof(err)), 0);
    o.mpirun_status = 255 << 8;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 1);
    assert_string_equal(msg, "cannot start instances on host 'h2.example.org': ssh: connect to "
                             "host h2 port 22: Connection refused");

    reset(&s);
    struct outcome v = {.token = "tok", .verbose = 1, .emit = collect, .emit_ctx = &s};
    feed_lines(&v, lines);
    outcome_filter_finish(&v);
    assert_non_null(strstr(s.buf, ssh));
    assert_true(strstr(s.buf, ssh) < strstr(s.buf, "ORTE was unable"));

    reset(&s);
    struct outcome r = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed_lines(&r, (const char *const[]){"a warning of mpirun's", "[instance 0] hello", NULL});
    assert_string_equal(s.buf, "a warning of mpirun's|[instance 0] hello|");
    assert_false(r.start_failed);
    plan_free(&p);
    strvec_free(&hosts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linebuf),
        cmocka_unit_test(test_marker),
        cmocka_unit_test(test_filter),
        cmocka_unit_test(test_filter_stdout),
        cmocka_unit_test(test_notice),
        cmocka_unit_test(test_filter_marker_order),
        cmocka_unit_test(test_filter_wrapper_death),
        cmocka_unit_test(test_filter_held),
        cmocka_unit_test(test_exit_status),
        cmocka_unit_test(test_start_failure),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
