/*
 * sim-step --plan: the shapes and placements searched (plan.h).
 *
 * A placement of a model with sublayers (attention and feed-forward, bert-large) balances the
 * IPUs' work per micro-batch: the sublayers, in the model's order (attention, feed-forward,
 * attention, ...), are cut into K contiguous runs, IPU 0's run after the embedding and the heads
 * (which it also runs), so that the busiest IPU does the least: the smallest bound T found by
 * bisection, the runs packed front to back up to T. Around that split, every boundary between
 * two IPUs moved by one or two sublayers either way is a placement too (memory, or the pipeline's
 * fill, can make a slightly worse balance the better run). The costs come from the plans
 * themselves: a 2-stage plan whose IPU 0 holds no sublayer, one attention or one feed-forward
 * sublayer gives the embedding, the heads and each kind of sublayer.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

enum { E_EMB, E_ATT, E_FFN, E_HEADS, E_N };

/* Fragment F's work per micro-batch of a plan, recomputation included when it recomputes. */
static double frag_work(gcl_sim_plan_t p, int f, int recompute)
{
    gcl_sim_fragment_t fr;

    gcl_sim_plan_fragment(p, f, &fr);
    return fr.fwd_s + fr.bwd_s + (recompute ? fr.recompute_s : 0);
}

/* A 2-stage plan of micro-batch MICRO whose IPU 0 holds A attention and F feed-forward
 * sublayers; NULL when it cannot be planned. */
static gcl_sim_plan_t probe(simstep_t *w, gcl_instance_t inst, long micro, int a, int f)
{
    char text[64], err[512];
    int na = w->minfo.attention_sublayers, nf = w->minfo.ffn_sublayers;
    gcl_sim_plan_config_t c = {2, 1, micro, 8, NULL, NULL, w->o.optimizer, NULL, w->o.grad_type,
                               NULL, text, 0, 1};
    gcl_sim_plan_t p = NULL;
    gcl_status_t st;

    snprintf(text, sizeof text, "%d/%d,%d/%d", a, f, na - a, nf - f);
    st = gcl_sim_plan_create(inst, w->model, &c, &p, err, sizeof err);
    if (st != GCL_OK && st != GCL_ERR_OUT_OF_MEMORY) {
        gcl_sim_plan_free(p);
        return NULL;
    }
    return p;
}

/* The embedding's, an attention sublayer's, a feed-forward sublayer's and the heads' work per
 * micro-batch of MICRO. Returns 0, or -1. */
static int sublayer_costs(simstep_t *w, gcl_instance_t inst, long micro, double cost[E_N])
{
    gcl_sim_plan_t none = probe(w, inst, micro, 0, 0), att = probe(w, inst, micro, 1, 0);
    gcl_sim_plan_t ffn = probe(w, inst, micro, 0, 1);
    int rc = none && att && ffn ? 0 : -1;

    if (rc == 0) {
        cost[E_EMB] = frag_work(none, 0, 1);
        cost[E_ATT] = frag_work(att, 0, 1) - cost[E_EMB];
        cost[E_FFN] = frag_work(ffn, 0, 1) - cost[E_EMB];
        cost[E_HEADS] = frag_work(none, 2, 0); /* the last fragment: no recomputation */
    }
    gcl_sim_plan_free(none);
    gcl_sim_plan_free(att);
    gcl_sim_plan_free(ffn);
    return rc;
}

/* Packs the N sublayers (kinds KIND[i], costs COST) front to back into K runs of at most T
 * (IPU 0 starting at BASE), each run at least one sublayer. FIRST[k] gets run k's first
 * sublayer. Returns whether they fit. */
static int pack(const int *kind, int n, const double *cost, double base, int k, double t,
                int *first)
{
    int run = 0;
    double load = base;

    first[0] = 0;
    for (int i = 0; i < n; i++) {
        double c = cost[kind[i]];

        /* Close the run before sublayer i when it would pass T, or when every later run needs
         * one of the sublayers left. */
        if (i > first[run] && (load + c > t || n - i == k - run - 1)) {
            if (++run >= k)
                return 0;
            first[run] = i;
            load = 0;
        }
        load += c;
        if (load > t)
            return 0;
    }
    return run == k - 1;
}

/* The text of the placement whose runs start at FIRST (K runs over the N sublayers). */
static void placement_text(const int *kind, int n, const int *first, int k, char *buf, size_t len)
{
    size_t at = 0;

    buf[0] = '\0';
    for (int r = 0; r < k && at < len; r++) {
        int end = r + 1 < k ? first[r + 1] : n, a = 0, f = 0;

        for (int i = first[r]; i < end; i++)
            a += kind[i] == E_ATT, f += kind[i] == E_FFN;
        at += (size_t)snprintf(buf + at, len - at, "%s%d/%d", r ? "," : "", a, f);
    }
}

/* The balanced split of the sublayers over K IPUs into FIRST. Returns 0, or -1 when none. */
static int balance(const int *kind, int n, const double *cost, int k, int *first)
{
    double lo = 0, hi = cost[E_EMB] + cost[E_HEADS];

    for (int i = 0; i < n; i++)
        hi += cost[kind[i]];
    if (n < k || !pack(kind, n, cost, cost[E_EMB] + cost[E_HEADS], k, hi, first))
        return -1;
    for (int it = 0; it < 60; it++) {
        double mid = (lo + hi) / 2;

        if (pack(kind, n, cost, cost[E_EMB] + cost[E_HEADS], k, mid, first))
            hi = mid;
        else
            lo = mid;
    }
    return pack(kind, n, cost, cost[E_EMB] + cost[E_HEADS], k, hi, first) ? 0 : -1;
}

/* Calls FN with SHAPE for the balanced placement and its neighbours, each once. */
static int sublayer_shapes(simstep_t *w, gcl_instance_t inst, plan_cand_t *shape, void *ctx,
                           plan_shape_fn fn)
{
    int na = w->minfo.attention_sublayers, nf = w->minfo.ffn_sublayers, n = na + nf, k = shape->stages;
    int kind[2 * SIMSTEP_MAX_STAGES * 4], first[SIMSTEP_MAX_STAGES], moved[SIMSTEP_MAX_STAGES];
    double cost[E_N];
    char seen[64][sizeof shape->placement];
    int nseen = 0, rc = 0;

    if (n > (int)(sizeof kind / sizeof kind[0]) || sublayer_costs(w, inst, shape->micro, cost))
        return 0;
    for (int i = 0, a = 0, f = 0; i < n; i++) /* the model's order: attention, feed-forward, ... */
        kind[i] = (a <= f && a < na) || f >= nf ? (a++, E_ATT) : (f++, E_FFN);
    if (balance(kind, n, cost, k, first) != 0)
        return 0;
    for (int b = -1; b < k - 1 && rc == 0; b++) {
        for (int d = -2; d <= 2 && rc == 0; d++) {
            if ((b < 0) != (d == 0))
                continue; /* the split itself once, then each boundary moved */
            memcpy(moved, first, sizeof(int) * (size_t)k);
            if (b >= 0) {
                moved[b + 1] += d;
                if (moved[b + 1] <= moved[b] || (b + 2 < k ? moved[b + 1] >= moved[b + 2]
                                                           : moved[b + 1] >= n))
                    continue;
            }
            placement_text(kind, n, moved, k, shape->placement, sizeof shape->placement);
            int dup = 0;
            for (int i = 0; i < nseen; i++)
                dup |= strcmp(seen[i], shape->placement) == 0;
            if (dup || nseen == 64)
                continue;
            strcpy(seen[nseen++], shape->placement);
            rc = fn(ctx, shape);
        }
    }
    return rc;
}

int plan_placements(simstep_t *w, gcl_instance_t inst, int stages, int replicas, long micro,
                    long accum, void *ctx, plan_shape_fn fn)
{
    plan_cand_t shape;

    memset(&shape, 0, sizeof shape);
    shape.stages = stages;
    shape.replicas = replicas;
    shape.micro = micro;
    shape.accum = accum;
    if (stages > 1 && w->minfo.attention_sublayers > 0)
        return sublayer_shapes(w, inst, &shape, ctx, fn);
    return fn(ctx, &shape);
}

const char *plan_state(const plan_cand_t *c)
{
    return c->offchip ? (c->rts ? "streaming-sharded" : "streaming")
                      : (c->rts ? "sharded" : "on-chip");
}

/* A plan with every layer on a stage of its own (up to SIMSTEP_MAX_STAGES), micro-batch one
 * unit, to see what each layer needs alone. */
static gcl_sim_plan_t layer_by_layer(simstep_t *w, gcl_instance_t inst, int *stages)
{
    char err[1024];
    long unit = (long)ceil(w->minfo.samples_per_unit - 1e-9);
    gcl_sim_plan_config_t c = {0};
    gcl_sim_plan_t p = NULL;

    *stages = w->minfo.layers < SIMSTEP_MAX_STAGES ? w->minfo.layers : SIMSTEP_MAX_STAGES;
    c = (gcl_sim_plan_config_t){*stages, 1,    unit, 1,    "gpipe", NULL, w->o.optimizer,
                                NULL,    GCL_F16, NULL, NULL,  0,     1};
    if (gcl_sim_plan_create(inst, w->model, &c, &p, err, sizeof err) != GCL_OK &&
        p == NULL)
        return NULL;
    return p;
}

double plan_capacity(simstep_t *w, gcl_instance_t inst)
{
    int stages;
    gcl_sim_plan_t p = layer_by_layer(w, inst, &stages);
    gcl_sim_stage_t st = {0};

    if (p)
        gcl_sim_plan_stage(p, 0, &st);
    gcl_sim_plan_free(p);
    return st.mem_capacity;
}

int plan_any_fits(const plan_cand_t *c, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!c[i].dropped)
            return 1;
    return 0;
}

int plan_none_fits(simstep_t *w, gcl_instance_t inst, int ipus)
{
    int stages, worst = 0;
    gcl_sim_plan_t p = layer_by_layer(w, inst, &stages);
    gcl_sim_stage_t st, big = {0};
    gcl_layer_t l = {0};

    for (int s = 0; p && s < stages; s++) {
        gcl_sim_plan_stage(p, s, &st);
        if (st.mem_total > big.mem_total)
            big = st, worst = s;
    }
    (void)worst;
    if (p)
        gcl_sim_model_layer(w->model, big.first_layer, &l);
    fprintf(stderr,
            "sim-step: --plan: no way to run %s on the %d IPUs of %s fits: its largest layer, %s, "
            "needs %.0f bytes alone (a micro-batch of one unit) of an IPU's %.0f, less the "
            "reserve\n",
            w->minfo.name, ipus, w->o.topology, l.name ? l.name : "?", big.mem_total,
            big.mem_capacity);
    gcl_sim_plan_free(p);
    return 1;
}
