/* sim-step's job: the model and its defaults, the checks against the job's shape, the plan,
 * and one simulated run. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/init_error.h" /* header only: sim-step does not link the examples' library */
#include "simstep.h"

/* Each built-in model's calibration point (docs/validation.md); a model file gets 1 x 1 on one
 * stage. */
static void model_defaults(const char *model, long *micro, long *accum, long *stages)
{
    if (strcmp(model, "resnet50") == 0)
        *micro = 20, *accum = 10, *stages = 1;
    else if (strcmp(model, "bert-large") == 0)
        *micro = 4, *accum = 192, *stages = 4;
    else
        *micro = 1, *accum = 1, *stages = 1;
}

int simstep_open_model(simstep_t *w)
{
    char err[600];
    long micro, accum, stages;

    if (gcl_sim_model_open_packed(w->o.model, w->o.seq, w->o.per_pack, &w->model, err,
                                  sizeof err) != GCL_OK) {
        /* A name that opens no file: say what --model takes. */
        if (!strncmp(err, "cannot open model file", 22))
            fprintf(stderr,
                    "sim-step: --model: %s; expected resnet50, bert-large or a model file\n", err);
        else
            fprintf(stderr, "sim-step: %s\n", err);
        return 2;
    }
    gcl_sim_model_info(w->model, &w->minfo);
    model_defaults(w->o.model, &micro, &accum, &stages);
    if (!w->o.micro_batch)
        w->o.micro_batch = micro;
    if (!w->o.accum && !w->o.global_batch)
        w->o.accum = accum;
    w->default_stages = stages;
    return 0;
}

double simstep_global_batch(const simstep_t *w)
{
    return (double)w->info.num_replicas * (double)w->micro * (double)w->accum;
}

double simstep_samples_per_s(const simstep_t *w)
{
    return w->res.step_us > 0 ? simstep_global_batch(w) / (w->res.step_us / 1e6) : 0;
}

/* One line, from instance 0 only (every instance reaches the same verdict). */
__attribute__((format(printf, 3, 4))) static int refuse(const simstep_t *w, int status,
                                                        const char *fmt, ...)
{
    va_list ap;

    if (w->info.instance_index != 0)
        return status;
    va_start(ap, fmt);
    fprintf(stderr, "sim-step: ");
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    return status;
}

/* --pipeline-splits: a layer name or index for the first layer of each stage after the first. */
static int parse_splits(simstep_t *w)
{
    char buf[4096], *save = NULL;
    int n = 0;

    snprintf(buf, sizeof buf, "%s", w->o.splits);
    for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        long v = strtol(t, &end, 10);
        int i = *end == '\0' && end != t ? (int)v : gcl_sim_model_find(w->model, t);

        if (i <= 0 || i >= w->minfo.layers)
            return refuse(w, 2, "--pipeline-splits: '%s' is not a layer of %s after the first", t,
                          w->minfo.name);
        if (n == w->stages - 1)
            return refuse(w, 2, "--pipeline-splits '%s': more splits than stages - 1", w->o.splits);
        w->splits[n++] = i;
    }
    if (n != w->stages - 1)
        return refuse(w, 2, "--pipeline-splits '%s': give %d first layers (stages - 1)",
                      w->o.splits, w->stages - 1);
    return 0;
}

static int check_job(simstep_t *w)
{
    const simstep_opts_t *o = &w->o;
    int ipr = w->info.ipus_per_replica;

    if (o->stages && o->stages != ipr) {
        return refuse(w, 2,
                      "--stages '%ld': must equal the job's IPUs per replica (poprun "
                      "--ipus-per-replica %d)",
                      o->stages, ipr);
    }
    if (ipr > SIMSTEP_MAX_STAGES)
        return refuse(w, 2, "at most %d stages (the job has %d IPUs per replica)",
                      SIMSTEP_MAX_STAGES, ipr);
    w->stages = ipr;
    w->micro = o->micro_batch;
    w->accum = o->accum;
    if (o->global_batch) {
        long per = (long)w->info.num_replicas * o->micro_batch;

        if (o->global_batch % per)
            return refuse(w, 2,
                          "--global-batch '%ld': must be a multiple of replicas x "
                          "micro-batch (%ld)",
                          o->global_batch, per);
        w->accum = o->global_batch / per;
    }
    if (o->sensitivity && w->info.num_instances > 1)
        return refuse(w, 2,
                      "--sensitivity reruns the whole job in one process: run sim-step "
                      "without poprun (--replicas, --stages, --topology)");
    if (o->epochs && w->minfo.dataset_samples <= 0)
        return refuse(w, 2, "--epochs: %s has no dataset size; give --train-samples",
                      w->minfo.name);
    return o->splits ? parse_splits(w) : 0;
}

/* The optimizer state's place from --optimizer-state, or from --optimizer-state-offchip and
 * --replicated-tensor-sharding over the model's default. */
static const char *state_place(const simstep_t *w)
{
    const char *def = w->minfo.optimizer_state;
    int offchip = w->o.offchip || strncmp(def, "streaming", 9) == 0;
    int rts = w->o.rts ? strcmp(w->o.rts, "on") == 0
                       : strcmp(def, "sharded") == 0 || strcmp(def, "streaming-sharded") == 0;

    if (w->o.state)
        return w->o.state;
    if (!w->o.offchip && !w->o.rts)
        return NULL;
    return offchip ? (rts ? "streaming-sharded" : "streaming") : (rts ? "sharded" : "on-chip");
}

/* The pod's constant KEY (sim/device/params.h), or DEF when it has none. */
static double pod_param(gcl_instance_t inst, const char *key, double def)
{
    gcl_sim_param_t par;

    for (int i = 0; gcl_sim_param(inst, i, &par) == 0; i++)
        if (strcmp(par.key, key) == 0)
            return par.value;
    return def;
}

int simstep_resolve(simstep_t *w, gcl_instance_t inst)
{
    char err[1024];
    gcl_sim_plan_config_t c;
    gcl_status_t rc;
    int status = check_job(w);

    if (status)
        return status;
    c = (gcl_sim_plan_config_t){w->stages,
                                w->info.num_replicas,
                                w->micro,
                                (int)w->accum,
                                w->o.schedule,
                                w->o.recompute,
                                w->o.optimizer,
                                state_place(w),
                                w->o.grad_type,
                                w->o.splits ? w->splits : NULL,
                                w->o.placement,
                                w->o.layers_per_ipu,
                                0};
    rc = gcl_sim_plan_create(inst, w->model, &c, &w->plan, err, sizeof err);
    if (rc == GCL_ERR_OUT_OF_MEMORY && w->o.stages)
        return refuse(w, 1, "--stages %d: out of simulated IPU memory: %s", w->stages, err);
    if (rc == GCL_ERR_OUT_OF_MEMORY)
        return refuse(w, 1, "out of simulated IPU memory with %d stage%s (--stages): %s",
                      w->stages, w->stages == 1 ? "" : "s", err);
    if (rc != GCL_OK)
        return refuse(w, rc == GCL_ERR_INVALID_ARGUMENT ? 2 : 1, "%s", err);
    gcl_sim_plan_info(w->plan, &w->pinfo);
    w->ild_size = gcl_sim_topology_ipus(inst) / gcl_sim_topology_ilds(inst);
    w->reduce_buffer = pod_param(inst, "reduction_buffer_bytes", 0);
    for (int s = 0; s < w->stages; s++)
        gcl_sim_plan_stage(w->plan, s, &w->stage[s]);
    for (int f = 0; f < w->pinfo.fragments && f <= SIMSTEP_MAX_STAGES; f++)
        gcl_sim_plan_fragment(w->plan, f, &w->frag[f]);
    w->feed = (gcl_sim_feed_t){w->o.host_rate >= 0 ? w->o.host_rate : w->minfo.host_samples_per_s,
                               w->minfo.input_bytes, (int)w->o.host_servers};
    return 0;
}

int simstep_run_job(simstep_t *w, int report_errors, const char *topology)
{
    /* The model's buffers are never allocated: always phantom, as poprun --offline-mode. */
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = (int)w->o.replicas;
    cfg.ipus_per_replica = (int)(w->o.stages ? w->o.stages : w->default_stages);
    cfg.phantom = 1;
    cfg.topology = topology;
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    int status;

    if (rc != GCL_OK) {
        if (report_errors && example_init_usage_error("sim-step", rc))
            return 2;
        if (report_errors)
            fprintf(stderr, "sim-step: gcl_init failed: %s\n", gcl_status_string(rc));
        return rc == GCL_ERR_INVALID_ARGUMENT ? 2 : 1;
    }
    gcl_instance_info(inst, &w->info);
    snprintf(w->topology, sizeof w->topology, "%s", gcl_sim_topology(inst));
    snprintf(w->ipu, sizeof w->ipu, "%s", gcl_sim_device(inst));
    for (w->nparams = 0; w->nparams < 64; w->nparams++)
        if (gcl_sim_param(inst, w->nparams, &w->params[w->nparams]) != 0)
            break;
    status = simstep_resolve(w, inst);
    if (status == 0) {
        rc = gcl_run(inst, simstep_program, w);
        if (rc != GCL_OK) {
            /* Peers of a failed instance only know that it failed; its own message says why. */
            if (w->error[0])
                fprintf(stderr, "sim-step: %s\n", w->error);
            else if (w->info.instance_index == 0)
                fprintf(stderr, "sim-step: %s\n", gcl_instance_error(inst));
            status = 1;
        }
    }
    gcl_sim_plan_free(w->plan);
    w->plan = NULL;
    gcl_finalize(inst);
    return status;
}
