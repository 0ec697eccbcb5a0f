/*
 * Host-direct collectives: all_reduce, reduce_scatter and all_gather over a group whose ranks
 * all share this host, done straight in memory instead of by messages. Declared in
 * engine/engines.h.
 *
 * A rank reaches its peers' buffers in one of three ways, the same for the whole group:
 *   pointer  every rank is in this process: plain loads and stores;
 *   cma      the ranks are in several processes that may read and write each other's memory
 *            (mapped once when the buffer came from gcl_ipu_malloc, else process_vm_readv /
 *            process_vm_writev: one kernel copy, no staging);
 *   staged   otherwise: each rank copies its input into its region of the host box.
 *
 * all_reduce with pointer or cma (trace for 4 ranks, slices A B C D owned by ranks 0..3):
 *   publish  every rank publishes where its input and output are       -- barrier --
 *   work     rank r folds slice r of every input along the canonical tree (coll/canon.h:
 *            rank 0 makes A = (A0+A1)+(A2+A3)) and writes it straight into slice r of every
 *            rank's output                                             -- barrier --
 * Each input byte is read once and each output byte written once: the traffic of one copy of
 * the data per rank, against 2(n-1) copies and reductions of a message ring; all ranks work at
 * once with no chain of dependent steps. With staging, per round of the vector: publish (copy
 * the input in) / barrier / fold slice r into the result region / barrier / gather every slice.
 * reduce_scatter is publish + fold of block r into the rank's own output; all_gather is
 * publish + every rank reading every block. Every element is folded along the canonical tree,
 * as the canonical order's messages fold it on any other path: the same bits on one process,
 * several, or several hosts. A last barrier keeps a rank's buffers alive until every peer is
 * done with them.
 *
 * Barriers: every IPU has an epoch counter in the host box; arriving increments it and rings
 * the group's doorbells; a rank has passed when every member's epoch has reached its own.
 * Simulated time does not depend on how the host moves the bytes: the call learns every rank's
 * entry clock at the first barrier and replays the pod algorithm's timeline from them
 * (simtime.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/canon.h"
#include "engine/engines.h"
#include "engine/direct_move.h"
#include "engine/simtime.h"
#include "base/alloc.h"
#include "base/log.h"

enum { PUBLISH, WAIT_PUBLISHED, WORK, WAIT_REDUCED, GATHER, WAIT_DONE };

int gcl_direct_eligible(const gcl_peers_t *c, coll_collective_t coll, size_t bytes)
{
    const gcl_ipu_t *me = c->ipu;
    if (coll != COLL_ALLREDUCE && coll != COLL_REDUCE_SCATTER && coll != COLL_ALLGATHER)
        return 0;
    if (c->size < 2 || me->phantom || c->p2p || !c->one_host ||
        bytes < (size_t)me->params->direct_min_bytes)
        return 0;
    return c->one_process || me->host->cma || me->host->hb.direct_bytes > 0;
}

gcl_status_t gcl_direct_setup(gcl_exec_t *x, const coll_args_t *a)
{
    gcl_direct_t *d = &x->direct;
    gcl_peers_t *c = x->peers;
    const gcl_ipu_t *me = c->ipu;
    x->engine = &gcl_engine_direct;
    d->coll = a->coll;
    d->count = a->count;
    d->mode = c->one_process  ? GCL_DIRECT_POINTER
              : me->host->cma ? GCL_DIRECT_CMA
                              : GCL_DIRECT_STAGED;
    /* Staging moves the vector in rounds that fit half a region; the others in one go. */
    uint64_t half = me->host->hb.direct_bytes / 2 / x->info.elem_size;
    uint64_t per = a->coll == COLL_REDUCE_SCATTER ? half / (uint64_t)c->size : half;
    d->per_round = d->mode != GCL_DIRECT_STAGED || per == 0 || per > a->count ? a->count : per;
    if (d->per_round == 0)
        d->per_round = 1;
    d->nrounds = (a->count + d->per_round - 1) / d->per_round;
    if (d->nrounds == 0)
        d->nrounds = 1;
    d->in_at = gcl_calloc(2 * (size_t)c->size, sizeof *d->in_at);
    d->out_at = d->in_at ? d->in_at + c->size : NULL;
    d->leaves = gcl_calloc((size_t)c->size, sizeof *d->leaves);
    d->acc = gcl_malloc(gcl_direct_acc_bytes(x));
    if (!d->in_at || !d->leaves || !d->acc)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", x->what);
    return GCL_OK;
}

/* ---- barrier ---- */

static int at_barrier(const gcl_exec_t *x, int r)
{
    return atomic_load_explicit(&gcl_direct_box(x, r)->epoch, memory_order_acquire) >=
           x->direct.target;
}

static int passed(const gcl_exec_t *x)
{
    for (int r = 0; r < x->peers->size; r++)
        if (!at_barrier(x, r))
            return 0;
    return 1;
}

/* Arrives at the next barrier. Only the rank whose arrival completes it wakes the others: waking
 * every sleeper at every arrival would cost n^2 context switches on an oversubscribed host. The
 * arrivals are sequentially consistent, so the last of them sees every other one. */
static void arrive(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    const gcl_ipu_t *me = c->ipu;
    x->direct.target = atomic_fetch_add(&gcl_direct_box(x, c->rank)->epoch, 1) + 1;
    if (!passed(x))
        return;
    for (int r = 0; r < c->size; r++)
        if (r != c->rank)
            gcl_hostbox_notify(&me->host->hb, me->job->ipu_hostlocal[c->ipus[r]]);
}

/* ---- the protocol ---- */

static void publish(gcl_exec_t *x)
{
    gcl_hostbox_ipu_t *me = gcl_direct_box(x, x->peers->rank);
    size_t es = x->info.elem_size;
    const char *in = x->bufs[COLL_BUF_IN];
    if (x->direct.round == 0) {
        me->d_sig = x->sig;
        me->d_clock = x->sim.entry[x->peers->rank];
        atomic_store(&me->d_in, (uint64_t)(uintptr_t)in);
        atomic_store(&me->d_out, (uint64_t)(uintptr_t)x->bufs[COLL_BUF_OUT]);
        if (x->direct.mode == GCL_DIRECT_CMA) { /* peers may map these instead */
            gcl_shmem_find(in, &me->d_in_ref);
            gcl_shmem_find(x->bufs[COLL_BUF_OUT], &me->d_out_ref);
        }
        atomic_store_explicit(&me->d_key, x->key0, memory_order_release);
    }
    if (x->direct.mode == GCL_DIRECT_STAGED) {
        uint64_t lo = x->direct.round * x->direct.per_round, len = gcl_direct_round_len(x);
        uint64_t blocks = x->direct.coll == COLL_REDUCE_SCATTER ? (uint64_t)x->peers->size : 1;
        char *dst = gcl_direct_region(x, x->peers->rank, 0);
        for (uint64_t b = 0; b < blocks; b++)
            memcpy(dst + b * len * es, in + (b * x->direct.count + lo) * es, len * es);
    }
    arrive(x);
}

/* After the first barrier: every rank is in this very call, and we learn their clocks. */
static gcl_status_t check_peers(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    for (int r = 0; r < c->size; r++) {
        gcl_hostbox_ipu_t *p = gcl_direct_box(x, r);
        uint64_t key = atomic_load_explicit(&p->d_key, memory_order_acquire);
        if (key != x->key0 || memcmp(&p->d_sig, &x->sig, sizeof x->sig) != 0) {
            char text[600];
            gcl_sig_t theirs = p->d_sig;
            if (key != x->key0) /* another call altogether: say which */
                theirs.seq = (uint32_t)key;
            gcl_diag_mismatch_text(c->ipu->job, c->ipu->global_ipu, &x->sig, c->ipus[r], &theirs,
                                   text, sizeof text);
            return gcl_err_set(x->err, GCL_ERR_MISMATCH, "%s", text);
        }
        x->sim.entry[r] = p->d_clock;
        x->sim.seen[r] = 1;
    }
    gcl_direct_map_peers(x);
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

/* One phase; returns 1 when it moved on, 0 when it waits at a barrier, or a status. */
static int step(gcl_exec_t *x)
{
    gcl_direct_t *d = &x->direct;
    switch (d->phase) {
    case PUBLISH:
        publish(x);
        d->phase = WAIT_PUBLISHED;
        return 1;
    case WAIT_PUBLISHED:
        if (!passed(x))
            return 0;
        if (d->round == 0)
            GCL_CHECK(check_peers(x));
        d->phase = WORK;
        return 1;
    case WORK:
        GCL_CHECK(gcl_direct_work(x));
        if (d->mode == GCL_DIRECT_STAGED && d->coll == COLL_ALLREDUCE) {
            arrive(x); /* every slice must be in the result regions before the gather */
            d->phase = WAIT_REDUCED;
        } else {
            next_round(x);
        }
        return 1;
    case WAIT_REDUCED:
        if (!passed(x))
            return 0;
        d->phase = GATHER;
        return 1;
    case GATHER:
        gcl_direct_gather(x);
        next_round(x);
        return 1;
    default: /* WAIT_DONE */
        if (!passed(x))
            return 0;
        GCL_CHECK(gcl_sim_call_end(x));
        x->done = 1;
        return 1;
    }
}

static int direct_progress(gcl_exec_t *x)
{
    int did = 0;
    while (!x->done) {
        int rc = step(x);
        if (rc < 0)
            return rc;
        if (rc == 0)
            return did;
        did = 1;
    }
    return did;
}

static int direct_waiting(const gcl_exec_t *x, int *ipus, int max)
{
    int n = 0;
    for (int r = 0; r < x->peers->size && n < max; r++)
        if (r != x->peers->rank && !at_barrier(x, r))
            ipus[n++] = x->peers->ipus[r];
    return n;
}

static int direct_gone(gcl_exec_t *x, int *ipu, char *why, size_t len)
{
    const gcl_ipu_t *me = x->peers->ipu;
    for (int r = 0; r < x->peers->size; r++)
        if (!at_barrier(x, r) &&
            gcl_diag_peer_gone(me->job, &me->host->hb, me->gen, x->peers->ipus[r], why, len)) {
            *ipu = x->peers->ipus[r];
            return 1;
        }
    return 0;
}

static void direct_pending(gcl_exec_t *x, char *buf, size_t len)
{
    size_t used = 0;
    int shown = 0;
    buf[0] = '\0';
    for (int r = 0; r < x->peers->size && shown < 6; r++) {
        if (at_barrier(x, r))
            continue;
        char who[160];
        gcl_job_describe_ipu(x->peers->ipu->job, x->peers->ipus[r], who, sizeof who);
        if (x->direct.round >= x->direct.nrounds)
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
                                     "%s%s to reach the closing barrier", shown++ ? "; " : "", who);
        else
            used += (size_t)snprintf(buf + used, used < len ? len - used : 0,
                                     "%s%s to reach the barrier of round %llu", shown++ ? "; " : "",
                                     who, (unsigned long long)x->direct.round + 1);
    }
}

static void direct_where(const gcl_exec_t *x, char *buf, size_t len)
{
    /* Past the last round a call waits only at its closing barrier. */
    if (x->direct.round >= x->direct.nrounds)
        snprintf(buf, len, "host-direct, after its last round of %llu",
                 (unsigned long long)x->direct.nrounds);
    else
        snprintf(buf, len, "host-direct round %llu of %llu",
                 (unsigned long long)x->direct.round + 1, (unsigned long long)x->direct.nrounds);
}

static int direct_polls(const gcl_exec_t *x)
{
    (void)x;
    return 0; /* every arrival rings */
}

const gcl_engine_t gcl_engine_direct = {
    .name = "direct",
    .progress = direct_progress,
    .gone = direct_gone,
    .waiting = direct_waiting,
    .pending = direct_pending,
    .where = direct_where,
    .polls = direct_polls,
};
