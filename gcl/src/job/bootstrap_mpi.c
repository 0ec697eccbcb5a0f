/* The bootstrap of a poprun job: MPI on a private duplicate of MPI_COMM_WORLD. Declared in
 * job/bootstrap.h. */
#include "job/bootstrap.h"

#include <mpi.h>
#include <stdio.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>

#include "base/alloc.h"
#include "base/wait.h"

typedef struct {
    MPI_Comm comm;
    int we_initialized; /* MPI_Finalize is ours to call */
    int thread_multiple;
    double timeout_s; /* a call gives up after this long (GCL_TIMEOUT_S) */
    int stuck;        /* a call gave up: its request is MPI's for good, MPI_Finalize would wait */
} mpi_boot_t;

/* Waits for R by TIMEOUT_S: every call of the bootstrap has a bound, as every blocking call of
 * libgcl has (a peer stuck outside libgcl held gcl_preempt_agree's exchange in every training
 * step without end). Looks at once, then yields the core, then naps 0.1 ms between looks: the
 * calls are few and small (start-up, a step's agreement, the last barrier). Every 100 naps it
 * asks B->abandoned, when set, whether another instance will never come. */
static gcl_status_t finish(gcl_boot_t *b, MPI_Request *r)
{
    mpi_boot_t *m = b->impl;
    double until = gcl_now() + m->timeout_s;
    struct timespec nap = {0, 100000};
    for (unsigned looks = 0;; looks++) {
        int done = 0;
        if (MPI_Test(r, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS)
            return GCL_ERR_MPI;
        if (done)
            return GCL_OK;
        if (gcl_now() >= until) {
            m->stuck = 1; /* the request stays MPI's: it cannot be cancelled */
            return GCL_ERR_TIMEOUT;
        }
        if (b->abandoned && looks >= 1000 && looks % 100 == 0 &&
            b->abandoned(b->abandoned_arg, b->why, sizeof b->why)) {
            m->stuck = 1;
            return GCL_ERR_PEER_FAILED;
        }
        if (looks < 1000)
            sched_yield();
        else
            nanosleep(&nap, NULL);
    }
}

static gcl_status_t mpi_allgather(gcl_boot_t *b, const void *mine, void *all, size_t bytes)
{
    mpi_boot_t *m = b->impl;
    MPI_Request r;
    if (m->stuck || MPI_Iallgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, m->comm,
                                   &r) != MPI_SUCCESS)
        return GCL_ERR_MPI;
    return finish(b, &r);
}

static gcl_status_t mpi_bcast(gcl_boot_t *b, void *buf, size_t bytes, int root)
{
    mpi_boot_t *m = b->impl;
    MPI_Request r;
    if (m->stuck || MPI_Ibcast(buf, (int)bytes, MPI_BYTE, root, m->comm, &r) != MPI_SUCCESS)
        return GCL_ERR_MPI;
    return finish(b, &r);
}

static gcl_status_t mpi_barrier(gcl_boot_t *b)
{
    mpi_boot_t *m = b->impl;
    MPI_Request r;
    if (m->stuck || MPI_Ibarrier(m->comm, &r) != MPI_SUCCESS)
        return GCL_ERR_MPI;
    return finish(b, &r);
}

static void mpi_destroy(gcl_boot_t *b)
{
    mpi_boot_t *m = b->impl;
    /* MPI_Finalize waits for every rank; after a failure some never come, and mpirun ends the
     * job when this process exits with an error. A call that gave up left a request MPI would
     * wait for too. */
    if (!b->failed && !m->stuck) {
        MPI_Comm_free(&m->comm);
        if (m->we_initialized)
            MPI_Finalize();
    }
    free(m);
    free(b);
}

/* Settings OpenMPI takes from this process's environment at MPI_Init, made before it starts
 * any thread; a value the user set wins.
 * - OMPI_MCA_mtl=^psm2: OpenMPI 4.1's psm2 MTL sets PSM2_DEVICES inside MPI_Init_thread, after
 *   PMIx's progress thread has started, and that thread reads the environment meanwhile
 *   (getenv in OpenMPI's model callback): a setenv that moves the environment under it crashed
 *   an instance (seen once in about a thousand start-ups under load: SIGSEGV in getenv, called
 *   from mca_pmix_ext3x). psm2 serves only Omni-Path hardware.
 * - how OpenMPI carries the bootstrap, its BTLs and PML: job/bootstrap_route.c;
 * - FI_OFI_RXM_EAGER_LIMIT=1 GiB, the most GCL_OFI_CHUNK_BYTES allows: every message of the ofi
 *   transport is eager (libfabric takes it here, as OpenMPI's MTL initialises libfabric inside
 *   MPI_Init). Above its 16 KiB default, ofi_rxm over tcp uses rendezvous, and libfabric 1.17's
 *   rendezvous crashes a receiver that posts its receive after the sender's connection closed:
 *   the unexpected request still points at the closed connection and rxm reads from it with a
 *   NULL endpoint (fi_readv; SIGSEGV inside fi_trecv). A surviving instance crashed so when a
 *   peer died on another host (faults_peer_death_2hosts, once in a default-tier run beside a
 *   job; 6 of 10 runs with the receiver stopped across the kill, FAULTS_FROZEN; 0 of 8 with
 *   eager messages). Rendezvous writes (FI_OFI_RXM_USE_RNDV_WRITE) still crashed 1 of 6. */
static void prepare_mpi_env(int messages)
{
    if (!getenv("FI_OFI_RXM_EAGER_LIMIT"))
        setenv("FI_OFI_RXM_EAGER_LIMIT", "1073741824", 0);
    if (!getenv("OMPI_MCA_mtl"))
        setenv("OMPI_MCA_mtl", "^psm2", 0);
    gcl_boot_mpi_route(messages);
}

/* Whether the job is an srun step that gave its tasks no PMIx server: OpenMPI 4.1 as Debian
 * builds it finds its peers under srun only through PMIx (it has no PMI-1 or PMI-2 client), and
 * its MPI_Init would end each task with a page of text and an abort. Slurm's tasks of srun
 * --mpi=pmix have PMIX_RANK; those of --mpi=none or --mpi=pmi2 do not. */
static int srun_without_pmix(void)
{
#ifdef OPEN_MPI
    return !getenv("OMPI_COMM_WORLD_SIZE") && getenv("SLURM_STEP_ID") && !getenv("PMIX_RANK");
#else
    return 0;
#endif
}

gcl_status_t gcl_boot_mpi_create(int expected_size, int messages, double timeout_s,
                                 gcl_boot_t **out, char *err, size_t len)
{
    if (srun_without_pmix()) {
        snprintf(err, len,
                 "srun started %d tasks without PMIx (SLURM_MPI_TYPE=%s), and OpenMPI finds its "
                 "ranks under srun only through PMIx: run srun --mpi=pmix",
                 expected_size, getenv("SLURM_MPI_TYPE") ? getenv("SLURM_MPI_TYPE") : "none");
        return GCL_ERR_MPI;
    }
    gcl_boot_t *b = gcl_calloc(1, sizeof *b);
    mpi_boot_t *m = gcl_calloc(1, sizeof *m);
    if (!b || !m) {
        free(b);
        free(m);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    int initialized = 0, provided = MPI_THREAD_SINGLE;
    MPI_Initialized(&initialized);
    if (!initialized) {
        prepare_mpi_env(messages);
        if (MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided) != MPI_SUCCESS) {
            snprintf(err, len, "MPI_Init_thread failed (is this job started by poprun/mpirun?)");
            goto fail;
        }
        m->we_initialized = 1;
    } else {
        MPI_Query_thread(&provided);
    }
    m->thread_multiple = provided >= MPI_THREAD_MULTIPLE;
    m->timeout_s = timeout_s;
    /* Errors come back as codes, so that a failing call becomes a status, not an abort. */
    MPI_Comm_dup(MPI_COMM_WORLD, &m->comm);
    MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(m->comm, &b->rank);
    MPI_Comm_size(m->comm, &b->size);
    if (b->size != expected_size) {
        snprintf(err, len,
                 "POPDIST_NUM_INSTANCES is %d but MPI has %d ranks: start the job with poprun",
                 expected_size, b->size);
        MPI_Comm_free(&m->comm);
        if (m->we_initialized)
            MPI_Finalize();
        goto fail;
    }
    b->name = "mpi";
    b->allgather = mpi_allgather;
    b->bcast = mpi_bcast;
    b->barrier = mpi_barrier;
    b->destroy = mpi_destroy;
    b->impl = m;
    *out = b;
    return GCL_OK;
fail:
    free(m);
    free(b);
    return GCL_ERR_MPI;
}

void *gcl_boot_mpi_comm(gcl_boot_t *b, int *thread_multiple)
{
    if (!b || !b->impl || b->destroy != mpi_destroy)
        return NULL;
    mpi_boot_t *m = b->impl;
    if (thread_multiple)
        *thread_multiple = m->thread_multiple;
    return &m->comm;
}
