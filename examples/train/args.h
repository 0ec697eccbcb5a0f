/* The training program's options: defaults, parsing and validation (see usage in args.c). */
#ifndef TRAIN_ARGS_H
#define TRAIN_ARGS_H

#include <stdint.h>

#include "gcl/types.h"
#include "model/model.h"
#include "model/optim.h"
#include "pipeline/pipe.h"

typedef enum { PROGRESS_AUTO = 0, PROGRESS_BAR, PROGRESS_PLAIN, PROGRESS_NONE } progress_t;

/* What moves the gradients: libgcl over simulated IPUs (poprun), or MPI_Allreduce over the ranks
 * of plain mpirun, one replica each (the baseline of a team that trains on an MPI cluster). */
typedef enum { BACKEND_GCL = 0, BACKEND_MPI } backend_t;

/* Test-only faults, to check that what should fail does, loudly. */
typedef enum {
    FAULT_NONE = 0,
    FAULT_KILL_AFTER_STEP,     /* instance 0 (or those after @) kills itself after step N */
    FAULT_KILL_MID_CHECKPOINT, /* ... halfway through writing the checkpoint of step N */
    FAULT_KILL_BEFORE_RENAME,  /* ... with that checkpoint written but not yet renamed */
    FAULT_DIVERGE,             /* replica N flips a bit of its weights after the first step */
    FAULT_HOLD_AFTER_STEP,     /* every replica waits after step N for $TRAIN_HOLD_FILE */
} fault_t;

typedef struct {
    const char *data_dir;
    long train_samples, test_samples; /* 0: all */
    const model_def_t *model;         /* --model mlp or cnn (a model file is a cnn's layers) */
    model_opts_t model_opts;          /* --hidden, --layers or the model file's layers */
    int hidden[MODEL_MAX_LAYERS];
    int nhidden;
    int epochs;
    int augment;    /* 1: --augment flip, training images mirrored at random (order.h) */
    long max_steps; /* 0: no limit */
    int batch_size;
    int accumulation; /* 0: the default for the number of stages */
    optim_cfg_t optim;
    uint64_t seed;
    gcl_dtype_t grad_dtype;
    double grad_scale;
    int replicas, ipus_per_replica; /* 0: not given */
    pipe_schedule_t schedule;
    const char *checkpoint_dir;
    long checkpoint_every; /* 0: once per epoch */
    int keep_checkpoints;
    int resume;
    backend_t backend;
    const char *json_path, *save_weights;
    const char *step_log; /* CSV of every step's real (and simulated) time on every replica */
    long log_every;       /* 0: ten lines per epoch */
    progress_t progress;
    fault_t fault;
    long fault_arg;
    unsigned long long fault_instances; /* kill-after-step:N@I+J: bit I set (0: instance 0) */
} train_opts_t;

/* Parses ARGV into O. Returns 0; 1 after printing the help (exit 0); 2 after printing one line
 * that says what is wrong (exit 2). */
int train_parse_args(int argc, char **argv, train_opts_t *o);

#endif
