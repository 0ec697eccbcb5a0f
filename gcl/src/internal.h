/*
 * libgcl's internal structures: the instance (one process), its IPU contexts (one thread per
 * simulated IPU) and communicators.
 */
#ifndef GCL_INTERNAL_H
#define GCL_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "bootstrap.h"
#include "coll/group.h"
#include "coll/schedule.h"
#include "gcl/gcl.h"
#include "hostbox.h"
#include "param.h"
#include "popdist.h"
#include "simglue.h"
#include "simshape.h"

#define GCL_ERRLEN 2048

struct gcl_net; /* net.h */

/* Where each instance runs, learnt at start-up. */
typedef struct {
    int32_t pid;
    int32_t host; /* index into the job's list of hosts */
    int32_t replica_offset, num_local_replicas;
    int32_t num_replicas, ipr; /* as this instance read them, to check that all agree */
    char hostname[64];
    char hostid[128]; /* hostname and network namespace: instances that can share memory */
} gcl_peer_info_t;

struct gcl_instance {
    gcl_params_t params;
    gcl_popdist_t pd;
    int num_instances, instance_index;
    int num_replicas, ipr; /* replicas in the job, IPUs per replica */
    int num_ipus, num_local_ipus, first_ipu;
    int num_hosts, host_index;
    gcl_peer_info_t *peers; /* [num_instances] */
    int *ipu_instance;      /* [num_ipus]: the instance hosting each global IPU */
    int *ipu_hostlocal;     /* [num_ipus]: index in this host's box, or -1 on another host */
    uint8_t token[16];      /* random per job, secret: proves a peer belongs to the job */
    uint8_t nonce[8];       /* random per job, public: names the shared-memory segments */
    gcl_boot_t *boot;
    hostbox_t hb;
    struct gcl_net *net_mpi; /* the network backends, NULL when not in use */
    struct gcl_net *net_ofi;
    struct gcl_ctx *ctxs;       /* [num_local_ipus] */
    uint32_t run_gen;           /* gcl_run calls so far */
    atomic_int abort;           /* a local IPU failed in this gcl_run */
    atomic_int first_failure;   /* local index of the IPU that failed first, or -1 */
    int phantom;                /* buffers carry sizes, no data (GCL_SIM_PHANTOM, offline mode) */
    int cma;                    /* processes of a host may read and write each other's memory */
    gcl_sim_t sim;              /* the simulated pod and this instance's simulated IPUs */
    struct gcl_choice *choices; /* automatic algorithm choices made so far (simchoose.c) */
    int nchoices;
    pthread_mutex_t shape_lock; /* call shapes analysed for the simulator (simshape.c) */
    gcl_shape_t *shapes;
    uint64_t shape_tick;
    struct gcl_outcome *outcomes;   /* recent host-direct replays (simcost.c), under shape_lock */
    struct gcl_peer_map *peer_maps; /* other processes' IPU memory mapped here (shmem.c), lock */
    int npeer_maps, peer_maps_cap;
    int failed; /* gcl_init or a gcl_run failed: finalize must not wait */
    pthread_mutex_t lock;
    char error[GCL_ERRLEN];
};

struct gcl_ctx {
    struct gcl_instance *inst;
    int local_index; /* 0 .. num_local_ipus-1 */
    int global_ipu, replica, ipu_pos;
    int hostlocal; /* this IPU's index in the host box */
    pthread_t thread;
    gcl_program_t program;
    void *arg;
    gcl_status_t status;
    char last_error[GCL_ERRLEN];      /* of the last point-to-point call */
    struct gcl_comm *comms;           /* every live communicator of this IPU, to free at the end */
    uint32_t comms_created;           /* so far: names the next communicator */
    struct gcl_comm *p2p;             /* the IPUs of this replica, for gcl_send / gcl_recv */
    struct gcl_p2p_count *p2p_counts; /* messages so far per (peer, tag, direction) */
    int np2p_counts, p2p_cap;
    struct gcl_request *active; /* started, unfinished requests: progressed by every wait */
    char error[GCL_ERRLEN];
};

struct gcl_comm {
    struct gcl_ctx *ctx;
    struct gcl_comm *next; /* in ctx->comms */
    coll_group_t group;
    int rank, size;
    int *members; /* [size]: global replica of each group rank (-1 for the p2p communicator) */
    int *ipus;    /* [size]: global IPU of each rank: the peers messages go to */
    int *node_of; /* [size]: instance of each group rank (locality for algorithm choice) */
    uint32_t key; /* names the communicator in every message */
    uint32_t seq; /* collectives started so far */
    coll_schedule_t sched;                        /* reused by blocking calls */
    const void *last_algo[COLL_COLLECTIVE_COUNT]; /* the automatic choice last logged */
    char algo[COLL_COLLECTIVE_COUNT][48];         /* forced per communicator, "" if not */
    const char *last_used[COLL_COLLECTIVE_COUNT]; /* the algorithm of the last call */
    struct gcl_simcache *simcache;                /* link contention of the last call shape */
    char error[GCL_ERRLEN];
};

/* The global IPU of rank RANK of COMM. */
static inline int gcl_comm_peer_ipu(const struct gcl_comm *c, int rank)
{
    return c->ipus[rank];
}

uint32_t gcl_hash_ints(const int *v, int n);
/* CTX's communicator over the IPUs of its own replica (rank = IPU position), made on first use;
 * NULL when out of memory. */
struct gcl_comm *gcl_ctx_p2p_comm(struct gcl_ctx *ctx);
/* Frees every communicator of CTX and its point-to-point state (end of gcl_run). */
void gcl_ctx_free_comms(struct gcl_ctx *ctx);

/* Records a failure of CTX's current call: its status and a sentence for gcl_last_error. */
gcl_status_t gcl_ctx_fail(struct gcl_ctx *ctx, gcl_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "replica 5 (IPU 5, instance 2 on host h1, pid 123)" for global IPU IPU. */
void gcl_describe_ipu(const struct gcl_instance *inst, int ipu, char *buf, size_t len);

/* Whether global IPU IPU is known to have failed, finished its program, or gone; fills WHY. */
int gcl_peer_gone(struct gcl_ctx *ctx, int ipu, char *why, size_t len);

#endif /* GCL_INTERNAL_H */
