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
    int phantom;
    uint32_t step; /* the step in progress */
    int posted;    /* its transfers have started */
    gcl_xfer_t *xfers;
    uint32_t nxfers, xcap;
    uint32_t *sent, *recvd; /* [group size]: messages so far to / from each rank */
    int done;
    gcl_status_t status;
} gcl_exec_t;

/* Prepares X to run COMM's current schedule (comm->sched) on IN and OUT. */
gcl_status_t gcl_exec_start(gcl_exec_t *x, struct gcl_comm *comm, const void *in, void *out,
                            const gcl_sig_t *sig, const char *what);
/* Advances X: 1 if anything moved, 0 if it waits for peers, or a negative status. */
int gcl_exec_progress(gcl_exec_t *x);
/* Progresses X until done, sleeping when idle, giving up after GCL_TIMEOUT_S of no progress. */
gcl_status_t gcl_exec_wait(gcl_exec_t *x);
/* Frees what X holds, cancelling transfers left unfinished by a failure. */
void gcl_exec_finish(gcl_exec_t *x);

#endif /* GCL_EXEC_H */
