/*
 * The per-IPU program: set up the stage, resume, then the training loop with its progress
 * reports, per-epoch evaluation and replica-consistency check, and checkpoints.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/popdist.h"
#include "gcl/preempt.h"
#include "gcl/sim.h"
#include "stages/elastic.h"
#include "job.h"
#include "report/report.h"
#include "stages/stage.h"

void train_fail(train_job_t *job, const char *fmt, ...)
{
    pthread_mutex_lock(&job->lock);
    if (!job->error[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(job->error, sizeof job->error, fmt, ap);
        va_end(ap);
    }
    job->aborted = 1;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
}

/* 64-bit FNV-1a of the stage's weights and optimizer state. */
static uint64_t state_hash(const stage_t *st)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (int v = -1; v < st->job->nstate; v++) {
        const uint8_t *p = (const uint8_t *)(v < 0 ? st->params : st->state[v]);
        for (size_t i = 0; i < st->np * sizeof(float); i++)
            h = (h ^ p[i]) * 0x100000001b3ull;
    }
    return h;
}

/* Every replica must hold bitwise the same weights: all-reduce the hash and its complement with
 * max, which gives the largest and (complemented) the smallest hash of the replicas; they are
 * equal only when every replica holds the same state. One small collective per stage. */
static gcl_status_t check_replicas(stage_t *st, const char *when)
{
    uint64_t h = state_hash(st), v[2] = {h, ~h};
    gcl_status_t rc = gcl_all_reduce(st->comm, v, v, 2, GCL_U64, GCL_MAX);
    if (rc != GCL_OK) {
        train_fail(st->job, "replica %d IPU %d: weight checksum all-reduce failed: %s", st->replica,
                   st->stage, gcl_last_error(st->comm));
        return rc;
    }
    if (v[0] == ~v[1])
        return GCL_OK;
    train_fail(st->job,
               "replicas diverged %s: the weights of pipeline stage %d differ between replicas "
               "(checksums from %016llx to %016llx; replica %d has %016llx). They must stay "
               "bitwise identical: this is a bug in the update or the all-reduce.",
               when, st->stage, (unsigned long long)~v[1], (unsigned long long)v[0], st->replica,
               (unsigned long long)h);
    return GCL_ERR_INTERNAL;
}

/* The training loop's bookkeeping for progress reports (meaningful on the last stage). */
typedef struct {
    double last_wall, epoch_wall;
    long last_done;
    double sums[3], epoch_sums[3]; /* loss, correct, samples: since the last report, the epoch */
} loop_t;

/* Sums the training loss since the last report over the replicas (last stage only). */
static gcl_status_t reduce_loss(stage_t *st, loop_t *lp)
{
    float s[3] = {(float)st->loss_sum, (float)st->correct, (float)st->seen};
    gcl_status_t rc = gcl_all_reduce(st->comm, s, s, 3, GCL_F32, GCL_SUM);
    if (rc != GCL_OK) {
        train_fail(st->job, "replica %d IPU %d: loss all-reduce failed: %s", st->replica, st->stage,
                   gcl_last_error(st->comm));
        return rc;
    }
    for (int i = 0; i < 3; i++) {
        lp->sums[i] = s[i];
        lp->epoch_sums[i] += s[i];
    }
    st->loss_sum = 0;
    st->correct = st->seen = 0;
    return GCL_OK;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

/* Writes STEPS_DONE's state to PATH: replica 0's stages copy their slices into the shared
 * staging buffer, and the last to arrive writes the file while the others go on. A stage
 * waits for the previous file to be written before it copies into the buffer again. A
 * PERIODIC checkpoint that finds the disk full is skipped with a warning (job_write_state). */
static gcl_status_t save_state(stage_t *st, long steps_done, const char *path, int periodic)
{
    train_job_t *job = st->job;
    if (st->replica != 0)
        return GCL_OK;
    pthread_mutex_lock(&job->lock);
    while (job->written < st->checkpoints && !job->aborted)
        pthread_cond_wait(&job->cond, &job->lock);
    int aborted = job->aborted;
    pthread_mutex_unlock(&job->lock);
    if (aborted)
        return GCL_ERR_ABORTED;
    size_t total = model_params(st->shape), bytes = st->np * sizeof(float);
    memcpy(job->staging + st->poff, st->params, bytes);
    for (int v = 0; v < job->nstate; v++)
        memcpy(job->staging + (size_t)(v + 1) * total + st->poff, st->state[v], bytes);
    st->checkpoints++;
    pthread_mutex_lock(&job->lock);
    int last = ++job->arrived == job->stages;
    if (last)
        job->arrived = 0;
    pthread_mutex_unlock(&job->lock);
    if (!last)
        return GCL_OK;
    const train_opts_t *o = job->o;
    if (o->fault_arg == steps_done && o->fault == FAULT_KILL_MID_CHECKPOINT)
        ckpt_set_fault(CKPT_FAULT_MID_WRITE);
    if (o->fault_arg == steps_done && o->fault == FAULT_KILL_BEFORE_RENAME)
        ckpt_set_fault(CKPT_FAULT_BEFORE_RENAME);
    char err[1024];
    int rc = job_write_state(job, steps_done, path, job->staging, periodic, err, sizeof err);
    pthread_mutex_lock(&job->lock);
    job->written++;
    pthread_cond_broadcast(&job->cond);
    pthread_mutex_unlock(&job->lock);
    if (rc >= 0)
        return GCL_OK;
    train_fail(job, "%s", err);
    return GCL_ERR_SYSTEM;
}

/* With --resume: replica 0 (instance 0) has read the checkpoint; every stage takes its slice
 * from replica 0 by broadcast, so the other instances need not see the directory at all. */
static gcl_status_t resume(stage_t *st, long *start)
{
    train_job_t *job = st->job;
    uint64_t head[2] = {0, 0}; /* found, step */
    if (st->replica == 0 && job->resume)
        head[0] = 1, head[1] = job->resume->meta.step;
    gcl_status_t rc = gcl_broadcast(st->comm, head, head, 2, GCL_U64, 0);
    if (rc == GCL_OK && head[0] && st->replica == 0) {
        size_t total = model_params(st->shape), bytes = st->np * sizeof(float);
        memcpy(st->params, job->resume->data + st->poff, bytes);
        for (int v = 0; v < job->nstate; v++)
            memcpy(st->state[v], job->resume->data + (size_t)(v + 1) * total + st->poff, bytes);
    }
    if (rc == GCL_OK && head[0])
        rc = gcl_broadcast(st->comm, st->params, st->params, st->np, GCL_F32, 0);
    for (int v = 0; rc == GCL_OK && head[0] && v < job->nstate; v++)
        rc = gcl_broadcast(st->comm, st->state[v], st->state[v], st->np, GCL_F32, 0);
    if (rc != GCL_OK) {
        train_fail(job, "replica %d IPU %d: broadcasting the checkpoint failed: %s", st->replica,
                   st->stage, gcl_last_error(st->comm));
        return rc;
    }
    *start = (long)head[1];
    return GCL_OK;
}

/* End of an epoch (or of training): evaluate, check the replicas agree, log. */
static gcl_status_t epoch_end(stage_t *st, long done, double loss, double acc, double wall)
{
    train_job_t *job = st->job;
    double test_loss = 0;
    long correct = 0, count = 0;
    GCL_CHECK(stage_evaluate(st, &test_loss, &correct, &count));
    char when[64];
    snprintf(when, sizeof when, "after step %ld", done);
    GCL_CHECK(check_replicas(st, when));
    if (st->replica != 0 || !st->last)
        return GCL_OK;
    report_epoch_end(job, done, loss, acc, wall, correct, count, test_loss, gcl_sim_time(st->ctx));
    return GCL_OK;
}

static gcl_status_t report_step(stage_t *st, long done, loop_t *lp)
{
    train_job_t *job = st->job;
    GCL_CHECK(reduce_loss(st, lp));
    if (!job->printer || st->replica != 0)
        return GCL_OK;
    double now = train_now_s();
    double rate = ratio((double)(done - lp->last_done) * job->global_batch, now - lp->last_wall);
    report_progress(job, done, ratio(lp->sums[0], lp->sums[2]), ratio(lp->sums[1], lp->sums[2]),
                    rate);
    lp->last_wall = now;
    lp->last_done = done;
    return GCL_OK;
}

/* Progress, the end of an epoch, checkpoints and test faults after step DONE - 1. */
static gcl_status_t after_step(stage_t *st, long done, loop_t *lp)
{
    train_job_t *job = st->job;
    const train_opts_t *o = job->o;
    int end = done % job->steps_per_epoch == 0 || done == job->total_steps;
    if (st->last && (end || done % job->log_every == 0))
        GCL_CHECK(report_step(st, done, lp));
    if (end) {
        double *e = lp->epoch_sums;
        GCL_CHECK(epoch_end(st, done, ratio(e[0], e[2]), ratio(e[1], e[2]),
                            train_now_s() - lp->epoch_wall));
        memset(lp->epoch_sums, 0, sizeof lp->epoch_sums);
        lp->last_wall = lp->epoch_wall = train_now_s(); /* rates leave the evaluation out */
    }
    if (o->checkpoint_dir && (done % job->checkpoint_every == 0 || done == job->total_steps)) {
        char path[4200];
        ckpt_path(o->checkpoint_dir, (uint64_t)done, path, sizeof path);
        GCL_CHECK(save_state(st, done, path, 1));
    }
    if (o->fault == FAULT_KILL_AFTER_STEP && done == o->fault_arg && train_fault_here(st)) {
        printf("train: killing this instance after step %ld at unix time %.3f (--fault)\n", done,
               train_unix_s());
        fflush(stdout);
        raise(SIGKILL);
    }
    if (o->fault == FAULT_HOLD_AFTER_STEP && done == o->fault_arg)
        return job_hold(done) == 0 ? GCL_OK : GCL_ERR_ABORTED;
    return GCL_OK;
}

/* The fault test of the consistency check: one replica's first weight moves by one ulp. */
static void diverge(stage_t *st)
{
    uint32_t bits;
    memcpy(&bits, st->params, 4);
    bits ^= 1;
    memcpy(st->params, &bits, 4);
}

/* Whether the job has been asked to stop (SIGTERM or SIGINT, to any instance) before step
 * DONE: every IPU of the job gets the same answer, so all stop after the same step. */
static gcl_status_t stop_requested(stage_t *st, int *sig)
{
    gcl_status_t rc = gcl_preempt_agree(st->ctx, sig);
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: %s", st->replica, st->stage,
                   gcl_ctx_last_error(st->ctx));
    return rc;
}

/* Stops training after DONE steps on signal SIG, with a checkpoint of them: written here
 * unless after_step wrote it already, or no step was done since the checkpoint resumed. */
static gcl_status_t preempt(stage_t *st, long done, long start, int sig)
{
    train_job_t *job = st->job;
    const train_opts_t *o = job->o;
    int saved = o->checkpoint_dir && done > 0;
    if (saved && done > start && done % job->checkpoint_every != 0) {
        char path[4200];
        ckpt_path(o->checkpoint_dir, (uint64_t)done, path, sizeof path);
        GCL_CHECK(save_state(st, done, path, 1));
    }
    pthread_mutex_lock(&job->lock);
    job->stop_signal = sig;
    job->stopped_at = done;
    job->stop_saved = saved;
    pthread_mutex_unlock(&job->lock);
    return GCL_OK;
}

/* The real time a step finished, for the time to recover from a lost instance (docs/chaos.md,
 * scripts/elastic-recovery): the first step of a run that goes on without it (a resize, or a
 * restart), and step $TRAIN_TIME_STEP. */
static void say_step_time(stage_t *st, long done, int first)
{
    train_job_t *job = st->job;
    const char *want = getenv("TRAIN_TIME_STEP");
    int asked = want && atol(want) == done;
    if (!job->printer || st->replica != 0 || st->stage != 0)
        return;
    if (first && (train_elastic_changed(job) || popdist_restart_count() > 0))
        printf("train: first step of this run (step %ld) finished at unix time %.3f\n", done,
               train_unix_s());
    if (asked)
        printf("train: step %ld finished at unix time %.3f\n", done, train_unix_s());
    fflush(stdout);
}

static gcl_status_t train_loop(stage_t *st, long start)
{
    train_job_t *job = st->job;
    gcl_job_info_t info;
    gcl_instance_info(gcl_ctx_instance(st->ctx), &info);
    loop_t lp = {.last_wall = train_now_s(), .last_done = start};
    lp.epoch_wall = lp.last_wall;
    for (long step = start; step < job->total_steps; step++) {
        int sig;
        GCL_CHECK(stop_requested(st, &sig));
        if (sig)
            return preempt(st, step, start, sig);
        gcl_status_t rc;
        if (train_elastic_boundary(st, step, &rc) || rc != GCL_OK)
            return rc; /* a replacement joins here (elastic.h) */
        train_elastic_before_step(st, step);
        gcl_sim_stats_t a, b;
        gcl_sim_stats(st->ctx, &a);
        st->wait_coll = st->wait_p2p = st->sim_coll = 0;
        double w0 = train_now_s();
        GCL_CHECK(stage_step(st, step));
        train_elastic_applied(st, step + 1);
        double w1 = train_now_s();
        gcl_sim_stats(st->ctx, &b);
        stage_measure_step(st, step, w1 - w0, &a, &b);
        if (st->replica == info.replica_offset) {
            job->res.sim_step_s[(size_t)st->stage * job->total_steps + step] =
                b.total_s - a.total_s;
            if (st->last)
                job->res.train_wall_s += w1 - w0;
        }
        if (job->o->fault == FAULT_DIVERGE && step == 0 && st->replica == job->o->fault_arg &&
            st->stage == 0)
            diverge(st);
        say_step_time(st, step + 1, step == start);
        GCL_CHECK(after_step(st, step + 1, &lp));
    }
    if (start >= job->total_steps) /* resumed a finished run: only the final evaluation */
        GCL_CHECK(epoch_end(st, job->total_steps, 0, 0, 0));
    return GCL_OK;
}

static void record_sim(stage_t *st)
{
    if (st->replica != 0)
        return;
    gcl_sim_stats_t s;
    gcl_sim_stats(st->ctx, &s);
    train_results_t *r = &st->job->res;
    r->sim_mem_peak[st->stage] = s.memory_peak;
    r->sim_mem_capacity = s.memory_capacity;
    r->sim_compute_s[st->stage] = s.compute_s;
    r->sim_total_s[st->stage] = s.total_s;
    double steps = st->m_count > 0 ? (double)st->m_count : 1;
    for (int l = st->l0; l < st->l1; l++)
        for (int p = 0; p < 2; p++)
            r->sim_layer_s[p][l] = st->sim_layer_s[p][l] / steps;
    r->sim_update_s[st->stage] = st->sim_update / steps;
}

gcl_status_t train_program(gcl_ctx_t ctx, void *arg)
{
    train_job_t *job = arg;
    stage_t st;
    long start = 0;
    pthread_mutex_lock(&job->lock);
    int aborted = job->aborted; /* instance 0's set-up failed: end at once */
    pthread_mutex_unlock(&job->lock);
    if (aborted)
        return GCL_ERR_ABORTED;
    gcl_status_t rc = stage_setup(&st, ctx, job);
    int restored = 0;
    if (rc == GCL_OK)
        rc = train_elastic_restore(&st, &start, &restored); /* a resized job goes on from memory */
    if (rc == GCL_OK && job->o->resume && !restored)
        rc = resume(&st, &start);
    if (rc == GCL_OK && !restored)
        train_elastic_applied(&st, start);
    if (rc == GCL_OK)
        rc = stage_measure_init(&st, start);
    /* Every IPU of the job has its memory: the banner (once: not again after a resize). A stage
     * that did not fit has said so in one line instead, and the others learn of it here. */
    int sig;
    if (rc == GCL_OK)
        rc = stop_requested(&st, &sig);
    if (rc == GCL_OK && !restored && job->instance == 0 && st.replica == 0 && st.stage == 0)
        report_banner(job, &job->info);
    if (rc == GCL_OK && st.replica == 0 && st.last && !restored) /* past --max-steps: no steps */
        job->res.start_step = start < job->total_steps ? start : job->total_steps;
    if (rc == GCL_OK)
        rc = train_loop(&st, start);
    train_elastic_save(&st);
    pthread_mutex_lock(&job->lock);
    int stopped = job->stop_signal != 0 || train_elastic_leaving(job);
    pthread_mutex_unlock(&job->lock);
    if (rc == GCL_OK && job->o->save_weights && !stopped)
        rc = save_state(&st, job->total_steps, job->o->save_weights, 0);
    if (rc == GCL_OK && st.replica == 0 && st.last && !stopped)
        job->res.steps_done = job->total_steps;
    record_sim(&st);
    if (rc == GCL_OK && !stopped && !train_elastic_changed(job))
        rc = stage_measure_collect(&st);
    stage_teardown(&st);
    if (rc != GCL_OK)
        train_fail(job, "replica %d IPU %d failed: %s", st.replica, st.stage,
                   gcl_status_string(rc));
    return rc;
}
