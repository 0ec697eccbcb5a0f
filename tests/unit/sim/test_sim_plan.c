/*
 * Job plans (sim/plan/plan.h): each stage's memory against its closed form for every recomputation
 * mode, schedule and optimizer-state placement; the overflow report (stage, layer, bytes, the
 * smallest stage count that fits); the split; the host feed; time to train.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cost/feed.h"
#include "sim/model/model.h"
#include "sim/plan/plan.h"

static sim_cost_params_t cp;
static const sim_device_t *d;

static int setup(void **state)
{
    (void)state;
    sim_cost_params_default(&cp);
    d = sim_device_gc200();
    return 0;
}

/* mm0 relu0 mm1 relu1 mm2 (checkpoint) mm3: dense 1024 -> 1024 with bias, f16. */
static void small_model(sim_model_t *m)
{
    sim_layer_t l;

    sim_model_init(m, "small");
    for (int i = 0; i < 4; i++) {
        char name[16];

        snprintf(name, sizeof(name), "mm%d", i);
        sim_layer_init(&l, SIM_LAYER_MATMUL, name);
        l.in = l.out = 1024;
        l.bias = 1;
        l.checkpoint = i == 2;
        assert_int_equal(sim_model_add(m, &l), 0);
        if (i < 2) {
            snprintf(name, sizeof(name), "relu%d", i);
            sim_layer_init(&l, SIM_LAYER_ELEMENTWISE, name);
            l.values = 1024;
            assert_int_equal(sim_model_add(m, &l), 0);
        }
    }
}

static sim_plan_params_t params(int stages, sim_schedule_t s, sim_recompute_t r,
                                sim_state_place_t state)
{
    return (sim_plan_params_t){stages,       4,    8,   4, s, r, SIM_OPTIM_MOMENTUM, state,
                               SIM_PREC_F16, NULL, NULL};
}

static void test_memory_closed_form(void **state)
{
    const uint64_t w = 4 * 1049600ULL, code = 1472ULL * (49152 + 192 * 6);
    /* Stored values per unit: mm0's input, relu0's, relu1's and mm3's (mm1 and mm2 read the
     * tensor the ReLU before them keeps); the largest layer input + output is 2048. */
    static const struct {
        sim_schedule_t s;
        sim_recompute_t r;
        uint64_t held, work, in_flight;
    } cases[] = {
        {SIM_SCHED_1F1B, SIM_RECOMPUTE_NONE, 4096, 2048, 1},
        {SIM_SCHED_GPIPE, SIM_RECOMPUTE_NONE, 4096, 2048, 4},
        /* Checkpoints: the input and mm2's output; the largest segment (mm0 .. mm2) again. */
        {SIM_SCHED_GPIPE, SIM_RECOMPUTE_CHECKPOINTS, 2048, 2048 + 3072, 4},
        /* Stage: the input only; the whole stage's stored values again. */
        {SIM_SCHED_GPIPE, SIM_RECOMPUTE_STAGE, 1024, 2048 + 4096, 4},
    };
    sim_model_t m;
    sim_plan_t plan;
    char err[256];

    (void)state;
    small_model(&m);
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        sim_plan_params_t p = params(1, cases[i].s, cases[i].r, SIM_STATE_ONCHIP);
        const sim_stage_mem_t *mem;

        assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
        mem = &plan.stages[0].mem;
        assert_int_equal(plan.stages[0].in_flight, cases[i].in_flight);
        assert_int_equal(mem->weights, w * 2);
        assert_int_equal(mem->gradients, w * 2);
        assert_int_equal(mem->optimizer, w * 4); /* momentum: one f32 state */
        assert_int_equal(mem->stash, cases[i].held * 8 * cases[i].in_flight * 2);
        assert_int_equal(mem->activations, cases[i].work * 8 * 2);
        assert_int_equal(mem->code, code);
        assert_int_equal(mem->total, mem->weights + mem->gradients + mem->optimizer + mem->stash +
                                         mem->activations + mem->code);
        assert_int_equal(mem->capacity, 940572672);
        assert_int_equal(mem->headroom, (int64_t)940572672 - (int64_t)mem->total);
        assert_int_equal(mem->overflow_layer, -1);
        sim_plan_free(&plan);
    }
    /* Sharded state is split over the 4 replicas; streaming state leaves the chip. */
    sim_plan_params_t p = params(1, SIM_SCHED_1F1B, SIM_RECOMPUTE_NONE, SIM_STATE_SHARDED);
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(plan.stages[0].mem.optimizer, w);
    sim_plan_free(&plan);
    p.state = SIM_STATE_STREAMING;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(plan.stages[0].mem.optimizer, 0);
    sim_plan_free(&plan);
    sim_model_free(&m);
}

static void test_stages_and_messages(void **state)
{
    sim_model_t m;
    sim_plan_t plan;
    sim_plan_params_t p = params(2, SIM_SCHED_1F1B, SIM_RECOMPUTE_NONE, SIM_STATE_ONCHIP);
    uint32_t split[1] = {3};
    char err[256];

    (void)state;
    small_model(&m);
    /* A user split: stage 1 starts at relu1. Stage 0 sends mm1's output, 1024 values a unit. */
    p.splits = split;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(plan.stages[0].last, 3);
    assert_int_equal(plan.stages[1].first, 3);
    assert_int_equal(plan.stages[0].out_values, 8 * 1024);
    assert_int_equal(plan.stages[1].out_values, 0);
    assert_int_equal(plan.stages[0].in_flight, 2);
    assert_int_equal(plan.stages[1].in_flight, 1);
    assert_int_equal(plan.stages[0].weights, 2 * 1049600);
    sim_plan_free(&plan);
    /* The balancing rule puts two products on each stage. */
    p.splits = NULL;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(plan.stages[0].weights, 2 * 1049600);
    assert_int_equal(plan.stages[1].weights, 2 * 1049600);
    sim_plan_free(&plan);
    /* Bad splits and shapes are one line each. */
    split[0] = 0;
    p.splits = split;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "pipeline split 1"));
    p.splits = NULL;
    p.stages = 7;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "cannot be split into 7 stages"));
    m.samples_per_unit = 3;
    p.stages = 1;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "--micro-batch 8: small packs 3 samples per unit"));
    sim_model_free(&m);
}

static void test_overflow(void **state)
{
    sim_model_t m;
    sim_plan_t plan;
    sim_plan_params_t p = params(1, SIM_SCHED_1F1B, SIM_RECOMPUTE_NONE, SIM_STATE_ONCHIP);
    sim_layer_t l;
    char err[256], text[600];

    (void)state;
    /* Four 8192 x 8192 products: 67 M parameters, 537 MB each with momentum. */
    sim_model_init(&m, "big");
    for (int i = 0; i < 4; i++) {
        char name[16];

        snprintf(name, sizeof(name), "big%d", i);
        sim_layer_init(&l, SIM_LAYER_MATMUL, name);
        l.in = l.out = 8192;
        assert_int_equal(sim_model_add(&m, &l), 0);
    }
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(sim_plan_overflow(&plan), 0);
    assert_true(plan.stages[0].mem.headroom < 0);
    assert_int_equal(plan.stages[0].mem.overflow_layer, 1);
    assert_int_equal(sim_plan_min_stages(&m, &cp, d, &p, 64), 4);
    /* Of 1 to 64 stages only 4 fit: the model has 4 layers. */
    unsigned char fits[65];
    char fit[256];
    assert_int_equal(sim_plan_fitting_stages(&m, &cp, d, &p, 64, fits), 1);
    for (int k = 1; k <= 64; k++)
        assert_int_equal(fits[k], k == 4);
    sim_plan_fit_text(fits, 4, fit, sizeof(fit));
    assert_string_equal(fit, "stage counts that fit: 4");
    sim_plan_overflow_text(&plan, &m, 0, fit, text, sizeof(text));
    assert_non_null(strstr(text, "stage 0 (layers big0 .. big3) needs "));
    assert_non_null(strstr(text, "from layer big1 on"));
    assert_non_null(strstr(text, "); stage counts that fit: 4"));
    assert_string_equal(strstr(text, "; stage counts"), "; stage counts that fit: 4");
    assert_null(strchr(text, '\n'));
    sim_plan_free(&plan);
    sim_model_free(&m);
}

/* The list of stage counts that fit, as ranges: fewer stages need not fit where more do. */
static void test_fit_text(void **state)
{
    unsigned char fits[17] = {0};
    char text[128];

    (void)state;
    for (int k = 1; k <= 16; k++)
        fits[k] = k <= 4 || k == 6 || k >= 13;
    sim_plan_fit_text(fits, 16, text, sizeof(text));
    assert_string_equal(text, "stage counts that fit: 1-4, 6, 13-16");
    fits[3] = fits[4] = fits[13] = 0;
    sim_plan_fit_text(fits, 16, text, sizeof(text));
    assert_string_equal(text, "stage counts that fit: 1, 2, 6, 14-16");
    memset(fits, 0, sizeof(fits));
    sim_plan_fit_text(fits, 16, text, sizeof(text));
    assert_string_equal(text, "no stage count up to 16 fits");
}

static void test_bert_layout(void **state)
{
    sim_model_t m;
    sim_plan_t plan;
    sim_placement_t pl;
    sim_plan_params_t p = {4,
                           4,
                           4,
                           192,
                           SIM_SCHED_POPART,
                           SIM_RECOMPUTE_CHECKPOINTS,
                           SIM_OPTIM_LAMB,
                           SIM_STATE_STREAMING_SHARDED,
                           SIM_PREC_F16,
                           NULL,
                           &pl};
    char err[256];
    uint32_t att0 = 0, ffn0 = 0, heads0 = 0;

    (void)state;
    assert_int_equal(sim_model_bert_large(&m, 512, 2), 0);
    /* Graphcore's MLPerf v1.1 IPU-POD16 placement: IPU 0 holds the embedding, 4 attention and 5
     * feed-forward sublayers and the heads; 5 fragments (the heads again on IPU 0); it fits. */
    assert_int_equal(sim_placement_parse("4/5,7/6,6/7,7/6", 0, &pl, err, sizeof(err)), 0);
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(plan.units, 2);
    assert_int_equal(plan.num_fragments, 5);
    assert_int_equal(plan.fragments[4].stage, 0);
    for (int k = 0; k < plan.num_fragments; k++) {
        for (uint32_t i = 0; i < plan.fragments[k].count; i++) {
            const sim_layer_t *l = &m.layers[plan.order[plan.fragments[k].at + i]];

            if (plan.fragments[k].stage != 0)
                continue;
            att0 += l->part == SIM_PART_ATTENTION && strstr(l->name, "_qkv") != NULL;
            ffn0 += l->part == SIM_PART_FFN && strstr(l->name, "_ffn1") != NULL;
            heads0 += l->part == SIM_PART_HEAD;
        }
    }
    assert_int_equal(att0, 4);
    assert_int_equal(ffn0, 5);
    assert_int_equal(heads0, 9);
    assert_int_equal(plan.stages[0].first, 0);
    assert_int_equal(plan.stages[0].mem.optimizer, 0); /* off chip */
    assert_int_equal(sim_plan_overflow(&plan), -1);
    /* Fragment f holds 2(P - f) - 1 micro-batches: 9 on the first, 1 on the heads. */
    assert_int_equal(plan.fragments[0].in_flight, 9);
    assert_int_equal(plan.fragments[4].in_flight, 1);
    sim_plan_free(&plan);
    /* Counts that do not sum to 24 and 24, or a length that is not the stage count: refused. */
    assert_int_equal(sim_placement_parse("4/5,7/6,6/7,7/7", 0, &pl, err, sizeof(err)), 0);
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "24 attention and 25 feed-forward"));
    assert_int_equal(sim_placement_parse("3,7,7,7", 1, &pl, err, sizeof(err)), 0);
    assert_int_equal(pl.ffn[1], 7);
    p.stages = 5;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, "lists 4 IPUs"));
    assert_int_equal(sim_placement_parse("4/5,7", 0, &pl, err, sizeof(err)), -EINVAL);
    assert_int_equal(sim_placement_parse("4/5,,7/6", 0, &pl, err, sizeof(err)), -EINVAL);
    assert_int_equal(sim_placement_parse("", 1, &pl, err, sizeof(err)), -EINVAL);
    /* Without a placement, on one IPU it does not fit, and needs several. */
    p.stages = 1;
    p.placement = NULL;
    assert_int_equal(sim_plan_build(&m, &cp, d, &p, &plan, err, sizeof(err)), 0);
    assert_int_equal(sim_plan_overflow(&plan), 0);
    assert_true(sim_plan_min_stages(&m, &cp, d, &p, 64) >= 3);
    sim_plan_free(&plan);
    sim_model_free(&m);
}

static void test_feed(void **state)
{
    sim_cost_params_t c = cp;
    sim_feed_limit_t limit;
    sim_feed_t f;

    (void)state;
    /* 16 IPUs: one server at 40,000 images/s, NIC 12.5 GB/s / 150,528 B = 83,042/s. */
    assert_true(sim_feed_rate(&c, 40000, 150528, 16, &limit) == 40000);
    assert_int_equal(limit, SIM_FEED_PREPROCESS);
    assert_int_equal(sim_feed_servers(&c, 256), 16);
    /* Big samples: the one host NIC binds (gateways: 4 x 12.5 GB/s). */
    assert_true(sim_feed_rate(&c, 0, 1000000, 16, &limit) == 12500);
    assert_int_equal(limit, SIM_FEED_HOST_NIC);
    c.host_servers = 8;
    assert_true(sim_feed_rate(&c, 0, 1000000, 16, &limit) == 50000);
    assert_int_equal(limit, SIM_FEED_GATEWAY);
    assert_true(sim_feed_rate(&c, 0, 0, 16, &limit) == 0);
    assert_int_equal(limit, SIM_FEED_NONE);
    /* One of 2 replicas at 1000 samples/s: a sample every 2 ms, at most 2 micro-batches ahead. */
    sim_feed_init(&f, 1000, 2, 2);
    assert_int_equal(f.per_sample, 2 * SIM_PS_PER_MS);
    assert_int_equal(sim_feed_take(&f, 0, 10), 20 * SIM_PS_PER_MS); /* waits 20 ms */
    assert_int_equal(sim_feed_take(&f, 100 * SIM_PS_PER_MS, 10), 100 * SIM_PS_PER_MS); /* ready */
    assert_int_equal(sim_feed_take(&f, 100 * SIM_PS_PER_MS, 10), 100 * SIM_PS_PER_MS);
    /* The host stopped 2 ahead: the next starts when the IPU took the one 2 before (100 ms). */
    assert_int_equal(sim_feed_take(&f, 100 * SIM_PS_PER_MS, 10), 120 * SIM_PS_PER_MS);
    sim_feed_init(&f, 0, 2, 2);
    assert_int_equal(sim_feed_take(&f, 5, 10), 5);
}

static void test_time_to_train(void **state)
{
    (void)state;
    /* 40 epochs of ImageNet at 3200 a step: 16,015 steps of 0.1 s, plus a minute. */
    assert_true(sim_time_to_train(0.1, 3200, 1281167ULL * 40, 60) == 16015 * 0.1 + 60);
    assert_true(sim_time_to_train(1.0, 0, 100, 0) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_memory_closed_form), cmocka_unit_test(test_stages_and_messages),
        cmocka_unit_test(test_overflow),           cmocka_unit_test(test_fit_text),
        cmocka_unit_test(test_bert_layout),        cmocka_unit_test(test_feed),
        cmocka_unit_test(test_time_to_train),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
