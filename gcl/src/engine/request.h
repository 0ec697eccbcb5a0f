/*
 * Requests: one started call (a collective or a point-to-point transfer) and the progress
 * engine that moves every outstanding request of an IPU whenever it waits on any of them.
 */
#ifndef GCL_REQUEST_H
#define GCL_REQUEST_H

#include "engine/exec.h"
#include "base/wait.h"

struct gcl_request {
    gcl_exec_t x;
    struct gcl_comm *comm;
    coll_schedule_t own; /* the schedule, unless the call borrowed comm->sched */
    void *scratch;       /* transformed input of a SQUARE_ADD or logical operator */
    struct gcl_request *next;
    int finished;
    gcl_status_t status;
    gcl_err_t err; /* its failure, until it retires into its communicator's or context's */
    gcl_waiter_t w; /* its timeout and liveness checks, for gcl_wait and gcl_test alike */
};

/* A request for COMM, or NULL (and COMM's record says so) when out of memory. */
struct gcl_request *gcl_request_new(struct gcl_comm *comm);
/* Frees a request that was never launched. */
void gcl_request_discard(struct gcl_request *r);
/* Adds R (its executor started, simulated time planned) to the IPU's outstanding requests and
 * publishes its call for the liveness checks. */
void gcl_request_launch(struct gcl_request *r);
/* Progresses every outstanding request of CTX once; 1 if anything moved. */
int gcl_ctx_progress(struct gcl_ctx *ctx);
/* Completes R (progressing the others too), frees it, returns its status. */
gcl_status_t gcl_request_complete(struct gcl_request *r);
/* Cancels and frees every request CTX left unfinished (end of gcl_run). */
void gcl_request_abandon_all(struct gcl_ctx *ctx);

#endif /* GCL_REQUEST_H */
