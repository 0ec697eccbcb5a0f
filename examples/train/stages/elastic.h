/*
 * Elastic training (poprun --elastic): what train does when the job's membership changes.
 *
 * The state lives in memory across gcl_run calls: each IPU thread copies its stage's weights and
 * optimizer state to the host when its program ends (however it ends), with the number of steps
 * applied to them. When the next run starts, after gcl_elastic_resize:
 *   - every stage agrees on T, the last step that every stage of the model has applied somewhere
 *     (an instance lost during a step's gradient all-reduce can leave it complete on some replicas
 *     and not on others: the replicas ahead roll back to T, or, when no replica stopped before the
 *     update, all go on from T = the step every replica applied);
 *   - the state of T is broadcast from the lowest replica that holds it to every replica, the
 *     replacements (which hold nothing) included, and training goes on from step T;
 *   - a replica ahead by one step rolls back with the copy of the state it keeps before each
 *     step's update. Only pipelined jobs keep it: with one stage, some replica that applied step T
 *     exists whenever the job is at T, so no copy is needed.
 *
 * The same arithmetic: the global batch stays. Each step's R0 x G micro-batches (R0 replicas as
 * the job started, G micro-batches each) are split over the R replicas left in contiguous runs,
 * replica r taking micro-batches [r x R0 x G / R, (r + 1) x R0 x G / R): uneven when R does not
 * divide R0 x G, but a pure function of R. Every micro-batch keeps its samples and its loss scale
 * 1 / (G x micro); the all-reduce's mean over R replicas is scaled by R / R0, so each step's
 * gradient is the mean over the same global batch. Two runs with the same membership history
 * (the steps at which it changed, and to what) end bitwise identical.
 */
#ifndef TRAIN_ELASTIC_H
#define TRAIN_ELASTIC_H

#include <stdio.h>

#include "gcl/elastic.h"
#include "stages/stage.h"

/* Sets up JOB for an elastic instance INST (nothing without --elastic). Returns 0, or 1 after a
 * line (out of host memory). */
int train_elastic_init(train_job_t *job, gcl_instance_t inst);
void train_elastic_free(train_job_t *job);

/* Whether JOB is elastic, whether its membership changed since it started, and whether the
 * run under way returns at a step boundary to take a replacement in. */
int train_elastic_on(const train_job_t *job);
int train_elastic_changed(const train_job_t *job);
int train_elastic_leaving(const train_job_t *job);

/* The start of a run: the stage's state from memory, T agreed and broadcast (see above).
 * *START becomes T; *RESTORED 1 when it did (else the run starts as usual, from the seed or a
 * checkpoint). */
gcl_status_t train_elastic_restore(stage_t *st, long *start, int *restored);

/* Before step STEP's update, and after it (APPLIED steps applied). */
void train_elastic_before_step(stage_t *st, long step);
void train_elastic_applied(stage_t *st, long applied);

/* The end of a run, however it ended: the stage's state into memory. */
void train_elastic_save(stage_t *st);

/* At the step boundary before step STEP (after gcl_preempt_agree): 1 when the job takes a
 * replacement in here (every IPU alike): the program returns, and the run loop resizes. With
 * $TRAIN_ELASTIC_JOIN_AT=S[,S2...] (tests), only at those steps, where it waits for one. */
int train_elastic_boundary(stage_t *st, long step, gcl_status_t *rc);

/* After a run: whether to resize and run again (a run that failed, or returned to take a
 * replacement in). Resizes, says what changed and re-shards JOB. 1: run again; 0: stop (*STATUS
 * the exit status, the reason printed). */
int train_elastic_next(train_job_t *job, gcl_instance_t inst, gcl_status_t run_rc, int *status);

/* Whether this IPU is where --fault kill-after-step:N@I strikes (the first IPU of instance I as
 * poprun planned it; instance 0 without @), in the job's first run (not after a restart). */
int train_fault_here(const stage_t *st);

/* For the report: the simulated step of every stretch of steps between membership changes,
 * one line each; and for --json, the key "elastic": each change (step, membership, instances,
 * replicas, lost and joined instances, when, the simulated step before and after), or null
 * without --elastic. */
void train_elastic_report(const train_job_t *job);
void train_elastic_json(FILE *f, const train_job_t *job);

#endif
