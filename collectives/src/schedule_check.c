/* Checking a schedule against the rules of coll/schedule.h, and printing it. */
#include "coll/schedule.h"

#include <stdarg.h>
#include <stdio.h>

/* A range in one address space: IN and OUT share space 0 (a call may be in place), TMP is 1. */
typedef struct {
    int space;
    uint64_t lo, hi;
} range_t;

static const char *const buf_names[COLL_BUF_COUNT] = {"IN", "OUT", "TMP"};
static const char *const kind_names[] = {"SEND", "RECV", "RECV_REDUCE", "COPY", "REDUCE", "DIVIDE"};

static int fail(char *why, unsigned len, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (why && len)
        vsnprintf(why, len, fmt, ap);
    va_end(ap);
    return -1;
}

static uint64_t buf_count(const coll_schedule_t *s, unsigned buf)
{
    return buf == COLL_BUF_IN ? s->in_count : buf == COLL_BUF_OUT ? s->out_count : s->tmp_count;
}

static range_t to_range(const coll_schedule_t *s, unsigned buf, uint64_t off, uint64_t count)
{
    range_t r = {buf == COLL_BUF_TMP, off, off + count};
    uint64_t base = buf == COLL_BUF_IN ? s->in_alias : buf == COLL_BUF_OUT ? s->out_alias : 0;
    r.lo += base;
    r.hi += base;
    return r;
}

static int overlap(range_t a, range_t b)
{
    return a.space == b.space && a.lo < b.hi && b.lo < a.hi;
}

static int same(range_t a, range_t b)
{
    return a.space == b.space && a.lo == b.lo && a.hi == b.hi;
}

static int check_op(const coll_schedule_t *s, const coll_op_t *op, uint32_t i, char *why,
                    unsigned len)
{
    if (op->kind > COLL_OP_DIVIDE || op->buf >= COLL_BUF_COUNT || op->src_buf >= COLL_BUF_COUNT)
        return fail(why, len, "op %u: bad kind or buffer", i);
    if (op->off + op->count > buf_count(s, op->buf))
        return fail(why, len, "op %u (%s): %s[%llu, %llu) is outside the buffer of %llu", i,
                    kind_names[op->kind], buf_names[op->buf], (unsigned long long)op->off,
                    (unsigned long long)(op->off + op->count),
                    (unsigned long long)buf_count(s, op->buf));
    int has_src =
        op->kind == COLL_OP_RECV_REDUCE || op->kind == COLL_OP_COPY || op->kind == COLL_OP_REDUCE;
    if (has_src && op->src_off + op->count > buf_count(s, op->src_buf))
        return fail(why, len, "op %u (%s): source %s[%llu, +%llu) is outside its buffer", i,
                    kind_names[op->kind], buf_names[op->src_buf], (unsigned long long)op->src_off,
                    (unsigned long long)op->count);
    int comm = op->kind <= COLL_OP_RECV_REDUCE;
    if (comm && (op->peer < 0 || op->peer >= s->nranks || op->peer == s->rank))
        return fail(why, len, "op %u (%s): peer %d is not another rank of %d", i,
                    kind_names[op->kind], op->peer, s->nranks);
    if (op->kind != COLL_OP_SEND && op->buf == COLL_BUF_IN && op->count > 0)
        return fail(why, len, "op %u (%s) writes IN, the caller's input", i, kind_names[op->kind]);
    return 0;
}

/* Whether a local op writes nothing that a send of its step may still be reading: a COPY onto
 * its own source range (in place it is a no-op; out of place it writes other memory). */
static int local_writes(const coll_schedule_t *s, const coll_op_t *op)
{
    return !(op->kind == COLL_OP_COPY && same(to_range(s, op->buf, op->off, op->count),
                                              to_range(s, op->src_buf, op->src_off, op->count)));
}

/* Within one step: no local op (they run after the step's traffic) writes what a send of the
 * step reads, because a transport may read a send's memory until the receiver has consumed it. */
static int check_step_local(const coll_schedule_t *s, uint32_t st, char *why, unsigned len)
{
    const coll_step_t *step = &s->steps[st];
    for (uint32_t a = step->first; a < step->first + step->count; a++) {
        const coll_op_t *w = &s->ops[a];
        if (w->kind <= COLL_OP_RECV_REDUCE || !local_writes(s, w))
            continue;
        range_t wr = to_range(s, w->buf, w->off, w->count);
        for (uint32_t b = step->first; b < step->first + step->count; b++) {
            const coll_op_t *o = &s->ops[b];
            if (o->kind == COLL_OP_SEND && overlap(wr, to_range(s, o->buf, o->off, o->count)))
                return fail(why, len, "step %u: op %u (%s) writes what send op %u reads", st, a,
                            kind_names[w->kind], b);
        }
    }
    return 0;
}

/* Within one step: no receive writes what a send reads, what another receive writes, or what a
 * RECV_REDUCE reads as its local operand (other than its own accumulator). */
static int check_step(const coll_schedule_t *s, uint32_t st, char *why, unsigned len)
{
    const coll_step_t *step = &s->steps[st];
    for (uint32_t a = step->first; a < step->first + step->count; a++) {
        const coll_op_t *w = &s->ops[a];
        if (w->kind != COLL_OP_RECV && w->kind != COLL_OP_RECV_REDUCE)
            continue;
        range_t wr = to_range(s, w->buf, w->off, w->count);
        if (w->kind == COLL_OP_RECV_REDUCE) {
            range_t own = to_range(s, w->src_buf, w->src_off, w->count);
            if (overlap(wr, own) && !same(wr, own))
                return fail(why, len, "step %u op %u: RECV_REDUCE partly overlaps its operand", st,
                            a);
        }
        for (uint32_t b = step->first; b < step->first + step->count; b++) {
            const coll_op_t *o = &s->ops[b];
            if (b == a || o->kind > COLL_OP_RECV_REDUCE)
                continue;
            /* A send reads o->buf; a receive writes it: either way, w must not touch it. */
            if (overlap(wr, to_range(s, o->buf, o->off, o->count)))
                return fail(why, len, "step %u: op %u (%s) writes what op %u (%s) touches", st, a,
                            kind_names[w->kind], b, kind_names[o->kind]);
            if (o->kind == COLL_OP_RECV_REDUCE &&
                overlap(wr, to_range(s, o->src_buf, o->src_off, o->count)))
                return fail(why, len, "step %u: op %u writes the operand of op %u", st, a, b);
        }
    }
    return 0;
}

int coll_schedule_validate(const coll_schedule_t *s, char *why, unsigned len)
{
    if (s->failed)
        return fail(why, len, "the schedule ran out of memory while being built");
    if (s->nranks < 1 || s->rank < 0 || s->rank >= s->nranks)
        return fail(why, len, "rank %d of %d is out of range", s->rank, s->nranks);
    for (uint32_t st = 0; st < s->nsteps; st++) {
        const coll_step_t *step = &s->steps[st];
        if (step->first + step->count > s->nops)
            return fail(why, len, "step %u runs past the op list", st);
        for (uint32_t i = step->first; i < step->first + step->count; i++)
            if (check_op(s, &s->ops[i], i, why, len))
                return -1;
        if (check_step(s, st, why, len) || check_step_local(s, st, why, len))
            return -1;
    }
    return 0;
}

void coll_schedule_print(const coll_schedule_t *s, FILE *out)
{
    fprintf(out, "schedule %s: rank %d of %d, IN %llu OUT %llu TMP %llu elements, %u steps\n",
            s->algo ? s->algo : "?", s->rank, s->nranks, (unsigned long long)s->in_count,
            (unsigned long long)s->out_count, (unsigned long long)s->tmp_count, s->nsteps);
    for (uint32_t st = 0; st < s->nsteps; st++) {
        for (uint32_t i = 0; i < s->steps[st].count; i++) {
            const coll_op_t *op = &s->ops[s->steps[st].first + i];
            fprintf(out, "  step %u: %-11s %s[%llu +%llu]", st, kind_names[op->kind],
                    buf_names[op->buf], (unsigned long long)op->off, (unsigned long long)op->count);
            if (op->kind == COLL_OP_RECV_REDUCE || op->kind == COLL_OP_COPY ||
                op->kind == COLL_OP_REDUCE)
                fprintf(out, " src %s[%llu]%s", buf_names[op->src_buf],
                        (unsigned long long)op->src_off, op->flags & COLL_OPF_SWAP ? " swap" : "");
            if (op->kind <= COLL_OP_RECV_REDUCE)
                fprintf(out, " peer %d", op->peer);
            fputc('\n', out);
        }
    }
}
