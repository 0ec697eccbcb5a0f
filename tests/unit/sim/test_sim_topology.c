/*
 * Topology presets and routes: sizes, the ladder and its ring embedding, GW-Link routes, the
 * preset chooser, and that routes are a fixed function of the topology.
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

#include "sim/topology/topology.h"

#define NS(x) ((sim_time_t)(x)*SIM_PS_PER_NS)

static sim_topology_t *preset(const char *name)
{
    char err[256] = "";
    sim_topology_t *t = NULL;

    assert_int_equal(sim_topology_preset(name, &t, err, sizeof(err)), 0);
    assert_non_null(t);
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

/* Links out of node U of kind KIND. */
static int degree(const sim_topology_t *t, int u, sim_link_kind_t kind)
{
    int d = 0;

    for (int l = 0; l < sim_topology_num_links(t); l++) {
        sim_link_info_t li;

        assert_int_equal(sim_topology_link(t, l, &li), 0);
        d += li.from == u && li.kind == kind;
    }
    return d;
}

static void test_preset_sizes(void **state)
{
    static const struct {
        const char *name;
        int ipus, ilds, nodes, links, diameter;
    } want[] = {
        /* links = 2 * edges. POD64: 32 rungs + 2 * 31 column + 2 wrap = 96 edges. POD128: two
         * ladders + 128 gateway attachments + 16 GW-Links. POD256: four ladders + 256 + 64. */
        {"M2000", 4, 1, 4, 8, 2},          {"POD16", 16, 1, 16, 48, 5},
        {"POD64", 64, 1, 64, 192, 17},     {"POD128", 128, 2, 160, 672, 18},
        {"POD256", 256, 4, 320, 1408, 19},
    };

    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        sim_topology_t *t = preset(want[i].name);

        assert_string_equal(sim_topology_name(t), want[i].name);
        assert_int_equal(sim_topology_num_ipus(t), want[i].ipus);
        assert_int_equal(sim_topology_num_ilds(t), want[i].ilds);
        assert_int_equal(sim_topology_num_nodes(t), want[i].nodes);
        assert_int_equal(sim_topology_num_links(t), want[i].links);
        assert_int_equal(sim_topology_diameter(t), want[i].diameter);
        assert_ptr_equal(sim_topology_device(t), sim_device_gc200());
        sim_topology_free(t);
    }
}

static void test_ring_embedding(void **state)
{
    const char *names[] = {"M2000", "POD16", "POD64", "POD128", "POD256"};

    (void)state;
    for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
        sim_topology_t *t = preset(names[k]);
        int n = sim_topology_num_ipus(t), ild = n < 64 ? n : 64;

        for (int i = 0; i < n; i++) {
            int next = (i / ild) * ild + (i + 1) % ild;
            int l = sim_topology_find_link(t, i, next);
            sim_link_info_t li;

            assert_true(l >= 0);
            assert_int_equal(sim_topology_link(t, l, &li), 0);
            assert_int_equal(li.kind, SIM_LINK_IPU);
            assert_int_equal(sim_topology_hops(t, i, next), 1);
            assert_int_equal(sim_topology_ild_of(t, i), i / ild);
        }
        sim_topology_free(t);
    }
}

static void test_ladder_shape(void **state)
{
    sim_topology_t *t = preset("POD64");
    sim_topology_t *m = preset("M2000");
    sim_route_t r;

    (void)state;
    /* Every IPU of a torus ladder has two column neighbours and one across its rung. */
    for (int i = 0; i < 64; i++)
        assert_int_equal(degree(t, i, SIM_LINK_IPU), 3);
    /* The snake: 0 = (col 0, rung 0), 1 = (1, 0), 2 = (1, 1), 3 = (0, 1), 4 = (0, 2) ... */
    assert_true(sim_topology_find_link(t, 0, 3) >= 0);  /* column 0, rungs 0-1 */
    assert_true(sim_topology_find_link(t, 1, 2) >= 0);  /* column 1, rungs 0-1 */
    assert_true(sim_topology_find_link(t, 0, 63) >= 0); /* the wrap, column 0 */
    assert_true(sim_topology_find_link(t, 1, 62) >= 0); /* the wrap, column 1 */
    assert_int_equal(sim_topology_find_link(t, 0, 2), -1);
    /* IPU 32 sits at column 0, rung 16: 16 column hops from IPU 0 either way round. */
    assert_int_equal(sim_topology_route(t, 0, 32, &r), 0);
    assert_int_equal(r.hops, 16);
    assert_int_equal(r.gw_hops, 0);
    assert_int_equal(r.latency, NS(16 * 500));
    assert_int_equal(r.bandwidth, 32000000000ULL);
    assert_int_equal(r.gw_bandwidth, UINT64_MAX);
    /* The M2000 is a ring of 4. */
    for (int i = 0; i < 4; i++)
        assert_int_equal(degree(m, i, SIM_LINK_IPU), 2);
    assert_int_equal(sim_topology_hops(m, 0, 2), 2);
    assert_int_equal(sim_topology_route(m, 2, 2, &r), 0);
    assert_int_equal(r.hops, 0);
    assert_int_equal(r.latency, 0);
    assert_int_equal(r.bandwidth, UINT64_MAX);
    sim_topology_free(m);
    sim_topology_free(t);
}

static void assert_route_kinds(const sim_topology_t *t, const sim_route_t *r,
                               const sim_link_kind_t *kinds, int n)
{
    int at = r->src;

    assert_int_equal(r->hops, n);
    for (int h = 0; h < n; h++) {
        sim_link_info_t li;

        assert_int_equal(sim_topology_link(t, r->links[h], &li), 0);
        assert_int_equal(li.from, at);
        assert_int_equal(li.kind, kinds[h]);
        at = li.to;
    }
    assert_int_equal(at, r->dst);
}

static void test_gateway_hop_pcie(void **state)
{
    sim_topology_t *t = preset("POD128");
    sim_route_t r;

    (void)state;
    /* An IPU's hop to its gateway runs at its PCIe link (32 GB/s one way), so the two bonded
     * GW-Link ports (25 GB/s) bind a route between domains; routes inside a domain never take
     * the gateways. */
    assert_int_equal(sim_topology_cost(t)->gateway_ipu_bandwidth, 32000000000ULL);
    assert_int_equal(sim_topology_route(t, 0, 64, &r), 0);
    assert_int_equal(r.bandwidth, 25000000000ULL);
    for (int b = 1; b < 64; b++) {
        assert_int_equal(sim_topology_route(t, 0, b, &r), 0);
        assert_int_equal(r.bandwidth, 32000000000ULL);
    }
    sim_topology_free(t);
}

/* The IPU of a pod: the GC200 unless the topology says "ipu bow" (any preset takes either). */
static void test_ipu_key(void **state)
{
    char err[256] = "";
    sim_topology_t *t = NULL;

    (void)state;
    assert_int_equal(sim_topology_open("POD64", &t, err, sizeof(err)), 0);
    assert_string_equal(sim_topology_device(t)->name, "GC200");
    sim_topology_free(t);
    assert_int_equal(sim_topology_open("POD64,ipu=bow", &t, err, sizeof(err)), 0);
    assert_string_equal(sim_topology_device(t)->name, "Bow");
    assert_int_equal(sim_topology_device(t)->tiles, 1472);
    assert_int_equal(sim_topology_device(t)->clock_hz, 1850000000ULL);
    assert_int_equal(sim_topology_num_ipus(t), 64);
    sim_topology_free(t);
    t = NULL;
    assert_int_equal(sim_topology_open("POD16,ipu=mk3", &t, err, sizeof(err)), -EINVAL);
    assert_null(t);
    assert_non_null(strstr(err, "ipu must be gc200 or bow (got 'mk3')"));
}

static void test_gw_routes(void **state)
{
    static const sim_link_kind_t via_neighbour[] = {SIM_LINK_IPU, SIM_LINK_GW_ATTACH, SIM_LINK_GW,
                                                    SIM_LINK_GW_ATTACH};
    static const sim_link_kind_t direct[] = {SIM_LINK_GW_ATTACH, SIM_LINK_GW, SIM_LINK_GW_ATTACH};
    static const sim_link_kind_t two_ilds[] = {SIM_LINK_GW_ATTACH, SIM_LINK_GW, SIM_LINK_GW,
                                               SIM_LINK_GW_ATTACH};
    sim_topology_t *t = wide("POD128");
    sim_topology_t *q = wide("POD256");
    sim_route_t r;

    (void)state;
    /* 63 -> 64: IPU-Link to 0 (the wrap), up to gateway 0 of ILD 0, across, down to 64. The
     * alternative through gateway 15 is as fast; the lower next node (IPU 0) wins the tie. */
    assert_int_equal(sim_topology_route(t, 63, 64, &r), 0);
    assert_route_kinds(t, &r, via_neighbour, 4);
    assert_int_equal(r.gw_hops, 1);
    assert_int_equal(r.latency, NS(3 * 500 + 3000));
    assert_int_equal(r.bandwidth, 25000000000ULL); /* both 100 Gb/s ports to the one neighbour */
    assert_int_equal(r.gw_bandwidth, 25000000000ULL);
    /* 0 -> 64: the gateways of the same IPU-M2000 position face each other. */
    assert_int_equal(sim_topology_route(t, 0, 64, &r), 0);
    assert_route_kinds(t, &r, direct, 3);
    assert_int_equal(r.latency, NS(2 * 500 + 3000));
    /* POD256: ILDs in a ring, one port to each neighbour; ILD 0 -> 2 crosses two GW-Links. */
    assert_int_equal(sim_topology_route(q, 0, 64, &r), 0);
    assert_int_equal(r.bandwidth, 12500000000ULL);
    assert_int_equal(sim_topology_route(q, 0, 192, &r), 0); /* ILD 3 is a neighbour of 0 */
    assert_int_equal(r.gw_hops, 1);
    assert_int_equal(sim_topology_route(q, 0, 128, &r), 0);
    assert_route_kinds(q, &r, two_ilds, 4);
    assert_int_equal(r.gw_hops, 2);
    assert_int_equal(r.latency, NS(2 * 500 + 2 * 3000));
    sim_topology_free(q);
    sim_topology_free(t);
}

static void test_routes_symmetric_and_fixed(void **state)
{
    sim_topology_t *a = preset("POD256");
    sim_topology_t *b = preset("POD256");
    sim_route_t ra, rb, back;

    (void)state;
    for (int s = 0; s < 256; s++) {
        for (int d = 0; d < 256; d++) {
            assert_int_equal(sim_topology_route(a, s, d, &ra), 0);
            assert_int_equal(sim_topology_route(b, s, d, &rb), 0);
            assert_int_equal(sim_topology_route(a, d, s, &back), 0);
            /* Two builds give the same route, link by link. */
            assert_int_equal(ra.hops, rb.hops);
            assert_memory_equal(ra.links, rb.links, (size_t)ra.hops * sizeof(int));
            /* Both directions are equally long. */
            assert_int_equal(ra.latency, back.latency);
            assert_int_equal(ra.hops, back.hops);
        }
    }
    sim_topology_free(b);
    sim_topology_free(a);
}

static void test_out_of_range_queries(void **state)
{
    sim_topology_t *t = preset("POD16");
    sim_link_info_t li;
    sim_route_t r;

    (void)state;
    assert_int_equal(sim_topology_ild_of(t, -1), -1);
    assert_int_equal(sim_topology_ild_of(t, 16), -1);
    assert_int_equal(sim_topology_route(t, 0, 16, &r), -EINVAL);
    assert_int_equal(sim_topology_route(t, -1, 0, &r), -EINVAL);
    assert_int_equal(sim_topology_hops(t, 16, 0), -1);
    assert_int_equal(sim_topology_link(t, -1, &li), -EINVAL);
    assert_int_equal(sim_topology_link(t, 48, &li), -EINVAL);
    assert_int_equal(sim_topology_find_link(t, 0, 99), -1);
    sim_topology_free(t);
    sim_topology_free(NULL);
}

static void test_smallest_preset(void **state)
{
    static const struct {
        int n;
        const char *name;
    } want[] = {{1, "M2000"},  {4, "M2000"},   {5, "POD16"},    {16, "POD16"},   {17, "POD64"},
                {64, "POD64"}, {65, "POD128"}, {128, "POD128"}, {129, "POD256"}, {256, "POD256"}};

    (void)state;
    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
        assert_string_equal(sim_topology_smallest_preset(want[i].n), want[i].name);
    assert_null(sim_topology_smallest_preset(257));
    assert_null(sim_topology_smallest_preset(0));
    assert_null(sim_topology_smallest_preset(-3));
}

static void test_preset_names(void **state)
{
    char err[256];
    sim_topology_t *t;

    (void)state;
    t = preset("pod64");
    assert_string_equal(sim_topology_name(t), "POD64");
    sim_topology_free(t);
    t = preset("IPU-POD16");
    assert_string_equal(sim_topology_name(t), "POD16");
    sim_topology_free(t);
    t = preset("POD4");
    assert_string_equal(sim_topology_name(t), "M2000");
    sim_topology_free(t);
    assert_int_equal(sim_topology_preset("POD32", &t, err, sizeof(err)), -EINVAL);
    assert_null(t);
    assert_string_equal(err, "unknown topology preset 'POD32' (presets: M2000, POD16, POD64, "
                             "POD128, POD256)");
    /* A NULL or empty error buffer is allowed. */
    assert_int_equal(sim_topology_preset("nope", &t, NULL, 0), -EINVAL);
    assert_int_equal(sim_topology_preset("nope", &t, err, 0), -EINVAL);
}

static void test_open(void **state)
{
    char err[256];
    sim_topology_t *t;

    (void)state;
    assert_int_equal(sim_topology_open("pod128", &t, err, sizeof(err)), 0);
    assert_string_equal(sim_topology_name(t), "POD128");
    sim_topology_free(t);
    assert_int_equal(sim_topology_open("/nonexistent/pod.topo", &t, err, sizeof(err)), -ENOENT);
    assert_string_equal(err, "unknown topology '/nonexistent/pod.topo': not a preset (M2000, "
                             "POD16, POD64, POD128, POD256) and no such file");
    assert_int_equal(sim_topology_open("", &t, err, sizeof(err)), -EINVAL);
    assert_int_equal(sim_topology_open(NULL, &t, err, sizeof(err)), -EINVAL);
}

static void test_params_and_describe(void **state)
{
    sim_topology_t *t = preset("POD128");
    sim_topology_t *s = preset("POD64");
    sim_topology_params_t p;
    char buf[256];

    (void)state;
    sim_topology_get_params(t, &p);
    assert_int_equal(p.ild_size, 64);
    assert_int_equal(p.ipus_per_gateway, 4);
    assert_int_equal(p.gwlinks_per_gateway, 2);
    assert_string_equal(p.wiring, "ladder");
    assert_int_equal(p.ipulink_bandwidth, 32000000000ULL);
    assert_int_equal(p.ipulink_latency, NS(500));
    assert_int_equal(p.gwlink_bandwidth, 12500000000ULL);
    assert_int_equal(p.gwlink_latency, NS(3000));
    assert_int_equal(p.sync_latency, NS(1000));
    assert_int_equal(p.gw_sync_latency, NS(5000));
    sim_topology_describe(t, buf, sizeof(buf));
    assert_string_equal(buf, "POD128: 128 IPUs, 2 ILDs of 64 (ladder), IPU-Link 32 GB/s 500 ns, "
                             "32 gateways with 2 GW-Link ports of 12.5 GB/s 3000 ns");
    sim_topology_describe(s, buf, sizeof(buf));
    assert_string_equal(buf, "POD64: 64 IPUs, 1 ILD (ladder), IPU-Link 32 GB/s 500 ns");
    sim_topology_free(s);
    sim_topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_preset_sizes),
        cmocka_unit_test(test_ring_embedding),
        cmocka_unit_test(test_ladder_shape),
        cmocka_unit_test(test_gw_routes),
        cmocka_unit_test(test_gateway_hop_pcie),
        cmocka_unit_test(test_ipu_key),
        cmocka_unit_test(test_routes_symmetric_and_fixed),
        cmocka_unit_test(test_out_of_range_queries),
        cmocka_unit_test(test_smallest_preset),
        cmocka_unit_test(test_preset_names),
        cmocka_unit_test(test_open),
        cmocka_unit_test(test_params_and_describe),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
