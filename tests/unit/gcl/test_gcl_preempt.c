/*
 * Unit tests of gcl/preempt.h and gcl/src/instance/signals.c: the handlers libgcl's dependencies install
 * are gone before main; SIGTERM after gcl_preempt_enable only sets the flag; gcl_preempt_agree
 * gives every IPU of a one-instance job of 4 replicas the same answer at the same step (the one
 * before which the signal came), and ends with a status, not a hang, when an IPU fails or
 * never comes. Several instances agree in tests/train (train_test.sh preempt, under poprun).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <dlfcn.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gcl/gcl.h"
#include "gcl/preempt.h"

#define REPLICAS 4
#define STEPS    6

/* The shared object that holds the handler of SIG, or "" for none (default, ignore). */
static const char *handler_lib(int sig)
{
    struct sigaction sa;
    Dl_info info;
    assert_int_equal(sigaction(sig, NULL, &sa), 0);
    void *fn = (sa.sa_flags & SA_SIGINFO) ? (void *)sa.sa_sigaction : (void *)sa.sa_handler;
    if (sa.sa_handler == SIG_DFL || sa.sa_handler == SIG_IGN)
        return "";
    return dladdr(fn, &info) && info.dli_fname ? info.dli_fname : "?";
}

static void test_foreign_handlers_gone(void **state)
{
    (void)state;
    /* This program links libgcl, which links libfabric and through it libinfinipath, whose
     * constructor installs handlers that call exit(). */
    assert_string_equal(handler_lib(SIGTERM), "");
    assert_string_equal(handler_lib(SIGINT), "");
    int crash[] = {SIGSEGV, SIGBUS, SIGILL, SIGABRT, SIGFPE};
    for (size_t i = 0; i < sizeof crash / sizeof crash[0]; i++)
        assert_null(strstr(handler_lib(crash[i]), "infinipath"));
    assert_int_equal(gcl_preempt_signal(), 0);
}

typedef struct {
    int raise_at;             /* replica 0 raises SIGTERM before this step's agreement */
    int fail_replica;         /* this replica fails at once (-1: none) */
    int late_replica;         /* this replica comes 3 s late (-1: none) */
    int first_stop[REPLICAS]; /* the first step whose answer was a signal, or -1 */
    int signo[REPLICAS];
    gcl_status_t status[REPLICAS];
    double waited[REPLICAS];
} job_t;

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *job = arg;
    int r = gcl_ctx_replica(ctx);
    job->first_stop[r] = -1;
    if (r == job->fail_replica)
        return GCL_ERR_INTERNAL;
    if (r == job->late_replica)
        sleep(3);
    for (int step = 0; step < STEPS; step++) {
        if (r == 0 && step == job->raise_at)
            raise(SIGTERM);
        int sig = -1;
        double t0 = now_s();
        gcl_status_t rc = gcl_preempt_agree(ctx, &sig);
        job->waited[r] = now_s() - t0;
        job->status[r] = rc;
        if (rc != GCL_OK)
            return rc;
        if (sig && job->first_stop[r] < 0) {
            job->first_stop[r] = step;
            job->signo[r] = sig;
        }
    }
    return GCL_OK;
}

static gcl_status_t run_job(job_t *job)
{
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = REPLICAS;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    gcl_status_t rc = gcl_run(inst, program, job);
    gcl_finalize(inst);
    return rc;
}

static void test_agree(void **state)
{
    (void)state;
    assert_int_equal(gcl_preempt_enable(), GCL_OK);
    job_t quiet = {.raise_at = -1, .fail_replica = -1, .late_replica = -1};
    assert_int_equal(run_job(&quiet), GCL_OK);
    for (int r = 0; r < REPLICAS; r++)
        assert_int_equal(quiet.first_stop[r], -1);
    /* SIGTERM before step 3's agreement: every replica stops there, none before. */
    job_t stop = {.raise_at = 3, .fail_replica = -1, .late_replica = -1};
    assert_int_equal(run_job(&stop), GCL_OK);
    assert_int_equal(gcl_preempt_signal(), SIGTERM);
    for (int r = 0; r < REPLICAS; r++) {
        assert_int_equal(stop.first_stop[r], 3);
        assert_int_equal(stop.signo[r], SIGTERM);
    }
    /* A second SIGTERM changes nothing: the process lives on. */
    raise(SIGTERM);
    assert_int_equal(gcl_preempt_signal(), SIGTERM);
}

static void test_failure_and_timeout(void **state)
{
    (void)state;
    /* A replica that fails: the others' agreement ends with GCL_ERR_ABORTED. */
    job_t failing = {.raise_at = -1, .fail_replica = 2, .late_replica = -1};
    assert_int_equal(run_job(&failing), GCL_ERR_INTERNAL);
    for (int r = 0; r < REPLICAS; r++)
        if (r != 2)
            assert_int_equal(failing.status[r], GCL_ERR_ABORTED);
    /* A replica later than GCL_TIMEOUT_S: the others' agreement times out (the first to give
     * up aborts the rest), well before the late one comes: within 2.5 s, more than 10 times
     * the timeout (on a quiet machine they wait about 0.2 s), and before the late one's 3 s. */
    setenv("GCL_TIMEOUT_S", "0.2", 1);
    job_t late = {.raise_at = -1, .fail_replica = -1, .late_replica = 1};
    assert_int_equal(run_job(&late), GCL_ERR_TIMEOUT);
    int timeouts = 0;
    for (int r = 0; r < REPLICAS; r++) {
        if (r == 1)
            continue;
        timeouts += late.status[r] == GCL_ERR_TIMEOUT;
        assert_true(late.status[r] == GCL_ERR_TIMEOUT || late.status[r] == GCL_ERR_ABORTED);
        assert_true(late.waited[r] < 2.5);
    }
    assert_true(timeouts >= 1);
    unsetenv("GCL_TIMEOUT_S");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_foreign_handlers_gone),
        cmocka_unit_test(test_agree),
        cmocka_unit_test(test_failure_and_timeout),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
