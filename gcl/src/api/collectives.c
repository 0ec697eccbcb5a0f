/*
 * The collectives' entry points of gcl/gcl.h, one short function each and nothing more:
 * gcl_all_reduce, gcl_reduce_scatter, gcl_all_gather, gcl_broadcast, gcl_all_to_all,
 * gcl_barrier and their _start forms fill in a gcl_call_t (which collective, buffers, count,
 * type, operator, root) and hand it to gcl_collective (call.c), which checks, plans and starts
 * it; gcl_wait and gcl_test finish a started one. Declared in gcl/gcl.h.
 */
#include "api/call.h"

static gcl_status_t call(gcl_comm_t comm, gcl_call_t c, gcl_request_t *req)
{
    if (!comm)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_collective(comm, &c, req == NULL, req);
}

#define CALL(coll, send, recv, count, type, op, root, what)                                        \
    ((gcl_call_t){(coll), (send), (recv), (count), (type), (op), (root), (what), 0})

gcl_status_t gcl_all_reduce(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type, gcl_redop_t op)
{
    return call(comm, CALL(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, -1, "all_reduce"),
                NULL);
}

gcl_status_t gcl_reduce_scatter(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                size_t recvcount, gcl_dtype_t type, gcl_redop_t op)
{
    return call(
        comm,
        CALL(COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, type, op, -1, "reduce_scatter"),
        NULL);
}

gcl_status_t gcl_all_gather(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t sendcount,
                            gcl_dtype_t type)
{
    return call(comm,
                CALL(COLL_ALLGATHER, sendbuf, recvbuf, sendcount, type, GCL_SUM, -1, "all_gather"),
                NULL);
}

gcl_status_t gcl_broadcast(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                           gcl_dtype_t type, int root)
{
    return call(comm,
                CALL(COLL_BROADCAST, sendbuf, recvbuf, count, type, GCL_SUM, root, "broadcast"),
                NULL);
}

gcl_status_t gcl_all_to_all(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                            gcl_dtype_t type)
{
    return call(comm, CALL(COLL_ALLTOALL, sendbuf, recvbuf, count, type, GCL_SUM, -1, "all_to_all"),
                NULL);
}

gcl_status_t gcl_barrier(gcl_comm_t comm)
{
    return call(comm, CALL(COLL_BARRIER, NULL, NULL, 0, GCL_BOOL, GCL_SUM, -1, "barrier"), NULL);
}

/* Non-blocking forms: the same calls, returning a request. */
#define START(c)                                                                                   \
    do {                                                                                           \
        if (!req)                                                                                  \
            return GCL_ERR_INVALID_ARGUMENT;                                                       \
        return call(comm, (c), req);                                                               \
    } while (0)

gcl_status_t gcl_all_reduce_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                  gcl_dtype_t type, gcl_redop_t op, gcl_request_t *req)
{
    START(CALL(COLL_ALLREDUCE, sendbuf, recvbuf, count, type, op, -1, "all_reduce"));
}

gcl_status_t gcl_reduce_scatter_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                      size_t recvcount, gcl_dtype_t type, gcl_redop_t op,
                                      gcl_request_t *req)
{
    START(CALL(COLL_REDUCE_SCATTER, sendbuf, recvbuf, recvcount, type, op, -1, "reduce_scatter"));
}

gcl_status_t gcl_all_gather_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf,
                                  size_t sendcount, gcl_dtype_t type, gcl_request_t *req)
{
    START(CALL(COLL_ALLGATHER, sendbuf, recvbuf, sendcount, type, GCL_SUM, -1, "all_gather"));
}

gcl_status_t gcl_broadcast_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                 gcl_dtype_t type, int root, gcl_request_t *req)
{
    START(CALL(COLL_BROADCAST, sendbuf, recvbuf, count, type, GCL_SUM, root, "broadcast"));
}

gcl_status_t gcl_all_to_all_start(gcl_comm_t comm, const void *sendbuf, void *recvbuf, size_t count,
                                  gcl_dtype_t type, gcl_request_t *req)
{
    START(CALL(COLL_ALLTOALL, sendbuf, recvbuf, count, type, GCL_SUM, -1, "all_to_all"));
}

gcl_status_t gcl_barrier_start(gcl_comm_t comm, gcl_request_t *req)
{
    START(CALL(COLL_BARRIER, NULL, NULL, 0, GCL_BOOL, GCL_SUM, -1, "barrier"));
}

gcl_status_t gcl_wait(gcl_request_t req)
{
    if (!req)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_request_complete(req);
}

gcl_status_t gcl_test(gcl_request_t req, int *done)
{
    if (!req || !done)
        return GCL_ERR_INVALID_ARGUMENT;
    return gcl_request_test(req, done);
}
