/*
 * sim-step: simulates one training step of a described model on a simulated pod, in phantom mode
 * (buffers carry sizes, never data), and reports its simulated step time, throughput, and where
 * the time goes (compute, exchange, sync, idle).
 *
 *   poprun --num-replicas 64 --num-instances 4 --offline-mode --topology POD64 \
 *       build/bin/sim-step --model resnet50 --json rn50.json
 *   poprun --num-replicas 16 --ipus-per-replica 4 --num-instances 4 --offline-mode \
 *       --topology POD64 build/bin/sim-step --model bert-large --global-batch 2048
 *
 * The step, on every simulated IPU (stage s of replica r; S stages = poprun --ipus-per-replica,
 * R replicas, micro-batch B, gradient accumulation A):
 *   1. Forward, for each of the A micro-batches in turn: receive B activations from stage s-1
 *      (gcl_recv), charge the stage's forward compute (gcl_charge_compute), send B activations
 *      to stage s+1 (gcl_send). The first stage has nothing to receive, the last nothing to send.
 *   2. Backward, for each micro-batch: receive the activation gradients from stage s+1, charge
 *      the backward compute, send the gradients to stage s-1. Together with 1 this is GPipe's
 *      schedule; its bubble, (S-1)/(A+S-1) of the step, is the same as 1F1B's, and it shows up
 *      as idle time.
 *   3. All-reduce the stage's gradient shard (params/S elements of the gradient type) over the
 *      group of the replicas' stage-s IPUs (gcl_all_reduce, the automatic algorithm).
 * No weight update is charged (an optimizer's few FLOPs per parameter are noise next to the rest).
 * The step time is the slowest IPU's clock advance over the timed steps (after --warmup steps,
 * so that the pipeline's stages start skewed as they do in steady state), divided by --steps.
 *
 * Assumptions, every one of them a number someone picked (the README lists them with reasons):
 *   - Backward costs SIMSTEP_BACKWARD_FACTOR (2) x the forward FLOPs (one product for the input
 *     gradient and one for the weight gradient per forward product).
 *   - The model's FLOPs and parameters split evenly over its stages.
 *   - Compute runs at the cost model's roofline (the GC200's peak FLOPS for the compute type);
 *     a real IPU reaches a fraction of it, so simulated throughput is an upper bound on compute
 *     and the communication terms are, relatively, a lower bound on their real weight. Scale it
 *     with --compute-efficiency.
 *   - The bytes a compute charge moves through tile memory: the stage's weights plus the
 *     micro-batch's boundary activations in and out (x the backward factor for backward).
 *   - Activations and their gradients cross stage boundaries in the compute type; each sample
 *     carries --activation-size elements across every boundary.
 *   - Simulated memory per IPU holds the stage's weights (compute type), its gradient
 *     accumulator (gradient type) and one micro-batch of boundary activations each way. Stashed
 *     activations and optimizer state are not counted (recomputation and off-chip state assumed).
 *   - resnet50: 25.6 M parameters; 4.1 GFLOP forward per 224x224 image (the figure usually
 *     quoted; it counts a multiply-add as one operation, so it is low by up to 2x); micro-batch
 *     16; gradient accumulation 8; a stage boundary carries 28x28x512 = 401,408 values per
 *     image (the output of ResNet-50's conv3 block; only used with --stages > 1).
 *   - bert-large: 340 M parameters; sequence length 128 (pre-training phase 1); forward FLOPs
 *     per sequence 2 x params x 128 = 87.04 G (one multiply-add per parameter per token; the
 *     attention scores add ~2% at this length and are ignored); micro-batch 8; gradient
 *     accumulation 32; a stage boundary carries 128 x 1024 = 131,072 values (the hidden states).
 */
#ifndef SIMSTEP_H
#define SIMSTEP_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gcl/gcl.h"

#define SIMSTEP_BACKWARD_FACTOR 2.0

typedef struct {
    const char *model;     /* resnet50, bert-large or custom */
    double params;         /* parameters of the whole model */
    double flops;          /* forward FLOPs per sample, whole model */
    double act_elems;      /* values per sample crossing a stage boundary */
    double efficiency;     /* fraction of the peak FLOPS compute reaches */
    long micro_batch;      /* samples per micro-batch and replica */
    long accum;            /* micro-batches per step and replica (0: from global_batch) */
    long global_batch;     /* samples per step over all replicas (0: not given) */
    long stages;           /* IPUs per replica (0: from the job) */
    long steps, warmup;    /* timed steps, and untimed ones before them */
    long replicas;         /* replicas without poprun */
    gcl_dtype_t grad_type; /* the all-reduced gradients */
    gcl_dtype_t comp_type; /* compute precision, weights and activations */
    const char *json;      /* write the result here */
    const char *topology;  /* GCL_TOPOLOGY without poprun */
} simstep_opts_t;

/* What instance 0 reports; filled by the first IPU of replica 0. */
typedef struct {
    double step_us;                 /* slowest IPU's clock advance per step */
    double compute_us, exchange_us; /* means over every IPU, per step */
    double sync_us, idle_us;        /* ditto */
    double allreduce_us;            /* mean time inside the gradient all-reduce, per step */
    uint64_t peak_memory;           /* the largest peak of simulated SRAM of any IPU */
    char algo[48];                  /* the all-reduce algorithm of stage 0 */
} simstep_result_t;

typedef struct {
    simstep_opts_t o;
    gcl_job_info_t info;
    int stages;        /* resolved */
    long accum;        /* resolved */
    size_t grad_count; /* gradient elements per IPU (params / stages, rounded up) */
    size_t act_count;  /* values per boundary message (micro-batch x activation size) */
    double fwd_flops;  /* per micro-batch and stage */
    double fwd_bytes;  /* ditto */
    char topology[64];
    simstep_result_t res;
    atomic_int failed;
    char error[1024];
} simstep_t;

/* Parses ARGV into O: 0, 1 after printing help, or 2 after printing a one-line error. */
int simstep_parse(int argc, char **argv, simstep_opts_t *o);
/* Checks O against the job and derives the per-IPU sizes: 0, or 2 after a one-line error. */
int simstep_resolve(simstep_t *w);
/* The per-IPU program (gcl_run). */
gcl_status_t simstep_program(gcl_ctx_t ctx, void *arg);
/* Prints the summary and writes the JSON file (instance 0). Returns 0, or 1 if the file failed. */
int simstep_report(const simstep_t *w);
/* Samples per step over the job. */
double simstep_global_batch(const simstep_t *w);

#endif
