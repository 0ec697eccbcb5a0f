/*
 * The job's layout: its instances, where each runs, and which IPUs each hosts. Learnt once at
 * start-up (every instance exchanges a gcl_peer_info_t) and read-only afterwards.
 */
#ifndef GCL_JOB_H
#define GCL_JOB_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* What each instance tells the others about itself at start-up. */
typedef struct {
    int32_t pid;
    int32_t host; /* index into the job's hosts (filled in by gcl_job_map) */
    int32_t replica_offset, num_local_replicas;
    int32_t num_replicas,
        ipus_per_replica; /* as this instance read them, to check that all agree */
    char hostname[64];
    char hostid[128]; /* hostname and network namespace: instances that can share memory */
} gcl_peer_info_t;

typedef struct {
    int num_instances, instance_index;
    int num_replicas, ipus_per_replica; /* replicas in the job, IPUs per replica */
    int num_ipus, num_local_ipus, first_ipu;
    int num_hosts, host_index;
    gcl_peer_info_t *peers; /* [num_instances] */
    int *ipu_instance;      /* [num_ipus]: the instance hosting each global IPU */
    int *ipu_hostlocal;     /* [num_ipus]: index in this host's box, or -1 on another host */
    int from_mpirun;        /* the instances are a plain mpirun's ranks (no poprun) */
} gcl_job_t;

/* Fills ME with this process's identity: pid, host name and network namespace. */
void gcl_job_identity(gcl_peer_info_t *me);

/* Checks the instances' reports in J->peers (every one the same job, replicas in contiguous
 * blocks in instance order), numbers the hosts in order of first appearance and lays out the
 * IPU tables. Returns GCL_OK, or GCL_ERR_INVALID_ARGUMENT / GCL_ERR_NO_HOST_MEMORY in ERR. */
gcl_status_t gcl_job_map(gcl_job_t *j, gcl_err_t *err);
void gcl_job_free(gcl_job_t *j);

/* "replica 5 (instance 2 on host h1, pid 123)" (with "IPU k" when replicas have several). */
void gcl_job_describe_ipu(const gcl_job_t *j, int ipu, char *buf, size_t len);

/* IPU's index within its own instance. */
static inline int gcl_job_local_index(const gcl_job_t *j, int ipu)
{
    return ipu - j->peers[j->ipu_instance[ipu]].replica_offset * j->ipus_per_replica;
}

/* The instances on this instance's host, and the first of them (*LEADER). */
int gcl_job_instances_here(const gcl_job_t *j, int *leader);

#endif /* GCL_JOB_H */
