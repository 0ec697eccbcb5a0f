/*
 * sim-step's per-IPU program: the stage's passes in pipeline order, the gradient reduction and
 * the weight update, and the measurement of the simulated clocks (see simstep.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simstep.h"

enum { TAG_FWD = 1, TAG_BWD = 2, TAG_REPORT = 3, TAG_CYCLE = 4 };

/* The clock and its parts, as exact picoseconds; then the pipeline's idle and the reduction. */
enum { C_TOTAL, C_COMPUTE, C_EXCHANGE, C_SYNC, C_IDLE, C_HOST, C_BUBBLE, C_REDUCE, C_N };
/* What each stage reports: the sums over its IPUs, then the slowest step and the largest peak. */
enum { R_MAX_TOTAL = C_N, R_PEAK, R_N };

enum { M_WEIGHTS, M_GRADS, M_STATE, M_STASH, M_ACT, M_CODE, M_N };

typedef struct {
    gcl_ctx_t ctx;
    gcl_comm_t comm; /* the stage-s IPUs of every replica */
    int stage, stages, replicas;
    const gcl_sim_stage_t *st;
    void *mem[M_N];             /* phantom: sizes only */
    size_t in_count, out_count; /* f16 values per micro-batch from s-1 and to s+1 */
    size_t grad_count, shard;   /* gradient values, and this replica's shard */
    char *pass;
    int *micro;
    gcl_request_t *req;
    int nreq, sharded, recompute;
    int fragments; /* the plan's forward pipeline stages */
    uint64_t at_start[C_N], sum[C_N];
    const char *algo;
} ipu_t;

static uint64_t ps(double seconds)
{
    return (uint64_t)llround(seconds * 1e12);
}

static void clocks(gcl_ctx_t ctx, uint64_t c[C_N])
{
    gcl_sim_stats_t s;

    gcl_sim_stats(ctx, &s);
    c[C_TOTAL] = ps(s.total_s);
    c[C_COMPUTE] = ps(s.compute_s);
    c[C_EXCHANGE] = ps(s.exchange_s);
    c[C_SYNC] = ps(s.sync_s);
    c[C_IDLE] = ps(s.idle_s);
    c[C_HOST] = ps(s.host_wait_s);
}

/* The stage's memory, as the plan has it, in simulated SRAM (phantom: nothing is touched). */
static gcl_status_t allocate(ipu_t *p, const simstep_t *w)
{
    static const char *const labels[M_N] = {"weights",         "gradient accumulators",
                                            "optimizer state", "stashed activations",
                                            "activations",     "code and exchange"};
    const gcl_sim_stage_t *st = p->st;
    size_t gb = gcl_dtype_size(w->o.grad_type);
    size_t padded = p->shard * (size_t)p->replicas; /* a whole number of shards */
    double bytes[M_N] = {st->mem_weights, st->mem_gradients,   st->mem_optimizer,
                         st->mem_stash,   st->mem_activations, st->mem_code};
    size_t need = (p->in_count > p->out_count ? p->in_count : p->out_count) * 2;

    if (p->sharded) {
        bytes[M_WEIGHTS] += (double)(padded - p->grad_count) * 2;
        bytes[M_GRADS] += (double)(padded - p->grad_count) * gb;
    }
    if (bytes[M_ACT] < (double)need)
        bytes[M_ACT] = (double)need;
    for (int i = 0; i < M_N; i++)
        if (bytes[i] > 0)
            GCL_CHECK(gcl_ipu_malloc(p->ctx, (size_t)bytes[i], labels[i], &p->mem[i]));
    return GCL_OK;
}

/* Streams COUNT f16 values to stage PEER: the transfer is charged here, and a zero-count
 * message carries this IPU's clock (so the receiver waits one route latency more). Charging
 * the bytes on the sender keeps the times deterministic whatever order the threads run in.
 * The message is progressed once at once, so that it leaves with this clock rather than the
 * clock of whichever later call would first progress it. */
static gcl_status_t send_to(ipu_t *p, int peer, size_t count, int tag)
{
    gcl_request_t req;
    int done;

    GCL_CHECK(gcl_charge_transfer(p->ctx, peer, count * 2));
    GCL_CHECK(gcl_send_start(p->ctx, peer, NULL, 0, GCL_F16, tag, &req));
    GCL_CHECK(gcl_test(req, &done));
    if (!done)
        p->req[p->nreq++] = req;
    return GCL_OK;
}

/* A forward of the free-running schedules (gpipe, 1f1b): each micro-batch's host sync is
 * charged on every IPU, as PopART's cycles charge it. */
static gcl_status_t forward(ipu_t *p, const simstep_t *w)
{
    int s = p->stage;

    GCL_CHECK(gcl_sim_host_exchange(p->ctx));
    if (s == 0)
        GCL_CHECK(gcl_sim_feed(p->ctx, &w->feed, w->micro));
    else
        GCL_CHECK(gcl_recv(p->ctx, s - 1, NULL, 0, GCL_F16, TAG_FWD));
    GCL_CHECK(gcl_sim_charge_stage(p->ctx, w->plan, s, GCL_PASS_FORWARD));
    return s < p->stages - 1 ? send_to(p, s + 1, p->out_count, TAG_FWD) : GCL_OK;
}

static gcl_status_t backward(ipu_t *p, const simstep_t *w)
{
    int s = p->stage;

    if (s < p->stages - 1)
        GCL_CHECK(gcl_recv(p->ctx, s + 1, NULL, 0, GCL_F16, TAG_BWD));
    if (p->recompute)
        GCL_CHECK(gcl_sim_charge_stage(p->ctx, w->plan, s, GCL_PASS_RECOMPUTE));
    GCL_CHECK(gcl_sim_charge_stage(p->ctx, w->plan, s, GCL_PASS_BACKWARD));
    return s > 0 ? send_to(p, s - 1, p->in_count, TAG_BWD) : GCL_OK;
}

/* The domains the stage-S IPUs of the replicas span, and how many of them each holds. */
static void group_domains(const ipu_t *p, const simstep_t *w, int *domains, int *per_domain)
{
    int job = p->replicas * p->stages, size = w->ild_size > 0 ? w->ild_size : job;

    *domains = job > size ? (job + size - 1) / size : 1;
    *per_domain = (p->replicas + *domains - 1) / *domains;
}

/* What the collective calls charge beyond their one sync and their bytes (sim/README.md, "The
 * gradient reduction"): the framework reduces the stage's gradient in K calls of at most
 * reduction_buffer_bytes (at most one per weight tensor), each a ring over the group's IPUs in
 * the domain and across the domains, 2(n_in - 1) + 2(d - 1) steps with a synchronisation each;
 * and across domains, every gradient's share leaves the domain at gateway_domain_gbs, shared by
 * the reductions of every stage, which run at the same time. */
static gcl_status_t reduction_overheads(ipu_t *p, const simstep_t *w)
{
    double bytes = (double)p->grad_count * (double)gcl_dtype_size(w->o.grad_type), cross = 0;
    long calls = w->reduce_buffer > 0 ? (long)ceil(bytes / w->reduce_buffer) : 1;
    int d, n_in;

    if (calls > p->st->tensors)
        calls = p->st->tensors;
    if (calls < 1)
        calls = 1;
    group_domains(p, w, &d, &n_in);
    GCL_CHECK(gcl_sim_charge_syncs(p->ctx, calls * 2L * (n_in - 1), calls * 2L * (d - 1)));
    if (d <= 1)
        return GCL_OK;
    for (int s = 0; s < p->stages; s++)
        cross += w->stage[s].weights * (double)gcl_dtype_size(w->o.grad_type);
    return gcl_sim_charge_uplink(p->ctx, cross * 2.0 * (d - 1) / d);
}

/* All-reduce the gradients and update every weight, or with sharded state reduce-scatter,
 * update this replica's shard and all-gather the weights. */
static gcl_status_t reduce_and_update(ipu_t *p, const simstep_t *w)
{
    gcl_optim_t opt =
        (gcl_optim_t)(strcmp(w->pinfo.optimizer, "sgd") == 0        ? GCL_OPTIM_SGD
                      : strcmp(w->pinfo.optimizer, "momentum") == 0 ? GCL_OPTIM_MOMENTUM
                      : strcmp(w->pinfo.optimizer, "adam") == 0     ? GCL_OPTIM_ADAM
                      : strcmp(w->pinfo.optimizer, "lars") == 0     ? GCL_OPTIM_LARS
                                                                    : GCL_OPTIM_LAMB);
    gcl_update_t u = {opt,     p->st->params,  p->st->tensors,
                      GCL_F16, w->o.grad_type, strncmp(w->pinfo.optimizer_state, "streaming", 9) == 0};
    gcl_dtype_t g = w->o.grad_type;
    int rank = gcl_comm_rank(p->comm);

    if (p->grad_count == 0 || p->st->params == 0)
        return GCL_OK;
    if (p->replicas > 1)
        GCL_CHECK(reduction_overheads(p, w));
    if (p->sharded) {
        char *grads = p->mem[M_GRADS], *weights = p->mem[M_WEIGHTS];

        GCL_CHECK(gcl_reduce_scatter(p->comm, grads,
                                     grads + (size_t)rank * p->shard * gcl_dtype_size(g), p->shard,
                                     g, GCL_SUM));
        p->algo = gcl_comm_algorithm(p->comm, "reduce_scatter");
        u.params = ceil(p->st->params / p->replicas);
        GCL_CHECK(gcl_charge_update(p->ctx, &u));
        return gcl_all_gather(p->comm, weights + (size_t)rank * p->shard * 2, weights, p->shard,
                              GCL_F16);
    }
    if (p->replicas > 1) {
        GCL_CHECK(
            gcl_all_reduce(p->comm, p->mem[M_GRADS], p->mem[M_GRADS], p->grad_count, g, GCL_SUM));
        p->algo = gcl_comm_algorithm(p->comm, "all_reduce");
    }
    return gcl_charge_update(p->ctx, &u);
}

/* The end of a PopART cycle: every IPU of the replica meets (zero-count messages through
 * stage 0 carry the clocks: the cycle lasts as long as its busiest IPU), then, in a pipeline,
 * the cycle's sync with the host (its micro-batch in, its anchors out). A single stage takes its
 * micro-batches from Streaming Memory (gcl_sim_feed) and syncs with the host once a step. */
static gcl_status_t cycle_end(ipu_t *p)
{
    if (p->stages > 1 && p->stage > 0) {
        GCL_CHECK(gcl_send(p->ctx, 0, NULL, 0, GCL_F16, TAG_CYCLE));
        GCL_CHECK(gcl_recv(p->ctx, 0, NULL, 0, GCL_F16, TAG_CYCLE));
    } else if (p->stages > 1) {
        for (int s = 1; s < p->stages; s++)
            GCL_CHECK(gcl_recv(p->ctx, s, NULL, 0, GCL_F16, TAG_CYCLE));
        for (int s = 1; s < p->stages; s++)
            GCL_CHECK(gcl_send(p->ctx, s, NULL, 0, GCL_F16, TAG_CYCLE));
    }
    return p->fragments > 1 ? gcl_sim_host_exchange(p->ctx) : GCL_OK;
}

/* Streams VALUES f16 values of a cycle's copy to the IPU of fragment F (nothing when it is this
 * IPU's own). */
static gcl_status_t copy_to(ipu_t *p, const simstep_t *w, int f, double values)
{
    int to = w->frag[f].stage;

    return to == p->stage || values <= 0 ? GCL_OK
                                         : gcl_charge_transfer(p->ctx, to, (size_t)values * 2);
}

/* Fragment F's work in cycle C on this IPU: its forward of micro-batch C - F, and its backward
 * (pipeline stage 2P - 2 - F) of micro-batch C - (2P - 2 - F); the last fragment does both in
 * one stage, and recomputes only when it is the only one (sim/schedule/pipeline.h). */
static gcl_status_t fragment_cycle(ipu_t *p, const simstep_t *w, int f, long c)
{
    int nf = w->pinfo.fragments, last = f == nf - 1;
    long fm = c - f, bm = last ? fm : c - (2L * nf - 2 - f);

    if (fm >= 0 && fm < w->accum) {
        if (f == 0)
            GCL_CHECK(gcl_sim_feed(p->ctx, &w->feed, w->micro));
        GCL_CHECK(gcl_sim_charge_fragment(p->ctx, w->plan, f, GCL_PASS_FORWARD));
        if (!last)
            GCL_CHECK(copy_to(p, w, f + 1, w->frag[f].out_values));
    }
    if (bm >= 0 && bm < w->accum) {
        if (p->recompute && (!last || nf == 1))
            GCL_CHECK(gcl_sim_charge_fragment(p->ctx, w->plan, f, GCL_PASS_RECOMPUTE));
        GCL_CHECK(gcl_sim_charge_fragment(p->ctx, w->plan, f, GCL_PASS_BACKWARD));
        if (f > 0)
            GCL_CHECK(copy_to(p, w, f - 1, w->frag[f - 1].out_values));
    }
    return GCL_OK;
}

/* One step of PopART's pipeline on this IPU: A + 2P - 2 lock-step cycles. */
static gcl_status_t popart_passes(ipu_t *p, const simstep_t *w)
{
    for (long c = 0; c < w->pinfo.cycles; c++) {
        for (int f = 0; f < w->pinfo.fragments; f++)
            if (w->frag[f].stage == p->stage)
                GCL_CHECK(fragment_cycle(p, w, f, c));
        GCL_CHECK(cycle_end(p));
    }
    return GCL_OK;
}

static gcl_status_t step(ipu_t *p, const simstep_t *w, int timed)
{
    gcl_sim_stats_t s0, s1;
    double t0;

    gcl_sim_stats(p->ctx, &s0);
    p->nreq = 0;
    if (w->pinfo.cycles > 0)
        GCL_CHECK(popart_passes(p, w));
    for (long i = 0; w->pinfo.cycles == 0 && i < 2 * w->accum; i++)
        GCL_CHECK(p->pass[i] == 'F' ? forward(p, w) : backward(p, w));
    for (int i = 0; i < p->nreq; i++)
        GCL_CHECK(gcl_wait(p->req[i]));
    if (w->pinfo.cycles > 0 && p->fragments == 1)
        GCL_CHECK(gcl_sim_host_exchange(p->ctx));
    gcl_sim_stats(p->ctx, &s1);
    t0 = gcl_sim_time(p->ctx);
    GCL_CHECK(reduce_and_update(p, w));
    if (timed) {
        p->sum[C_BUBBLE] += ps(s1.idle_s) - ps(s0.idle_s);
        p->sum[C_REDUCE] += ps(gcl_sim_time(p->ctx)) - ps(t0);
    }
    return GCL_OK;
}

/* Stage 0 of replica 0: every stage's sums, from the other stages' messages. */
static void store(simstep_t *w, int s, const uint64_t r[R_N])
{
    double per = 1e6 / 1e12 / (double)w->o.steps; /* ps over all steps -> us per step */
    double ipus = (double)w->info.num_replicas;
    simstep_stage_result_t *x = &w->res.stage[s];

    *x = (simstep_stage_result_t){(double)r[C_COMPUTE] * per / ipus,
                                  (double)r[C_EXCHANGE] * per / ipus,
                                  (double)r[C_SYNC] * per / ipus,
                                  (double)r[C_IDLE] * per / ipus,
                                  (double)r[C_HOST] * per / ipus,
                                  (double)r[C_BUBBLE] * per / ipus,
                                  (double)r[C_REDUCE] * per / ipus,
                                  (double)r[R_MAX_TOTAL] * per,
                                  r[R_PEAK]};
}

static void totals(simstep_t *w, const char *algo)
{
    simstep_result_t *r = &w->res;

    r->step_us = r->compute_us = r->exchange_us = r->sync_us = r->idle_us = r->host_us = 0;
    r->pipeline_idle_us = r->reduce_us = 0;
    r->bubble_us = r->stage[0].bubble_us;
    r->peak_memory = 0;
    for (int s = 0; s < w->stages; s++) {
        const simstep_stage_result_t *x = &r->stage[s];

        r->step_us = x->step_us > r->step_us ? x->step_us : r->step_us;
        r->compute_us += x->compute_us / w->stages;
        r->exchange_us += x->exchange_us / w->stages;
        r->sync_us += x->sync_us / w->stages;
        r->idle_us += x->idle_us / w->stages;
        r->host_us += x->host_us / w->stages;
        r->pipeline_idle_us += x->bubble_us / w->stages;
        r->bubble_us = x->bubble_us < r->bubble_us ? x->bubble_us : r->bubble_us;
        r->reduce_us += x->reduce_us / w->stages;
        r->peak_memory = x->peak_memory > r->peak_memory ? x->peak_memory : r->peak_memory;
    }
    snprintf(r->algo, sizeof r->algo, "%s", algo ? algo : "-");
}

/* Each stage's sums over its replicas (small real reductions of u64 picoseconds), sent to
 * stage 0 of replica 0. */
static gcl_status_t gather(ipu_t *p, simstep_t *w)
{
    uint64_t now[C_N], mine[R_N], sums[R_N], maxes[2];
    gcl_sim_stats_t st;

    clocks(p->ctx, now);
    for (int i = 0; i < C_BUBBLE; i++)
        mine[i] = now[i] - p->at_start[i];
    mine[C_BUBBLE] = p->sum[C_BUBBLE];
    mine[C_REDUCE] = p->sum[C_REDUCE];
    gcl_sim_stats(p->ctx, &st);
    mine[R_MAX_TOTAL] = mine[C_TOTAL];
    mine[R_PEAK] = st.memory_peak;
    GCL_CHECK(gcl_all_reduce(p->comm, mine, sums, C_N, GCL_U64, GCL_SUM));
    GCL_CHECK(gcl_all_reduce(p->comm, mine + R_MAX_TOTAL, maxes, 2, GCL_U64, GCL_MAX));
    sums[R_MAX_TOTAL] = maxes[0];
    sums[R_PEAK] = maxes[1];
    if (gcl_ctx_replica(p->ctx) != 0)
        return GCL_OK;
    if (p->stage > 0)
        return gcl_send(p->ctx, 0, sums, R_N, GCL_U64, TAG_REPORT);
    store(w, 0, sums);
    for (int s = 1; s < p->stages; s++) {
        GCL_CHECK(gcl_recv(p->ctx, s, sums, R_N, GCL_U64, TAG_REPORT));
        store(w, s, sums);
    }
    totals(w, p->algo);
    return GCL_OK;
}

static gcl_status_t run(ipu_t *p, simstep_t *w)
{
    GCL_CHECK(gcl_comm_create(p->ctx, gcl_group_all(), &p->comm));
    GCL_CHECK(allocate(p, w));
    GCL_CHECK(gcl_sim_plan_order(w->plan, p->stage, p->pass, p->micro));
    for (long i = 0; i < w->o.warmup + w->o.steps; i++) {
        if (i == w->o.warmup)
            clocks(p->ctx, p->at_start);
        GCL_CHECK(step(p, w, i >= w->o.warmup));
    }
    return gather(p, w);
}

static void fail(ipu_t *p, simstep_t *w, gcl_status_t rc)
{
    if (rc == GCL_ERR_ABORTED || rc == GCL_ERR_PEER_FAILED || atomic_exchange(&w->failed, 1))
        return;
    const char *why = p->comm ? gcl_last_error(p->comm) : "";
    if (!why[0])
        why = gcl_ctx_last_error(p->ctx);
    if (!why[0])
        why = gcl_status_string(rc);
    snprintf(w->error, sizeof w->error, "replica %d stage %d: %s", gcl_ctx_replica(p->ctx),
             p->stage, why);
}

static void setup(ipu_t *p, gcl_ctx_t ctx, const simstep_t *w)
{
    int s = gcl_ctx_ipu(ctx);

    *p = (ipu_t){.ctx = ctx, .stage = s, .stages = w->stages, .replicas = w->info.num_replicas};
    p->st = &w->stage[s];
    p->in_count = s > 0 ? (size_t)w->stage[s - 1].out_values : 0;
    p->out_count = (size_t)p->st->out_values;
    p->grad_count = (size_t)p->st->weights;
    p->sharded = (strcmp(w->pinfo.optimizer_state, "sharded") == 0 ||
                  strcmp(w->pinfo.optimizer_state, "streaming-sharded") == 0) &&
                 p->replicas > 1;
    p->shard = (p->grad_count + (size_t)p->replicas - 1) / (size_t)p->replicas;
    p->recompute = strcmp(w->pinfo.recompute, "none") != 0;
    p->fragments = w->pinfo.fragments;
}

gcl_status_t simstep_program(gcl_ctx_t ctx, void *arg)
{
    simstep_t *w = arg;
    ipu_t p;
    gcl_status_t rc = GCL_ERR_NO_HOST_MEMORY;

    setup(&p, ctx, w);
    p.pass = malloc(2 * (size_t)w->accum);
    p.micro = malloc(2 * (size_t)w->accum * sizeof(int));
    p.req = calloc(2 * (size_t)w->accum, sizeof(gcl_request_t));
    if (p.pass && p.micro && p.req)
        rc = run(&p, w);
    if (rc != GCL_OK)
        fail(&p, w, rc);
    for (int i = M_N - 1; i >= 0; i--)
        gcl_ipu_free(ctx, p.mem[i]);
    gcl_comm_destroy(p.comm);
    free(p.req);
    free(p.micro);
    free(p.pass);
    return rc;
}
