/*
 * The link cost model held to closed forms: single messages, flows queueing on shared links,
 * and ring all-reduce run step by step through the flow model against the documented
 * alpha-beta time, inside one ILD and across GW-Links. Times must be bitwise reproducible.
 */
#include <stdio.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cost/cost.h"

#define NS(x)  ((sim_time_t)(x)*SIM_PS_PER_NS)
#define MiB    (1024ULL * 1024ULL)
#define IPU_BW 32000000000ULL /* bytes/s of one IPU-Link per direction (the preset) */

static sim_topology_t *preset(const char *name)
{
    sim_topology_t *t = NULL;

    assert_int_equal(sim_topology_preset(name, &t, NULL, 0), 0);
    return t;
}

/* PRESET with its gateways at twice their PCIe rate (gateway_ipu_gbs 64), so that the GW-Links
 * stay the bottleneck of a route between domains whatever the GW-Link bandwidth a test sets;
 * at the default (32 GB/s) the two bonded ports of a POD128 bind already (test_gateway_hop_pcie
 * in test_sim_topology.c). */
static sim_topology_t *wide(const char *name)
{
    char spec[64], err[256] = "";
    sim_topology_t *t = NULL;

    snprintf(spec, sizeof(spec), "%s,gateway_ipu_gbs=64", name);
    assert_int_equal(sim_topology_open(spec, &t, err, sizeof(err)), 0);
    return t;
}

/*
 * Runs the 2(n-1) steps of a ring all-reduce over IPUS (reduce-scatter then all-gather: in every
 * step each IPU sends one chunk of ceil(bytes/n) to its successor) through sim_flows_cost().
 * BSP: a step starts when the previous step's last flow has arrived, as on the IPU. Otherwise
 * dataflow: each IPU sends when its own clock allows, i.e. once it has received the previous
 * step's chunk. Link bookings persist over the steps. Stores the final clock of every ring
 * position in CLOCKS (may be NULL) and returns the latest. PERMUTE shuffles each step's flow
 * array, which must not change anything.
 */
static sim_time_t run_ring(const sim_topology_t *t, const int *ipus, int n, uint64_t bytes, int bsp,
                           int permute, sim_time_t *clocks)
{
    sim_flow_t *f = calloc((size_t)n, sizeof(*f));
    sim_time_t *clock = calloc((size_t)n, sizeof(*clock));
    uint64_t chunk = bytes / (uint64_t)n + (bytes % (uint64_t)n != 0);
    sim_time_t step_start = 0, last = 0;
    sim_flow_ws_t *ws;

    assert_non_null(f);
    assert_non_null(clock);
    assert_int_equal(sim_flow_ws_create(t, 4, &ws), 0); /* it grows to n on the first step */
    for (int s = 0; s < 2 * (n - 1); s++) {
        for (int k = 0; k < n; k++) {
            int i = permute ? (k * 7 + s) % n : k; /* 7 is coprime with the n used here */

            f[k] = (sim_flow_t){.src = ipus[i],
                                .dst = ipus[(i + 1) % n],
                                .bytes = chunk,
                                .send_time = bsp ? step_start : clock[i]};
        }
        assert_int_equal(sim_flows_cost(ws, f, (size_t)n), 0);
        for (int k = 0; k < n; k++) {
            int to = 0;

            while (ipus[to] != f[k].dst)
                to++;
            clock[to] = sim_time_max(clock[to], f[k].arrival);
            step_start = sim_time_max(step_start, f[k].arrival);
        }
    }
    for (int i = 0; i < n; i++)
        last = sim_time_max(last, clock[i]);
    if (clocks != NULL)
        memcpy(clocks, clock, (size_t)n * sizeof(*clock));
    sim_flow_ws_destroy(ws);
    free(clock);
    free(f);
    return last;
}

static void test_single_message(void **state)
{
    sim_topology_t *t = preset("POD64");
    sim_time_t dt;
    sim_route_t r;

    (void)state;
    /* One hop: 500 ns, then 1 MiB at 32 GB/s = 31.25 ps per byte. */
    assert_int_equal(sim_message_time(t, 0, 1, MiB, &dt), 0);
    assert_int_equal(dt, NS(500) + 32768000);
    /* 16 hops, cut-through: latency adds up, bandwidth does not divide. */
    assert_int_equal(sim_message_time(t, 0, 32, MiB, &dt), 0);
    assert_int_equal(dt, NS(16 * 500) + 32768000);
    assert_int_equal(sim_message_time(t, 5, 5, MiB, &dt), 0);
    assert_int_equal(dt, 0);
    assert_int_equal(sim_message_time(t, 0, 64, 1, &dt), -EINVAL);
    assert_int_equal(sim_topology_route(t, 0, 1, &r), 0);
    assert_int_equal(sim_route_time(&r, 0), NS(500));
    sim_topology_free(t);
}

static void test_two_flows_share_one_link(void **state)
{
    sim_topology_t *t = preset("POD64");
    const sim_time_t d = 32768000; /* 1 MiB over one IPU-Link */
    sim_flow_t f[2] = {{.src = 0, .dst = 1, .bytes = MiB}, {.src = 0, .dst = 1, .bytes = MiB}};
    sim_flow_ws_t *ws;

    (void)state;
    assert_int_equal(sim_flow_ws_create(t, 2, &ws), 0);
    assert_int_equal(sim_flows_cost(ws, f, 2), 0);
    assert_int_equal(f[0].start, 0);
    assert_int_equal(f[0].arrival, NS(500) + d);
    /* The second queues behind the first and finishes one transfer time later. */
    assert_int_equal(f[1].start, d);
    assert_int_equal(f[1].arrival, NS(500) + 2 * d);
    assert_int_equal(f[1].arrival - f[0].arrival, d);
    sim_flow_ws_destroy(ws);
    sim_topology_free(t);
}

static void test_shared_link_on_a_longer_route(void **state)
{
    sim_topology_t *t = preset("POD64");
    const sim_time_t d = 32768000;
    sim_flow_ws_t *ws;
    sim_route_t r;
    /* Listed in the "wrong" order: service is by (send time, src, dst), not array position. */
    sim_flow_t f[2] = {{.src = 1, .dst = 2, .bytes = MiB}, {.src = 0, .dst = 2, .bytes = MiB}};

    (void)state;
    /* 0 -> 2 goes through 1 (the lower of the two equal next nodes, 1 and 3). */
    assert_int_equal(sim_topology_route(t, 0, 2, &r), 0);
    assert_int_equal(r.hops, 2);
    assert_int_equal(r.links[1], sim_topology_find_link(t, 1, 2));
    assert_int_equal(sim_flow_ws_create(t, 2, &ws), 0);
    assert_int_equal(sim_flows_cost(ws, f, 2), 0);
    assert_int_equal(f[1].start, 0);
    assert_int_equal(f[1].arrival, NS(1000) + d);
    assert_int_equal(f[0].start, d); /* waits for link 1 -> 2 */
    assert_int_equal(f[0].arrival, d + NS(500) + d);
    sim_flow_ws_destroy(ws);
    sim_topology_free(t);
}

static void test_queue_rules(void **state)
{
    sim_topology_t *t = preset("POD64");
    const sim_time_t d = 32768000;
    sim_flow_ws_t *ws;
    sim_flow_t f[3];

    (void)state;
    assert_int_equal(sim_flow_ws_create(t, 1, &ws), 0);
    /* Full duplex: the two directions of a cable do not queue. */
    f[0] = (sim_flow_t){.src = 0, .dst = 1, .bytes = MiB};
    f[1] = (sim_flow_t){.src = 1, .dst = 0, .bytes = MiB};
    assert_int_equal(sim_flows_cost(ws, f, 2), 0);
    assert_int_equal(f[0].arrival, NS(500) + d);
    assert_int_equal(f[1].arrival, NS(500) + d);
    /* Bookings persist across calls until a reset... */
    f[0] = (sim_flow_t){.src = 0, .dst = 1, .bytes = MiB, .send_time = 10};
    assert_int_equal(sim_flows_cost(ws, f, 1), 0);
    assert_int_equal(f[0].start, d);
    sim_flow_ws_reset(ws);
    /* ...which frees every link at once. A later send never waits for an idle link. */
    f[0] = (sim_flow_t){.src = 0, .dst = 1, .bytes = MiB, .send_time = 10};
    f[1] = (sim_flow_t){.src = 0, .dst = 1, .bytes = MiB, .send_time = 10 + 2 * d};
    f[2] = (sim_flow_t){.src = 7, .dst = 7, .bytes = MiB, .send_time = 99};
    assert_int_equal(sim_flows_cost(ws, f, 3), 0); /* grows past max_flows = 1 */
    assert_int_equal(f[0].start, 10);
    assert_int_equal(f[1].start, 10 + 2 * d);
    assert_int_equal(f[2].arrival, 99); /* to itself: free and instant */
    /* A bad flow rejects the whole call and books nothing. */
    sim_flow_ws_reset(ws);
    f[0] = (sim_flow_t){.src = 0, .dst = 1, .bytes = MiB, .arrival = 123};
    f[1] = (sim_flow_t){.src = 0, .dst = 64, .bytes = MiB};
    assert_int_equal(sim_flows_cost(ws, f, 2), -EINVAL);
    assert_int_equal(f[0].arrival, 123);
    f[1] = (sim_flow_t){.src = -1, .dst = 0, .bytes = MiB};
    assert_int_equal(sim_flows_cost(ws, f, 2), -EINVAL);
    assert_int_equal(sim_flows_cost(ws, f, 1), 0);
    assert_int_equal(f[0].start, 0);
    assert_int_equal(sim_flow_ws_create(NULL, 1, &ws), -EINVAL);
    sim_flow_ws_destroy(ws);
    sim_flow_ws_destroy(NULL);
    sim_topology_free(t);
}

static void test_gw_link_queues(void **state)
{
    sim_topology_t *t = wide("POD128");
    const sim_time_t beta = 40000000; /* 10^6 bytes at 25 GB/s */
    sim_flow_t f[2] = {{.src = 1, .dst = 65, .bytes = 1000000},
                       {.src = 0, .dst = 64, .bytes = 1000000}};
    sim_flow_ws_t *ws;

    (void)state;
    assert_int_equal(sim_flow_ws_create(t, 2, &ws), 0);
    /* IPUs 0 and 1 share their IPU-M2000's gateway and its GW-Link to ILD 1. */
    assert_int_equal(sim_flows_cost(ws, f, 2), 0);
    assert_int_equal(f[1].arrival, NS(2 * 500 + 3000) + beta);
    assert_int_equal(f[0].start, beta);
    assert_int_equal(f[0].arrival, beta + NS(2 * 500 + 3000) + beta);
    sim_flow_ws_destroy(ws);
    sim_topology_free(t);
}

static int *iota(int n, int first)
{
    int *v = malloc((size_t)n * sizeof(int));

    assert_non_null(v);
    for (int i = 0; i < n; i++)
        v[i] = first + i;
    return v;
}

/* The textbook alpha-beta time with exact integers: 2(n-1) alpha + 2(n-1) S 10^12 / (n B). */
static sim_time_t alpha_beta(int n, sim_time_t alpha, uint64_t bytes, uint64_t bw)
{
    uint64_t steps = 2 * (uint64_t)(n - 1);

    assert_int_equal((bytes * SIM_PS_PER_US) % ((uint64_t)n * (bw / SIM_PS_PER_US)), 0);
    return steps * alpha + steps * (bytes * SIM_PS_PER_US / ((uint64_t)n * (bw / SIM_PS_PER_US)));
}

static void test_ring_allreduce_inside_one_ild(void **state)
{
    static const struct {
        const char *preset;
        int n;
    } cases[] = {{"M2000", 4}, {"POD16", 16}, {"POD64", 64}};

    (void)state;
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        sim_topology_t *t = preset(cases[c].preset);
        int n = cases[c].n, *ipus = iota(n, 0);
        uint64_t bytes = (uint64_t)n * MiB;
        sim_time_t want = alpha_beta(n, NS(500), bytes, IPU_BW);
        sim_ring_cost_t rc;

        /* 2(n-1) steps of 500 ns and 1 MiB at 32 GB/s. */
        assert_int_equal(want, 2 * (uint64_t)(n - 1) * (NS(500) + 32768000));
        assert_int_equal(sim_ring_allreduce_cost(t, ipus, n, bytes, &rc), 0);
        assert_int_equal(rc.steps, 2 * (n - 1));
        assert_int_equal(rc.chunk, MiB);
        assert_int_equal(rc.alpha, NS(500));
        assert_int_equal(rc.beta, 32768000);
        assert_int_equal(rc.gw_edges, 0);
        assert_int_equal(rc.total, want);
        assert_int_equal(sim_ring_allreduce_time(t, ipus, n, bytes), want);
        /* The step pattern through the flow model gives exactly the closed form, whether the
         * steps are synchronised (BSP) or each IPU goes as soon as its data is there. */
        assert_int_equal(run_ring(t, ipus, n, bytes, 1, 0, NULL), want);
        assert_int_equal(run_ring(t, ipus, n, bytes, 0, 0, NULL), want);
        free(ipus);
        sim_topology_free(t);
    }
}

static void test_ring_with_a_longer_edge(void **state)
{
    sim_topology_t *t = preset("POD64");
    int *ipus = iota(8, 0);
    sim_ring_cost_t rc;

    (void)state;
    /* IPUs 0..7 are rungs 0..3: the closing edge 7 -> 0 runs 3 hops down column 0. */
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 8, 8 * MiB, &rc), 0);
    assert_int_equal(rc.slowest_edge, 7);
    assert_int_equal(rc.alpha, NS(3 * 500));
    assert_int_equal(rc.total, 14 * (NS(1500) + 32768000));
    assert_int_equal(run_ring(t, ipus, 8, 8 * MiB, 1, 0, NULL), rc.total);
    free(ipus);
    sim_topology_free(t);
}

static void test_ring_allreduce_across_ilds(void **state)
{
    sim_topology_t *t = wide("POD128");
    int *ipus = iota(128, 0);
    uint64_t bytes = 128 * MiB;
    const sim_time_t beta_gw = 41943040; /* 1 MiB at 2 x 12.5 GB/s */
    const sim_time_t alpha_gw = NS(3 * 500 + 3000);
    sim_time_t inside, dataflow;
    sim_ring_cost_t rc;

    (void)state;
    /* Edges 63 -> 64 and 127 -> 0 cross: IPU-Link, gateway, GW-Link, gateway. */
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 128, bytes, &rc), 0);
    assert_int_equal(rc.gw_edges, 2);
    assert_int_equal(rc.slowest_edge, 63);
    assert_int_equal(rc.alpha, alpha_gw);
    assert_int_equal(rc.beta, beta_gw);
    assert_int_equal(rc.total, 254 * (alpha_gw + beta_gw));
    assert_int_equal(run_ring(t, ipus, 128, bytes, 1, 0, NULL), rc.total);
    /* The same ring inside one ILD would cost alpha_beta() with IPU-Links only. */
    inside = alpha_beta(128, NS(500), bytes, IPU_BW);
    assert_true(rc.total > inside);
    /* Without step barriers the ring pipelines: the GW-Link is its bottleneck, every IPU-Link
     * upstream delivers the next chunk before the GW-Link is free again, so the 254 chunks cross
     * it back to back and the last one lands one route latency later. Still the GW-Link term,
     * never the IPU-Link one. */
    dataflow = run_ring(t, ipus, 128, bytes, 0, 0, NULL);
    assert_int_equal(dataflow, 254 * beta_gw + alpha_gw);
    assert_true(dataflow > inside);
    free(ipus);
    sim_topology_free(t);
}

static void test_ring_over_four_ilds(void **state)
{
    sim_topology_t *t = wide("POD256");
    const int ipus[4] = {0, 64, 128, 192};
    sim_ring_cost_t rc;

    (void)state;
    /* One IPU per ILD: every edge is gateway attach, one GW-Link port (12.5 GB/s), attach. */
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 4, 4 * MiB, &rc), 0);
    assert_int_equal(rc.gw_edges, 4);
    assert_int_equal(rc.alpha, NS(2 * 500 + 3000));
    assert_int_equal(rc.beta, 83886080); /* 1 MiB at 12.5 GB/s = 80 ps per byte */
    assert_int_equal(rc.total, 6 * (NS(4000) + 83886080));
    assert_int_equal(run_ring(t, ipus, 4, 4 * MiB, 1, 0, NULL), rc.total);
    assert_int_equal(run_ring(t, ipus, 4, 4 * MiB, 0, 0, NULL), rc.total);
    sim_topology_free(t);
}

static void test_ring_closed_form_edges(void **state)
{
    sim_topology_t *t = preset("POD64");
    int *ipus = iota(64, 0);
    int bad[2] = {0, 64};
    sim_ring_cost_t rc, rs, ag;

    (void)state;
    /* Bytes that n does not divide: the chunk rounds up, and so does its transfer time. */
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 64, 64 * MiB + 1, &rc), 0);
    assert_int_equal(rc.chunk, MiB + 1);
    assert_int_equal(rc.beta, 32768032); /* 1048577 * 31.25 = 32768031.25 */
    /* Reduce-scatter and all-gather are each half of an all-reduce. */
    assert_int_equal(sim_ring_reduce_scatter_cost(t, ipus, 64, 64 * MiB, &rs), 0);
    assert_int_equal(sim_ring_all_gather_cost(t, ipus, 64, 64 * MiB, &ag), 0);
    assert_int_equal(rs.steps, 63);
    assert_int_equal(rs.total + ag.total, sim_ring_allreduce_time(t, ipus, 64, 64 * MiB));
    /* One IPU costs nothing; bad arguments are refused. */
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 1, MiB, &rc), 0);
    assert_int_equal(rc.total, 0);
    assert_int_equal(rc.steps, 0);
    assert_int_equal(sim_ring_allreduce_cost(t, ipus, 0, MiB, &rc), -EINVAL);
    assert_int_equal(sim_ring_allreduce_cost(t, bad, 2, MiB, &rc), -EINVAL);
    assert_int_equal(sim_ring_allreduce_time(t, bad, 2, MiB), SIM_TIME_MAX);
    free(ipus);
    sim_topology_free(t);
}

static void test_bitwise_reproducible(void **state)
{
    sim_topology_t *a = wide("POD256");
    sim_topology_t *b = wide("POD256");
    int *ipus = iota(256, 0);
    sim_time_t *c1 = calloc(256, sizeof(sim_time_t));
    sim_time_t *c2 = calloc(256, sizeof(sim_time_t));
    sim_time_t *c3 = calloc(256, sizeof(sim_time_t));

    (void)state;
    /* Two builds, two workspaces, and a shuffled flow order: the same bits. */
    run_ring(a, ipus, 256, 256 * MiB + 12345, 0, 0, c1);
    run_ring(b, ipus, 256, 256 * MiB + 12345, 0, 0, c2);
    run_ring(b, ipus, 256, 256 * MiB + 12345, 0, 1, c3);
    assert_memory_equal(c1, c2, 256 * sizeof(sim_time_t));
    assert_memory_equal(c1, c3, 256 * sizeof(sim_time_t));
    assert_true(c1[0] > 0);
    free(c3);
    free(c2);
    free(c1);
    free(ipus);
    sim_topology_free(b);
    sim_topology_free(a);
}

static void test_sync(void **state)
{
    sim_topology_t *t = wide("POD128");
    const int one_ild[3] = {0, 5, 63}, two_ilds[2] = {0, 64}, bad[1] = {128};
    sim_time_t dt = 77;

    (void)state;
    assert_int_equal(sim_sync_time(t, one_ild, 1, &dt), 0);
    assert_int_equal(dt, 0);
    assert_int_equal(sim_sync_time(t, NULL, 0, &dt), 0);
    assert_int_equal(dt, 0);
    assert_int_equal(sim_sync_time(t, one_ild, 3, &dt), 0);
    assert_int_equal(dt, NS(1000));
    assert_int_equal(sim_sync_time(t, two_ilds, 2, &dt), 0);
    assert_int_equal(dt, NS(1000 + 5000));
    assert_int_equal(sim_sync_time(t, bad, 1, &dt), -EINVAL);
    assert_int_equal(sim_sync_time(t, one_ild, -1, &dt), -EINVAL);
    sim_topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_single_message),
        cmocka_unit_test(test_two_flows_share_one_link),
        cmocka_unit_test(test_shared_link_on_a_longer_route),
        cmocka_unit_test(test_queue_rules),
        cmocka_unit_test(test_gw_link_queues),
        cmocka_unit_test(test_ring_allreduce_inside_one_ild),
        cmocka_unit_test(test_ring_with_a_longer_edge),
        cmocka_unit_test(test_ring_allreduce_across_ilds),
        cmocka_unit_test(test_ring_over_four_ilds),
        cmocka_unit_test(test_ring_closed_form_edges),
        cmocka_unit_test(test_bitwise_reproducible),
        cmocka_unit_test(test_sync),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
