/*
 * Unit tests of poprun's reliability parts: mpirun's notice of a lost host, the graceful stop's
 * messages and filtering, and the restart loop's decisions (restart.h), run against a scripted
 * sequence of job outcomes. The loop against real jobs is tests/train's train_restart.
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
#include <sys/wait.h>
#include <unistd.h>

#include "launcher/notice.h"
#include "cli/options.h"
#include "launcher/outcome.h"
#include "plan/plan.h"
#include "launcher/restart.h"

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

static void feed(struct outcome *o, const char *const *lines)
{
    for (; *lines; lines++)
        outcome_filter_line(o, *lines, strlen(*lines));
}

static const char frame[] =
    "--------------------------------------------------------------------------";

/* OpenMPI 4.1's notice when a remote daemon goes (help-errmgr-base.txt), as seen with
 * scripts/netns-cluster when h2's orted was killed. */
static const char *const lost_h2[] = {
    frame,
    "ORTE has lost communication with a remote daemon.",
    "",
    "  HNP daemon   : [[49584,0],0] on node h0",
    "  Remote daemon: [[49584,0],2] on node h2",
    "",
    "This is usually due to either a failure of the TCP network",
    "connection to the node, or possibly an internal failure of",
    "the daemon itself. We cannot recover from this failure, and",
    "therefore will terminate the job.",
    frame,
    NULL,
};

static void make_plan(struct plan *p, struct strvec *hosts)
{
    char err[256];
    strvec_push(hosts, "h1");
    strvec_push(hosts, "h2");
    struct plan_request req = {4, 4, 1, 0, hosts};
    assert_int_equal(plan_layout(&req, 1, p, err, sizeof(err)), 0);
}

static void test_lost_node_parse(void **state)
{
    (void)state;
    char node[NOTICE_NODE_MAX];
    assert_true(notice_is_lost_daemon(lost_h2[1], strlen(lost_h2[1])));
    assert_false(notice_is_lost_daemon(lost_h2[3], strlen(lost_h2[3])));
    assert_true(notice_parse_lost_node(lost_h2[4], strlen(lost_h2[4]), node));
    assert_string_equal(node, "h2");
    const char *bad[] = {"  HNP daemon   : [[49584,0],0] on node h0",
                         "  Remote daemon: [[49584,0],2] on node ",
                         "  Remote daemon: [[49584,0],2] on node two words",
                         "[instance 0]   Remote daemon: [[1,0],2] on node h2",
                         "  Remote daemon: no brackets on node h2"};
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        assert_false(notice_parse_lost_node(bad[i], strlen(bad[i]), node));
    char longer[200];
    snprintf(longer, sizeof(longer), "  Remote daemon: [[1,0],2] on node %0100d", 7);
    assert_true(notice_parse_lost_node(longer, strlen(longer), node));
    assert_int_equal(strlen(node), NOTICE_NODE_MAX - 1);
}

static void test_lost_host(void **state)
{
    (void)state;
    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    make_plan(&p, &hosts);
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed(&o, lost_h2);
    /* A survivor's failure afterwards follows from the loss: the loss is what poprun names. */
    feed(&o, (const char *const[]){"[instance 0] transfer failed", "@@poprun-status tok 0 exit 1",
                                   NULL});
    outcome_filter_finish(&o);
    assert_string_equal(s.buf, "[instance 0] transfer failed|"); /* the notice is dropped */
    assert_true(o.host_lost);
    char msg[256];
    o.mpirun_status = 0;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 1);
    assert_string_equal(msg, "host h2 is lost: mpirun lost contact with its daemon (instances 2, "
                             "3 ran there)");
    o.mpirun_status = 5 << 8;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 5);
    snprintf(o.lost_node, sizeof(o.lost_node), "elsewhere");
    outcome_exit_status(&o, &p, msg, sizeof(msg));
    assert_string_equal(msg, "host elsewhere is lost: mpirun lost contact with its daemon");
    assert_true(restart_wanted(&o, 5));

    /* With -v the notice stays; once interrupted, a loss is part of ending the job. */
    struct sink v = {{0}, 0};
    struct outcome ov = {.token = "tok", .verbose = 1, .emit = collect, .emit_ctx = &v};
    feed(&ov, lost_h2);
    outcome_filter_finish(&ov);
    assert_non_null(strstr(v.buf, "|  Remote daemon: [[49584,0],2] on node h2|"));
    struct outcome oi = {.token = "tok", .interrupt_sig = SIGTERM, .emit = collect, .emit_ctx = &v};
    feed(&oi, lost_h2);
    assert_false(oi.host_lost);
    plan_free(&p);
    strvec_free(&hosts);
}

static void test_graceful(void **state)
{
    (void)state;
    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    make_plan(&p, &hosts);
    char msg[256];
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s, .graceful_timeout_s = 30};
    /* mpirun's word about the signal it carried goes once poprun was interrupted, not before. */
    const char *const fwd[] = {"mpirun: Forwarding signal 10 to job", NULL};
    feed(&o, fwd);
    assert_string_equal(s.buf, "mpirun: Forwarding signal 10 to job|");
    s.len = 0;
    s.buf[0] = '\0';
    o.interrupt_sig = SIGTERM;
    feed(&o, fwd);
    feed(&o, (const char *const[]){"[instance 0] mpirun: Forwarding signal 10 to job", NULL});
    assert_string_equal(s.buf, "[instance 0] mpirun: Forwarding signal 10 to job|");
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 143);
    assert_string_equal(msg, "interrupted by SIGTERM; every instance was ended");
    o.graceful_expired = true;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 143);
    assert_string_equal(msg, "interrupted by SIGTERM; instances still running after "
                             "--graceful-timeout 30 s were killed");
    assert_false(restart_wanted(&o, 143)); /* a stop asked for is not a failure to mend */
    plan_free(&p);
    strvec_free(&hosts);
}

/* A stop that did not come from poprun (marker.h): from outside (Slurm signalled a step), or a
 * program's own (train stops with its peers): no failure, and the job ends as interrupted. */
static void test_outside_stop(void **state)
{
    (void)state;
    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    make_plan(&p, &hosts);
    char msg[256];
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed(&o, (const char *const[]){"@@poprun-status tok 0 stopped 15",
                                   "[instance 1] x@@poprun-status tok 2 stop 15", NULL});
    assert_string_equal(s.buf, "[instance 1] x|");
    assert_false(o.have_failure);
    assert_int_equal(o.stop_sig, SIGTERM);
    assert_int_equal(o.stop_instance, 2); /* one from outside wins over a program's own */
    assert_true(o.stop_outside);
    feed(&o, (const char *const[]){"@@poprun-status tok 3 stop 2", NULL});
    assert_int_equal(o.stop_instance, 2); /* the first from outside stays */
    o.interrupt_sig = o.stop_sig;         /* launch.c stops the job with it */
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 143);
    assert_string_equal(msg, "interrupted by SIGTERM, which instance 2 (host h2) got from outside "
                             "poprun; every instance was ended");
    assert_false(restart_wanted(&o, 143));
    o.stop_outside = false;
    o.stop_instance = 0;
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 143);
    assert_string_equal(msg, "interrupted: instance 0 (host h1) stopped as SIGTERM stops (exit "
                             "143); every instance was ended");
    o.signaled = true; /* poprun had the signal itself too (scancel signals every step) */
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 143);
    assert_string_equal(msg, "interrupted by SIGTERM; every instance was ended");
    /* A failure still wins. */
    feed(&o, (const char *const[]){"@@poprun-status tok 1 exit 3", NULL});
    assert_int_equal(outcome_exit_status(&o, &p, msg, sizeof(msg)), 3);
    plan_free(&p);
    strvec_free(&hosts);
}

/* An instance's status 2 stops the restarts also when another instance, failing because of it,
 * was reported first (train's "cannot resume" on instance 0, its peers' exit 1). */
static void test_usage_not_first(void **state)
{
    (void)state;
    struct sink s = {{0}, 0};
    struct outcome o = {.token = "tok", .emit = collect, .emit_ctx = &s};
    feed(&o, (const char *const[]){"@@poprun-status tok 3 exit 1", NULL});
    assert_true(restart_wanted(&o, 1));
    feed(&o, (const char *const[]){"@@poprun-status tok 0 exit 2", NULL});
    assert_int_equal(o.failure.instance, 3); /* still the one named */
    assert_int_equal(o.usage_instance, 0);
    assert_false(restart_wanted(&o, 1));
}

static void test_options(void **state)
{
    (void)state;
    struct poprun_options o;
    char err[256];
    options_init(&o);
    assert_int_equal(o.graceful_timeout, 30);
    assert_int_equal(o.max_restarts, 0);
    char *argv[] = {"poprun", "--graceful-timeout", "0", "--max-restarts=3", "prog", NULL};
    assert_int_equal(options_parse(&o, 5, argv, err, sizeof(err)), 0);
    assert_int_equal(o.graceful_timeout, 0);
    assert_int_equal(o.max_restarts, 3);
    options_free(&o);
}

/* A scripted job: run K ends as OUTCOMES[K] says. */
struct script {
    const struct outcome *outcomes;
    int n, runs;
    char restart_env[8][16];
};

static int scripted_run(void *ctx, struct outcome *out, char *err, size_t errlen)
{
    struct script *sc = ctx;
    (void)err;
    (void)errlen;
    assert_true(sc->runs < sc->n);
    const char *v = getenv("POPDIST_RESTART_COUNT");
    snprintf(sc->restart_env[sc->runs], sizeof(sc->restart_env[0]), "%s", v ? v : "unset");
    const struct outcome *want = &sc->outcomes[sc->runs++];
    out->have_failure = want->have_failure;
    out->failure = want->failure;
    out->interrupt_sig = want->interrupt_sig;
    out->mpirun_status = want->mpirun_status;
    out->usage_error = want->usage_error;
    out->usage_instance = want->usage_instance;
    return 0;
}

/* Runs the loop with stderr in a file; returns its exit status and the text in TEXT. */
static int loop(struct script *sc, int max_restarts, const struct plan *p, char *text, size_t len)
{
    struct restart_job rj = {
        .max_restarts = max_restarts, .plan = p, .run = scripted_run, .ctx = sc};
    char path[] = "/tmp/test-restart-XXXXXX";
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    fflush(stderr);
    int saved = dup(2);
    dup2(fd, 2);
    int status = restart_loop(&rj);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    ssize_t n = pread(fd, text, len - 1, 0);
    text[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(path);
    return status;
}

static void test_restart_loop(void **state)
{
    (void)state;
    struct plan p;
    struct strvec hosts = STRVEC_INIT;
    make_plan(&p, &hosts);
    char text[2048];
    unsetenv("POPDIST_RESTART_COUNT");
    const struct outcome killed = {.have_failure = true, .failure = {1, MARKER_SIGNAL, SIGKILL}};
    const struct outcome failed = {.have_failure = true, .failure = {3, MARKER_EXIT, 1}};
    const struct outcome ok = {.mpirun_status = 0};

    /* Two failures, then success: two lines naming them, exit 0, the count set each time. */
    struct outcome seq[] = {killed, failed, ok};
    struct script sc = {seq, 3, 0, {{0}}};
    assert_int_equal(loop(&sc, 2, &p, text, sizeof(text)), 0);
    assert_int_equal(sc.runs, 3);
    assert_string_equal(text, "poprun: instance 1 (host h1) was killed by signal 9 (SIGKILL); "
                              "restarting the job (restart 1 of 2)\n"
                              "poprun: instance 3 (host h2) exited with status 1; restarting "
                              "the job (restart 2 of 2)\n");
    assert_string_equal(sc.restart_env[0], "0");
    assert_string_equal(sc.restart_env[2], "2");

    /* Out of restarts: the last failure's status, and its line says so. */
    struct outcome seq2[] = {killed, failed};
    struct script sc2 = {seq2, 2, 0, {{0}}};
    assert_int_equal(loop(&sc2, 1, &p, text, sizeof(text)), 1);
    assert_non_null(strstr(text, "\npoprun: instance 3 (host h2) exited with status 1; no "
                                 "restart left (1 used)\n"));

    /* Not restarted: an interrupt, and an instance's usage error (status 2). */
    struct outcome stop = {.interrupt_sig = SIGTERM};
    struct script sc3 = {&stop, 1, 0, {{0}}};
    assert_int_equal(loop(&sc3, 2, &p, text, sizeof(text)), 143);
    assert_string_equal(text, "poprun: interrupted by SIGTERM; every instance was ended\n");
    struct outcome usage = {.have_failure = true, .failure = {0, MARKER_EXIT, 2}};
    struct script sc4 = {&usage, 1, 0, {{0}}};
    assert_int_equal(loop(&sc4, 2, &p, text, sizeof(text)), 2);
    assert_string_equal(text, "poprun: instance 0 (host h1) exited with status 2\n");

    /* Instance 0's status 2 behind another instance's failure: not restarted, and said why. */
    struct outcome behind = {.have_failure = true,
                             .failure = {3, MARKER_EXIT, 1},
                             .usage_error = true,
                             .usage_instance = 0};
    struct script sc6 = {&behind, 1, 0, {{0}}};
    assert_int_equal(loop(&sc6, 2, &p, text, sizeof(text)), 1);
    assert_int_equal(sc6.runs, 1);
    assert_string_equal(text, "poprun: instance 3 (host h2) exited with status 1; not restarted: "
                              "instance 0 exited with status 2\n");

    /* Without --max-restarts: one run, no count set, the usual line. */
    unsetenv("POPDIST_RESTART_COUNT");
    struct script sc5 = {&killed, 1, 0, {{0}}};
    assert_int_equal(loop(&sc5, 0, &p, text, sizeof(text)), 137);
    assert_string_equal(text, "poprun: instance 1 (host h1) was killed by signal 9 (SIGKILL)\n");
    assert_string_equal(sc5.restart_env[0], "unset");
    plan_free(&p);
    strvec_free(&hosts);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_lost_node_parse), cmocka_unit_test(test_lost_host),
        cmocka_unit_test(test_graceful),        cmocka_unit_test(test_outside_stop),
        cmocka_unit_test(test_options),         cmocka_unit_test(test_restart_loop),
        cmocka_unit_test(test_usage_not_first),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
