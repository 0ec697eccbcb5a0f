/*
 * Requests: one started call (a collective or a point-to-point transfer) and the progress
 * engine that moves every outstanding request of an IPU whenever it waits on any of them.
 */
#ifndef GCL_REQUEST_H
#define GCL_REQUEST_H

#include "base/wait.h"
#include "engine/exec.h"

struct gcl_request {
    gcl_exec_t x;
    gcl_peers_t *peers;
    coll_schedule_t own; /* the schedule, unless the call borrowed its communicator's */
    void *scratch;       /* transformed input of a SQUARE_ADD or logical operator */
    struct gcl_request *next;
    int finished;
    gcl_status_t status;
    gcl_err_t err;  /* its failure, until it retires into its group's record */
    gcl_waiter_t w; /* its timeout and liveness checks, for gcl_wait and gcl_test alike */
    int kept;       /* a blocking call's, kept by its caller for the next: never freed here */
};

/* A request over PEERS, or NULL (and PEERS's record says so) when out of memory. */
struct gcl_request *gcl_request_new(gcl_peers_t *peers);
/* Makes R, memory its caller keeps (a communicator's, for its blocking calls), a fresh request
 * over PEERS; retiring it does not free it. */
void gcl_request_reuse(struct gcl_request *r, gcl_peers_t *peers);
/* Frees a request that was never launched. */
void gcl_request_discard(struct gcl_request *r);
/* Adds R (its executor started, simulated time planned) to its IPU's outstanding requests and
 * publishes its call for the liveness checks. */
void gcl_request_launch(struct gcl_request *r);
/* Progresses every outstanding request of IPU once; 1 if anything moved. */
int gcl_ipu_progress(gcl_ipu_t *ipu);
/* Completes R (progressing the others too), frees it, returns its status. */
gcl_status_t gcl_request_complete(struct gcl_request *r);
/* The progress and checks of gcl_test: *DONE is 1 once R has completed (and is freed). */
gcl_status_t gcl_request_test(struct gcl_request *r, int *done);
/* Cancels and frees every request IPU left unfinished (end of gcl_run). */
void gcl_request_abandon_all(gcl_ipu_t *ipu);

#endif /* GCL_REQUEST_H */
