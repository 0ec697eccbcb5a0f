/*
 * Communicators: a replica group seen from one IPU position. What a communicator decides once,
 * when it is created, is its gcl_peers_t: its ranks' IPUs, instances and hosts, the transport
 * to each, and whether the whole group shares this host or this process; the engines see only
 * that. What the API keeps between calls is here: the sequence number, the schedule memory of
 * blocking calls, the last automatic choice, the algorithms forced on it, the data paths it
 * logged, and the error record of its last call.
 */
#ifndef GCL_COMM_H
#define GCL_COMM_H

#include "coll/algo.h"
#include "api/ctx.h"
#include "engine/engines.h"
#include "engine/request.h"

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
    uint32_t layout;  /* 0, or the hash of a gcl_all_reduce_multi tensor list (in the signature) */
} gcl_call_t;

/* The last automatic choice of a collective on this communicator: a call of the same shape
 * takes it without asking the instance's cache. */
typedef struct {
    coll_args_t a; /* the call (rank and node_of ignored); a.nranks == 0 when empty */
    const coll_algo_t *algo;
} gcl_choice_memo_t;

/* A call's plan: its data path and its simulated time (see call.c). */
typedef struct {
    const coll_algo_t *pod;  /* the algorithm whose time the call is charged */
    const coll_algo_t *real; /* the schedule its messages run; NULL for host-direct */
    int direct;              /* host-direct */
    int eager;               /* eager (engine/eager.c) */
    gcl_sim_mode_t mode;     /* CHARGE the real schedule, or REPLAY the pod algorithm */
    int pod_nodes;           /* sizes only (phantom): the schedule's nodes are the pod's ILDs */
} gcl_plan_t;

/* The plan of the last call of a collective on this communicator, by the call's shape (what
 * planning depends on: the communicator's group is fixed): a call of the same shape takes its
 * plan, its signature's path hash and, blocking, the schedule already built, without planning
 * again. Forcing an algorithm on the communicator clears it. */
typedef struct {
    int valid;
    size_t count;
    int type, op, root, blocking, sizes_only;
    uint32_t layout;
    gcl_plan_t plan;
    uint32_t path_hash; /* the signature's algo field */
    uint64_t stamp;     /* names this plan; the communicator's schedule says which it holds */
} gcl_plan_memo_t;

struct gcl_comm {
    gcl_peers_t peers; /* what the engines see of the group */
    struct gcl_ctx *ctx;
    struct gcl_comm *next; /* in ctx->comms */
    uint32_t seq;          /* collectives started so far */
    coll_schedule_t sched; /* reused by blocking calls */
    uint64_t sched_stamp;  /* the plan memo whose schedule it holds (0: none) */
    uint64_t stamps;       /* plan memos made so far */
    gcl_plan_memo_t plan_memo[COLL_COLLECTIVE_COUNT];
    struct gcl_request blocking; /* the request of its blocking calls, one at a time */
    /* A blocking broadcast whose reader returned before the call was set up (call.c,
     * read_early), parked: what the IPU's next call sets up, and the entry it took. */
    struct {
        gcl_call_t call;
        gcl_sig_t sig;
        gcl_sim_entry_t at;
        gcl_eager_early_t got;
    } early;
    gcl_choice_memo_t memo[COLL_COLLECTIVE_COUNT];
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

/* Records a failure of COMM's current call; evaluates to STATUS. */
#define gcl_comm_fail(c, status, ...) gcl_peers_fail(&(c)->peers, (status), __VA_ARGS__)

#endif /* GCL_COMM_H */
