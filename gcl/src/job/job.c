/* The job's layout; see job.h. */
#include "job/job.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/alloc.h"

void gcl_job_identity(gcl_peer_info_t *me)
{
    char ns[64] = "";
    me->pid = (int32_t)getpid();
    if (gethostname(me->hostname, sizeof me->hostname - 1) != 0)
        strcpy(me->hostname, "?");
    /* Network namespaces count as hosts: tests stand hosts in for them. */
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    snprintf(me->hostid, sizeof me->hostid, "%.63s/%.63s", me->hostname, ns);
}

static gcl_status_t check_peers(const gcl_job_t *j, gcl_err_t *err)
{
    int next = 0;
    for (int i = 0; i < j->num_instances; i++) {
        const gcl_peer_info_t *p = &j->peers[i], *me = &j->peers[j->instance_index];
        if (j->from_mpirun && (p->num_local_replicas != me->num_local_replicas ||
                               p->ipus_per_replica != j->ipus_per_replica))
            return gcl_err_set(err, GCL_ERR_INVALID_ARGUMENT,
                               "mpirun's ranks disagree on the job: rank %d hosts %d replica(s) of "
                               "%d IPU(s), rank %d hosts %d of %d; every rank of a plain mpirun "
                               "job must ask for the same (gcl_config_t.num_replicas, "
                               "GCL_NUM_LOCAL_REPLICAS, GCL_IPUS_PER_REPLICA)",
                               j->instance_index, me->num_local_replicas, j->ipus_per_replica, i,
                               p->num_local_replicas, p->ipus_per_replica);
        if (p->num_replicas != j->num_replicas || p->ipus_per_replica != j->ipus_per_replica)
            return gcl_err_set(err, GCL_ERR_INVALID_ARGUMENT,
                               "instances disagree on the job: instance %d has %d replicas of %d "
                               "IPUs, instance %d has %d of %d",
                               j->instance_index, j->num_replicas, j->ipus_per_replica, i,
                               p->num_replicas, p->ipus_per_replica);
        if (p->replica_offset != next)
            return gcl_err_set(err, GCL_ERR_INVALID_ARGUMENT,
                               "instance %d's replicas start at %d, not %d: replicas must go to "
                               "instances in contiguous blocks, in instance order",
                               i, p->replica_offset, next);
        next += p->num_local_replicas;
    }
    if (next != j->num_replicas)
        return gcl_err_set(err, GCL_ERR_INVALID_ARGUMENT,
                           "the instances host %d replicas, but the job has %d", next,
                           j->num_replicas);
    return GCL_OK;
}

gcl_status_t gcl_job_map(gcl_job_t *j, gcl_err_t *err)
{
    GCL_CHECK(check_peers(j, err));
    int n = j->num_instances;
    j->num_hosts = 0;
    for (int i = 0; i < n; i++) {
        int h = -1;
        for (int k = 0; k < i && h < 0; k++)
            if (strcmp(j->peers[k].hostid, j->peers[i].hostid) == 0)
                h = j->peers[k].host;
        j->peers[i].host = h >= 0 ? h : j->num_hosts++;
    }
    j->host_index = j->peers[j->instance_index].host;
    j->ipu_instance = gcl_malloc((size_t)j->num_ipus * sizeof(int));
    j->ipu_hostlocal = gcl_malloc((size_t)j->num_ipus * sizeof(int));
    if (!j->ipu_instance || !j->ipu_hostlocal)
        return gcl_err_set(err, GCL_ERR_NO_HOST_MEMORY, "out of host memory");
    int hl = 0;
    for (int i = 0; i < n; i++) {
        const gcl_peer_info_t *p = &j->peers[i];
        int on_host = p->host == j->host_index;
        for (int k = 0; k < p->num_local_replicas * j->ipus_per_replica; k++) {
            int ipu = p->replica_offset * j->ipus_per_replica + k;
            j->ipu_instance[ipu] = i;
            j->ipu_hostlocal[ipu] = on_host ? hl++ : -1;
        }
    }
    return GCL_OK;
}

void gcl_job_free(gcl_job_t *j)
{
    free(j->peers);
    free(j->ipu_instance);
    free(j->ipu_hostlocal);
    j->peers = NULL;
    j->ipu_instance = j->ipu_hostlocal = NULL;
}

void gcl_job_describe_ipu(const gcl_job_t *j, int ipu, char *buf, size_t len)
{
    int i = j->ipu_instance[ipu];
    const gcl_peer_info_t *p = &j->peers[i];
    if (j->ipus_per_replica > 1)
        snprintf(buf, len, "replica %d IPU %d (instance %d on host %s, pid %d)",
                 ipu / j->ipus_per_replica, ipu % j->ipus_per_replica, i, p->hostname, (int)p->pid);
    else
        snprintf(buf, len, "replica %d (instance %d on host %s, pid %d)", ipu, i, p->hostname,
                 (int)p->pid);
}

int gcl_job_instances_here(const gcl_job_t *j, int *leader)
{
    int count = 0;
    *leader = -1;
    for (int i = 0; i < j->num_instances; i++) {
        if (j->peers[i].host != j->host_index)
            continue;
        if (*leader < 0)
            *leader = i;
        count++;
    }
    return count;
}
