/*
 * libgcl: the GCL-style communication library of the simulated IPU runtime.
 *
 * A program is SPMD over simulated IPUs. One process ("instance", one MPI rank when started by
 * poprun) hosts num_local_replicas x ipus_per_replica IPUs; replica r owns global IPUs
 * [r * ipus_per_replica, (r + 1) * ipus_per_replica). The program hands one function to gcl_run,
 * which runs it on a thread per local IPU ("IPU context"). Cross-replica collectives are called
 * by the same IPU position of every replica in a group, through a communicator.
 *
 *   gcl_instance_t inst;
 *   gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
 *   if (gcl_init(&cfg, &inst) != GCL_OK) ...            // reads POPDIST_* (set by poprun)
 *   gcl_status_t rc = gcl_run(inst, program, &args);     // program(ctx, &args) on every IPU
 *   gcl_finalize(inst);
 *
 *   static gcl_status_t program(gcl_ctx_t ctx, void *arg) {
 *       gcl_comm_t comm;
 *       GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
 *       gcl_status_t rc = gcl_all_reduce(comm, grads, grads, n, GCL_F32, GCL_MEAN);
 *       gcl_comm_destroy(comm);
 *       return rc;
 *   }
 *
 * Every call returns a status (gcl/status.h). Blocking calls give up after GCL_TIMEOUT_S seconds
 * with GCL_ERR_TIMEOUT and an error text naming the replicas and instances they waited for.
 */
#ifndef GCL_GCL_H
#define GCL_GCL_H

#include <stddef.h>

#include "gcl/status.h"
#include "gcl/types.h"
#include "gcl/version.h"

#ifdef __cplusplus
extern "C" {
#endif

/* libgcl.so exports exactly what its public headers declare. */
#pragma GCC visibility push(default)

typedef struct gcl_instance *gcl_instance_t;
typedef struct gcl_ctx *gcl_ctx_t;
typedef struct gcl_comm *gcl_comm_t;
typedef struct gcl_request *gcl_request_t;

/* Log levels of gcl_config_t.log_level, Graphcore's names (GCL_LOG_LEVEL takes the same words). */
typedef enum {
    GCL_LOG_LEVEL_DEFAULT = 0, /* GCL_LOG_LEVEL decides (warn when unset) */
    GCL_LOG_LEVEL_OFF = 1,
    GCL_LOG_LEVEL_ERR = 2,
    GCL_LOG_LEVEL_WARN = 3,
    GCL_LOG_LEVEL_INFO = 4,
    GCL_LOG_LEVEL_DEBUG = 5,
    GCL_LOG_LEVEL_TRACE = 6,
} gcl_log_level_t;

/*
 * How a program configures libgcl, instead of setting GCL_* variables for it. Start from
 * GCL_CONFIG_INITIALIZER and set the fields you need; zero (NULL) always means the default.
 *
 * The struct can grow without breaking callers: the first four fields stay where they are, SIZE
 * says how much of it the caller's header knew (GCL_CONFIG_INITIALIZER sets it; 0 is read as
 * this header's size) and VERSION which header that was. A newer caller's fields that this
 * library does not know must be zero, or gcl_init fails with GCL_ERR_NOT_SUPPORTED.
 *
 * num_replicas and ipus_per_replica describe a run without poprun: one process, or every rank
 * of a plain `mpirun -np N PROGRAM`, which together form one job of N instances (every rank must
 * ask for the same, or gcl_init fails on every rank with one line saying why). 0 takes
 * GCL_NUM_LOCAL_REPLICAS and GCL_IPUS_PER_REPLICA (default 1). When the POPDIST_* variables are
 * set (poprun sets them) they win, and these are ignored. The other fields, when set, win over
 * their GCL_* variable: a program's explicit choice.
 */
typedef struct {
    int num_replicas;     /* replicas of this instance without poprun (default 1) */
    int ipus_per_replica; /* simulated IPUs per replica (default 1) */
    size_t size;          /* sizeof(gcl_config_t) of the caller's header, or 0 */
    unsigned version;     /* GCL_VERSION_CODE of the caller's header, or 0 */
    int phantom;          /* 1: phantom mode, sizes but no data (as GCL_SIM_PHANTOM=1) */
    const char *topology; /* simulated pod, a preset or a file (as GCL_TOPOLOGY) */
    int log_level;        /* a gcl_log_level_t (as GCL_LOG_LEVEL) */
    int mpi_world;        /* without POPDIST_* variables, a process started by plain mpirun
                             (mpirun -np N PROGRAM), or a task of an srun step (srun -n N
                             --mpi=pmix PROGRAM), is one of N instances of one job, each with
                             num_replicas replicas (0 or 1, the default); -1: a job of its own */
} gcl_config_t;

#define GCL_CONFIG_INITIALIZER                                                                     \
    {                                                                                              \
        0, 0, sizeof(gcl_config_t), GCL_VERSION_CODE, 0, NULL, 0, 0                                \
    }

/* The shape of the job, as this instance sees it. */
typedef struct {
    int num_instances, instance_index;
    int num_replicas;       /* in the whole job */
    int num_local_replicas; /* hosted by this instance */
    int replica_offset;     /* global index of this instance's first replica */
    int ipus_per_replica;
    int num_hosts, host_index;
} gcl_job_info_t;

/*
 * Starts this instance: reads the environment (GCL_* and POPDIST_*), and when the job has more
 * than one instance initialises MPI as the bootstrap, learns where every instance runs and sets
 * up the transports (shared memory between instances of one host). Collective over all
 * instances. CONFIG may be NULL. On failure *OUT is NULL, the reason is logged (at level ERR)
 * and gcl_init_error() returns it. Returns GCL_OK, GCL_ERR_INVALID_ARGUMENT (a bad variable or
 * configuration), GCL_ERR_NOT_SUPPORTED (a newer caller's config), GCL_ERR_MPI, GCL_ERR_SYSTEM
 * or GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_init(const gcl_config_t *config, gcl_instance_t *out);

/* Text of the last failure of gcl_init on the calling thread ("" when it has not failed): one
 * line naming the variable or field, its value and what was expected. */
const char *gcl_init_error(void);

/* Ends the instance: frees everything gcl_init made and finalises MPI if gcl_init started it.
 * Collective over all instances: it waits for the others, at most GCL_TIMEOUT_S (then it
 * returns GCL_ERR_TIMEOUT, skips MPI_Finalize, and the process should exit with an error).
 * Returns GCL_OK, GCL_ERR_TIMEOUT or GCL_ERR_MPI. INST may be NULL. */
gcl_status_t gcl_finalize(gcl_instance_t inst);

typedef gcl_status_t (*gcl_program_t)(gcl_ctx_t ctx, void *arg);

/*
 * Runs PROGRAM(ctx, ARG) on one thread per local simulated IPU and waits for all of them. When
 * one fails, the others' blocking calls return GCL_ERR_ABORTED (peers in other instances see
 * GCL_ERR_PEER_FAILED). Returns GCL_OK or the first failure, by local IPU order; the detail is
 * in gcl_instance_error(). May be called more than once, by every instance the same number of
 * times.
 */
gcl_status_t gcl_run(gcl_instance_t inst, gcl_program_t program, void *arg);

/* Text of the last failure of gcl_init or gcl_run on this instance ("" when none). */
const char *gcl_instance_error(gcl_instance_t inst);
void gcl_instance_info(gcl_instance_t inst, gcl_job_info_t *out);

/* The IPU context of the calling thread's simulated IPU. */
gcl_instance_t gcl_ctx_instance(gcl_ctx_t ctx);
int gcl_ctx_replica(gcl_ctx_t ctx);      /* global replica index */
int gcl_ctx_ipu(gcl_ctx_t ctx);          /* this IPU's position in its replica */
int gcl_ctx_global_ipu(gcl_ctx_t ctx);   /* replica * ipus_per_replica + position */
int gcl_ctx_num_replicas(gcl_ctx_t ctx); /* in the whole job */

/*
 * Creates a communicator over the replica group of GROUP that holds this IPU's replica, for IPU
 * position gcl_ctx_ipu(ctx). No communication. Every replica must create its communicators in
 * the same order (as MPI requires of communicator creation): a replica that creates them in
 * another order, or over another group, fails its first collective with GCL_ERR_MISMATCH.
 * Returns GCL_OK, GCL_ERR_INVALID_ARGUMENT (the group does not divide the replicas) or
 * GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_comm_create(gcl_ctx_t ctx, gcl_group_t group, gcl_comm_t *out);
/* Frees COMM (NULL is fine). Communicators left at the end of gcl_run are freed there. */
void gcl_comm_destroy(gcl_comm_t comm);
int gcl_comm_rank(gcl_comm_t comm); /* this replica's rank in the group */
int gcl_comm_size(gcl_comm_t comm); /* replicas in the group */
/* Text of COMM's last failure ("" when none): what failed, where, and which peers it concerns. */
const char *gcl_last_error(gcl_comm_t comm);

/*
 * Algorithms. COLLECTIVE is "all_reduce", "reduce_scatter", "all_gather", "broadcast",
 * "all_to_all" or "barrier". gcl_algorithms returns how many algorithms it has (-1 for an unknown
 * collective) and puts up to MAX of their names in NAMES. gcl_comm_set_algorithm forces one for
 * COMM's calls of COLLECTIVE ("auto" restores the automatic choice), overriding
 * GCL_<COLLECTIVE>_ALGO; every replica must force the same one, or its calls fail with
 * GCL_ERR_MISMATCH. Returns GCL_OK or GCL_ERR_INVALID_ARGUMENT (an unknown name).
 */
int gcl_algorithms(const char *collective, const char **names, int max);
/* The data path of COMM's last call of COLLECTIVE, or NULL before one: the forced algorithm, or
 * with the automatic choice "host_direct" (straight in this host's memory), "canonical" (the
 * canonical order's messages) or, for collectives that do not reduce and in phantom mode, the
 * pod algorithm. */
const char *gcl_comm_algorithm(gcl_comm_t comm, const char *collective);
/* The pod algorithm whose simulated time COMM's last call of COLLECTIVE was charged (the forced
 * one, or the cost model's choice), or NULL before one. */
const char *gcl_comm_simulated_algorithm(gcl_comm_t comm, const char *collective);
gcl_status_t gcl_comm_set_algorithm(gcl_comm_t comm, const char *collective, const char *algorithm);

/*
 * Collectives over COMM's group. Every replica of the group makes the same calls in the same
 * order with the same arguments (count, type, op, root); a replica that does not is caught,
 * never a hang and never GCL_OK with a wrong result: every replica whose part of the call meets
 * the disagreement gets GCL_ERR_MISMATCH, and gcl_last_error() names both sides. A replica whose
 * part completes with the right result anyway (a broadcast receiver that the odd replica's
 * messages never reach) may return GCL_OK; the communicator is then marked on its host, and
 * that replica's next call on it fails with GCL_ERR_MISMATCH ("call #S of this communicator was
 * mismatched: ..."), as does every later one. On another host than the odd replica, a replica
 * that no message of it reaches can only fail with GCL_ERR_TIMEOUT (GCL_TIMEOUT_S).
 * Results are bitwise the same on every replica, and from run to run. Buffers belong to the
 * caller and must stay valid (and the input unchanged) until the call completes.
 *
 * Counts follow NCCL. In place is allowed where noted, with the layout given; any other
 * overlap of input and output is GCL_ERR_INVALID_ARGUMENT.
 *
 * Each returns GCL_OK, GCL_ERR_INVALID_ARGUMENT (type/op pair, NULL buffer, root, overlap),
 * GCL_ERR_MISMATCH, GCL_ERR_TIMEOUT (no progress for GCL_TIMEOUT_S), GCL_ERR_PEER_FAILED,
 * GCL_ERR_ABORTED, GCL_ERR_NO_HOST_MEMORY or a transport error.
 */

/* RECVBUF[i] = OP over the group of SENDBUF[i], i < COUNT. In place: SENDBUF == RECVBUF. */
gcl_status_t gcl_all_reduce(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type, gcl_redop_t op);

/* SENDBUF holds size x RECVCOUNT elements; rank r receives the reduction of block r.
 * In place: RECVBUF == SENDBUF + rank x RECVCOUNT elements. */
gcl_status_t gcl_reduce_scatter(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                size_t recvcount, gcl_dtype_t type, gcl_redop_t op);

/* RECVBUF holds size x SENDCOUNT elements; block r is rank r's SENDBUF.
 * In place: SENDBUF == RECVBUF + rank x SENDCOUNT elements. */
gcl_status_t gcl_all_gather(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                            gcl_dtype_t type);

/* Every rank's RECVBUF gets rank ROOT's SENDBUF (COUNT elements). SENDBUF is read on the root
 * only (it may be NULL elsewhere). In place: SENDBUF == RECVBUF. */
gcl_status_t gcl_broadcast(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                           gcl_dtype_t type, int root);

/* SENDBUF and RECVBUF hold size blocks of COUNT elements: block q of rank r's SENDBUF lands in
 * block r of rank q's RECVBUF. In place: SENDBUF == RECVBUF. */
gcl_status_t gcl_all_to_all(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type);

/* Returns once every rank of the group has entered the barrier. */
gcl_status_t gcl_barrier(gcl_comm_t comm);

/* One tensor of gcl_all_reduce_multi: COUNT elements of TYPE; in place when SENDBUF == RECVBUF. */
typedef struct {
    const void *sendbuf;
    void *recvbuf;
    size_t count;
    gcl_dtype_t type;
} gcl_tensor_t;

/*
 * All-reduces N tensors of mixed types with OP in one fused call, as GCL's allReduceCrossReplica
 * takes a list of tensors: each RECVBUF gets OP over the group of its SENDBUF, as gcl_all_reduce
 * would give it. The tensors of each type are concatenated in list order and reduced by one
 * all-reduce per type (in order of first appearance); tensors of a type that already lie end to
 * end in memory (sendbufs and recvbufs each contiguous, as the layers of one gradient vector) are
 * reduced where they are, others are copied through a staging buffer. Every replica must pass the
 * same list (counts and types, in order): another list is GCL_ERR_MISMATCH, as any other argument
 * is. OP must be valid for every type. Returns what gcl_all_reduce returns; on failure some
 * tensors may already be reduced.
 */
gcl_status_t gcl_all_reduce_multi(gcl_comm_t comm, const gcl_tensor_t *tensors, int n,
                                  gcl_redop_t op);

/*
 * Non-blocking forms: each starts the collective and returns a request at once; complete it with
 * gcl_wait or gcl_test. Collectives on one communicator must be started in the same order on
 * every replica; requests may be completed in any order (every wait or test also progresses
 * the IPU's other outstanding requests, so none starves). A request not completed by the end
 * of the program is cancelled there with a warning.
 */
gcl_status_t gcl_all_reduce_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                  gcl_dtype_t type, gcl_redop_t op, gcl_request_t *req);
gcl_status_t gcl_reduce_scatter_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                      size_t recvcount, gcl_dtype_t type, gcl_redop_t op,
                                      gcl_request_t *req);
gcl_status_t gcl_all_gather_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                  size_t sendcount, gcl_dtype_t type, gcl_request_t *req);
gcl_status_t gcl_broadcast_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                 gcl_dtype_t type, int root, gcl_request_t *req);
gcl_status_t gcl_all_to_all_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                  gcl_dtype_t type, gcl_request_t *req);
gcl_status_t gcl_barrier_start(gcl_comm_t comm, gcl_request_t *req);

/* Waits until REQ completes and frees it; returns its status (the detail in gcl_last_error of
 * its communicator, or gcl_ctx_last_error for point-to-point). */
gcl_status_t gcl_wait(gcl_request_t req);
/* Progresses REQ without blocking. When it has completed, *DONE is 1, REQ is freed and its
 * status returned; otherwise *DONE is 0 and GCL_OK is returned. It makes gcl_wait's checks
 * (about every 100 ms): a loop of gcl_test on a call whose peer is gone, mismatched or silent
 * for GCL_TIMEOUT_S fails with the same status and sentence as gcl_wait would (*DONE is then
 * 1). Only time spent polling counts toward the timeout (a gap of more than 0.2 s between two
 * calls does not): a program that computes between its polls is not taken for a stalled one. */
gcl_status_t gcl_test(gcl_request_t req, int *done);

/*
 * Point-to-point between the IPUs of one replica (pipeline stages): send COUNT elements of TYPE
 * to IPU position DST of this replica, or receive them from SRC. Messages between two IPUs with
 * one TAG (0 .. 2^20-1) are received in the order sent; different tags are independent. A
 * receive whose count or type differs from the send's is GCL_ERR_MISMATCH on both sides.
 */
gcl_status_t gcl_send(gcl_ctx_t ctx, int dst, const void *buf, size_t count, gcl_dtype_t type,
                      int tag);
gcl_status_t gcl_recv(gcl_ctx_t ctx, int src, void *buf, size_t count, gcl_dtype_t type, int tag);
gcl_status_t gcl_send_start(gcl_ctx_t ctx, int dst, const void *buf, size_t count, gcl_dtype_t type,
                            int tag, gcl_request_t *req);
gcl_status_t gcl_recv_start(gcl_ctx_t ctx, int src, void *buf, size_t count, gcl_dtype_t type,
                            int tag, gcl_request_t *req);
/* Text of the last failure of a call on CTX that has no communicator ("" when none). */
const char *gcl_ctx_last_error(gcl_ctx_t ctx);
/*
 * Records the program's own reason for failing on CTX: STATUS (an error, GCL_ERR_INTERNAL ..
 * GCL_ERR_INVALID_ARGUMENT) and a printf-style sentence, which gcl_ctx_last_error() then returns.
 * When the program returns an error afterwards, gcl_instance_error() and the errors of its peers
 * in every instance quote this sentence, where they would otherwise say only "the program
 * returned GCL_ERR_...". Returns STATUS, so a program can end with
 * `return gcl_ctx_set_error(ctx, GCL_ERR_INTERNAL, "batch %d is empty", b);`.
 * GCL_ERR_INVALID_ARGUMENT, recording nothing, for a NULL CTX or FMT or a STATUS that is no error.
 */
gcl_status_t gcl_ctx_set_error(gcl_ctx_t ctx, gcl_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_GCL_H */
