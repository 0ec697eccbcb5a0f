/*
 * The state of one call in flight, whichever engine runs it: its buffers, signature and key, how
 * its simulated time is charged (simtime.h), and each engine's own progress. The engines: the
 * message engine (messages.h) and host-direct (direct.h).
 *
 * Simulated time has two modes:
 *   CHARGE  the call's own schedule is what the pod runs: every step is charged as it happens
 *           (simtime.c), each message carrying its sender's clock.
 *   REPLAY  the bytes took another path than the pod's (host-direct, or the canonical order's
 *           messages): the call learns every rank's clock at entry and, when it is done,
 *           replays the pod algorithm's timeline from them (choice/replay.h).
 */
#ifndef GCL_EXEC_H
#define GCL_EXEC_H

#include "base/wait.h"
#include "coll/algo.h"
#include "engine/peers.h"
#include "sim/base/time.h"
#include "transport/transport.h"

typedef enum { GCL_SIM_CHARGE, GCL_SIM_REPLAY } gcl_sim_mode_t;

typedef struct {
    gcl_sim_mode_t mode;
    int sync;               /* a collective: charge one synchronisation of the group first */
    const uint32_t *mult;   /* CHARGE: per op, its multiplier for the links it shares (shape.h) */
    uint32_t *mult_own;     /* a copy, for a request that outlives its group's memo */
    const coll_algo_t *pod; /* REPLAY: the pod algorithm whose timeline is replayed */
    coll_args_t pod_args;
    sim_time_t *entry;     /* REPLAY: [group size] every rank's clock at entry */
    char *seen;            /* REPLAY by messages: [group size] entries learnt */
    sim_time_t call_start; /* the IPU's clock when the call started */
    sim_time_t step_start; /* when the current step started, on the call's own clock */
    /* The call's own clock: a call runs on a timeline of its own, from its start (after the
     * sync) step by step, whatever the IPU does meanwhile; the IPU's clock catches up with it
     * when the call retires (gcl_wait, gcl_test, or the end of a blocking call), a point of the
     * program's own order. So simulated time does not depend on when the host progressed it. */
    sim_time_t t;
    sim_time_t idle_acc, exch_acc; /* the call's idle and exchange time so far */
} gcl_simplan_t;

/* How a host-direct call reaches its peers' buffers (direct.h). */
typedef enum { GCL_DIRECT_POINTER, GCL_DIRECT_CMA, GCL_DIRECT_STAGED } gcl_direct_mode_t;

/* Bytes folded at a time in a host-direct call's accumulator. */
#define GCL_DIRECT_ACC_BYTES ((size_t)64 << 10)

typedef struct {
    gcl_direct_mode_t mode;
    coll_collective_t coll;
    uint64_t count;     /* the call's count, as in coll/algo.h */
    uint64_t per_round; /* elements of the unit a round moves */
    uint64_t round, nrounds;
    int phase;
    uint64_t target;        /* the barrier epoch waited for */
    char *acc;              /* folding space: the fold's scratch slots and two leaves */
    const void **leaves;    /* [group size]: the operands of one piece of the fold */
    char **in_at, **out_at; /* [group size]: each rank's input and output mapped here, or NULL
                             * (then reached with process_vm_readv/writev) */
} gcl_direct_t;

/* An eager call (eager.h): its cell, and where it found each peer's. */
typedef struct {
    int phase;
    int cell;                       /* ours, once claimed */
    int found;                      /* ranks whose cell is found (ours included) */
    int acked;                      /* we acked what we read */
    int fanned_in;                  /* a barrier's first rank found every cell before its own */
    int8_t at[GCL_EAGER_MAX_RANKS]; /* each rank's cell, -1 until found */
} gcl_eager_t;

struct gcl_engine;

typedef struct gcl_exec {
    const struct gcl_engine *engine;
    gcl_peers_t *peers; /* the group it runs over */
    gcl_err_t *err;     /* the request's error record */
    const coll_schedule_t *sched;
    void *bufs[COLL_BUF_COUNT];
    void *tmp_alloc;
    coll_exec_info_t info;
    gcl_sig_t sig;
    const char *what; /* "all_reduce", for messages */
    uint64_t key0;    /* communicator key << 32 | sequence: names the call in every message */
    int phantom;
    int done;
    /* The caller's part is done: the output is written and the input no longer read, and what
     * is left (peers' entry clocks, their signatures, acks) needs nothing of the caller. A
     * blocking call may then return, parked until its IPU's next call (request.h). Set by an
     * eager broadcast, whose root sends and whose readers copy without waiting for the whole
     * group, as OpenMPI's does; the simulated time still waits for every rank's entry. */
    int returned;
    /* The message engine (messages.c). */
    uint32_t step; /* the step in progress */
    int posted;    /* its transfers have started */
    gcl_xfer_t *xfers;
    uint32_t nxfers, xcap;
    uint32_t *sent, *recvd;    /* [group size]: messages so far to / from each rank */
    gcl_group_scratch_t *lent; /* a blocking call's: its group's memory, not to be freed */
    gcl_simplan_t sim;
    gcl_direct_t direct;
    gcl_eager_t eager;
} gcl_exec_t;

/* Prepares X to run SCHED over PEERS on ENGINE with IN and OUT (KEY = the call's key0);
 * failures go to ERR. Host-direct calls set their engine up afterwards (gcl_direct_setup).
 * BORROW: a blocking call, which uses its group's scratch memory (peers.h) instead of its own. */
gcl_status_t gcl_exec_start(gcl_exec_t *x, const struct gcl_engine *engine, gcl_peers_t *peers,
                            const coll_schedule_t *sched, const void *in, void *out,
                            const gcl_sig_t *sig, uint64_t key, const char *what, gcl_err_t *err,
                            int borrow);
/* Frees what X holds, cancelling transfers left unfinished by a failure. */
void gcl_exec_finish(gcl_exec_t *x);

/*
 * Engines: what runs a call's data movement. Each is one table, like the transports:
 *   messages  the schedule's steps over the transports (messages.c)
 *   direct    host-direct: straight out of and into the group's buffers in this host's memory
 *             (direct.c, direct_move.c)
 * The request layer (request.c) drives every engine the same way, and the liveness checks
 * (liveness.c) ask each the same questions.
 */
typedef struct gcl_engine {
    const char *name;
    /* Advances X: 1 if anything moved, 0 if it waits for peers, or a negative status. */
    int (*progress)(gcl_exec_t *x);
    /* A peer the call waits on that is gone for good: 1, its IPU in *IPU and a sentence. */
    int (*gone)(gcl_exec_t *x, int *ipu, char *why, size_t len);
    /* The global IPUs the call still waits on (at most MAX); returns how many. */
    int (*waiting)(const gcl_exec_t *x, int *ipus, int max);
    /* What it waits for, as a sentence ("replica 3 (...) to send 4096 bytes; ..."). */
    void (*pending)(gcl_exec_t *x, char *buf, size_t len);
    /* Where the call is ("step 4 of 14", "host-direct round 2 of 3"). */
    void (*where)(const gcl_exec_t *x, char *buf, size_t len);
    /* Whether waiting must poll: something it waits on does not ring the doorbell. */
    int (*polls)(const gcl_exec_t *x);
    /* Optional: lets go of what the call holds in the host box, done or failed. */
    void (*finish)(gcl_exec_t *x);
} gcl_engine_t;

#endif /* GCL_EXEC_H */
