/*
 * sim-step --plan: the best ways to run a model on a pod, found by the simulator.
 *
 * The search, for every stage count K that divides the pod's IPUs (up to --max-stages; with
 * --replicas R only K = IPUs / R), R = IPUs / K replicas:
 *   - micro-batch x accumulation for each global batch of the range: every micro-batch (a whole
 *     number of the model's units) whose accumulation A = G / (R B) is whole, with at least
 *     2P - 1 micro-batches for a pipeline of P forward stages (PopART refuses fewer);
 *   - the placement: for a model with sublayers (bert-large), the attention and feed-forward
 *     sublayers per IPU that balance the IPUs' work best (IPU 0 also runs the embedding and the
 *     heads), and every placement one or two sublayers away from it at each boundary between
 *     IPUs; otherwise the balancing rule of contiguous layers;
 *   - recomputation from checkpoints, none, or of the whole stage;
 *   - the optimizer state on or off chip, each with or without replicated tensor sharding.
 * Every candidate is planned (sim/plan.h): one that does not keep --memory-reserve free on every
 * IPU is dropped. Its bound is the lock-step compute of PopART's cycles: for each cycle the
 * busiest IPU's passes and one host exchange, which the full simulation only adds to (copies,
 * syncs, the gradient reduction and the update). Candidates are simulated in full, as plain
 * sim-step runs them, in the order of their bounds, until the next bound is below the --top-th
 * best simulated throughput: no candidate left out could have made the table.
 *
 * Every number printed comes from the same simulation as `sim-step` with the printed options:
 * bit for bit the same (tests/scaling/plan_check.sh checks it).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static const char *const recomputes[] = {"checkpoints", "none", "stage"};

/* What the search needs of the pod and the model. */
typedef struct {
    simstep_t *w;
    gcl_instance_t inst;
    int ipus;
    double host_exchange_s, streaming_bps, gateway_bps, capacity, reserve;
    int ilds;
    plan_cand_t *c;
    size_t n, cap;
    long considered, dropped_memory, fits;
} search_t;

static plan_cand_t *add(search_t *s)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        plan_cand_t *c = realloc(s->c, cap * sizeof *c);

        if (!c)
            return NULL;
        s->c = c;
        s->cap = cap;
    }
    memset(&s->c[s->n], 0, sizeof s->c[s->n]);
    return &s->c[s->n++];
}

/* The plan of candidate C on the search's pod (NULL with *STATUS on failure). */
static gcl_sim_plan_t plan_of(const search_t *s, const plan_cand_t *c, gcl_status_t *status,
                              char *err, size_t len)
{
    const simstep_t *w = s->w;
    gcl_sim_plan_config_t cfg = {c->stages,
                                 c->replicas,
                                 c->micro,
                                 (int)c->accum,
                                 NULL,
                                 recomputes[c->recompute],
                                 w->o.optimizer,
                                 plan_state(c),
                                 w->o.grad_type,
                                 NULL,
                                 c->placement[0] ? c->placement : NULL,
                                 0,
                                 1};
    gcl_sim_plan_t p = NULL;

    *status = gcl_sim_plan_create(s->inst, w->model, &cfg, &p, err, len);
    if (*status != GCL_OK && *status != GCL_ERR_OUT_OF_MEMORY) {
        gcl_sim_plan_free(p);
        return NULL;
    }
    return p;
}

/* The lock-step compute of a step of PLAN (sim/pipeline.h): each cycle, the busiest IPU's
 * passes and a host exchange. A lower bound on the simulated step. */
static double lockstep_s(const search_t *s, gcl_sim_plan_t plan, const plan_cand_t *c)
{
    gcl_sim_plan_info_t pi;
    gcl_sim_fragment_t fr[SIMSTEP_MAX_STAGES + 1];
    double total = 0, work[SIMSTEP_MAX_STAGES];
    int nf;

    gcl_sim_plan_info(plan, &pi);
    nf = pi.fragments;
    for (int f = 0; f < nf; f++)
        gcl_sim_plan_fragment(plan, f, &fr[f]);
    for (long cy = 0; cy < pi.cycles; cy++) {
        double busiest = 0;

        memset(work, 0, sizeof(double) * (size_t)c->stages);
        for (int f = 0; f < nf; f++) {
            long fm = cy - f, bm = f == nf - 1 ? fm : cy - (2L * nf - 2 - f);

            if (fm >= 0 && fm < c->accum)
                work[fr[f].stage] += fr[f].fwd_s;
            if (bm >= 0 && bm < c->accum)
                work[fr[f].stage] +=
                    fr[f].bwd_s + (f < nf - 1 || nf == 1 ? fr[f].recompute_s : 0);
        }
        for (int k = 0; k < c->stages; k++)
            busiest = work[k] > busiest ? work[k] : busiest;
        total += busiest + s->host_exchange_s;
    }
    return total;
}

/* The optimizer's state vectors per value: what the update streams when the state is off chip
 * (sim/optimizer.h). */
static double w_states(const simstep_t *w)
{
    const char *o = w->o.optimizer ? w->o.optimizer : w->minfo.optimizer;

    return !strcmp(o, "sgd") ? 0 : !strcmp(o, "momentum") || !strcmp(o, "lars") ? 1 : 2;
}

/* A stage's gradient reduction between IPU-Link domains, at the least: every domain it spans
 * (M of them, L of the stage's replicas in each) sends out at least 2(M - 1)/M of the
 * gradient's bytes (a reduce-scatter's and an all-gather's share, 2 bytes a value at the
 * least), which leave through its L IPUs' own hops to their gateways (gateway_ipu_gbs). */
static double crossing_s(const search_t *s, const plan_cand_t *c, double weights)
{
    int per_ild = s->ipus / (s->ilds > 0 ? s->ilds : 1), m, l;
    double bytes = weights * 2; /* f16, the least a gradient or weight takes */

    if (s->ilds <= 1 || s->gateway_bps <= 0 || per_ild % c->stages)
        return 0;
    l = per_ild / c->stages;
    m = (c->replicas + l - 1) / l;
    return m > 1 ? 2.0 * (m - 1) / m * bytes / l / s->gateway_bps : 0;
}

/* Plans candidate C: drops it when it does not fit with the reserve, else sets its bound. */
static void assess(search_t *s, plan_cand_t *c)
{
    char err[1024];
    gcl_status_t st;
    gcl_sim_plan_t p = plan_of(s, c, &st, err, sizeof err);
    double step, streaming = 0, across = 0;

    s->considered++;
    c->headroom = INFINITY;
    for (int k = 0; p && k < c->stages; k++) {
        gcl_sim_stage_t stg;
        /* Off chip, the update reads and writes the state (its shard) over the gateway:
         * 8 bytes a value for the two vectors of LAMB and Adam, 4 for the others' one. */
        double states = w_states(s->w), shard;

        gcl_sim_plan_stage(p, k, &stg);
        shard = c->rts ? stg.params / c->replicas : stg.params;
        c->headroom = stg.mem_headroom < c->headroom ? stg.mem_headroom : c->headroom;
        if (c->offchip && s->streaming_bps > 0)
            streaming = fmax(streaming, 2 * states * 4 * ceil(shard) / s->streaming_bps);
        across = fmax(across, crossing_s(s, c, stg.weights));
    }
    if (!p || st != GCL_OK || c->headroom < s->reserve) {
        c->dropped = 1;
        s->dropped_memory += p != NULL;
        gcl_sim_plan_free(p);
        return;
    }
    s->fits++;
    step = lockstep_s(s, p, c) + streaming + across;
    c->bound = step > 0 ? (double)c->replicas * c->micro * c->accum / step : 0;
    gcl_sim_plan_free(p);
}

/* Adds every variant (recomputation, state, sharding) of a shape and placement. */
static int variants(void *ctx, const plan_cand_t *shape)
{
    search_t *s = ctx;

    for (int r = 0; r < 3; r++) {
        for (int v = 0; v < 4; v++) {
            plan_cand_t *c;

            if ((v & 2) && shape->replicas == 1) /* sharding over one replica is none */
                continue;
            if (!(c = add(s)))
                return -1;
            *c = *shape;
            c->recompute = r;
            c->offchip = v & 1;
            c->rts = (v & 2) != 0;
            assess(s, c);
        }
    }
    return 0;
}

/* Every micro-batch x accumulation of the global batch over the replicas of K stages: with a
 * range LO-HI, for each micro-batch the largest accumulation inside it (the model charges no
 * convergence cost for a larger batch, so a larger one never simulates slower). */
static int batches(search_t *s, int stages, long lo, long hi)
{
    const simstep_t *w = s->w;
    int r = s->ipus / stages, p = stages + (w->minfo.attention_sublayers > 0 && stages > 1);
    double unit = w->minfo.samples_per_unit;

    for (long b = 1; b * r <= hi; b++) {
        double units = (double)b / unit;
        long a = hi / ((long)r * b), fits = s->fits;

        if (fabs(units - round(units)) > 1e-9 || (long)r * b * a < lo ||
            (lo == hi && (long)r * b * a != hi) || (stages > 1 && a < 2L * p - 1))
            continue;
        if (plan_placements(s->w, s->inst, stages, r, b, a, s, variants) != 0)
            return -1;
        /* Memory grows with the micro-batch: when no variant of this one fits, none of a larger
         * one does. */
        if (s->fits == fits)
            break;
    }
    return 0;
}

/* The candidates' order: simulated throughput first, then the bound. */
static int by_result(const void *x, const void *y)
{
    const plan_cand_t *a = x, *b = y;
    double ka = a->simulated ? a->sps : -1, kb = b->simulated ? b->sps : -1;

    if (ka != kb)
        return ka > kb ? -1 : 1;
    return a->bound > b->bound ? -1 : a->bound < b->bound;
}

static int by_bound(const void *x, const void *y)
{
    const plan_cand_t *a = x, *b = y;

    if (a->dropped != b->dropped)
        return a->dropped - b->dropped;
    return a->bound > b->bound ? -1 : a->bound < b->bound;
}

/* Simulates candidates in the order of their bounds until no bound left can beat the TOP-th
 * result. Returns the number simulated, or -1 when a simulation failed. */
static long simulate(search_t *s, long top)
{
    double best[1024];
    long n = 0, kept = 0;

    qsort(s->c, s->n, sizeof *s->c, by_bound);
    for (size_t i = 0; i < s->n && !s->c[i].dropped; i++) {
        plan_cand_t *c = &s->c[i];

        if (kept >= top && c->bound < best[top - 1])
            break;
        if (plan_simulate(s->w, c) != 0)
            return -1;
        n++;
        /* Keep the TOP best throughputs, in decreasing order. */
        long at = kept < top ? kept++ : top - 1;
        if (kept == top && at == top - 1 && c->sps <= best[at])
            continue;
        best[at] = c->sps;
        while (at > 0 && best[at] > best[at - 1]) {
            double t = best[at];
            best[at] = best[at - 1];
            best[at - 1] = t;
            at--;
        }
    }
    qsort(s->c, s->n, sizeof *s->c, by_result);
    return n;
}

/* The search's pod: an instance of one IPU on it, for its constants and plans. */
static int open_pod(search_t *s)
{
    simstep_t *w = s->w;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    gcl_sim_param_t par;

    cfg.num_replicas = 1;
    cfg.ipus_per_replica = 1;
    cfg.phantom = 1;
    cfg.topology = w->o.topology;
    if (gcl_init(&cfg, &s->inst) != GCL_OK) {
        fprintf(stderr, "sim-step: --plan: cannot open the pod '%s'\n", w->o.topology);
        return 2;
    }
    s->ipus = gcl_sim_topology_ipus(s->inst);
    for (int i = 0; gcl_sim_param(s->inst, i, &par) == 0; i++)
        if (!strcmp(par.key, "host_exchange_ns"))
            s->host_exchange_s = par.value * 1e-9;
        else if (!strcmp(par.key, "streaming_gbs"))
            s->streaming_bps = par.value * 1e9;
        else if (!strcmp(par.key, "gateway_ipu_gbs"))
            s->gateway_bps = par.value * 1e9;
    s->ilds = gcl_sim_topology_ilds(s->inst);
    s->capacity = plan_capacity(w, s->inst);
    s->reserve = w->o.reserve_mb >= 0 ? w->o.reserve_mb * 1e6 : 0.05 * s->capacity;
    return 0;
}

int simstep_plan(simstep_t *w)
{
    search_t s = {.w = w};
    long hi = w->o.gb_hi ? w->o.gb_hi : w->o.global_batch, maxk = w->o.max_stages;
    int status = open_pod(&s);
    long simulated;

    if (status)
        return status;
    if (!maxk)
        maxk = 16;
    for (int k = 1; k <= s.ipus && k <= maxk; k++) {
        if (s.ipus % k || (w->o.replicas_given && s.ipus / k != w->o.replicas))
            continue;
        if (batches(&s, k, w->o.global_batch, hi) != 0) {
            fprintf(stderr, "sim-step: --plan: out of memory\n");
            status = 1;
            goto out;
        }
    }
    if (!plan_any_fits(s.c, s.n)) {
        status = plan_none_fits(w, s.inst, s.ipus);
        goto out;
    }
    simulated = simulate(&s, w->o.top);
    if (simulated < 0) {
        status = 1;
        goto out;
    }
    status = plan_report(w, s.c, s.n, s.considered, simulated, s.dropped_memory, s.reserve);
out:
    free(s.c);
    gcl_finalize(s.inst);
    return status;
}
