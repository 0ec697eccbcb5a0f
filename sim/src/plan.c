/*
 * The job plan (sim/plan.h): the split of layers over stages, each stage's cost per micro-batch,
 * and its memory.
 */
#include "sim/plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text.h"

static int check_params(const sim_model_t *m, const sim_plan_params_t *p, char *err, size_t errlen)
{
    if (p->stages < 1 || (size_t)p->stages > m->num_layers) {
        sim_errf(err, errlen, "%s has %zu layers: it cannot be split into %d stages", m->name,
                 m->num_layers, p->stages);
        return -EINVAL;
    }
    if (p->replicas < 1 || p->accumulation < 1 || p->micro_batch < 1) {
        sim_errf(err, errlen, "replicas, micro-batch and accumulation must be at least 1");
        return -EINVAL;
    }
    if (p->micro_batch % m->samples_per_unit != 0) {
        sim_errf(err, errlen,
                 "--micro-batch %llu: %s packs %u samples per unit; the micro-batch must be a "
                 "multiple of %u",
                 (unsigned long long)p->micro_batch, m->name, m->samples_per_unit,
                 m->samples_per_unit);
        return -EINVAL;
    }
    for (int s = 1; p->splits && s < p->stages; s++) {
        uint32_t prev = s > 1 ? p->splits[s - 2] : 0;

        if (p->splits[s - 1] <= prev || p->splits[s - 1] >= m->num_layers) {
            sim_errf(err, errlen,
                     "pipeline split %d: stage %d must start after layer %u and before the last "
                     "layer (%zu)",
                     s, s, prev, m->num_layers - 1);
            return -EINVAL;
        }
    }
    return 0;
}

/* Each layer's forward and backward per micro-batch, and the balancing cost. */
static int layer_costs(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                       const sim_plan_params_t *p, uint64_t units, sim_cost_t *fwd, sim_cost_t *bwd,
                       sim_time_t *bal)
{
    for (size_t i = 0; i < m->num_layers; i++) {
        int rc = sim_layer_cost(cp, d, &m->layers[i], SIM_PASS_FORWARD, units, &fwd[i]);

        if (rc == 0)
            rc = sim_layer_cost(cp, d, &m->layers[i], SIM_PASS_BACKWARD, units, &bwd[i]);
        if (rc != 0)
            return rc;
        bal[i] = sim_time_add(sim_cost_total(&fwd[i]), sim_cost_total(&bwd[i]));
        if (p->recompute != SIM_RECOMPUTE_NONE)
            bal[i] = sim_time_add(bal[i], sim_cost_total(&fwd[i]));
    }
    return 0;
}

/* Stored values of layer I, not counting a tensor the layer before already keeps. */
static uint64_t stored(const sim_model_t *m, size_t first, size_t i)
{
    const sim_layer_t *l = &m->layers[i], *prev = i > first ? &m->layers[i - 1] : NULL;
    uint64_t v = sim_layer_stored_values(l);

    if (prev && prev->type == SIM_LAYER_ELEMENTWISE && prev->inputs == 1 &&
        l->type != SIM_LAYER_ELEMENTWISE && l->type != SIM_LAYER_ATTENTION &&
        sim_layer_in_values(l) == prev->values)
        v -= sim_layer_in_values(l) < v ? sim_layer_in_values(l) : v;
    return v;
}

/* Per-unit values the stage keeps per micro-batch in flight, and the working set. */
static void activation_values(const sim_model_t *m, const sim_plan_params_t *p, sim_stage_t *st,
                              uint64_t *held, uint64_t *work)
{
    uint64_t all = 0, seg = 0, seg_max = 0, ckpt = 0, live = 0;

    for (uint32_t i = st->first; i < st->last; i++) {
        const sim_layer_t *l = &m->layers[i];
        uint64_t io = sim_layer_in_values(l) + sim_layer_out_values(l), v = stored(m, st->first, i);

        all += v;
        seg += v;
        live = io > live ? io : live;
        if (l->checkpoint || i + 1 == st->last) {
            seg_max = seg > seg_max ? seg : seg_max;
            seg = 0;
            ckpt += l->checkpoint ? sim_layer_out_values(l) : 0;
        }
    }
    uint64_t input = sim_layer_in_values(&m->layers[st->first]);

    *work = live;
    if (p->recompute == SIM_RECOMPUTE_NONE) {
        *held = all;
    } else if (p->recompute == SIM_RECOMPUTE_CHECKPOINTS) {
        *held = input + ckpt;
        *work += seg_max;
    } else {
        *held = input;
        *work += all;
    }
}

static void stage_memory(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                         const sim_plan_params_t *p, uint64_t units, sim_stage_t *st)
{
    sim_stage_mem_t *mem = &st->mem;
    uint64_t held, work, states = sim_optimizer_states(p->optimizer);
    uint32_t gb = sim_prec_bytes(p->grad_prec);

    *mem = (sim_stage_mem_t){0};
    for (uint32_t i = st->first; i < st->last; i++) {
        uint64_t w = sim_layer_weights(&m->layers[i]);

        mem->weights += w * sim_prec_bytes(m->layers[i].prec);
        mem->gradients += w * gb;
    }
    if (p->state == SIM_STATE_ONCHIP)
        mem->optimizer = st->params * states * 4;
    else if (p->state == SIM_STATE_SHARDED)
        mem->optimizer = (st->params * states * 4 + (uint64_t)p->replicas - 1) / p->replicas;
    activation_values(m, p, st, &held, &work);
    /* Activations are in the stage's first layer's precision (f16 unless the model says f32). */
    mem->stash = held * units * st->in_flight * sim_prec_bytes(m->layers[st->first].prec);
    mem->activations = work * units * sim_prec_bytes(m->layers[st->first].prec);
    mem->code = (uint64_t)d->tiles *
                (cp->code_bytes_per_tile + cp->code_bytes_per_layer * (st->last - st->first));
    mem->capacity = sim_device_memory(d);
    mem->total =
        mem->weights + mem->gradients + mem->optimizer + mem->stash + mem->activations + mem->code;
    mem->headroom = (int64_t)mem->capacity - (int64_t)mem->total;
    mem->overflow_layer = -1;
}

/* The layer at which the stage's running memory passes its capacity (see sim/plan.h). */
static void find_overflow(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                          const sim_plan_params_t *p, sim_stage_t *st)
{
    sim_stage_mem_t *mem = &st->mem;
    uint64_t per_w = sim_prec_bytes(p->grad_prec);
    uint64_t per_p = p->state == SIM_STATE_ONCHIP ? 4 * sim_optimizer_states(p->optimizer) : 0;
    uint64_t run = (uint64_t)d->tiles * cp->code_bytes_per_tile + mem->activations;
    uint64_t layers = st->last - st->first;

    if (mem->headroom >= 0)
        return;
    if (p->state == SIM_STATE_SHARDED)
        run += mem->optimizer;
    for (uint32_t i = st->first; i < st->last; i++) {
        const sim_layer_t *l = &m->layers[i];

        run += sim_layer_weights(l) * (sim_prec_bytes(l->prec) + per_w);
        run += sim_layer_params(l) * per_p;
        run += (uint64_t)d->tiles * cp->code_bytes_per_layer + mem->stash / layers;
        if (run > mem->capacity) {
            mem->overflow_layer = i;
            return;
        }
    }
    mem->overflow_layer = st->last - 1;
}

static void fill_stage(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                       const sim_plan_t *plan, const sim_cost_t *fwd, const sim_cost_t *bwd, int s,
                       sim_stage_t *st)
{
    const sim_plan_params_t *p = &plan->p;

    st->weights = st->params = 0;
    st->fwd = st->bwd = st->rec = (sim_cost_t){0};
    for (uint32_t i = st->first; i < st->last; i++) {
        st->weights += sim_layer_weights(&m->layers[i]);
        st->params += sim_layer_params(&m->layers[i]);
        sim_cost_add(&st->fwd, &fwd[i]);
        sim_cost_add(&st->bwd, &bwd[i]);
    }
    if (p->recompute != SIM_RECOMPUTE_NONE)
        st->rec = st->fwd;
    st->tensors = sim_model_tensors(m, st->first, st->last);
    st->out_values =
        s < plan->num_stages - 1 ? sim_layer_out_values(&m->layers[st->last - 1]) * plan->units : 0;
    st->in_flight = sim_pipe_in_flight(p->schedule, s, plan->num_stages, p->accumulation);
    stage_memory(m, cp, d, p, plan->units, st);
    find_overflow(m, cp, d, p, st);
}

static int split(const sim_model_t *m, const sim_plan_params_t *p, const sim_time_t *bal,
                 uint32_t *first)
{
    size_t pin = p->stages >= (int)m->pin_min_stages && m->pin_min_stages ? m->pin_first : 0;

    if (p->splits) {
        first[0] = 0;
        memcpy(first + 1, p->splits, (size_t)(p->stages - 1) * sizeof(*first));
        return 0;
    }
    return sim_pipe_balance(bal, m->num_layers, p->stages, pin, first);
}

int sim_plan_build(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                   const sim_plan_params_t *p, sim_plan_t *out, char *err, size_t errlen)
{
    size_t n = m->num_layers;
    sim_cost_t *fwd = calloc(n ? n : 1, sizeof(*fwd)), *bwd = calloc(n ? n : 1, sizeof(*bwd));
    sim_time_t *bal = calloc(n ? n : 1, sizeof(*bal));
    uint32_t *first = calloc((size_t)(p->stages > 0 ? p->stages : 1) + 1, sizeof(*first));
    int rc = check_params(m, p, err, errlen);

    memset(out, 0, sizeof(*out));
    if (rc == 0 && (!fwd || !bwd || !bal || !first))
        rc = -ENOMEM;
    out->p = *p;
    out->p.splits = NULL;
    out->units = p->micro_batch / m->samples_per_unit;
    out->num_stages = p->stages;
    if (rc == 0)
        rc = layer_costs(m, cp, d, p, out->units, fwd, bwd, bal);
    if (rc == 0 && split(m, p, bal, first) != 0) {
        sim_errf(err, errlen, "%s: cannot balance %zu layers over %d stages", m->name, n,
                 p->stages);
        rc = -EINVAL;
    }
    if (rc == 0 && !(out->stages = calloc((size_t)p->stages, sizeof(*out->stages))))
        rc = -ENOMEM;
    for (int s = 0; rc == 0 && s < p->stages; s++) {
        out->stages[s].first = first[s];
        out->stages[s].last = s + 1 < p->stages ? first[s + 1] : (uint32_t)n;
        fill_stage(m, cp, d, out, fwd, bwd, s, &out->stages[s]);
    }
    out->layer_fwd = fwd;
    out->layer_bwd = bwd;
    if (rc != 0)
        sim_plan_free(out);
    free(first);
    free(bal);
    return rc;
}

void sim_plan_free(sim_plan_t *plan)
{
    if (plan == NULL)
        return;
    free(plan->stages);
    free(plan->layer_fwd);
    free(plan->layer_bwd);
    plan->stages = NULL;
    plan->layer_fwd = plan->layer_bwd = NULL;
    plan->num_stages = 0;
}

int sim_plan_overflow(const sim_plan_t *plan)
{
    for (int s = 0; s < plan->num_stages; s++)
        if (plan->stages[s].mem.headroom < 0)
            return s;
    return -1;
}

int sim_plan_min_stages(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                        const sim_plan_params_t *p, int max_stages)
{
    for (int k = p->stages + 1; k <= max_stages && (size_t)k <= m->num_layers; k++) {
        sim_plan_params_t q = *p;
        sim_plan_t plan;
        int fits;

        q.stages = k;
        q.splits = NULL;
        if (sim_plan_build(m, cp, d, &q, &plan, NULL, 0) != 0)
            return -1;
        fits = sim_plan_overflow(&plan) < 0;
        sim_plan_free(&plan);
        if (fits)
            return k;
    }
    return -1;
}

void sim_plan_overflow_text(const sim_plan_t *plan, const sim_model_t *m, int s, int min_stages,
                            char *buf, size_t len)
{
    const sim_stage_t *st = &plan->stages[s];
    const sim_stage_mem_t *mem = &st->mem;
    char tail[96];

    if (min_stages > 0)
        snprintf(tail, sizeof(tail), "the smallest stage count that fits is %d", min_stages);
    else
        snprintf(tail, sizeof(tail), "no stage count up to %zu fits", m->num_layers);
    snprintf(buf, len,
             "stage %d (layers %s .. %s) needs %llu bytes of %llu: %llu over, from layer %s on "
             "(weights %llu, gradients %llu, optimizer %llu, stash %llu, activations %llu, code "
             "%llu); %s",
             s, m->layers[st->first].name, m->layers[st->last - 1].name,
             (unsigned long long)mem->total, (unsigned long long)mem->capacity,
             (unsigned long long)(mem->total - mem->capacity),
             m->layers[mem->overflow_layer >= 0 ? mem->overflow_layer : st->last - 1].name,
             (unsigned long long)mem->weights, (unsigned long long)mem->gradients,
             (unsigned long long)mem->optimizer, (unsigned long long)mem->stash,
             (unsigned long long)mem->activations, (unsigned long long)mem->code, tail);
}

double sim_time_to_train(double step_s, uint64_t global_batch, uint64_t samples, double overhead_s)
{
    uint64_t steps;

    if (global_batch == 0)
        return 0;
    steps = samples / global_batch + (samples % global_batch != 0);
    return (double)steps * step_s + overhead_s;
}
