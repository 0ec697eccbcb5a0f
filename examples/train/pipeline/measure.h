/*
 * Per-step measurements of a run and their statistics: pure C, shared by both backends and the
 * unit tests (tests/train/test_measure.c).
 *
 * Each IPU of the job (a replica's pipeline stage; a rank's replica with --backend mpi) records
 * every step's real time on its thread, and how much of it was spent waiting: inside the
 * gradient all-reduce, and for pipeline transfers. A replica's step ends when its slowest stage
 * does. The first steps are warm-up (page faults, first connections, caches): they are
 * reported one by one and left out of the distribution of the rest.
 */
#ifndef TRAIN_MEASURE_H
#define TRAIN_MEASURE_H

#include <stddef.h>

/* Warm-up steps: the first MEASURE_WARMUP of a run of 20 steps or more, a quarter of shorter
 * runs (none below 4 steps). */
#define MEASURE_WARMUP 5

/*
 * One IPU of the job over the run, as instance 0 learns it at the end. All doubles, so that a
 * record travels as it is.
 */
typedef struct {
    double first_step_s;    /* real: from its process's start to the end of its first step */
    double host_peak_bytes; /* real: its process's peak resident memory (getrusage) */
    /* simulated, summed over the training steps (0 with --backend mpi) */
    double sim_step_s, sim_compute_s, sim_exchange_s, sim_sync_s, sim_idle_s, sim_host_wait_s;
    double sim_allreduce_s; /* of the step, the gradient all-reduce (its sync and exchange) */
    /* simulated memory, bytes: peak, capacity, and what the program allocated, by kind */
    double mem_peak, mem_capacity, mem_weights, mem_gradients, mem_optimizer, mem_activations,
        mem_stash;
} ipu_record_t;

#define IPU_RECORD_DOUBLES (sizeof(ipu_record_t) / sizeof(double))

/* The per-step measurements of every IPU of the job: NIPUS x NSTEPS values each, IPU by IPU
 * (IPU g is stage g % stages of replica g / stages), the steps of this run in order. */
typedef struct {
    int nipus;
    long nsteps;
    ipu_record_t *ipu;
    double *step_s; /* real: the step's wall time on the IPU's thread */
    double *coll_s; /* real: of it, time inside the gradient all-reduce (waiting for peers) */
    double *p2p_s;  /* real: of it, time waiting for pipeline transfers */
} step_measures_t;

/* A distribution: nearest-rank percentiles (the smallest value with at least p% of the values
 * at or below it), the maximum and the mean of COUNT values. */
typedef struct {
    double p50, p90, p99, max, mean;
    long count;
} measure_dist_t;

/* The distribution of V[0..N), which it sorts. N == 0 gives zeros. */
void measure_dist(double *v, size_t n, measure_dist_t *out);

/* Warm-up steps of a run of STEPS steps (see MEASURE_WARMUP). */
long measure_warmup(long steps);

/* What the report says of a run's real step times. */
typedef struct {
    long warmup;                  /* warm-up steps */
    double first[MEASURE_WARMUP]; /* each warm-up step's time (its slowest replica) */
    measure_dist_t step;          /* every later step of every replica */
    double coll_fraction;         /* time in the gradient all-reduce / step time, later steps */
    double p2p_fraction;          /* time waiting for pipeline transfers / step time */
    double time_to_first_step_s;  /* the slowest IPU's */
    double host_peak_bytes;       /* the largest process's */
} measure_summary_t;

/* Summarises M, a job of REPLICAS x STAGES IPUs. Returns 0, or -1 when out of memory. */
int measure_summarise(const step_measures_t *m, int replicas, int stages, measure_summary_t *out);

/* Replica R's share of time in the gradient all-reduce over the steps after the warm-up. */
double measure_coll_fraction(const step_measures_t *m, int replicas, int stages, int r);

void measure_free(step_measures_t *m);

#endif
