/*
 * An instance (one process of the job), split by concern: the configuration it read, the job's
 * layout, the host side (the box shared with the other instances of the host), the transports'
 * view of the job, the simulated pod, and the state of the current gcl_run.
 */
#ifndef GCL_INSTANCE_H
#define GCL_INSTANCE_H

#include <pthread.h>
#include <stdatomic.h>

#include "job/bootstrap.h"
#include "job/ctrl.h"
#include "base/err.h"
#include "gcl/gcl.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "base/param.h"
#include "job/popdist.h"
#include "job/shmem.h"
#include "pod/pod.h"
#include "transport/transport.h"

/* The current gcl_run. */
typedef struct {
    struct gcl_ctx *ctxs;     /* [num_local_ipus], api/run.c's */
    uint32_t gen;             /* gcl_run calls so far */
    atomic_int abort;         /* a local IPU failed in this gcl_run */
    atomic_int first_failure; /* local index of the IPU that failed first, or -1 */
    int failed;               /* gcl_init or a gcl_run failed: finalize must not wait */
} gcl_runstate_t;

struct gcl_instance {
    gcl_params_t params;
    gcl_popdist_t pd;
    gcl_job_t job;
    gcl_boot_t *boot;
    gcl_host_t host;
    gcl_fabric_t fabric;
    gcl_ctrl_t *ctrl; /* the control plane to other hosts, NULL on one host */
    gcl_sim_t sim;
    gcl_runstate_t run;
    int phantom;                 /* buffers carry sizes, no data (GCL_SIM_PHANTOM, offline mode) */
    struct gcl_preempt *preempt; /* where gcl_preempt_agree's IPU threads meet (api/preempt.c) */
    struct gcl_elastic *elastic; /* poprun --elastic: the membership (membership.h), else NULL */
    gcl_err_t err;
};

/* gcl_init's work: reads CONFIG and the environment, bootstraps with the other instances,
 * learns the job's layout, sets up the host box, the transports, the simulated pod and the
 * control plane. On failure every instance fails alike, *OUT stays NULL and gcl_init_error
 * says why. */
gcl_status_t gcl_instance_open(const gcl_config_t *config, struct gcl_instance **out);
/* The part of start-up that depends on the job's membership, once the bootstrap is up: where
 * every instance runs, the host box, the transports and the control plane. Collective over the
 * instances. gcl_instance_unbuild undoes it (and destroys the bootstrap), without waiting for
 * anyone: an elastic job's resize does both in turn (resize.c). */
gcl_status_t gcl_instance_build(struct gcl_instance *inst);
void gcl_instance_unbuild(struct gcl_instance *inst);
/* An elastic job's membership EPOCH numbers the gcl_run calls from here on alike on every
 * instance of it (EPOCH x 2^16 + 1, + 2, ...), replacements included: communicators' keys carry
 * the run's number, and must be the same on every instance. */
void gcl_instance_number_runs(struct gcl_instance *inst, int epoch);
/* A failure after gcl_instance_open succeeded (WHY recorded with RC, if given): logged, kept
 * for gcl_init_error, and the instance closed without waiting for its peers. */
void gcl_instance_abandon(struct gcl_instance *inst, gcl_status_t rc, const char *why);
/* gcl_finalize's work, once the IPU threads have ended and the API has freed what it owns:
 * marks this instance's IPUs exited, waits for the other instances (unless a run failed), and
 * frees everything. GCL_OK or GCL_ERR_MPI. */
gcl_status_t gcl_instance_close(struct gcl_instance *inst);

#endif /* GCL_INSTANCE_H */
