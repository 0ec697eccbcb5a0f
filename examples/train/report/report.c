/* Progress, summary and JSON; see report.h. */
#include "report/report.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stages/elastic.h"
#include "model/optim.h"
#include "pipeline/pipe.h"

void report_banner(const train_job_t *job, const gcl_job_info_t *info)
{
    const train_opts_t *o = job->o;
    char model[1024];
    model_text(&job->shape, model, sizeof model);
    printf("train: %ld training and %ld test samples from %s\n", job->data->train_x.count,
           job->data->test_x.count, o->data_dir);
    if (o->backend == BACKEND_MPI)
        printf("train: %s (%zu parameters), %d replica%s, one per MPI rank (--backend mpi: "
               "MPI_Allreduce, nothing simulated)\n",
               model, model_params(&job->shape), job->replicas, job->replicas > 1 ? "s" : "");
    else
        printf("train: %s (%zu parameters), %d replica%s x %d IPU%s over %d instance%s\n", model,
               model_params(&job->shape), job->replicas, job->replicas > 1 ? "s" : "", job->stages,
               job->stages > 1 ? "s" : "", info->num_instances, info->num_instances > 1 ? "s" : "");
    if (job->stages > 1) {
        printf("train: pipeline %s, %d micro-batches per step; stages hold layers",
               pipe_schedule_name(o->schedule), job->accumulation);
        for (int s = 0; s < job->stages; s++)
            printf(" %d-%d%s", job->first[s] + 1, job->first[s + 1],
                   s + 1 < job->stages ? "," : "\n");
    }
    char extra[160] = "";
    if (job->optim.warmup_steps > 0)
        snprintf(extra, sizeof extra, " after %ld warm-up steps", job->optim.warmup_steps);
    if (o->augment)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", images flipped");
    if (o->optim.weight_decay > 0)
        snprintf(extra + strlen(extra), sizeof extra - strlen(extra), ", weight decay %g",
                 o->optim.weight_decay);
    printf("train: global batch %ld (%d replica%s x %d micro-batch%s x %d), %s lr %g %s%s, "
           "%s gradients; %d epoch%s of %ld steps%s\n",
           job->global_batch, job->replicas, job->replicas > 1 ? "s" : "", job->accumulation,
           job->accumulation > 1 ? "es" : "", job->micro, optim_name(o->optim.kind), o->optim.lr,
           lr_schedule_name(o->optim.schedule), extra, gcl_dtype_name(o->grad_dtype), o->epochs,
           o->epochs > 1 ? "s" : "", job->steps_per_epoch,
           job->total_steps < job->schedule_steps ? " (stopping early at --max-steps)" : "");
    fflush(stdout);
}

static int epoch_of(const train_job_t *job, long done)
{
    return (int)((done + job->steps_per_epoch - 1) / job->steps_per_epoch);
}

void report_progress(const train_job_t *job, long done, double loss, double acc, double rate)
{
    int epoch = epoch_of(job, done);
    if (!job->progress_bar) {
        printf("epoch %d/%d step %ld/%ld loss %.4f train_acc %.4f samples/s %.0f\n", epoch,
               job->o->epochs, done, job->total_steps, loss, acc, rate);
        fflush(stdout);
        return;
    }
    long in_epoch = done - (long)(epoch - 1) * job->steps_per_epoch;
    char bar[31];
    int fill = (int)(30 * in_epoch / job->steps_per_epoch);
    for (int i = 0; i < 30; i++)
        bar[i] = i < fill ? '#' : '.';
    bar[30] = '\0';
    printf("\r\033[Kepoch %d/%d [%s] step %ld/%ld loss %.4f %.0f samples/s", epoch, job->o->epochs,
           bar, done, job->total_steps, loss, rate);
    fflush(stdout);
}

void report_epoch_end(train_job_t *job, long done, double loss, double acc, double wall,
                      long correct, long count, double test_loss, double sim_s)
{
    train_results_t *r = &job->res;
    r->test_correct = correct;
    r->test_count = count;
    r->test_accuracy = count ? (double)correct / (double)count : 0;
    r->test_loss = count ? test_loss / (double)count : 0;
    r->train_loss = loss;
    epoch_log_t *e = &r->epochs[r->nepochs < TRAIN_MAX_EPOCH_LOG ? r->nepochs++ : r->nepochs - 1];
    *e = (epoch_log_t){(int)((done + job->steps_per_epoch - 1) / job->steps_per_epoch),
                       done,
                       loss,
                       acc,
                       r->test_accuracy,
                       r->test_loss,
                       wall,
                       train_now_s() - job->t0,
                       sim_s};
    if (job->printer)
        report_epoch(job, e);
}

void report_epoch(const train_job_t *job, const epoch_log_t *e)
{
    printf("%sepoch %d/%d done: step %ld/%ld loss %.4f train_acc %.4f test_acc %.4f test_loss "
           "%.4f (%.1f s)\n",
           job->progress_bar ? "\r\033[K" : "", e->epoch, job->o->epochs, e->step, job->total_steps,
           e->loss, e->train_accuracy, e->test_accuracy, e->test_loss, e->wall_s);
    fflush(stdout);
}

void report_preempted(const train_job_t *job)
{
    int sig = job->stop_signal;
    const char *name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal";
    char path[4200];
    printf("%strain: %s: stopped after step %ld of %ld", job->progress_bar ? "\r\033[K" : "", name,
           job->stopped_at, job->total_steps);
    if (job->stop_saved && job->saved_step == job->stopped_at) {
        ckpt_path(job->o->checkpoint_dir, (uint64_t)job->stopped_at, path, sizeof path);
        printf("; checkpoint %s (--resume continues from it)\n", path);
    } else if (job->stop_saved && job->saved_step >= 0) { /* its write found the disk full */
        ckpt_path(job->o->checkpoint_dir, (uint64_t)job->saved_step, path, sizeof path);
        printf("; its checkpoint could not be written: --resume continues from %s\n", path);
    } else if (job->stop_saved) {
        printf("; its checkpoint could not be written, and there is none before it\n");
    } else {
        printf("; nothing saved (%s)\n",
               job->o->checkpoint_dir ? "no step done yet" : "no --checkpoint");
    }
    fflush(stdout);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

void report_sim_figures(const train_job_t *job, summary_t *s)
{
    long from = job->res.start_step, n = job->total_steps - from;
    s->sim_step_s = s->sim_samples_per_s = 0;
    double *t = n > 0 ? malloc((size_t)n * sizeof *t) : NULL;
    if (!t)
        return;
    /* A step of a replica ends when its slowest stage does; the median leaves out the first
     * step and those after an evaluation, whose clocks carry waiting from before. */
    for (long i = 0; i < n; i++) {
        t[i] = 0;
        for (int k = 0; k < job->stages; k++) {
            double v = job->res.sim_step_s[(size_t)k * job->total_steps + from + i];
            t[i] = v > t[i] ? v : t[i];
        }
    }
    qsort(t, (size_t)n, sizeof *t, cmp_double);
    s->sim_step_s = n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
    s->sim_samples_per_s = s->sim_step_s > 0 ? job->global_batch / s->sim_step_s : 0;
    free(t);
}

void report_summary(const train_job_t *job, const summary_t *s)
{
    const train_results_t *r = &job->res;
    long steps = r->steps_done - r->start_step;
    double samples = (double)steps * job->global_batch;
    printf("train: test accuracy %.4f (%ld/%ld), test loss %.4f\n", r->test_accuracy,
           r->test_correct, r->test_count, r->test_loss);
    printf("train: %ld steps of %ld samples in %.1f s of training: %.0f samples/s real "
           "(%.1f s in all, with loading and evaluation)\n",
           steps, job->global_batch, r->train_wall_s,
           r->train_wall_s > 0 ? samples / r->train_wall_s : 0, s->wall_s);
    report_measures_line(job);
    if (!s->simulated)
        printf("train: nothing simulated (--backend mpi trains on this host's CPUs)\n");
    if (s->sim_step_s > 0) {
        size_t peak = 0;
        for (int k = 0; k < job->stages; k++)
            peak = r->sim_mem_peak[k] > peak ? r->sim_mem_peak[k] : peak;
        char step[32];
        if (s->sim_step_s < 1e-3)
            snprintf(step, sizeof step, "%.1f us", 1e6 * s->sim_step_s);
        else
            snprintf(step, sizeof step, "%.3f ms", 1e3 * s->sim_step_s);
        printf("train: simulated on %s (%d IPUs): %s per step, %.0f samples/s; peak IPU "
               "memory %.1f MB of %.1f MB\n",
               s->topology, s->topology_ipus, step, s->sim_samples_per_s, peak / 1e6,
               r->sim_mem_capacity / 1e6);
        report_sim_split(job, s);
    }
    fflush(stdout);
}

static void json_config(FILE *f, const train_job_t *job, const summary_t *s)
{
    const train_opts_t *o = job->o;
    fprintf(f, "  \"replicas\": %d,\n  \"instances\": %d,\n  \"ipus_per_replica\": %d,\n",
            job->replicas, s->info.num_instances, job->stages);
    fprintf(f, "  \"pipeline_schedule\": \"%s\",\n  \"stage_first_layers\": [",
            pipe_schedule_name(o->schedule));
    for (int k = 0; k < job->stages; k++)
        fprintf(f, "%s%d", k ? ", " : "", job->first[k]);
    fprintf(f, "],\n  \"model\": [");
    for (int l = 0; l <= job->shape.nlayers; l++)
        fprintf(f, "%s%d", l ? ", " : "", job->shape.dims[l]);
    fprintf(f, "],\n  \"model_name\": \"%s\",\n  \"layers\": [", o->model->name);
    for (int l = 0; l < job->shape.nlayers; l++) {
        static const char *const kinds[] = {"dense", "conv", "pool"};
        const layer_t *y = &job->shape.layer[l];
        char name[48];
        layer_name(&job->shape, l, name, sizeof name);
        fprintf(f,
                "%s\n    {\"name\": \"%s\", \"kind\": \"%s\", \"h\": %d, \"w\": %d, \"c_in\": %d, "
                "\"c_out\": %d, \"out_h\": %d, \"out_w\": %d, \"kernel\": %d, \"stride\": %d, "
                "\"pad\": %d, \"relu\": %s, \"parameters\": %zu}",
                l ? "," : "", name, kinds[y->kind], y->g.h, y->g.w, y->g.c, y->g.oc, y->g.oh,
                y->g.ow, y->g.kernel, y->g.stride, y->g.pad, y->relu ? "true" : "false",
                y->nweights + y->nbias);
    }
    fprintf(f, "\n  ],\n  \"parameters\": %zu,\n", model_params(&job->shape));
    fprintf(f, "  \"optimizer\": \"%s\",\n  \"lr\": %.17g,\n  \"lr_schedule\": \"%s\",\n",
            optim_name(o->optim.kind), o->optim.lr, lr_schedule_name(o->optim.schedule));
    fprintf(f, "  \"momentum\": %.17g,\n  \"weight_decay\": %.17g,\n  \"seed\": %llu,\n",
            o->optim.momentum, o->optim.weight_decay, (unsigned long long)o->seed);
    fprintf(f, "  \"warmup_steps\": %ld,\n  \"augment\": \"%s\",\n", job->optim.warmup_steps,
            o->augment ? "flip" : "none");
    fprintf(f, "  \"grad_dtype\": \"%s\",\n  \"epochs\": %d,\n  \"steps_per_epoch\": %ld,\n",
            gcl_dtype_name(o->grad_dtype), o->epochs, job->steps_per_epoch);
    fprintf(f, "  \"global_batch\": %ld,\n  \"micro_batch\": %d,\n", job->global_batch, job->micro);
    fprintf(f, "  \"gradient_accumulation\": %d,\n  \"train_samples\": %ld,\n", job->accumulation,
            job->data->train_x.count);
}

/* Replica 0's simulated memory and clocks, stage by stage. */
static void json_sim_stages(FILE *f, const train_job_t *job)
{
    const train_results_t *r = &job->res;
    fprintf(f, "  \"sim_memory_capacity_bytes\": %zu,\n  \"sim_memory_peak_bytes\": [",
            r->sim_mem_capacity);
    for (int k = 0; k < job->stages; k++)
        fprintf(f, "%s%zu", k ? ", " : "", r->sim_mem_peak[k]);
    fprintf(f, "],\n  \"sim_total_s\": [");
    for (int k = 0; k < job->stages; k++)
        fprintf(f, "%s%.9g", k ? ", " : "", r->sim_total_s[k]);
    fprintf(f, "],\n  \"sim_compute_s\": [");
    for (int k = 0; k < job->stages; k++)
        fprintf(f, "%s%.9g", k ? ", " : "", r->sim_compute_s[k]);
    fprintf(f, "],\n");
}

static void json_results(FILE *f, const train_job_t *job, const summary_t *s)
{
    const train_results_t *r = &job->res;
    double samples = (double)(r->steps_done - r->start_step) * job->global_batch;
    fprintf(f, "  \"test_accuracy\": %.6f,\n  \"test_loss\": %.6f,\n", r->test_accuracy,
            r->test_loss);
    fprintf(f, "  \"test_correct\": %ld,\n  \"test_samples\": %ld,\n  \"train_loss\": %.6f,\n",
            r->test_correct, r->test_count, r->train_loss);
    fprintf(f, "  \"start_step\": %ld,\n  \"steps\": %ld,\n", r->start_step, r->steps_done);
    fprintf(f, "  \"train_time_s\": %.3f,\n  \"wall_time_s\": %.3f,\n  \"samples_per_s\": %.1f,\n",
            r->train_wall_s, s->wall_s, r->train_wall_s > 0 ? samples / r->train_wall_s : 0);
    if (s->sim_step_s > 0) {
        fprintf(f, "  \"topology\": \"%s\",\n  \"topology_ipus\": %d,\n", s->topology,
                s->topology_ipus);
        fprintf(f, "  \"sim_step_time_s\": %.9g,\n  \"sim_samples_per_s\": %.1f,\n", s->sim_step_s,
                s->sim_samples_per_s);
    } else {
        fprintf(f, "  \"topology\": null,\n  \"sim_step_time_s\": null,\n"
                   "  \"sim_samples_per_s\": null,\n");
    }
    report_json_measures(f, job, s);
    if (s->simulated)
        json_sim_stages(f, job);
    else
        fprintf(f, "  \"sim_memory_capacity_bytes\": null,\n  \"sim_memory_peak_bytes\": null,\n"
                   "  \"sim_total_s\": null,\n  \"sim_compute_s\": null,\n");
    train_elastic_json(f, job);
    fprintf(f, "  \"epoch_history\": [");
    for (int i = 0; i < r->nepochs; i++) {
        const epoch_log_t *e = &r->epochs[i];
        fprintf(f,
                "%s\n    {\"epoch\": %d, \"step\": %ld, \"loss\": %.6f, \"train_accuracy\": %.6f, "
                "\"test_accuracy\": %.6f, \"test_loss\": %.6f, \"time_s\": %.3f, "
                "\"elapsed_s\": %.3f, \"sim_elapsed_s\": ",
                i ? "," : "", e->epoch, e->step, e->loss, e->train_accuracy, e->test_accuracy,
                e->test_loss, e->wall_s, e->elapsed_s);
        if (s->simulated)
            fprintf(f, "%.9g}", e->sim_elapsed_s);
        else
            fprintf(f, "null}");
    }
    fprintf(f, "\n  ]\n");
}

int report_json(const train_job_t *job, const summary_t *s, const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "train: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "{\n");
    json_config(f, job, s);
    json_results(f, job, s);
    fprintf(f, "}\n");
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "train: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
