/*
 * Host-direct collectives: all_reduce, reduce_scatter and all_gather over a group whose ranks
 * all share this host, done straight in memory instead of by messages.
 *
 * all_reduce, per round of the vector (trace for 4 ranks, slices A B C D owned by ranks 0..3):
 *   publish  every rank makes its input readable: in place when all ranks share a process
 *            (peers read the caller's buffer), else copied into its input region of the host
 *            box (one copy, the only one)                                   -- barrier --
 *   reduce   rank r folds slice r of every input, in rank order 0..n-1, and writes it into its
 *            output (one process) or its result region: rank 0 makes A = A0+A1+A2+A3, ...
 *                                                                           -- barrier --
 *   gather   every rank copies the other ranks' slices into its output.
 * Each byte is read n+1 times and written twice, against 2(n-1) copies and reductions of a
 * message ring; all ranks work at once with no chain of dependent steps. Each slice is reduced
 * once, at one rank, in a fixed order: every rank gets the same bits, run after run.
 * reduce_scatter is publish + reduce (rank r's block lands in its output); all_gather is
 * publish + every rank copying every block. Input regions alternate halves between rounds, so a
 * round can be staged while peers still read the previous one; a last barrier keeps a rank's
 * buffers alive until every peer is done with them.
 *
 * Barriers: every IPU has an epoch counter in the host box; arriving increments it and rings
 * the group's doorbells; a rank has passed when every member's epoch has reached its own.
 * Simulated time does not depend on how the host moves the bytes: it replays the schedule of
 * the pod algorithm the automatic choice picks (gcl_sim_replay), from every rank's entry clock.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/reduce.h"
#include "exec.h"
#include "log.h"
#include "request.h"

enum { PUBLISH, WAIT_PUBLISHED, WORK, WAIT_REDUCED, GATHER, WAIT_DONE };
enum { ACC_ELEMS = 4096 }; /* elements folded at a time in a local accumulator */

int gcl_direct_eligible(struct gcl_comm *c, coll_collective_t coll, size_t bytes)
{
    struct gcl_instance *inst = c->ctx->inst;
    if (coll != COLL_ALLREDUCE && coll != COLL_REDUCE_SCATTER && coll != COLL_ALLGATHER)
        return 0;
    if (c->size < 2 || inst->phantom || c == c->ctx->p2p ||
        bytes < (size_t)inst->params.direct_min_bytes)
        return 0;
    int other_process = 0;
    for (int r = 0; r < c->size; r++) {
        if (inst->ipu_hostlocal[c->ipus[r]] < 0)
            return 0;
        other_process |= inst->ipu_instance[c->ipus[r]] != inst->instance_index;
    }
    return !other_process || inst->hb.direct_bytes > 0;
}

static hb_ipu_t *box(const gcl_exec_t *x, int rank)
{
    struct gcl_instance *inst = x->comm->ctx->inst;
    return &inst->hb.ipus[inst->ipu_hostlocal[x->comm->ipus[rank]]];
}

void gcl_direct_setup(gcl_exec_t *x, const coll_algo_t *sim_algo, const coll_args_t *a)
{
    gcl_direct_t *d = &x->direct;
    struct gcl_comm *c = x->comm;
    struct gcl_instance *inst = c->ctx->inst;
    d->on = 1;
    d->coll = a->coll;
    d->count = a->count;
    d->sim_algo = sim_algo;
    d->sim_args = *a;
    d->same_process = 1;
    for (int r = 0; r < c->size; r++)
        d->same_process &= inst->ipu_instance[c->ipus[r]] == inst->instance_index;
    uint64_t half = inst->hb.direct_bytes / 2 / x->info.elem_size;
    uint64_t per = a->coll == COLL_REDUCE_SCATTER ? half / (uint64_t)c->size : half;
    d->per_round = d->same_process || per == 0 || per > a->count ? a->count : per;
    if (d->per_round == 0)
        d->per_round = 1;
    d->nrounds = (a->count + d->per_round - 1) / d->per_round;
    if (d->nrounds == 0)
        d->nrounds = 1;
    d->entry = calloc((size_t)c->size, sizeof *d->entry);
}

/* ---- barrier ---- */

static void arrive(gcl_exec_t *x)
{
    struct gcl_comm *c = x->comm;
    hostbox_t *hb = &c->ctx->inst->hb;
    x->direct.target = atomic_fetch_add(&box(x, c->rank)->epoch, 1) + 1;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            hb_ring(hb, c->ctx->inst->ipu_hostlocal[c->ipus[r]]);
}

static int passed(gcl_exec_t *x)
{
    for (int r = 0; r < x->comm->size; r++)
        if (atomic_load_explicit(&box(x, r)->epoch, memory_order_acquire) < x->direct.target)
            return 0;
    return 1;
}

void gcl_direct_describe_pending(gcl_exec_t *x, char *buf, size_t len)
{
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < x->comm->size && shown < 6; r++) {
        if (atomic_load(&box(x, r)->epoch) >= x->direct.target)
            continue;
        char who[160];
        gcl_describe_ipu(x->comm->ctx->inst, x->comm->ipus[r], who, sizeof who);
        used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
                                 "%s%s to reach the "
                                 "barrier of round %llu",
                                 shown++ ? "; " : "", who, (unsigned long long)x->direct.round);
    }
}

/* ---- the phases ---- */

static uint64_t round_lo(const gcl_exec_t *x)
{
    return x->direct.round * x->direct.per_round;
}

static uint64_t round_len(const gcl_exec_t *x)
{
    uint64_t lo = round_lo(x), end = lo + x->direct.per_round;
    return (end < x->direct.count ? end : x->direct.count) - lo;
}

/* Rank Q's staged input region for the current round (the half the round's parity picks). */
static char *staged(const gcl_exec_t *x, int q, int which)
{
    hostbox_t *hb = &x->comm->ctx->inst->hb;
    char *base = hb_direct(hb, x->comm->ctx->inst->ipu_hostlocal[x->comm->ipus[q]], which);
    return which == 0 ? base + (x->direct.round % 2) * (hb->direct_bytes / 2) : base;
}

/* Where element OFF of block B of rank Q's input is readable during this round. */
static const char *input_at(const gcl_exec_t *x, int q, uint64_t b, uint64_t off)
{
    size_t es = x->info.elem_size;
    if (x->direct.same_process)
        return (const char *)(uintptr_t)atomic_load(&box(x, q)->d_in) +
               (b * x->direct.count + off) * es;
    return staged(x, q, 0) + (b * round_len(x) + off - round_lo(x)) * es;
}

/* DST = fold, in rank order, of block B of every input at elements [off, off + n). */
static void fold(gcl_exec_t *x, char *dst, uint64_t b, uint64_t off, uint64_t n)
{
    size_t es = x->info.elem_size;
    _Alignas(64) char acc[ACC_ELEMS * 8];
    for (uint64_t i = 0; i < n; i += ACC_ELEMS) {
        uint64_t m = n - i < ACC_ELEMS ? n - i : ACC_ELEMS;
        memcpy(acc, input_at(x, 0, b, off + i), m * es);
        for (int q = 1; q < x->comm->size; q++)
            coll_reduce(x->info.dtype, x->info.op, acc, acc, input_at(x, q, b, off + i), m);
        if (x->info.op == COLL_MEAN)
            coll_divide(x->info.dtype, acc, m, (unsigned)x->comm->size);
        memcpy(dst + i * es, acc, m * es);
    }
}

static void publish(gcl_exec_t *x)
{
    hb_ipu_t *me = box(x, x->comm->rank);
    size_t es = x->info.elem_size;
    const char *in = x->bufs[COLL_BUF_IN];
    if (x->direct.round == 0) {
        me->d_sig = x->sig;
        me->d_clock = x->comm->ctx->inst->sim.ipus[x->comm->ctx->local_index].stats.clock;
        atomic_store(&me->d_in, (uint64_t)(uintptr_t)in);
        atomic_store(&me->d_out, (uint64_t)(uintptr_t)x->bufs[COLL_BUF_OUT]);
        atomic_store_explicit(&me->d_key, x->key0, memory_order_release);
    }
    if (!x->direct.same_process) {
        uint64_t lo = round_lo(x), len = round_len(x);
        uint64_t blocks = x->direct.coll == COLL_REDUCE_SCATTER ? (uint64_t)x->comm->size : 1;
        char *dst = staged(x, x->comm->rank, 0);
        for (uint64_t b = 0; b < blocks; b++)
            memcpy(dst + b * len * es, in + (b * x->direct.count + lo) * es, len * es);
    }
    arrive(x);
}

/* After the first barrier: every rank is in this very call, and we learn their clocks. */
static gcl_status_t check_peers(gcl_exec_t *x)
{
    struct gcl_comm *c = x->comm;
    for (int r = 0; r < c->size; r++) {
        hb_ipu_t *p = box(x, r);
        uint64_t key = atomic_load_explicit(&p->d_key, memory_order_acquire);
        if (key != x->key0 || memcmp(&p->d_sig, &x->sig, sizeof x->sig) != 0) {
            char text[600];
            gcl_sig_t theirs = p->d_sig;
            if (key != x->key0) /* another call altogether: say which */
                theirs.seq = (uint32_t)key;
            gcl_mismatch_text(c->ctx->inst, c->ctx->global_ipu, &x->sig, c->ipus[r], &theirs, text,
                              sizeof text);
            return gcl_ctx_fail(c->ctx, GCL_ERR_MISMATCH, "%s", text);
        }
        x->direct.entry[r] = p->d_clock;
    }
    return GCL_OK;
}

static void next_round(gcl_exec_t *x)
{
    if (++x->direct.round < x->direct.nrounds) {
        x->direct.phase = PUBLISH;
        return;
    }
    arrive(x); /* nobody may reuse our buffers or regions before every peer is done */
    x->direct.phase = WAIT_DONE;
}

static void work(gcl_exec_t *x)
{
    struct gcl_comm *c = x->comm;
    size_t es = x->info.elem_size;
    char *out = x->bufs[COLL_BUF_OUT];
    uint64_t lo = round_lo(x), len = round_len(x), off, n;
    if (x->direct.coll == COLL_ALLREDUCE) {
        coll_block(len, c->size, c->rank, &off, &n);
        char *dst =
            x->direct.same_process ? out + (lo + off) * es : staged(x, c->rank, 1) + off * es;
        fold(x, dst, 0, lo + off, n);
        arrive(x);
        x->direct.phase = WAIT_REDUCED;
    } else if (x->direct.coll == COLL_REDUCE_SCATTER) {
        fold(x, out + lo * es, (uint64_t)c->rank, lo, len);
        next_round(x);
    } else { /* all_gather */
        for (int q = 0; q < c->size; q++) {
            char *dst = out + ((uint64_t)q * x->direct.count + lo) * es;
            const char *src = input_at(x, q, 0, lo);
            if (src != dst)
                memcpy(dst, src, len * es);
        }
        next_round(x);
    }
}

static void gather(gcl_exec_t *x)
{
    struct gcl_comm *c = x->comm;
    size_t es = x->info.elem_size;
    char *out = x->bufs[COLL_BUF_OUT];
    uint64_t lo = round_lo(x), len = round_len(x), off, n;
    for (int q = 0; q < c->size; q++) {
        coll_block(len, c->size, q, &off, &n);
        const char *src =
            x->direct.same_process
                ? (const char *)(uintptr_t)atomic_load(&box(x, q)->d_out) + (lo + off) * es
                : staged(x, q, 1) + off * es;
        if (src != out + (lo + off) * es && n > 0)
            memcpy(out + (lo + off) * es, src, n * es);
    }
    next_round(x);
}

int gcl_direct_progress(gcl_exec_t *x)
{
    int did = 0;
    while (!x->done) {
        switch (x->direct.phase) {
        case PUBLISH:
            publish(x);
            x->direct.phase = WAIT_PUBLISHED;
            break;
        case WAIT_PUBLISHED:
            if (!passed(x))
                return did;
            if (x->direct.round == 0) {
                gcl_status_t rc = check_peers(x);
                if (rc != GCL_OK)
                    return rc;
            }
            x->direct.phase = WORK;
            break;
        case WORK:
            work(x);
            break;
        case WAIT_REDUCED:
            if (!passed(x))
                return did;
            x->direct.phase = GATHER;
            break;
        case GATHER:
            gather(x);
            break;
        default: /* WAIT_DONE */
            if (!passed(x))
                return did;
            gcl_sim_replay(x->comm, x->direct.sim_algo, &x->direct.sim_args, x->direct.entry);
            x->done = 1;
            gcl_sim_call_end(x);
            break;
        }
        did = 1;
    }
    return did;
}
