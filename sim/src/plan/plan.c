/*
 * The job plan (sim/plan/plan.h): the split of layers over stages and fragments, each one's cost per
 * micro-batch, and each stage's memory. The placement of sublayers is sim/schedule/placement.h's.
 */
#include "sim/plan/plan.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

static int check_params(const sim_model_t *m, const sim_plan_params_t *p, char *err, size_t errlen)
{
    double units = (double)p->micro_batch / m->samples_per_unit;

    if (p->stages < 1 || (size_t)p->stages > m->num_layers || p->stages > SIM_PLAN_MAX_STAGES) {
        sim_errf(err, errlen, "%s has %zu layers: it cannot be split into %d stages", m->name,
                 m->num_layers, p->stages);
        return -EINVAL;
    }
    if (p->replicas < 1 || p->accumulation < 1 || p->micro_batch < 1) {
        sim_errf(err, errlen, "replicas, micro-batch and accumulation must be at least 1");
        return -EINVAL;
    }
    if (fabs(units - round(units)) > 1e-9 || round(units) < 1) {
        sim_errf(err, errlen,
                 "--micro-batch %llu: %s packs %g samples per unit; the micro-batch must be a "
                 "whole number of units",
                 (unsigned long long)p->micro_batch, m->name, m->samples_per_unit);
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
    if (p->placement && p->splits) {
        sim_errf(err, errlen, "a placement and --pipeline-splits cannot both be given");
        return -EINVAL;
    }
    if (p->placement && p->schedule != SIM_SCHED_POPART) {
        sim_errf(err, errlen, "a placement runs PopART's pipeline (--schedule popart), not %s",
                 sim_schedule_name(p->schedule));
        return -EINVAL;
    }
    return p->placement ? sim_placement_check(m, p->placement, p->stages, err, errlen) : 0;
}

/* Whether layers A and B have the same shape (everything but the name): the same costs. */
static int same_shape(const sim_layer_t *a, const sim_layer_t *b)
{
    sim_layer_t x = *a, y = *b;

    memset(x.name, 0, sizeof x.name);
    memset(y.name, 0, sizeof y.name);
    x.checkpoint = y.checkpoint = 0; /* what is kept does not change a pass's cost */
    x.part = y.part = 0;
    return memcmp(&x, &y, sizeof x) == 0;
}

int sim_plan_layer_costs(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                         uint64_t units, sim_cost_t *fwd, sim_cost_t *bwd)
{
    for (size_t i = 0; i < m->num_layers; i++) {
        size_t j = i < 64 ? 0 : i - 64; /* a repeated block (an encoder layer) is costed once */

        while (j < i && !same_shape(&m->layers[j], &m->layers[i]))
            j++;
        if (j < i) {
            fwd[i] = fwd[j];
            bwd[i] = bwd[j];
            continue;
        }
        int rc = sim_layer_cost(cp, d, &m->layers[i], SIM_PASS_FORWARD, units, &fwd[i]);

        if (rc == 0)
            rc = sim_layer_cost(cp, d, &m->layers[i], SIM_PASS_BACKWARD, units, &bwd[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

/* Each layer's balancing cost: its passes per micro-batch, the forward twice when recomputed. */
static void balance_costs(const sim_model_t *m, const sim_plan_params_t *p, const sim_cost_t *fwd,
                          const sim_cost_t *bwd, sim_time_t *bal)
{
    for (size_t i = 0; i < m->num_layers; i++) {
        bal[i] = sim_time_add(sim_cost_total(&fwd[i]), sim_cost_total(&bwd[i]));
        if (p->recompute != SIM_RECOMPUTE_NONE)
            bal[i] = sim_time_add(bal[i], sim_cost_total(&fwd[i]));
    }
}

/* Stored values of layer L[K] of a fragment, not counting a tensor the layer before it in the
 * model (when that layer is the fragment's previous one) already keeps. */
static uint64_t stored(const sim_model_t *m, const uint32_t *L, uint32_t k)
{
    uint32_t i = L[k];
    const sim_layer_t *l = &m->layers[i];
    const sim_layer_t *prev = k > 0 && L[k - 1] + 1 == i ? &m->layers[i - 1] : NULL;
    uint64_t v = sim_layer_stored_values(l);

    if (prev && prev->type == SIM_LAYER_ELEMENTWISE && prev->inputs == 1 &&
        l->type != SIM_LAYER_ELEMENTWISE && l->type != SIM_LAYER_ATTENTION &&
        sim_layer_in_values(l) == prev->values)
        v -= sim_layer_in_values(l) < v ? sim_layer_in_values(l) : v;
    return v;
}

/* Per-unit values fragment F keeps per micro-batch in flight, and its working set. */
static void activation_values(const sim_model_t *m, const sim_plan_t *plan, const sim_fragment_t *f,
                              uint64_t *held, uint64_t *work)
{
    const uint32_t *L = plan->order + f->at;
    uint64_t all = 0, seg = 0, seg_max = 0, ckpt = 0, live = 0;

    for (uint32_t k = 0; k < f->count; k++) {
        const sim_layer_t *l = &m->layers[L[k]];
        uint64_t io = sim_layer_in_values(l) + sim_layer_out_values(l), v = stored(m, L, k);

        all += v;
        seg += v;
        live = io > live ? io : live;
        if (l->checkpoint || k + 1 == f->count) {
            seg_max = seg > seg_max ? seg : seg_max;
            seg = 0;
            ckpt += l->checkpoint ? sim_layer_out_values(l) : 0;
        }
    }
    uint64_t input = sim_layer_in_values(&m->layers[L[0]]);

    *work = live;
    if (plan->p.recompute == SIM_RECOMPUTE_NONE) {
        *held = all;
    } else if (plan->p.recompute == SIM_RECOMPUTE_CHECKPOINTS) {
        *held = input + ckpt;
        *work += seg_max;
    } else {
        *held = input;
        *work += all;
    }
}

/* Whether stage S holds an embedding whose table is tied layer L's weights (BERT's decoder and
 * word embedding on one IPU): they are then held, accumulated and reduced once. */
static int shares_table(const sim_model_t *m, const sim_plan_t *plan, int s, const sim_layer_t *l)
{
    if (!l->tied)
        return 0;
    for (int f = 0; f < plan->num_fragments; f++) {
        const sim_fragment_t *fr = &plan->fragments[f];

        for (uint32_t k = 0; fr->stage == s && k < fr->count; k++) {
            const sim_layer_t *e = &m->layers[plan->order[fr->at + k]];

            if (e->type == SIM_LAYER_EMBEDDING && e->in * e->out == l->in * l->out)
                return 1;
        }
    }
    return 0;
}

/* The weights stage S holds for layer L. */
static uint64_t held_weights(const sim_model_t *m, const sim_plan_t *plan, int s,
                             const sim_layer_t *l)
{
    return shares_table(m, plan, s, l) ? sim_layer_params(l) : sim_layer_weights(l);
}

static uint64_t state_bytes(const sim_plan_params_t *p, uint64_t params)
{
    uint64_t states = sim_optimizer_states(p->optimizer);

    if (p->state == SIM_STATE_ONCHIP)
        return params * states * 4;
    if (p->state == SIM_STATE_SHARDED)
        return (params * states * 4 + (uint64_t)p->replicas - 1) / p->replicas;
    return 0; /* in Streaming Memory */
}

static void stage_memory(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                         const sim_plan_t *plan, int s, sim_stage_t *st)
{
    const sim_plan_params_t *p = &plan->p;
    sim_stage_mem_t *mem = &st->mem;
    uint32_t gb = sim_prec_bytes(p->grad_prec);

    *mem = (sim_stage_mem_t){0};
    for (int f = 0; f < plan->num_fragments; f++) {
        const sim_fragment_t *fr = &plan->fragments[f];
        uint64_t held, work, bytes;

        if (fr->stage != s)
            continue;
        for (uint32_t k = 0; k < fr->count; k++) {
            const sim_layer_t *l = &m->layers[plan->order[fr->at + k]];
            uint64_t w = held_weights(m, plan, s, l);

            mem->weights += w * sim_prec_bytes(l->prec);
            mem->gradients += w * gb;
        }
        activation_values(m, plan, fr, &held, &work);
        /* Activations are in the fragment's first layer's precision (f16 unless the model
         * says f32). */
        bytes = sim_prec_bytes(m->layers[plan->order[fr->at]].prec);
        mem->stash += held * plan->units * fr->in_flight * bytes;
        work *= plan->units * bytes;
        mem->activations = work > mem->activations ? work : mem->activations;
    }
    mem->optimizer = state_bytes(p, st->params);
    mem->code = (uint64_t)d->tiles * (cp->code_bytes_per_tile + cp->code_bytes_per_layer * st->layers);
    mem->capacity = sim_device_memory(d);
    mem->total =
        mem->weights + mem->gradients + mem->optimizer + mem->stash + mem->activations + mem->code;
    mem->headroom = (int64_t)mem->capacity - (int64_t)mem->total;
    mem->overflow_layer = -1;
}

/* The layer at which the stage's running memory passes its capacity (see sim/plan/plan.h). */
static void find_overflow(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                          const sim_plan_t *plan, int s, sim_stage_t *st)
{
    const sim_plan_params_t *p = &plan->p;
    sim_stage_mem_t *mem = &st->mem;
    uint64_t per_w = sim_prec_bytes(p->grad_prec);
    uint64_t per_p = p->state == SIM_STATE_ONCHIP ? 4 * sim_optimizer_states(p->optimizer) : 0;
    uint64_t run = (uint64_t)d->tiles * cp->code_bytes_per_tile + mem->activations;
    int64_t last = -1;

    if (mem->headroom >= 0)
        return;
    if (p->state == SIM_STATE_SHARDED)
        run += mem->optimizer;
    for (int f = 0; f < plan->num_fragments; f++) {
        const sim_fragment_t *fr = &plan->fragments[f];

        for (uint32_t k = 0; fr->stage == s && k < fr->count; k++) {
            const sim_layer_t *l = &m->layers[plan->order[fr->at + k]];

            last = plan->order[fr->at + k];
            run += held_weights(m, plan, s, l) * (sim_prec_bytes(l->prec) + per_w);
            run += sim_layer_params(l) * per_p;
            run += (uint64_t)d->tiles * cp->code_bytes_per_layer + mem->stash / st->layers;
            if (run > mem->capacity) {
                mem->overflow_layer = last;
                return;
            }
        }
    }
    mem->overflow_layer = last;
}

/* Fragment F's costs and what it sends on (its layers are in place). */
static void fill_fragment(const sim_model_t *m, const sim_plan_t *plan, int f)
{
    sim_fragment_t *fr = &plan->fragments[f];
    const sim_plan_params_t *p = &plan->p;
    int last = f == plan->num_fragments - 1;

    fr->fwd = fr->bwd = fr->rec = (sim_cost_t){0};
    for (uint32_t k = 0; k < fr->count; k++) {
        sim_cost_add(&fr->fwd, &plan->layer_fwd[plan->order[fr->at + k]]);
        sim_cost_add(&fr->bwd, &plan->layer_bwd[plan->order[fr->at + k]]);
    }
    if (p->recompute != SIM_RECOMPUTE_NONE)
        fr->rec = fr->fwd;
    fr->out_values =
        last ? 0 : sim_layer_out_values(&m->layers[plan->order[fr->at + fr->count - 1]]) * plan->units;
    if (p->schedule == SIM_SCHED_POPART)
        fr->in_flight = sim_pipe_in_flight(p->schedule, f, plan->num_fragments, p->accumulation);
    else
        fr->in_flight = sim_pipe_in_flight(p->schedule, fr->stage, plan->num_stages, p->accumulation);
}

/* Stage S's totals over its fragments, and its memory. */
static void fill_stage(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                       const sim_plan_t *plan, int s)
{
    sim_stage_t *st = &plan->stages[s];

    *st = (sim_stage_t){.first = UINT32_MAX};
    for (int f = 0; f < plan->num_fragments; f++) {
        const sim_fragment_t *fr = &plan->fragments[f];

        if (fr->stage != s)
            continue;
        for (uint32_t k = 0; k < fr->count; k++) {
            uint32_t i = plan->order[fr->at + k];

            st->weights += held_weights(m, plan, s, &m->layers[i]);
            st->params += sim_layer_params(&m->layers[i]);
            st->tensors += sim_layer_tensors(&m->layers[i]);
            st->first = i < st->first ? i : st->first;
            st->last = i + 1 > st->last ? i + 1 : st->last;
            st->layers++;
        }
        sim_cost_add(&st->fwd, &fr->fwd);
        sim_cost_add(&st->bwd, &fr->bwd);
        sim_cost_add(&st->rec, &fr->rec);
        st->out_values = fr->out_values;
        st->in_flight = fr->in_flight > st->in_flight ? fr->in_flight : st->in_flight;
    }
    stage_memory(m, cp, d, plan, s, st);
    find_overflow(m, cp, d, plan, s, st);
}

/* The first layer of each stage of a contiguous split (the user's, or the balancing rule's). */
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

/* The fragments of a contiguous split: one per stage. */
static int contiguous(const sim_model_t *m, const sim_plan_params_t *p, const sim_time_t *bal,
                      sim_plan_t *out, char *err, size_t errlen)
{
    uint32_t *first = calloc((size_t)p->stages + 1, sizeof(*first));
    int rc = first ? 0 : -ENOMEM;

    if (rc == 0 && split(m, p, bal, first) != 0) {
        sim_errf(err, errlen, "%s: cannot balance %zu layers over %d stages", m->name,
                 m->num_layers, p->stages);
        rc = -EINVAL;
    }
    if (rc == 0 && !(out->fragments = calloc((size_t)p->stages, sizeof(*out->fragments))))
        rc = -ENOMEM;
    for (int s = 0; rc == 0 && s < p->stages; s++) {
        uint32_t end = s + 1 < p->stages ? first[s + 1] : (uint32_t)m->num_layers;

        out->fragments[s] = (sim_fragment_t){.stage = s, .at = first[s], .count = end - first[s]};
    }
    for (size_t i = 0; rc == 0 && i < m->num_layers; i++)
        out->order[i] = (uint32_t)i;
    out->num_fragments = rc == 0 ? p->stages : 0;
    free(first);
    return rc;
}

int sim_plan_build(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                   const sim_plan_params_t *p, sim_plan_t *out, char *err, size_t errlen)
{
    return sim_plan_build_costed(m, cp, d, p, NULL, NULL, out, err, errlen);
}

int sim_plan_build_costed(const sim_model_t *m, const sim_cost_params_t *cp, const sim_device_t *d,
                          const sim_plan_params_t *p, const sim_cost_t *fwd, const sim_cost_t *bwd,
                          sim_plan_t *out, char *err, size_t errlen)
{
    size_t n = m->num_layers;
    sim_time_t *bal = calloc(n ? n : 1, sizeof(*bal));
    int rc = check_params(m, p, err, errlen);

    memset(out, 0, sizeof(*out));
    out->p = *p;
    out->p.splits = NULL;
    out->p.placement = NULL;
    out->num_stages = p->stages;
    out->layer_fwd = calloc(n ? n : 1, sizeof(sim_cost_t));
    out->layer_bwd = calloc(n ? n : 1, sizeof(sim_cost_t));
    out->order = calloc(n ? n : 1, sizeof(uint32_t));
    out->stages = calloc((size_t)(p->stages > 0 ? p->stages : 1), sizeof(*out->stages));
    if (rc == 0 && (!bal || !out->layer_fwd || !out->layer_bwd || !out->order || !out->stages))
        rc = -ENOMEM;
    if (rc == 0) {
        out->units = (uint64_t)llround((double)p->micro_batch / m->samples_per_unit);
        if (fwd && bwd) {
            memcpy(out->layer_fwd, fwd, n * sizeof(*fwd));
            memcpy(out->layer_bwd, bwd, n * sizeof(*bwd));
        } else {
            rc = sim_plan_layer_costs(m, cp, d, out->units, out->layer_fwd, out->layer_bwd);
        }
        balance_costs(m, p, out->layer_fwd, out->layer_bwd, bal);
    }
    if (rc == 0)
        rc = p->placement ? sim_placement_fragments(m, p->placement, out->order, &out->fragments,
                                                    &out->num_fragments)
                          : contiguous(m, p, bal, out, err, errlen);
    for (int f = 0; rc == 0 && f < out->num_fragments; f++)
        fill_fragment(m, out, f);
    for (int s = 0; rc == 0 && s < p->stages; s++)
        fill_stage(m, cp, d, out, s);
    if (rc != 0)
        sim_plan_free(out);
    free(bal);
    return rc;
}

void sim_plan_free(sim_plan_t *plan)
{
    if (plan == NULL)
        return;
    free(plan->stages);
    free(plan->fragments);
    free(plan->order);
    free(plan->layer_fwd);
    free(plan->layer_bwd);
    plan->stages = NULL;
    plan->fragments = NULL;
    plan->order = NULL;
    plan->layer_fwd = plan->layer_bwd = NULL;
    plan->num_stages = plan->num_fragments = 0;
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
        q.placement = NULL;
        if (sim_plan_build(m, cp, d, &q, &plan, NULL, 0) != 0)
            return -1;
        fits = sim_plan_overflow(&plan) < 0;
        sim_plan_free(&plan);
        if (fits)
            return k;
    }
    return -1;
}

int sim_plan_fitting_stages(const sim_model_t *m, const sim_cost_params_t *cp,
                            const sim_device_t *d, const sim_plan_params_t *p, int max_stages,
                            unsigned char *fits)
{
    size_t n = m->num_layers;
    sim_cost_t *fwd = calloc(n ? n : 1, sizeof(*fwd)), *bwd = calloc(n ? n : 1, sizeof(*bwd));
    uint64_t units = (uint64_t)llround((double)p->micro_batch / m->samples_per_unit);
    int count = fwd && bwd ? 0 : -1;

    /* The layers cost the same whatever the split: costed once, not once per stage count. */
    if (count == 0 && sim_plan_layer_costs(m, cp, d, units, fwd, bwd) != 0)
        count = -1;
    for (int k = 0; k <= max_stages; k++)
        fits[k] = 0;
    for (int k = 1; count >= 0 && k <= max_stages && (size_t)k <= n; k++) {
        sim_plan_params_t q = *p;
        sim_plan_t plan;

        q.stages = k;
        q.splits = NULL;
        q.placement = NULL;
        if (sim_plan_build_costed(m, cp, d, &q, fwd, bwd, &plan, NULL, 0) != 0)
            continue; /* not a plan at all (a model with fewer layers than k, say) */
        fits[k] = sim_plan_overflow(&plan) < 0;
        count += fits[k];
        sim_plan_free(&plan);
    }
    free(fwd);
    free(bwd);
    return count;
}

void sim_plan_fit_text(const unsigned char *fits, int max_stages, char *buf, size_t len)
{
    size_t used = (size_t)snprintf(buf, len, "stage counts that fit: ");
    int any = 0;

    for (int k = 1; k <= max_stages && used < len; k++) {
        int last = k;

        if (!fits[k])
            continue;
        while (last < max_stages && fits[last + 1])
            last++;
        used += (size_t)snprintf(buf + used, len - used,
                                 last > k + 1    ? "%s%d-%d"
                                 : last == k + 1 ? "%s%d, %d"
                                                 : "%s%d",
                                 any ? ", " : "", k, last);
        any = 1;
        k = last;
    }
    if (!any)
        snprintf(buf, len, "no stage count up to %d fits", max_stages);
}

void sim_plan_overflow_text(const sim_plan_t *plan, const sim_model_t *m, int s, const char *fit,
                            char *buf, size_t len)
{
    const sim_stage_t *st = &plan->stages[s];
    const sim_stage_mem_t *mem = &st->mem;
    const char *tail = fit ? fit : "";

    snprintf(buf, len,
             "stage %d (layers %s .. %s) needs %llu bytes of %llu: %llu over, from layer %s on "
             "(weights %llu, gradients %llu, optimizer %llu, stash %llu, activations %llu, code "
             "%llu)%s%s",
             s, m->layers[st->first].name, m->layers[st->last - 1].name,
             (unsigned long long)mem->total, (unsigned long long)mem->capacity,
             (unsigned long long)(mem->total - mem->capacity),
             m->layers[mem->overflow_layer >= 0 ? mem->overflow_layer : st->last - 1].name,
             (unsigned long long)mem->weights, (unsigned long long)mem->gradients,
             (unsigned long long)mem->optimizer, (unsigned long long)mem->stash,
             (unsigned long long)mem->activations, (unsigned long long)mem->code, *tail ? "; " : "",
             tail);
}

double sim_time_to_train(double step_s, uint64_t global_batch, uint64_t samples, double overhead_s)
{
    uint64_t steps;

    if (global_batch == 0)
        return 0;
    steps = samples / global_batch + (samples % global_batch != 0);
    return (double)steps * step_s + overhead_s;
}
