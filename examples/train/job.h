/*
 * The job's layout and set-up, shared by both backends: the shape of the model and its split
 * over the stages, batches and schedule, the checkpoint fingerprint, the checkpoint directory
 * and the resume, and the job's host buffers.
 */
#ifndef TRAIN_JOB_H
#define TRAIN_JOB_H

#include "train.h"

/* Reads the dataset of the options. Returns 0, or 1 after one line naming the file. */
int job_load_data(const train_opts_t *o, dataset_t *data);

/* The model of the options for the data's images. Returns 0, or 2 after one line naming the
 * layer that does not fit (model_shape_build). */
int job_model(const train_opts_t *o, const dataset_t *data, model_shape_t *shape);

/* Lays out the job of REPLICAS replicas of IPR stages. Returns 0, or 2 after one line saying
 * which option does not fit (too many stages, too few micro-batches, a batch too large). */
int job_init(train_job_t *job, const train_opts_t *o, const dataset_t *data, int replicas, int ipr,
             int bar);

/* Instance 0 with --checkpoint: creates the directory and, with --resume, loads the newest
 * valid checkpoint into CK (job->resume then points at it, or is NULL when there is none).
 * Returns 0, or 1 after one line (an unreadable directory, an incompatible checkpoint). */
int job_prepare_checkpoints(train_job_t *job, ckpt_t *ck);

/*
 * Instance 0 writes the state after STEP steps (DATA: (1 + nstate) x nparams floats) to PATH.
 * A periodic checkpoint (PERIODIC) that fails for want of space (ENOSPC, EDQUOT: a full disk or
 * quota) does not end the run: one warning names it and the newest checkpoint, which stays, and
 * training goes on (the next checkpoint tries again). Any other failure, and any failure of the
 * final --save-weights, is an error. Returns 0 when written, 1 when skipped so, or -1 with ERR.
 */
int job_write_state(train_job_t *job, long step, const char *path, const float *data, int periodic,
                    char *err, size_t errlen);

/* The host buffers of the job (per-step simulated times, the checkpoint staging area). Returns
 * 0, or 1 after a line. */
int job_alloc(train_job_t *job);
void job_free(train_job_t *job);

/* --fault hold-after-step: waits after step DONE until $TRAIN_HOLD_FILE exists (a test's attack
 * on the job's ports is over, say), so that a run outlasts an event rather than a guess of its
 * time; every replica holds at the same step, outside any collective call. -1 after 10 min. */
int job_hold(long done);

#endif
