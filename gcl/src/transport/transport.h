/*
 * Transports: what carries one message between two IPUs. Each is one table of functions in its
 * own file; the table in select.c lists them in order of preference, and a communicator asks
 * each in turn whether it can connect a peer (can_connect), once per peer, when it is created:
 *   local  same process    the receiver reduces straight out of the sender's buffer
 *   shm    same host       pieces pipelined through the sender's staging chunks in the host box
 *   tcp    another host    our own tagged messages in pieces, a TCP stream per pair
 *   ofi    another host    libfabric RDM tagged messages in pieces (tcp;ofi_rxm)
 *   mpi    another host    MPI_Isend / MPI_Irecv in pieces (the fallback that works everywhere)
 *
 * A transfer (gcl_xfer_t) is one message of one schedule op. The executor starts it, then calls
 * progress until it is done; transports never block. They see the job through a gcl_fabric_t
 * (the layout, the host box, the network backends) and report failures into the transfer's
 * error record; they call nothing above them.
 */
#ifndef GCL_TRANSPORT_H
#define GCL_TRANSPORT_H

#include "coll/run.h"
#include "job/diag.h"
#include "base/err.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "transport/net/backends.h"
#include "base/vocab/signature.h"

typedef struct gcl_transport gcl_transport_t;

/* What the transports know of the job. */
typedef struct {
    const gcl_job_t *job;
    gcl_hostbox_t *hb;
    const uint8_t *token;          /* the job's secret: every network header carries it */
    gcl_net_t *mpi, *ofi, *tcp;    /* the network backends, NULL when not in use */
    const gcl_transport_t *forced; /* GCL_TRANSPORT=tcp|ofi|mpi between instances, else NULL */
} gcl_fabric_t;

typedef struct gcl_xfer {
    const gcl_transport_t *tp;
    const gcl_fabric_t *fab;
    gcl_err_t *err; /* where a failure is described */
    int is_send;
    int me_ipu, me_hl; /* this IPU: global index, index in the host box */
    int peer_ipu;      /* global IPU of the peer */
    int peer_hl;       /* the peer's index in the host box, or -1 */
    const coll_op_t *op;
    void *const *bufs; /* the executor's IN, OUT, TMP */
    const coll_exec_info_t *info;
    const gcl_sig_t *sig;
    uint64_t key0, key1; /* key1 = message index << 32; transports add the piece index */
    uint64_t bytes;      /* in the whole message */
    int phantom;         /* sizes only, no data */
    /* A receive from the same peer earlier in the same step: on a network whose tags cannot tell
     * the two apart (mpi), this one is posted only once that one's pieces all are. */
    struct gcl_xfer *after;
    /* Progress. */
    uint64_t pos;   /* bytes handed over (send) or applied (receive) */
    uint32_t piece; /* next piece */
    int slot;       /* local transport: the slot a send waits on */
    int done;
    /* Simulated time: the sender's clock at the send, the arrival at the receiver, and when the
     * sender's link is free again; a receive learns the first two from the message. */
    uint64_t sim_send, sim_arrival, sim_busy_end;
    void *priv; /* transport state */
} gcl_xfer_t;

struct gcl_transport {
    const char *name;
    /* Whether this transport can carry messages between global IPUs ME and PEER. */
    int (*can_connect)(const gcl_fabric_t *f, int me, int peer);
    gcl_status_t (*start)(gcl_xfer_t *x);
    /* Advances X: returns 1 if it did something, 0 if it must wait for the peer, or a negative
     * status (described in x->err). Sets x->done when complete. */
    int (*progress)(gcl_xfer_t *x);
    /* Gives back what an unfinished transfer holds (error paths). */
    void (*cancel)(gcl_xfer_t *x);
    int polls; /* waiting on it must poll: nothing rings the IPU's doorbell */
};

extern const gcl_transport_t gcl_transport_local;
extern const gcl_transport_t gcl_transport_shm;
extern const gcl_transport_t gcl_transport_mpi;
extern const gcl_transport_t gcl_transport_ofi;
extern const gcl_transport_t gcl_transport_tcp;

/* Whether the mpi backend carries messages between instances, not only exists beside tcp or
 * ofi (with GCL_TRANSPORT=auto across hosts libgcl makes it too): GCL_TRANSPORT=mpi, or no
 * other network started. */
static inline int gcl_fabric_mpi_carries(const gcl_fabric_t *f)
{
    return f->mpi != NULL && (f->forced == &gcl_transport_mpi || (!f->tcp && !f->ofi));
}

/* The first transport of the table that connects ME to PEER (never NULL for a valid job:
 * local and shm connect everything on a host, and a job that spans hosts has a network). */
const gcl_transport_t *gcl_transport_pick(const gcl_fabric_t *f, int me, int peer);

/* A receiver's check of an incoming message's signature and size against its own call. */
static inline gcl_status_t gcl_xfer_check(gcl_xfer_t *x, const gcl_sig_t *theirs,
                                          uint64_t their_total)
{
    return gcl_diag_check_message(x->err, x->fab->job, x->me_ipu, x->peer_ipu, x->sig, theirs,
                                  x->bytes, their_total);
}

#endif /* GCL_TRANSPORT_H */
