/*
 * gcl_init and gcl_finalize: reading the configuration, the bootstrap, learning where every
 * instance runs, and setting up the host box and transports.
 */
#include <errno.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "internal.h"
#include "log.h"
#include "exec.h"
#include "shmem.h"
#include "transport.h"

static gcl_status_t fail(struct gcl_instance *inst, gcl_status_t rc, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static gcl_status_t fail(struct gcl_instance *inst, gcl_status_t rc, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(inst->error, sizeof inst->error, fmt, ap);
    va_end(ap);
    return rc;
}

/* Instances that can share memory: same host name and same network namespace (so that the
 * network namespaces standing in for hosts in tests count as different hosts). */
static void host_identity(gcl_peer_info_t *me)
{
    char ns[64] = "";
    if (gethostname(me->hostname, sizeof me->hostname - 1) != 0)
        strcpy(me->hostname, "?");
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    ns[n > 0 ? n : 0] = '\0';
    snprintf(me->hostid, sizeof me->hostid, "%.63s/%.63s", me->hostname, ns);
}

static gcl_status_t exchange_peers(struct gcl_instance *inst)
{
    gcl_peer_info_t me;
    memset(&me, 0, sizeof me);
    me.pid = (int32_t)getpid();
    me.replica_offset = inst->pd.replica_offset;
    me.num_local_replicas = inst->pd.num_local_replicas;
    me.num_replicas = inst->num_replicas;
    me.ipr = inst->ipr;
    host_identity(&me);
    inst->peers = calloc((size_t)inst->num_instances, sizeof *inst->peers);
    if (!inst->peers)
        return GCL_ERR_NO_HOST_MEMORY;
    if (inst->boot->allgather(inst->boot, &me, inst->peers, sizeof me) != GCL_OK)
        return fail(inst, GCL_ERR_MPI, "exchanging instance information failed");
    int next = 0;
    for (int i = 0; i < inst->num_instances; i++) {
        gcl_peer_info_t *p = &inst->peers[i];
        if (p->num_replicas != inst->num_replicas || p->ipr != inst->ipr)
            return fail(inst, GCL_ERR_INVALID_ARGUMENT,
                        "instances disagree on the job: instance %d has %d replicas of %d IPUs, "
                        "instance %d has %d of %d",
                        inst->instance_index, inst->num_replicas, inst->ipr, i, p->num_replicas,
                        p->ipr);
        if (p->replica_offset != next)
            return fail(inst, GCL_ERR_INVALID_ARGUMENT,
                        "instance %d's replicas start at %d, not %d: replicas must go to "
                        "instances in contiguous blocks, in instance order",
                        i, p->replica_offset, next);
        next += p->num_local_replicas;
    }
    if (next != inst->num_replicas)
        return fail(inst, GCL_ERR_INVALID_ARGUMENT,
                    "the instances host %d replicas, but the job has %d", next, inst->num_replicas);
    return GCL_OK;
}

/* Numbers the hosts in order of first appearance, and lays out the IPU tables. */
static gcl_status_t map_ipus(struct gcl_instance *inst)
{
    int n = inst->num_instances;
    inst->num_hosts = 0;
    for (int i = 0; i < n; i++) {
        int h = -1;
        for (int j = 0; j < i && h < 0; j++)
            if (strcmp(inst->peers[j].hostid, inst->peers[i].hostid) == 0)
                h = inst->peers[j].host;
        inst->peers[i].host = h >= 0 ? h : inst->num_hosts++;
    }
    inst->host_index = inst->peers[inst->instance_index].host;
    inst->ipu_instance = malloc((size_t)inst->num_ipus * sizeof(int));
    inst->ipu_hostlocal = malloc((size_t)inst->num_ipus * sizeof(int));
    if (!inst->ipu_instance || !inst->ipu_hostlocal)
        return GCL_ERR_NO_HOST_MEMORY;
    int hl = 0;
    for (int i = 0; i < n; i++) {
        const gcl_peer_info_t *p = &inst->peers[i];
        int on_host = p->host == inst->host_index;
        for (int k = 0; k < p->num_local_replicas * inst->ipr; k++) {
            int ipu = p->replica_offset * inst->ipr + k;
            inst->ipu_instance[ipu] = i;
            inst->ipu_hostlocal[ipu] = on_host ? hl++ : -1;
        }
    }
    return GCL_OK;
}

static int instances_on_my_host(const struct gcl_instance *inst, int *leader)
{
    int count = 0;
    *leader = -1;
    for (int i = 0; i < inst->num_instances; i++) {
        if (inst->peers[i].host != inst->host_index)
            continue;
        if (*leader < 0)
            *leader = i;
        count++;
    }
    return count;
}

/* Every instance learns whether all others succeeded, so that they fail together. */
static gcl_status_t agree(struct gcl_instance *inst, gcl_status_t mine)
{
    int *all = calloc((size_t)inst->num_instances, sizeof(int)), v = (int)mine;
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_status_t rc = inst->boot->allgather(inst->boot, &v, all, sizeof v);
    for (int i = 0; rc == GCL_OK && i < inst->num_instances; i++) {
        if (all[i] != GCL_OK && mine == GCL_OK) {
            rc = (gcl_status_t)all[i];
            fail(inst, rc, "instance %d failed to start (see its log)", i);
        }
    }
    free(all);
    return mine != GCL_OK ? mine : rc;
}

static gcl_status_t setup_hostbox(struct gcl_instance *inst)
{
    const gcl_params_t *p = &inst->params;
    int leader, local = instances_on_my_host(inst, &leader), host_ipus = 0;
    hb_sizes_t sizes = {(int)p->shm_slots, (int)p->shm_chunks, (size_t)p->shm_chunk_bytes,
                        (size_t)p->shm_direct_bytes};
    for (int i = 0; i < inst->num_ipus; i++)
        host_ipus += inst->ipu_hostlocal[i] >= 0;
    gcl_status_t rc = GCL_OK;
    if (inst->boot->bcast(inst->boot, inst->token, sizeof inst->token, 0) != GCL_OK ||
        inst->boot->bcast(inst->boot, inst->nonce, sizeof inst->nonce, 0) != GCL_OK)
        return fail(inst, GCL_ERR_MPI, "sharing the job token failed");
    if (local == 1 && inst->num_instances == 1)
        return hb_create(&inst->hb, NULL, inst->token, host_ipus, &sizes, inst->error,
                         sizeof inst->error);
    char name[80] = "";
    if (local > 1) {
        snprintf(name, sizeof name, "/gcl-");
        for (int i = 0; i < 8; i++) /* the public nonce: the name must not give the token away */
            snprintf(name + strlen(name), 3, "%02x", inst->nonce[i]);
        snprintf(name + strlen(name), sizeof name - strlen(name), "-h%d", inst->host_index);
    }
    /* The leader creates, then everyone else attaches, then the name goes. */
    if (inst->instance_index == leader)
        rc = hb_create(&inst->hb, local > 1 ? name : NULL, inst->token, host_ipus, &sizes,
                       inst->error, sizeof inst->error);
    GCL_CHECK(agree(inst, rc));
    if (inst->instance_index != leader)
        rc = hb_attach(&inst->hb, name, inst->token, inst->error, sizeof inst->error);
    rc = agree(inst, rc);
    if (inst->instance_index == leader)
        hb_unlink(&inst->hb);
    if (rc == GCL_OK && local > 1)
        GCL_INFO(GCL_SUB_SHM, "host %d: %d instances share %zu MiB (virtual) of shared memory",
                 inst->host_index, local, inst->hb.size >> 20);
    return rc;
}

/* Whether this process can read every other local process's memory (process_vm_readv): the
 * kernel allows it to the same user unless Yama or a container says otherwise. Every instance
 * learns whether all can, so that they all choose the same way. */
static gcl_status_t probe_cma(struct gcl_instance *inst)
{
    static volatile uint64_t word;
    int ok = inst->params.shm_cma != 0;
    hb_ipu_t *mine = &inst->hb.ipus[inst->ipu_hostlocal[inst->first_ipu]];
    if (inst->num_instances == 1)
        return GCL_OK;
    if (getrandom((void *)&word, sizeof word, 0) != (ssize_t)sizeof word)
        word = (uint64_t)getpid() * 2654435761u;
    mine->cma_addr = (uint64_t)(uintptr_t)&word;
    mine->cma_value = word;
    GCL_CHECK(inst->boot->barrier(inst->boot) == GCL_OK ? GCL_OK : GCL_ERR_MPI);
    for (int ipu = 0; ok && ipu < inst->num_ipus; ipu++) {
        int hl = inst->ipu_hostlocal[ipu];
        const hb_ipu_t *p = hl >= 0 ? &inst->hb.ipus[hl] : NULL;
        if (!p || p->pid == getpid() || p->cma_addr == 0)
            continue;
        uint64_t got = 0;
        struct iovec local = {&got, sizeof got}, remote = {(void *)(uintptr_t)p->cma_addr, 8};
        ok = process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == 8 && got == p->cma_value;
    }
    int *all = calloc((size_t)inst->num_instances, sizeof(int));
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_status_t rc = inst->boot->allgather(inst->boot, &ok, all, sizeof ok);
    inst->cma = rc == GCL_OK;
    for (int i = 0; i < inst->num_instances; i++)
        inst->cma &= all[i];
    free(all);
    GCL_INFO(GCL_SUB_SHM, "single-copy reads between processes (process_vm_readv): %s",
             inst->cma ? "yes" : "no, host-direct calls copy through the host box");
    return rc;
}

static gcl_status_t setup_shape(struct gcl_instance *inst, const gcl_config_t *cfg)
{
    gcl_config_t def = GCL_CONFIG_INITIALIZER;
    if (!cfg)
        cfg = &def;
    if (cfg->num_replicas < 0 || cfg->ipus_per_replica < 0)
        return fail(inst, GCL_ERR_INVALID_ARGUMENT,
                    "negative replicas or IPUs in the configuration");
    GCL_CHECK(gcl_popdist_read(&inst->pd, cfg->num_replicas, cfg->ipus_per_replica, inst->error,
                               sizeof inst->error));
    inst->num_instances = inst->pd.num_instances;
    inst->instance_index = inst->pd.instance_index;
    inst->num_replicas = inst->pd.num_total_replicas;
    inst->ipr = inst->pd.ipus_per_replica;
    if ((long)inst->num_replicas * inst->ipr > 1 << 20)
        return fail(inst, GCL_ERR_INVALID_ARGUMENT, "%d replicas of %d IPUs is too many",
                    inst->num_replicas, inst->ipr);
    inst->num_ipus = inst->num_replicas * inst->ipr;
    inst->num_local_ipus = inst->pd.num_local_replicas * inst->ipr;
    inst->first_ipu = inst->pd.replica_offset * inst->ipr;
    inst->phantom = inst->params.sim_phantom || inst->pd.offline;
    return GCL_OK;
}

static gcl_status_t start(struct gcl_instance *inst, const gcl_config_t *cfg)
{
    GCL_CHECK(gcl_params_load(&inst->params, inst->error, sizeof inst->error));
    gcl_log_level = inst->params.log_level;
    gcl_log_subsys = inst->params.log_subsys;
    GCL_CHECK(setup_shape(inst, cfg));
    gcl_log_set_instance(inst->instance_index);
    GCL_CHECK(gcl_sim_init(inst));
    if (inst->num_instances > 1)
        GCL_CHECK(
            gcl_boot_mpi_create(inst->num_instances, &inst->boot, inst->error, sizeof inst->error));
    else
        GCL_CHECK(gcl_boot_single_create(&inst->boot));
    GCL_CHECK(exchange_peers(inst));
    GCL_CHECK(map_ipus(inst));
    if (inst->instance_index == 0 &&
        (getrandom(inst->token, sizeof inst->token, 0) != (ssize_t)sizeof inst->token ||
         getrandom(inst->nonce, sizeof inst->nonce, 0) != (ssize_t)sizeof inst->nonce))
        return fail(inst, GCL_ERR_SYSTEM, "getrandom failed: %s", strerror(errno));
    GCL_CHECK(setup_hostbox(inst));
    for (int k = 0; k < inst->num_local_ipus; k++) {
        hb_ipu_t *p = &inst->hb.ipus[inst->ipu_hostlocal[inst->first_ipu + k]];
        p->pid = (int32_t)getpid();
        p->instance = inst->instance_index;
        p->global_ipu = inst->first_ipu + k;
    }
    GCL_CHECK(probe_cma(inst));
    GCL_CHECK(agree(inst, gcl_transports_init(inst)));
    if (inst->params.spin_count < 0) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        inst->params.spin_count = inst->hb.num_ipus <= cores ? 2000 : 0;
    }
    inst->ctxs = calloc((size_t)inst->num_local_ipus, sizeof *inst->ctxs);
    if (!inst->ctxs)
        return GCL_ERR_NO_HOST_MEMORY;
    GCL_INFO(GCL_SUB_INIT,
             "instance %d of %d: replicas %d..%d of %d, %d IPU(s) each, host %d of %d, "
             "bootstrap %s",
             inst->instance_index, inst->num_instances, inst->pd.replica_offset,
             inst->pd.replica_offset + inst->pd.num_local_replicas - 1, inst->num_replicas,
             inst->ipr, inst->host_index, inst->num_hosts, inst->boot->name);
    return GCL_OK;
}

gcl_status_t gcl_init(const gcl_config_t *config, gcl_instance_t *out)
{
    *out = NULL;
    struct gcl_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return GCL_ERR_NO_HOST_MEMORY;
    pthread_mutex_init(&inst->lock, NULL);
    pthread_mutex_init(&inst->shape_lock, NULL);
    gcl_status_t rc = start(inst, config);
    if (rc != GCL_OK) {
        if (!inst->error[0])
            snprintf(inst->error, sizeof inst->error, "%s", gcl_status_string(rc));
        GCL_WARN(GCL_SUB_INIT, "gcl_init: %s", inst->error);
        inst->failed = 1;
        gcl_finalize(inst);
        return rc;
    }
    *out = inst;
    return GCL_OK;
}

gcl_status_t gcl_finalize(gcl_instance_t inst)
{
    if (!inst)
        return GCL_OK;
    gcl_status_t rc = GCL_OK;
    if (inst->hb.base) {
        for (int k = 0; k < inst->num_local_ipus; k++)
            atomic_store(&inst->hb.ipus[inst->ipu_hostlocal[inst->first_ipu + k]].state,
                         HB_IPU_EXITED);
    }
    /* Nobody may unmap the host box while a peer could still be reading from it. After a failure
     * the others may never arrive, so a failed instance does not wait. */
    if (inst->boot && !inst->failed && inst->boot->barrier(inst->boot) != GCL_OK)
        rc = GCL_ERR_MPI;
    if (inst->boot)
        inst->boot->failed = inst->failed;
    gcl_transports_fini(inst);
    gcl_shmem_unmap_peers(inst);
    gcl_sim_choices_free(inst);
    gcl_sim_outcomes_free(inst);
    gcl_shapes_free(inst);
    pthread_mutex_destroy(&inst->shape_lock);
    gcl_sim_fini(inst);
    hb_unlink(&inst->hb);
    hb_destroy(&inst->hb);
    if (inst->boot)
        inst->boot->destroy(inst->boot);
    free(inst->ctxs);
    free(inst->ipu_instance);
    free(inst->ipu_hostlocal);
    free(inst->peers);
    pthread_mutex_destroy(&inst->lock);
    free(inst);
    return rc;
}

const char *gcl_instance_error(gcl_instance_t inst)
{
    return inst ? inst->error : "no instance";
}

void gcl_instance_info(gcl_instance_t inst, gcl_job_info_t *out)
{
    *out = (gcl_job_info_t){inst->num_instances,     inst->instance_index,
                            inst->num_replicas,      inst->pd.num_local_replicas,
                            inst->pd.replica_offset, inst->ipr,
                            inst->num_hosts,         inst->host_index};
}
