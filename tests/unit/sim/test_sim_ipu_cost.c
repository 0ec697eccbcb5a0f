/*
 * The per-layer IPU cost model against its closed forms (sim/cost/ipu_cost.h, ipu_cost.c,
 * ipu_gemm.c): every layer type, every pass, the product planner against an exhaustive search,
 * and the optimizer update.
 */
#include <math.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/cost/ipu_cost.h"
#include "sim/device/params.h"

static sim_cost_params_t cp;
static const sim_device_t *d;

static int setup(void **state)
{
    (void)state;
    sim_cost_params_default(&cp);
    d = sim_device_gc200();
    return 0;
}

static sim_time_t ps(double seconds)
{
    return (sim_time_t)ceil(seconds * 1e12);
}

/* The closed form of vector work (top of ipu_cost.c), computed here on its own. */
static sim_cost_t vector_form(sim_precision_t p, uint64_t values, double ops, double bytes,
                              uint32_t sets)
{
    double v = (double)((values + d->tiles - 1) / d->tiles);
    double t_ops = v * ops / ((double)cp.vector_lanes[p] * cp.vector_efficiency * d->clock_hz);
    double t_mem = v * bytes / ((double)d->sram_bandwidth / d->tiles);
    sim_cost_t c = {0};

    c.compute = ps(t_ops > t_mem ? t_ops : t_mem) + sets * cp.compute_set_overhead;
    c.sync = sets * cp.tile_sync;
    c.compute_sets = sets;
    return c;
}

static void assert_cost(const sim_cost_t *got, const sim_cost_t *want)
{
    assert_int_equal(got->compute, want->compute);
    assert_int_equal(got->exchange, want->exchange);
    assert_int_equal(got->sync, want->sync);
    assert_int_equal(got->compute_sets, want->compute_sets);
}

static void test_elementwise_norm_pool_loss(void **state)
{
    sim_layer_t l;
    sim_cost_t c, want;

    (void)state;
    /* ReLU over 802,816 f16 values of 20 units: 1 op, reads 1 and writes 1 tensor. */
    sim_layer_init(&l, SIM_LAYER_ELEMENTWISE, "relu");
    l.values = 802816;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 20, &c), 0);
    want = vector_form(SIM_PREC_F16, 20 * 802816ULL, 1, 2.0 * 2, 1);
    assert_cost(&c, &want);
    /* Its backward also reads the gradient: 3 tensors. */
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_BACKWARD, 20, &c), 0);
    want = vector_form(SIM_PREC_F16, 20 * 802816ULL, 1, 3.0 * 2, 1);
    assert_cost(&c, &want);
    /* A residual add of two f32 tensors: 3 tensors forward. */
    l.inputs = 2;
    l.prec = SIM_PREC_F32;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 3, &c), 0);
    want = vector_form(SIM_PREC_F32, 3 * 802816ULL, 1, 3.0 * 4, 1);
    assert_cost(&c, &want);
    /* Normalisation: 8 operations per value in 2 compute sets forward, 12 in 2 backward. */
    sim_layer_init(&l, SIM_LAYER_NORM, "bn");
    l.values = 100000;
    l.channels = 64;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 4, &c), 0);
    want = vector_form(SIM_PREC_F16, 400000, 8, 3.0 * 2, 2);
    assert_cost(&c, &want);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_BACKWARD, 4, &c), 0);
    want = vector_form(SIM_PREC_F16, 400000, 12, 4.0 * 2, 2);
    assert_cost(&c, &want);
    /* Max-pool 3x3/2 of 112x112x64: 56x56x64 outputs, 9 operations each. */
    sim_layer_init(&l, SIM_LAYER_POOL, "pool");
    l.h = l.w = 112, l.cin = 64, l.kernel = 3, l.stride = 2, l.pad = 1;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 2, &c), 0);
    want = vector_form(SIM_PREC_F16, 2ULL * 56 * 56 * 64, 9, 2.0 * 2, 1);
    assert_cost(&c, &want);
    /* Softmax cross-entropy of 76 predictions over 30522 classes. */
    sim_layer_init(&l, SIM_LAYER_LOSS, "loss");
    l.rows = 76, l.out = 30522;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 2, &c), 0);
    want = vector_form(SIM_PREC_F16, 2ULL * 76 * 30522, 8, 2.0 * 2, 2);
    assert_cost(&c, &want);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_BACKWARD, 2, &c), 0);
    want = vector_form(SIM_PREC_F16, 2ULL * 76 * 30522, 3, 2.0 * 2, 1);
    assert_cost(&c, &want);
}

static void test_embedding(void **state)
{
    sim_layer_t l;
    sim_cost_t c, want;
    uint64_t v = 2ULL * 512 * 1024;

    (void)state;
    sim_layer_init(&l, SIM_LAYER_EMBEDDING, "word");
    l.rows = 512, l.in = 30522, l.out = 1024;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 2, &c), 0);
    want = vector_form(SIM_PREC_F16, v, 1, 2.0 * 2, 1);
    /* The gathered rows arrive over the exchange: ceil(V / T) values per tile. */
    want.exchange = ps((double)((v + 1471) / 1472) * 2 /
                       ((double)d->exchange_bandwidth / d->tiles * cp.exchange_efficiency));
    assert_cost(&c, &want);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_BACKWARD, 2, &c), 0);
    want.compute = vector_form(SIM_PREC_F16, v, 1, 3.0 * 2, 1).compute;
    assert_cost(&c, &want);
}

/* The closed form of one split (top of ipu_gemm.c) for a plain f16 product. */
static sim_cost_t split_form(uint64_t m, uint64_t k, uint64_t n, uint32_t pm, uint32_t pn,
                             uint32_t pk, int resident)
{
    uint64_t kg = cp.amp_k_group[SIM_PREC_F16], ng = cp.amp_n_group;
    uint64_t m_t = (m + pm - 1) / pm, kx = (k + pk - 1) / pk, nx = (n + pn - 1) / pn;
    uint64_t k_t = (((k + kg - 1) / kg * kg + pk - 1) / pk + kg - 1) / kg * kg;
    uint64_t n_t = (nx + ng - 1) / ng * ng;
    double tiles = d->tiles, partial = pk > 1 ? (double)m_t * nx * (pk - 1) / pk : 0;
    double bytes = (double)m_t * kx + (resident && pm == 1 ? 0 : (double)kx * nx) + partial;
    sim_cost_t c = {0};

    c.compute_sets = pk > 1 ? 2 : 1;
    c.compute = ps(2.0 * m_t * k_t * n_t * tiles / (d->peak_flops[0] * cp.amp_efficiency) +
                   partial / (cp.vector_lanes[0] * cp.vector_efficiency * d->clock_hz)) +
                c.compute_sets * cp.compute_set_overhead;
    c.exchange = ps(bytes * 2 / ((double)d->exchange_bandwidth / tiles * cp.exchange_efficiency));
    c.sync = c.compute_sets * cp.tile_sync;
    return c;
}

static void test_gemm_split_closed_form(void **state)
{
    sim_gemm_t g = {1, 1024, 1024, 1024, 1024, 0, 0, 1, 0, SIM_PREC_F16};
    sim_cost_t c, want;

    (void)state;
    /* The worked example of ipu_gemm.c: 32 x 46 tiles, no k split. */
    assert_int_equal(sim_gemm_cost_split(&cp, d, &g, 1, 32, 46, 1, &c), 0);
    want = split_form(1024, 1024, 1024, 32, 46, 1, 1);
    assert_cost(&c, &want);
    /* With the AMP at its peak, the AMP part is 2 x 786,432 x 1472 / 250e12 s. */
    sim_cost_params_t peak = cp;
    peak.amp_efficiency = 1.0;
    peak.compute_set_overhead = 0;
    assert_int_equal(sim_gemm_cost_split(&peak, d, &g, 1, 32, 46, 1, &c), 0);
    assert_int_equal(c.compute, ps(2.0 * 786432 * 1472 / 250e12));
    /* A k split: partial sums, a second compute set. */
    assert_int_equal(sim_gemm_cost_split(&cp, d, &g, 1, 16, 11, 8, &c), 0);
    want = split_form(1024, 1024, 1024, 16, 11, 8, 1);
    assert_cost(&c, &want);
    /* More tiles than the IPU has, or a zero factor, are refused. */
    assert_int_equal(sim_gemm_cost_split(&cp, d, &g, 1, 64, 64, 1, &c), -EINVAL);
    assert_int_equal(sim_gemm_cost_split(&cp, d, &g, 1, 0, 1, 1, &c), -EINVAL);
}

/* The planner returns the cheapest split of its search space (re-enumerated here), and is
 * within 10% of the cheapest of every split of a small device (exhaustive). */
static void test_gemm_planner(void **state)
{
    static const uint64_t shapes[][4] = {
        {1, 1024, 1024, 4096}, {1, 20, 2048, 1000}, {32, 512, 64, 512},
        {1, 62720, 576, 64},   {1, 3, 5, 7},
    };
    sim_device_t small = *sim_device_gc200();

    (void)state;
    small.tiles = 48;
    for (size_t i = 0; i < sizeof(shapes) / sizeof(shapes[0]); i++) {
        sim_gemm_t g = {shapes[i][0], shapes[i][1], shapes[i][2], shapes[i][3], 0, 0, 0, 1, 0,
                        SIM_PREC_F16};
        sim_gemm_plan_t plan;
        sim_time_t best = SIM_TIME_MAX;
        uint32_t pg;

        g.k_padded = sim_gemm_pad_k(&cp, SIM_PREC_F16, g.k);
        assert_int_equal(sim_gemm_plan(&cp, &small, &g, &plan), 0);
        pg = g.g < small.tiles ? (uint32_t)g.g : small.tiles;
        for (uint32_t pk = 1; pk <= 64; pk *= 2)
            for (uint32_t pm = 1; pm * pk * pg <= small.tiles; pm++)
                for (uint32_t pn = 1; pn * pm * pk * pg <= small.tiles; pn++) {
                    sim_cost_t c;

                    if (sim_gemm_cost_split(&cp, &small, &g, pg, pm, pn, pk, &c) == 0 &&
                        sim_cost_total(&c) < best)
                        best = sim_cost_total(&c);
                }
        assert_true(sim_cost_total(&plan.cost) >= best);
        assert_true((double)sim_cost_total(&plan.cost) <= 1.10 * (double)best);
        assert_true((uint64_t)plan.pg * plan.pm * plan.pn * plan.pk <= small.tiles);
    }
}

static void test_matmul_and_conv(void **state)
{
    sim_layer_t mm, cv;
    sim_gemm_t g;
    sim_gemm_plan_t fwd, dw, dx;
    sim_cost_t c, want = {0};

    (void)state;
    sim_layer_init(&mm, SIM_LAYER_MATMUL, "ffn1");
    mm.rows = 512, mm.in = 1024, mm.out = 4096, mm.bias = 1;
    /* Forward: the planned (2 x 512) x 1024 x 4096 product. */
    g = (sim_gemm_t){1, 1024, 1024, 4096, 1024, 0, 0, 1, 0, SIM_PREC_F16};
    assert_int_equal(sim_gemm_plan(&cp, d, &g, &fwd), 0);
    assert_int_equal(sim_layer_cost(&cp, d, &mm, SIM_PASS_FORWARD, 2, &c), 0);
    assert_cost(&c, &fwd.cost);
    assert_int_equal(sim_layer_cost(&cp, d, &mm, SIM_PASS_RECOMPUTE, 2, &c), 0);
    assert_cost(&c, &fwd.cost);
    /* Backward: the weight gradient (1024 x 1024 rows x 4096, both operands moving) and the
     * input gradient (1024 x 4096 x 1024 against the weights). */
    g = (sim_gemm_t){1, 1024, 1024, 4096, 1024, 0, 0, 0, 0, SIM_PREC_F16};
    assert_int_equal(sim_gemm_plan(&cp, d, &g, &dw), 0);
    g = (sim_gemm_t){1, 1024, 4096, 1024, 4096, 0, 0, 1, 0, SIM_PREC_F16};
    assert_int_equal(sim_gemm_plan(&cp, d, &g, &dx), 0);
    sim_cost_add(&want, &dw.cost);
    sim_cost_add(&want, &dx.cost);
    assert_int_equal(sim_layer_cost(&cp, d, &mm, SIM_PASS_BACKWARD, 2, &c), 0);
    assert_cost(&c, &want);
    mm.input_grad = 0;
    assert_int_equal(sim_layer_cost(&cp, d, &mm, SIM_PASS_BACKWARD, 2, &c), 0);
    assert_cost(&c, &dw.cost);
    /* A 1x1 stride-1 conv is the matmul of its pixels (with conv_efficiency 1). */
    sim_cost_params_t same = cp;
    same.conv_efficiency = 1.0;
    sim_layer_init(&cv, SIM_LAYER_CONV, "conv");
    cv.h = cv.w = 32, cv.cin = 1024, cv.cout = 4096, cv.kernel = 1;
    assert_int_equal(sim_layer_cost(&same, d, &cv, SIM_PASS_FORWARD, 1, &c), 0);
    assert_cost(&c, &fwd.cost);
    /* conv1 of ResNet-50: 3 input channels padded to 16 per kernel position. */
    sim_layer_init(&cv, SIM_LAYER_CONV, "conv1");
    cv.h = cv.w = 224, cv.cin = 3, cv.cout = 64, cv.kernel = 7, cv.stride = 2, cv.pad = 3;
    g = (sim_gemm_t){1, 20ULL * 112 * 112, 147, 64, 49 * 16, 7, 2, 1, 1, SIM_PREC_F16};
    assert_int_equal(sim_gemm_plan(&cp, d, &g, &fwd), 0);
    assert_int_equal(sim_layer_cost(&cp, d, &cv, SIM_PASS_FORWARD, 20, &c), 0);
    assert_cost(&c, &fwd.cost);
    /* conv_efficiency slows every convolution, and no matmul. */
    sim_cost_params_t slow = cp;
    slow.conv_efficiency = cp.conv_efficiency / 2;
    assert_int_equal(sim_gemm_plan(&slow, d, &g, &dw), 0);
    assert_true(sim_cost_total(&dw.cost) > sim_cost_total(&fwd.cost));
    assert_int_equal(sim_layer_cost(&slow, d, &mm, SIM_PASS_FORWARD, 2, &c), 0);
    assert_int_equal(sim_layer_cost(&cp, d, &mm, SIM_PASS_FORWARD, 2, &want), 0);
    assert_cost(&c, &want);
}

static void test_attention(void **state)
{
    sim_layer_t l;
    sim_cost_t c, want;
    sim_gemm_plan_t a, b;
    sim_gemm_t scores = {32, 512, 64, 512, 64, 0, 0, 0, 0, SIM_PREC_F16};
    sim_gemm_t context = {32, 512, 512, 64, 512, 0, 0, 0, 0, SIM_PREC_F16};

    (void)state;
    sim_layer_init(&l, SIM_LAYER_ATTENTION, "attention");
    l.heads = 16, l.seq = 512, l.head_dim = 64;
    want = vector_form(SIM_PREC_F16, 32ULL * 512 * 512, 10, 2.0 * 2, 2);
    assert_int_equal(sim_gemm_plan(&cp, d, &scores, &a), 0);
    assert_int_equal(sim_gemm_plan(&cp, d, &context, &b), 0);
    sim_cost_add(&want, &a.cost);
    sim_cost_add(&want, &b.cost);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 2, &c), 0);
    assert_cost(&c, &want);
    /* Backward: softmax's 6 operations, the two products again and their two transposes. */
    want = vector_form(SIM_PREC_F16, 32ULL * 512 * 512, 6, 2.0 * 2, 2);
    sim_cost_add(&want, &a.cost);
    sim_cost_add(&want, &b.cost);
    sim_cost_add(&want, &b.cost);
    sim_cost_add(&want, &a.cost);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_BACKWARD, 2, &c), 0);
    assert_cost(&c, &want);
}

static void test_update(void **state)
{
    static const double ops[] = {2, 4, 12, 16, 6};
    sim_cost_t c, want;

    (void)state;
    for (int o = 0; o < SIM_OPTIM_COUNT; o++) {
        sim_update_t u = {(sim_optimizer_t)o, 1000000, 10, 2, 2, 4, 0};
        double bytes = 2 * 2 + 2 * 2 + 2.0 * sim_optimizer_states((sim_optimizer_t)o) * 4;

        want = vector_form(SIM_PREC_F32, 1000000, ops[o], bytes, 1);
        if (o == SIM_OPTIM_LAMB || o == SIM_OPTIM_LARS) { /* two supersteps per tensor: the
                                                              trust ratio's norms */
            want.compute += 20 * cp.compute_set_overhead;
            want.sync += 20 * cp.tile_sync;
            want.compute_sets += 20;
        }
        assert_int_equal(sim_update_cost(&cp, d, &u, &c), 0);
        assert_cost(&c, &want);
        /* State in Streaming Memory: read and written once per update. */
        u.streaming = 1;
        assert_int_equal(sim_update_cost(&cp, d, &u, &c), 0);
        want.exchange = o == SIM_OPTIM_SGD ? 0
                                           : ps(2.0 * sim_optimizer_states((sim_optimizer_t)o) * 4 *
                                                1e6 / (double)cp.streaming_bandwidth);
        assert_cost(&c, &want);
    }
    assert_int_equal(sim_optimizer_parse("lamb"), SIM_OPTIM_LAMB);
    assert_int_equal(sim_optimizer_parse("lars"), SIM_OPTIM_LARS);
    assert_int_equal(sim_optimizer_parse("lion"), -1);
}

static void test_bad_layers(void **state)
{
    sim_layer_t l;
    sim_cost_t c;
    char err[200];

    (void)state;
    sim_layer_init(&l, SIM_LAYER_CONV, "c");
    l.h = l.w = 4, l.cin = 8, l.cout = 8, l.kernel = 7;
    assert_int_equal(sim_layer_check(&l, err, sizeof(err)), -EINVAL); /* 7 > 4 with no pad */
    assert_non_null(strstr(err, "conv"));
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 1, &c), -EINVAL);
    sim_layer_init(&l, SIM_LAYER_MATMUL, "m");
    assert_int_equal(sim_layer_check(&l, err, sizeof(err)), -EINVAL); /* in and out missing */
    assert_non_null(strstr(err, "matmul: in"));
    l.in = l.out = 8;
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 0, &c), -EINVAL);
    assert_int_equal(sim_layer_cost(&cp, d, &l, SIM_PASS_FORWARD, 1, &c), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_norm_pool_loss),
        cmocka_unit_test(test_embedding),
        cmocka_unit_test(test_gemm_split_closed_form),
        cmocka_unit_test(test_gemm_planner),
        cmocka_unit_test(test_matmul_and_conv),
        cmocka_unit_test(test_attention),
        cmocka_unit_test(test_update),
        cmocka_unit_test(test_bad_layers),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
