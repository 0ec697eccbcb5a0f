/* sim-step's summary on stdout and its JSON result. */
#include <stdio.h>

#include "simstep.h"

static const char *const term_names[] = {"compute", "exchange", "sync", "idle"};

/* The term with the largest mean share of an IPU's step. */
static const char *dominant(const simstep_result_t *r)
{
    double t[4] = {r->compute_us, r->exchange_us, r->sync_us, r->idle_us};
    int best = 0;
    for (int i = 1; i < 4; i++)
        if (t[i] > t[best])
            best = i;
    return term_names[best];
}

static double share(double part, const simstep_result_t *r)
{
    double all = r->compute_us + r->exchange_us + r->sync_us + r->idle_us;
    return all > 0 ? 100.0 * part / all : 0;
}

static double samples_per_s(const simstep_t *w)
{
    return w->res.step_us > 0 ? simstep_global_batch(w) / (w->res.step_us / 1e6) : 0;
}

static void print_summary(const simstep_t *w)
{
    const simstep_opts_t *o = &w->o;
    const simstep_result_t *r = &w->res;
    printf("sim-step: model %s: %.4g parameters, %.4g FLOP forward per sample\n", o->model,
           o->params, o->flops);
    printf("  job: %d replicas x %d stages = %d IPUs on %s, %d instances\n", w->info.num_replicas,
           w->stages, w->info.num_replicas * w->stages, w->topology, w->info.num_instances);
    printf("  batch: micro-batch %ld x accumulation %ld x %d replicas = %.0f samples per step;"
           " gradients %s, compute %s at %.0f%% of peak\n",
           o->micro_batch, w->accum, w->info.num_replicas, simstep_global_batch(w),
           gcl_dtype_name(o->grad_type), gcl_dtype_name(o->comp_type), 100 * o->efficiency);
    printf("  step time: %.3f us simulated (slowest IPU, mean of %ld steps)\n", r->step_us,
           o->steps);
    printf("  throughput: %.1f samples/s simulated\n", samples_per_s(w));
    printf("  per IPU and step (mean): compute %.1f%%, exchange %.1f%%, sync %.1f%%, idle %.1f%%;"
           " gradient all-reduce %.1f%% (%s)\n",
           share(r->compute_us, r), share(r->exchange_us, r), share(r->sync_us, r),
           share(r->idle_us, r), share(r->allreduce_us, r), r->algo);
    printf("  dominant: %s; peak simulated memory %.1f MB per IPU\n", dominant(r),
           (double)r->peak_memory / 1e6);
}

static int write_json(const simstep_t *w)
{
    const simstep_opts_t *o = &w->o;
    const simstep_result_t *r = &w->res;
    FILE *f = fopen(o->json, "w");
    if (!f) {
        perror(o->json);
        return 1;
    }
    fprintf(f,
            "{\"model\": \"%s\", \"params\": %.0f, \"flops_per_sample\": %.0f, "
            "\"activation_size\": %.0f, \"compute_efficiency\": %g, \"backward_factor\": %g,\n"
            " \"micro_batch\": %ld, \"gradient_accumulation\": %ld, \"global_batch\": %.0f, "
            "\"replicas\": %d, \"stages\": %d, \"ipus\": %d, \"instances\": %d, "
            "\"topology\": \"%s\", \"grad_type\": \"%s\", \"compute_type\": \"%s\", "
            "\"steps\": %ld, \"warmup\": %ld,\n",
            o->model, o->params, o->flops, o->act_elems, o->efficiency, SIMSTEP_BACKWARD_FACTOR,
            o->micro_batch, w->accum, simstep_global_batch(w), w->info.num_replicas, w->stages,
            w->info.num_replicas * w->stages, w->info.num_instances, w->topology,
            gcl_dtype_name(o->grad_type), gcl_dtype_name(o->comp_type), o->steps, o->warmup);
    fprintf(f,
            " \"grad_bytes_per_ipu\": %zu, \"activation_bytes_per_message\": %zu, "
            "\"allreduce_algorithm\": \"%s\", \"step_time_us\": %.6f, \"samples_per_s\": %.3f,\n"
            " \"compute_us\": %.6f, \"exchange_us\": %.6f, \"sync_us\": %.6f, \"idle_us\": %.6f, "
            "\"allreduce_us\": %.6f, \"dominant\": \"%s\", \"peak_memory_bytes\": %llu}\n",
            w->grad_count * gcl_dtype_size(o->grad_type),
            w->act_count * gcl_dtype_size(o->comp_type), r->algo, r->step_us, samples_per_s(w),
            r->compute_us, r->exchange_us, r->sync_us, r->idle_us, r->allreduce_us, dominant(r),
            (unsigned long long)r->peak_memory);
    if (fclose(f) != 0) {
        perror(o->json);
        return 1;
    }
    return 0;
}

int simstep_report(const simstep_t *w)
{
    print_summary(w);
    fflush(stdout);
    return w->o.json ? write_json(w) : 0;
}
