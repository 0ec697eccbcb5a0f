/*
 * What the training program prints and writes: the banner, progress (a bar redrawn in place on
 * a terminal, plain lines otherwise), one line per epoch, the final summary and the JSON file.
 * Only instance 0 prints, and within it replica 0.
 */
#ifndef TRAIN_REPORT_H
#define TRAIN_REPORT_H

#include <stdio.h>

#include "gcl/gcl.h"
#include "train.h"

typedef struct {
    gcl_job_info_t info;
    double wall_s;            /* whole run, from start to the end of gcl_run */
    double sim_step_s;        /* median simulated step time (0: nothing simulated) */
    double sim_samples_per_s; /* global batch / sim_step_s */
    const char *topology;
    int topology_ipus;
    int simulated; /* 0: nothing of the run is simulated (--backend mpi) */
} summary_t;

void report_banner(const train_job_t *job, const gcl_job_info_t *info);
void report_progress(const train_job_t *job, long done, double loss, double acc, double rate);
void report_epoch(const train_job_t *job, const epoch_log_t *e);
/* The end of an epoch after step DONE, for either backend: the test figures (CORRECT of COUNT,
 * TEST_LOSS summed) into the job's results, a line of its epoch log (SIM_S: replica 0's
 * simulated clock, -1 when nothing is simulated), and the printer's line. */
void report_epoch_end(train_job_t *job, long done, double loss, double acc, double wall,
                      long correct, long count, double test_loss, double sim_s);
/* Fills the simulated figures of S from the job's per-step times. */
void report_sim_figures(const train_job_t *job, summary_t *s);
void report_summary(const train_job_t *job, const summary_t *s);
/* The one line of a run stopped by SIGTERM or SIGINT: after which step, and where its
 * checkpoint is. */
void report_preempted(const train_job_t *job);
/* Writes PATH (through a temporary file and a rename). Returns 0, or -1 after a message. */
int report_json(const train_job_t *job, const summary_t *s, const char *path);
/* The real step-time line of the summary, and the per-step measurements' keys in the JSON
 * (report_measure.c). */
void report_measures_line(const train_job_t *job);
/* The simulated step's split (compute, exchange, sync, host, idle), each layer's simulated
 * compute, and the gradient all-reduce's simulated and real shares of the step. */
void report_sim_split(const train_job_t *job, const summary_t *s);
void report_json_measures(FILE *f, const train_job_t *job, const summary_t *s);
/* Writes every step of every IPU (job->res.m) to PATH as CSV, the same way. */
int report_step_log(const train_job_t *job, const char *path);

#endif
