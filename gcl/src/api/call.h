/*
 * One collective call inside libgcl (call.c): gcl_call_t, what the entry points of
 * collectives.c and multi.c say a call asks for; how it is planned (the pod algorithm and the
 * data path); and gcl_collective, which checks, plans and starts it.
 */
#ifndef GCL_API_CALL_H
#define GCL_API_CALL_H

#include "api/comm.h"
#include "engine/request.h"

/* Plans CALL (with arguments A) on COMM: GCL_OK, or a failure in COMM's record. */
gcl_status_t gcl_plan(struct gcl_comm *comm, const gcl_call_t *call, const coll_args_t *a,
                      int blocking, gcl_plan_t *p);

/*
 * Checks CALL, plans it, builds its schedule and starts it on COMM. BLOCKING calls borrow the
 * communicator's schedule memory and complete before returning; others return a request in
 * *OUT. Failures are recorded in the communicator's error record.
 */
gcl_status_t gcl_collective(struct gcl_comm *comm, const gcl_call_t *call, int blocking,
                            struct gcl_request **out);

#endif /* GCL_API_CALL_H */
