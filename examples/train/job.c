/* The job's layout and set-up; see job.h. */
#include "job.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gcl/popdist.h"
#include "gcl/popdist_env.h"

/* Pixel statistics of Fashion-MNIST's training set (pixels scaled to [0, 1]): inputs are
 * standardised with them, which lets SGD use one learning rate for every layer. */
#define PIXEL_MEAN 0.2860f
#define PIXEL_STD  0.3530f

double train_now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

double train_unix_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_REALTIME, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void fill_meta(train_job_t *job)
{
    const train_opts_t *o = job->o;
    ckpt_meta_t *m = &job->meta;
    memset(m, 0, sizeof *m);
    m->nparams = model_params(&job->shape);
    m->nstate = (uint32_t)job->nstate;
    ckpt_set_model(m, &job->shape);
    m->optimizer = o->optim.kind;
    m->lr_schedule = o->optim.schedule;
    m->grad_dtype = o->grad_dtype;
    m->lr = o->optim.lr;
    m->momentum = o->optim.kind == OPTIM_SGD ? o->optim.momentum : 0;
    m->beta1 = o->optim.beta1;
    m->beta2 = o->optim.beta2;
    m->eps = o->optim.eps;
    m->weight_decay = o->optim.weight_decay;
    m->grad_scale = o->grad_dtype == GCL_F16 ? o->grad_scale : 0;
    m->warmup_steps = (uint64_t)job->optim.warmup_steps;
    m->seed = o->seed;
    m->augment = (uint32_t)o->augment;
    m->global_batch = (uint64_t)job->global_batch;
    m->schedule_steps = (uint64_t)job->schedule_steps;
    m->train_samples = (uint64_t)job->data->train_x.count;
    m->replicas = (uint32_t)job->replicas;
    m->stages = (uint32_t)job->stages;
    m->micro_batch = (uint32_t)job->micro;
    m->accumulation = (uint32_t)job->accumulation;
}

/* Checks the options against the job and the data; returns 0 or 2 after one line. */
static int check_layout(train_job_t *job)
{
    const train_opts_t *o = job->o;
    if (job->stages > job->shape.nlayers) {
        fprintf(stderr,
                "train: %d pipeline stages (--ipus-per-replica) but the model has only %d "
                "layers to split; expected at most %d stages (each --hidden width adds a layer)\n",
                job->stages, job->shape.nlayers, job->shape.nlayers);
        return 2;
    }
    if (job->accumulation < job->stages) {
        fprintf(stderr,
                "train: --gradient-accumulation %d: a pipeline of %d stages needs at "
                "least %d micro-batches per step\n",
                job->accumulation, job->stages, job->stages);
        return 2;
    }
    if (job->global_batch > job->data->train_x.count) {
        fprintf(stderr,
                "train: the global batch of %ld samples (%d replicas x %d micro-batches x "
                "--batch-size %d) exceeds the %ld training samples\n",
                job->global_batch, job->replicas, job->accumulation, job->micro,
                job->data->train_x.count);
        return 2;
    }
    if (o->fault == FAULT_HOLD_AFTER_STEP && !getenv("TRAIN_HOLD_FILE")) {
        fprintf(stderr, "train: --fault hold-after-step:%ld needs TRAIN_HOLD_FILE, the file "
                        "whose creation ends the hold\n", o->fault_arg);
        return 2;
    }
    if (o->fault == FAULT_DIVERGE && o->fault_arg >= job->replicas) {
        fprintf(stderr, "train: --fault diverge:%ld: there are only %d replicas\n", o->fault_arg,
                job->replicas);
        return 2;
    }
    return 0;
}

int job_model(const train_opts_t *o, const dataset_t *data, model_shape_t *shape)
{
    model_spec_t spec;
    char err[1024];
    if (o->model->describe(&o->model_opts, 1, data->train_x.rows, data->train_x.cols, data->classes,
                           &spec, err, sizeof err) == 0 &&
        model_shape_build(shape, &spec, err, sizeof err) == 0)
        return 0;
    fprintf(stderr, "train: %s\n", err);
    return 2;
}

int job_init(train_job_t *job, const train_opts_t *o, const dataset_t *data, int replicas, int ipr,
             int bar)
{
    memset(job, 0, sizeof *job);
    job->o = o;
    job->progress_bar = bar;
    job->data = data;
    int rc = job_model(o, data, &job->shape);
    if (rc)
        return rc;
    job->replicas = replicas;
    job->stages = ipr;
    job->micro = o->batch_size;
    job->accumulation = o->accumulation ? o->accumulation : ipr > 1 ? 2 * ipr : 1;
    job->global_batch = (long)replicas * job->accumulation * job->micro;
    rc = check_layout(job);
    if (rc)
        return rc;
    model_split(&job->shape, job->stages, job->first);
    job->nstate = optim_state_vectors(&o->optim);
    job->steps_per_epoch = data->train_x.count / job->global_batch;
    job->schedule_steps = job->steps_per_epoch * o->epochs;
    job->optim = o->optim;
    if (o->optim.warmup_steps < 0)
        job->optim.warmup_steps = o->model->warmup_epochs * job->steps_per_epoch;
    job->total_steps =
        o->max_steps && o->max_steps < job->schedule_steps ? o->max_steps : job->schedule_steps;
    job->checkpoint_every = o->checkpoint_every ? o->checkpoint_every : job->steps_per_epoch;
    /* Ten progress lines per epoch, or a bar that moves fifty times. */
    long per_epoch = job->progress_bar ? 50 : 10;
    job->log_every =
        o->log_every ? o->log_every : (job->steps_per_epoch + per_epoch - 1) / per_epoch;
    for (int v = 0; v < 256; v++)
        job->pixel[v] = ((float)v / 255.0f - PIXEL_MEAN) / PIXEL_STD;
    fill_meta(job);
    job->saved_step = -1;
    pthread_mutex_init(&job->lock, NULL);
    pthread_cond_init(&job->cond, NULL);
    return 0;
}

/* Warns of a checkpoint skipped as corrupt, and counts them (CTX: an int). */
static void warn_line(void *ctx, const char *text)
{
    ++*(int *)ctx;
    fprintf(stderr, "train: warning: %s\n", text);
}

/* No checkpoint of the directory verifies. With none there at all, the run starts from the
 * beginning; but when there were some, starting over would throw their work away, and a
 * restart would find the same: one line, and status 2 (poprun does not restart after it). */
static int none_valid(train_job_t *job, int skipped)
{
    const char *dir = job->o->checkpoint_dir;
    if (skipped == 0) {
        printf("train: no valid checkpoint in %s: starting from the beginning\n", dir);
        return 0;
    }
    fprintf(stderr,
            "train: cannot resume: none of the %d checkpoint%s in %s verifies (each is named "
            "above), and starting over would lose their work; remove them to start from the "
            "beginning\n",
            skipped, skipped == 1 ? "" : "s", dir);
    return 2;
}

int job_prepare_checkpoints(train_job_t *job, ckpt_t *ck)
{
    const train_opts_t *o = job->o;
    char err[1024];
    if (ckpt_make_dir(o->checkpoint_dir, err, sizeof err)) {
        fprintf(stderr, "train: %s\n", err);
        return 1;
    }
    if (o->resume && popdist_restart_count() > 0)
        printf("train: restart %d of the job (%s=%d): resuming from the newest valid checkpoint\n",
               popdist_restart_count(), POPDIST_ENV_RESTART_COUNT, popdist_restart_count());
    if (o->resume) {
        int skipped = 0;
        int found = ckpt_find_latest(o->checkpoint_dir, ck, warn_line, &skipped, err, sizeof err);
        if (found < 0) {
            fprintf(stderr, "train: %s\n", err);
            return 1;
        }
        char path[4200];
        ckpt_path(o->checkpoint_dir, found ? ck->meta.step : 0, path, sizeof path);
        if (found && ckpt_compatible(&ck->meta, &job->meta, err, sizeof err)) {
            fprintf(stderr, "train: cannot resume from %s: %s\n", path, err);
            ckpt_free(ck);
            return 1;
        }
        if (!found)
            return none_valid(job, skipped);
        printf("train: resuming from %s (step %llu%s)\n", path, (unsigned long long)ck->meta.step,
               (long)ck->meta.step > job->total_steps ? ", past --max-steps: only evaluating" : "");
        job->resume = ck;
        job->saved_step = (long)ck->meta.step;
    }
    ckpt_prune(o->checkpoint_dir, o->keep_checkpoints); /* and stale temporary files */
    return 0;
}

int job_write_state(train_job_t *job, long step, const char *path, const float *data, int periodic,
                    char *err, size_t errlen)
{
    const train_opts_t *o = job->o;
    ckpt_meta_t meta = job->meta;
    meta.step = (uint64_t)step;
    if (ckpt_write(path, &meta, data, err, errlen) == 0) {
        if (periodic) {
            job->saved_step = step;
            ckpt_prune(o->checkpoint_dir, o->keep_checkpoints);
        }
        return 0;
    }
    if (!periodic || (errno != ENOSPC && errno != EDQUOT))
        return -1;
    char newest[4200] = "no checkpoint of this run was written yet";
    if (job->saved_step >= 0) {
        ckpt_path(o->checkpoint_dir, (uint64_t)job->saved_step, newest, sizeof newest);
        strncat(newest, " stays the newest", sizeof newest - strlen(newest) - 1);
    }
    job->ckpt_skipped++;
    fprintf(stderr,
            "train: warning: the checkpoint of step %ld was not written: %s; training goes "
            "on, and %s\n",
            step, err, newest);
    return 1;
}

int job_alloc(train_job_t *job)
{
    size_t steps = (size_t)job->total_steps * (size_t)job->stages;
    job->res.sim_step_s = calloc(steps ? steps : 1, sizeof(double));
    if (job->instance == 0 && (job->o->checkpoint_dir || job->o->save_weights))
        job->staging = malloc((1 + (size_t)job->nstate) * model_params(&job->shape) * 4);
    if (!job->res.sim_step_s ||
        (job->instance == 0 && !job->staging && (job->o->checkpoint_dir || job->o->save_weights))) {
        fprintf(stderr, "train: out of host memory\n");
        return 1;
    }
    return 0;
}

void job_free(train_job_t *job)
{
    free(job->res.sim_step_s);
    measure_free(&job->res.m);
    free(job->staging);
    pthread_cond_destroy(&job->cond);
    pthread_mutex_destroy(&job->lock);
}

int job_load_data(const train_opts_t *o, dataset_t *data)
{
    char err[1024];
    if (dataset_load(o->data_dir, o->train_samples, o->test_samples, data, err, sizeof err)) {
        fprintf(stderr, "train: cannot read the dataset: %s\n", err);
        return 1;
    }
    return 0;
}

int job_hold(long done)
{
    const char *path = getenv("TRAIN_HOLD_FILE");
    struct timespec tick = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 30000; i++) { /* 10 min */
        if (access(path, F_OK) == 0)
            return 0;
        nanosleep(&tick, NULL);
    }
    fprintf(stderr, "train: held after step %ld for 10 min: %s never appeared\n", done, path);
    return -1;
}
