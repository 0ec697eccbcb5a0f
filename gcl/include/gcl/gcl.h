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

#ifdef __cplusplus
extern "C" {
#endif

typedef struct gcl_instance *gcl_instance_t;
typedef struct gcl_ctx *gcl_ctx_t;
typedef struct gcl_comm *gcl_comm_t;

/* Settings for a run without poprun. When the POPDIST_* variables are set (poprun sets them),
 * they win and these are ignored. Zero means the default. */
typedef struct {
    int num_replicas;     /* replicas in this single-instance job (default 1) */
    int ipus_per_replica; /* simulated IPUs per replica (default 1) */
} gcl_config_t;

#define GCL_CONFIG_INITIALIZER {0, 0}

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
 * instances. CONFIG may be NULL. On failure *OUT is NULL and the reason is printed as a warning.
 * Returns GCL_OK, GCL_ERR_INVALID_ARGUMENT (a bad variable or configuration), GCL_ERR_MPI,
 * GCL_ERR_SYSTEM or GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_init(const gcl_config_t *config, gcl_instance_t *out);

/* Ends the instance: frees everything gcl_init made and finalises MPI if gcl_init started it.
 * Collective over all instances. INST may be NULL. */
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
 * position gcl_ctx_ipu(ctx). Every replica of the group must create it (in any order relative
 * to communicators over other groups). No communication. Returns GCL_OK,
 * GCL_ERR_INVALID_ARGUMENT (the group does not divide the replicas) or GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_comm_create(gcl_ctx_t ctx, gcl_group_t group, gcl_comm_t *out);
/* Frees COMM (NULL is fine). Communicators left at the end of gcl_run are freed there. */
void gcl_comm_destroy(gcl_comm_t comm);
int gcl_comm_rank(gcl_comm_t comm); /* this replica's rank in the group */
int gcl_comm_size(gcl_comm_t comm); /* replicas in the group */
/* Text of COMM's last failure ("" when none): what failed, where, and which peers it concerns. */
const char *gcl_last_error(gcl_comm_t comm);

/*
 * All-reduce COUNT elements of TYPE with OP over COMM's group: on return RECVBUF holds the
 * reduction of every replica's SENDBUF, bitwise the same on every replica. In place when
 * SENDBUF == RECVBUF. Buffers belong to the caller and must not overlap otherwise.
 * Returns GCL_OK, GCL_ERR_INVALID_ARGUMENT (bad type/op pair, NULL buffer, huge count),
 * GCL_ERR_TIMEOUT, GCL_ERR_PEER_FAILED, GCL_ERR_ABORTED, GCL_ERR_MISMATCH or a transport error.
 */
gcl_status_t gcl_all_reduce(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type, gcl_redop_t op);

#ifdef __cplusplus
}
#endif

#endif /* GCL_GCL_H */
