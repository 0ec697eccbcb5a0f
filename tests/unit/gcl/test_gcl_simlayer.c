/*
 * The layer-level calls of gcl/sim.h through the public API: gcl_charge_layer charges exactly
 * sim/'s per-layer cost, split into compute, sync and exchange; gcl_charge_update,
 * gcl_charge_transfer and gcl_sim_feed (host time); the pod's constants follow GCL_TOPOLOGY
 * overrides; bad layers are refused with a reason; models and plans (memory errors naming the
 * stage and the stage counts that fit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"
#include "sim/sim.h"

typedef struct {
    gcl_sim_stats_t after_layer, after_update, after_transfer, after_feed, after_feed2;
    gcl_status_t bad, bad_transfer;
    char why[256];
} probe_t;

static gcl_layer_t ffn(void)
{
    gcl_layer_t l = GCL_LAYER_INIT;

    l.rows = 512, l.in = 1024, l.out = 4096, l.bias = 1;
    return l;
}

static gcl_status_t probe_program(gcl_ctx_t ctx, void *arg)
{
    probe_t *p = arg;
    gcl_layer_t l = ffn(), broken = GCL_LAYER_INIT;
    gcl_update_t u = {GCL_OPTIM_LAMB, 1e6, 4, GCL_F16, GCL_F16, 0};
    gcl_sim_feed_t feed = {1000, 0, 1}; /* one host server, 1000 samples/s */

    if (gcl_ctx_ipu(ctx) != 0)
        return GCL_OK;
    GCL_CHECK(gcl_charge_layer(ctx, &l, GCL_PASS_FORWARD, 2));
    gcl_sim_stats(ctx, &p->after_layer);
    GCL_CHECK(gcl_charge_update(ctx, &u));
    gcl_sim_stats(ctx, &p->after_update);
    GCL_CHECK(gcl_charge_transfer(ctx, 1, 32000000)); /* 32 MB over one 32 GB/s IPU-Link */
    gcl_sim_stats(ctx, &p->after_transfer);
    GCL_CHECK(gcl_sim_feed(ctx, &feed, 10)); /* 10 samples at 1000/s: 10 ms */
    gcl_sim_stats(ctx, &p->after_feed);
    GCL_CHECK(gcl_sim_feed(ctx, &feed, 10));
    gcl_sim_stats(ctx, &p->after_feed2);
    broken.in = 8; /* no out */
    p->bad = gcl_charge_layer(ctx, &broken, GCL_PASS_FORWARD, 1);
    snprintf(p->why, sizeof p->why, "%s", gcl_ctx_last_error(ctx));
    p->bad_transfer = gcl_charge_transfer(ctx, 0, 1);
    return GCL_OK;
}

static void run_probe(const char *topology, probe_t *p)
{
    gcl_config_t cfg = {.num_replicas = 1, .ipus_per_replica = 2};
    gcl_instance_t inst;

    setenv("GCL_TOPOLOGY", topology, 1);
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    memset(p, 0, sizeof(*p));
    assert_int_equal(gcl_run(inst, probe_program, p), GCL_OK);
    gcl_finalize(inst);
    unsetenv("GCL_TOPOLOGY");
}

static void test_charges(void **state)
{
    probe_t p, slow;
    sim_cost_params_t cp;
    sim_layer_t l;
    sim_cost_t c;
    double eps = 1e-12;

    (void)state;
    run_probe("POD16", &p);
    /* gcl_charge_layer is sim_layer_cost with the pod's constants: compute, sync, exchange. */
    sim_cost_params_default(&cp);
    sim_layer_init(&l, SIM_LAYER_MATMUL, "ffn");
    l.rows = 512, l.in = 1024, l.out = 4096, l.bias = 1;
    assert_int_equal(sim_layer_cost(&cp, sim_device_gc200(), &l, SIM_PASS_FORWARD, 2, &c), 0);
    assert_true(fabs(p.after_layer.compute_s - c.compute * 1e-12) < eps);
    assert_true(fabs(p.after_layer.sync_s - c.sync * 1e-12) < eps);
    assert_true(fabs(p.after_layer.exchange_s - c.exchange * 1e-12) < eps);
    assert_true(fabs(p.after_layer.total_s - sim_cost_total(&c) * 1e-12) < eps);
    assert_true(p.after_update.compute_s > p.after_layer.compute_s);
    /* 32 MB at 32 GB/s: 1 ms of exchange. */
    assert_true(fabs(p.after_transfer.exchange_s - p.after_update.exchange_s - 1e-3) < eps);
    /* The first micro-batch of 10 samples is ready 10 ms after the start: host time. */
    assert_true(fabs(p.after_feed.total_s - 0.010) < eps);
    assert_true(p.after_feed.host_wait_s > 0.008);
    /* The host prepared the next one meanwhile, and is 10 ms later with it. */
    assert_true(fabs(p.after_feed2.total_s - 0.020) < eps);
    assert_int_equal(p.bad, GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(p.why, "matmul: out must be"));
    assert_int_equal(p.bad_transfer, GCL_ERR_INVALID_ARGUMENT);
    /* An override of the pod's constants reaches the charges. */
    run_probe("POD16,amp_efficiency=0.348", &slow);
    assert_true(slow.after_layer.compute_s > 1.5 * p.after_layer.compute_s);
}

static gcl_status_t nothing(gcl_ctx_t ctx, void *arg)
{
    (void)ctx;
    (void)arg;
    return GCL_OK;
}

static void test_models_and_plans(void **state)
{
    gcl_config_t cfg = {.num_replicas = 4, .ipus_per_replica = 1};
    gcl_instance_t inst;
    gcl_sim_model_t m;
    gcl_sim_model_info_t info;
    gcl_sim_plan_t plan;
    gcl_sim_stage_t st;
    gcl_sim_param_t par;
    gcl_layer_t l;
    char err[600];
    gcl_sim_plan_config_t c = {1, 4, 4, 8, NULL, NULL, NULL, NULL, GCL_F16, NULL, NULL, 0, 0};

    (void)state;
    setenv("GCL_TOPOLOGY", "POD16", 1);
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    assert_int_equal(gcl_run(inst, nothing, NULL), GCL_OK);
    assert_int_equal(gcl_sim_model_open_packed("bert-large", 512, 2, &m, err, sizeof err), GCL_OK);
    gcl_sim_model_info(m, &info);
    assert_true(info.params == 336226108.0);
    assert_true(info.samples_per_unit == 2);
    assert_string_equal(info.optimizer, "lamb");
    assert_int_equal(gcl_sim_model_layer(m, 0, &l), GCL_OK);
    assert_int_equal(l.type, GCL_LAYER_EMBEDDING);
    assert_string_equal(l.name, "word_embedding");
    assert_int_equal(gcl_sim_model_find(m, "l0_qkv"), 6);
    /* One IPU cannot hold it: the plan is made, and the error says where and what fits. */
    assert_int_equal(gcl_sim_plan_create(inst, m, &c, &plan, err, sizeof err),
                     GCL_ERR_OUT_OF_MEMORY);
    assert_non_null(strstr(err, "stage 0 (layers word_embedding .. mlm_loss)"));
    assert_non_null(strstr(err, "; stage counts that fit: "));
    assert_int_equal(gcl_sim_plan_stage(plan, 0, &st), GCL_OK);
    assert_true(st.mem_headroom < 0 && st.mem_total > st.mem_capacity);
    gcl_sim_plan_free(plan);
    c.micro_batch = 3;
    assert_int_equal(gcl_sim_plan_create(inst, m, &c, &plan, err, sizeof err),
                     GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "packs 2 samples per unit"));
    /* A placement whose counts do not add up is refused with one line. */
    c.micro_batch = 4;
    c.stages = 4;
    c.placement = "4/5,7/6,6/7,7/7";
    assert_int_equal(gcl_sim_plan_create(inst, m, &c, &plan, err, sizeof err),
                     GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "25 feed-forward"));
    c.placement = "4/5,7/6";
    assert_int_equal(gcl_sim_plan_create(inst, m, &c, &plan, err, sizeof err),
                     GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "lists 2 IPUs"));
    gcl_sim_model_free(m);
    assert_int_equal(gcl_sim_model_open("/no/such.model", 0, &m, err, sizeof err),
                     GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "cannot open model file"));
    /* The constants, with the pod's values. */
    assert_int_equal(gcl_sim_param(inst, 0, &par), 0);
    assert_string_equal(par.key, "amp_efficiency");
    assert_string_equal(par.kind, "fitted");
    assert_true(par.value > 0.3 && par.value < 0.9);
    assert_int_equal(gcl_sim_param(inst, 10000, &par), -1);
    assert_true(gcl_sim_time_to_train(0.5, 100, 250, 10) == 3 * 0.5 + 10);
    gcl_finalize(inst);
    unsetenv("GCL_TOPOLOGY");
}

int main(void)
{
    setenv("GCL_SIM_PHANTOM", "1", 1);
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_charges),
        cmocka_unit_test(test_models_and_plans),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
