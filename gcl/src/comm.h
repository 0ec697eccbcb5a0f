/*
 * Communicators: a replica group seen from one IPU position. What a communicator decides once,
 * when it is created: its ranks' IPUs, instances and hosts, the transport to each rank, and
 * whether the whole group shares this host or this process. What it keeps between calls: its
 * sequence number, the schedule memory of blocking calls, the last automatic choice, and the
 * error record of its last call.
 */
#ifndef GCL_COMM_H
#define GCL_COMM_H

#include "coll/algo.h"
#include "coll/group.h"
#include "ctx.h"

/* The last automatic choice of a collective on this communicator: a call of the same shape
 * takes it without asking the instance's cache. */
typedef struct {
    coll_args_t a; /* the call (rank and node_of ignored); a.nranks == 0 when empty */
    const coll_algo_t *algo;
} gcl_choice_memo_t;

/* The queue places of this rank's sends for the last call shape run by messages. */
typedef struct {
    const coll_algo_t *algo;
    coll_args_t a;
    uint32_t *mult; /* per op of this rank's schedule */
    uint32_t nops;
} gcl_charge_memo_t;

/* Calls whose signatures a communicator remembers: a peer still in one of them is checked
 * against it (diag.c). */
#define GCL_COMM_HIST 8

struct gcl_comm {
    struct gcl_ctx *ctx;
    struct gcl_comm *next; /* in ctx->comms */
    coll_group_t group;
    int rank, size;
    int *members;               /* [size]: global replica of each rank (-1 for p2p) */
    int *ipus;                  /* [size]: global IPU of each rank: the peers messages go to */
    int *node_of;               /* [size]: instance of each rank */
    int *host_of;               /* [size]: host of each rank */
    const gcl_transport_t **tp; /* [size]: the transport to each rank, picked once */
    int one_host, one_process;  /* every rank on this host; in this process */
    uint32_t key;               /* names the communicator in every message */
    uint32_t seq;               /* collectives started so far */
    /* The signatures of its latest calls, at [seq % GCL_COMM_HIST]. */
    gcl_sig_t hist[GCL_COMM_HIST];
    coll_schedule_t sched; /* reused by blocking calls */
    gcl_choice_memo_t memo[COLL_COLLECTIVE_COUNT];
    gcl_charge_memo_t charge;
    const char *logged[COLL_COLLECTIVE_COUNT];    /* the data path last logged */
    char algo[COLL_COLLECTIVE_COUNT][48];         /* forced per communicator, "" if not */
    const char *last_used[COLL_COLLECTIVE_COUNT]; /* the data path of the last call */
    const char *last_pod[COLL_COLLECTIVE_COUNT];  /* the pod algorithm it was charged as */
    gcl_err_t err;                                /* gcl_last_error */
};

/* CTX's communicator over the IPUs of its own replica (rank = IPU position), made on first use;
 * NULL when out of memory. */
struct gcl_comm *gcl_ctx_p2p_comm(struct gcl_ctx *ctx);
/* Frees every communicator of CTX and its point-to-point state (end of gcl_run). */
void gcl_ctx_free_comms(struct gcl_ctx *ctx);

/* Frees a charge memo's queue places. */
void gcl_charge_memo_free(gcl_charge_memo_t *m);

/* Records a failure of COMM's current call; evaluates to STATUS. */
#define gcl_comm_fail(c, status, ...)                                                              \
    ((c)->ctx->last_failure = &(c)->err, gcl_err_set(&(c)->err, (status), __VA_ARGS__))

/* COMM's call KEY0 as the diagnostics see it. */
static inline gcl_call_view_t gcl_comm_view(const struct gcl_comm *c, uint64_t key0,
                                            const gcl_sig_t *sig)
{
    struct gcl_instance *inst = c->ctx->inst;
    return (gcl_call_view_t){&inst->job, &inst->host.hb, inst->run.gen, c->ctx->global_ipu,
                             c->ipus,    c->size,        c->rank,       key0,
                             sig,        c->hist,        GCL_COMM_HIST};
}

#endif /* GCL_COMM_H */
