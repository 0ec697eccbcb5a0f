/*
 * The MPI network backend: MPI_Isend / MPI_Irecv on the bootstrap's private communicator. MPI
 * tags are 30 bits here: 8 bits each of the destination's and the source's local IPU, 8 of the
 * call's sequence and 6 of the communicator key; a call's messages between a pair share a tag
 * and MPI's non-overtaking order keeps them in sequence. Declared in transport/net/backends.h.
 */
#include <mpi.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "job/bootstrap.h"
#include "base/alloc.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/wait.h"
#include "transport/net/backends.h"

enum { MAX_LOCAL_IPUS = 256 };

typedef struct {
    gcl_net_t base;
    MPI_Comm comm;
    int serialize; /* MPI is not MPI_THREAD_MULTIPLE: one call at a time */
    atomic_int gave_up; /* a cancel's wait ran out: later ones wait CANCEL_WAIT_AGAIN_S */
    pthread_mutex_t lock;
} net_mpi_t;

static int tag_of(const gcl_net_tag_t *t)
{
    return (int)(((t->comm & 0x3fu) << 24) | ((t->seq & 0xffu) << 16) |
                 (((uint32_t)t->dst_local & 0xffu) << 8) | ((uint32_t)t->src_local & 0xffu));
}

static void lock(net_mpi_t *m)
{
    if (m->serialize)
        pthread_mutex_lock(&m->lock);
}

static void unlock(net_mpi_t *m)
{
    if (m->serialize)
        pthread_mutex_unlock(&m->lock);
}

static int post(gcl_net_t *n, int send, int peer, void *buf, size_t len, const gcl_net_tag_t *t,
                void **req)
{
    net_mpi_t *m = (net_mpi_t *)n;
    MPI_Request *r = gcl_malloc(sizeof *r);
    if (!r || len > 0x7fffffff) {
        free(r);
        snprintf(n->error, sizeof n->error, "mpi: cannot post %zu bytes", len);
        return -1;
    }
    if (gcl_fault_post(n->error, sizeof n->error, n->name, send, peer)) {
        free(r);
        return -1;
    }
    lock(m);
    int rc = send ? MPI_Isend(buf, (int)len, MPI_BYTE, peer, tag_of(t), m->comm, r)
                  : MPI_Irecv(buf, (int)len, MPI_BYTE, peer, tag_of(t), m->comm, r);
    unlock(m);
    if (rc != MPI_SUCCESS) {
        free(r);
        snprintf(n->error, sizeof n->error, "mpi: posting a %s with instance %d failed",
                 send ? "send" : "receive", peer);
        return -1;
    }
    *req = r;
    return 0;
}

static int mpi_isend(gcl_net_t *n, int peer, const void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 1, peer, (void *)buf, len, tag, req);
}

static int mpi_irecv(gcl_net_t *n, int peer, void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 0, peer, buf, len, tag, req);
}

static int mpi_test(gcl_net_t *n, void *req)
{
    net_mpi_t *m = (net_mpi_t *)n;
    int flag = 0;
    lock(m);
    int rc = MPI_Test(req, &flag, MPI_STATUS_IGNORE);
    unlock(m);
    if (rc != MPI_SUCCESS) {
        snprintf(n->error, sizeof n->error, "mpi: a transfer failed");
        free(req);
        return -1;
    }
    if (flag)
        free(req);
    return flag;
}

/* A request is cancelled when its call failed. MPI_Cancel ends a receive that nothing matched;
 * OpenMPI's ob1 does not cancel a send, which ends only once its receiver took it (a large one)
 * or it was buffered (a small one), and a receiver that failed too never takes it. So the wait
 * for the end has a bound: CANCEL_WAIT_S, and CANCEL_WAIT_AGAIN_S for every later cancel of the
 * backend once one was given up (a peer that is gone would cost every piece of a call the full
 * bound). A request still not ended then is left to MPI, and never freed: MPI may still write
 * its handle. Its message can never be matched again: the call's communicator failed with it. */
#define CANCEL_WAIT_S       0.5
#define CANCEL_WAIT_AGAIN_S 0.01

static void mpi_cancel(gcl_net_t *n, void *req)
{
    net_mpi_t *m = (net_mpi_t *)n;
    MPI_Request *r = req;
    int done = *r == MPI_REQUEST_NULL;
    lock(m);
    if (!done)
        MPI_Cancel(r);
    unlock(m);
    double until = gcl_now() + (atomic_load(&m->gave_up) ? CANCEL_WAIT_AGAIN_S : CANCEL_WAIT_S);
    while (!done) {
        lock(m);
        int rc = MPI_Test(r, &done, MPI_STATUS_IGNORE);
        unlock(m);
        if (rc != MPI_SUCCESS) /* it ended, in error: MPI has let go of it */
            done = 1;
        if (done || gcl_now() >= until)
            break;
        sched_yield();
    }
    if (!done && !atomic_exchange(&m->gave_up, 1))
        GCL_WARN(GCL_SUB_MPI, "mpi: a cancelled transfer did not end within %.1f s: left to MPI",
                 CANCEL_WAIT_S);
    if (done)
        free(r);
}

static void mpi_destroy(gcl_net_t *n)
{
    net_mpi_t *m = (net_mpi_t *)n;
    pthread_mutex_destroy(&m->lock);
    free(m);
}

gcl_status_t gcl_net_mpi_create(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                                gcl_net_t **out, char *err, size_t len)
{
    int multiple = 0;
    MPI_Comm *comm = gcl_boot_mpi_comm(boot, &multiple);
    if (!comm) {
        snprintf(err, len, "the mpi transport needs the MPI bootstrap (a poprun job)");
        return GCL_ERR_NOT_SUPPORTED;
    }
    int max_local = 0;
    for (int i = 0; i < j->num_instances; i++)
        if (j->peers[i].num_local_replicas * j->ipus_per_replica > max_local)
            max_local = j->peers[i].num_local_replicas * j->ipus_per_replica;
    int *tag_ub = NULL, found = 0;
    MPI_Comm_get_attr(*comm, MPI_TAG_UB, &tag_ub, &found);
    if (max_local > MAX_LOCAL_IPUS || !found || *tag_ub < (1 << 30) - 1) {
        snprintf(err, len,
                 "the mpi transport needs at most %d IPUs per instance (not %d) and "
                 "tags up to 2^30",
                 MAX_LOCAL_IPUS, max_local);
        return GCL_ERR_NOT_SUPPORTED;
    }
    net_mpi_t *m = gcl_calloc(1, sizeof *m);
    if (!m) {
        snprintf(err, len, "mpi: out of host memory");
        return GCL_ERR_NO_HOST_MEMORY;
    }
    m->base = (gcl_net_t){.name = "mpi",
                          .chunk_bytes = (size_t)p->mpi_chunk_bytes,
                          .isend = mpi_isend,
                          .irecv = mpi_irecv,
                          .test = mpi_test,
                          .cancel = mpi_cancel,
                          .destroy = mpi_destroy};
    m->comm = *comm;
    m->serialize = !multiple;
    pthread_mutex_init(&m->lock, NULL);
    if (m->serialize)
        GCL_INFO(GCL_SUB_MPI, "MPI is not MPI_THREAD_MULTIPLE: serialising MPI calls");
    *out = &m->base;
    return GCL_OK;
}
