/*
 * Simulated time through the public API: a ring all-reduce inside one IPU-Link domain costs
 * exactly the alpha-beta closed form (plus the documented synchronisation), with data or in
 * phantom mode; crossing domains pays the GW-Link; compute charges follow the roofline; simulated
 * SRAM overflows with a report of what is allocated.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"
#include "sim/sim.h"

typedef struct {
    size_t count;
    const char *algo;
    int phantom;
    double t[64];
    gcl_sim_stats_t stats[64];
} ring_t;

static gcl_status_t ring_program(gcl_ctx_t ctx, void *arg)
{
    ring_t *r = arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    GCL_CHECK(gcl_comm_set_algorithm(comm, "all_reduce", r->algo));
    float *buf = r->phantom ? NULL : calloc(r->count, sizeof(float));
    gcl_status_t rc = gcl_all_reduce(comm, buf, buf, r->count, GCL_F32, GCL_SUM);
    r->t[gcl_ctx_replica(ctx)] = gcl_sim_time(ctx);
    gcl_sim_stats(ctx, &r->stats[gcl_ctx_replica(ctx)]);
    free(buf);
    gcl_comm_destroy(comm);
    return rc;
}

static void run_ring(ring_t *r, int replicas, const char *topology)
{
    setenv("GCL_TOPOLOGY", topology, 1);
    if (r->phantom)
        setenv("GCL_SIM_PHANTOM", "1", 1);
    gcl_config_t cfg = {.num_replicas = replicas, .ipus_per_replica = 1};
    gcl_instance_t inst;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    assert_int_equal(gcl_run(inst, ring_program, r), GCL_OK);
    gcl_finalize(inst);
    unsetenv("GCL_TOPOLOGY");
    unsetenv("GCL_SIM_PHANTOM");
}

/* 2(n-1) x (alpha + S / (n B)) + one synchronisation of the group, in picoseconds. */
static sim_time_t closed_form(const char *preset, int n, uint64_t bytes)
{
    sim_topology_t *t;
    assert_int_equal(sim_topology_preset(preset, &t, NULL, 0), 0);
    sim_route_t route;
    assert_int_equal(sim_topology_route(t, 0, 1, &route), 0);
    assert_int_equal(route.hops, 1);
    int ipus[64];
    for (int i = 0; i < n; i++)
        ipus[i] = i;
    sim_time_t sync;
    assert_int_equal(sim_sync_time(t, ipus, n, &sync), 0);
    /* The documented IPU-Link: 500 ns per hop, 32 GB/s per direction. */
    assert_int_equal(route.latency, 500000);
    assert_int_equal(route.bandwidth, 32000000000ull);
    sim_time_t step = route.latency + sim_xfer_time(bytes / (uint64_t)n, route.bandwidth);
    sim_topology_free(t);
    return sync + (sim_time_t)(2 * (n - 1)) * step;
}

static void test_ring_closed_form(void **state)
{
    (void)state;
    const size_t count = 16 * 65536; /* 4 MiB: 16 blocks of 256 KiB */
    sim_time_t want = closed_form("POD16", 16, count * 4);
    for (int phantom = 0; phantom < 2; phantom++) {
        ring_t r = {.count = count, .algo = "clockwise_ring", .phantom = phantom};
        run_ring(&r, 16, "POD16");
        for (int i = 0; i < 16; i++) {
            assert_true(r.t[i] == (double)want * 1e-12);
            /* A symmetric ring never waits: all of it is sync and exchange. */
            assert_true(r.stats[i].idle_s == 0.0);
            assert_true(r.stats[i].compute_s == 0.0);
        }
    }
}

static const char *write_topology(const char *text)
{
    static char path[64];
    snprintf(path, sizeof path, "/tmp/gcl-test-topo-%d.txt", (int)getpid());
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
    return path;
}

static void test_crossing_domains_pays_gw_link(void **state)
{
    (void)state;
    const size_t count = 8 * 16384;
    ring_t one = {.count = count, .algo = "clockwise_ring"};
    ring_t two = one;
    run_ring(&one, 8, write_topology("name one\nipus 8\nild_size 8\nwiring ring\n"));
    run_ring(&two, 8, write_topology("name two\nipus 8\nild_size 4\nwiring ring\n"));
    unlink(write_topology(""));
    sim_topology_t *t;
    assert_int_equal(sim_topology_preset("POD128", &t, NULL, 0), 0);
    sim_topology_params_t p;
    sim_topology_get_params(t, &p);
    sim_topology_free(t);
    for (int i = 0; i < 8; i++) {
        /* Every step that crosses the gateways costs at least the GW-Link's extra time for the
         * block, and at least one step of every rank's chain crosses them. */
        assert_true(two.t[i] > one.t[i]);
        assert_true(two.t[i] == two.t[0] || two.t[i] != one.t[i]);
    }
    /* Bitwise the same the second time. */
    ring_t again = {.count = count, .algo = "clockwise_ring"};
    run_ring(&again, 8, write_topology("name two\nipus 8\nild_size 4\nwiring ring\n"));
    unlink(write_topology(""));
    assert_memory_equal(again.t, two.t, sizeof two.t);
}

/* A blocking call over one host runs host-direct, a non-blocking one by messages: the simulated
 * time (which follows the pod algorithm's schedule either way) and the result must agree. */
typedef struct {
    size_t count;
    int path; /* 0: blocking (host-direct), 1: non-blocking (messages) */
    double t[2][16];
    float first[2][16];
} paths_t;

static gcl_status_t paths_program(gcl_ctx_t ctx, void *arg)
{
    paths_t *p = arg;
    int me = gcl_ctx_replica(ctx);
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    float *buf = malloc(p->count * sizeof(float));
    gcl_status_t rc = GCL_OK;
    for (int path = p->path; rc == GCL_OK && path == p->path; path++) {
        for (size_t i = 0; i < p->count; i++)
            buf[i] = (float)((me * 7 + (int)i) % 5);
        double t0 = gcl_sim_time(ctx);
        if (path == 0) {
            rc = gcl_all_reduce(comm, buf, buf, p->count, GCL_F32, GCL_SUM);
            const char *used = gcl_comm_algorithm(comm, "all_reduce");
            if (rc == GCL_OK && strcmp(used, "host_direct") != 0)
                rc = GCL_ERR_INTERNAL;
        } else {
            gcl_request_t req;
            rc = gcl_all_reduce_start(comm, buf, buf, p->count, GCL_F32, GCL_SUM, &req);
            if (rc == GCL_OK)
                rc = gcl_wait(req);
        }
        p->t[path][me] = gcl_sim_time(ctx) - t0;
        p->first[path][me] = buf[p->count - 1];
    }
    free(buf);
    gcl_comm_destroy(comm);
    return rc;
}

static void test_host_direct_matches_messages(void **state)
{
    (void)state;
    size_t counts[] = {8192, 300001};
    for (size_t c = 0; c < 2; c++) {
        paths_t p = {.count = counts[c]};
        /* Each path in a fresh instance, so both start from the same clocks. */
        for (p.path = 0; p.path < 2; p.path++) {
            gcl_config_t cfg = {.num_replicas = 6, .ipus_per_replica = 1};
            gcl_instance_t inst;
            setenv("GCL_TOPOLOGY", "POD16", 1);
            assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
            unsetenv("GCL_TOPOLOGY");
            assert_int_equal(gcl_run(inst, paths_program, &p), GCL_OK);
            gcl_finalize(inst);
        }
        for (int r = 0; r < 6; r++) {
            if (p.t[0][r] != p.t[1][r])
                fail_msg("count %zu replica %d: host-direct %.9g s, messages %.9g s", counts[c], r,
                         p.t[0][r], p.t[1][r]);
            assert_true(p.t[0][r] > 0);
            assert_true(p.first[0][r] == p.first[1][r]);
        }
    }
}

typedef struct {
    gcl_status_t oom;
    char report[2048];
    double t;
    void *ptr;
} mem_t;

static gcl_status_t mem_program(gcl_ctx_t ctx, void *arg)
{
    mem_t *m = arg;
    void *weights, *grads, *big;
    GCL_CHECK(gcl_ipu_malloc(ctx, 500u << 20, "weights", &weights));
    GCL_CHECK(gcl_ipu_malloc(ctx, 300u << 20, "gradients", &grads));
    m->oom = gcl_ipu_malloc(ctx, 200u << 20, "activations", &big);
    snprintf(m->report, sizeof m->report, "%s", gcl_ctx_last_error(ctx));
    gcl_ipu_free(ctx, grads);
    GCL_CHECK(gcl_ipu_malloc(ctx, 200u << 20, "activations", &big));
    m->ptr = big;
    /* 250 TFLOP of f16 at the GC200's 250 TFLOPS: one simulated second. */
    GCL_CHECK(gcl_charge_compute(ctx, "matmul", 250e12, 0, GCL_F16));
    m->t = gcl_sim_time(ctx);
    gcl_ipu_free(ctx, big);
    gcl_ipu_free(ctx, weights);
    return GCL_OK;
}

static void test_memory_and_compute(void **state)
{
    (void)state;
    for (int phantom = 0; phantom < 2; phantom++) {
        if (phantom)
            setenv("GCL_SIM_PHANTOM", "1", 1);
        gcl_config_t cfg = {.num_replicas = 1, .ipus_per_replica = 1};
        gcl_instance_t inst;
        assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
        mem_t m = {0};
        assert_int_equal(gcl_run(inst, mem_program, &m), GCL_OK);
        gcl_finalize(inst);
        unsetenv("GCL_SIM_PHANTOM");
        assert_int_equal(m.oom, GCL_ERR_OUT_OF_MEMORY);
        assert_non_null(strstr(m.report, "activations"));
        assert_non_null(strstr(m.report, "weights"));
        assert_non_null(strstr(m.report, "gradients"));
        assert_true(m.t == 1.0);
        assert_non_null(m.ptr);
    }
}

static void test_too_many_ipus(void **state)
{
    (void)state;
    gcl_config_t cfg = {.num_replicas = 32, .ipus_per_replica = 1};
    gcl_instance_t inst;
    setenv("GCL_TOPOLOGY", "POD16", 1);
    assert_int_equal(gcl_init(&cfg, &inst), GCL_ERR_INVALID_ARGUMENT);
    setenv("GCL_TOPOLOGY", "POD17", 1);
    assert_int_equal(gcl_init(&cfg, &inst), GCL_ERR_INVALID_ARGUMENT);
    unsetenv("GCL_TOPOLOGY");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_closed_form),
        cmocka_unit_test(test_crossing_domains_pays_gw_link),
        cmocka_unit_test(test_host_direct_matches_messages),
        cmocka_unit_test(test_memory_and_compute),
        cmocka_unit_test(test_too_many_ipus),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
