/*
 * The process's libgcl state, struct gcl_instance, built and torn down below the API, with no
 * thread of its own: read the configuration and the GCL_* variables, start the bootstrap, learn
 * where every instance runs, map the host box, set up the transports and the control plane; and
 * undo it all in reverse. gcl_init and gcl_finalize (api/run.c) open and close it; an elastic
 * resize (resize.c) unbuilds and builds it again for each membership. The IPU threads and what
 * a program sees of them are api/run.c's.
 */
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include "instance/instance.h"

#include "base/alloc.h"
#include "base/fault.h"
#include "base/log.h"
#include "instance/config.h"
#include "instance/membership.h"
#include "instance/signals.h"
#include "job/diag.h"
#include "transport/setup.h"

#define fail(inst, rc, ...) gcl_err_set(&(inst)->err, (rc), __VA_ARGS__)

/* Every instance learns where the others run and what they host. */
static gcl_status_t exchange_peers(struct gcl_instance *inst)
{
    gcl_job_t *j = &inst->job;
    gcl_peer_info_t me;
    memset(&me, 0, sizeof me);
    gcl_job_identity(&me);
    me.replica_offset = inst->pd.replica_offset;
    me.num_local_replicas = inst->pd.num_local_replicas;
    me.num_replicas = j->num_replicas;
    me.ipus_per_replica = j->ipus_per_replica;
    j->from_mpirun = inst->pd.mpi_world;
    j->peers = gcl_calloc((size_t)j->num_instances, sizeof *j->peers);
    if (!j->peers)
        return GCL_ERR_NO_HOST_MEMORY;
    if (inst->boot->allgather(inst->boot, &me, j->peers, sizeof me) != GCL_OK)
        return fail(inst, GCL_ERR_MPI, "exchanging instance information failed");
    return gcl_job_map(j, &inst->err);
}

/* Every instance learns whether all others succeeded, so that they fail together. */
static gcl_status_t agree(struct gcl_instance *inst, gcl_status_t mine)
{
    int *all = gcl_calloc((size_t)inst->job.num_instances, sizeof(int)), v = (int)mine;
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_status_t rc = inst->boot->allgather(inst->boot, &v, all, sizeof v);
    for (int i = 0; rc == GCL_OK && i < inst->job.num_instances; i++) {
        if (all[i] != GCL_OK && mine == GCL_OK) {
            rc = (gcl_status_t)all[i];
            fail(inst, rc, "instance %d failed to start (see its log)", i);
        }
    }
    free(all);
    return mine != GCL_OK ? mine : rc;
}

/* The cores this process may run on (its affinity: taskset, a cgroup's cpuset), else online. */
static int usable_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return online > 0 ? (int)online : 1;
}

/* The IPU threads of this host that may run on this process's cores: its own, and those of
 * every other instance of the host whose affinity meets this one's. poprun binds each instance
 * of a host to cores of its own when they fit (poprun/src/plan/binding.h): two instances on one
 * core each of two then share none, and each may spin on its own core; unbound, every instance
 * shares every core. An instance whose affinity cannot be read (another pid namespace) counts as
 * sharing. */
static int ipus_on_my_cores(const gcl_job_t *j)
{
    cpu_set_t mine, theirs, both;
    int n = 0, have = sched_getaffinity(0, sizeof mine, &mine) == 0;
    const gcl_peer_info_t *me = &j->peers[j->instance_index];
    for (int i = 0; i < j->num_instances; i++) {
        const gcl_peer_info_t *p = &j->peers[i];
        if (strcmp(p->hostid, me->hostid) != 0)
            continue;
        int shares = 1;
        if (i != j->instance_index && have &&
            sched_getaffinity((pid_t)p->pid, sizeof theirs, &theirs) == 0) {
            CPU_AND(&both, &mine, &theirs);
            shares = CPU_COUNT(&both) > 0;
        }
        n += shares ? p->num_local_replicas * j->ipus_per_replica : 0;
    }
    return n;
}

static gcl_status_t setup_hostbox(struct gcl_instance *inst)
{
    const gcl_params_t *p = &inst->params;
    const gcl_job_t *j = &inst->job;
    gcl_host_t *h = &inst->host;
    int leader, local = gcl_job_instances_here(j, &leader), host_ipus = 0;
    gcl_hostbox_sizes_t sizes = {(int)p->shm_slots, (int)p->shm_chunks, (size_t)p->shm_chunk_bytes,
                                 (size_t)p->shm_direct_bytes,
                                 inst->phantom ? 0 : (size_t)p->eager_max_bytes};
    char err[256] = "";
    for (int i = 0; i < j->num_ipus; i++)
        host_ipus += j->ipu_hostlocal[i] >= 0;
    gcl_status_t rc = GCL_OK;
    if (inst->boot->bcast(inst->boot, h->token, sizeof h->token, 0) != GCL_OK ||
        inst->boot->bcast(inst->boot, h->nonce, sizeof h->nonce, 0) != GCL_OK)
        return fail(inst, GCL_ERR_MPI, "sharing the job token failed");
    if (local == 1 && j->num_instances == 1) {
        rc = gcl_hostbox_create(&h->hb, NULL, h->token, host_ipus, &sizes, err, sizeof err);
        return rc == GCL_OK ? rc : fail(inst, rc, "%s", err);
    }
    char name[112] = "";
    if (local > 1) {
        /* The job's id first (poprun removes what carries it, however the job ended), then the
         * public nonce: the name must not give the token away. */
        snprintf(name, sizeof name, "/gcl-%s%s", inst->pd.job_id ? inst->pd.job_id : "",
                 inst->pd.job_id ? "-" : "");
        for (int i = 0; i < 8; i++)
            snprintf(name + strlen(name), 3, "%02x", h->nonce[i]);
        snprintf(name + strlen(name), sizeof name - strlen(name), "-h%d", j->host_index);
    }
    /* The leader creates, then everyone else attaches, then the name goes. */
    if (j->instance_index == leader)
        rc = gcl_hostbox_create(&h->hb, local > 1 ? name : NULL, h->token, host_ipus, &sizes, err,
                                sizeof err);
    if (rc != GCL_OK)
        fail(inst, rc, "%s", err);
    GCL_CHECK(agree(inst, rc));
    if (j->instance_index != leader &&
        (rc = gcl_hostbox_attach(&h->hb, name, h->token, err, sizeof err)))
        fail(inst, rc, "%s", err);
    rc = agree(inst, rc);
    if (j->instance_index == leader)
        gcl_hostbox_unlink(&h->hb);
    if (rc == GCL_OK && local > 1)
        GCL_INFO(GCL_SUB_SHM, "host %d: %d instances share %zu MiB (virtual) of shared memory",
                 j->host_index, local, h->hb.size >> 20);
    return rc;
}

/* Whether every other local process can be read with process_vm_readv; fills *OK. */
static gcl_status_t probe_peers(struct gcl_instance *inst, int *ok)
{
    static volatile uint64_t word;
    const gcl_job_t *j = &inst->job;
    gcl_hostbox_t *hb = &inst->host.hb;
    gcl_hostbox_ipu_t *mine = &hb->ipus[j->ipu_hostlocal[j->first_ipu]];
    if (getrandom((void *)&word, sizeof word, 0) != (ssize_t)sizeof word)
        word = (uint64_t)getpid() * 2654435761u;
    mine->cma_addr = (uint64_t)(uintptr_t)&word;
    mine->cma_value = word;
    GCL_CHECK(inst->boot->barrier(inst->boot) == GCL_OK ? GCL_OK : GCL_ERR_MPI);
    for (int ipu = 0; *ok && ipu < j->num_ipus; ipu++) {
        int hl = j->ipu_hostlocal[ipu];
        const gcl_hostbox_ipu_t *p = hl >= 0 ? &hb->ipus[hl] : NULL;
        if (!p || p->pid == getpid() || p->cma_addr == 0)
            continue;
        uint64_t got = 0;
        struct iovec local = {&got, sizeof got}, remote = {(void *)(uintptr_t)p->cma_addr, 8};
        *ok = process_vm_readv(p->pid, &local, 1, &remote, 1, 0) == 8 && got == p->cma_value;
    }
    return GCL_OK;
}

/* Whether this process can read every other local process's memory (process_vm_readv): the
 * kernel allows it to the same user unless Yama or a container says otherwise. Every instance
 * learns whether all can, so that they all choose the same way. */
static gcl_status_t probe_cma(struct gcl_instance *inst)
{
    const gcl_job_t *j = &inst->job;
    int ok = inst->params.shm_cma != 0;
    if (j->num_instances == 1)
        return GCL_OK;
    GCL_CHECK(probe_peers(inst, &ok));
    int *all = gcl_calloc((size_t)j->num_instances, sizeof(int));
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_status_t rc = inst->boot->allgather(inst->boot, &ok, all, sizeof ok);
    inst->host.cma = rc == GCL_OK;
    for (int i = 0; i < j->num_instances; i++)
        inst->host.cma &= all[i];
    free(all);
    GCL_INFO(GCL_SUB_SHM, "single-copy reads between processes (process_vm_readv): %s",
             inst->host.cma ? "yes" : "no, host-direct calls copy through the host box");
    return rc;
}

static gcl_status_t setup_shape(struct gcl_instance *inst, const gcl_config_t *cfg)
{
    gcl_job_t *j = &inst->job;
    char err[512] = "";
    gcl_status_t rc = gcl_popdist_read(&inst->pd, cfg->num_replicas, cfg->ipus_per_replica,
                                       cfg->mpi_world, err, sizeof err);
    if (rc != GCL_OK)
        return fail(inst, rc, "%s", err);
    j->num_instances = inst->pd.num_instances;
    j->instance_index = inst->pd.instance_index;
    j->num_replicas = inst->pd.num_total_replicas;
    j->ipus_per_replica = inst->pd.ipus_per_replica;
    if ((long)j->num_replicas * j->ipus_per_replica > 1 << 20)
        return fail(inst, GCL_ERR_INVALID_ARGUMENT, "%d replicas of %d IPUs is too many",
                    j->num_replicas, j->ipus_per_replica);
    j->num_ipus = j->num_replicas * j->ipus_per_replica;
    j->num_local_ipus = inst->pd.num_local_replicas * j->ipus_per_replica;
    j->first_ipu = inst->pd.replica_offset * j->ipus_per_replica;
    inst->phantom = inst->params.sim_phantom || inst->pd.offline;
    return GCL_OK;
}

static gcl_status_t start_boot(struct gcl_instance *inst)
{
    char err[256] = "";
    gcl_status_t rc =
        inst->job.num_instances > 1
            ? gcl_boot_mpi_create(inst->job.num_instances, !strcmp(inst->params.transport, "mpi"),
                                  inst->params.timeout_s, &inst->boot, err, sizeof err)
            : gcl_boot_single_create(&inst->boot);
    return rc == GCL_OK ? rc : fail(inst, rc, "%s", err[0] ? err : gcl_status_string(rc));
}

/* Marks this instance's IPUs in the host box as its own. */
static void claim_ipus(struct gcl_instance *inst)
{
    const gcl_job_t *j = &inst->job;
    for (int k = 0; k < j->num_local_ipus; k++) {
        gcl_hostbox_ipu_t *p = &inst->host.hb.ipus[j->ipu_hostlocal[j->first_ipu + k]];
        p->pid = (int32_t)getpid();
        p->instance = j->instance_index;
        p->global_ipu = j->first_ipu + k;
    }
}

gcl_status_t gcl_instance_build(struct gcl_instance *inst)
{
    gcl_peer_maps_init(&inst->host.maps);
    GCL_CHECK(exchange_peers(inst));
    if (inst->job.instance_index == 0 &&
        (getrandom(inst->host.token, 16, 0) != 16 || getrandom(inst->host.nonce, 8, 0) != 8))
        return fail(inst, GCL_ERR_SYSTEM, "getrandom failed: %s", strerror(errno));
    GCL_CHECK(setup_hostbox(inst));
    claim_ipus(inst);
    GCL_CHECK(probe_cma(inst));
    gcl_transport_setup_t tw = {&inst->params, &inst->job,    inst->boot,
                                &inst->host,   &inst->fabric, &inst->err};
    GCL_CHECK(agree(inst, gcl_transports_init(&tw)));
    GCL_CHECK(agree(inst, gcl_ctrl_start(&inst->params, &inst->job, inst->boot, &inst->host.hb,
                                         inst->host.token, &inst->ctrl, &inst->err)));
    int threads = ipus_on_my_cores(&inst->job), cores = usable_cores();
    inst->host.crowded = threads > cores;
    if (inst->params.spin_count < 0)
        inst->params.spin_count = inst->host.crowded ? 0 : 2000;
    GCL_INFO(GCL_SUB_INIT,
             "instance %d of %d: replicas %d..%d of %d, %d IPU(s) each, host %d of %d, "
             "bootstrap %s; %d IPU thread(s) of the host may run on its %d core(s): a wait "
             "spins %ld times",
             inst->job.instance_index, inst->job.num_instances, inst->pd.replica_offset,
             inst->pd.replica_offset + inst->pd.num_local_replicas - 1, inst->job.num_replicas,
             inst->job.ipus_per_replica, inst->job.host_index, inst->job.num_hosts,
             inst->boot->name, threads, cores, inst->params.spin_count);
    return GCL_OK;
}

void gcl_instance_unbuild(struct gcl_instance *inst)
{
    gcl_ctrl_stop(inst->ctrl);
    inst->ctrl = NULL;
    gcl_transports_fini(&inst->fabric);
    gcl_shmem_unmap_peers(&inst->host.maps);
    gcl_hostbox_unlink(&inst->host.hb);
    gcl_hostbox_destroy(&inst->host.hb);
    if (inst->boot)
        inst->boot->destroy(inst->boot);
    inst->boot = NULL;
    gcl_job_free(&inst->job);
}

static gcl_status_t start(struct gcl_instance *inst, const gcl_config_t *config)
{
    char err[512] = "";
    gcl_config_t cfg;
    gcl_status_t rc = gcl_params_load(&inst->params, err, sizeof err);
    if (rc == GCL_OK)
        rc = gcl_config_apply(config, &cfg, &inst->params, err, sizeof err);
    if (rc != GCL_OK)
        return fail(inst, rc, "%s", err);
    gcl_log_level = inst->params.log_level;
    gcl_log_subsys = inst->params.log_subsys;
    gcl_log_time = (int)inst->params.log_time;
    GCL_CHECK(setup_shape(inst, &cfg));
    gcl_log_set_instance(inst->job.instance_index);
    gcl_sim_setup_t w = {&inst->params, &inst->pd, &inst->job, inst->phantom};
    GCL_CHECK(gcl_sim_init(&inst->sim, &w, &inst->err));
    /* poprun --elastic: the bootstrap is poprun's store, and the membership its (resize.c). */
    if (gcl_elastic_wanted(&inst->pd)) {
        gcl_membership_setup_t m = {&inst->params,  &inst->pd,   &inst->job,
                                    &inst->host.hb, &inst->boot, &inst->err};
        GCL_CHECK(gcl_membership_open(&m, &inst->elastic));
    } else {
        GCL_CHECK(start_boot(inst));
    }
    GCL_CHECK(gcl_instance_build(inst));
    if (inst->elastic)
        gcl_instance_number_runs(inst, gcl_membership_epoch(inst->elastic));
    gcl_membership_alarms(inst->elastic, 1);
    return GCL_OK;
}

void gcl_instance_number_runs(struct gcl_instance *inst, int epoch)
{
    inst->run.gen = (uint32_t)epoch << 16;
}

gcl_status_t gcl_instance_open(const gcl_config_t *config, struct gcl_instance **out)
{
    *out = NULL;
    gcl_fault_arm(gcl_popdist_guess_instance()); /* GCL_FAULT_INJECT counts from here */
    struct gcl_instance *inst = gcl_calloc(1, sizeof *inst);
    if (!inst) {
        gcl_init_error_set("out of host memory for the instance");
        GCL_ERROR(GCL_SUB_INIT, "gcl_init: %s", gcl_init_error());
        gcl_fault_report();
        return GCL_ERR_NO_HOST_MEMORY;
    }
    gcl_status_t rc = start(inst, config);
    if (rc != GCL_OK) {
        if (inst->err.status == GCL_OK)
            fail(inst, rc, "%s", gcl_status_string(rc));
        gcl_instance_abandon(inst, rc, NULL);
        return rc;
    }
    gcl_init_error_set("");
    *out = inst;
    return GCL_OK;
}

void gcl_instance_abandon(struct gcl_instance *inst, gcl_status_t rc, const char *why)
{
    if (why)
        fail(inst, rc, "%s", why);
    GCL_ERROR(GCL_SUB_INIT, "gcl_init: %s", gcl_err_text(&inst->err));
    gcl_init_error_set(gcl_err_text(&inst->err));
    inst->run.failed = 1;
    gcl_instance_close(inst);
}

/* Sets the state of every local IPU that has not failed (a failed one stays failed: its peers
 * still waiting are told why, not that it left). Only this instance writes its IPUs' states,
 * and its IPU threads have ended. */
static void set_states(struct gcl_instance *inst, uint32_t state)
{
    const gcl_job_t *j = &inst->job;
    if (!inst->host.hb.base)
        return;
    for (int k = 0; k < j->num_local_ipus; k++) {
        gcl_hostbox_ipu_t *me = &inst->host.hb.ipus[j->ipu_hostlocal[j->first_ipu + k]];
        if (gcl_hostbox_state(me) != GCL_IPU_FAILED)
            gcl_hostbox_set_state(me, state);
    }
}

/* The final barrier's question (gcl_boot_t.abandoned): whether an IPU of another instance
 * failed, whose instance then skips the barrier (a failed run is for good without --elastic;
 * an elastic job's barrier, through poprun's store, fails of itself when a member is lost). */
static int peer_failed(void *arg, char *why, size_t len)
{
    struct gcl_instance *inst = arg;
    const gcl_job_t *j = &inst->job;
    if (inst->host.hb.base && gcl_diag_other_failed(j, &inst->host.hb, why, len))
        return 1;
    for (int g = 0; inst->ctrl && g < j->num_ipus; g++)
        if (gcl_ctrl_member_failed(inst->ctrl, &g, 1, why, len))
            return 1;
    return 0;
}

gcl_status_t gcl_instance_close(struct gcl_instance *inst)
{
    gcl_status_t rc = GCL_OK;
    /* First this instance's IPUs say that they will run no more: a peer that went on to a run
     * of its own waits for them in vain (its instance stopped at another run boundary, after a
     * Ctrl-C, say), and fails now, naming this instance, instead of after GCL_TIMEOUT_S, with
     * this barrier waiting for it as long. In a run they made, they count as returned. */
    set_states(inst, GCL_IPU_CLOSING);
    if (inst->ctrl)
        gcl_ctrl_ipu_changed(inst->ctrl);
    /* Nobody may unmap the host box while a peer could still be reading from it. After a failure
     * the others may never arrive, so a failed instance does not wait; nor does any instance
     * wait longer than GCL_TIMEOUT_S. */
    if (inst->boot && !inst->run.failed) {
        inst->boot->abandoned = peer_failed;
        inst->boot->abandoned_arg = inst;
        rc = inst->boot->barrier(inst->boot);
        inst->boot->abandoned = NULL;
    }
    if (rc == GCL_ERR_PEER_FAILED) {
        GCL_ERROR(GCL_SUB_INIT,
                  "gcl_finalize: not every instance will come to its final barrier: %s",
                  inst->boot->why);
    } else if (rc != GCL_OK) {
        GCL_ERROR(GCL_SUB_INIT, "gcl_finalize: %s: not every instance came to its final barrier%s",
                  gcl_status_name(rc),
                  rc == GCL_ERR_TIMEOUT ? " within GCL_TIMEOUT_S" : " (MPI failed)");
        rc = rc == GCL_ERR_TIMEOUT ? rc : GCL_ERR_MPI;
    }
    /* Only then are this instance's IPUs marked exited: before the barrier a peer still
     * retiring its last call could read the mark and take a live instance for a gone one. */
    set_states(inst, GCL_IPU_EXITED);
    if (inst->boot)
        inst->boot->failed = inst->run.failed;
    gcl_sim_setup_t w = {&inst->params, &inst->pd, &inst->job, inst->phantom};
    gcl_sim_fini(&inst->sim, &w);
    gcl_instance_unbuild(inst);
    gcl_membership_close(inst->elastic, rc == GCL_OK && !inst->run.failed);
    gcl_err_clear(&inst->err);
    free(inst);
    gcl_fault_report();
    return rc;
}

const char *gcl_instance_error(gcl_instance_t inst)
{
    return inst ? gcl_err_text(&inst->err) : "no instance";
}

void gcl_instance_info(gcl_instance_t inst, gcl_job_info_t *out)
{
    const gcl_job_t *j = &inst->job;
    *out = (gcl_job_info_t){
        j->num_instances,        j->instance_index,   j->num_replicas, inst->pd.num_local_replicas,
        inst->pd.replica_offset, j->ipus_per_replica, j->num_hosts,    j->host_index};
}
