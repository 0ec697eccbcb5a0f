/*
 * Requests: one started call (a collective or a point-to-point transfer) and the progress
 * engine that moves every outstanding request of an IPU whenever it waits on any of them.
 */
#ifndef GCL_REQUEST_H
#define GCL_REQUEST_H

#include "base/wait.h"
#include "engine/exec.h"
#include "engine/simtime.h"

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
    /* A parked call whose caller's part was done before its executor was set up (an eager
     * broadcast's reader that found the root's cell at once): sets it up and launches it, at
     * the IPU's next call, with ARG; a failure is the call's. NULL once done, or if none. */
    gcl_status_t (*resume)(struct gcl_request *r, void *arg);
    void *resume_arg;
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
/* gcl_request_launch for a call whose entry was taken before (gcl_sim_enter, AT) and whose call
 * was published then: the rest of it. */
void gcl_request_launch_entered(struct gcl_request *r, const gcl_sim_entry_t *at);
/* Parks R, whose caller's part is done (exec.h, returned) but which has not been launched: its
 * RESUME (with ARG) launches it when the IPU settles it. */
void gcl_request_park(struct gcl_request *r, gcl_status_t (*resume)(struct gcl_request *, void *),
                      void *arg);
/* Progresses every outstanding request of IPU once; 1 if anything moved. */
int gcl_ipu_progress(gcl_ipu_t *ipu);
/* Completes R (progressing the others too), frees it, returns its status. A blocking call
 * whose caller's part is done (exec.h, returned) returns then, and stays parked on its IPU. */
gcl_status_t gcl_request_complete(struct gcl_request *r);
/* Completes and retires IPU's parked call, if any: its status (its failure was recorded as a
 * failed call's is). KEEP_FAILURE: a failed one stays parked, for the next call to report. Every
 * call, gcl_wait and gcl_test settles first, and so does whatever reads or charges the IPU's
 * simulated clock: so calls retire, and charge the clock, in the program's order. */
gcl_status_t gcl_ipu_settle(gcl_ipu_t *ipu, int keep_failure);
/* gcl_ipu_settle before a call whose failures RECORD records: a failure of the parked call is
 * this call's too, its sentence copied into RECORD. */
gcl_status_t gcl_ipu_settle_for(gcl_ipu_t *ipu, gcl_err_t *record);
/* The progress and checks of gcl_test: *DONE is 1 once R has completed (and is freed). */
gcl_status_t gcl_request_test(struct gcl_request *r, int *done);
/* Cancels and frees every request IPU left unfinished (end of gcl_run). */
void gcl_request_abandon_all(gcl_ipu_t *ipu);

#endif /* GCL_REQUEST_H */
