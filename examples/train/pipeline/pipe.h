/*
 * Pipeline schedules: the order in which stage s of k runs the forward (F) and backward (B)
 * passes of the G micro-batches of one step.
 *
 * gpipe: every forward, then every backward (Huang et al., "GPipe", 2019). A stage holds the
 *        activations of all G micro-batches at once.
 * 1f1b:  PipeDream-Flush (Narayanan et al., 2021): k-s-1 forwards to fill the pipeline, then one
 *        forward and one backward in turn, then the remaining backwards. A stage holds at most
 *        k-s micro-batches' activations, whatever G is.
 *
 * In both, backwards run in micro-batch order 0, 1, ..., G-1, so gradients are accumulated in
 * the same order as the unsplit model does: the result is bitwise the same whatever the
 * schedule and the split. Trace of 1f1b with k = 3 stages and G = 4 micro-batches:
 *
 *   stage 0: F0 F1 F2 B0 F3 B1 B2 B3
 *   stage 1: F0 F1 B0 F2 B1 F3 B2 B3
 *   stage 2: F0 B0 F1 B1 F2 B2 F3 B3
 */
#ifndef TRAIN_PIPE_H
#define TRAIN_PIPE_H

typedef enum { PIPE_GPIPE = 0, PIPE_1F1B = 1 } pipe_schedule_t;

typedef struct {
    char pass; /* 'F' or 'B' */
    int micro; /* micro-batch */
} pipe_op_t;

const char *pipe_schedule_name(pipe_schedule_t s);
/* Parses "gpipe" or "1f1b". Returns 0, or -1. */
int pipe_schedule_parse(const char *text, pipe_schedule_t *out);

/* Fills OPS (2 x NMICRO entries) with stage STAGE's order of passes. */
void pipe_schedule(pipe_schedule_t s, int stage, int nstages, int nmicro, pipe_op_t *ops);

/* Activation slots STAGE needs: the most micro-batches it holds at once under S. Micro-batch m
 * uses slot m % slots, which is free by then because backwards run in micro-batch order. */
int pipe_slots(pipe_schedule_t s, int stage, int nstages, int nmicro);

#endif
