/*
 * One pipeline stage of one replica: the IPU thread's view of the job. stage.c sets it up and
 * runs a training step; run.c drives the epochs, evaluation, checks and checkpoints.
 */
#ifndef TRAIN_STAGE_H
#define TRAIN_STAGE_H

#include <stdint.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"
#include "pipeline/pipe.h"
#include "train.h"

/* Point-to-point tags: activations flow down the pipeline, gradients back up. Messages of one
 * tag between two IPUs arrive in order, which is the micro-batch order on both sides. */
#define TAG_ACT  1
#define TAG_GRAD 2

#define STAGE_MAX_SLOTS 4096

typedef struct {
    gcl_ctx_t ctx;
    train_job_t *job;
    const model_shape_t *shape;
    int replica, stage, last; /* last: this is the final stage (it computes the loss) */
    int l0, l1;               /* layers [l0, l1) */
    gcl_comm_t comm;          /* this stage of every replica */
    size_t poff, np;          /* offset and size of the stage's slice of the parameter vector */
    float *params, *grads, *state[2];
    uint16_t *grads16; /* f16 all-reduce buffer */
    int nslots;
    float **act;  /* [slot * (layers + 1) + i]: input (i = 0) and output of each layer */
    float **dx;   /* [slot]: gradient of the stage's input, sent upstream (stage > 0) */
    float *dy_in; /* gradient received from downstream (not on the last stage) */
    float *scratch[2];
    float *col;        /* the convolutions' im2col matrices, per slot (host; NULL without) */
    size_t col_floats; /* of one slot */
    uint8_t *labels;   /* [slot * micro]: labels of the micro-batches (last stage) */
    uint32_t *idx;     /* [micro]: samples of the current micro-batch */
    gcl_request_t *act_req, *dx_req;
    pipe_op_t *ops;
    uint32_t *perm; /* sample order of epoch perm_epoch (first and last stage) */
    long perm_epoch;
    /* Training loss since the last progress report (last stage). */
    double loss_sum;
    long correct, seen;
    long checkpoints; /* checkpoints this stage has contributed to */
    /* Real time the step in flight has waited so far: inside the gradient all-reduce, and for
     * pipeline transfers (host-side waits, measured on this IPU's thread). */
    double wait_coll, wait_p2p;
    double sim_coll;   /* simulated time of the step's gradient all-reduce */
    double sim_update; /* simulated time of the optimizer updates of this run's steps */
    int tensors;       /* weight and bias tensors of its layers (pooling has none) */
    /* Simulated time its training steps charged to each layer, forward [0] and backward [1]
     * (the ReLU's with its layer's); evaluation is not counted. */
    double sim_layer_s[2][MODEL_MAX_LAYERS];
    int in_step;
    /* Simulated memory the stage allocated, by kind (bytes). Activations: what one micro-batch
     * needs; stash: the activations and input gradients of the other micro-batches in flight. */
    size_t mem_weights, mem_gradients, mem_optimizer, mem_activations, mem_stash;
    /* This run's steps, from its first (measure.c): each step's real time and waits. */
    double *m_step, *m_coll, *m_p2p;
    long m_from, m_count;
    ipu_record_t rec;
    /* This replica's share of each step (share.h): its first micro-batch of the step's
     * replicas x accumulation, how many, and the gradient's scale (1 unless the job shrank);
     * whether its weights hold a state (elastic.c). */
    int q0, accum;
    float rescale;
    int el_valid;
} stage_t;

/* Creates the communicator, allocates every buffer in simulated IPU memory and initialises the
 * weights from the seed. On failure the reason is recorded with train_fail. */
gcl_status_t stage_setup(stage_t *st, gcl_ctx_t ctx, train_job_t *job);
void stage_teardown(stage_t *st);

/* Step STEP (0-based, global): forward and backward of every micro-batch in the schedule's
 * order, the gradient all-reduce, and the optimizer update. */
gcl_status_t stage_step(stage_t *st, long step);

/* Forward only, over this replica's share of the test set. The last stage returns the summed
 * loss and the number of correct and seen samples of the whole job (all-reduced). */
gcl_status_t stage_evaluate(stage_t *st, double *loss, long *correct, long *count);

/* Steps of this run (from FROM to the end of the run): allocates the per-step measurements.
 * Returns GCL_OK or GCL_ERR_NO_HOST_MEMORY (recorded with train_fail). */
gcl_status_t stage_measure_init(stage_t *st, long from);
/* Records step STEP: its real time STEP_S (the waits are in wait_coll and wait_p2p), and the
 * simulated clock's shares before (A) and after (B) it. */
void stage_measure_step(stage_t *st, long step, double step_s, const gcl_sim_stats_t *a,
                        const gcl_sim_stats_t *b);
/* Once training ended well on every replica: every IPU's measurements reach instance 0
 * (job->res.m), by one all-gather per stage. */
gcl_status_t stage_measure_collect(stage_t *st);

/* Waits for the request in *REQ, if any. */
gcl_status_t stage_wait(stage_t *st, gcl_request_t *req);

#endif
