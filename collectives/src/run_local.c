/*
 * Running the schedules of a whole group in one process, with no communication: the first tier
 * of testing (schedules checked against references without processes or threads).
 */
#include "coll/run.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct msg {
    struct msg *next;
    uint64_t count;
    unsigned char data[];
} msg_t;

typedef struct {
    msg_t *head, *tail;
} fifo_t;

typedef struct {
    coll_schedule_t *const *scheds;
    void *const (*bufs)[COLL_BUF_COUNT];
    int n;
    const coll_exec_info_t *x;
    fifo_t *fifo; /* fifo[src * n + dst] */
    uint32_t *step;
    char *posted;
    char *why;
    unsigned len;
} run_t;

static int fail(run_t *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (r->why && r->len)
        vsnprintf(r->why, r->len, fmt, ap);
    va_end(ap);
    return -1;
}

static int post_sends(run_t *r, int rank, const coll_step_t *st)
{
    const coll_schedule_t *s = r->scheds[rank];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_SEND)
            continue;
        size_t bytes = op->count * r->x->elem_size;
        msg_t *m = malloc(sizeof *m + bytes);
        if (!m)
            return fail(r, "out of memory");
        m->next = NULL;
        m->count = op->count;
        memcpy(m->data, coll_buf_at(r->bufs[rank], op->buf, op->off, r->x->elem_size), bytes);
        fifo_t *f = &r->fifo[rank * r->n + op->peer];
        if (f->tail)
            f->tail->next = m;
        else
            f->head = m;
        f->tail = m;
    }
    return 0;
}

/* Whether every receive of the step has its message waiting, in per-pair order. */
static int step_ready(run_t *r, int rank, const coll_step_t *st)
{
    const coll_schedule_t *s = r->scheds[rank];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        /* This is the k-th receive from op->peer in the step: k messages must be queued. */
        int k = 0;
        for (uint32_t j = st->first; j <= i; j++)
            k += (s->ops[j].kind == COLL_OP_RECV || s->ops[j].kind == COLL_OP_RECV_REDUCE) &&
                 s->ops[j].peer == op->peer;
        const msg_t *m = r->fifo[op->peer * r->n + rank].head;
        while (m && --k > 0)
            m = m->next;
        if (!m)
            return 0;
    }
    return 1;
}

static int finish_step(run_t *r, int rank, const coll_step_t *st)
{
    const coll_schedule_t *s = r->scheds[rank];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        fifo_t *f = &r->fifo[op->peer * r->n + rank];
        msg_t *m = f->head;
        if (m->count != op->count)
            return fail(r, "rank %d receives %llu elements from rank %d, which sent %llu", rank,
                        (unsigned long long)op->count, op->peer, (unsigned long long)m->count);
        f->head = m->next;
        if (!f->head)
            f->tail = NULL;
        coll_exec_incoming(op, r->bufs[rank], m->data, 0, op->count, r->x);
        free(m);
    }
    for (uint32_t i = st->first; i < st->first + st->count; i++)
        if (s->ops[i].kind > COLL_OP_RECV_REDUCE)
            coll_exec_local(&s->ops[i], r->bufs[rank], r->x);
    return 0;
}

/* One pass over the ranks; returns 1 if any advanced, 0 if none could, -1 on error. */
static int pass(run_t *r)
{
    int progressed = 0;
    for (int rank = 0; rank < r->n; rank++) {
        const coll_schedule_t *s = r->scheds[rank];
        if (r->step[rank] >= s->nsteps)
            continue;
        const coll_step_t *st = &s->steps[r->step[rank]];
        if (!r->posted[rank]) {
            if (post_sends(r, rank, st))
                return -1;
            r->posted[rank] = 1;
            progressed = 1;
        }
        if (!step_ready(r, rank, st))
            continue;
        if (finish_step(r, rank, st))
            return -1;
        r->step[rank]++;
        r->posted[rank] = 0;
        progressed = 1;
    }
    return progressed;
}

/* Frees the messages left over; with REPORT (no earlier error to keep) the first is an error. */
static int drain_check(run_t *r, int report)
{
    int rc = report ? 0 : -1;
    for (int i = 0; i < r->n * r->n; i++) {
        while (r->fifo[i].head) {
            msg_t *m = r->fifo[i].head;
            r->fifo[i].head = m->next;
            if (rc == 0)
                rc = fail(r, "a message from rank %d to rank %d was never received", i / r->n,
                          i % r->n);
            free(m);
        }
    }
    return rc;
}

int coll_run_local(coll_schedule_t *const *scheds, void *const (*bufs)[COLL_BUF_COUNT], int n,
                   const coll_exec_info_t *x, char *why, unsigned len)
{
    run_t r = {scheds, bufs, n, x, NULL, NULL, NULL, why, len};
    r.fifo = calloc((size_t)n * (size_t)n, sizeof *r.fifo);
    r.step = calloc((size_t)n, sizeof *r.step);
    r.posted = calloc((size_t)n, 1);
    int rc = 0;
    if (!r.fifo || !r.step || !r.posted) {
        rc = fail(&r, "out of memory");
        goto out;
    }
    for (;;) {
        int p = pass(&r);
        if (p < 0) {
            rc = -1;
            break;
        }
        if (p == 0)
            break;
    }
    for (int rank = 0; rc == 0 && rank < n; rank++)
        if (r.step[rank] < scheds[rank]->nsteps)
            rc = fail(&r, "deadlock: rank %d is stuck in step %u of %u", rank, r.step[rank],
                      scheds[rank]->nsteps);
    if (drain_check(&r, rc == 0))
        rc = -1;
out:
    free(r.fifo);
    free(r.step);
    free(r.posted);
    return rc;
}
