/*
 * The per-layer cost model (sim/cost/ipu_cost.h): each layer type as products (sim/cost/ipu_gemm.h) and
 * vector work (sim/cost/bsp_cost.h). The operation counts per value are assumptions, listed here and
 * in docs/validation.md:
 *     elementwise   forward: its "ops" (1 for ReLU, 2 for dropout + add, 8 for GELU);
 *                   backward: the same again, reading the stored values and the gradient
 *     norm          forward 8 per value in 2 compute sets (statistics, then normalise);
 *                   backward 12 in 2
 *     attention     between its two products, softmax with scale, mask and dropout: forward 10
 *                   per score in 2 compute sets; backward 6 in 2
 *     pool          kernel x kernel per output value; backward the same
 *     embedding     forward: a gather (the table's rows come over the exchange); backward: the
 *                   scatter-add of the gradient rows
 *     loss          softmax cross-entropy, forward 8 per logit in 2 compute sets; backward 3
 * (the optimizer update's counts are in optimizer.c).
 */
#include <errno.h>

#include "sim/cost/ipu_cost.h"

/* Adds the planned product G to OUT. */
static int product(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                   sim_cost_t *out)
{
    sim_gemm_plan_t plan;
    int rc = sim_gemm_plan(cp, d, g, &plan);

    if (rc == 0)
        sim_cost_add(out, &plan.cost);
    return rc;
}

static sim_gemm_t gemm(const sim_cost_params_t *cp, const sim_layer_t *l, uint64_t g, uint64_t m,
                       uint64_t k, uint64_t n, int resident)
{
    return (sim_gemm_t){.g = g,
                        .m = m,
                        .k = k,
                        .n = n,
                        .k_padded = sim_gemm_pad_k(cp, l->prec, k),
                        .b_resident = resident,
                        .prec = l->prec};
}

static int matmul_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                       int backward, uint64_t units, sim_cost_t *out)
{
    uint64_t m = units * l->rows;
    sim_gemm_t g;
    int rc;

    if (!backward) {
        g = gemm(cp, l, 1, m, l->in, l->out, 1);
        return product(cp, d, &g, out);
    }
    g = gemm(cp, l, 1, l->in, m, l->out, 0); /* weight gradient: X^T . dY */
    rc = product(cp, d, &g, out);
    if (rc == 0 && l->input_grad) {
        g = gemm(cp, l, 1, m, l->out, l->in, 1); /* input gradient: dY . W^T */
        rc = product(cp, d, &g, out);
    }
    return rc;
}

/* A conv product: K is kernel positions x channels, padded per kernel position. */
static sim_gemm_t conv_gemm(const sim_cost_params_t *cp, const sim_layer_t *l, uint64_t m,
                            uint64_t ch_k, uint64_t n, uint32_t stride, int resident)
{
    uint64_t kk = (uint64_t)l->kernel * l->kernel;
    sim_gemm_t g = gemm(cp, l, 1, m, kk * ch_k, n, resident);

    g.k_padded = kk * sim_gemm_pad_k(cp, l->prec, ch_k);
    g.kernel = l->kernel;
    g.stride = stride;
    g.spatial = 1;
    return g;
}

static int conv_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                     int backward, uint64_t units, sim_cost_t *out)
{
    uint64_t m_out = units * sim_layer_out_h(l) * sim_layer_out_w(l);
    uint64_t m_in = units * l->h * l->w, kk = (uint64_t)l->kernel * l->kernel;
    sim_gemm_t g;
    int rc;

    if (!backward) {
        g = conv_gemm(cp, l, m_out, l->cin, l->cout, l->stride, 1);
        return product(cp, d, &g, out);
    }
    /* Weight gradient: (k k cin) x (output pixels) . (output pixels) x cout. */
    g = gemm(cp, l, 1, kk * l->cin, m_out, l->cout, 0);
    g.spatial = 1;
    rc = product(cp, d, &g, out);
    if (rc == 0 && l->input_grad) { /* input gradient: a transposed conv of dY */
        g = conv_gemm(cp, l, m_in, l->cout, l->cin, 1, 1);
        rc = product(cp, d, &g, out);
    }
    return rc;
}

static int attention_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                          int backward, uint64_t units, sim_cost_t *out)
{
    uint64_t g = units * l->heads, s = l->seq, hd = l->head_dim;
    sim_gemm_t scores = gemm(cp, l, g, s, hd, s, 0), context = gemm(cp, l, g, s, s, hd, 0);
    int rc;

    sim_vector_work(cp, d, l->prec, g * s * s, backward ? 6 : 10, 2, sim_prec_bytes(l->prec), 2,
                    out);
    rc = product(cp, d, &scores, out);
    if (rc == 0)
        rc = product(cp, d, &context, out);
    if (rc == 0 && backward) { /* the transposed products: dQ, dK and dP, dV */
        sim_gemm_t dq = gemm(cp, l, g, s, s, hd, 0), dp = gemm(cp, l, g, s, hd, s, 0);

        rc = product(cp, d, &dq, out);
        if (rc == 0)
            rc = product(cp, d, &dp, out);
    }
    return rc;
}

/* Embedding: moving UNITS x rows x width values over the exchange, and their copy or add. */
static void embedding_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                           int backward, uint64_t units, sim_cost_t *out)
{
    uint64_t values = units * l->rows * l->out;
    double bytes = (double)sim_ceil_div(values, d->tiles) * sim_prec_bytes(l->prec);
    double tile_bw = (double)d->exchange_bandwidth / d->tiles * cp->exchange_efficiency;

    out->exchange = sim_time_add(out->exchange, sim_ps_of(bytes / tile_bw));
    sim_vector_work(cp, d, l->prec, values, 1, backward ? 3 : 2, sim_prec_bytes(l->prec), 1, out);
}

static void other_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                       int backward, uint64_t units, sim_cost_t *out)
{
    uint32_t b = sim_prec_bytes(l->prec);

    switch (l->type) {
    case SIM_LAYER_ELEMENTWISE:
        sim_vector_work(cp, d, l->prec, units * l->values, l->ops, l->inputs + 1 + backward, b, 1,
                        out);
        break;
    case SIM_LAYER_NORM:
        sim_vector_work(cp, d, l->prec, units * l->values, backward ? 12 : 8, backward ? 4 : 3, b,
                        2, out);
        break;
    case SIM_LAYER_POOL:
        sim_vector_work(cp, d, l->prec, units * sim_layer_out_values(l),
                        (double)l->kernel * l->kernel, 2, b, 1, out);
        break;
    case SIM_LAYER_LOSS:
        sim_vector_work(cp, d, l->prec, units * l->rows * l->out, backward ? 3 : 8, 2, b,
                        backward ? 1 : 2, out);
        break;
    default:
        embedding_cost(cp, d, l, backward, units, out);
        break;
    }
}

int sim_layer_cost(const sim_cost_params_t *cp, const sim_device_t *d, const sim_layer_t *l,
                   sim_pass_t pass, uint64_t units, sim_cost_t *out)
{
    int backward = pass == SIM_PASS_BACKWARD;

    *out = (sim_cost_t){0};
    if (units == 0 || units > (UINT64_C(1) << 31) || sim_layer_check(l, NULL, 0) != 0 ||
        (int)pass < 0 || pass > SIM_PASS_RECOMPUTE)
        return -EINVAL;
    /* A first layer's backward has no input gradient to compute; its weight gradient remains. */
    if (backward && !l->input_grad && sim_layer_weights(l) == 0)
        return 0;
    switch (l->type) {
    case SIM_LAYER_MATMUL:
        return matmul_cost(cp, d, l, backward, units, out);
    case SIM_LAYER_CONV:
        return conv_cost(cp, d, l, backward, units, out);
    case SIM_LAYER_ATTENTION:
        return attention_cost(cp, d, l, backward, units, out);
    default:
        other_cost(cp, d, l, backward, units, out);
        return 0;
    }
}
