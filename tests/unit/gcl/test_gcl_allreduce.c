/*
 * The second tier: many replicas as threads of one process, through the public API, with the
 * local transport. Results are checked exactly; failures (timeouts, peers that leave, bad
 * arguments) are checked for their status and for an error text that names the peer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcl/gcl.h"

typedef struct {
    gcl_group_t group;
    size_t count;
    gcl_dtype_t type;
    gcl_redop_t op;
    atomic_int failures;
} sweep_t;

static float f32_of_half(uint16_t h)
{
    /* Small integers and halves only: exponent and mantissa suffice. */
    int e = (h >> 10) & 0x1f;
    float v = e ? (1.0f + (float)(h & 0x3ff) / 1024.0f) * (float)(1 << e) / 32768.0f : 0.0f;
    return (h & 0x8000) ? -v : v;
}

static uint16_t half_of_int(int v)
{
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v);
    int e = 31 - __builtin_clz(a);
    return sign | (uint16_t)((e + 15) << 10) | (uint16_t)(((a << 10) >> e) & 0x3ff);
}

/* Replica r's element i is ((3r + i) mod 7) - 3. */
static int val(int r, size_t i)
{
    return (int)((size_t)(3 * r) + i) % 7 - 3;
}

static gcl_status_t sweep_program(gcl_ctx_t ctx, void *arg)
{
    sweep_t *s = arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, s->group, &comm));
    int n = gcl_comm_size(comm), me = gcl_ctx_replica(ctx);
    size_t es = gcl_dtype_size(s->type);
    char *in = malloc(s->count * es + 1), *out = malloc(s->count * es + 1);
    for (size_t i = 0; i < s->count; i++) {
        if (s->type == GCL_F32)
            ((float *)in)[i] = (float)val(me, i);
        else
            ((uint16_t *)in)[i] = half_of_int(val(me, i));
    }
    /* Out of place first, then in place over the same (untouched) inputs. */
    for (int in_place = 0; in_place < 2; in_place++) {
        char *dst = in_place ? in : out;
        if (gcl_all_reduce(comm, in, dst, s->count, s->type, s->op) != GCL_OK) {
            atomic_fetch_add(&s->failures, 1);
            break;
        }
        int members[64];
        for (int q = 0; q < n; q++) /* the replicas of my group, by the definitions */
            members[q] =
                s->group.kind == GCL_GROUP_ALL ? q
                : s->group.kind == GCL_GROUP_CONSECUTIVE
                    ? me / n * n + q
                    : me % (gcl_ctx_num_replicas(ctx) / n) + q * (gcl_ctx_num_replicas(ctx) / n);
        for (size_t i = 0; i < s->count; i++) {
            double want = val(members[0], i);
            for (int q = 1; q < n; q++) {
                double v = val(members[q], i);
                want = s->op == GCL_MAX   ? (v > want ? v : want)
                       : s->op == GCL_MIN ? (v < want ? v : want)
                                          : want + v;
            }
            if (s->op == GCL_MEAN)
                want = (float)want / (float)n;
            double got = s->type == GCL_F32 ? ((float *)dst)[i] : f32_of_half(((uint16_t *)dst)[i]);
            if (got != want) {
                atomic_fetch_add(&s->failures, 1);
                break;
            }
        }
    }
    free(in);
    free(out);
    gcl_comm_destroy(comm);
    return GCL_OK;
}

static void run_sweep(int replicas, int ipus_per_replica, gcl_group_t g, size_t count,
                      gcl_dtype_t t, gcl_redop_t op)
{
    gcl_config_t cfg = {.num_replicas = replicas, .ipus_per_replica = ipus_per_replica};
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    sweep_t s = {.group = g, .count = count, .type = t, .op = op};
    assert_int_equal(gcl_run(inst, sweep_program, &s), GCL_OK);
    if (atomic_load(&s.failures))
        fail_msg("replicas %d ipus_per_replica %d group %d:%d count %zu %s %s: %d failures",
                 replicas, ipus_per_replica, g.kind, g.size, count, gcl_dtype_name(t),
                 gcl_redop_name(op), atomic_load(&s.failures));
    assert_int_equal(gcl_finalize(inst), GCL_OK);
}

static void test_sweep(void **state)
{
    (void)state;
    gcl_redop_t ops[] = {GCL_SUM, GCL_MAX, GCL_MIN};
    for (int n = 1; n <= 6; n++) {
        for (size_t oi = 0; oi < 3; oi++) {
            size_t counts[] = {0, 1, (size_t)n + 1, 1000};
            for (size_t c = 0; c < 4; c++) {
                run_sweep(n, 1, gcl_group_all(), counts[c], GCL_F32, ops[oi]);
                run_sweep(n, 1, gcl_group_all(), counts[c], GCL_F16, ops[oi]);
            }
        }
        if (n % 2 == 0) {
            run_sweep(n, 2, gcl_group_consecutive(2), 333, GCL_F32, GCL_SUM);
            run_sweep(n, 1, gcl_group_orthogonal(2), 333, GCL_F16, GCL_MAX);
            run_sweep(n, 1, gcl_group_orthogonal(n / 2), 77, GCL_F32, GCL_MIN);
        }
    }
    /* Mean over 4 replicas: quarters are exact in both types. */
    run_sweep(4, 1, gcl_group_all(), 100, GCL_F32, GCL_MEAN);
    run_sweep(4, 1, gcl_group_all(), 100, GCL_F16, GCL_MEAN);
}

/* ---- failures ---- */

typedef struct {
    int mode;
    gcl_status_t status[8];
    char text[8][512];
    char inst_text[512]; /* gcl_instance_error after the run */
    atomic_int returned; /* replicas whose call has returned */
} fault_t;

enum {
    LATE_REPLICA,
    LEAVING_REPLICA,
    FAILING_REPLICA,
    BAD_ARGUMENTS,
    LEAVING_AND_LEFT_IN_CALL,
    POLL_LEAVING,
    POLL_LATE,
    POLL_SLOWLY
};

/* The all_reduce started and completed by polling gcl_test, SLEEP_US between polls; gives up
 * (GCL_ERR_INTERNAL: the checks never ended it) after 20 s. */
static gcl_status_t poll_all_reduce(gcl_comm_t comm, float *x, int sleep_us)
{
    gcl_request_t req;
    GCL_CHECK(gcl_all_reduce_start(comm, x, x, 16, GCL_F32, GCL_SUM, &req));
    for (long waited_us = 0; waited_us < 20 * 1000 * 1000; waited_us += sleep_us + 1) {
        int done = 0;
        gcl_status_t rc = gcl_test(req, &done);
        if (done)
            return rc;
        usleep((useconds_t)sleep_us);
    }
    return GCL_ERR_INTERNAL;
}

/* The late replica of LATE_REPLICA and POLL_LATE comes only once every other replica's call
 * has returned (at most 30 s): later than GCL_TIMEOUT_S however slow the machine (a fixed
 * sleep was not, under ThreadSanitizer on a loaded machine). */
static void come_late(fault_t *f, int replicas)
{
    for (int waited_ms = 0; atomic_load(&f->returned) < replicas - 1 && waited_ms < 30000;
         waited_ms += 10)
        usleep(10 * 1000);
}

/* Records replica ME's result. */
static gcl_status_t record(fault_t *f, int me, gcl_comm_t comm, gcl_status_t rc)
{
    f->status[me] = rc;
    snprintf(f->text[me], sizeof f->text[me], "%s", gcl_last_error(comm));
    atomic_fetch_add(&f->returned, 1);
    return rc;
}

static gcl_status_t fault_program(gcl_ctx_t ctx, void *arg)
{
    fault_t *f = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float x[16] = {0};
    gcl_status_t rc;
    if ((f->mode == LATE_REPLICA || f->mode == POLL_LATE) && me == 0)
        come_late(f, gcl_ctx_num_replicas(ctx));
    if (f->mode == POLL_SLOWLY && me == 0)
        usleep(1500 * 1000); /* the others poll slowly meanwhile: not a stall */
    if ((f->mode == LEAVING_REPLICA || f->mode == POLL_LEAVING) && me == 1)
        return GCL_OK; /* leaves without the collective */
    if (f->mode >= POLL_LEAVING) {
        rc = poll_all_reduce(comm, x, f->mode == POLL_SLOWLY ? 500 * 1000 : 100);
        return record(f, me, comm, rc);
    }
    if (f->mode == FAILING_REPLICA && me == 2) {
        /* Only an error status and a sentence are recorded. */
        if (gcl_ctx_set_error(ctx, GCL_OK, "not an error") != GCL_ERR_INVALID_ARGUMENT ||
            gcl_ctx_set_error(ctx, GCL_ERR_IN_PROGRESS, "no") != GCL_ERR_INVALID_ARGUMENT ||
            gcl_ctx_set_error(ctx, (gcl_status_t)-99, "no") != GCL_ERR_INVALID_ARGUMENT ||
            gcl_ctx_set_error(NULL, GCL_ERR_INTERNAL, "no") != GCL_ERR_INVALID_ARGUMENT ||
            strcmp(gcl_ctx_last_error(ctx), "") != 0)
            return GCL_ERR_NOT_SUPPORTED;
        return gcl_ctx_set_error(ctx, GCL_ERR_INTERNAL, "replica %d cannot go on", me);
    }
    if (f->mode == LEAVING_AND_LEFT_IN_CALL) { /* see test_the_cause_is_named */
        if (me == 3)
            return GCL_OK;
        GCL_CHECK(gcl_comm_set_algorithm(comm, "all_reduce", "clockwise_ring"));
        record(f, me, comm, gcl_all_reduce(comm, x, x, 16, GCL_F32, GCL_SUM));
        return GCL_OK; /* its failure noted, it goes on: no abort of the others */
    }
    if (f->mode == BAD_ARGUMENTS) {
        rc = gcl_all_reduce(comm, x, x, 16, GCL_F32, GCL_LOGICAL_AND);
        f->status[me] = rc;
        snprintf(f->text[me], sizeof f->text[me], "%s", gcl_last_error(comm));
        rc = gcl_all_reduce(comm, NULL, x, 16, GCL_F32, GCL_SUM);
        /* Past the limit of 2^62 bytes over the group: refused naming it, nothing read. */
        gcl_status_t over = gcl_all_reduce(comm, x, x, (SIZE_MAX / 4) / 4 / 2 + 1, GCL_F32, GCL_SUM);
        if (over != GCL_ERR_INVALID_ARGUMENT || !strstr(gcl_last_error(comm), "at most ") ||
            !strstr(gcl_last_error(comm), "2^62 bytes"))
            f->status[me] = GCL_ERR_INTERNAL;
        gcl_comm_t bad = NULL;
        if (rc != GCL_ERR_INVALID_ARGUMENT ||
            gcl_comm_create(ctx, gcl_group_consecutive(3), &bad) != GCL_ERR_INVALID_ARGUMENT ||
            bad != NULL)
            f->status[me] = GCL_ERR_INTERNAL;
        return GCL_OK;
    }
    return record(f, me, comm, gcl_all_reduce(comm, x, x, 16, GCL_F32, GCL_SUM));
}

static gcl_status_t run_fault(fault_t *f, int replicas)
{
    gcl_config_t cfg = {.num_replicas = replicas, .ipus_per_replica = 1};
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    gcl_status_t rc = gcl_run(inst, fault_program, f);
    snprintf(f->inst_text, sizeof f->inst_text, "%s", gcl_instance_error(inst));
    gcl_finalize(inst);
    return rc;
}

static void test_timeout_names_the_late_replica(void **state)
{
    (void)state;
    setenv("GCL_TIMEOUT_S", "0.3", 1);
    fault_t f = {.mode = LATE_REPLICA};
    assert_int_not_equal(run_fault(&f, 4), GCL_OK);
    unsetenv("GCL_TIMEOUT_S");
    /* Replica 0's right neighbour waits for it to take data, its left neighbour for data. */
    int timeouts = 0;
    for (int r = 1; r < 4; r++) {
        if (f.status[r] == GCL_ERR_TIMEOUT) {
            timeouts++;
            assert_non_null(strstr(f.text[r], "not in this call yet: replica 0 (instance 0"));
            assert_non_null(strstr(f.text[r], "GCL_TIMEOUT_S"));
        } else {
            assert_int_equal(f.status[r], GCL_ERR_ABORTED);
        }
    }
    assert_true(timeouts >= 1);
}

/* Replicas 0 and 2 of 3 failed because replica 1 returned without the call: at least one of
 * them says so (the other may be aborted by it, or fail with its failure). */
static void assert_leaver_named(const fault_t *f)
{
    int named = 0;
    for (int r = 0; r < 3; r += 2) {
        assert_true(f->status[r] == GCL_ERR_PEER_FAILED || f->status[r] == GCL_ERR_ABORTED);
        named += f->status[r] == GCL_ERR_PEER_FAILED &&
                 strstr(f->text[r], "replica 1 (instance 0") &&
                 strstr(f->text[r], "returned from its program");
    }
    assert_true(named >= 1);
}

static void test_leaving_replica_is_named(void **state)
{
    (void)state;
    fault_t f = {.mode = LEAVING_REPLICA};
    assert_int_not_equal(run_fault(&f, 3), GCL_OK);
    assert_leaver_named(&f);
}

/* Replica 3 of 4 returns without the call; the others run a ring all_reduce. Replica 0 fails
 * at once (it waits on replica 3 from the first step) and returns GCL_OK; replica 1, waiting on
 * replica 0 at the second step, finds replica 0 returned, but in this very call: the cause is
 * replica 3, which every replica names (replica 1 named replica 0 as "returned from its program
 * without making this call" before: faults_mismatch_ofi, barrier skip, under load). */
static void test_the_cause_is_named(void **state)
{
    (void)state;
    fault_t f = {.mode = LEAVING_AND_LEFT_IN_CALL};
    run_fault(&f, 4);
    for (int r = 0; r < 3; r++) {
        if (f.status[r] != GCL_ERR_PEER_FAILED || !strstr(f.text[r], "replica 3 (instance 0") ||
            !strstr(f.text[r], "returned from its program without making this call"))
            fail_msg("replica %d: %s: %s", r, gcl_status_name(f.status[r]), f.text[r]);
    }
}

/* gcl_test makes gcl_wait's checks: a poll loop ends with the peer's failure or the timeout. */
static void test_polling_sees_a_leaving_replica(void **state)
{
    (void)state;
    setenv("GCL_TIMEOUT_S", "60", 1);
    fault_t f = {.mode = POLL_LEAVING};
    assert_int_not_equal(run_fault(&f, 3), GCL_OK);
    unsetenv("GCL_TIMEOUT_S");
    assert_leaver_named(&f);
}

static void test_polling_times_out(void **state)
{
    (void)state;
    setenv("GCL_TIMEOUT_S", "0.3", 1);
    fault_t f = {.mode = POLL_LATE};
    assert_int_not_equal(run_fault(&f, 4), GCL_OK);
    unsetenv("GCL_TIMEOUT_S");
    int timeouts = 0;
    for (int r = 1; r < 4; r++) {
        assert_true(f.status[r] == GCL_ERR_TIMEOUT || f.status[r] == GCL_ERR_ABORTED);
        timeouts += f.status[r] == GCL_ERR_TIMEOUT &&
                    strstr(f.text[r], "not in this call yet: replica 0 (instance 0");
    }
    assert_true(timeouts >= 1);
}

/* Polls 0.5 s apart while replica 0 is 1.5 s late, with a 1 s timeout: the time between polls
 * is the program's, not a stall, and the call succeeds. */
static void test_slow_polling_is_not_a_stall(void **state)
{
    (void)state;
    setenv("GCL_TIMEOUT_S", "1", 1);
    fault_t f = {.mode = POLL_SLOWLY};
    gcl_status_t rc = run_fault(&f, 3);
    unsetenv("GCL_TIMEOUT_S");
    for (int r = 1; r < 3; r++)
        assert_int_equal(f.status[r], GCL_OK);
    assert_int_equal(rc, GCL_OK);
}

static void test_failing_replica_aborts_the_rest(void **state)
{
    (void)state;
    fault_t f = {.mode = FAILING_REPLICA};
    assert_int_equal(run_fault(&f, 4), GCL_ERR_INTERNAL);
    /* The program's own sentence (gcl_ctx_set_error) is the instance's error, and every other
     * replica, of the same instance, is aborted quoting it. */
    assert_non_null(strstr(f.inst_text, "replica 2 IPU 0: replica 2 cannot go on"));
    for (int r = 0; r < 4; r++) {
        if (r == 2)
            continue;
        assert_int_equal(f.status[r], GCL_ERR_ABORTED);
        assert_non_null(strstr(f.text[r], "replica 2 (instance 0"));
        assert_non_null(strstr(f.text[r], "replica 2 cannot go on"));
    }
}

static void test_bad_arguments(void **state)
{
    (void)state;
    fault_t f = {.mode = BAD_ARGUMENTS};
    assert_int_equal(run_fault(&f, 2), GCL_OK);
    for (int r = 0; r < 2; r++) {
        assert_int_equal(f.status[r], GCL_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(f.text[r], "logical operators"));
    }
}

static void test_init_rejects_bad_environment(void **state)
{
    (void)state;
    gcl_instance_t inst = (gcl_instance_t)1;
    setenv("GCL_TIMEOUT_S", "soon", 1);
    assert_int_equal(gcl_init(NULL, &inst), GCL_ERR_INVALID_ARGUMENT);
    assert_null(inst);
    unsetenv("GCL_TIMEOUT_S");
    gcl_config_t cfg = {.num_replicas = -1, .ipus_per_replica = 1};
    assert_int_equal(gcl_init(&cfg, &inst), GCL_ERR_INVALID_ARGUMENT);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sweep),
        cmocka_unit_test(test_timeout_names_the_late_replica),
        cmocka_unit_test(test_leaving_replica_is_named),
        cmocka_unit_test(test_the_cause_is_named),
        cmocka_unit_test(test_polling_sees_a_leaving_replica),
        cmocka_unit_test(test_polling_times_out),
        cmocka_unit_test(test_slow_polling_is_not_a_stall),
        cmocka_unit_test(test_failing_replica_aborts_the_rest),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_init_rejects_bad_environment),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
