/*
 * sim-step --plan's parts (plan.c searches; plan_space.c makes the shapes and placements;
 * plan_report.c simulates, prints and writes the result).
 */
#ifndef SIMSTEP_PLAN_H
#define SIMSTEP_PLAN_H

#include <stddef.h>

#include "simstep.h"

#define PLAN_MAX_SETS 32 /* leave-one-out sets of the fitted constants, at most */

/* One way to run the model on the pod. */
typedef struct {
    int replicas, stages;
    long micro, accum;
    char placement[512]; /* --att-ffn-placement, or "" for the balancing rule */
    int recompute;       /* 0 checkpoints, 1 none, 2 stage */
    int offchip, rts;    /* the optimizer state off chip; sharded over the replicas */
    int dropped;         /* it does not fit with the reserve */
    double bound;        /* samples/s its lock-step compute allows */
    double lockstep_s;   /* that step: the cycles' busiest work and host exchanges, seconds */
    double refined;      /* samples/s with the gradient reduction replayed too */
    double headroom;     /* the least memory left on an IPU, bytes */
    int simulated;       /* the rest is known */
    double sps, step_us;
    double share[5];     /* compute, exchange, sync, host, idle: shares of the mean IPU's step */
    double reduce_share; /* the gradient reduction's share */
    double peak;         /* the largest simulated SRAM in use on an IPU, bytes */
    double ttt_s;        /* time to train (0: not asked) */
    double range_lo, range_hi;       /* samples/s over the leave-one-out sets (plan_range.c) */
    double under_set[PLAN_MAX_SETS]; /* samples/s under each of them */
} plan_cand_t;

typedef int (*plan_shape_fn)(void *ctx, const plan_cand_t *shape);

/* The optimizer state's word for sim-step --optimizer-state. */
const char *plan_state(const plan_cand_t *c);

/* Calls FN with the shape of every placement searched for STAGES x REPLICAS with micro-batch
 * MICRO and accumulation ACCUM (the fields above "recompute"). Returns 0 or FN's non-zero. */
int plan_placements(simstep_t *w, gcl_instance_t inst, int stages, int replicas, long micro,
                    long accum, void *ctx, plan_shape_fn fn);

/* The SRAM of one IPU of INST's pod, bytes. */
double plan_capacity(simstep_t *w, gcl_instance_t inst);

/* Whether any of the N candidates fits. */
int plan_any_fits(const plan_cand_t *c, size_t n);

/* When none fits: one line naming the model's largest layer and the memory it needs alone, and
 * exit status 1. */
int plan_none_fits(simstep_t *w, gcl_instance_t inst, int ipus);

/* Simulates C in full, as `sim-step` with plan_command's options would. Returns 0, or 1. */
int plan_simulate(const simstep_t *w, plan_cand_t *c);

/* The sim-step options that run C (into BUF). */
void plan_command(const simstep_t *w, const plan_cand_t *c, char *buf, size_t len);

/* The leave-one-out sets of the fitted constants, as topology overrides (plan_range.c): how
 * many, and the I-th (NULL past the last). */
size_t plan_range_sets(void);
const char *plan_range_set(size_t i);

/* Simulates the first ROWS of C again under every leave-one-out set and keeps each one's least
 * and greatest samples/s (with its own). Returns 0, or 1 when a simulation failed. */
int plan_ranges(const simstep_t *w, plan_cand_t *c, size_t rows);

/* Prints the table of the best and their commands, and writes --json. Returns the exit status. */
int plan_report(const simstep_t *w, plan_cand_t *c, size_t n, long considered, long simulated,
                long dropped, double reserve);

#endif /* SIMSTEP_PLAN_H */
