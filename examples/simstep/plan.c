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
 * Every candidate is planned (sim/plan/plan.h): one that does not keep --memory-reserve free on every
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

/* The share of the replayed reduction the bound counts: a phantom run charges the schedule
 * step by step, which landed within 0.3% of the replay in every plan of ResNet-50 and
 * BERT-Large measured on POD16 to POD256 (GCL_PLAN_DEBUG=1 prints both). */
#define PLAN_SLACK 0.98

/* The memory the plan's memory model leaves out (docs/planner.md), kept free on every IPU by
 * default, each sized for the largest among Graphcore's published configurations:
 *   - the landing buffer of a micro-batch's stream copy: ResNet-50's 20 uint8 images,
 *     3,010,560 B (BERT-Large's 4 sequences: 32 KB);
 *   - collective staging: two pieces of a reduction in flight (one per direction), assumed at
 *     most 8 MB each: 16,000,000 B;
 *   - the update's f32 temporaries of its largest tensor: BERT-Large's word embedding, 30,522 x
 *     1024 f32, sharded over 4 replicas: 31,254,528 B (ResNet-50's classifier: 8.2 MB);
 *   - Poplar's temporaries and vertex state beyond the model's per-layer code, assumed 2% of
 *     an IPU's SRAM: 18,811,453 B.
 * Together 69,076,541 B; every published configuration keeps at least 76.4 MB free. */
#define PLAN_RESERVE_BYTES (3010560.0 + 16000000.0 + 31254528.0 + 18811453.0)

/* What the search needs of the pod and the model. */
typedef struct {
    simstep_t *w;
    gcl_instance_t inst;
    int ipus;
    double host_sync_s, stream_s, streaming_bps, domain_bps, capacity, reserve;
    double sync_s, gw_sync_s, reduce_buffer; /* the reduction's per-step syncs (sim-step) */
    int ilds;
    plan_cand_t *c;
    size_t n, cap;
    long considered, dropped_memory, fits, pruned;
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

/* The lock-step compute of a step of PLAN (sim/schedule/pipeline.h): each cycle, the busiest IPU's
 * passes (IPU 0's with its micro-batch's stream copy) and in a pipeline the cycle's host sync;
 * a single stage syncs with the host once a step. A lower bound on the simulated step. */
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
                work[fr[f].stage] += fr[f].fwd_s + (f == 0 ? s->stream_s * c->micro : 0);
            if (bm >= 0 && bm < c->accum)
                work[fr[f].stage] +=
                    fr[f].bwd_s + (f < nf - 1 || nf == 1 ? fr[f].recompute_s : 0);
        }
        for (int k = 0; k < c->stages; k++)
            busiest = work[k] > busiest ? work[k] : busiest;
        total += busiest + (nf > 1 ? s->host_sync_s : 0);
    }
    return total + (nf > 1 ? 0 : s->host_sync_s);
}

/* The optimizer's state vectors per value: what the update streams when the state is off chip
 * (sim/cost/optimizer.h). */
static double w_states(const simstep_t *w)
{
    const char *o = w->o.optimizer ? w->o.optimizer : w->minfo.optimizer;

    return !strcmp(o, "sgd") ? 0 : !strcmp(o, "momentum") || !strcmp(o, "lars") ? 1 : 2;
}

/* The gradient reduction's traffic between IPU-Link domains: when the replicas span D domains,
 * each domain sends 2(D - 1)/D of every stage's gradient (f16, the least a gradient takes) out
 * at gateway_domain_gbs, the reductions of all stages together (what sim-step charges). */
static double crossing_s(const search_t *s, const plan_cand_t *c, double weights)
{
    int per_ild = s->ipus / (s->ilds > 0 ? s->ilds : 1);
    int d = (c->replicas * c->stages + per_ild - 1) / per_ild;

    if (d <= 1 || s->domain_bps <= 0)
        return 0;
    return 2.0 * (d - 1) / d * weights * 2 / s->domain_bps;
}

/* Plans candidate C: drops it when it does not fit with the reserve, else sets its bound. */
static void assess(search_t *s, plan_cand_t *c)
{
    char err[1024];
    gcl_status_t st;
    gcl_sim_plan_t p = plan_of(s, c, &st, err, sizeof err);
    double step, streaming = 0, weights = 0;

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
        weights += stg.weights;
    }
    if (!p || st != GCL_OK || c->headroom < s->reserve) {
        c->dropped = 1;
        s->dropped_memory += p != NULL;
        gcl_sim_plan_free(p);
        return;
    }
    s->fits++;
    c->lockstep_s = lockstep_s(s, p, c);
    step = c->lockstep_s + streaming + crossing_s(s, c, weights);
    c->bound = step > 0 ? (double)c->replicas * c->micro * c->accum / step : 0;
    gcl_sim_plan_free(p);
}

/* Adds the variants of a shape and placement: for each place of the optimizer state (on or off
 * chip, sharded or not), the first recomputation that fits of none, checkpoints and the whole
 * stage (none is the fastest; the whole stage costs what checkpoints cost, in less memory). */
static int variants(void *ctx, const plan_cand_t *shape)
{
    search_t *s = ctx;
    static const int order[3] = {1, 0, 2}; /* none, checkpoints, stage */

    for (int v = 0; v < 4; v++) {
        if ((v & 2) && shape->replicas == 1) /* sharding over one replica is none */
            continue;
        for (int r = 0; r < 3; r++) {
            plan_cand_t *c = add(s);

            if (!c)
                return -1;
            *c = *shape;
            c->recompute = order[r];
            c->offchip = v & 1;
            c->rts = (v & 2) != 0;
            assess(s, c);
            if (!c->dropped)
                break;
            s->n--; /* keep only the first that fits */
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

/* The syncs sim-step charges a stage's reduction of WEIGHTS values beyond its collective call:
 * ceil(gradient bytes / reduction_buffer_bytes) calls (at most one per tensor), each a ring of
 * 2(n_in - 1) steps in each domain and 2(d - 1) across, a sync each. */
static double reduction_syncs_s(const search_t *s, const plan_cand_t *c, double weights,
                                int tensors)
{
    int per_ild = s->ipus / (s->ilds > 0 ? s->ilds : 1);
    int d = (c->replicas * c->stages + per_ild - 1) / per_ild, n_in = (c->replicas + d - 1) / d;
    double bytes = weights * (double)gcl_dtype_size(s->w->o.grad_type);
    double calls = s->reduce_buffer > 0 ? ceil(bytes / s->reduce_buffer) : 1;

    if (c->replicas <= 1)
        return 0;
    calls = fmax(1, fmin(calls, tensors));
    return calls * (2.0 * (n_in - 1) * s->sync_s + 2.0 * (d - 1) * (s->sync_s + s->gw_sync_s));
}

/* The gradient reduction and update of C's busiest stage, replayed on the pod as its calls
 * would run with every replica arriving together (gcl_sim_collective_time), with the syncs of
 * the framework's calls and each domain's traffic out, in seconds. */
static double reduction_s(const search_t *s, const plan_cand_t *c)
{
    const simstep_t *w = s->w;
    char err[512];
    gcl_status_t st;
    gcl_sim_plan_t p = plan_of(s, c, &st, err, sizeof err);
    int ipus[SIMSTEP_MAX_STAGES * 64];
    double worst = 0, weights = 0;
    const char *o = w->o.optimizer ? w->o.optimizer : w->minfo.optimizer;
    gcl_optim_t opt = !strcmp(o, "sgd")        ? GCL_OPTIM_SGD
                      : !strcmp(o, "momentum") ? GCL_OPTIM_MOMENTUM
                      : !strcmp(o, "adam")     ? GCL_OPTIM_ADAM
                      : !strcmp(o, "lars")     ? GCL_OPTIM_LARS
                                               : GCL_OPTIM_LAMB;

    if (!p || c->replicas > (int)(sizeof ipus / sizeof ipus[0]))
        return (gcl_sim_plan_free(p), 0);
    for (int k = 0; k < c->stages; k++) {
        gcl_sim_stage_t stg;
        double t = 0, x = 0, shard;
        gcl_update_t u;

        gcl_sim_plan_stage(p, k, &stg);
        weights += stg.weights;
        shard = ceil(stg.weights / c->replicas);
        t = stg.params > 0 ? reduction_syncs_s(s, c, stg.weights, stg.tensors) : 0;
        u = (gcl_update_t){opt,     stg.params,     stg.tensors,
                           GCL_F16, w->o.grad_type, c->offchip};
        for (int r = 0; r < c->replicas; r++)
            ipus[r] = r * c->stages + k;
        if (c->rts && c->replicas > 1) {
            u.params = ceil(stg.params / c->replicas);
            gcl_sim_collective_time(s->inst, "reduce_scatter", (size_t)shard, w->o.grad_type,
                                    ipus, c->replicas, &x);
            t += x;
            gcl_sim_collective_time(s->inst, "all_gather", (size_t)shard, GCL_F16, ipus,
                                    c->replicas, &x);
        } else if (c->replicas > 1) {
            gcl_sim_collective_time(s->inst, "all_reduce", (size_t)stg.weights, w->o.grad_type,
                                    ipus, c->replicas, &x);
        }
        t += x;
        if (stg.params > 0 && gcl_sim_update_time(s->inst, &u, &x) == GCL_OK)
            t += x;
        worst = t > worst ? t : worst;
    }
    gcl_sim_plan_free(p);
    return worst + crossing_s(s, c, weights);
}

/* A max-heap of candidate indices by refined bound. */
static void heap_push(const plan_cand_t *c, size_t *h, size_t *n, size_t i)
{
    size_t at = (*n)++;

    h[at] = i;
    while (at > 0 && c[h[(at - 1) / 2]].refined < c[h[at]].refined) {
        size_t up = (at - 1) / 2, t = h[up];

        h[up] = h[at];
        h[at] = t;
        at = up;
    }
}

static size_t heap_pop(const plan_cand_t *c, size_t *h, size_t *n)
{
    size_t top = h[0], at = 0;

    h[0] = h[--*n];
    for (;;) {
        size_t l = 2 * at + 1, r = l + 1, m = at;

        if (l < *n && c[h[l]].refined > c[h[m]].refined)
            m = l;
        if (r < *n && c[h[r]].refined > c[h[m]].refined)
            m = r;
        if (m == at)
            break;
        size_t t = h[m];
        h[m] = h[at];
        h[at] = t;
        at = m;
    }
    return top;
}

/* Keeps the TOP best throughputs in BEST (decreasing), with SPS among them when it is. */
static void keep_best(double *best, long top, long *kept, double sps)
{
    long at = *kept < top ? (*kept)++ : top - 1;

    if (*kept == top && at == top - 1 && sps <= best[at])
        return;
    best[at] = sps;
    for (; at > 0 && best[at] > best[at - 1]; at--) {
        double t = best[at];

        best[at] = best[at - 1];
        best[at - 1] = t;
    }
}

/* Best first: the candidates, in the order of their cheap bounds (the lock-step compute), get
 * a refined bound (the reduction replayed) when they come up; the best refined bound is
 * simulated next, until it cannot beat the TOP-th result. Returns the number simulated, or -1
 * when a simulation failed. */
static long simulate(search_t *s, long top)
{
    double best[1024];
    size_t next = 0, nheap = 0;
    size_t *heap = malloc((s->n ? s->n : 1) * sizeof *heap); /* indices, by refined bound */
    long n = 0, kept = 0;

    if (!heap)
        return -1;
    qsort(s->c, s->n, sizeof *s->c, by_bound);
    for (;;) {
        int take_next = next < s->n && !s->c[next].dropped &&
                        (nheap == 0 || s->c[next].bound >= s->c[heap[0]].refined);

        if (take_next) {
            plan_cand_t *c = &s->c[next];
            double gb = (double)c->replicas * c->micro * c->accum;

            c->refined = gb / (c->lockstep_s + PLAN_SLACK * reduction_s(s, c));
            heap_push(s->c, heap, &nheap, next++);
            continue;
        }
        if (nheap == 0)
            break;
        plan_cand_t *c = &s->c[heap_pop(s->c, heap, &nheap)];
        if (kept >= top && c->refined < best[top - 1])
            break;
        if (plan_simulate(s->w, c) != 0) {
            free(heap);
            return -1;
        }
        if (getenv("GCL_PLAN_DEBUG"))
            fprintf(stderr, "plan: %d x %d %ld x %ld %s %s: refined %.3f simulated %.3f\n",
                    c->replicas, c->stages, c->micro, c->accum, c->placement, plan_state(c),
                    c->refined, c->sps);
        n++;
        keep_best(best, top, &kept, c->sps);
    }
    s->pruned = (long)(next - (size_t)n);
    free(heap);
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
        if (!strcmp(par.key, "host_sync_ns"))
            s->host_sync_s = par.value * 1e-9;
        else if (!strcmp(par.key, "streaming_gbs"))
            s->streaming_bps = par.value * 1e9;
        else if (!strcmp(par.key, "gateway_domain_gbs"))
            s->domain_bps = par.value * 1e9;
        else if (!strcmp(par.key, "sync_latency_ns"))
            s->sync_s = par.value * 1e-9;
        else if (!strcmp(par.key, "gw_sync_latency_ns"))
            s->gw_sync_s = par.value * 1e-9;
        else if (!strcmp(par.key, "reduction_buffer_bytes"))
            s->reduce_buffer = par.value;
    /* One sample's stream copy from Streaming Memory (gcl_sim_feed). */
    s->stream_s = s->streaming_bps > 0 ? w->minfo.input_bytes / s->streaming_bps : 0;
    s->ilds = gcl_sim_topology_ilds(s->inst);
    s->capacity = plan_capacity(w, s->inst);
    s->reserve = w->o.reserve_mb >= 0 ? w->o.reserve_mb * 1e6 : PLAN_RESERVE_BYTES;
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
