/*
 * sim-step's per-IPU program: the pipelined forward and backward passes, the gradient
 * all-reduce, and the measurement of the simulated clocks (see simstep.h for the model).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/sim.h"
#include "simstep.h"

enum { TAG_FWD = 1, TAG_BWD = 2, TAG_REPORT = 3 };

/* The clock and its parts, as exact picoseconds. */
enum { C_TOTAL, C_COMPUTE, C_EXCHANGE, C_SYNC, C_IDLE, C_ALLREDUCE, C_N };

typedef struct {
    gcl_ctx_t ctx;
    gcl_comm_t comm; /* the stage-s IPUs of every replica */
    int stage, stages;
    void *weights, *grads, *act_in, *act_out; /* phantom: sizes only */
    uint64_t at_start[C_N], sum[C_N];         /* clocks at the first timed step; advances */
    const char *algo;                         /* of the gradient all-reduce */
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
}

/* The stage's weights, gradient accumulator and boundary buffers, in simulated SRAM. */
static gcl_status_t allocate(ipu_t *p, const simstep_t *w)
{
    size_t ces = gcl_dtype_size(w->o.comp_type), ges = gcl_dtype_size(w->o.grad_type);
    GCL_CHECK(gcl_ipu_malloc(p->ctx, w->grad_count * ces, "weights", &p->weights));
    GCL_CHECK(gcl_ipu_malloc(p->ctx, w->grad_count * ges, "gradients", &p->grads));
    if (w->act_count == 0)
        return GCL_OK;
    GCL_CHECK(gcl_ipu_malloc(p->ctx, w->act_count * ces, "activations in", &p->act_in));
    return gcl_ipu_malloc(p->ctx, w->act_count * ces, "activations out", &p->act_out);
}

static gcl_status_t forward(ipu_t *p, const simstep_t *w)
{
    int s = p->stage;
    gcl_dtype_t t = w->o.comp_type;
    for (long m = 0; m < w->accum; m++) {
        if (s > 0)
            GCL_CHECK(gcl_recv(p->ctx, s - 1, p->act_in, w->act_count, t, TAG_FWD));
        GCL_CHECK(gcl_charge_compute(p->ctx, "forward", w->fwd_flops, w->fwd_bytes, t));
        if (s < p->stages - 1)
            GCL_CHECK(gcl_send(p->ctx, s + 1, p->act_out, w->act_count, t, TAG_FWD));
    }
    return GCL_OK;
}

static gcl_status_t backward(ipu_t *p, const simstep_t *w)
{
    int s = p->stage;
    gcl_dtype_t t = w->o.comp_type;
    double k = SIMSTEP_BACKWARD_FACTOR;
    for (long m = 0; m < w->accum; m++) {
        if (s < p->stages - 1)
            GCL_CHECK(gcl_recv(p->ctx, s + 1, p->act_in, w->act_count, t, TAG_BWD));
        GCL_CHECK(gcl_charge_compute(p->ctx, "backward", k * w->fwd_flops, k * w->fwd_bytes, t));
        if (s > 0)
            GCL_CHECK(gcl_send(p->ctx, s - 1, p->act_out, w->act_count, t, TAG_BWD));
    }
    return GCL_OK;
}

static gcl_status_t step(ipu_t *p, const simstep_t *w, int timed)
{
    GCL_CHECK(forward(p, w));
    GCL_CHECK(backward(p, w));
    double t0 = gcl_sim_time(p->ctx);
    GCL_CHECK(gcl_all_reduce(p->comm, p->grads, p->grads, w->grad_count, w->o.grad_type, GCL_SUM));
    p->algo = gcl_comm_algorithm(p->comm, "all_reduce");
    if (timed)
        p->sum[C_ALLREDUCE] += ps(gcl_sim_time(p->ctx)) - ps(t0);
    return GCL_OK;
}

/* Replica 0, stage 0: the totals of every stage, from the other stages' messages. */
static gcl_status_t combine_stages(ipu_t *p, uint64_t sums[C_N], uint64_t maxes[2])
{
    uint64_t msg[C_N + 2];
    for (int s = 1; s < p->stages; s++) {
        GCL_CHECK(gcl_recv(p->ctx, s, msg, C_N + 2, GCL_U64, TAG_REPORT));
        for (int i = 0; i < C_N; i++)
            sums[i] += msg[i];
        for (int i = 0; i < 2; i++)
            maxes[i] = msg[C_N + i] > maxes[i] ? msg[C_N + i] : maxes[i];
    }
    return GCL_OK;
}

static void store(simstep_t *w, const uint64_t sums[C_N], const uint64_t maxes[2], const char *algo)
{
    double per = 1e6 / 1e12 / (double)w->o.steps; /* ps over all steps -> us per step */
    double ipus = (double)w->info.num_replicas * w->stages;
    simstep_result_t *r = &w->res;
    r->step_us = (double)maxes[0] * per;
    r->compute_us = (double)sums[C_COMPUTE] * per / ipus;
    r->exchange_us = (double)sums[C_EXCHANGE] * per / ipus;
    r->sync_us = (double)sums[C_SYNC] * per / ipus;
    r->idle_us = (double)sums[C_IDLE] * per / ipus;
    r->allreduce_us = (double)sums[C_ALLREDUCE] * per / ipus;
    r->peak_memory = maxes[1];
    snprintf(r->algo, sizeof r->algo, "%s", algo ? algo : "-");
}

/* Sums of the clock advances and the slowest IPU, over every IPU of the job, with small real
 * all-reduces over each stage's group and then messages to stage 0 of replica 0. */
static gcl_status_t gather(ipu_t *p, simstep_t *w)
{
    uint64_t now[C_N], mine[C_N], sums[C_N], maxes[2], mine_max[2];
    clocks(p->ctx, now);
    for (int i = 0; i < C_ALLREDUCE; i++)
        mine[i] = now[i] - p->at_start[i];
    mine[C_ALLREDUCE] = p->sum[C_ALLREDUCE];
    gcl_sim_stats_t st;
    gcl_sim_stats(p->ctx, &st);
    mine_max[0] = mine[C_TOTAL];
    mine_max[1] = st.memory_peak;
    GCL_CHECK(gcl_all_reduce(p->comm, mine, sums, C_N, GCL_U64, GCL_SUM));
    GCL_CHECK(gcl_all_reduce(p->comm, mine_max, maxes, 2, GCL_U64, GCL_MAX));
    if (gcl_ctx_replica(p->ctx) != 0)
        return GCL_OK;
    if (p->stage > 0) {
        uint64_t msg[C_N + 2];
        memcpy(msg, sums, sizeof sums);
        memcpy(msg + C_N, maxes, sizeof maxes);
        return gcl_send(p->ctx, 0, msg, C_N + 2, GCL_U64, TAG_REPORT);
    }
    GCL_CHECK(combine_stages(p, sums, maxes));
    store(w, sums, maxes, p->algo);
    return GCL_OK;
}

static gcl_status_t run(ipu_t *p, simstep_t *w)
{
    GCL_CHECK(gcl_comm_create(p->ctx, gcl_group_all(), &p->comm));
    GCL_CHECK(allocate(p, w));
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

gcl_status_t simstep_program(gcl_ctx_t ctx, void *arg)
{
    simstep_t *w = arg;
    ipu_t p = {.ctx = ctx, .stage = gcl_ctx_ipu(ctx), .stages = w->stages};
    gcl_status_t rc = run(&p, w);
    if (rc != GCL_OK)
        fail(&p, w, rc);
    gcl_ipu_free(ctx, p.act_out);
    gcl_ipu_free(ctx, p.act_in);
    gcl_ipu_free(ctx, p.grads);
    gcl_ipu_free(ctx, p.weights);
    gcl_comm_destroy(p.comm);
    return rc;
}
