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

/* What the IPU threads of one host share, and what proves they belong to one job. */
typedef struct {
    hostbox_t hb;
    uint8_t token[16];    /* random per job, secret: proves a peer belongs to the job */
    uint8_t nonce[8];     /* random per job, public: names the shared-memory segments */
    int cma;              /* processes of a host may read and write each other's memory */
    gcl_peer_maps_t maps; /* other processes' IPU memory mapped here */
} gcl_host_t;

/* The current gcl_run. */
typedef struct {
    struct gcl_ctx *ctxs;     /* [num_local_ipus] */
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
    int phantom; /* buffers carry sizes, no data (GCL_SIM_PHANTOM, offline mode) */
    struct gcl_preempt *preempt; /* where gcl_preempt_agree's IPU threads meet (preempt.c) */
    gcl_err_t err;
};

#endif /* GCL_INSTANCE_H */
