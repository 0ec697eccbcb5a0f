/*
 * The engines at the thread tier: many replicas as threads of one process. Blocking calls run
 * host-direct, non-blocking ones and small ones the canonical schedule's messages; every one
 * folds along the canonical tree, so each gives bitwise coll_canon_fold of the inputs, in
 * place or not. A forced algorithm folds in its own order (for 7 replicas the ring's differs
 * somewhere), and every path is charged the same simulated time when the pod algorithm is the
 * same.
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

#include "coll/canon.h"
#include "gcl/gcl.h"
#include "gcl/sim.h"

enum { N = 7, COUNT = 40000 };

typedef struct {
    float in[N][COUNT];
    float want[COUNT];
    atomic_int failures;
    double clock[4][N]; /* each replica's simulated clock after the calls of one path */
    int ring_differs;
    int mode; /* 0: paths agree; 1: forced ring */
    int path; /* 0 blocking, 1 blocking in place, 2 non-blocking, 3 non-blocking in place */
} job_t;

static void fill(job_t *j)
{
    uint64_t x = 88172645463325252ull;
    for (int r = 0; r < N; r++)
        for (int i = 0; i < COUNT; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            j->in[r][i] = (float)((double)(x >> 11) / 9007199254740992.0 - 0.5);
        }
    const void *src[N];
    for (int r = 0; r < N; r++)
        src[r] = j->in[r];
    float *scratch = malloc(8 * COUNT * sizeof *scratch);
    coll_canon_fold(COLL_F32, COLL_SUM, j->want, src, N, COUNT, scratch);
    free(scratch);
}

/* Runs one all_reduce of COUNT elements by PATH: 0 blocking out of place, 1 blocking in
 * place, 2 non-blocking, 3 non-blocking in place. */
static gcl_status_t reduce(gcl_comm_t comm, job_t *j, int me, int path, size_t count, float *out)
{
    float *in = path & 1 ? out : j->in[me];
    if (path & 1)
        memcpy(out, j->in[me], count * sizeof *out);
    if (path < 2)
        return gcl_all_reduce(comm, in, out, count, GCL_F32, GCL_SUM);
    gcl_request_t req;
    GCL_CHECK(gcl_all_reduce_start(comm, in, out, count, GCL_F32, GCL_SUM, &req));
    return gcl_wait(req);
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float *out = malloc(COUNT * sizeof *out);
    gcl_status_t rc = GCL_OK;
    if (j->mode == 1)
        rc = gcl_comm_set_algorithm(comm, "all_reduce", "clockwise_ring");
    static const size_t counts[] = {3, 1000, COUNT}; /* small ones below GCL_DIRECT_MIN_BYTES */
    int path = j->path;
    for (int k = 0; k < 3 && rc == GCL_OK; k++) {
        rc = reduce(comm, j, me, path, counts[k], out);
        if (rc != GCL_OK)
            break;
        int same = memcmp(out, j->want, counts[k] * sizeof *out) == 0;
        if (j->mode == 0 && !same) {
            fprintf(stderr, "path %d, %zu elements, replica %d (%s): not the tree's bits\n", path,
                    counts[k], me, gcl_comm_algorithm(comm, "all_reduce"));
            atomic_fetch_add(&j->failures, 1);
        }
        if (j->mode == 1 && !same && k == 2 && me == 0)
            j->ring_differs = 1;
        const char *used = gcl_comm_algorithm(comm, "all_reduce");
        if (j->mode == 0 && k == 2 && path < 2 && strcmp(used, "host_direct") != 0)
            atomic_fetch_add(&j->failures, 1);
        if (j->mode == 0 && path >= 2 && strcmp(used, "canonical") != 0)
            atomic_fetch_add(&j->failures, 1);
    }
    j->clock[path][me] = gcl_sim_time(ctx);
    free(out);
    return rc;
}

static void test_every_path_folds_the_tree(void **state)
{
    (void)state;
    job_t *j = calloc(1, sizeof *j);
    fill(j);
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = N;
    /* Each path from a fresh instance (clocks at 0), the same calls in the same order. */
    for (j->path = 0; j->path < 4; j->path++) {
        gcl_instance_t inst;
        assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
        assert_int_equal(gcl_run(inst, program, j), GCL_OK);
        gcl_finalize(inst);
    }
    assert_int_equal(atomic_load(&j->failures), 0);
    /* Simulated time is the pod algorithm's, whichever path moved the bytes. */
    for (int path = 1; path < 4; path++)
        for (int r = 0; r < N; r++)
            if (j->clock[path][r] != j->clock[0][r])
                fail_msg("path %d replica %d: %.9g s, path 0: %.9g s", path, r, j->clock[path][r],
                         j->clock[0][r]);
    assert_true(j->clock[0][0] > 0);
    /* A forced ring keeps its own order: other bits. */
    j->mode = 1;
    j->path = 0;
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    assert_int_equal(gcl_run(inst, program, j), GCL_OK);
    gcl_finalize(inst);
    assert_true(j->ring_differs);
    free(j);
}

int main(void)
{
    setenv("GCL_LOG_LEVEL", "none", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_path_folds_the_tree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
