/*
 * Per-step measurements of the gcl backend (stage.h): each IPU thread records its steps' real
 * time, its host-side waits and its simulated clock's shares; at the end one all-gather per
 * stage brings every replica's record to replica 0, which keeps them in job->res.m for the
 * report (report.c).
 *
 * Each record travels as IPU_RECORD_DOUBLES + 3 x steps doubles, moved as u64 words (a gather
 * copies bits; libgcl has no f64 type). The gather comes after the simulated statistics are
 * taken, so it is no part of any simulated figure.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "stages/stage.h"

gcl_status_t stage_measure_init(stage_t *st, long from)
{
    long n = st->job->total_steps - from;
    st->m_from = from;
    st->m_count = n > 0 ? n : 0;
    size_t bytes = (size_t)(st->m_count ? st->m_count : 1) * sizeof(double);
    st->m_step = calloc(1, bytes);
    st->m_coll = calloc(1, bytes);
    st->m_p2p = calloc(1, bytes);
    if (st->m_step && st->m_coll && st->m_p2p)
        return GCL_OK;
    train_fail(st->job, "replica %d IPU %d: out of host memory for the step measurements",
               st->replica, st->stage);
    return GCL_ERR_NO_HOST_MEMORY;
}

void stage_measure_step(stage_t *st, long step, double step_s, const gcl_sim_stats_t *a,
                        const gcl_sim_stats_t *b)
{
    long i = step - st->m_from;
    if (i < 0 || i >= st->m_count)
        return;
    st->m_step[i] = step_s;
    st->m_coll[i] = st->wait_coll;
    st->m_p2p[i] = st->wait_p2p;
    ipu_record_t *r = &st->rec;
    if (i == 0) {
        r->first_step_s = train_now_s() - st->job->t0;
        if (st->job->instance == 0 && st->replica == 0 && st->stage == 0)
            st->job->res.first_step_unix_s = train_unix_s();
    }
    r->sim_step_s += b->total_s - a->total_s;
    r->sim_compute_s += b->compute_s - a->compute_s;
    r->sim_exchange_s += b->exchange_s - a->exchange_s;
    r->sim_sync_s += b->sync_s - a->sync_s;
    r->sim_idle_s += b->idle_s - a->idle_s;
    r->sim_host_wait_s += b->host_wait_s - a->host_wait_s;
    r->sim_allreduce_s += st->sim_coll;
}

/* The record of this IPU as it is now: its memory, its process's peak resident size. */
static void finish_record(stage_t *st)
{
    gcl_sim_stats_t s;
    gcl_sim_stats(st->ctx, &s);
    ipu_record_t *r = &st->rec;
    r->mem_peak = (double)s.memory_peak;
    r->mem_capacity = (double)s.memory_capacity;
    r->mem_weights = (double)st->mem_weights;
    r->mem_gradients = (double)st->mem_gradients;
    r->mem_optimizer = (double)st->mem_optimizer;
    r->mem_activations = (double)st->mem_activations;
    r->mem_stash = (double)st->mem_stash;
    struct rusage ru;
    r->host_peak_bytes = getrusage(RUSAGE_SELF, &ru) == 0 ? 1024.0 * (double)ru.ru_maxrss : 0;
}

/* The job's table of records, made by the first of replica 0's stages to get here. */
static int results_ready(train_job_t *job, long n)
{
    step_measures_t *m = &job->res.m;
    pthread_mutex_lock(&job->lock);
    if (!m->ipu) {
        size_t nipus = (size_t)job->replicas * (size_t)job->stages, all = nipus * (size_t)n;
        m->nipus = (int)nipus;
        m->nsteps = n;
        m->ipu = calloc(nipus, sizeof *m->ipu);
        m->step_s = calloc(all ? all : 1, sizeof(double));
        m->coll_s = calloc(all ? all : 1, sizeof(double));
        m->p2p_s = calloc(all ? all : 1, sizeof(double));
    }
    int ok = m->ipu && m->step_s && m->coll_s && m->p2p_s;
    pthread_mutex_unlock(&job->lock);
    return ok;
}

/* Replica 0's stage copies the gathered records of every replica (its stage) into the job. */
static void store(stage_t *st, const double *all, size_t per)
{
    step_measures_t *m = &st->job->res.m;
    size_t n = (size_t)st->m_count;
    for (int r = 0; r < st->job->replicas; r++) {
        const double *p = all + (size_t)r * per;
        size_t g = (size_t)r * st->job->stages + st->stage;
        memcpy(&m->ipu[g], p, sizeof(ipu_record_t));
        memcpy(m->step_s + g * n, p + IPU_RECORD_DOUBLES, n * sizeof(double));
        memcpy(m->coll_s + g * n, p + IPU_RECORD_DOUBLES + n, n * sizeof(double));
        memcpy(m->p2p_s + g * n, p + IPU_RECORD_DOUBLES + 2 * n, n * sizeof(double));
    }
}

gcl_status_t stage_measure_collect(stage_t *st)
{
    finish_record(st);
    size_t n = (size_t)st->m_count, per = IPU_RECORD_DOUBLES + 3 * n;
    double *mine = malloc(per * sizeof(double));
    double *all = malloc(per * (size_t)st->job->replicas * sizeof(double));
    gcl_status_t rc = GCL_ERR_NO_HOST_MEMORY;
    if (mine && all) {
        memcpy(mine, &st->rec, sizeof(ipu_record_t));
        memcpy(mine + IPU_RECORD_DOUBLES, st->m_step, n * sizeof(double));
        memcpy(mine + IPU_RECORD_DOUBLES + n, st->m_coll, n * sizeof(double));
        memcpy(mine + IPU_RECORD_DOUBLES + 2 * n, st->m_p2p, n * sizeof(double));
        rc = gcl_all_gather(st->comm, mine, all, per, GCL_U64);
        if (rc != GCL_OK)
            train_fail(st->job, "replica %d IPU %d: gathering the step measurements: %s",
                       st->replica, st->stage, gcl_last_error(st->comm));
        else if (st->replica == 0 && !results_ready(st->job, (long)n))
            rc = GCL_ERR_NO_HOST_MEMORY;
        else if (st->replica == 0)
            store(st, all, per);
    }
    if (rc == GCL_ERR_NO_HOST_MEMORY)
        train_fail(st->job, "replica %d IPU %d: out of host memory for the step measurements",
                   st->replica, st->stage);
    free(mine);
    free(all);
    return rc;
}
