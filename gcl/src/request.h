/*
 * Requests: one started call (a collective or a point-to-point transfer) and the progress
 * engine that moves every outstanding request of an IPU whenever it waits on any of them.
 */
#ifndef GCL_REQUEST_H
#define GCL_REQUEST_H

#include "exec.h"

struct gcl_request {
    gcl_exec_t x;
    struct gcl_comm *comm;
    coll_schedule_t own; /* the schedule, unless the call borrowed comm->sched */
    void *scratch;       /* squared input of a SQUARE_ADD */
    struct gcl_request *next;
    int finished;
    gcl_status_t status;
    char error[GCL_ERRLEN];
};

/* What a call asks for, in the collectives layer's terms (count as in coll/algo.h). */
typedef struct {
    coll_collective_t coll;
    const void *send;
    void *recv;
    size_t count;
    gcl_dtype_t type;
    gcl_redop_t op;
    int root;
    const char *what; /* "all_reduce", for messages */
} gcl_call_t;

/*
 * Checks CALL, builds its schedule and starts it on COMM. BLOCKING calls borrow the
 * communicator's schedule memory and complete before returning; others return a request in
 * *OUT. Failures are recorded in the communicator's error text.
 */
gcl_status_t gcl_collective(struct gcl_comm *comm, const gcl_call_t *call, int blocking,
                            struct gcl_request **out);

/* Starts the prepared executor of R (schedule built, signature set) and adds R to the IPU's
 * outstanding requests. */
gcl_status_t gcl_request_launch(struct gcl_request *r);
/* Progresses every outstanding request of CTX once; 1 if anything moved. */
int gcl_ctx_progress(struct gcl_ctx *ctx);
/* Completes R (progressing the others too), frees it, returns its status. */
gcl_status_t gcl_request_complete(struct gcl_request *r);
/* Cancels and frees every request CTX left unfinished (end of gcl_run). */
void gcl_request_abandon_all(struct gcl_ctx *ctx);
/* Whether a peer told CTX's IPU that its call KEY0 is mismatched; records the reason. */
int gcl_poisoned(struct gcl_ctx *ctx, uint64_t key0);
/* Tells every member of COMM on this host that the call KEY0 is mismatched, and why. */
void gcl_poison_group(struct gcl_comm *comm, uint64_t key0, const char *reason);

#endif /* GCL_REQUEST_H */
