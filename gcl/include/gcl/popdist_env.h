/*
 * The POPDIST_* environment contract between poprun and the instances it starts.
 *
 * This is the only thing poprun and libgcl share: poprun sets these variables for every instance
 * (process), and libgcl (gcl_init, popdist.h) reads them. Names follow Graphcore's PopDist.
 * Header-only; poprun includes it without linking libgcl.
 */
#ifndef GCL_POPDIST_ENV_H
#define GCL_POPDIST_ENV_H

/* Replicas in the whole job. */
#define POPDIST_ENV_NUM_TOTAL_REPLICAS "POPDIST_NUM_TOTAL_REPLICAS"
/* Replicas hosted by this instance. */
#define POPDIST_ENV_NUM_LOCAL_REPLICAS "POPDIST_NUM_LOCAL_REPLICAS"
/* Global index of this instance's first replica (replicas go to instances in contiguous blocks). */
#define POPDIST_ENV_REPLICA_INDEX_OFFSET "POPDIST_REPLICA_INDEX_OFFSET"
/* Simulated IPUs per replica (pipeline stages / model shards). */
#define POPDIST_ENV_NUM_IPUS_PER_REPLICA "POPDIST_NUM_IPUS_PER_REPLICA"
/* Instances in the job, and this one's index in [0, instances). */
#define POPDIST_ENV_NUM_INSTANCES  "POPDIST_NUM_INSTANCES"
#define POPDIST_ENV_INSTANCE_INDEX "POPDIST_INSTANCE_INDEX"
/* This instance's index among the instances on its host. */
#define POPDIST_ENV_LOCAL_INSTANCE_INDEX "POPDIST_LOCAL_INSTANCE_INDEX"
/* "1" when every instance hosts the same number of replicas. */
#define POPDIST_ENV_UNIFORM_REPLICAS_PER_INSTANCE "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE"
/* The simulated pod topology: a preset name (POD16, POD64, ...) or a topology file path. */
#define POPDIST_ENV_TOPOLOGY "POPDIST_TOPOLOGY"
/* Number of IPU-Link domains the job spans (poprun --num-ilds). */
#define POPDIST_ENV_NUM_ILDS "POPDIST_NUM_ILDS"
/* "1" in offline mode: phantom buffers, simulated time only (poprun --offline-mode). */
#define POPDIST_ENV_OFFLINE_MODE "POPDIST_OFFLINE_MODE"
/* Restarts of the job so far (poprun --max-restarts): 0 on the first run, k on the k-th restart.
 * Set only when poprun may restart the job. */
#define POPDIST_ENV_RESTART_COUNT "POPDIST_RESTART_COUNT"

/* The directory of poprun --executable-cache-path (absolute; created on every host): where the
 * program may keep state between runs. Unset without the option. */
#define POPDIST_ENV_EXECUTABLE_CACHE_PATH "POPDIST_EXECUTABLE_CACHE_PATH"

/* The job's id (poprun, poprun/src/common/jobdir.h): letters, digits, '-' and '_'. What the job keeps
 * in shared memory carries it (libgcl's host boxes are /dev/shm/gcl-ID-...), so that poprun can
 * remove all of it after the job, however it ended. Unset without poprun. */
#define POPRUN_ENV_JOB_ID "POPRUN_JOB_ID"
/* Read by poprun only: the first part of its jobs' ids ("job" when unset), 1 to 40 letters,
 * digits, '-' or '_'. A test sets it to find its own jobs' files among other jobs'. */
#define POPRUN_ENV_JOB_NAME "POPRUN_JOB_NAME"

#endif /* GCL_POPDIST_ENV_H */
