/*
 * The MPI baseline (--backend mpi): the same training as the gcl backend, as a team with an MPI
 * cluster runs it today. `mpirun -np N train --backend mpi`: every rank is one replica with the
 * whole model in host memory, and the gradients are summed with MPI_Allreduce. It does not start
 * libgcl (no gcl_init, so libgcl never forms a job of the ranks): nothing is simulated, and the
 * summary and the JSON say so. It uses libgcl's public API for the SIGTERM/SIGINT flag alone
 * (gcl_preempt_enable in main, gcl_preempt_signal here), and agrees on the stop over MPI.
 *
 * What it shares with the gcl backend: the options, data, model and its initial weights, the
 * sample order, the optimizer and schedule (job.h, order.h, model.h, optim.h), checkpoints in the
 * same format (a gcl run's checkpoint resumes here and back), the progress lines, the summary and
 * the JSON keys (report.h). What it leaves out: pipelines (one replica per rank), f16 gradients
 * (MPI has no f16 type) and the simulated pod.
 */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "backend.h"
#include "gcl/popdist.h"
#include "gcl/preempt.h"
#include "job.h"
#include "mpi/mpi_replica.h"
#include "report/report.h"

/* What --backend mpi cannot do, refused before MPI starts. Returns 0, or 2 after a line. */
static int check_options(const train_opts_t *o)
{
    const char *why = NULL;
    if (o->ipus_per_replica > 1)
        why = "runs one replica per rank, unsplit: --ipus-per-replica must be 1";
    else if (o->grad_dtype != GCL_F32)
        why = "reduces f32 gradients (MPI has no f16 type): use --grad-dtype f32";
    else if (popdist_is_set() && popdist_num_local_replicas() != 1)
        why = "runs one replica per rank: under poprun, --num-instances must equal "
              "--num-replicas (or start it with plain mpirun -np N)";
    if (!why)
        return 0;
    fprintf(stderr, "train: --backend mpi %s\n", why);
    return 2;
}

/* Sums the training loss since the last report over the ranks, as the gcl backend does (f32). */
static void reduce_loss(mpi_replica_t *rp, double sums[3], double epoch_sums[3])
{
    float s[3] = {(float)rp->loss_sum, (float)rp->correct, (float)rp->seen};
    MPI_Allreduce(MPI_IN_PLACE, s, 3, MPI_FLOAT, MPI_SUM, rp->comm);
    for (int i = 0; i < 3; i++) {
        sums[i] = s[i];
        epoch_sums[i] += s[i];
    }
    rp->loss_sum = 0;
    rp->correct = rp->seen = 0;
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : 0;
}

/* Rank 0 writes the state after DONE steps to PATH; a failure ends the job (MPI_Abort), but a
 * PERIODIC checkpoint that finds the disk full is skipped with a warning (job_write_state). */
static void save(mpi_replica_t *rp, long done, const char *path, int periodic)
{
    train_job_t *job = rp->job;
    const train_opts_t *o = job->o;
    if (rp->rank != 0)
        return;
    if (o->fault_arg == done && o->fault == FAULT_KILL_MID_CHECKPOINT)
        ckpt_set_fault(CKPT_FAULT_MID_WRITE);
    if (o->fault_arg == done && o->fault == FAULT_KILL_BEFORE_RENAME)
        ckpt_set_fault(CKPT_FAULT_BEFORE_RENAME);
    char err[1024];
    if (job_write_state(job, done, path, rp->state, periodic, err, sizeof err) < 0) {
        fprintf(stderr, "train: %s\n", err);
        MPI_Abort(rp->comm, 1);
    }
}

static void save_checkpoint(mpi_replica_t *rp, long done)
{
    char path[4200];
    ckpt_path(rp->job->o->checkpoint_dir, (uint64_t)done, path, sizeof path);
    save(rp, done, path, 1);
}

/* The end of an epoch: evaluate, check that the replicas agree, log. Returns 0 or 1. */
static int epoch_end(mpi_replica_t *rp, long done, double loss, double acc, double wall)
{
    train_job_t *job = rp->job;
    double test_loss;
    long correct, count;
    mpi_replica_evaluate(rp, &test_loss, &correct, &count);
    if (!mpi_replica_agree(rp)) {
        snprintf(job->error, sizeof job->error,
                 "replicas diverged after step %ld: the weights differ between ranks. They must "
                 "stay bitwise identical: this is a bug in the update or the all-reduce.",
                 done);
        return 1;
    }
    report_epoch_end(job, done, loss, acc, wall, correct, count, test_loss, -1);
    return 0;
}

/* The training loop's bookkeeping for progress reports. */
typedef struct {
    double last_wall, epoch_wall;
    long last_done;
    double sums[3], epoch_sums[3]; /* loss, correct, samples */
} loop_t;

/* Progress, the end of an epoch, checkpoints and test faults after step DONE - 1. */
static int after_step(mpi_replica_t *rp, long done, loop_t *lp)
{
    train_job_t *job = rp->job;
    const train_opts_t *o = job->o;
    int end = done % job->steps_per_epoch == 0 || done == job->total_steps;
    if (end || done % job->log_every == 0) {
        reduce_loss(rp, lp->sums, lp->epoch_sums);
        double now = train_now_s();
        if (job->printer)
            report_progress(
                job, done, ratio(lp->sums[0], lp->sums[2]), ratio(lp->sums[1], lp->sums[2]),
                ratio((double)(done - lp->last_done) * job->global_batch, now - lp->last_wall));
        lp->last_wall = now;
        lp->last_done = done;
    }
    if (end) {
        double *e = lp->epoch_sums;
        if (epoch_end(rp, done, ratio(e[0], e[2]), ratio(e[1], e[2]),
                      train_now_s() - lp->epoch_wall))
            return 1;
        memset(lp->epoch_sums, 0, sizeof lp->epoch_sums);
        lp->last_wall = lp->epoch_wall = train_now_s();
    }
    if (o->checkpoint_dir && (done % job->checkpoint_every == 0 || done == job->total_steps))
        save_checkpoint(rp, done);
    if (o->fault == FAULT_KILL_AFTER_STEP && done == o->fault_arg && rp->rank == 0)
        raise(SIGKILL);
    if (o->fault == FAULT_HOLD_AFTER_STEP && done == o->fault_arg)
        return job_hold(done) != 0;
    return 0;
}

/* The largest signal any rank has received (SIGTERM over SIGINT), or 0: the job's decision
 * to stop before the next step. */
static int stop_requested(mpi_replica_t *rp)
{
    int sig = gcl_preempt_signal();
    MPI_Allreduce(MPI_IN_PLACE, &sig, 1, MPI_INT, MPI_MAX, rp->comm);
    return sig;
}

/* Records step STEP's real time and its wait inside MPI_Allreduce. */
static void measure_step(mpi_replica_t *rp, long step, double step_s)
{
    long i = step - rp->m_from;
    if (i < 0 || i >= rp->m_count)
        return;
    rp->m_step[i] = step_s;
    rp->m_coll[i] = rp->wait_coll;
    if (i == 0) {
        rp->rec.first_step_s = train_now_s() - rp->job->t0;
        if (rp->rank == 0)
            rp->job->res.first_step_unix_s = train_unix_s();
    }
}

static void fault_diverge(mpi_replica_t *rp)
{
    uint32_t bits;
    memcpy(&bits, rp->state, 4);
    bits ^= 1;
    memcpy(rp->state, &bits, 4);
}

/* Steps START .. total_steps. Returns 0, or 1 with job->error set. */
static int train_loop(mpi_replica_t *rp, long start)
{
    train_job_t *job = rp->job;
    loop_t lp = {.last_wall = train_now_s(), .last_done = start};
    lp.epoch_wall = lp.last_wall;
    for (long step = start; step < job->total_steps; step++) {
        int sig = stop_requested(rp);
        if (sig) {
            int saved = job->o->checkpoint_dir && step > 0;
            if (saved && step > start && step % job->checkpoint_every != 0)
                save_checkpoint(rp, step);
            job->stop_signal = sig;
            job->stopped_at = step;
            job->stop_saved = saved;
            return 0;
        }
        rp->wait_coll = 0;
        double w0 = train_now_s();
        mpi_replica_step(rp, step);
        double w = train_now_s() - w0;
        measure_step(rp, step, w);
        if (rp->rank == 0)
            job->res.train_wall_s += w;
        if (job->o->fault == FAULT_DIVERGE && step == 0 && rp->rank == job->o->fault_arg)
            fault_diverge(rp);
        if (after_step(rp, step + 1, &lp))
            return 1;
    }
    if (start >= job->total_steps)
        return epoch_end(rp, job->total_steps, 0, 0, 0);
    return 0;
}

/* With --resume: rank 0 read the checkpoint; every rank takes it by broadcast. */
static long resume(mpi_replica_t *rp)
{
    train_job_t *job = rp->job;
    uint64_t head[2] = {0, 0};
    if (rp->rank == 0 && job->resume)
        head[0] = 1, head[1] = job->resume->meta.step;
    MPI_Bcast(head, 2, MPI_UINT64_T, 0, rp->comm);
    if (!head[0])
        return 0;
    size_t n = (1 + (size_t)job->nstate) * rp->np;
    if (rp->rank == 0)
        memcpy(rp->state, job->resume->data, n * sizeof(float));
    MPI_Bcast(rp->state, (int)n, MPI_FLOAT, 0, rp->comm);
    return (long)head[1];
}

/* Every rank's record and steps reach rank 0 (job->res.m), as the gcl backend's all-gather
 * brings them to instance 0. Returns 0, or 1 when out of memory. */
static int gather(mpi_replica_t *rp)
{
    train_job_t *job = rp->job;
    struct rusage ru;
    rp->rec.host_peak_bytes = getrusage(RUSAGE_SELF, &ru) == 0 ? 1024.0 * (double)ru.ru_maxrss : 0;
    size_t n = (size_t)rp->m_count, per = IPU_RECORD_DOUBLES + 2 * n;
    double *mine = malloc(per * sizeof(double)), *all = NULL;
    if (rp->rank == 0)
        all = malloc(per * (size_t)rp->size * sizeof(double));
    int ok = mine && (rp->rank != 0 || all);
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, rp->comm);
    if (ok) {
        memcpy(mine, &rp->rec, sizeof(ipu_record_t));
        memcpy(mine + IPU_RECORD_DOUBLES, rp->m_step, n * sizeof(double));
        memcpy(mine + IPU_RECORD_DOUBLES + n, rp->m_coll, n * sizeof(double));
        MPI_Gather(mine, (int)per, MPI_DOUBLE, all, (int)per, MPI_DOUBLE, 0, rp->comm);
    }
    step_measures_t *m = &job->res.m;
    if (ok && rp->rank == 0) {
        size_t R = (size_t)rp->size;
        m->nipus = rp->size;
        m->nsteps = (long)n;
        m->ipu = calloc(R, sizeof *m->ipu);
        m->step_s = calloc(R * n + 1, sizeof(double));
        m->coll_s = calloc(R * n + 1, sizeof(double));
        m->p2p_s = calloc(R * n + 1, sizeof(double)); /* no pipeline: no transfers to wait for */
        ok = m->ipu && m->step_s && m->coll_s && m->p2p_s;
        for (size_t r = 0; ok && r < R; r++) {
            const double *p = all + r * per;
            memcpy(&m->ipu[r], p, sizeof(ipu_record_t));
            memcpy(m->step_s + r * n, p + IPU_RECORD_DOUBLES, n * sizeof(double));
            memcpy(m->coll_s + r * n, p + IPU_RECORD_DOUBLES + n, n * sizeof(double));
        }
    }
    free(mine);
    free(all);
    if (!ok)
        fprintf(stderr, "train: rank %d: out of host memory for the step measurements\n", rp->rank);
    return !ok;
}

/* Rank 0's summary, JSON and step log. Returns the exit status. */
static int report(mpi_replica_t *rp)
{
    train_job_t *job = rp->job;
    summary_t s;
    memset(&s, 0, sizeof s);
    s.info.num_instances = s.info.num_replicas = rp->size;
    s.info.num_local_replicas = s.info.ipus_per_replica = 1;
    s.wall_s = train_now_s() - job->t0;
    s.topology = "none";
    report_summary(job, &s);
    if (job->o->json_path && report_json(job, &s, job->o->json_path))
        return 1;
    if (job->o->step_log && report_step_log(job, job->o->step_log))
        return 1;
    return 0;
}

/* Sets up, trains and reports, on every rank. Returns the exit status. */
static int run(train_job_t *job, MPI_Comm comm)
{
    mpi_replica_t rp;
    int rc = mpi_replica_setup(&rp, job, comm);
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, comm);
    long start = 0;
    if (rc == 0) {
        start = job->o->resume ? resume(&rp) : 0;
        if (rp.rank == 0)
            job->res.start_step = start < job->total_steps ? start : job->total_steps;
        rp.m_from = start;
        rp.m_count = job->total_steps > start ? job->total_steps - start : 0;
        rp.m_step = calloc((size_t)rp.m_count + 1, sizeof(double));
        rp.m_coll = calloc((size_t)rp.m_count + 1, sizeof(double));
        rc = !rp.m_step || !rp.m_coll;
        MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, comm);
    }
    if (rc == 0)
        rc = train_loop(&rp, start);
    /* A divergence is seen by every rank alike; rank 0 names it. */
    if (rc && job->error[0] && rp.rank == 0)
        fprintf(stderr, "train: %s\n", job->error);
    if (rc == 0 && job->stop_signal) {
        if (rp.rank == 0)
            report_preempted(job);
        rc = 128 + job->stop_signal;
    } else if (rc == 0) {
        if (job->o->save_weights)
            save(&rp, job->total_steps, job->o->save_weights, 0);
        if (rp.rank == 0)
            job->res.steps_done = job->total_steps;
        rc = gather(&rp);
        if (rc == 0 && rp.rank == 0)
            rc = report(&rp);
    }
    mpi_replica_free(&rp);
    return rc;
}

/* After MPI_Init: the job of every rank, rank 0's checkpoint set-up, training. */
static int train_job(const train_opts_t *o, const dataset_t *data, int bar, double t0)
{
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (o->replicas && o->replicas != size) {
        if (rank == 0)
            fprintf(stderr,
                    "train: --replicas %d disagrees with the %d MPI ranks (--backend mpi runs "
                    "one replica per rank: give mpirun -np instead)\n",
                    o->replicas, size);
        return 2;
    }
    train_job_t job;
    ckpt_t ck = {0};
    int rc = job_init(&job, o, data, size, 1, bar);
    if (rc)
        return rc;
    job.t0 = t0;
    job.instance = rank;
    job.printer = rank == 0 && o->progress != PROGRESS_NONE;
    if (model_params(&job.shape) > (size_t)2147483647 / (1 + (size_t)job.nstate)) {
        if (rank == 0)
            fprintf(stderr, "train: --backend mpi: the model is too large for one MPI call\n");
        rc = 2;
    }
    if (rc == 0 && rank == 0 && o->checkpoint_dir)
        rc = job_prepare_checkpoints(&job, &ck);
    /* No job_alloc: nothing simulated to record, and the state is written as it lies. */
    MPI_Allreduce(MPI_IN_PLACE, &rc, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (rc == 0) {
        gcl_job_info_t info = {size, rank, size, 1, rank, 1, 1, 0};
        if (rank == 0)
            report_banner(&job, &info);
        rc = run(&job, MPI_COMM_WORLD);
    }
    job_free(&job);
    ckpt_free(&ck);
    return rc;
}

int backend_mpi_main(const train_opts_t *o, int bar, double t0)
{
    if (check_options(o))
        return 2;
    dataset_t data;
    if (job_load_data(o, &data))
        return 1;
    if (MPI_Init(NULL, NULL) != MPI_SUCCESS) {
        fprintf(stderr, "train: --backend mpi: MPI_Init failed\n");
        dataset_free(&data);
        return 1;
    }
    int rc = train_job(o, &data, bar, t0);
    MPI_Finalize();
    dataset_free(&data);
    return rc;
}
