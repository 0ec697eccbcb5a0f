/*
 * The executor: runs one rank's schedule (collectives/) over the transports, step by step. A
 * state machine, so that blocking calls and non-blocking requests share it: start, then progress
 * until done (or wait, which progresses and sleeps in between).
 */
#ifndef GCL_EXEC_H
#define GCL_EXEC_H

#include "transport.h"
#include "wait.h"

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
} gcl_exec_t;

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
