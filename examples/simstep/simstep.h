/*
 * sim-step: simulates training steps of a model, layer by layer, on a simulated pod, in phantom
 * mode (buffers carry sizes, never data), and reports the step time, throughput, where the time
 * goes (compute, exchange, sync, host, idle), each stage's memory, and the time to train.
 *
 *   build/bin/sim-step --model resnet50 --replicas 16 --topology POD16
 *   build/bin/sim-step --model bert-large --replicas 4 --stages 4 --micro-batch 4 \
 *       --gradient-accumulation 192 --sequence-length 512 --topology POD16
 *   poprun --num-replicas 64 --num-instances 4 --offline-mode --topology POD64 \
 *       build/bin/sim-step --model resnet50 --gradient-accumulation 3
 *
 * The model (built in, or a model file) and its plan come from libgcl's simulated pod
 * (gcl/sim.h: gcl_sim_model_open, gcl_sim_plan_create): the split of layers over stages, each
 * stage's memory. The step then runs for real on every simulated IPU (stage s of replica r):
 *   1. the stage's passes in the schedule's order (gpipe or 1f1b, gcl_sim_plan_order): a
 *      forward receives the micro-batch's activations from stage s-1 (stage 0 takes the
 *      micro-batch from the host feed, gcl_sim_feed), charges every layer of the stage
 *      (gcl_sim_charge_stage) and sends its output to stage s+1; a backward receives the
 *      gradient from stage s+1, recomputes the stage's forward when activations are recomputed,
 *      charges the backward of every layer and sends the input gradient to stage s-1;
 *   2. the gradient reduction over the stage-s IPUs of every replica: an all-reduce, or with
 *      sharded optimizer state a reduce-scatter, the update of the shard and an all-gather of
 *      the weights (gcl_all_reduce / gcl_reduce_scatter / gcl_all_gather, the automatic
 *      algorithm), then the weight update (gcl_charge_update).
 * The step time is the slowest IPU's clock advance per timed step, after --warmup steps (so that
 * the pipeline starts skewed, as in steady state).
 */
#ifndef SIMSTEP_H
#define SIMSTEP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"

#define SIMSTEP_MAX_STAGES 256

typedef struct {
    const char *model;  /* resnet50, bert-large or a model file */
    int seq;            /* BERT sequence length */
    long micro_batch;   /* samples per micro-batch and replica (0: the model's) */
    long accum;         /* micro-batches per step and replica (0: the model's) */
    long global_batch;  /* samples per step over all replicas (0: not given) */
    long stages;        /* IPUs per replica (0: the job's, or the model's without poprun) */
    long steps, warmup; /* timed steps, and untimed ones before them */
    long replicas;      /* replicas without poprun */
    long host_servers;  /* 0: the pod's default */
    double host_rate;   /* samples/s per host server (< 0: the model's) */
    const char *schedule, *recompute, *optimizer, *state; /* NULL: defaults */
    const char *splits;                                   /* --pipeline-splits text */
    const char *placement; /* --att-ffn-placement or --layers-per-ipu text */
    int layers_per_ipu;    /* 1: PLACEMENT is --layers-per-ipu's */
    double per_pack;       /* --sequences-per-pack (0: the model's) */
    int offchip;           /* --optimizer-state-offchip */
    const char *rts;       /* --replicated-tensor-sharding on|off (NULL: the model's) */
    gcl_dtype_t grad_type;
    double epochs, train_samples, overhead_s; /* time to train (0: not asked) */
    double eval_samples, eval_every;          /* one evaluation's samples, and the training
                                                 samples between two (0: one epoch, or one
                                                 evaluation at the end) */
    int sensitivity;
    int dump_model;
    const char *json;       /* write the result here */
    const char *topology;   /* GCL_TOPOLOGY without poprun */
    const char *ipu;        /* --ipu gc200|bow (NULL: the topology's) */
    char topology_ipu[512]; /* TOPOLOGY with ",ipu=NAME" when --ipu is given */
    /* --plan: search the ways to run the model on the pod (plan.c). */
    int plan;
    long gb_hi;         /* --global-batch LO-HI: GLOBAL_BATCH is LO (0: a single batch) */
    long max_stages;    /* 0: the search's default */
    double reserve_mb;  /* memory every IPU keeps free, MB */
    long top;           /* rows printed */
    int replicas_given; /* --replicas was given: with --plan, the replicas are fixed */
    int no_ranges;      /* --no-ranges: the plan's rows are not simulated again */
} simstep_opts_t;

/* Per stage, from every replica's IPU of that stage (instance 0 gathers them). */
typedef struct {
    double compute_us, exchange_us, sync_us, idle_us, host_us; /* means per step */
    double bubble_us;     /* idle before the gradient reduction (the pipeline's) */
    double reduce_us;     /* inside the gradient reduction */
    double step_us;       /* the slowest IPU of the stage */
    uint64_t peak_memory; /* simulated SRAM, the largest of the stage's IPUs */
} simstep_stage_result_t;

typedef struct {
    double step_us;                 /* slowest IPU's clock advance per step */
    double compute_us, exchange_us; /* means over every IPU, per step */
    double sync_us, idle_us, host_us;
    double pipeline_idle_us; /* mean idle before the gradient reduction: bubble and imbalance */
    double bubble_us;        /* that idle on the busiest stage: the pipeline's bubble */
    double reduce_us;
    uint64_t peak_memory;
    char algo[48]; /* the gradient reduction's algorithm on stage 0 */
    simstep_stage_result_t stage[SIMSTEP_MAX_STAGES];
} simstep_result_t;

typedef struct {
    simstep_opts_t o;
    gcl_job_info_t info;
    gcl_sim_model_t model;
    gcl_sim_model_info_t minfo;
    gcl_sim_plan_t plan;
    gcl_sim_plan_info_t pinfo;
    gcl_sim_stage_t stage[SIMSTEP_MAX_STAGES];
    gcl_sim_fragment_t frag[SIMSTEP_MAX_STAGES + 1];
    int splits[SIMSTEP_MAX_STAGES];
    long default_stages;  /* the model's, without poprun and --stages */
    int stages;           /* resolved */
    long micro, accum;    /* resolved */
    int ild_size;         /* IPUs per IPU-Link domain of the pod */
    double reduce_buffer; /* reduction_buffer_bytes: gradient bytes per reduction call */
    gcl_sim_feed_t feed;
    char topology[64];
    char ipu[16];               /* the pod's IPU: "GC200" or "Bow" */
    gcl_sim_param_t params[64]; /* the pod's constants, for --sensitivity */
    int nparams;
    simstep_result_t res;
    atomic_int failed;
    char error[1024];
} simstep_t;

/* Parses ARGV into O: 0, 1 after printing help, or 2 after printing a one-line error. */
int simstep_parse(int argc, char **argv, simstep_opts_t *o);
/* Opens the model and applies its defaults: 0, or 2 after a one-line error. */
int simstep_open_model(simstep_t *w);
/* Checks O against the job and plans it: 0, 1 after a memory error, 2 after a usage error. */
int simstep_resolve(simstep_t *w, gcl_instance_t inst);
/* The per-IPU program (gcl_run). */
gcl_status_t simstep_program(gcl_ctx_t ctx, void *arg);
/* The time to train that --epochs or --train-samples asks, with evaluations and overheads (0
 * when not asked). */
double simstep_time_to_train(const simstep_t *w);
/* Prints the summary (instance 0). */
void simstep_print(const simstep_t *w);
/* Writes the JSON file, with the sensitivity table when it is not NULL. Returns 0, or 1 if the
 * file failed. */
int simstep_write_json(const simstep_t *w, const char *sensitivity_json);
/* Samples per step over the job. */
double simstep_global_batch(const simstep_t *w);
double simstep_samples_per_s(const simstep_t *w);
/* Reruns the job alone in this process with each assumed and fitted constant halved and
 * doubled; prints the table, and returns its JSON (malloc'd; NULL on failure) in *JSON.
 * Returns 0, or 1 when a rerun failed. */
int simstep_sensitivity(simstep_t *w, const char *base_topology, char **json);
/* One simulated job in this process: gcl_init, plan, gcl_run, gcl_finalize (instance 0's
 * result in W). Returns the exit status. */
int simstep_run_job(simstep_t *w, int report_errors, const char *topology);

/* sim-step --plan (plan.c): searches replicas x stages, placements, micro-batch x accumulation,
 * the optimizer state's place and sharding, and recomputation for the model on the pod; prints
 * the best, each with the sim-step command that gives the same numbers. Returns the exit
 * status. */
int simstep_plan(simstep_t *w);

#endif
