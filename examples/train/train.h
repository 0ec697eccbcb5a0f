/*
 * The training job: what every IPU thread of an instance shares (train_job_t), and the program
 * gcl_run runs on each of them.
 *
 * Replica r, IPU k of the job is pipeline stage k of data-parallel replica r. Stage k holds
 * layers [first[k], first[k+1]) of the model with their gradients, optimizer state and
 * activations in its simulated IPU memory; it all-reduces its gradients with stage k of every
 * other replica over a communicator of its own. Within a replica, activations flow to the next
 * stage and gradients back with gcl_send/gcl_recv.
 */
#ifndef TRAIN_TRAIN_H
#define TRAIN_TRAIN_H

#include <pthread.h>
#include <stdint.h>

#include "args.h"
#include "data/ckpt.h"
#include "gcl/gcl.h"
#include "data/idx.h"
#include "pipeline/measure.h"
#include "model/model.h"

#define TRAIN_MAX_EPOCH_LOG 1000

/* What replica 0 learnt at the end of one epoch. */
typedef struct {
    int epoch;
    long step;
    double loss, train_accuracy, test_accuracy, test_loss, wall_s;
    double elapsed_s;     /* real: from the start of instance 0 to the end of the evaluation */
    double sim_elapsed_s; /* simulated: replica 0's clock then (-1: not simulated) */
} epoch_log_t;

/* The run's results, filled by replica 0's threads and read by main after gcl_run. */
typedef struct {
    double test_accuracy, test_loss, train_loss;
    long test_correct, test_count;
    long start_step, steps_done;
    double train_wall_s; /* wall time inside training steps (evaluation excluded) */
    double *sim_step_s;  /* [stage][step]: simulated time of each step on each stage */
    size_t sim_mem_peak[MODEL_MAX_LAYERS];
    size_t sim_mem_capacity;
    double sim_compute_s[MODEL_MAX_LAYERS], sim_total_s[MODEL_MAX_LAYERS];
    /* Replica 0's simulated time per training step of this run: each layer's forward [0] and
     * backward [1] passes, and each stage's optimizer update. */
    double sim_layer_s[2][MODEL_MAX_LAYERS], sim_update_s[MODEL_MAX_LAYERS];
    epoch_log_t epochs[TRAIN_MAX_EPOCH_LOG];
    int nepochs;
    step_measures_t m;
    double start_unix_s, first_step_unix_s; /* real clock of instance 0 (CLOCK_REALTIME) */
} train_results_t;

typedef struct {
    const train_opts_t *o;
    const dataset_t *data;
    double t0; /* CLOCK_MONOTONIC at the start of the process */
    model_shape_t shape;
    optim_cfg_t optim; /* the options' optimizer, with the warm-up in steps */
    int replicas, stages, first[MODEL_MAX_LAYERS + 1];
    int micro, accumulation;
    long global_batch, steps_per_epoch, schedule_steps, total_steps;
    long checkpoint_every, log_every;
    int nstate;
    int instance;
    gcl_job_info_t info;
    int printer;      /* 1 when this instance prints progress (instance 0) */
    int progress_bar; /* 1: a bar redrawn in place; 0: plain lines */
    float pixel[256]; /* standardised value of each pixel byte */
    ckpt_meta_t meta; /* the fingerprint of this run, for the checkpoints it writes */
    ckpt_t *resume;   /* instance 0 with --resume: the checkpoint to continue from, or NULL */

    /* Replica 0's stages meet here to write a checkpoint: each copies its slice into STAGING,
     * and the last to arrive writes the file. */
    pthread_mutex_t lock;
    pthread_cond_t cond;
    float *staging; /* (1 + nstate) x nparams, instance 0 only */
    int arrived;
    long written;
    int aborted;
    int usage_error;  /* the failure is the options' (a model too large): exit status 2 */
    char error[4096]; /* the first failure, for main to print */

    /* A preemption (SIGTERM or SIGINT, agreed by the whole job): the signal, the steps done
     * when training stopped, and whether a checkpoint holds them. Under LOCK. */
    int stop_signal;
    long stopped_at;
    int stop_saved;
    /* Instance 0: the step of the newest checkpoint on disk that this run wrote or resumed
     * from (-1: none), and how many periodic checkpoints could not be written for want of
     * space. Written by the thread that writes the files; read once training is over. */
    long saved_step;
    long ckpt_skipped;

    train_results_t res;
    struct train_elastic *el; /* poprun --elastic: the state kept across runs (elastic.c) */
} train_job_t;

/* The per-IPU program (gcl_program_t); ARG is the train_job_t. */
gcl_status_t train_program(gcl_ctx_t ctx, void *arg);

/* CLOCK_MONOTONIC and CLOCK_REALTIME, in seconds. */
double train_now_s(void);
double train_unix_s(void);

/* Records the first failure of the job (printf-style) and wakes every waiting thread. */
void train_fail(train_job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
