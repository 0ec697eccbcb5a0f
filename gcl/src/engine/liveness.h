/*
 * Liveness and the timeout, for every engine: what a waiting call checks about every 100 ms,
 * and how every message about a call names it.
 */
#ifndef GCL_LIVENESS_H
#define GCL_LIVENESS_H

#include "base/wait.h"
#include "engine/exec.h"

/* Every ~100 ms of waiting: a mismatch, a peer that failed or left, this instance aborting, a
 * stall to warn about, or the timeout. GCL_OK to go on waiting; else the failure, recorded. */
gcl_status_t gcl_exec_check(gcl_exec_t *x, gcl_waiter_t *w);
/* The context of every message about X's call: "all_reduce #3 (group all, rank 2 of 8, step 4
 * of 14)". */
void gcl_exec_describe(gcl_exec_t *x, char *buf, size_t len);
/* Whether the peer IPU returned from its program after entering X's very call (its latest call
 * is this one, in this run): after a failure in it, a consequence; after its part was done, its
 * messages may still be on the way. */
int gcl_exec_returned_in_call(const gcl_exec_t *x, int ipu);

#endif /* GCL_LIVENESS_H */
