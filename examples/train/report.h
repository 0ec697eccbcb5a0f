/*
 * What the training program prints and writes: the banner, progress (a bar redrawn in place on
 * a terminal, plain lines otherwise), one line per epoch, the final summary and the JSON file.
 * Only instance 0 prints, and within it replica 0.
 */
#ifndef TRAIN_REPORT_H
#define TRAIN_REPORT_H

#include "gcl/gcl.h"
#include "train.h"

typedef struct {
    gcl_job_info_t info;
    double wall_s;            /* whole run, from start to the end of gcl_run */
    double sim_step_s;        /* median simulated step time (0: nothing simulated) */
    double sim_samples_per_s; /* global batch / sim_step_s */
    const char *topology;
    int topology_ipus;
} summary_t;

void report_banner(const train_job_t *job, const gcl_job_info_t *info);
void report_progress(const train_job_t *job, long done, double loss, double acc, double rate);
void report_epoch(const train_job_t *job, const epoch_log_t *e);
/* Fills the simulated figures of S from the job's per-step times. */
void report_sim_figures(const train_job_t *job, summary_t *s);
void report_summary(const train_job_t *job, const summary_t *s);
/* Writes PATH (through a temporary file and a rename). Returns 0, or -1 after a message. */
int report_json(const train_job_t *job, const summary_t *s, const char *path);

#endif
