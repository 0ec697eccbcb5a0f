/*
 * The engines, each one table of exec.h's gcl_engine_t in a file of its own, as the transports
 * are in transport/transport.h:
 *   messages  one rank's schedule (collectives/) over the transports, step by step, as a state
 *             machine (start, then progress until done), so that blocking calls and
 *             non-blocking requests share it (messages.c);
 *   direct    host-direct: all_reduce, reduce_scatter and all_gather over a group whose ranks
 *             all share this host, straight in memory instead of by messages (direct.c; the
 *             data movement is direct_move.c);
 *   eager     small blocking all_reduce, broadcast and barrier over a group that shares this
 *             host, in one exchange through the host box's eager cells (eager.c).
 */
#ifndef GCL_ENGINES_H
#define GCL_ENGINES_H

#include "engine/exec.h"

extern const gcl_engine_t gcl_engine_messages;
extern const gcl_engine_t gcl_engine_direct;
extern const gcl_engine_t gcl_engine_eager;

/* Whether a call of COLL with BYTES per replica over PEERS may run host-direct. */
int gcl_direct_eligible(const gcl_peers_t *peers, coll_collective_t coll, size_t bytes);
/* Sets X (started on PEERS) up to run host-direct the call A. */
gcl_status_t gcl_direct_setup(gcl_exec_t *x, const coll_args_t *a);

/* Whether a blocking call of COLL with BYTES per replica over PEERS may run eager. */
int gcl_eager_eligible(const gcl_peers_t *peers, coll_collective_t coll, size_t bytes);
/* Sets X (a blocking call started on PEERS, its simulated time planned as a replay) up to run
 * eager. */
gcl_status_t gcl_eager_setup(gcl_exec_t *x);
/* Asks for the cache lines of ROOT's cell that a broadcast of BYTES over PEERS, of which this
 * IPU is not the root, looks at first (find). Called before the call is set up, so that where
 * the root published on another core its line crosses while the call is set up (0.1 us here),
 * not after. Only a hint. */
void gcl_eager_expect(const gcl_peers_t *peers, int root, size_t bytes);

/*
 * A blocking broadcast's caller's part, before its call is set up (api/call.c, early): the
 * root claims a cell and publishes its data; a reader that finds the root's cell there at
 * entry copies it out. The call is then parked, and set up at the IPU's next call as if its
 * engine had done that part (gcl_eager_resume).
 */
typedef struct {
    int8_t cell;      /* the root's cell of the call */
    sim_time_t clock; /* the root's entry clock, read there (a reader's) */
} gcl_eager_early_t;
/* A reader: when ROOT's cell of the call (KEY, SIG) is the one after the last this IPU found of
 * ROOT's, copies its BYTES of data to OUT: 1, with where in GOT. 0 when it is not there (not
 * yet, or not that cell, or another call: the engine then looks for it, or names the
 * mismatch); -1 if it was reused while read. */
int gcl_eager_read_early(const gcl_peers_t *peers, int root, uint64_t key, const gcl_sig_t *sig,
                         void *out, size_t bytes, gcl_eager_early_t *got);
/* The root: claims a free cell of its own, or -1 when none is (the engine then waits for one). */
int gcl_eager_claim_early(const gcl_peers_t *peers);
/* The root: publishes the call KEY (SIG, entered at CLOCK) and its BYTES of IN in its cell I
 * (claimed by gcl_eager_claim_early), and rings the peers that sleep. */
void gcl_eager_send_early(const gcl_peers_t *peers, int i, uint64_t key, const gcl_sig_t *sig,
                          sim_time_t clock, const void *in, size_t bytes);
/* Sets X (the same call, set up for eager since) up as if its engine had done the caller's
 * part as GOT says: a reader goes on with publishing its own cell, the root with the others'. */
void gcl_eager_resume(gcl_exec_t *x, const gcl_eager_early_t *got);

#endif /* GCL_ENGINES_H */
