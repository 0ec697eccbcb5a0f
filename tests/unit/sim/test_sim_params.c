/*
 * The cost model's constants (sim/device/params.h): the table agrees with the defaults, every assumed
 * and fitted constant has a range around its value and a source, and pods set them through
 * topology files and "PRESET,KEY=VALUE" overrides.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/device/params.h"
#include "sim/topology/topology.h"

static void test_table_matches_defaults(void **state)
{
    sim_cost_params_t cp;
    size_t assumed = 0, fitted = 0;

    (void)state;
    sim_cost_params_default(&cp);
    for (size_t i = 0; i < sim_param_count(); i++) {
        const sim_param_info_t *p = sim_param_get(i);

        assert_non_null(p->source);
        assert_true(strlen(p->source) > 10);
        if (!p->topology)
            assert_true(sim_cost_param_value(&cp, p->key) == p->value);
        if (p->kind != SIM_PARAM_SOURCED && strcmp(p->key, "host_servers") != 0) {
            assert_true(p->lo <= p->value && p->value <= p->hi);
            assert_true(p->lo < p->hi);
        }
        assumed += p->kind == SIM_PARAM_ASSUMED;
        fitted += p->kind == SIM_PARAM_FITTED;
        assert_ptr_equal(sim_param_find(p->key), p);
    }
    /* Four constants are fitted (scripts/calibrate; docs/validation.md), one of them once per
     * round of the data: five values, the most the calibration allows. */
    assert_int_equal(fitted, 4);
    assert_true(assumed >= 10);
    assert_null(sim_param_get(sim_param_count()));
    assert_null(sim_param_find("warp_speed"));
}

static void test_set(void **state)
{
    sim_cost_params_t cp;

    (void)state;
    sim_cost_params_default(&cp);
    assert_int_equal(sim_cost_param_set_milli(&cp, "amp_efficiency", 550), 0);
    assert_true(cp.amp_efficiency == 0.55);
    assert_int_equal(sim_cost_param_set_milli(&cp, "compute_set_overhead_ns", 125500), 0);
    assert_int_equal(cp.compute_set_overhead, 125500); /* ps */
    assert_int_equal(sim_cost_param_set_milli(&cp, "streaming_gbs", 20000), 0);
    assert_int_equal(cp.streaming_bandwidth, 20000000000ULL);
    assert_int_equal(sim_cost_param_set_milli(&cp, "host_servers", 4000), 0);
    assert_int_equal(cp.host_servers, 4);
    assert_int_equal(sim_cost_param_set_milli(&cp, "amp_efficiency", 1500), -ERANGE);
    assert_int_equal(sim_cost_param_set_milli(&cp, "amp_efficiency", 0), -ERANGE);
    assert_int_equal(sim_cost_param_set_milli(&cp, "amp_k_group_f16", 8500), -ERANGE);
    assert_int_equal(sim_cost_param_set_milli(&cp, "ipulink_latency_ns", 1000), -ENOENT);
}

static void test_overrides(void **state)
{
    sim_topology_t *t;
    sim_topology_params_t p;
    char err[256];

    (void)state;
    assert_int_equal(sim_topology_open("POD16,amp_efficiency=0.5,ipulink_latency_ns=700.5", &t, err,
                                       sizeof(err)),
                     0);
    assert_string_equal(sim_topology_name(t), "POD16");
    assert_int_equal(sim_topology_num_ipus(t), 16);
    assert_true(sim_topology_cost(t)->amp_efficiency == 0.5);
    sim_topology_get_params(t, &p);
    assert_int_equal(p.ipulink_latency, 700500);
    sim_topology_free(t);
    /* Presets keep the defaults. */
    assert_int_equal(sim_topology_open("POD64", &t, err, sizeof(err)), 0);
    assert_true(sim_topology_cost(t)->amp_efficiency == sim_param_find("amp_efficiency")->value);
    sim_topology_free(t);
    assert_int_equal(sim_topology_open("POD16,warp=2", &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "unknown key 'warp'"));
    assert_int_equal(sim_topology_open("POD16,ipus=32", &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "ipus cannot be overridden"));
    assert_int_equal(sim_topology_open("POD16,amp_efficiency", &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "is not KEY=VALUE"));
    assert_int_equal(sim_topology_open("POD16,amp_efficiency=2", &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "amp_efficiency is out of range"));
    assert_int_equal(sim_topology_open("NOPE,amp_efficiency=0.5", &t, err, sizeof(err)), -ENOENT);
    assert_non_null(strstr(err, "unknown topology 'NOPE'"));
}

static void test_file_keys(void **state)
{
    char path[] = "/tmp/test_sim_params_XXXXXX", err[256];
    sim_topology_t *t;
    FILE *f;
    int fd = mkstemp(path);

    (void)state;
    assert_true(fd >= 0);
    f = fdopen(fd, "w");
    fputs("ipus 32\nild_size 16\nhost_servers 3\ntile_sync_ns 80\n", f);
    fclose(f);
    assert_int_equal(sim_topology_open(path, &t, err, sizeof(err)), 0);
    assert_int_equal(sim_topology_cost(t)->host_servers, 3);
    assert_int_equal(sim_topology_cost(t)->tile_sync, 80000);
    sim_topology_free(t);
    /* A file with overrides: the override wins, and the name stays the file's. */
    {
        char spec[128];

        snprintf(spec, sizeof(spec), "%s,tile_sync_ns=90", path);
        assert_int_equal(sim_topology_open(spec, &t, err, sizeof(err)), 0);
        assert_int_equal(sim_topology_cost(t)->tile_sync, 90000);
        assert_int_equal(sim_topology_num_ilds(t), 2);
        sim_topology_free(t);
    }
    f = fopen(path, "w");
    fputs("ipus 4\ntile_sync_ns 80\ntile_sync_ns 90\n", f);
    fclose(f);
    assert_int_equal(sim_topology_open(path, &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, ":3: tile_sync_ns is set twice (first on line 2)"));
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_matches_defaults),
        cmocka_unit_test(test_set),
        cmocka_unit_test(test_overrides),
        cmocka_unit_test(test_file_keys),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
