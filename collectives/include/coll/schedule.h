/*
 * Collective schedules: what one rank of a group does, as a list of steps over group-local ranks.
 *
 * An algorithm never knows what carries its bytes. Its builder writes the schedule of one rank;
 * gcl's executor runs it over whatever transport connects each pair of ranks, and coll_run_local
 * (coll/run.h) runs the schedules of a whole group in memory with no communication at all.
 *
 * Buffers are named, not addressed: IN (the caller's input), OUT (the caller's output; it may be
 * the same memory as IN for an in-place call) and TMP (scratch of tmp_count elements that the
 * executor provides). Offsets and counts are in elements.
 *
 * Semantics of a step:
 *   1. Its SEND and RECV ops are posted together and complete in any order. A send reads its range
 *      as it is when the step starts, so no op of the same step may write a range a send reads.
 *   2. When all of them have completed, its local ops (COPY, REDUCE, DIVIDE) run in list order.
 *   3. Then the next step starts.
 * Matching: the i-th SEND from rank p to rank q (counted over the whole schedule, in step and list
 * order) is received by the i-th RECV or RECV_REDUCE at q from p, which must name the same count.
 * Steps need not line up between ranks; only that per-pair order matters.
 */
#ifndef COLL_SCHEDULE_H
#define COLL_SCHEDULE_H

#include <stdint.h>
#include <stdio.h>

#include "coll/types.h"

typedef enum { COLL_BUF_IN = 0, COLL_BUF_OUT = 1, COLL_BUF_TMP = 2, COLL_BUF_COUNT } coll_buf_t;

typedef enum {
    COLL_OP_SEND,        /* send buf[off, off+count) to peer */
    COLL_OP_RECV,        /* receive count elements from peer into buf[off..] */
    COLL_OP_RECV_REDUCE, /* buf[off..] = src_buf[src_off..] OP incoming (flag: incoming OP src) */
    COLL_OP_COPY,        /* buf[off..] = src_buf[src_off..] */
    COLL_OP_REDUCE,      /* buf[off..] = buf[off..] OP src_buf[src_off..] (flag: src OP buf) */
    COLL_OP_DIVIDE,      /* buf[off..] /= group size: finishes a MEAN */
} coll_op_kind_t;

/* For RECV_REDUCE: the incoming data is the left operand. For REDUCE: src is the left operand.
 * Floating-point min/max with signed zeros and NaN payloads are not commutative bit for bit, so
 * algorithms that want every rank to compute the same bits fix the operand order with this. */
#define COLL_OPF_SWAP 1u

typedef struct {
    uint8_t kind;    /* coll_op_kind_t */
    uint8_t buf;     /* SEND: the buffer read; every other op: the buffer written */
    uint8_t src_buf; /* RECV_REDUCE, COPY, REDUCE: the local operand read */
    uint8_t flags;   /* COLL_OPF_* */
    int32_t peer;    /* SEND, RECV, RECV_REDUCE: group rank of the peer */
    uint64_t off;
    uint64_t src_off;
    uint64_t count;
} coll_op_t;

typedef struct {
    uint32_t first; /* index of the step's first op in ops[] */
    uint32_t count; /* ops in the step */
} coll_step_t;

typedef struct {
    const char *algo; /* name of the algorithm that built it (static string) */
    int rank, nranks;
    uint64_t in_count, out_count, tmp_count; /* elements each buffer must hold */
    /* Where IN and OUT sit in one shared range when a call is in place: IN[i] is the element at
     * in_alias + i and OUT[i] the one at out_alias + i. all_reduce: 0 and 0; all_gather: IN is
     * this rank's block of OUT; reduce_scatter: OUT is this rank's block of IN. */
    uint64_t in_alias, out_alias;
    coll_step_t *steps;
    coll_op_t *ops;
    uint32_t nsteps, nops;
    uint32_t steps_cap, ops_cap;
    int failed; /* sticky: an append ran out of memory */
} coll_schedule_t;

void coll_schedule_init(coll_schedule_t *s);
/* Empties S for reuse, keeping its memory. */
void coll_schedule_reset(coll_schedule_t *s);
void coll_schedule_free(coll_schedule_t *s);

/*
 * Builders append with these. They never fail outright: on allocation failure they set s->failed
 * and do nothing, so a builder checks once at the end (coll_schedule_status). Ops with a count of
 * zero are dropped, except sends and receives with COLL_KEEP_EMPTY in their flags (a barrier's
 * zero-byte tokens).
 */
#define COLL_KEEP_EMPTY 0x80u
void coll_step(coll_schedule_t *s);
void coll_send(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, uint64_t count);
void coll_recv(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, uint64_t count);
void coll_recv_reduce(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, coll_buf_t src,
                      uint64_t src_off, uint64_t count, unsigned flags);
void coll_copy(coll_schedule_t *s, coll_buf_t buf, uint64_t off, coll_buf_t src, uint64_t src_off,
               uint64_t count);
void coll_reduce_op(coll_schedule_t *s, coll_buf_t buf, uint64_t off, coll_buf_t src,
                    uint64_t src_off, uint64_t count, unsigned flags);
void coll_divide_op(coll_schedule_t *s, coll_buf_t buf, uint64_t off, uint64_t count);
/* A zero-element message that is kept (a barrier's token): SEND and RECV of OUT[0, +0). */
void coll_send_token(coll_schedule_t *s, int peer);
void coll_recv_token(coll_schedule_t *s, int peer);
/* 0, or -ENOMEM when an append failed. Also drops a trailing empty step. */
int coll_schedule_status(coll_schedule_t *s);

/* Splits COUNT elements into N nearly equal blocks (the first COUNT % N get one more) and gives
 * block I's offset and length. */
void coll_block(uint64_t count, int n, int i, uint64_t *off, uint64_t *len);

/*
 * Checks the rules above that one schedule can break on its own: ranges inside their buffers,
 * peers in range and not the rank itself, no op writing what a send of its step reads (a COPY
 * onto its own source range is allowed: it writes nothing when the call is in place), no two
 * receives of a step writing overlapping ranges, and no op writing IN (the caller's input;
 * in-place calls write it through OUT). IN and OUT are checked as if the call were in place.
 * Returns 0, or -1 with a sentence in WHY.
 */
int coll_schedule_validate(const coll_schedule_t *s, char *why, unsigned len);

/* Prints the schedule, one op per line, for debugging and algorithm documentation. */
void coll_schedule_print(const coll_schedule_t *s, FILE *out);

#endif /* COLL_SCHEDULE_H */
