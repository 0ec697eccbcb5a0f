/*
 * IPU contexts: the thread that runs the program on one simulated IPU, and what it owns: its
 * communicators, its point-to-point state, its error record, and what the engines see of it
 * (its gcl_ipu_t: its place in the job, its outstanding requests, its latest failure).
 */
#ifndef GCL_CTX_H
#define GCL_CTX_H

#include <pthread.h>

#include "engine/peers.h"
#include "instance/instance.h"

struct gcl_ctx {
    gcl_ipu_t ipu; /* what the engines see of this IPU */
    struct gcl_instance *inst;
    int local_index; /* 0 .. num_local_ipus-1 */
    int replica, ipu_pos;
    pthread_t thread;
    gcl_program_t program;
    void *arg;
    gcl_status_t status;
    gcl_err_t err;                    /* calls without a communicator: gcl_ctx_last_error */
    gcl_err_t kept;                   /* a destroyed communicator's failure, if it was that */
    struct gcl_comm *comms;           /* every live communicator of this IPU, to free at the end */
    uint32_t comms_created;           /* so far: names the next communicator */
    struct gcl_comm *p2p;             /* the IPUs of this replica, for gcl_send / gcl_recv */
    struct gcl_p2p_count *p2p_counts; /* messages so far per (peer, tag, direction) */
    int np2p_counts, p2p_cap;
};

/* Records a failure of a call without a communicator in CTX's record; evaluates to STATUS. */
#define gcl_ctx_fail(ctx, status, ...)                                                             \
    ((ctx)->ipu.last_failure = &(ctx)->err, gcl_err_set(&(ctx)->err, (status), __VA_ARGS__))

#endif /* GCL_CTX_H */
