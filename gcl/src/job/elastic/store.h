/*
 * The client of poprun's elastic store (gcl/elastic_store.h has the protocol): one TCP
 * connection per instance, kept for the whole life of the instance, across its epochs. A thread
 * of its own reads every answer and the store's news (an instance lost), and sends a beat every
 * GCL_HEARTBEAT_S, so that poprun tells a stopped or lost host from a busy one. Requests are
 * made one at a time (the instance's bootstrap calls are made by one thread at a time): each
 * sends its message and waits for its answer, up to a timeout.
 */
#ifndef GCL_STORE_H
#define GCL_STORE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "gcl/status.h"

typedef struct gcl_store gcl_store_t;

/* What the store said of the current epoch: an instance of it lost, and why. Read by every
 * waiting call's liveness check (engine/liveness.c). */
typedef struct {
    _Atomic int lost; /* slot of an instance lost in the current epoch + 1, or 0 */
    char why[400];    /* written before LOST */
} gcl_store_news_t;

/* A membership, as the store announced it (EPOCH). */
typedef struct {
    int epoch, rank, members, replicas_per_instance;
    int nlost, njoined;
    int *slots;  /* [members]: rank -> slot */
    int *lost;   /* [nlost] */
    int *joined; /* [njoined] */
} gcl_membership_t;

void gcl_membership_free(gcl_membership_t *m);

/*
 * Connects to ADDR ("IPV4:PORT") and says HELLO as instance SLOT with TOKEN (JOIN: as the
 * replacement of a lost one); BEAT_S is the beat's period; ON_NEWS(CTX) is called from the
 * store's thread when an instance of the current epoch is lost or the store is gone (it wakes
 * the IPU threads). Returns GCL_OK, or GCL_ERR_TRANSPORT / GCL_ERR_INVALID_ARGUMENT (refused)
 * with a sentence in ERR.
 */
gcl_status_t gcl_store_connect(const char *addr, const uint8_t token[16], int slot, int join,
                               double beat_s, void (*on_news)(void *), void *ctx, gcl_store_t **out,
                               char *err, size_t len);

/* Waits up to TIMEOUT_S for the next membership (after the HELLO, or gcl_store_resize). GCL_OK
 * with *OUT filled (and news of the old epoch forgotten); GCL_ERR_PEER_FAILED when the store
 * said STOP (the job cannot go on: ERR says why), GCL_ERR_TIMEOUT, or GCL_ERR_TRANSPORT when
 * the store is gone. */
gcl_status_t gcl_store_wait_epoch(gcl_store_t *s, double timeout_s, gcl_membership_t *out,
                                  char *err, size_t len);

/* Asks for the epoch after the current one (FAILED: this instance's run failed). GCL_OK,
 * GCL_ERR_PEER_FAILED when the store said STOP (this instance was left out: ERR says why), or
 * GCL_ERR_TRANSPORT when the store is gone. */
gcl_status_t gcl_store_resize(gcl_store_t *s, int failed, char *err, size_t len);

/*
 * One bootstrap call over the members of the current epoch: an allgather (ROOT -1: OUT gets
 * members x BYTES, rank order) or a broadcast (OUT gets ROOT's BYTES); OUT_BYTES is what the
 * caller expects. *FLAGS gets the answer's flags (GCL_STORE_F_JOINERS). GCL_OK,
 * GCL_ERR_PEER_FAILED (an instance was lost, or the store said STOP: ERR says which),
 * GCL_ERR_TIMEOUT or GCL_ERR_TRANSPORT.
 */
gcl_status_t gcl_store_coll(gcl_store_t *s, int root, const void *in, size_t bytes, void *out,
                            size_t out_bytes, unsigned *flags, double timeout_s, char *err,
                            size_t len);

/* This instance finished cleanly (after gcl_finalize's last barrier). */
void gcl_store_bye(gcl_store_t *s);

/* The news of the current epoch (see gcl_store_news_t); never NULL. */
const gcl_store_news_t *gcl_store_news(const gcl_store_t *s);
/* The current epoch (-1 before the first). */
int gcl_store_epoch(const gcl_store_t *s);

/* Stops the thread and closes the connection. NULL is fine. */
void gcl_store_close(gcl_store_t *s);

#endif /* GCL_STORE_H */
