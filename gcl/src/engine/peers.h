/*
 * What the engines see of a program: an IPU thread (gcl_ipu_t) and a group of IPUs it calls
 * collectives with (gcl_peers_t). Nothing of communicators, IPU contexts, programs or the
 * instance: the API fills these in (an IPU context holds its gcl_ipu_t, a communicator its
 * gcl_peers_t), and the engines run calls on them. So the engines sit below the API, and what
 * they may touch is written here.
 */
#ifndef GCL_ENGINE_PEERS_H
#define GCL_ENGINE_PEERS_H

#include <stdatomic.h>
#include <stdint.h>

#include "base/err.h"
#include "base/param.h"
#include "base/vocab/signature.h"
#include "coll/algo.h"
#include "coll/group.h"
#include "job/ctrl.h"
#include "job/diag.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "job/elastic/store.h"
#include "pod/pod.h"
#include "transport/transport.h"

struct gcl_request;

/* One IPU thread: its place in the job, what its host shares, the simulated pod, the failure
 * flags of the current gcl_run, and its outstanding requests. Set up for every gcl_run. */
typedef struct {
    const gcl_job_t *job;
    const gcl_params_t *params;
    gcl_host_t *host;             /* the host box, the job's token, peers' memory mapped here */
    const gcl_fabric_t *fabric;   /* what the transports know of the job */
    gcl_ctrl_t *ctrl;             /* the control plane to other hosts; NULL on one host */
    gcl_sim_t *sim;               /* the instance's simulated pod */
    gcl_sim_ipu_t *clock;         /* this IPU's simulated state */
    atomic_int *abort;            /* raised when an IPU of this instance failed in this gcl_run */
    atomic_int *first_failure;    /* the local index of the IPU that failed first, or -1 */
    const gcl_store_news_t *news; /* an elastic job's news of a lost instance; NULL otherwise */
    uint32_t gen;                 /* the gcl_run it runs (gcl_run calls so far) */
    int global_ipu;
    int hostlocal;                           /* its index in the host box */
    int phantom;                             /* buffers may carry sizes and no data */
    int eager_next;                          /* the eager cell it tries first (eager.c) */
    uint64_t eager_key[GCL_EAGER_CELLS];     /* the call it published in each of its cells in this
                                              * gcl_run, 0 if none: its claim reads no shared line */
    int8_t eager_found[GCL_EAGER_MAX_RANKS]; /* the cell of each IPU of the host (its index in
                                              * the host box, modulo 64) it found last */
    struct gcl_request *active;    /* started, unfinished requests: progressed by every wait */
    struct gcl_request *parked;    /* a blocking call that returned before it finished */
    const gcl_err_t *last_failure; /* the record of its latest failure */
    uint32_t alarms_seen;          /* its doorbell's alarms it has checked for */
} gcl_ipu_t;

/* The queue places of a rank's sends for the last call shape run by messages (simtime.c). */
typedef struct {
    const coll_algo_t *algo;
    coll_args_t a;
    uint32_t *mult; /* per op of this rank's schedule */
    uint32_t nops;
} gcl_charge_memo_t;

/* Frees a charge memo's queue places. */
void gcl_charge_memo_free(gcl_charge_memo_t *m);

/* The simulated time of the last replayed call (simtime.c): a replay is a pure function of the
 * pod algorithm, the call and how far apart the ranks entered it (the group is fixed), so a call
 * of the same shape entered with the same offsets takes its idle and exchange time from here. */
typedef struct {
    const coll_algo_t *pod; /* NULL: empty */
    coll_args_t a;
    sim_time_t *offsets; /* [size]: each rank's entry clock minus the earliest */
    sim_time_t idle, exch;
} gcl_replay_memo_t;

/* What a group lends its blocking calls (exec.c, messages.c, simtime.c), kept from one call to
 * the next: an IPU runs one blocking call at a time, so no two calls use it at once. */
typedef struct {
    uint32_t *counts;  /* [2 x size]: messages so far to and from each rank */
    sim_time_t *entry; /* [size]: each rank's clock at entry (REPLAY) */
    char *seen;        /* [size]: which entries are known */
    gcl_xfer_t *xfers; /* a step's transfers */
    uint32_t xcap;
    void *fold; /* an eager all_reduce's scratch for the tree's partial sums */
    size_t fold_cap;
} gcl_group_scratch_t;

/* Calls whose signatures a group remembers: a peer still in one of them is checked against it
 * (diag.c). */
#define GCL_PEERS_HIST 8

/* A group of IPUs seen from one of them: decided once, when its communicator is made. */
typedef struct {
    gcl_ipu_t *ipu; /* the IPU it is seen from */
    coll_group_t group;
    int rank, size;
    int *members;               /* [size]: global replica of each rank (-1 for point-to-point) */
    int *ipus;                  /* [size]: global IPU of each rank: the peers messages go to */
    int *node_of;               /* [size]: instance of each rank */
    int *pod_node_of;           /* [size]: ILD of each rank's IPU on the pod, made on first use */
    int *host_of;               /* [size]: host of each rank */
    const gcl_transport_t **tp; /* [size]: the transport to each rank, picked once */
    int one_host, one_process;  /* every rank on this host; in this process */
    int p2p;                    /* the IPUs of one replica (gcl_send, gcl_recv) */
    uint32_t key;               /* names the group's calls in every message */
    gcl_sig_t hist[GCL_PEERS_HIST]; /* the signatures of its latest calls, at [seq % HIST] */
    gcl_charge_memo_t charge;       /* simulated time of its last call shape */
    gcl_replay_memo_t replay;       /* and of its last replayed call */
    sim_time_t sync;                /* one synchronisation of the group, once known */
    int sync_known;
    gcl_group_scratch_t scratch; /* lent to its blocking calls */
    uint64_t eager_seen;         /* key0 of its latest eager call whose every cell was found */
    gcl_err_t *record; /* where its calls' outcomes go: its communicator's error record, or the
                        * IPU context's for point-to-point */
} gcl_peers_t;

/* P over SIZE ranks seen from IPU, outcomes recorded in RECORD: the caller then fills
 * members, ipus, group and rank, and calls gcl_peers_place. GCL_ERR_NO_HOST_MEMORY or GCL_OK. */
gcl_status_t gcl_peers_init(gcl_peers_t *p, gcl_ipu_t *ipu, int size, gcl_err_t *record);
/* Where every rank runs, and the transport to each: decided once, here. */
void gcl_peers_place(gcl_peers_t *p);
void gcl_peers_free(gcl_peers_t *p);

/* Records a failure of P's current call; evaluates to STATUS. */
#define gcl_peers_fail(p, status, ...)                                                             \
    ((p)->ipu->last_failure = (p)->record, gcl_err_set((p)->record, (status), __VA_ARGS__))

/* P's call KEY0 as the diagnostics see it. */
static inline gcl_call_view_t gcl_peers_view(const gcl_peers_t *p, uint64_t key0,
                                             const gcl_sig_t *sig)
{
    const gcl_ipu_t *me = p->ipu;
    return (gcl_call_view_t){me->job, &me->host->hb, me->gen,       me->global_ipu,
                             p->ipus, p->size,       p->rank,       key0,
                             sig,     p->hist,       GCL_PEERS_HIST};
}

#endif /* GCL_ENGINE_PEERS_H */
