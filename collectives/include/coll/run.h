/*
 * Executing schedule ops on memory, and running the schedules of a whole group in one process.
 */
#ifndef COLL_RUN_H
#define COLL_RUN_H

#include "coll/schedule.h"

/* Everything an op needs besides its buffers. */
typedef struct {
    coll_dtype_t dtype;
    coll_redop_t op;
    size_t elem_size;
    int nranks; /* the divisor of a MEAN */
} coll_exec_info_t;

/* Runs one local op (COPY, REDUCE, DIVIDE) on BUFS (indexed by coll_buf_t). A COPY whose source
 * and destination are the same memory does nothing. */
void coll_exec_local(const coll_op_t *op, void *const bufs[COLL_BUF_COUNT],
                     const coll_exec_info_t *x);

/*
 * Applies elements [first, first + n) of an incoming message for a RECV or RECV_REDUCE op: DATA
 * points at those n elements. Transports deliver a message in pieces and call this per piece.
 */
void coll_exec_incoming(const coll_op_t *op, void *const bufs[COLL_BUF_COUNT], const void *data,
                        uint64_t first, uint64_t n, const coll_exec_info_t *x);

/* A pointer to element OFF of buffer BUF. */
static inline void *coll_buf_at(void *const bufs[COLL_BUF_COUNT], unsigned buf, uint64_t off,
                                size_t elem_size)
{
    return (char *)bufs[buf] + off * elem_size;
}

/*
 * Runs the schedules of all N ranks of a group in memory with no communication: messages are
 * copied between ranks in per-pair order, steps advance as their receives become available.
 * BUFS[r] are rank r's IN, OUT and TMP. Returns 0, or -1 with a sentence in WHY when the
 * schedules deadlock, leave a message unreceived, or disagree on a message's size.
 */
int coll_run_local(coll_schedule_t *const *scheds, void *const (*bufs)[COLL_BUF_COUNT], int n,
                   const coll_exec_info_t *x, char *why, unsigned len);

#endif /* COLL_RUN_H */
