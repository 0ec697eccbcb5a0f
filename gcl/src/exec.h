/*
 * The executor: runs one rank's schedule (collectives/) over the transports, step by step. A
 * state machine, so that blocking calls and non-blocking requests share it: start, then progress
 * until done (or wait, which progresses and sleeps in between).
 */
#ifndef GCL_EXEC_H
#define GCL_EXEC_H

#include "transport.h"
#include "coll/algo.h"
#include "sim/time.h"
#include "wait.h"

/* How a host-direct call reaches its peers' buffers (direct.c). */
typedef enum { GCL_DIRECT_POINTER, GCL_DIRECT_CMA, GCL_DIRECT_STAGED } gcl_direct_mode_t;

/* A call run host-direct (direct.c) instead of by messages. */
typedef struct {
    int on;
    gcl_direct_mode_t mode;
    coll_collective_t coll;
    uint64_t count;     /* the call's count, as in coll/algo.h */
    uint64_t per_round; /* elements of the unit a round moves */
    uint64_t round, nrounds;
    int phase;
    uint64_t target;             /* the barrier epoch waited for */
    const coll_algo_t *sim_algo; /* the pod algorithm whose schedule the simulated time follows */
    coll_args_t sim_args;
    sim_time_t *entry;      /* [group size]: every rank's simulated clock when it entered */
    char *acc, *tmp;        /* folding space: DIRECT_ACC_BYTES each */
    char **in_at, **out_at; /* [group size]: each rank's input and output mapped here, or NULL
                             * (then reached with process_vm_readv/writev) */
} gcl_direct_t;

/* Bytes folded at a time in a host-direct call's accumulator. */
#define GCL_DIRECT_ACC_BYTES ((size_t)64 << 10)

typedef struct {
    struct gcl_comm *comm;
    const coll_schedule_t *sched;
    void *bufs[COLL_BUF_COUNT];
    void *tmp_alloc;
    coll_exec_info_t info;
    gcl_sig_t sig;
    const char *what; /* "all_reduce", for messages */
    uint64_t key0;    /* communicator key << 32 | sequence: names the call in every message */
    int phantom;
    uint32_t step; /* the step in progress */
    int posted;    /* its transfers have started */
    gcl_xfer_t *xfers;
    uint32_t nxfers, xcap;
    uint32_t *sent, *recvd; /* [group size]: messages so far to / from each rank */
    int done;
    gcl_status_t status;
    /* Simulated time (simcost.c). */
    const uint32_t *sim_mult;  /* per op: its place in the queues of the links it shares */
    uint32_t *sim_mult_own;    /* a copy, for a request that outlives the communicator's cache */
    int sim_sync;              /* a collective: charge one synchronisation of the group */
    sim_time_t sim_call_start; /* the IPU's clock when the call started */
    sim_time_t sim_step_start; /* ... and when the current step started */
    gcl_direct_t direct;
} gcl_exec_t;

/* Host-direct calls (direct.c). */
/* Whether COMM's call of COLL with BYTES per replica may run host-direct. */
int gcl_direct_eligible(struct gcl_comm *c, coll_collective_t coll, size_t bytes);
/* Sets X up to run the call host-direct; SIM_ALGO and A describe the pod algorithm whose
 * schedule the simulated time replays. */
void gcl_direct_setup(gcl_exec_t *x, const coll_algo_t *sim_algo, const coll_args_t *a);
int gcl_direct_progress(gcl_exec_t *x);
/* The data movement of one host-direct phase (direct_move.c): WORK for every mode, and the
 * gather of a staged all_reduce. */
gcl_status_t gcl_direct_work(gcl_exec_t *x);
void gcl_direct_gather(gcl_exec_t *x);
/* After the first barrier: where each rank's buffers can be reached by plain loads and stores. */
void gcl_direct_map_peers(gcl_exec_t *x);
/* Staged mode: elements of the current round, and rank Q's region WHICH (0: inputs, 1: results). */
uint64_t gcl_direct_round_len(const gcl_exec_t *x);
char *gcl_direct_region(const gcl_exec_t *x, int q, int which);
/* The host-box entry of rank RANK of X's group. */
hb_ipu_t *gcl_direct_box(const gcl_exec_t *x, int rank);
/* Ranks of X's group that have not reached the barrier X waits at, described into BUF. */
void gcl_direct_describe_pending(gcl_exec_t *x, char *buf, size_t len);
/* Replays the simulated timeline of ALGO's schedules for every rank of C from their entry
 * clocks ENTRY[], and advances this IPU's clock and statistics by its part (simcost.c). */
gcl_status_t gcl_sim_replay(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                            const sim_time_t *entry, uint64_t key0);
void gcl_sim_outcomes_free(struct gcl_instance *inst);
/* The simulated time ALGO takes for A over C's group when every rank starts at once. */
gcl_status_t gcl_sim_makespan(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                              sim_time_t *makespan);
/* The automatic choice by the cost model (simchoose.c): of the algorithms that support A, the
 * one whose simulated time over C's IPUs on the pod is least (the registry's order breaks
 * ties). The same on every rank of the group; cached per instance. WHY gets a sentence. */
const coll_algo_t *gcl_sim_choose(struct gcl_comm *c, const coll_args_t *a, char *why, size_t len);
void gcl_sim_choices_free(struct gcl_instance *inst);

/* Simulated time of a call (simcost.c): the call's synchronisation and trace slice, each
 * step's message times (set before the transfers start, carried to the receiver), and the
 * clock after each step (the latest arrival or injection). */
void gcl_sim_call_begin(gcl_exec_t *x);
void gcl_sim_step_post(gcl_exec_t *x);
void gcl_sim_step_done(gcl_exec_t *x);
void gcl_sim_call_end(gcl_exec_t *x);

/* The queue places of this rank's sends for a call (cached per communicator and call shape):
 * built from every rank's schedule of ALGO for A. *MULT stays valid until the next call on C. */
gcl_status_t gcl_simcost_prepare(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                                 const coll_schedule_t *mine, const uint32_t **mult);

/* Prepares X to run SCHED on COMM with IN and OUT (KEY = the call's key0). */
gcl_status_t gcl_exec_start(gcl_exec_t *x, struct gcl_comm *comm, const coll_schedule_t *sched,
                            const void *in, void *out, const gcl_sig_t *sig, uint64_t key,
                            const char *what);
/* Advances X: 1 if anything moved, 0 if it waits for peers, or a negative status. */
int gcl_exec_progress(gcl_exec_t *x);
/* Called every ~100 ms while X waits: a peer that failed or left, this instance aborting, a
 * mismatched message waiting unclaimed, a stall to warn about, or the timeout. */
gcl_status_t gcl_exec_check(gcl_exec_t *x, gcl_waiter_t *w);
/* Whether some unfinished transfer of X must be polled (nothing rings for it). */
int gcl_exec_polls(const gcl_exec_t *x);
/* Frees what X holds, cancelling transfers left unfinished by a failure. */
void gcl_exec_finish(gcl_exec_t *x);

#endif /* GCL_EXEC_H */
