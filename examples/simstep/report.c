/* sim-step's summary on stdout and its JSON result. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "simstep.h"

static const char *const term_names[] = {"compute", "exchange", "sync", "host", "idle"};

static void terms(const simstep_result_t *r, double t[5])
{
    t[0] = r->compute_us, t[1] = r->exchange_us, t[2] = r->sync_us, t[3] = r->host_us;
    t[4] = r->idle_us;
}

/* The term with the largest mean share of an IPU's step. */
static const char *dominant(const simstep_result_t *r)
{
    double t[5];
    int best = 0;

    terms(r, t);
    for (int i = 1; i < 5; i++)
        if (t[i] > t[best])
            best = i;
    return term_names[best];
}

static double share(double part, const simstep_result_t *r)
{
    double t[5], all = 0;

    terms(r, t);
    for (int i = 0; i < 5; i++)
        all += t[i];
    return all > 0 ? 100.0 * part / all : 0;
}

/* FLOPs of the model's forward and backward (2 x forward) over the step, per IPU-second of
 * the GC200's f16 peak: the share of the peak the simulated step reaches. */
static double achieved(const simstep_t *w)
{
    double ipus = (double)w->info.num_replicas * w->stages;
    double flops = 3.0 * w->minfo.flops_per_sample * simstep_global_batch(w);

    return w->res.step_us > 0 ? flops / (w->res.step_us * 1e-6 * ipus * 250e12) : 0;
}

/* The pod's constant KEY (0 when it has none). */
static double constant(const simstep_t *w, const char *key)
{
    for (int i = 0; i < w->nparams; i++)
        if (!strcmp(w->params[i].key, key))
            return w->params[i].value;
    return 0;
}

/* One evaluation: its micro-batches through the forward passes alone, as lock-step cycles of
 * the busiest IPU's forward work and a host exchange (the pipeline fills first). */
static double eval_time(const simstep_t *w)
{
    double busiest = 0, per = (double)w->info.num_replicas * (double)w->micro;
    double micro = ceil(w->o.eval_samples / per);

    for (int s = 0; s < w->stages; s++) {
        double fwd = 0;

        for (int f = 0; f < w->pinfo.fragments; f++)
            fwd += w->frag[f].stage == s ? w->frag[f].fwd_s : 0;
        busiest = fwd > busiest ? fwd : busiest;
    }
    if (w->o.eval_samples <= 0)
        return 0;
    /* Each cycle: the busiest IPU's forward, the micro-batch's stream copy on IPU 0 (at most)
     * and, in a pipeline, the cycle's host sync. */
    busiest += (double)w->micro * w->minfo.input_bytes / (constant(w, "streaming_gbs") * 1e9);
    if (w->pinfo.fragments > 1)
        busiest += constant(w, "host_sync_ns") * 1e-9;
    return (micro + w->pinfo.fragments - 1) * busiest;
}

/* The time to train and its parts: training steps, evaluations and overheads (0 when not
 * asked). */
static double time_to_train(const simstep_t *w, double *train_s, double *eval_s, long *evals)
{
    double samples =
        w->o.train_samples ? w->o.train_samples : w->o.epochs * w->minfo.dataset_samples;
    double every = w->o.eval_every > 0 ? w->o.eval_every : w->minfo.dataset_samples;

    if (samples <= 0)
        return 0;
    *train_s = gcl_sim_time_to_train(w->res.step_us * 1e-6, (long)simstep_global_batch(w),
                                     samples, 0);
    *evals = w->o.eval_samples <= 0 ? 0 : every > 0 ? (long)ceil(samples / every - 1e-9) : 1;
    *eval_s = (double)*evals * eval_time(w);
    return *train_s + *eval_s + w->o.overhead_s;
}

double simstep_time_to_train(const simstep_t *w)
{
    double train_s, eval_s;
    long evals;

    return time_to_train(w, &train_s, &eval_s, &evals);
}

static void print_stage(const simstep_t *w, int s)
{
    const gcl_sim_stage_t *st = &w->stage[s];
    gcl_layer_t a, b;
    double peak = (double)w->res.stage[s].peak_memory;

    gcl_sim_model_layer(w->model, st->first_layer, &a);
    gcl_sim_model_layer(w->model, st->last_layer - 1, &b);
    if (st->layers == st->last_layer - st->first_layer)
        printf("  stage %d: layers %d-%d (%s .. %s)", s, st->first_layer, st->last_layer - 1,
               a.name, b.name);
    else /* a placement's IPU holds some of the layers between */
        printf("  stage %d: %d layers of %d-%d (%s .. %s)", s, st->layers, st->first_layer,
               st->last_layer - 1, a.name, b.name);
    printf(", %.1f M weights; per micro-batch %.3f ms "
           "forward, %.3f ms backward%s; memory %.1f of %.1f MB (headroom %.1f MB)\n",
           st->weights / 1e6,
           st->fwd_s * 1e3, st->bwd_s * 1e3, st->recompute_s > 0 ? " (+ recomputation)" : "",
           peak / 1e6, st->mem_capacity / 1e6, (st->mem_capacity - peak) / 1e6);
}

void simstep_print(const simstep_t *w)
{
    const simstep_result_t *r = &w->res;
    const gcl_sim_model_info_t *m = &w->minfo;
    double train_s = 0, eval_s = 0;
    long evals = 0;
    double ttt = time_to_train(w, &train_s, &eval_s, &evals);

    printf("sim-step: model %s: %d layers, %.4g parameters, %.4g FLOP forward per sample", m->name,
           m->layers, m->params, m->flops_per_sample);
    if (m->samples_per_unit > 1)
        printf(" (%g samples per pack)", m->samples_per_unit);
    printf("\n  job: %d replica%s x %d stage%s = %d %s IPUs on %s, %d instance%s; %s, recompute "
           "%s, %s with %s state, %s gradients\n",
           w->info.num_replicas, w->info.num_replicas == 1 ? "" : "s", w->stages,
           w->stages == 1 ? "" : "s", w->info.num_replicas * w->stages, w->ipu, w->topology,
           w->info.num_instances, w->info.num_instances == 1 ? "" : "s", w->pinfo.schedule,
           w->pinfo.recompute, w->pinfo.optimizer, w->pinfo.optimizer_state,
           gcl_dtype_name(w->o.grad_type));
    printf("  batch: micro-batch %ld x accumulation %ld x %d replicas = %.0f samples per step\n",
           w->micro, w->accum, w->info.num_replicas, simstep_global_batch(w));
    for (int s = 0; s < w->stages; s++)
        print_stage(w, s);
    printf("  step time: %.3f ms simulated (slowest IPU, mean of %ld steps)\n", r->step_us / 1e3,
           w->o.steps);
    printf("  throughput: %.1f samples/s simulated (%.1f%% of the f16 peak)\n",
           simstep_samples_per_s(w), 100 * achieved(w));
    printf("  per IPU and step (mean): compute %.1f%%, exchange %.1f%%, sync %.1f%%, host %.1f%%, "
           "idle %.1f%%; gradient reduction %.1f%% (%s)\n",
           share(r->compute_us, r), share(r->exchange_us, r), share(r->sync_us, r),
           share(r->host_us, r), share(r->idle_us, r), share(r->reduce_us, r), r->algo);
    if (w->stages > 1 && w->pinfo.cycles > 0)
        printf("  pipeline: %d forward stages, %ld cycles of PopART's schedule; idle %.1f%% of the "
               "step on the mean IPU; bubble %.1f%% on the busiest IPU ((2P-2)/(A+2P-2) = "
               "%.1f%%), the rest is imbalance between IPUs\n",
               w->pinfo.fragments, w->pinfo.cycles, share(r->pipeline_idle_us, r),
               share(r->bubble_us, r), 100 * w->pinfo.bubble);
    else if (w->stages > 1)
        printf(
            "  pipeline: idle %.1f%% of the step on the mean stage; bubble %.1f%% on the busiest "
            "stage ((K-1)/(A+K-1) = %.1f%%), the rest is imbalance between stages\n",
            share(r->pipeline_idle_us, r), share(r->bubble_us, r), 100 * w->pinfo.bubble);
    printf("  dominant: %s; peak simulated memory %.1f MB per IPU\n", dominant(r),
           (double)r->peak_memory / 1e6);
    if (ttt > 0)
        printf("  time to train: %.1f s (%.2f h): %.1f s of training for %.0f samples at %.1f "
               "samples/s, %ld evaluations of %.0f samples in %.1f s, %.0f s of overheads\n",
               ttt, ttt / 3600, train_s,
               w->o.train_samples ? w->o.train_samples : w->o.epochs * w->minfo.dataset_samples,
               simstep_samples_per_s(w), evals, w->o.eval_samples, eval_s, w->o.overhead_s);
    fflush(stdout);
}

static void write_stages(FILE *f, const simstep_t *w)
{
    fprintf(f, " \"per_stage\": [");
    for (int s = 0; s < w->stages; s++) {
        const gcl_sim_stage_t *st = &w->stage[s];
        const simstep_stage_result_t *x = &w->res.stage[s];

        fprintf(f,
                "%s\n  {\"stage\": %d, \"first_layer\": %d, \"last_layer\": %d, \"weights\": %.0f, "
                "\"peak_memory_bytes\": %llu, \"memory_headroom_bytes\": %.0f, "
                "\"plan_memory\": {\"weights\": %.0f, \"gradients\": %.0f, \"optimizer\": %.0f, "
                "\"stash\": %.0f, \"activations\": %.0f, \"code\": %.0f, \"total\": %.0f}, "
                "\"fwd_us\": %.6f, \"bwd_us\": %.6f, \"recompute_us\": %.6f, \"in_flight\": %d, "
                "\"step_us\": %.6f, \"compute_us\": %.6f, \"exchange_us\": %.6f, \"sync_us\": "
                "%.6f, \"host_wait_us\": %.6f, \"idle_us\": %.6f, \"bubble_us\": %.6f}",
                s ? "," : "", s, st->first_layer, st->last_layer - 1, st->weights,
                (unsigned long long)x->peak_memory, st->mem_capacity - (double)x->peak_memory,
                st->mem_weights, st->mem_gradients, st->mem_optimizer, st->mem_stash,
                st->mem_activations, st->mem_code, st->mem_total, st->fwd_s * 1e6, st->bwd_s * 1e6,
                st->recompute_s * 1e6, st->in_flight, x->step_us, x->compute_us, x->exchange_us,
                x->sync_us, x->host_us, x->idle_us, x->bubble_us);
    }
    fprintf(f, "]");
}

/* The pod's constants, as this run had them, with their kinds and ranges. */
static void write_constants(FILE *f, const simstep_t *w)
{
    fprintf(f, ",\n \"constants\": [");
    for (int i = 0; i < w->nparams; i++) {
        const gcl_sim_param_t *p = &w->params[i];

        fprintf(f,
                "%s\n  {\"key\": \"%s\", \"kind\": \"%s\", \"unit\": \"%s\", \"value\": %.9g, "
                "\"lo\": %.9g, \"hi\": %.9g, \"source\": \"",
                i ? "," : "", p->key, p->kind, p->unit, p->value, p->lo, p->hi);
        for (const char *c = p->source; *c; c++)
            fprintf(f, *c == '"' || *c == '\\' ? "\\%c" : "%c", *c);
        fprintf(f, "\"}");
    }
    fprintf(f, "]");
}

static void write_body(FILE *f, const simstep_t *w)
{
    const simstep_opts_t *o = &w->o;
    const simstep_result_t *r = &w->res;
    const gcl_sim_stage_t *s0 = &w->stage[0];

    fprintf(
        f,
        "{\"model\": \"%s\", \"params\": %.0f, \"flops_per_sample\": %.0f, "
        "\"activation_size\": %.0f, \"compute_efficiency\": %.6f, \"backward_factor\": 2,\n"
        " \"micro_batch\": %ld, \"gradient_accumulation\": %ld, \"global_batch\": %.0f, "
        "\"replicas\": %d, \"stages\": %d, \"ipus\": %d, \"instances\": %d, "
        "\"topology\": \"%s\", \"ipu\": \"%s\", \"grad_type\": \"%s\", \"compute_type\": \"f16\", "
        "\"steps\": %ld, \"warmup\": %ld,\n",
        w->minfo.name, w->minfo.params, w->minfo.flops_per_sample,
        w->stages > 1 ? s0->out_values / (double)w->micro : 0, achieved(w), w->micro, w->accum,
        simstep_global_batch(w), w->info.num_replicas, w->stages, w->info.num_replicas * w->stages,
        w->info.num_instances, w->topology, w->ipu, gcl_dtype_name(o->grad_type), o->steps,
        o->warmup);
    fprintf(f,
            " \"sequence_length\": %d, \"schedule\": \"%s\", \"recompute\": \"%s\", "
            "\"optimizer\": \"%s\", \"optimizer_state\": \"%s\", \"host_servers\": %ld,\n",
            strcmp(o->model, "bert-large") == 0 ? o->seq : 0, w->pinfo.schedule, w->pinfo.recompute,
            w->pinfo.optimizer, w->pinfo.optimizer_state, o->host_servers);
    fprintf(f,
            " \"grad_bytes_per_ipu\": %.0f, \"activation_bytes_per_message\": %.0f, "
            "\"allreduce_algorithm\": \"%s\", \"step_time_us\": %.6f, \"samples_per_s\": %.3f,\n"
            " \"compute_us\": %.6f, \"exchange_us\": %.6f, \"sync_us\": %.6f, \"idle_us\": %.6f, "
            "\"host_wait_us\": %.6f, \"allreduce_us\": %.6f, \"bubble_fraction\": %.6f, "
            "\"bubble_formula\": %.6f, \"pipeline_idle_us\": %.6f, \"dominant\": \"%s\", "
            "\"peak_memory_bytes\": %llu,\n",
            s0->weights * gcl_dtype_size(o->grad_type), w->stages > 1 ? s0->out_values * 2 : 0,
            r->algo, r->step_us, simstep_samples_per_s(w), r->compute_us, r->exchange_us,
            r->sync_us, r->idle_us, r->host_us, r->reduce_us,
            r->step_us > 0 ? r->bubble_us / r->step_us : 0, w->pinfo.bubble, r->pipeline_idle_us,
            dominant(r), (unsigned long long)r->peak_memory);
    fprintf(f,
            " \"sequences_per_pack\": %g, \"placement\": \"%s\", \"fragments\": %d, "
            "\"pipeline_cycles\": %ld,\n",
            w->minfo.samples_per_unit, o->placement ? o->placement : "", w->pinfo.fragments,
            w->pinfo.cycles);
    write_stages(f, w);
    write_constants(f, w);
}

int simstep_write_json(const simstep_t *w, const char *sensitivity_json)
{
    double train_s = 0, eval_s = 0;
    long evals = 0;
    double ttt = time_to_train(w, &train_s, &eval_s, &evals);
    FILE *f = fopen(w->o.json, "w");

    if (!f) {
        perror(w->o.json);
        return 1;
    }
    write_body(f, w);
    if (ttt > 0)
        fprintf(f,
                ",\n \"time_to_train_s\": %.6f, \"train_s\": %.6f, \"eval_s\": %.6f, "
                "\"evaluations\": %ld, \"run_overhead_s\": %.6f",
                ttt, train_s, eval_s, evals, w->o.overhead_s);
    if (sensitivity_json)
        fprintf(f, ",\n \"sensitivity\": %s", sensitivity_json);
    fprintf(f, "}\n");
    if (fclose(f) != 0) {
        perror(w->o.json);
        return 1;
    }
    return 0;
}
