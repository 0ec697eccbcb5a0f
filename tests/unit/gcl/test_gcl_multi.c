/*
 * gcl_all_reduce_multi, with replicas as threads of one process through the public API: several
 * tensors of mixed types, laid end to end or scattered, in place and out of place, give bitwise
 * what one gcl_all_reduce per tensor gives; replicas that pass different lists get
 * GCL_ERR_MISMATCH; bad arguments are refused.
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

#include "gcl/gcl.h"
#include "gcl/sim.h"

#define NT 5

typedef struct {
    int contiguous; /* the f32 tensors lie end to end in one buffer */
    int in_place;
    gcl_redop_t op;
    int odd_list; /* the last replica passes another list (a mismatch) */
    atomic_int failures, mismatches;
} multi_t;

/* Element I of tensor K of replica R: small integers, exact in every type. */
static double val(int r, int k, size_t i)
{
    return (double)((int)((size_t)(5 * r + 3 * k) + i) % 9 - 4);
}

static void store(void *p, gcl_dtype_t t, size_t i, double v)
{
    if (t == GCL_F32)
        ((float *)p)[i] = (float)v;
    else if (t == GCL_I32)
        ((int32_t *)p)[i] = (int32_t)v;
    else if (t == GCL_U64)
        ((uint64_t *)p)[i] = (uint64_t)(v + 4); /* non-negative */
    else {
        _Float16 h = (_Float16)(float)v;
        memcpy((uint16_t *)p + i, &h, 2);
    }
}

static const gcl_dtype_t types[NT] = {GCL_F32, GCL_I32, GCL_F32, GCL_F16, GCL_U64};
static const size_t counts[NT] = {300, 7, 1025, 33, 0};

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    multi_t *m = arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    int me = gcl_ctx_replica(ctx), last = gcl_ctx_num_replicas(ctx) - 1;
    gcl_tensor_t t[NT];
    void *want[NT], *in[NT], *out[NT];
    float *block = malloc((counts[0] + counts[2]) * 2 * sizeof(float)); /* in, then out */
    for (int k = 0; k < NT; k++) {
        size_t es = gcl_dtype_size(types[k]), c = counts[k];
        int in_block = m->contiguous && types[k] == GCL_F32;
        in[k] = in_block ? (void *)(block + (k == 0 ? 0 : counts[0])) : malloc(c * es + 1);
        out[k] = m->in_place ? in[k]
                 : in_block  ? (void *)(block + counts[0] + counts[2] + (k == 0 ? 0 : counts[0]))
                             : malloc(c * es + 1);
        want[k] = malloc(c * es + 1);
        for (size_t i = 0; i < c; i++)
            store(in[k], types[k], i, val(me, k, i));
        /* The reference: one ordinary all_reduce per tensor, on a copy. */
        memcpy(want[k], in[k], c * es);
        if (gcl_all_reduce(comm, want[k], want[k], c, types[k], m->op) != GCL_OK)
            atomic_fetch_add(&m->failures, 1);
        t[k] = (gcl_tensor_t){in[k], out[k], c, types[k]};
    }
    if (m->odd_list && me == last) { /* the same f32 tensors, the others in another order */
        gcl_tensor_t x = t[1];
        t[1] = t[3];
        t[3] = x;
    }
    gcl_status_t rc = gcl_all_reduce_multi(comm, t, NT, m->op);
    if (rc == GCL_ERR_MISMATCH)
        atomic_fetch_add(&m->mismatches, 1);
    else if (rc != GCL_OK)
        atomic_fetch_add(&m->failures, 1);
    for (int k = 0; rc == GCL_OK && !m->odd_list && k < NT; k++) {
        if (memcmp(out[k], want[k], counts[k] * gcl_dtype_size(types[k])) != 0)
            atomic_fetch_add(&m->failures, 1);
    }
    for (int k = 0; k < NT; k++) {
        int in_block = m->contiguous && types[k] == GCL_F32;
        if (!in_block)
            free(in[k]);
        if (!in_block && !m->in_place)
            free(out[k]);
        free(want[k]);
    }
    free(block);
    gcl_comm_destroy(comm);
    return GCL_OK;
}

static void run(int replicas, int contiguous, int in_place, gcl_redop_t op, int odd)
{
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = replicas;
    cfg.log_level = odd ? GCL_LOG_LEVEL_OFF : GCL_LOG_LEVEL_DEFAULT;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    multi_t m = {.contiguous = contiguous, .in_place = in_place, .op = op, .odd_list = odd};
    gcl_run(inst, program, &m);
    if (atomic_load(&m.failures) || (!odd && atomic_load(&m.mismatches)))
        fail_msg("%d replicas, contiguous %d, in place %d, %s: %d failures, %d mismatches",
                 replicas, contiguous, in_place, gcl_redop_name(op), atomic_load(&m.failures),
                 atomic_load(&m.mismatches));
    if (odd) /* in the fused f32 call, or (its part done) marked for the next one */
        assert_int_equal(atomic_load(&m.mismatches), replicas);
    gcl_finalize(inst);
}

static void test_matches_one_call_per_tensor(void **state)
{
    (void)state;
    for (int r = 1; r <= 5; r += 2)
        for (int c = 0; c < 2; c++)
            for (int ip = 0; ip < 2; ip++) {
                run(r, c, ip, GCL_SUM, 0);
                run(r, c, ip, GCL_MAX, 0);
            }
    run(4, 1, 1, GCL_MIN, 0);
}

static void test_other_list_is_a_mismatch(void **state)
{
    (void)state;
    run(3, 1, 1, GCL_SUM, 1);
    run(2, 0, 0, GCL_SUM, 1);
}

typedef struct {
    gcl_status_t bad_n, null_list, bad_type, bad_op, empty;
    char why[256];
} bad_t;

static gcl_status_t bad_program(gcl_ctx_t ctx, void *arg)
{
    bad_t *b = arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float x[4] = {1, 2, 3, 4};
    int32_t y[2] = {1, 2};
    gcl_tensor_t t[2] = {{x, x, 4, GCL_F32}, {y, y, 2, GCL_I32}};
    b->bad_n = gcl_all_reduce_multi(comm, t, -1, GCL_SUM);
    b->null_list = gcl_all_reduce_multi(comm, NULL, 2, GCL_SUM);
    b->empty = gcl_all_reduce_multi(comm, NULL, 0, GCL_SUM);
    b->bad_op = gcl_all_reduce_multi(comm, t, 2, GCL_MEAN); /* mean on the i32 tensor */
    snprintf(b->why, sizeof b->why, "%s", gcl_last_error(comm));
    t[1].type = (gcl_dtype_t)42;
    b->bad_type = gcl_all_reduce_multi(comm, t, 2, GCL_SUM);
    gcl_comm_destroy(comm);
    return GCL_OK;
}

static void test_bad_arguments(void **state)
{
    (void)state;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.log_level = GCL_LOG_LEVEL_OFF;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    bad_t b;
    assert_int_equal(gcl_run(inst, bad_program, &b), GCL_OK);
    assert_int_equal(b.bad_n, GCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(b.null_list, GCL_ERR_INVALID_ARGUMENT);
    assert_int_equal(b.empty, GCL_OK);
    assert_int_equal(b.bad_op, GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(b.why, "i32 with mean"));
    assert_int_equal(b.bad_type, GCL_ERR_INVALID_ARGUMENT);
    gcl_finalize(inst);
}

typedef struct {
    gcl_status_t rc;
} phantom_t;

/* Phantom mode: buffers of simulated IPU memory hold no data; the call moves sizes only. */
static gcl_status_t phantom_program(gcl_ctx_t ctx, void *arg)
{
    phantom_t *p = arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    void *a, *b;
    GCL_CHECK(gcl_ipu_malloc(ctx, 1 << 20, "a", &a));
    GCL_CHECK(gcl_ipu_malloc(ctx, 1 << 20, "b", &b));
    gcl_tensor_t t[2] = {{a, a, 1000, GCL_F32}, {b, b, 5000, GCL_F16}};
    double before = gcl_sim_time(ctx);
    p->rc = gcl_all_reduce_multi(comm, t, 2, GCL_SUM);
    if (p->rc == GCL_OK && !(gcl_sim_time(ctx) > before))
        p->rc = GCL_ERR_INTERNAL; /* the call must cost simulated time */
    gcl_ipu_free(ctx, a);
    gcl_ipu_free(ctx, b);
    gcl_comm_destroy(comm);
    return GCL_OK;
}

static void test_phantom(void **state)
{
    (void)state;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = 4;
    cfg.phantom = 1;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    phantom_t p;
    assert_int_equal(gcl_run(inst, phantom_program, &p), GCL_OK);
    assert_int_equal(p.rc, GCL_OK);
    gcl_finalize(inst);
}

int main(void)
{
    setenv("GCL_TIMEOUT_S", "20", 1); /* a mismatch must never wait this long */
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matches_one_call_per_tensor),
        cmocka_unit_test(test_other_list_is_a_mismatch),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_phantom),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
