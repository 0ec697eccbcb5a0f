/*
 * Models, plans and the cost model's constants, for programs that simulate a described model
 * (gcl/sim.h; sim-step is one): thin handles over sim/'s models and plans, planned with the
 * instance's pod. The calls that take an instance or an IPU context are simapi.c's, over the
 * gcl_pod_* calls here.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pod/model.h"

#include "base/fault.h"
#include "pod/layer.h"

gcl_status_t gcl_sim_model_open(const char *model, int sequence_length, gcl_sim_model_t *out,
                                char *err, size_t len)
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
    rc = sim_model_open(model, sequence_length, &m->m, why, sizeof why);
    if (rc != 0) {
        snprintf(err, len, "%s", why[0] ? why : strerror(-rc));
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
        .samples_per_unit = (int)s->samples_per_unit,
        .input_bytes = (double)s->input_bytes,
        .host_samples_per_s = (double)s->host_samples_per_s,
        .dataset_samples = (double)s->dataset_samples,
        .optimizer = sim_optimizer_name(s->optimizer),
        .recompute = sim_recompute_name(s->recompute),
        .optimizer_state = sim_state_place_name(s->state),
    };
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

static int resolve(const sim_model_t *m, const gcl_sim_plan_config_t *c, sim_plan_params_t *p,
                   char *err, size_t len)
{
    int sched, rec, opt, state;

    if (pick(c->schedule, sim_schedule_parse, SIM_SCHED_1F1B, &sched) ||
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
    *p = (sim_plan_params_t){c->stages,
                             c->replicas,
                             (uint64_t)c->micro_batch,
                             (uint32_t)c->accumulation,
                             (sim_schedule_t)sched,
                             (sim_recompute_t)rec,
                             (sim_optimizer_t)opt,
                             (sim_state_place_t)state,
                             c->grad_type == GCL_F32 ? SIM_PREC_F32 : SIM_PREC_F16,
                             (const uint32_t *)c->splits};
    return 0;
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
    p->m = &m->m;
    p->cp = *sim_topology_cost(s->topo);
    p->dev = s->dev;
    rc = sim_plan_build(&m->m, &p->cp, p->dev, &params, &p->plan, err, len);
    if (rc != 0) {
        free(p);
        return rc == -ENOMEM ? GCL_ERR_NO_HOST_MEMORY : GCL_ERR_INVALID_ARGUMENT;
    }
    *out = p;
    over = sim_plan_overflow(&p->plan);
    if (over < 0)
        return GCL_OK;
    sim_plan_overflow_text(&p->plan, &m->m, over,
                           sim_plan_min_stages(&m->m, &p->cp, p->dev, &params, 256), err, len);
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

    *out = (gcl_sim_plan_info_t){sim_schedule_name(q->schedule),
                                 sim_recompute_name(q->recompute),
                                 sim_optimizer_name(q->optimizer),
                                 sim_state_place_name(q->state),
                                 (long)p->plan.units,
                                 sim_pipe_bubble_formula(q->stages, q->accumulation)};
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

gcl_status_t gcl_pod_charge_stage(gcl_sim_ipu_t *ipu, gcl_sim_plan_t p, int s, gcl_pass_t pass)
{
    const sim_stage_t *st;

    if (!p || s < 0 || s >= p->plan.num_stages || (int)pass < 0 || pass > GCL_PASS_RECOMPUTE)
        return GCL_ERR_INVALID_ARGUMENT;
    st = &p->plan.stages[s];
    for (uint32_t k = 0; k < st->last - st->first; k++) {
        /* Backward runs the layers in reverse order. The plan costed every layer once, with
         * the instance's constants: the same numbers gcl_charge_layer would compute. */
        uint32_t i = pass == GCL_PASS_BACKWARD ? st->last - 1 - k : st->first + k;
        const sim_cost_t *c =
            pass == GCL_PASS_BACKWARD ? &p->plan.layer_bwd[i] : &p->plan.layer_fwd[i];

        gcl_pod_advance_layer(ipu, c, p->m->layers[i].type, (sim_pass_t)pass);
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
