/*
 * popdist: what a program needs to know to shard its work across a poprun job, read from the
 * POPDIST_* variables poprun sets for every instance (gcl/popdist_env.h), as Graphcore's PopDist
 * reads them. Graphcore's PopRun sets POPDIST_NUM_TOTAL_REPLICAS, POPDIST_NUM_LOCAL_REPLICAS,
 * POPDIST_REPLICA_INDEX_OFFSET, POPDIST_NUM_IPUS_PER_REPLICA and POPDIST_LOCAL_INSTANCE_INDEX;
 * ours also sets POPDIST_NUM_INSTANCES and POPDIST_INSTANCE_INDEX. Without those two, the
 * instance count is total / local replicas and the index offset / local replicas, so a program
 * started by either gets the same shard. Without poprun (popdist_is_set() == 0) the answers
 * describe a single instance holding one replica of one IPU. A variable that is set but
 * malformed reads as that default too; gcl_init rejects it loudly.
 */
#ifndef GCL_POPDIST_H
#define GCL_POPDIST_H

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/* 1 when this process was started by poprun, ours or Graphcore's (POPDIST_NUM_INSTANCES or
 * POPDIST_NUM_TOTAL_REPLICAS is set), else 0. */
int popdist_is_set(void);
int popdist_num_instances(void);
int popdist_instance_index(void);
/* This instance's index among the instances on its host (POPDIST_LOCAL_INSTANCE_INDEX), 0
 * without poprun. */
int popdist_local_instance_index(void);
/* Global index of this instance's first replica. */
int popdist_replica_index_offset(void);
int popdist_num_local_replicas(void);
int popdist_num_total_replicas(void);
int popdist_num_ipus_per_replica(void);
/* The directory of poprun --executable-cache-path, where the program may keep its state between
 * runs (POPDIST_EXECUTABLE_CACHE_PATH), or NULL. */
const char *popdist_executable_cache_path(void);
/* How many times poprun --max-restarts has restarted this job before this run (0 the first
 * time, and without poprun): a program that sees more than 0 resumes from its checkpoint. */
int popdist_restart_count(void);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_POPDIST_H */
