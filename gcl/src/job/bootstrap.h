/*
 * Bootstrap: the few collective operations over instances that start-up and shut-down need,
 * behind a small table of functions (as Gloo's store), so that start-up code does not care
 * whether MPI is there. "single" serves a one-instance job with no MPI at all; "mpi" serves a
 * poprun job.
 */
#ifndef GCL_BOOTSTRAP_H
#define GCL_BOOTSTRAP_H

#include <stddef.h>

#include "gcl/status.h"

typedef struct gcl_boot gcl_boot_t;

struct gcl_boot {
    const char *name;
    int rank, size;
    /* Set before destroy when this instance failed: do not synchronise with the others (they may
     * never arrive); the process is about to exit with an error anyway. */
    int failed;
    /* The last failed call's sentence, when the bootstrap has one to say ("" otherwise). */
    char why[400];
    /* Set by the caller around a call that another instance may never make (the final barrier):
     * whether one will not come (its run failed, so it skips the barrier), the sentence into
     * WHY. A waiting call asks it every 10 ms and then fails with GCL_ERR_PEER_FAILED instead of
     * waiting out GCL_TIMEOUT_S. NULL: never. */
    int (*abandoned)(void *arg, char *why, size_t len);
    void *abandoned_arg;
    /* ALL receives SIZE blocks of BYTES, block r from rank r. */
    gcl_status_t (*allgather)(gcl_boot_t *b, const void *mine, void *all, size_t bytes);
    gcl_status_t (*bcast)(gcl_boot_t *b, void *buf, size_t bytes, int root);
    gcl_status_t (*barrier)(gcl_boot_t *b);
    void (*destroy)(gcl_boot_t *b);
    void *impl;
};

gcl_status_t gcl_boot_single_create(gcl_boot_t **out);

struct gcl_store;
/* The bootstrap of an elastic job's epoch: poprun's store (job/store.h) over the members of the
 * current membership, this one RANK of SIZE. Each call gives up after TIMEOUT_S; one that fails
 * because an instance was lost returns GCL_ERR_PEER_FAILED (the sentence in why). The store
 * stays the caller's. */
gcl_status_t gcl_boot_store_create(struct gcl_store *store, int rank, int size, double timeout_s,
                                   gcl_boot_t **out);
/* The flags of the store's answer to the last call (GCL_STORE_F_JOINERS); 0 for any other
 * bootstrap. */
unsigned gcl_boot_store_flags(const gcl_boot_t *b);

/* Initialises MPI with MPI_THREAD_MULTIPLE unless the program already did, and checks that it
 * has EXPECTED_SIZE ranks. MESSAGES: the mpi transport will carry the job's messages (OpenMPI
 * is then asked for its ob1 PML; see bootstrap_route.c). Each of its calls gives up after
 * TIMEOUT_S with GCL_ERR_TIMEOUT (the instance cannot go on: MPI_Finalize is then skipped). On
 * failure, a sentence in ERR. */
gcl_status_t gcl_boot_mpi_create(int expected_size, int messages, double timeout_s,
                                 gcl_boot_t **out, char *err, size_t len);

/* Sets, before MPI_Init, how OpenMPI is to carry the bootstrap (and with MESSAGES the job's
 * messages): its BTLs and PML, as OMPI_MCA_* variables the user did not set. Why each:
 * job/bootstrap_route.c. */
void gcl_boot_mpi_route(int messages);

/* The MPI communicator (an MPI_Comm, as void *) of an "mpi" bootstrap, for the MPI transport;
 * NULL for any other. *THREAD_MULTIPLE says whether concurrent calls from threads are safe. */
void *gcl_boot_mpi_comm(gcl_boot_t *b, int *thread_multiple);

#endif /* GCL_BOOTSTRAP_H */
