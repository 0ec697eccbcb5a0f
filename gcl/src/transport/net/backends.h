/*
 * Network backends: tagged messages between instances, for the transports that cross hosts.
 * They live in transport/net/, under the transport they serve: transport/net.c runs the message
 * protocol (a header, then pieces, reduced as they arrive) once, over any backend of this folder:
 *   tcp  our own tagged messages over a TCP stream per pair of instances (tcp.c, tcp_mesh.c)
 *   mpi  MPI_Isend / MPI_Irecv on a private communicator (mpi.c)
 *   ofi  libfabric RDM tagged messages, tcp;ofi_rxm by default (ofi.c; ofi_none.c when libgcl is
 *        built without libfabric)
 */
#ifndef GCL_NET_BACKENDS_H
#define GCL_NET_BACKENDS_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "gcl/status.h"

#include "job/bootstrap.h"
#include "job/job.h"
#include "base/param.h"

/* What names a message: the backend folds it into its tag as exactly as it can. */
typedef struct {
    uint32_t comm, seq;       /* the call: communicator key and sequence number */
    uint32_t msg;             /* message index between the pair within the call */
    uint32_t piece;           /* 0: the header; 1..: data pieces */
    int src_local, dst_local; /* the IPUs' indices within their instances */
} gcl_net_tag_t;

typedef struct gcl_net gcl_net_t;

enum { GCL_NET_POOL = 32 };

/* Scratch pieces (chunk_bytes each) that net.c keeps between transfers, so that a reduction's
 * receive does not map and fault in fresh memory on every call: a 256 KiB piece is above
 * malloc's mmap threshold, and a 1 MiB all_reduce across 2 hosts spent about 15% of both
 * cores in page faults and unmapping. Set up by gcl_net_pool_init, emptied by _fini. */
typedef struct {
    pthread_mutex_t lock;
    char *free[GCL_NET_POOL];
    int n;
} gcl_net_pool_t;

struct gcl_net {
    const char *name;
    size_t chunk_bytes; /* data piece size */
    int exact_tags;     /* tags carry msg and piece too (otherwise order keeps them apart) */
    /* Post a send or a receive to or from instance PEER; *REQ is a handle until test says done.
     * Return 0, 1 when the network cannot take it now (the caller tries again later, without
     * holding anything), or -1 with a sentence in the backend's error. */
    int (*isend)(gcl_net_t *n, int peer, const void *buf, size_t len, const gcl_net_tag_t *tag,
                 void **req);
    int (*irecv)(gcl_net_t *n, int peer, void *buf, size_t len, const gcl_net_tag_t *tag,
                 void **req);
    /* 1 when REQ completed, 0 when not yet, -1 when it failed; after 1 or -1 the handle is
     * freed. */
    int (*test)(gcl_net_t *n, void *req);
    /* Stops REQ and frees it: its buffer is no longer touched after this returns. */
    void (*cancel)(gcl_net_t *n, void *req);
    void (*destroy)(gcl_net_t *n);
    char error[256];
    gcl_net_pool_t pool; /* net.c's */
};

void gcl_net_pool_init(gcl_net_t *n);
void gcl_net_pool_fini(gcl_net_t *n);

/* Creates a backend for job J over its bootstrap BOOT (collective over the instances: every
 * instance calls it, and ofi takes part in the address exchange even when it fails locally, so
 * that none is left waiting). On failure, a sentence in ERR. */
gcl_status_t gcl_net_mpi_create(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                                gcl_net_t **out, char *err, size_t len);
gcl_status_t gcl_net_ofi_create(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                                gcl_net_t **out, char *err, size_t len);
/* TOKEN: the job's secret, which every connection's hello must carry. */
gcl_status_t gcl_net_tcp_create(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                                const uint8_t token[16], gcl_net_t **out, char *err, size_t len);

#endif /* GCL_NET_BACKENDS_H */
