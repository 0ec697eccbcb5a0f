/*
 * Elastic training (poprun --elastic --min-replicas M): a job that loses an instance goes on with
 * the others, from memory, without a restart, and takes a replacement back at a step boundary.
 *
 * libgcl then uses no MPI: the instances bootstrap through poprun's store
 * (gcl/elastic_store.h), which keeps the job's membership. A program that wants to survive a
 * loss runs its training in gcl_run as usual and, when gcl_run fails, calls gcl_elastic_resize:
 *
 *   gcl_status_t rc = gcl_run(inst, program, &job);
 *   while (rc != GCL_OK && gcl_elastic_enabled(inst)) {   // or a step boundary (below)
 *       gcl_elastic_info_t e;
 *       if (gcl_elastic_resize(inst, &e) != GCL_OK)      // fewer than M replicas: stop
 *           break;
 *       ... re-shard: e.num_replicas, e.replica_offset; roll back the step in flight ...
 *       rc = gcl_run(inst, program, &job);                // the survivors go on
 *   }
 *
 * and, after each step's gcl_preempt_agree, asks gcl_elastic_pending: when a replacement waits,
 * every IPU of the job gets 1 at the same step, returns from its program, and the program calls
 * gcl_elastic_resize to take it in (the replacement's gcl_init returns then, and it must be
 * given the state, e.g. by a broadcast as the next run's first collective).
 *
 * What a resize keeps: the instance's simulated IPUs, their clocks and memory, and everything
 * of the program's. What it renumbers: instances and replicas (contiguous, in the order of the
 * instances as poprun planned them), so gcl_instance_info, gcl_ctx_replica and the popdist_*
 * calls answer for the new membership. Every communicator is of the run it was made in.
 */
#ifndef GCL_ELASTIC_H
#define GCL_ELASTIC_H

#include "gcl/gcl.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

#define GCL_ELASTIC_LIST_MAX 64

/* The membership, and its latest change. */
typedef struct {
    int epoch; /* changes of membership so far (0: the job as it started) */
    int num_instances, instance_index;
    int num_replicas, replica_offset, num_local_replicas;
    int initial_instances, initial_replicas; /* as the job started */
    int min_replicas;                        /* poprun --min-replicas */
    int slot;   /* this instance's place in poprun's plan (its first POPDIST_INSTANCE_INDEX) */
    int joined; /* 1: this instance joined at the latest change (it holds no state yet) */
    /* Instances lost and joined at the latest change (one gcl_elastic_resize, which may go
     * through several memberships when instances are lost during it), by slot (the first
     * GCL_ELASTIC_LIST_MAX). */
    int num_lost, num_joined;
    int lost[GCL_ELASTIC_LIST_MAX], joined_slots[GCL_ELASTIC_LIST_MAX];
} gcl_elastic_info_t;

/* 1 when this instance belongs to an elastic job (poprun --elastic), else 0. */
int gcl_elastic_enabled(gcl_instance_t inst);

/* The current membership into *OUT. GCL_OK, or GCL_ERR_NOT_SUPPORTED without --elastic. */
gcl_status_t gcl_elastic_info(gcl_instance_t inst, gcl_elastic_info_t *out);

/*
 * Agrees the next membership with the other instances and rebuilds this instance for it: the
 * layout, the host boxes, the transports and the control plane. Call it between gcl_run calls,
 * on every instance: after a gcl_run that failed (an instance was lost), or one whose program
 * returned at a step boundary where gcl_elastic_pending said 1. Collective over the instances of
 * the current membership and those joining; it waits for each up to poprun's resize timeout (an
 * instance that does not come is left out). A fault during the resize (another loss) is handled
 * inside: the survivors agree again. Fills *OUT (may be NULL).
 *
 * Returns GCL_OK; GCL_ERR_PEER_FAILED when the job cannot go on (fewer than --min-replicas
 * replicas left, this instance was left out, or nothing changed: the run failed for a cause of
 * its own), with gcl_instance_error naming why and the instances lost; GCL_ERR_NOT_SUPPORTED
 * without --elastic; GCL_ERR_TIMEOUT, GCL_ERR_TRANSPORT (poprun is gone), or a start-up error.
 */
gcl_status_t gcl_elastic_resize(gcl_instance_t inst, gcl_elastic_info_t *out);

/*
 * After gcl_preempt_agree on CTX returned GCL_OK: 1 when an instance waits to join the job (every
 * IPU of the job gets the same answer at the same step), else 0. 0 without --elastic.
 */
int gcl_elastic_pending(gcl_ctx_t ctx);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_ELASTIC_H */
