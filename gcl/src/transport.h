/*
 * Transports: what carries one message between two IPUs. Each is one table of functions in its
 * own file, chosen per peer by where the peer runs:
 *   local  same process    the receiver reduces straight out of the sender's buffer
 *   shm    same host       pieces pipelined through the sender's staging chunks in the host box
 *   ofi    another host    libfabric RDM tagged messages in pieces (tcp;ofi_rxm)
 *   mpi    another host    MPI_Isend / MPI_Irecv in pieces (the fallback that works everywhere)
 *
 * A transfer (gcl_xfer_t) is one message of one schedule op. The executor starts it, then calls
 * progress until it is done; transports never block.
 */
#ifndef GCL_TRANSPORT_H
#define GCL_TRANSPORT_H

#include "coll/run.h"
#include "internal.h"

typedef struct gcl_transport gcl_transport_t;

typedef struct gcl_xfer {
    const gcl_transport_t *tp;
    struct gcl_ctx *ctx;
    struct gcl_comm *comm;
    int is_send;
    int peer_ipu; /* global IPU of the peer */
    int peer_hl;  /* the peer's index in the host box, or -1 */
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
    gcl_status_t (*start)(gcl_xfer_t *x);
    /* Advances X: returns 1 if it did something, 0 if it must wait for the peer, or a negative
     * status (the reason recorded with gcl_ctx_fail). Sets x->done when complete. */
    int (*progress)(gcl_xfer_t *x);
    /* Gives back what an unfinished transfer holds (error paths). */
    void (*cancel)(gcl_xfer_t *x);
    int polls; /* waiting on it must poll: nothing rings the IPU's doorbell */
};

extern const gcl_transport_t gcl_transport_local;
extern const gcl_transport_t gcl_transport_shm;
extern const gcl_transport_t gcl_transport_mpi;
extern const gcl_transport_t gcl_transport_ofi;

/* The transport that connects CTX's IPU to global IPU PEER. */
const gcl_transport_t *gcl_transport_for(struct gcl_ctx *ctx, int peer);

/* A receiver's check of an incoming message's signature and size against its own call. Returns
 * 0, or GCL_ERR_MISMATCH recorded with both sides described. */
int gcl_xfer_check(gcl_xfer_t *x, const gcl_sig_t *theirs, uint64_t their_total);

/* "all_reduce #3 of 1024 x f32, op sum, root -1, group all (algorithm 1a2b3c4d)". */
void gcl_sig_describe(const gcl_sig_t *s, char *buf, size_t len);

/* "mismatched calls: replica 3 (...) called A; replica 2 (...) called B", naming both sides. */
void gcl_mismatch_text(const struct gcl_instance *inst, int ipu_a, const gcl_sig_t *a, int ipu_b,
                       const gcl_sig_t *b, char *buf, size_t len);

/* Sets up the network backends the job needs between its instances (collective over them), and
 * frees them. */
gcl_status_t gcl_transports_init(struct gcl_instance *inst);
void gcl_transports_fini(struct gcl_instance *inst);

#endif /* GCL_TRANSPORT_H */
