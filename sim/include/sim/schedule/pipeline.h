/*
 * Pipelines as Graphcore runs them: the order of passes on each stage, how many micro-batches a
 * stage holds at once, the split of layers over stages, and the bubble.
 *
 * Schedules (A micro-batches per step over K stages; stage s):
 *   gpipe  every forward, then every backward (Huang et al., "GPipe", 2019). A stage holds the
 *          activations of all A micro-batches.
 *   1f1b   K-s-1 forwards to fill the pipeline, then one forward and one backward in turn, then
 *          the remaining backwards (PipeDream-Flush, Narayanan et al. 2021; the steady state of
 *          Graphcore's "grouped" schedule). A stage holds at most K-s micro-batches.
 * Trace of 1f1b with K = 3 and A = 4:
 *     stage 0: F0 F1 F2 B0 F3 B1 B2 B3
 *     stage 1: F0 F1 B0 F2 B1 F3 B2 B3
 *     stage 2: F0 B0 F1 B1 F2 B2 F3 B3
 * With every stage taking f per forward and b per backward and free links, both schedules take
 * (A + K - 1)(f + b) per step, of which each stage idles (K - 1)(f + b): the bubble fraction is
 * (K - 1) / (A + K - 1).
 *   popart PopART's pipeline, which Graphcore's BERT ran: the P forward pipeline stages
 *          (fragments, sim/plan/plan.h) and their backward passes make 2P - 1 pipeline stages, the
 *          last forward stage doing its backward in the same stage ("the last fwd pass pipeline
 *          stage is also the first bwd pass pipeline stage", popart Ir::growGradOps). A step is
 *          A + 2P - 2 cycles (PipelineInfo: a fill phase of 2P - 2 cycles, A - (2P - 2) main
 *          cycles, a flush of 2P - 2). In cycle c, pipeline stage q runs micro-batch c - q when
 *          that is one of the A; every IPU runs the stages it holds, then all IPUs copy
 *          activations and gradients to their neighbours and synchronise: the cycle lasts as
 *          long as the busiest IPU. Fragment f holds min(2(P - f) - 1, A) micro-batches. With
 *          equal stages the bubble is (2P - 2) / (A + 2P - 2). A single stage (P = 1) is plain
 *          gradient accumulation: A cycles of a forward and a backward.
 *
 * The balancing rule (what a split is when the user gives none): contiguous stages, every stage
 * at least one layer, minimising the largest stage's time per micro-batch (forward + backward +
 * recomputation, from the cost model). The smallest bottleneck T is found by bisection over
 * whole picoseconds; the layers are then packed front to back into stages of at most T, a stage
 * closing early only when as many layers remain as stages. A model may pin its first layers
 * alone on stage 0 (bert-large's embedding, as in Graphcore's MLPerf runs).
 */
#ifndef SIM_PIPELINE_H
#define SIM_PIPELINE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"

typedef enum sim_schedule {
    SIM_SCHED_GPIPE = 0,
    SIM_SCHED_1F1B,
    SIM_SCHED_POPART,
    SIM_SCHED_COUNT
} sim_schedule_t;

const char *sim_schedule_name(sim_schedule_t s);
int sim_schedule_parse(const char *name); /* -1 when unknown */

typedef struct sim_pipe_op {
    char pass;      /* 'F' or 'B' */
    uint32_t micro; /* micro-batch, 0-based */
} sim_pipe_op_t;

/* Fills OPS (2 x MICRO entries) with stage STAGE's order of passes under S. */
void sim_pipe_order(sim_schedule_t s, int stage, int stages, uint32_t micro, sim_pipe_op_t *ops);

/* Micro-batches whose activations STAGE holds at once: A for gpipe, min(K - s, A) for 1f1b,
 * min(2(K - s) - 1, A) for popart (STAGE a fragment, K the fragments). */
uint32_t sim_pipe_in_flight(sim_schedule_t s, int stage, int stages, uint32_t micro);

/* (K - 1) / (A + K - 1); for popart, with K fragments, (2K - 2) / (A + 2K - 2). */
double sim_pipe_bubble_formula(int stages, uint32_t micro);
double sim_pipe_bubble_popart(int fragments, uint32_t micro);

/* Cycles of a popart step of MICRO micro-batches over FRAGMENTS forward stages: A + 2P - 2. */
uint32_t sim_pipe_cycles(int fragments, uint32_t micro);

/* Splits the N layers of cost COST[i] into STAGES contiguous stages by the balancing rule, with
 * layers [0, PIN) alone on stage 0 when PIN > 0. FIRST[s] receives stage s's first layer
 * (FIRST[0] = 0). Returns 0, or -EINVAL when there are fewer layers than stages (or than the
 * stages left after the pin). */
int sim_pipe_balance(const sim_time_t *cost, size_t n, int stages, size_t pin, uint32_t *first);

/* The step of an ideal pipeline: stage s takes FWD[s] and BWD[s] per micro-batch, a message
 * between neighbours takes LINK; every stage runs its sim_pipe_order() and a pass starts when
 * the stage is free and its input has arrived. */
typedef struct sim_pipe_result {
    sim_time_t makespan; /* the last backward's end */
    sim_time_t idle_max; /* the most any stage idles before its last pass ends */
    double bubble;       /* mean over stages of idle / makespan */
} sim_pipe_result_t;

/* Returns 0, -EINVAL for STAGES < 1 or MICRO < 1 or more than 4096 of either, or -ENOMEM. */
int sim_pipe_simulate(sim_schedule_t s, int stages, uint32_t micro, const sim_time_t *fwd,
                      const sim_time_t *bwd, sim_time_t link, sim_pipe_result_t *out);

#endif /* SIM_PIPELINE_H */
