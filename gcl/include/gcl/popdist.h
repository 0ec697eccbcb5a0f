/*
 * popdist: what a program needs to know to shard its work across a poprun job, read from the
 * POPDIST_* variables poprun sets for every instance (gcl/popdist_env.h). Without poprun
 * (popdist_is_set() == 0) the answers describe a single instance holding one replica of one IPU.
 * A variable that is set but malformed reads as that default too; gcl_init rejects it loudly.
 */
#ifndef GCL_POPDIST_H
#define GCL_POPDIST_H

#ifdef __cplusplus
extern "C" {
#endif

/* 1 when this process was started by poprun (POPDIST_NUM_INSTANCES is set), else 0. */
int popdist_is_set(void);
int popdist_num_instances(void);
int popdist_instance_index(void);
/* Global index of this instance's first replica. */
int popdist_replica_index_offset(void);
int popdist_num_local_replicas(void);
int popdist_num_total_replicas(void);
int popdist_num_ipus_per_replica(void);

#ifdef __cplusplus
}
#endif

#endif /* GCL_POPDIST_H */
