/* Building, checking and printing schedules; see coll/schedule.h for their semantics. */
#include "coll/schedule.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void coll_schedule_init(coll_schedule_t *s)
{
    memset(s, 0, sizeof *s);
}

void coll_schedule_reset(coll_schedule_t *s)
{
    s->algo = NULL;
    s->rank = s->nranks = 0;
    s->in_count = s->out_count = s->tmp_count = 0;
    s->nsteps = s->nops = 0;
    s->failed = 0;
}

void coll_schedule_free(coll_schedule_t *s)
{
    free(s->steps);
    free(s->ops);
    coll_schedule_init(s);
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t ncap = *cap ? *cap * 2 : 16;
    while (ncap < need)
        ncap *= 2;
    void *q = realloc(*p, (size_t)ncap * elem);
    if (!q)
        return -1;
    *p = q;
    *cap = ncap;
    return 0;
}

void coll_step(coll_schedule_t *s)
{
    if (s->failed)
        return;
    /* An empty step is reused rather than stacked: builders may open steps unconditionally. */
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].count == 0)
        return;
    if (grow((void **)&s->steps, &s->steps_cap, s->nsteps + 1, sizeof *s->steps)) {
        s->failed = 1;
        return;
    }
    s->steps[s->nsteps++] = (coll_step_t){.first = s->nops, .count = 0};
}

static void append(coll_schedule_t *s, coll_op_t op)
{
    if (s->failed)
        return;
    if (op.count == 0 && !(op.flags & COLL_KEEP_EMPTY))
        return;
    if (s->nsteps == 0)
        coll_step(s);
    if (s->failed || grow((void **)&s->ops, &s->ops_cap, s->nops + 1, sizeof *s->ops)) {
        s->failed = 1;
        return;
    }
    op.flags &= (uint8_t)~COLL_KEEP_EMPTY;
    s->ops[s->nops++] = op;
    s->steps[s->nsteps - 1].count++;
}

void coll_send(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, uint64_t count)
{
    append(s,
           (coll_op_t){.kind = COLL_OP_SEND, .buf = buf, .peer = peer, .off = off, .count = count});
}

void coll_recv(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, uint64_t count)
{
    append(s,
           (coll_op_t){.kind = COLL_OP_RECV, .buf = buf, .peer = peer, .off = off, .count = count});
}

void coll_recv_reduce(coll_schedule_t *s, int peer, coll_buf_t buf, uint64_t off, coll_buf_t src,
                      uint64_t src_off, uint64_t count, unsigned flags)
{
    append(s, (coll_op_t){.kind = COLL_OP_RECV_REDUCE,
                          .buf = buf,
                          .src_buf = src,
                          .flags = (uint8_t)flags,
                          .peer = peer,
                          .off = off,
                          .src_off = src_off,
                          .count = count});
}

void coll_copy(coll_schedule_t *s, coll_buf_t buf, uint64_t off, coll_buf_t src, uint64_t src_off,
               uint64_t count)
{
    append(s, (coll_op_t){.kind = COLL_OP_COPY,
                          .buf = buf,
                          .src_buf = src,
                          .peer = -1,
                          .off = off,
                          .src_off = src_off,
                          .count = count});
}

void coll_reduce_op(coll_schedule_t *s, coll_buf_t buf, uint64_t off, coll_buf_t src,
                    uint64_t src_off, uint64_t count, unsigned flags)
{
    append(s, (coll_op_t){.kind = COLL_OP_REDUCE,
                          .buf = buf,
                          .src_buf = src,
                          .flags = (uint8_t)flags,
                          .peer = -1,
                          .off = off,
                          .src_off = src_off,
                          .count = count});
}

void coll_divide_op(coll_schedule_t *s, coll_buf_t buf, uint64_t off, uint64_t count)
{
    append(s,
           (coll_op_t){.kind = COLL_OP_DIVIDE, .buf = buf, .peer = -1, .off = off, .count = count});
}

void coll_send_token(coll_schedule_t *s, int peer)
{
    append(s, (coll_op_t){.kind = COLL_OP_SEND,
                          .buf = COLL_BUF_OUT,
                          .flags = COLL_KEEP_EMPTY,
                          .peer = peer,
                          .off = 0,
                          .count = 0});
}

void coll_recv_token(coll_schedule_t *s, int peer)
{
    append(s, (coll_op_t){.kind = COLL_OP_RECV,
                          .buf = COLL_BUF_OUT,
                          .flags = COLL_KEEP_EMPTY,
                          .peer = peer,
                          .off = 0,
                          .count = 0});
}

int coll_schedule_status(coll_schedule_t *s)
{
    if (s->failed)
        return -ENOMEM;
    if (s->nsteps > 0 && s->steps[s->nsteps - 1].count == 0)
        s->nsteps--;
    return 0;
}

void coll_block(uint64_t count, int n, int i, uint64_t *off, uint64_t *len)
{
    uint64_t base = count / (uint64_t)n, extra = count % (uint64_t)n, ui = (uint64_t)i;
    *off = ui * base + (ui < extra ? ui : extra);
    *len = base + (ui < extra ? 1 : 0);
}
