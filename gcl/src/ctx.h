/*
 * IPU contexts: the thread that runs the program on one simulated IPU, and what it owns: its
 * communicators, its point-to-point state, its outstanding requests, its error record.
 */
#ifndef GCL_CTX_H
#define GCL_CTX_H

#include <pthread.h>

#include "instance/instance.h"

struct gcl_ctx {
    struct gcl_instance *inst;
    int local_index; /* 0 .. num_local_ipus-1 */
    int global_ipu, replica, ipu_pos;
    int hostlocal; /* this IPU's index in the host box */
    pthread_t thread;
    gcl_program_t program;
    void *arg;
    gcl_status_t status;
    gcl_err_t err;                    /* calls without a communicator: gcl_ctx_last_error */
    const gcl_err_t *last_failure;    /* the record of this IPU's latest failure */
    gcl_err_t kept;                   /* a destroyed communicator's failure, if it was that */
    struct gcl_comm *comms;           /* every live communicator of this IPU, to free at the end */
    uint32_t comms_created;           /* so far: names the next communicator */
    struct gcl_comm *p2p;             /* the IPUs of this replica, for gcl_send / gcl_recv */
    struct gcl_p2p_count *p2p_counts; /* messages so far per (peer, tag, direction) */
    int np2p_counts, p2p_cap;
    struct gcl_request *active; /* started, unfinished requests: progressed by every wait */
};

/* This IPU's simulated state. */
static inline gcl_sim_ipu_t *gcl_ctx_sim(struct gcl_ctx *ctx)
{
    return &ctx->inst->sim.ipus[ctx->local_index];
}

/* Records a failure of a call without a communicator in CTX's record; evaluates to STATUS. */
#define gcl_ctx_fail(ctx, status, ...)                                                             \
    ((ctx)->last_failure = &(ctx)->err, gcl_err_set(&(ctx)->err, (status), __VA_ARGS__))

#endif /* GCL_CTX_H */
