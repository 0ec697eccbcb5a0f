/*
 * Models, plans and the cost model's constants, for programs that simulate a described model
 * (gcl/sim.h; sim-step is one): thin handles over sim/'s models and plans, planned with the
 * instance's pod. The calls that take an instance or an IPU context are api/sim.c's, over the
 * gcl_pod_* calls here.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/workload.h"

#include "base/alloc.h"
#include "pod/charge.h"

gcl_status_t gcl_sim_model_open(const char *model, int sequence_length, gcl_sim_model_t *out,
                                char *err, size_t len)
{
    return gcl_sim_model_open_packed(model, sequence_length, 0, out, err, len);
}

gcl_status_t gcl_sim_model_open_packed(const char *model, int sequence_length,
                                       double sequences_per_pack, gcl_sim_model_t *out, char *err,
                                       size_t len)
{
    struct gcl_sim_model *m;
    char why[512];
    int rc;

    if (!out || !model) {
        snprintf(err, len, "no model given");
        return GCL_ERR_INVALID_ARGUMENT;
    }
    *out = NULL;
    m = gcl_calloc(1, sizeof(*m));
    if (!m)
        return GCL_ERR_NO_HOST_MEMORY;
    why[0] = '\0';
    pthread_mutex_init(&m->lock, NULL);
    rc = sim_model_open(model, sequence_length, sequences_per_pack, &m->m, why, sizeof why);
    if (rc != 0) {
        snprintf(err, len, "%s", why[0] ? why : strerror(-rc));
        pthread_mutex_destroy(&m->lock);
        free(m);
        return rc == -ENOMEM ? GCL_ERR_NO_HOST_MEMORY : GCL_ERR_INVALID_ARGUMENT;
    }
    *out = m;
    return GCL_OK;
}

void gcl_sim_model_free(gcl_sim_model_t m)
{
    if (!m)
        return;
    for (int i = 0; i < GCL_MODEL_COSTS; i++) {
        free(m->costs[i].fwd);
        free(m->costs[i].bwd);
    }
    pthread_mutex_destroy(&m->lock);
    sim_model_free(&m->m);
    free(m);
}

void gcl_sim_model_info(gcl_sim_model_t m, gcl_sim_model_info_t *out)
{
    const sim_model_t *s = &m->m;

    *out = (gcl_sim_model_info_t){
        .name = s->name,
        .layers = (int)s->num_layers,
        .params = (double)sim_model_params(s),
        .flops_per_sample = 2.0 * sim_model_macs_per_sample(s),
        .samples_per_unit = s->samples_per_unit,
        .input_bytes = (double)s->input_bytes,
        .host_samples_per_s = (double)s->host_samples_per_s,
        .dataset_samples = (double)s->dataset_samples,
        .optimizer = sim_optimizer_name(s->optimizer),
        .recompute = sim_recompute_name(s->recompute),
        .optimizer_state = sim_state_place_name(s->state),
    };
    for (size_t i = 0; i < s->num_layers; i++) {
        int first = i == 0 || s->layers[i - 1].part != s->layers[i].part;

        out->attention_sublayers += first && s->layers[i].part == SIM_PART_ATTENTION;
        out->ffn_sublayers += first && s->layers[i].part == SIM_PART_FFN;
    }
}

gcl_status_t gcl_sim_model_layer(gcl_sim_model_t m, int i, gcl_layer_t *out)
{
    if (!m || !out || i < 0 || (size_t)i >= m->m.num_layers)
        return GCL_ERR_INVALID_ARGUMENT;
    gcl_layer_from_sim(&m->m.layers[i], out);
    return GCL_OK;
}

int gcl_sim_model_find(gcl_sim_model_t m, const char *name)
{
    for (size_t i = 0; m && name && i < m->m.num_layers; i++)
        if (strcmp(m->m.layers[i].name, name) == 0)
            return (int)i;
    return -1;
}

gcl_status_t gcl_sim_model_write(gcl_sim_model_t m, FILE *f)
{
    if (!m || !f)
        return GCL_ERR_INVALID_ARGUMENT;
    return sim_model_write(&m->m, f) == 0 ? GCL_OK : GCL_ERR_SYSTEM;
}

/* NAME among the names of PARSE (NULL: DEF). Returns 0 or -1. */
static int pick(const char *name, int (*parse)(const char *), int def, int *out)
{
    int v = name ? parse(name) : def;

    if (v < 0)
        return -1;
    *out = v;
    return 0;
}

/* "3,7,7,7" for a model without sublayers: contiguous layers per IPU, as splits into PL. */
static int layer_counts(const sim_model_t *m, struct gcl_sim_plan *pl, const sim_placement_t *c,
                        char *err, size_t len)
{
    uint64_t sum = 0;

    for (int k = 0; k < c->ipus; k++) {
        if (c->att[k] < 1) {
            snprintf(err, len, "--layers-per-ipu: IPU %d holds no layer", k);
            return -EINVAL;
        }
        if (k > 0)
            pl->splits[k - 1] = (uint32_t)sum;
        sum += c->att[k];
    }
    if (sum != m->num_layers) {
        snprintf(err, len, "--layers-per-ipu sums to %llu layers, but %s has %zu",
                 (unsigned long long)sum, m->name, m->num_layers);
        return -EINVAL;
    }
    return 0;
}

/* The placement text of C into PL (its placement, or for a model without sublayers its
 * splits), and P's pointers to them. */
static int placement(const sim_model_t *m, const gcl_sim_plan_config_t *c,
                     struct gcl_sim_plan *pl, sim_plan_params_t *p, char *err, size_t len)
{
    int sublayers = 0;

    if (!c->placement)
        return 0;
    if (sim_placement_parse(c->placement, c->layers_per_ipu, &pl->placement, err, len) != 0)
        return -EINVAL;
    for (size_t i = 0; i < m->num_layers; i++)
        sublayers |= m->layers[i].part == SIM_PART_ATTENTION;
    if (pl->placement.ipus != c->stages) {
        snprintf(err, len, "the placement lists %d IPUs, but a replica has %d stages",
                 pl->placement.ipus, c->stages);
        return -EINVAL;
    }
    if (c->layers_per_ipu && !sublayers) {
        if (c->splits) {
            snprintf(err, len, "--layers-per-ipu and --pipeline-splits cannot both be given");
            return -EINVAL;
        }
        p->splits = pl->splits;
        return layer_counts(m, pl, &pl->placement, err, len);
    }
    p->placement = &pl->placement;
    return 0;
}

static int resolve(const sim_model_t *m, const gcl_sim_plan_config_t *c, sim_plan_params_t *p,
                   char *err, size_t len)
{
    int sched, rec, opt, state;

    if (pick(c->schedule, sim_schedule_parse, SIM_SCHED_POPART, &sched) ||
        pick(c->recompute, sim_recompute_parse, (int)m->recompute, &rec) ||
        pick(c->optimizer, sim_optimizer_parse, (int)m->optimizer, &opt) ||
        pick(c->optimizer_state, sim_state_place_parse, (int)m->state, &state)) {
        snprintf(err, len, "unknown schedule, recompute mode, optimizer or optimizer state");
        return -EINVAL;
    }
    if (c->grad_type != GCL_F16 && c->grad_type != GCL_F32) {
        snprintf(err, len, "the gradient type must be f16 or f32");
        return -EINVAL;
    }
    if (c->micro_batch < 1 || c->accumulation < 1 || c->stages < 1 || c->replicas < 1) {
        snprintf(err, len, "stages, replicas, micro-batch and accumulation must be at least 1");
        return -EINVAL;
    }
    if (state == SIM_STATE_SHARDED && c->replicas == 1)
        state = SIM_STATE_ONCHIP;
    if (state == SIM_STATE_STREAMING_SHARDED && c->replicas == 1)
        state = SIM_STATE_STREAMING;
    *p = (sim_plan_params_t){c->stages,
                             c->replicas,
                             (uint64_t)c->micro_batch,
                             (uint32_t)c->accumulation,
                             (sim_schedule_t)sched,
                             (sim_recompute_t)rec,
                             (sim_optimizer_t)opt,
                             (sim_state_place_t)state,
                             c->grad_type == GCL_F32 ? SIM_PREC_F32 : SIM_PREC_F16,
                             (const uint32_t *)c->splits,
                             NULL};
    return 0;
}

/* M's layer costs at UNITS units with constants CP, from its slots or costed now into the
 * least recently used one; the slot stays locked until costs_done (NULL when out of memory or a
 * layer cannot be costed: the plan then costs the layers itself and says why). */
static gcl_model_costs_t *costs_of(struct gcl_sim_model *m, uint64_t units,
                                   const sim_cost_params_t *cp, const sim_device_t *dev)
{
    gcl_model_costs_t *c = NULL;
    size_t n = m->m.num_layers ? m->m.num_layers : 1;

    pthread_mutex_lock(&m->lock);
    for (int i = 0; i < GCL_MODEL_COSTS; i++) {
        gcl_model_costs_t *s = &m->costs[i];

        if (s->fwd && s->units == units && sim_cost_params_equal(&s->cp, cp)) {
            s->used = ++m->tick;
            return s;
        }
        if (!c || !s->fwd || (c->fwd && s->used < c->used))
            c = s;
    }
    free(c->fwd);
    free(c->bwd);
    *c = (gcl_model_costs_t){.units = units, .used = ++m->tick, .cp = *cp};
    c->fwd = gcl_malloc(n * sizeof(sim_cost_t));
    c->bwd = gcl_malloc(n * sizeof(sim_cost_t));
    if (!c->fwd || !c->bwd || sim_plan_layer_costs(&m->m, cp, dev, units, c->fwd, c->bwd) != 0) {
        free(c->fwd);
        free(c->bwd);
        c->fwd = c->bwd = NULL;
        pthread_mutex_unlock(&m->lock);
        return NULL;
    }
    return c;
}

static void costs_done(struct gcl_sim_model *m, gcl_model_costs_t *c)
{
    if (c)
        pthread_mutex_unlock(&m->lock);
}

/* Which stage counts would fit P's model with PARAMS' other choices, as one line in TEXT ("" when
 * they could not be costed). */
static void fit_text(struct gcl_sim_model *m, const struct gcl_sim_plan *p,
                     const sim_plan_params_t *params, char *text, size_t len)
{
    enum { MAX_STAGES = 256 };
    unsigned char fits[MAX_STAGES + 1];
    int max = MAX_STAGES < (int)m->m.num_layers ? MAX_STAGES : (int)m->m.num_layers;

    text[0] = '\0';
    if (sim_plan_fitting_stages(&m->m, &p->cp, p->dev, params, MAX_STAGES, fits) >= 0)
        sim_plan_fit_text(fits, max, text, len);
}

gcl_status_t gcl_pod_plan_create(const gcl_sim_t *s, gcl_sim_model_t m,
                                 const gcl_sim_plan_config_t *config, gcl_sim_plan_t *out,
                                 char *err, size_t len)
{
    struct gcl_sim_plan *p;
    sim_plan_params_t params;
    int rc, over;

    if (!m || !config || !out)
        return GCL_ERR_INVALID_ARGUMENT;
    *out = NULL;
    if (resolve(&m->m, config, &params, err, len) != 0)
        return GCL_ERR_INVALID_ARGUMENT;
    p = gcl_calloc(1, sizeof(*p));
    if (!p)
        return GCL_ERR_NO_HOST_MEMORY;
    if (placement(&m->m, config, p, &params, err, len) != 0) {
        free(p);
        return GCL_ERR_INVALID_ARGUMENT;
    }
    p->m = &m->m;
    p->cp = *sim_topology_cost(s->topo);
    p->dev = s->dev;
    double units = (double)params.micro_batch / m->m.samples_per_unit;
    gcl_model_costs_t *costs = units >= 1 && units == floor(units)
                                   ? costs_of(m, (uint64_t)units, &p->cp, p->dev)
                                   : NULL;
    rc = sim_plan_build_costed(&m->m, &p->cp, p->dev, &params, costs ? costs->fwd : NULL,
                               costs ? costs->bwd : NULL, &p->plan, err, len);
    costs_done(m, costs);
    if (rc != 0) {
        free(p);
        return rc == -ENOMEM ? GCL_ERR_NO_HOST_MEMORY : GCL_ERR_INVALID_ARGUMENT;
    }
    *out = p;
    over = sim_plan_overflow(&p->plan);
    if (over < 0)
        return GCL_OK;
    char fit[512] = "";
    if (!config->quiet)
        fit_text(m, p, &params, fit, sizeof fit);
    sim_plan_overflow_text(&p->plan, &m->m, over, fit, err, len);
    return GCL_ERR_OUT_OF_MEMORY;
}

void gcl_sim_plan_free(gcl_sim_plan_t p)
{
    if (!p)
        return;
    sim_plan_free(&p->plan);
    free(p);
}

void gcl_sim_plan_info(gcl_sim_plan_t p, gcl_sim_plan_info_t *out)
{
    const sim_plan_params_t *q = &p->plan.p;

    int popart = q->schedule == SIM_SCHED_POPART, nf = p->plan.num_fragments;

    *out = (gcl_sim_plan_info_t){
        sim_schedule_name(q->schedule),
        sim_recompute_name(q->recompute),
        sim_optimizer_name(q->optimizer),
        sim_state_place_name(q->state),
        (long)p->plan.units,
        popart ? sim_pipe_bubble_popart(nf, q->accumulation)
               : sim_pipe_bubble_formula(q->stages, q->accumulation),
        nf,
        popart ? (long)sim_pipe_cycles(nf, q->accumulation) : 0};
}

gcl_status_t gcl_sim_plan_stage(gcl_sim_plan_t p, int s, gcl_sim_stage_t *out)
{
    const sim_stage_t *st;

    if (!p || !out || s < 0 || s >= p->plan.num_stages)
        return GCL_ERR_INVALID_ARGUMENT;
    st = &p->plan.stages[s];
    *out = (gcl_sim_stage_t){
        .first_layer = (int)st->first,
        .last_layer = (int)st->last,
        .layers = (int)st->layers,
        .weights = (double)st->weights,
        .params = (double)st->params,
        .tensors = (int)st->tensors,
        .out_values = (double)st->out_values,
        .in_flight = (int)st->in_flight,
        .fwd_s = (double)sim_cost_total(&st->fwd) * 1e-12,
        .bwd_s = (double)sim_cost_total(&st->bwd) * 1e-12,
        .recompute_s = (double)sim_cost_total(&st->rec) * 1e-12,
        .mem_weights = (double)st->mem.weights,
        .mem_gradients = (double)st->mem.gradients,
        .mem_optimizer = (double)st->mem.optimizer,
        .mem_stash = (double)st->mem.stash,
        .mem_activations = (double)st->mem.activations,
        .mem_code = (double)st->mem.code,
        .mem_total = (double)st->mem.total,
        .mem_capacity = (double)st->mem.capacity,
        .mem_headroom = (double)st->mem.headroom,
    };
    return GCL_OK;
}

gcl_status_t gcl_sim_plan_order(gcl_sim_plan_t p, int s, char *pass, int *micro)
{
    uint32_t a;
    sim_pipe_op_t *ops;

    if (!p || !pass || !micro || s < 0 || s >= p->plan.num_stages)
        return GCL_ERR_INVALID_ARGUMENT;
    a = p->plan.p.accumulation;
    ops = gcl_malloc(2 * (size_t)a * sizeof(*ops));
    if (!ops)
        return GCL_ERR_NO_HOST_MEMORY;
    sim_pipe_order(p->plan.p.schedule, s, p->plan.num_stages, a, ops);
    for (uint32_t i = 0; i < 2 * a; i++) {
        pass[i] = ops[i].pass;
        micro[i] = (int)ops[i].micro;
    }
    free(ops);
    return GCL_OK;
}

gcl_status_t gcl_sim_plan_fragment(gcl_sim_plan_t p, int f, gcl_sim_fragment_t *out)
{
    const sim_fragment_t *fr;

    if (!p || !out || f < 0 || f >= p->plan.num_fragments)
        return GCL_ERR_INVALID_ARGUMENT;
    fr = &p->plan.fragments[f];
    *out = (gcl_sim_fragment_t){fr->stage, (double)sim_cost_total(&fr->fwd) * 1e-12,
                                (double)sim_cost_total(&fr->bwd) * 1e-12,
                                (double)sim_cost_total(&fr->rec) * 1e-12, (double)fr->out_values};
    return GCL_OK;
}

gcl_status_t gcl_pod_charge_fragment(gcl_sim_ipu_t *ipu, gcl_sim_plan_t p, int f, gcl_pass_t pass)
{
    const sim_fragment_t *fr;

    if (!p || f < 0 || f >= p->plan.num_fragments || (int)pass < 0 || pass > GCL_PASS_RECOMPUTE)
        return GCL_ERR_INVALID_ARGUMENT;
    fr = &p->plan.fragments[f];
    for (uint32_t k = 0; k < fr->count; k++) {
        /* Backward runs the layers in reverse order. The plan costed every layer once, with
         * the instance's constants: the same numbers gcl_charge_layer would compute. */
        uint32_t i = p->plan.order[fr->at + (pass == GCL_PASS_BACKWARD ? fr->count - 1 - k : k)];
        const sim_cost_t *c =
            pass == GCL_PASS_BACKWARD ? &p->plan.layer_bwd[i] : &p->plan.layer_fwd[i];

        gcl_pod_advance_layer(ipu, c, p->m->layers[i].type, (sim_pass_t)pass);
    }
    return GCL_OK;
}

gcl_status_t gcl_pod_charge_stage(gcl_sim_ipu_t *ipu, gcl_sim_plan_t p, int s, gcl_pass_t pass)
{
    int n;

    if (!p || s < 0 || s >= p->plan.num_stages || (int)pass < 0 || pass > GCL_PASS_RECOMPUTE)
        return GCL_ERR_INVALID_ARGUMENT;
    n = p->plan.num_fragments;
    for (int k = 0; k < n; k++) { /* backward: the stage's fragments in reverse order */
        int f = pass == GCL_PASS_BACKWARD ? n - 1 - k : k;

        if (p->plan.fragments[f].stage == s)
            GCL_CHECK(gcl_pod_charge_fragment(ipu, p, f, pass));
    }
    return GCL_OK;
}

double gcl_sim_time_to_train(double step_s, long global_batch, double samples, double overhead_s)
{
    if (global_batch < 1 || !(samples >= 0) || samples > 1e18)
        return 0;
    return sim_time_to_train(step_s, (uint64_t)global_batch, (uint64_t)samples, overhead_s);
}

/* The current value of topology parameter KEY. */
static double topology_value(const sim_topology_t *t, const char *key)
{
    sim_topology_params_t p;

    sim_topology_get_params(t, &p);
    if (strcmp(key, "ipulink_bandwidth_gbs") == 0)
        return (double)p.ipulink_bandwidth / 1e9;
    if (strcmp(key, "gwlink_bandwidth_gbs") == 0)
        return (double)p.gwlink_bandwidth / 1e9;
    if (strcmp(key, "ipulink_latency_ns") == 0)
        return (double)p.ipulink_latency / 1e3;
    if (strcmp(key, "gwlink_latency_ns") == 0)
        return (double)p.gwlink_latency / 1e3;
    if (strcmp(key, "sync_latency_ns") == 0)
        return (double)p.sync_latency / 1e3;
    return (double)p.gw_sync_latency / 1e3;
}

int gcl_pod_param(const gcl_sim_t *s, int i, gcl_sim_param_t *out)
{
    const sim_param_info_t *info = i >= 0 ? sim_param_get((size_t)i) : NULL;
    const sim_topology_t *t;

    if (!out || !info)
        return -1;
    t = s->topo;
    *out = (gcl_sim_param_t){info->key,
                             sim_param_kind_name(info->kind),
                             sim_param_unit_name(info->unit),
                             info->source,
                             info->topology ? topology_value(t, info->key)
                                            : sim_cost_param_value(sim_topology_cost(t), info->key),
                             info->lo,
                             info->hi};
    return 0;
}
