/*
 * The gcl backend: libgcl starts the job (poprun's instances, or one process, or the ranks of a
 * plain mpirun), runs train_program (run.c) on every simulated IPU, and instance 0 reports.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/init_error.h" /* header only: train does not link the examples' library */
#include "backend.h"
#include "gcl/gcl.h"
#include "gcl/popdist.h"
#include "gcl/popdist_env.h"
#include "gcl/sim.h"
#include "stages/elastic.h"
#include "job.h"
#include "report/report.h"

/* Replicas and IPUs per replica: poprun's when it started us, else the options'. */
static int job_shape(const train_opts_t *o, int *replicas, int *ipr)
{
    if (!popdist_is_set()) {
        *replicas = o->replicas ? o->replicas : 1;
        *ipr = o->ipus_per_replica ? o->ipus_per_replica : 1;
        return 0;
    }
    *replicas = popdist_num_total_replicas();
    *ipr = popdist_num_ipus_per_replica();
    if (o->replicas && o->replicas != *replicas) {
        fprintf(stderr,
                "train: --replicas %d disagrees with poprun's %d replicas (under poprun, "
                "give poprun --num-replicas instead)\n",
                o->replicas, *replicas);
        return 2;
    }
    if (o->ipus_per_replica && o->ipus_per_replica != *ipr) {
        fprintf(stderr,
                "train: --ipus-per-replica %d disagrees with poprun's %d (under poprun, "
                "give poprun --ipus-per-replica instead)\n",
                o->ipus_per_replica, *ipr);
        return 2;
    }
    return 0;
}

/* Trains and reports; returns the exit status. */
static int run(train_job_t *job, gcl_instance_t inst, const gcl_job_info_t *info)
{
    summary_t s;
    memset(&s, 0, sizeof s);
    s.info = *info;
    job->info = *info; /* the banner's, printed once every IPU has set up (run.c) */
    gcl_status_t rc = gcl_run(inst, train_program, job);
    int status; /* an elastic job resizes and goes on (elastic.h) */
    while (train_elastic_next(job, inst, rc, &status))
        rc = gcl_run(inst, train_program, job);
    if (status >= 0)
        return status;
    gcl_instance_info(inst, &s.info);
    s.wall_s = train_now_s() - job->t0;
    s.topology = gcl_sim_topology(inst);
    s.topology_ipus = gcl_sim_topology_ipus(inst);
    s.simulated = 1;
    if (rc != GCL_OK) {
        fprintf(stderr, "train: %s\n", job->error[0] ? job->error : gcl_instance_error(inst));
        return job->usage_error ? 2 : 1;
    }
    if (job->stop_signal) {
        if (job->instance == 0)
            report_preempted(job);
        return 128 + job->stop_signal;
    }
    if (job->instance != 0)
        return 0;
    report_sim_figures(job, &s);
    report_summary(job, &s);
    train_elastic_report(job);
    if (job->o->json_path && report_json(job, &s, job->o->json_path))
        return 1;
    if (job->o->step_log && report_step_log(job, job->o->step_log))
        return 1;
    return 0;
}

/* Instance 0's set-up before training: the checkpoint directory and the resume. */
static int prepare(train_job_t *job, ckpt_t *ck)
{
    if (job->instance != 0)
        return 0;
    if (job->o->checkpoint_dir)
        return job_prepare_checkpoints(job, ck);
    if (popdist_restart_count() > 0)
        printf("train: restart %d of the job (%s=%d), but without --checkpoint there is "
               "nothing to resume: starting from the beginning\n",
               popdist_restart_count(), POPDIST_ENV_RESTART_COUNT, popdist_restart_count());
    return 0;
}

/* After gcl_init: the job as libgcl formed it (under plain mpirun, one job of every rank's
 * replicas), its set-up, training and report. */
static int train_job(const train_opts_t *o, const dataset_t *data, gcl_instance_t inst, int bar,
                     double t0)
{
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    train_job_t job;
    ckpt_t ck = {0};
    gcl_elastic_info_t e; /* an elastic job's batches are those of its first membership */
    int replicas = gcl_elastic_info(inst, &e) == GCL_OK ? e.initial_replicas : info.num_replicas;
    int rc = job_init(&job, o, data, replicas, info.ipus_per_replica, bar);
    if (rc)
        return rc; /* the same on every instance: each says so and ends */
    if (train_elastic_init(&job, inst)) {
        job_free(&job);
        return 1;
    }
    job.t0 = t0;
    job.instance = info.instance_index;
    job.printer = job.instance == 0 && o->progress != PROGRESS_NONE;
    rc = prepare(&job, &ck);
    if (rc == 0)
        rc = job_alloc(&job);
    if (rc == 0) {
        rc = run(&job, inst, &info);
    } else {
        /* Instance 0 alone failed: its IPUs fail at once, and the others learn it from libgcl
         * (GCL_ERR_PEER_FAILED) instead of waiting for them. */
        job.aborted = 1;
        gcl_run(inst, train_program, &job);
    }
    train_elastic_free(&job);
    job_free(&job);
    ckpt_free(&ck);
    return rc;
}

int backend_gcl_main(const train_opts_t *o, int bar, double t0)
{
    int replicas, ipr;
    if (job_shape(o, &replicas, &ipr))
        return 2;
    dataset_t data;
    if (job_load_data(o, &data))
        return 1;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = replicas;
    cfg.ipus_per_replica = ipr;
    gcl_instance_t inst;
    gcl_status_t init_rc = gcl_init(&cfg, &inst);
    int rc;
    if (init_rc != GCL_OK) {
        rc = example_init_usage_error("train", init_rc) ? 2 : 1;
        if (rc == 1)
            fprintf(stderr, "train: gcl_init failed (see the warning above)\n");
    } else {
        rc = train_job(o, &data, inst, bar, t0);
        gcl_finalize(inst);
    }
    dataset_free(&data);
    return rc;
}
