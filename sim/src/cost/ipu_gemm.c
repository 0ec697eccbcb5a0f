/*
 * Matrix products on the GC200's tiles: the cost of one split, and the planner that picks the
 * cheapest split (sim/cost/ipu_gemm.h).
 *
 * For a split p_g x p_m x p_n x p_k of G products (M x K) . (K x N) over T tiles, the busiest
 * tile:
 *   multiplies  g_t x m_t x k_t x n_t  values, g_t = ceil(G/p_g), m_t = ceil(M/p_m),
 *               k_t = ceil(K_padded/p_k) rounded up to the AMP input group, n_t = ceil(N/p_n)
 *               rounded up to the AMP output group, in 2 g_t m_t k_t n_t T / (peak x eff) s;
 *   receives    b (g_t m_t ceil(K/p_k) f   the activation block (f < 1 for a conv: see below)
 *                  + g_t ceil(K/p_k) ceil(N/p_n)   the other operand, unless it is resident
 *                                                  weights used by one row block (p_m = 1)
 *                  + g_t m_t ceil(N/p_n) (p_k-1)/p_k)   partial sums to reduce, when p_k > 1
 *               bytes (b bytes per value), at exchange_bandwidth / T x exchange_efficiency;
 *   reduces     those partial sums with vector adds in a second compute set.
 * For a conv the activation block's rows are im2col rows: k x k kernel positions of cin
 * channels. Neighbouring output pixels share input pixels, so a tile whose output block is
 * b x b pixels (b = sqrt(m_t)) reads about (s + (k - s)/b)^2 input pixels per output pixel for
 * stride s, never more than k^2: f = min(k^2, (s + (k - s)/b)^2) / k^2.
 *
 * Worked example (f16, 1472 tiles, amp_efficiency 1, exchange_efficiency 1): 1024 x 1024 x 1024
 * split 1 x 32 x 46 x 1 gives m_t = 32, k_t = 1024, n_t = 24 (23 rounded up to 4s): 786,432
 * multiply-adds, 2 x 786,432 x 1472 / 250e12 = 9.26 us of AMP time; the tile receives
 * 32 x 1024 activations and 1024 x 23 weights (p_m > 1), 2 x 56,320 = 112,640 bytes at
 * 8e12 / 1472 bytes/s = 20.7 us.
 */
#include <errno.h>
#include <math.h>

#include "sim/cost/ipu_gemm.h"

static uint64_t round_up(uint64_t a, uint64_t g)
{
    return g > 1 ? sim_ceil_div(a, g) * g : a;
}

uint64_t sim_gemm_pad_k(const sim_cost_params_t *cp, sim_precision_t p, uint64_t k)
{
    return round_up(k, cp->amp_k_group[p == SIM_PREC_F32 ? SIM_PREC_F32 : SIM_PREC_F16]);
}

/* Share of an im2col block a conv tile must receive (1 for a plain product). */
static double act_fraction(const sim_gemm_t *g, uint64_t m_t)
{
    double k, s, b, per;

    if (g->kernel <= 1)
        return 1.0;
    k = (double)g->kernel;
    s = (double)(g->stride ? g->stride : 1);
    b = sqrt((double)m_t);
    per = g->kernel > g->stride ? s + (k - s) / b : k;
    per = per * per;
    return per < k * k ? per / (k * k) : 1.0;
}

static double amp_eff(const sim_cost_params_t *cp, const sim_gemm_t *g)
{
    return cp->amp_efficiency * (g->spatial ? cp->conv_efficiency : 1.0);
}

int sim_gemm_cost_split(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                        uint32_t pg, uint32_t pm, uint32_t pn, uint32_t pk, sim_cost_t *out)
{
    sim_precision_t p = g->prec == SIM_PREC_F32 ? SIM_PREC_F32 : SIM_PREC_F16;
    double tiles = (double)d->tiles, elem = p == SIM_PREC_F32 ? 4.0 : 2.0;
    uint64_t g_t, m_t, k_t, n_t, k_x, n_x;
    double macs, bytes, partial = 0, tile_bw, lanes;

    if (!pg || !pm || !pn || !pk || (uint64_t)pg * pm * pn * pk > d->tiles || !g->g || !g->m ||
        !g->k || !g->n)
        return -EINVAL;
    g_t = sim_ceil_div(g->g, pg);
    m_t = sim_ceil_div(g->m, pm);
    k_t = round_up(sim_ceil_div(g->k_padded, pk), cp->amp_k_group[p]);
    n_t = round_up(sim_ceil_div(g->n, pn), cp->amp_n_group);
    k_x = sim_ceil_div(g->k, pk);
    n_x = sim_ceil_div(g->n, pn);
    macs = (double)g_t * (double)m_t * (double)k_t * (double)n_t;
    bytes = (double)g_t * (double)m_t * (double)k_x * act_fraction(g, m_t);
    if (!g->b_resident || pm > 1)
        bytes += (double)g_t * (double)k_x * (double)n_x;
    if (pk > 1)
        partial = (double)g_t * (double)m_t * (double)n_x * (double)(pk - 1) / (double)pk;
    bytes = (bytes + partial) * elem;
    tile_bw = (double)d->exchange_bandwidth / tiles * cp->exchange_efficiency;
    lanes = (double)cp->vector_lanes[p] * cp->vector_efficiency * (double)d->clock_hz;
    *out = (sim_cost_t){0};
    out->compute_sets = pk > 1 ? 2 : 1;
    out->compute = sim_ps_of(2.0 * macs * tiles / ((double)d->peak_flops[p] * amp_eff(cp, g)) +
                             partial / lanes);
    out->compute = sim_time_add(
        out->compute, out->compute_sets * sim_device_cycles_of_gc200(d, cp->compute_set_overhead));
    out->exchange = sim_ps_of(bytes / tile_bw);
    out->sync = out->compute_sets * sim_device_cycles_of_gc200(d, cp->tile_sync);
    return 0;
}

/* The next p_m of the search ladder: 1..16, then steps of a fifth. */
static uint32_t ladder_next(uint32_t v)
{
    return v < 16 ? v + 1 : v + v / 5;
}

int sim_gemm_plan(const sim_cost_params_t *cp, const sim_device_t *d, const sim_gemm_t *g,
                  sim_gemm_plan_t *out)
{
    sim_precision_t p = g->prec == SIM_PREC_F32 ? SIM_PREC_F32 : SIM_PREC_F16;
    uint32_t pg, tg, n_groups;
    int found = 0;

    if (!g->g || !g->m || !g->k || !g->n || !g->k_padded || d->tiles == 0)
        return -EINVAL;
    pg = g->g < d->tiles ? (uint32_t)g->g : d->tiles;
    tg = d->tiles / pg;
    n_groups =
        (uint32_t)(sim_ceil_div(g->n, cp->amp_n_group) < tg ? sim_ceil_div(g->n, cp->amp_n_group)
                                                            : tg);
    for (uint32_t pk = 1; pk <= tg && pk <= 64; pk *= 2) {
        if (pk > 1 && sim_ceil_div(g->k_padded, pk) < cp->amp_k_group[p])
            break;
        for (uint32_t pm = 1; pm * pk <= tg && (pm == 1 || pm <= g->m); pm = ladder_next(pm)) {
            uint32_t pn = tg / (pm * pk);
            sim_cost_t c;

            if (pn > n_groups)
                pn = n_groups ? n_groups : 1;
            if (sim_gemm_cost_split(cp, d, g, pg, pm, pn, pk, &c) != 0)
                continue;
            if (!found || sim_cost_total(&c) < sim_cost_total(&out->cost)) {
                *out = (sim_gemm_plan_t){pg, pm, pn, pk, c};
                found = 1;
            }
        }
    }
    return found ? 0 : -EINVAL;
}
