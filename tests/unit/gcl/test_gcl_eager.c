/*
 * The eager engine at the thread tier (gcl/src/engine/eager.c): small blocking all_reduce,
 * broadcast and barrier over a group on one host run eager, and give the same bits and the
 * same simulated time as the same calls by messages (non-blocking ones never run eager); calls
 * on two communicators interleaved, far more than a replica's cells, reuse the cells safely;
 * GCL_EAGER_MAX_BYTES=0 turns the engine off. A broadcast returns on each rank once its data is
 * in place, before the later ranks have entered it; what it still waits for (their entries,
 * their signatures) completes at the rank's next call, which reports a failure there; a reader
 * that finds the root's cell at entry returns before its call is set up, and its simulated time
 * is the same as a reader's that waited for the root. On a
 * crowded host (the process pinned to one core) a barrier is led by replica 0, and still lets
 * no replica leave before the last has entered. In place, an all_reduce gives the bits it gives
 * out of place, on 2 replicas and on 6.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"

enum { N = 6, MAXC = 4096, CALLS = 7, BARRIERS = 300 };

typedef struct {
    int blocking;
    atomic_int failures, eager;
    float out[2][N][CALLS][MAXC]; /* [blocking][replica][call] */
    double clock[2][N];
} job_t;

/* The calls of one pass: all_reduce (sum, mean) of 2, 250 and 4096 floats (16 KiB, the largest
 * that runs eager by default), broadcast from replicas 0 and 4, and barriers between them. */
static const struct {
    int bcast, root;
    size_t count;
    gcl_redop_t op;
} calls[CALLS] = {{0, 0, 2, GCL_SUM}, {0, 0, 250, GCL_MEAN}, {0, 0, MAXC, GCL_SUM},
                  {1, 0, 2, GCL_SUM}, {1, 4, 250, GCL_SUM},  {1, 4, MAXC, GCL_SUM},
                  {0, 0, 1, GCL_MAX}};

static float value(int replica, int call, size_t i)
{
    return (float)((replica * 131 + call * 17 + (int)i * 7) % 97) * 0.173f - 4.0f;
}

static gcl_status_t one(gcl_comm_t comm, int k, int blocking, float *in, float *out)
{
    gcl_request_t req;
    gcl_status_t rc;
    if (calls[k].bcast && blocking)
        return gcl_broadcast(comm, in, out, calls[k].count, GCL_F32, calls[k].root);
    if (calls[k].bcast)
        rc = gcl_broadcast_start(comm, in, out, calls[k].count, GCL_F32, calls[k].root, &req);
    else if (blocking)
        return gcl_all_reduce(comm, in, out, calls[k].count, GCL_F32, calls[k].op);
    else
        rc = gcl_all_reduce_start(comm, in, out, calls[k].count, GCL_F32, calls[k].op, &req);
    return rc == GCL_OK ? gcl_wait(req) : rc;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int me = gcl_ctx_replica(ctx), b = j->blocking;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float *in = malloc(MAXC * sizeof *in);
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < CALLS && rc == GCL_OK; k++) {
        for (size_t i = 0; i < calls[k].count; i++)
            in[i] = value(me, k, i);
        rc = one(comm, k, b, in, j->out[b][me][k]);
        const char *used = calls[k].bcast ? gcl_comm_algorithm(comm, "broadcast")
                                          : gcl_comm_algorithm(comm, "all_reduce");
        if (rc == GCL_OK && b && strcmp(used, "eager") == 0)
            atomic_fetch_add(&j->eager, 1);
        if (rc == GCL_OK && !b && strcmp(used, "eager") == 0)
            atomic_fetch_add(&j->failures, 1); /* a request never runs eager */
        if (rc == GCL_OK)
            rc = b ? gcl_barrier(comm) : GCL_OK;
    }
    j->clock[b][me] = gcl_sim_time(ctx);
    free(in);
    gcl_comm_destroy(comm);
    return rc;
}

/* PROGRAM on N replicas of one instance, which must succeed. */
static void run_on(int n, gcl_program_t fn, void *arg)
{
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = n;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    assert_int_equal(gcl_run(inst, fn, arg), GCL_OK);
    gcl_finalize(inst);
}

static void run(job_t *j, int blocking)
{
    j->blocking = blocking;
    run_on(N, program, j);
}

static void test_eager_matches_messages(void **state)
{
    (void)state;
    job_t *j = calloc(1, sizeof *j);
    run(j, 1);
    assert_int_equal(atomic_load(&j->eager), N * CALLS);
    run(j, 0); /* the same calls, non-blocking: by messages (clocks: test_eager_clocks) */
    assert_int_equal(atomic_load(&j->failures), 0);
    for (int r = 0; r < N; r++)
        for (int k = 0; k < CALLS; k++)
            if (memcmp(j->out[0][r][k], j->out[1][r][k], calls[k].count * sizeof(float)) != 0)
                fail_msg("replica %d call %d: eager and messages differ", r, k);
    /* A broadcast delivers the root's values, an all_reduce the same on every replica. */
    for (int r = 0; r < N; r++) {
        assert_true(j->out[1][r][4][7] == value(4, 4, 7));
        assert_memory_equal(j->out[1][r][2], j->out[1][0][2], MAXC * sizeof(float));
    }
    free(j);
}

/* Simulated time: each call alone from fresh clocks, entered unevenly, then a barrier: eager
 * (the default) against the same blocking calls with the engine off (GCL_EAGER_MAX_BYTES=0). */
typedef struct {
    int k, pass;
    double t[2][N];
} clocks_t;

static gcl_status_t clock_program(gcl_ctx_t ctx, void *arg)
{
    clocks_t *c = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float *in = calloc(MAXC, sizeof *in), *out = calloc(MAXC, sizeof *out);
    gcl_status_t rc = gcl_charge_compute(ctx, "uneven", 1e9 * (me + 1), 0, GCL_F32);
    if (rc == GCL_OK)
        rc = one(comm, c->k, 1, in, out);
    if (rc == GCL_OK)
        rc = gcl_barrier(comm);
    const char *used = gcl_comm_algorithm(comm, calls[c->k].bcast ? "broadcast" : "all_reduce");
    if (rc == GCL_OK && (strcmp(used, "eager") == 0) != (c->pass == 1))
        rc = GCL_ERR_INTERNAL;
    c->t[c->pass][me] = gcl_sim_time(ctx);
    free(in);
    free(out);
    gcl_comm_destroy(comm);
    return rc;
}

static void test_eager_clocks(void **state)
{
    (void)state;
    for (int k = 0; k < CALLS; k++) {
        clocks_t c = {.k = k};
        gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
        cfg.num_replicas = N;
        for (c.pass = 0; c.pass < 2; c.pass++) {
            gcl_instance_t inst;
            if (c.pass == 0)
                setenv("GCL_EAGER_MAX_BYTES", "0", 1);
            assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
            unsetenv("GCL_EAGER_MAX_BYTES");
            assert_int_equal(gcl_run(inst, clock_program, &c), GCL_OK);
            gcl_finalize(inst);
        }
        for (int r = 0; r < N; r++)
            if (c.t[0][r] != c.t[1][r] || c.t[1][r] <= 0)
                fail_msg("call %d replica %d: eager %.12g s, messages %.12g s", k, r, c.t[1][r],
                         c.t[0][r]);
    }
}

/* Early return: replica k enters the broadcast only once replica k - 1 has returned from it (a
 * broadcast that waited for the whole group would never return: the wait is bounded, 10 s). */
typedef struct {
    int mode; /* 0: all well; 1: replica 1 mismatches, replica 0 calls a barrier next; 2: the
               * same, and replica 0's program ends right after its broadcast */
    atomic_int returned[N];
    gcl_status_t rc[N];
    double root_clock, entry[N];
    int stuck;
} early_t;

static int wait_for(atomic_int *flag)
{
    for (int i = 0; i < 10000 && !atomic_load(flag); i++)
        nanosleep(&(struct timespec){0, 1000000}, NULL);
    return atomic_load(flag);
}

static gcl_status_t early_program(gcl_ctx_t ctx, void *arg)
{
    early_t *e = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float in[8], out[8] = {0};
    for (int i = 0; i < 8; i++)
        in[i] = value(me, 0, (size_t)i);
    if (me > 0 && !wait_for(&e->returned[me - 1]))
        e->stuck = 1;
    gcl_status_t rc = GCL_OK;
    if (me > 0) /* late in simulated time too */
        rc = gcl_charge_compute(ctx, "late", 1e9 * me, 0, GCL_F32);
    e->entry[me] = gcl_sim_time(ctx);
    if (rc == GCL_OK)
        rc = gcl_broadcast(comm, in, out, e->mode && me == 1 ? 7 : 8, GCL_F32, 0);
    atomic_store(&e->returned[me], 1);
    for (int i = 0; rc == GCL_OK && i < 8; i++)
        if (out[i] != value(0, 0, (size_t)i))
            rc = GCL_ERR_INTERNAL;
    if (rc == GCL_OK && !(e->mode == 2 && me == 0))
        rc = gcl_barrier(comm);
    if (me == 0)
        e->root_clock = gcl_sim_time(ctx);
    e->rc[me] = rc;
    gcl_comm_destroy(comm);
    return rc;
}

static void test_eager_broadcast_returns_early(void **state)
{
    (void)state;
    for (int mode = 0; mode < 3; mode++) {
        early_t *e = calloc(1, sizeof *e);
        e->mode = mode;
        gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
        cfg.num_replicas = N;
        gcl_instance_t inst;
        assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
        gcl_status_t rc = gcl_run(inst, early_program, e);
        gcl_finalize(inst);
        assert_int_equal(e->stuck, 0);
        if (mode == 0) {
            assert_int_equal(rc, GCL_OK);
            /* Replica 0's clock waited, as on the pod, for the last replica to enter. */
            assert_true(e->entry[N - 1] > e->entry[N - 2] && e->entry[N - 2] > 0);
            assert_true(e->root_clock > e->entry[N - 1]);
        } else {
            assert_int_not_equal(rc, GCL_OK);
            assert_int_equal(e->rc[1], GCL_ERR_MISMATCH);
            if (mode == 1) /* its broadcast returned; its next call reports the mismatch */
                assert_int_equal(e->rc[0], GCL_ERR_MISMATCH);
        }
        free(e);
    }
}

/* A broadcast's readers by both paths, the same simulated time: in order, each reader enters
 * once the root has returned, finds the root's cell at entry, copies it and returns before its
 * call is set up (gcl/src/api/call.c, early); in reverse, every reader waits in the call before the
 * root enters (the engine finds the root's cell). 20 broadcasts a run, uneven compute between
 * them; every replica's final clock must agree to the bit, and every value arrive. */
enum { ORDERED = 20 };

typedef struct {
    int reverse, stuck;
    atomic_int step[ORDERED], wrong;
    double clock[2][N];
} order_t;

static gcl_status_t order_program(gcl_ctx_t ctx, void *arg)
{
    order_t *o = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < ORDERED && rc == GCL_OK; k++) {
        float in[3] = {(float)me, (float)k, 0.5f}, out[3] = {0};
        rc = gcl_charge_compute(ctx, "uneven", 1e6 * ((me * 3 + k) % 7), 0, GCL_F32);
        /* Forward: the root returns (step = 1), then the readers enter. Reverse: the readers
         * enter (step counts them), then the root, 2 ms after the last. */
        if (!o->reverse && me > 0 && !wait_for(&o->step[k]))
            o->stuck = 1;
        if (o->reverse && me == 0) {
            for (int i = 0; i < 10000 && atomic_load(&o->step[k]) < N - 1; i++)
                nanosleep(&(struct timespec){0, 1000000}, NULL);
            nanosleep(&(struct timespec){0, 2000000}, NULL);
        }
        if (o->reverse && me > 0)
            atomic_fetch_add(&o->step[k], 1);
        if (rc == GCL_OK)
            rc = gcl_broadcast(comm, in, out, 3, GCL_F32, 0);
        if (!o->reverse && me == 0)
            atomic_store(&o->step[k], 1);
        if (rc == GCL_OK && (out[0] != 0 || out[1] != (float)k || out[2] != 0.5f))
            atomic_fetch_add(&o->wrong, 1);
        if (rc == GCL_OK && strcmp(gcl_comm_algorithm(comm, "broadcast"), "eager") != 0)
            atomic_fetch_add(&o->wrong, 1);
        if (rc == GCL_OK && k % 4 == 3)
            rc = gcl_barrier(comm);
    }
    o->clock[o->reverse][me] = gcl_sim_time(ctx);
    gcl_comm_destroy(comm);
    return rc;
}

static void test_eager_broadcast_early_clocks(void **state)
{
    (void)state;
    order_t *o = calloc(1, sizeof *o);
    for (o->reverse = 0; o->reverse < 2; o->reverse++) {
        for (int k = 0; k < ORDERED; k++)
            atomic_store(&o->step[k], 0);
        run_on(N, order_program, o);
    }
    assert_int_equal(o->stuck, 0);
    assert_int_equal(atomic_load(&o->wrong), 0);
    for (int r = 0; r < N; r++)
        if (o->clock[0][r] != o->clock[1][r] || o->clock[0][r] <= 0)
            fail_msg("replica %d: in order %.12g s, in reverse %.12g s", r, o->clock[0][r],
                     o->clock[1][r]);
    free(o);
}

/* Cells reused many times over, mostly without a look at the acks (an owner knows its group has
 * read a call once every rank has entered a later one of the group), and by the acks where the
 * calls of two communicators interleave: 3000 calls, broadcasts from a root that moves, every
 * value checked. A claim that never found its cell free would hang the test. */
static gcl_status_t reuse_program(gcl_ctx_t ctx, void *arg)
{
    atomic_int *wrong = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t all, half;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &all));
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_consecutive(N / 2), &half));
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < 3000 && rc == GCL_OK; k++) {
        float in[4], out[4];
        for (int i = 0; i < 4; i++)
            in[i] = (float)(me + k + i);
        if (k % 3 == 2) { /* the other communicator, a broadcast from a rank that moves */
            int root = k % (N / 2);
            rc = gcl_broadcast(half, in, out, 4, GCL_F32, root);
            int from = me / (N / 2) * (N / 2) + root;
            for (int i = 0; rc == GCL_OK && i < 4; i++)
                if (out[i] != (float)(from + k + i))
                    atomic_fetch_add(wrong, 1);
            continue;
        }
        rc = gcl_all_reduce(all, in, out, 4, GCL_F32, GCL_SUM);
        for (int i = 0; rc == GCL_OK && i < 4; i++)
            if (out[i] != (float)(N * (N - 1) / 2 + N * (k + i)))
                atomic_fetch_add(wrong, 1);
    }
    gcl_comm_destroy(half);
    gcl_comm_destroy(all);
    return rc;
}

static void test_eager_cells_reused(void **state)
{
    (void)state;
    atomic_int wrong = 0;
    run_on(N, reuse_program, &wrong);
    assert_int_equal(atomic_load(&wrong), 0);
}

/* In place: an eager all_reduce folds its own leaf from the caller's input, not its cell, where
 * the output does not overlap it or the group has 2 ranks (eager.c, own_leaf). On 2 and 6
 * replicas, every call of the pass in place must give the bits of the same call out of place. */
typedef struct {
    atomic_int wrong, eager;
} inplace_t;

static gcl_status_t inplace_program(gcl_ctx_t ctx, void *arg)
{
    inplace_t *t = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float *in = malloc(MAXC * sizeof *in), *out = malloc(MAXC * sizeof *out),
          *buf = malloc(MAXC * sizeof *buf);
    gcl_status_t rc = in && out && buf ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
    for (int k = 0; k < CALLS && rc == GCL_OK; k++) {
        if (calls[k].bcast)
            continue;
        for (size_t i = 0; i < calls[k].count; i++)
            buf[i] = in[i] = value(me, k, i);
        rc = gcl_all_reduce(comm, in, out, calls[k].count, GCL_F32, calls[k].op);
        if (rc == GCL_OK)
            rc = gcl_all_reduce(comm, buf, buf, calls[k].count, GCL_F32, calls[k].op);
        if (rc == GCL_OK && strcmp(gcl_comm_algorithm(comm, "all_reduce"), "eager") == 0)
            atomic_fetch_add(&t->eager, 1);
        if (rc == GCL_OK && memcmp(buf, out, calls[k].count * sizeof *out) != 0)
            atomic_fetch_add(&t->wrong, 1);
    }
    free(in);
    free(out);
    free(buf);
    gcl_comm_destroy(comm);
    return rc;
}

static void test_eager_in_place(void **state)
{
    (void)state;
    for (int n = 2; n <= N; n += N - 2) {
        inplace_t t = {0};
        run_on(n, inplace_program, &t);
        assert_int_equal(atomic_load(&t.eager), n * 4); /* the pass's 4 all_reduces */
        assert_int_equal(atomic_load(&t.wrong), 0);
    }
}

/* A crowded host (more IPU threads than cores: here the process is pinned to one core): a
 * barrier's first rank publishes only once every other rank's cell is there, so that it leaves
 * first, and the others return on its cell alone. Replicas enter late in turn, replica 0 too;
 * none may leave before the last has entered. Broadcasts from replica 0 between the barriers
 * settle the parked ones. The simulated time is the same as with the engine off. */
typedef struct {
    int pass, mode; /* mode 0: all well; 1: replica 1 calls an all_reduce where the others
                     * call the barrier; 2: replica 0 does */
    atomic_int arrived[BARRIERS], wrong, eager;
    gcl_status_t rc[N];
    double clock[2][N];
} barrier_t;

static gcl_status_t barrier_program(gcl_ctx_t ctx, void *arg)
{
    barrier_t *b = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    gcl_status_t rc = GCL_OK;
    for (int k = 0; k < BARRIERS && rc == GCL_OK; k++) {
        if (k % N == me) /* the late one */
            nanosleep(&(struct timespec){0, 100000 * (k % 3)}, NULL);
        rc = gcl_charge_compute(ctx, "uneven", 1e6 * ((me + k) % 5), 0, GCL_F32);
        atomic_fetch_add(&b->arrived[k], 1);
        float x[2] = {(float)me, (float)k}, y[2];
        if (rc == GCL_OK)
            rc = b->mode == 1 + (me == 0) && me <= 1 && k == 3
                     ? gcl_all_reduce(comm, x, y, 2, GCL_F32, GCL_SUM)
                     : gcl_barrier(comm);
        if (rc == GCL_OK && atomic_load(&b->arrived[k]) != N)
            atomic_fetch_add(&b->wrong, 1); /* left before every replica had entered */
        if (rc == GCL_OK && strcmp(gcl_comm_algorithm(comm, "barrier"), "eager") == 0)
            atomic_fetch_add(&b->eager, 1);
        if (rc == GCL_OK && k % 10 == 9 &&
            (rc = gcl_broadcast(comm, x, y, 2, GCL_F32, 0)) == GCL_OK &&
            (y[0] != 0 || y[1] != (float)k))
            atomic_fetch_add(&b->wrong, 1);
    }
    b->clock[b->pass][me] = gcl_sim_time(ctx);
    b->rc[me] = rc;
    gcl_comm_destroy(comm);
    return rc;
}

static void run_pinned(barrier_t *b, int eager)
{
    cpu_set_t all, one;
    assert_int_equal(sched_getaffinity(0, sizeof all, &all), 0);
    CPU_ZERO(&one);
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &all)) {
            CPU_SET(c, &one);
            break;
        }
    assert_int_equal(sched_setaffinity(0, sizeof one, &one), 0);
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = N;
    gcl_instance_t inst;
    if (!eager)
        setenv("GCL_EAGER_MAX_BYTES", "0", 1);
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    unsetenv("GCL_EAGER_MAX_BYTES");
    gcl_status_t rc = gcl_run(inst, barrier_program, b);
    gcl_finalize(inst);
    assert_int_equal(sched_setaffinity(0, sizeof all, &all), 0);
    assert_int_equal(rc == GCL_OK, b->mode == 0);
}

static void test_eager_barrier_crowded(void **state)
{
    (void)state;
    barrier_t *b = calloc(1, sizeof *b);
    for (b->pass = 0; b->pass < 2; b->pass++) {
        for (int k = 0; k < BARRIERS; k++)
            atomic_store(&b->arrived[k], 0);
        run_pinned(b, b->pass);
    }
    assert_int_equal(atomic_load(&b->wrong), 0);
    assert_int_equal(atomic_load(&b->eager), N * BARRIERS);
    for (int r = 0; r < N; r++)
        if (b->clock[0][r] != b->clock[1][r] || b->clock[1][r] <= 0)
            fail_msg("replica %d: eager %.12g s, messages %.12g s", r, b->clock[1][r],
                     b->clock[0][r]);
    /* A mismatch is named, and fails the run, not a hang (an IPU whose instance fails first is
     * GCL_ERR_ABORTED). */
    for (int mode = 1; mode <= 2; mode++) {
        memset(b, 0, sizeof *b);
        b->mode = mode;
        b->pass = 1;
        run_pinned(b, 1);
        int named = 0;
        for (int r = 0; r < N; r++) {
            assert_true(b->rc[r] == GCL_ERR_MISMATCH || b->rc[r] == GCL_ERR_ABORTED);
            named += b->rc[r] == GCL_ERR_MISMATCH;
        }
        assert_true(named > 0);
    }
    free(b);
}

int main(void)
{
    setenv("GCL_LOG_LEVEL", "none", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_eager_matches_messages),
        cmocka_unit_test(test_eager_clocks),
        cmocka_unit_test(test_eager_broadcast_returns_early),
        cmocka_unit_test(test_eager_broadcast_early_clocks),
        cmocka_unit_test(test_eager_cells_reused),
        cmocka_unit_test(test_eager_in_place),
        cmocka_unit_test(test_eager_barrier_crowded),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
