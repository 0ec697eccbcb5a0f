/*
 * Eager collectives: a small blocking all_reduce, broadcast or barrier over a group whose ranks
 * all share this host is one exchange through the host box's eager cells (job/hostbox.h), with
 * no message slots, staging chunks or steps. Declared in engine/engines.h.
 *
 * Trace for 4 ranks, all_reduce of x0..x3 (each a few bytes to GCL_EAGER_MAX_BYTES):
 *   claim    rank r takes one of its cells whose last call every reader has acked
 *   publish  rank r writes its entry clock, the call's signature and x_r into the cell, then
 *            the call's key (release); it notifies the peers that sleep (gcl_doorbell_notify)
 *   gather   rank r polls the peers' cells for the key; each one found is checked against its
 *            own signature (a mismatch names both sides) and its clock learnt
 *   fold     rank r folds the four cells along the canonical tree, (x0 + x1) + (x2 + x3)
 *            (coll/canon.h), straight into its output; checks that no key moved meanwhile
 *   ack      rank r writes the key into its word of each peer's cell: the peer may reuse it
 *            (a peer that has seen every rank enter a later call of the group does not read
 *            the acks: the ranks read this call before they published that one)
 * broadcast: only the root's cell carries data, which every other rank copies out; barrier:
 * cells without data. A broadcast returns early (exec.h, returned): the root right after it
 * publishes, a reader as soon as it has copied the root's cell, before it publishes its own;
 * gathering the rest, acking and the simulated time are done when the IPU settles its parked
 * call (engine/request.h), at its next call. Every rank reads every cell, so every rank also learns
 * every entry clock: the call's simulated time is the pod algorithm's, replayed from them
 * (simtime.c), the same to the picosecond as if that algorithm's messages had run.
 *
 * A barrier on a crowded host (more IPU threads than cores, gcl_host_t): rank 0 publishes only
 * once it has found every other rank's cell, and says so in its cell's first data byte; the
 * others return as soon as they find rank 0's cell (the rest is settled as a broadcast's is).
 * So rank 0 leaves the barrier first, as from OpenMPI's linear barrier. Where waiting threads
 * give their cores away, the order the ranks leave in decides whether the next call waits for a
 * context switch: a broadcast from rank 0 right after a barrier otherwise found its readers
 * running and its root not, 10-15 us a switch here. Where every thread has a core, every rank
 * publishes at once and leaves on the last cell (one round, not two).
 *
 * Cost: each rank writes one cell and reads n - 1, each (16 + bytes) / 64 cache lines moved
 * between cores once, plus n - 1 ack words; all ranks work at once, in one round. Against the
 * message path (a slot, a staging chunk, a free-chunk mask and a doorbell written per message,
 * and a step of the schedule's bookkeeping around them) it moves a third of the cache lines and
 * no atomic read-modify-write of a line another core polls. Each rank reads n x bytes, so the
 * cells stop at GCL_EAGER_MAX_BYTES, where host-direct (one slice per rank) takes over.
 * Limits: groups of 2 to 64 ranks on one host whose transports are local and shm (not where
 * GCL_TRANSPORT=ofi or mpi carries the host's messages), blocking calls (a request may outlive the
 * call order that makes reuse safe), the automatic choice (a forced algorithm runs its schedule).
 */
#include "engine/engines.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#endif

#include "base/alloc.h"
#include "base/fault.h"
#include "coll/canon.h"
#include "coll/reduce.h"
#include "engine/simtime.h"

/* ROOT: a broadcast's reader looks for the root's cell before it publishes its own; FANIN: a
 * barrier's first rank looks for every other rank's cell before it publishes its own. */
enum { CLAIM, GATHER, DONE, ROOT, FANIN };

/* The rank whose cell lets the others return: a broadcast's root, a barrier's first rank. */
static int lead(const gcl_exec_t *x)
{
    return x->sig.coll == COLL_BROADCAST ? x->sig.root : 0;
}

int gcl_eager_eligible(const gcl_peers_t *c, coll_collective_t coll, size_t bytes)
{
    const gcl_ipu_t *me = c->ipu;
    const gcl_hostbox_t *hb = &me->host->hb;
    if (coll != COLL_ALLREDUCE && coll != COLL_BROADCAST && coll != COLL_BARRIER)
        return 0;
    if (c->size < 2 || c->size > GCL_EAGER_MAX_RANKS || me->phantom || c->p2p || !c->one_host)
        return 0;
    /* It stands in for the host's own transports: not where GCL_TRANSPORT sends the host's
     * messages over the network backends. */
    for (int q = 0; q < c->size; q++)
        if (q != c->rank && c->tp[q] != &gcl_transport_local && c->tp[q] != &gcl_transport_shm)
            return 0;
    /* The host box's size, not this process's setting: the same answer on every instance. */
    return hb->eager_bytes > 0 && bytes <= hb->eager_bytes;
}

static gcl_hostbox_t *box_of(const gcl_peers_t *c)
{
    return &c->ipu->host->hb;
}

static int local_of(const gcl_peers_t *c, int rank)
{
    return c->ipu->job->ipu_hostlocal[c->ipus[rank]];
}

/* Rank RANK's cell I of PEERS. */
static gcl_eager_head_t *cell_of(const gcl_peers_t *c, int rank, int i)
{
    return gcl_hostbox_eager(box_of(c), local_of(c, rank), i);
}

static gcl_hostbox_t *box(const gcl_exec_t *x)
{
    return box_of(x->peers);
}

static int hostlocal(const gcl_exec_t *x, int rank)
{
    return local_of(x->peers, rank);
}

static gcl_eager_head_t *cell(const gcl_exec_t *x, int rank, int i)
{
    return cell_of(x->peers, rank, i);
}

/* Bytes of data rank Q's cell of the call carries. */
static size_t payload(const gcl_exec_t *x, int q)
{
    coll_collective_t coll = (coll_collective_t)x->sig.coll;
    if (coll == COLL_BARRIER || (coll == COLL_BROADCAST && q != x->sig.root))
        return 0;
    return x->sig.count * x->info.elem_size;
}

gcl_status_t gcl_eager_setup(gcl_exec_t *x)
{
    gcl_eager_t *e = &x->eager;
    x->engine = &gcl_engine_eager;
    memset(e, 0, sizeof *e);
    e->cell = -1;
    memset(e->at, -1, sizeof e->at);
    if (x->sig.coll == COLL_BROADCAST && x->sig.root != x->peers->rank)
        e->phase = ROOT;
    if (x->sig.coll == COLL_BARRIER && x->peers->rank == 0 && x->peers->ipu->host->crowded)
        e->phase = FANIN;
    int n = x->peers->size;
    size_t need = (size_t)coll_canon_depth(n) * x->sig.count * x->info.elem_size;
    gcl_group_scratch_t *g = x->lent;
    if (x->sig.coll != COLL_ALLREDUCE || n <= 2 || !g || g->fold_cap >= need)
        return g ? GCL_OK
                 : gcl_err_set(x->err, GCL_ERR_INTERNAL, "%s: eager but not blocking", x->what);
    void *f = gcl_realloc(g->fold, need);
    if (!f)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", x->what);
    g->fold = f;
    g->fold_cap = need;
    return GCL_OK;
}

/* Whether the group has read a call of its own, KEY: every rank of it has since published a
 * later call of the group. A rank publishes a call only once it has read every cell of its
 * calls before (a parked broadcast is settled first), and the release of that publication
 * orders those reads before it: so the cell is free without a look at its acks, lines the
 * readers write (an 8-byte all_reduce on 2 ranks then moves two lines a call, not four). */
static int read_by_all(const gcl_peers_t *c, uint64_t key)
{
    uint64_t seen = c->eager_seen;
    uint32_t later = (uint32_t)seen - (uint32_t)key; /* sequence numbers wrap */
    return seen != 0 && (seen >> 32) == (key >> 32) && later != 0 && later < (1u << 31);
}

/* Whether reader Q of a call KEY that we published in run GEN is done with it: it acked it, or
 * its IPU has left that run (a later run started, or it returned from or failed this one: its
 * calls of the run are all read or abandoned, and an abandoned call acks what it found). */
static int reader_done(const gcl_peers_t *c, const gcl_eager_owner_t *o,
                       const _Atomic uint64_t *ack, int q, uint64_t key)
{
    if (atomic_load_explicit(&ack[q], memory_order_acquire) == key)
        return 1;
    int32_t g = o->readers[q];
    if (g < 0 || g >= c->ipu->job->num_ipus)
        return 1; /* not an IPU of this job's layout: a cell of an earlier membership's */
    int hl = c->ipu->job->ipu_hostlocal[g];
    if (hl < 0)
        return 1; /* on another host: never a reader of a cell here */
    const gcl_hostbox_ipu_t *r = &box_of(c)->ipus[hl];
    uint64_t life = gcl_hostbox_life(r);
    uint32_t gen = gcl_life_gen(life), state = gcl_life_state(life);
    return (int32_t)(gen - o->run_gen) > 0 || (gen == o->run_gen && state != GCL_IPU_RUNNING);
}

/* Whether every reader of our cell I's call has read it. A call we published there in this run
 * (gcl_ipu_t.eager_key) may be known read without a shared line (read_by_all); otherwise its
 * acks are read (the cell's head line was the third line a 2-rank call moved). A cell we have
 * not used in this run may still hold a call of an earlier gcl_run that a slower reader, on
 * another instance, is still reading: runs do not wait for each other, so it is free only once
 * each reader acked it or left that run (the second of 30 one-call runs in a row on 4 instances
 * reused a cell a peer still read: "a peer's eager cell was reused while it was read"). */
static int cell_free(const gcl_peers_t *c, int i)
{
    uint64_t key = c->ipu->eager_key[i];
    if (key != 0 && read_by_all(c, key))
        return 1;
    gcl_eager_head_t *h = cell_of(c, c->rank, i);
    const gcl_eager_owner_t *o = gcl_eager_owner(box_of(c), h);
    const _Atomic uint64_t *ack = gcl_eager_acks(box_of(c), h);
    if (key == 0 && (key = atomic_load_explicit(&h->key, memory_order_acquire)) == 0)
        return 1; /* never used */
    for (int q = 0; q < o->n; q++)
        if (q != o->rank && !reader_done(c, o, ack, q, key))
            return 0;
    return 1;
}

/* Takes a free cell of ours, the one after the last taken first: its index, or -1. */
static int claim_cell(const gcl_peers_t *c)
{
    gcl_ipu_t *me = c->ipu;
    for (int k = 0; k < GCL_EAGER_CELLS; k++) {
        int i = (me->eager_next + k) % GCL_EAGER_CELLS;
        if (cell_free(c, i)) {
            me->eager_next = (i + 1) % GCL_EAGER_CELLS;
            return i;
        }
    }
    return -1;
}

static int claim(gcl_exec_t *x)
{
    x->eager.cell = claim_cell(x->peers);
    return x->eager.cell >= 0;
}

/* Rings the ranks of the group whose threads sleep (one fence for all of them). */
static void notify_peers(const gcl_peers_t *c)
{
    gcl_hostbox_t *hb = box_of(c);
    atomic_thread_fence(memory_order_seq_cst);
    for (int q = 0; q < c->size; q++) {
        gcl_doorbell_t *d = &hb->ipus[local_of(c, q)].bell;
        if (q != c->rank && atomic_load_explicit(&d->sleeping, memory_order_relaxed))
            gcl_doorbell_ring(d);
    }
}

/* Publishes the call KEY (SIG, entered at CLOCK) in our cell I with BYTES of DATA, and rings
 * the peers that sleep. FIRST: a barrier's first rank's byte (whether it fanned in), or -1. */
static void put(const gcl_peers_t *c, int i, uint64_t key, const gcl_sig_t *sig, sim_time_t clock,
                const void *data, size_t bytes, int first)
{
    gcl_eager_head_t *h = cell_of(c, c->rank, i);
    gcl_eager_owner_t *o = gcl_eager_owner(box_of(c), h);
    atomic_store_explicit(&h->key, 0, memory_order_relaxed);
    atomic_thread_fence(memory_order_release); /* a reader that saw the old key sees 0 after */
    h->clock = clock;
    h->sig = *sig;
    if (bytes)
        memcpy(gcl_eager_data(h), data, bytes);
    if (first >= 0)
        *gcl_eager_data(h) = (char)first;
    o->run_gen = c->ipu->gen;
    o->n = c->size;
    o->rank = c->rank;
    memcpy(o->readers, c->ipus, (size_t)c->size * sizeof *c->ipus);
    atomic_store_explicit(&h->key, key, memory_order_release);
    c->ipu->eager_key[i] = key;
    notify_peers(c);
}

static void publish(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    int first = x->sig.coll == COLL_BARRIER && c->rank == 0 ? x->eager.fanned_in : -1;
    x->eager.at[c->rank] = (int8_t)x->eager.cell;
    x->eager.found++;
    put(c, x->eager.cell, x->key0, &x->sig, x->sim.entry[c->rank], x->bufs[COLL_BUF_IN],
        payload(x, c->rank), first);
}

/* Whether the processor has PREFETCHW (AMD's, Intel's since Broadwell): 1, 0, or -1 until asked. */
static _Atomic int has_prefetchw = -1;

static int ask_prefetchw(void)
{
    int has = 0;
#if defined(__x86_64__) && defined(__GNUC__)
    unsigned a, b, c, d;
    has = __get_cpuid(0x80000001u, &a, &b, &c, &d) && (c & bit_PRFCHW);
#endif
    atomic_store_explicit(&has_prefetchw, has, memory_order_relaxed);
    return has;
}

/* Asks for the line at P, to be written: PREFETCHW brings it exclusive, the other cores' copies
 * dropped, so that the stores to it that follow, and the fence after them, do not wait for the
 * other cores. Only a hint; a plain prefetch where the processor lacks it. */
static void prefetch_write(const void *p)
{
    int has = atomic_load_explicit(&has_prefetchw, memory_order_relaxed);
#if defined(__x86_64__) && defined(__GNUC__)
    if (has > 0 || (has < 0 && ask_prefetchw())) {
        __asm__ volatile("prefetchw %0" ::"m"(*(const char *)p));
        return;
    }
#else
    (void)has;
    (void)ask_prefetchw;
#endif
    __builtin_prefetch(p, 1, 3);
}

/* Asks for the lines of data past the head of cell H, as its key is read, when there are one
 * or two: so that a call of 64 bytes, whose data ends in the line after the key's, waits for
 * the two lines at once rather than one after the other. Only a hint: the data is read after
 * the key. Inlined: GCC takes a function that only prefetches for one without effects, and
 * drops the call. */
static inline __attribute__((always_inline)) void prefetch_data(const gcl_exec_t *x, int q,
                                                                const gcl_eager_head_t *h)
{
    size_t end = GCL_EAGER_HEAD + payload(x, q);
    if (end <= 64 || end > 3 * 64)
        return;
    __builtin_prefetch((const char *)h + 64, 0, 3);
    if (end > 2 * 64)
        __builtin_prefetch((const char *)h + 2 * 64, 0, 3);
}

/* Asks for the lines of our cell of the next call (the one after the last taken), to be
 * written: its readers' reads took them. So they are here when that call publishes, and the
 * fence after publishing (notify_peers) waits for no other core: 0.12 of a 4-rank broadcast
 * root's 0.34 us here, where the readers had the head line (docs/benchmarks.md). */
static void warm_next(const gcl_exec_t *x)
{
    const char *h = (const char *)cell(x, x->peers->rank, x->peers->ipu->eager_next);
    prefetch_write(h);
    prefetch_write(h + 64);
}

void gcl_eager_expect(const gcl_peers_t *c, int root, size_t bytes)
{
    if (root == c->rank) { /* the doorbells it reads after publishing (notify_peers) */
        for (int q = 0; q < c->size; q++)
            if (q != c->rank)
                __builtin_prefetch(&box_of(c)->ipus[local_of(c, q)].bell, 0, 3);
        return;
    }
    int8_t last = c->ipu->eager_found[local_of(c, root) % GCL_EAGER_MAX_RANKS];
    const char *h = (const char *)cell_of(c, root, (last + 1) % GCL_EAGER_CELLS);
    __builtin_prefetch(h, 0, 3);
    if (GCL_EAGER_HEAD + bytes > 64)
        __builtin_prefetch(h + 64, 0, 3);
}

int gcl_eager_read_early(const gcl_peers_t *c, int root, uint64_t key, const gcl_sig_t *sig,
                         void *out, size_t bytes, gcl_eager_early_t *got)
{
    int8_t *last = &c->ipu->eager_found[local_of(c, root) % GCL_EAGER_MAX_RANKS];
    int i = (*last + 1) % GCL_EAGER_CELLS;
    gcl_eager_head_t *h = cell_of(c, root, i);
    if (atomic_load_explicit(&h->key, memory_order_acquire) != key ||
        memcmp(&h->sig, sig, sizeof *sig) != 0)
        return 0; /* not yet, or elsewhere, or a mismatch: the engine finds it, or names it */
    got->clock = h->clock;
    memcpy(out, gcl_eager_data(h), bytes);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&h->key, memory_order_relaxed) != key)
        return -1; /* it cannot be reused before this IPU acks it */
    *last = (int8_t)i;
    got->cell = (int8_t)i;
    return 1;
}

int gcl_eager_claim_early(const gcl_peers_t *c)
{
    return claim_cell(c);
}

void gcl_eager_send_early(const gcl_peers_t *c, int i, uint64_t key, const gcl_sig_t *sig,
                          sim_time_t clock, const void *in, size_t bytes)
{
    put(c, i, key, sig, clock, in, bytes, -1);
}

void gcl_eager_resume(gcl_exec_t *x, const gcl_eager_early_t *got)
{
    int q = x->sig.root, me = x->peers->rank;
    x->eager.at[q] = got->cell;
    x->eager.found++;
    if (q == me) { /* published at entry, and its output written then */
        x->eager.cell = got->cell;
        x->eager.phase = GATHER;
    } else {
        x->sim.entry[q] = got->clock;
        x->sim.seen[q] = 1;
        x->eager.phase = CLAIM;
    }
    x->returned = 1;
}

/* Looks for rank Q's cell of the call: 1 if found now, 0 if not (or found before), or a
 * status (a mismatch names both sides). An owner takes its cells in turn, whatever the group,
 * so the cell after the one this IPU found last of it is looked at first. */
static int find(gcl_exec_t *x, int q)
{
    gcl_peers_t *c = x->peers;
    gcl_eager_t *e = &x->eager;
    int8_t *last = &c->ipu->eager_found[hostlocal(x, q) % GCL_EAGER_MAX_RANKS];
    int first = (*last + 1) % GCL_EAGER_CELLS;
    for (int k = 0; e->at[q] < 0 && k < GCL_EAGER_CELLS; k++) {
        int i = (first + k) % GCL_EAGER_CELLS;
        gcl_eager_head_t *h = cell(x, q, i);
        uint64_t key = atomic_load_explicit(&h->key, memory_order_acquire);
        if (k == 0)
            prefetch_data(x, q, h);
        if (key != x->key0)
            continue;
        *last = (int8_t)i;
        e->at[q] = (int8_t)i; /* acked when the call ends, whatever happens */
        e->found++;
        if (memcmp(&h->sig, &x->sig, sizeof x->sig) != 0) {
            char text[600];
            gcl_sig_t theirs = h->sig;
            gcl_diag_mismatch_text(c->ipu->job, c->ipu->global_ipu, &x->sig, c->ipus[q], &theirs,
                                   text, sizeof text);
            return gcl_err_set(x->err, GCL_ERR_MISMATCH, "%s", text);
        }
        x->sim.entry[q] = h->clock;
        x->sim.seen[q] = 1;
        return 1;
    }
    return 0;
}

/* Looks for the cells of the ranks not found yet: 1 if any was found, or a status. */
static int gather(gcl_exec_t *x)
{
    int did = 0;
    for (int q = 0; q < x->peers->size && x->eager.found < x->peers->size; q++) {
        int rc = find(x, q);
        if (rc < 0)
            return rc;
        did |= rc;
    }
    return did;
}

/* Our own leaf of the fold: the input we published, read where we have it rather than from our
 * cell. Once a peer has read the cell, the line is the peer's: this machine's caches hand a
 * written line to the core that reads it (migratory sharing), so reading our own cell back
 * cost every 8-byte all_reduce a miss, 150 ns of 0.65 us on 2 ranks. The cell's bytes are the
 * input's, copied, so the fold is bitwise the same. Not where the output overlaps the input
 * (in place) on more than 2 ranks: the fold writes the output before it reads every leaf. */
static const void *own_leaf(const gcl_exec_t *x)
{
    uintptr_t in = (uintptr_t)x->bufs[COLL_BUF_IN], out = (uintptr_t)x->bufs[COLL_BUF_OUT];
    size_t bytes = x->sig.count * x->info.elem_size;
    if (x->peers->size == 2 || in + bytes <= out || out + bytes <= in)
        return x->bufs[COLL_BUF_IN];
    return gcl_eager_data(cell(x, x->peers->rank, x->eager.at[x->peers->rank]));
}

/* Writes the result: the tree's fold of every cell (ours: own_leaf), or the root's data. */
static void deliver(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    size_t count = x->sig.count, es = x->info.elem_size;
    void *out = x->bufs[COLL_BUF_OUT];
    if (x->sig.coll == COLL_ALLREDUCE) {
        const void *leaves[GCL_EAGER_MAX_RANKS];
        for (int q = 0; q < c->size; q++)
            leaves[q] = q == c->rank ? own_leaf(x) : gcl_eager_data(cell(x, q, x->eager.at[q]));
        coll_canon_fold(x->info.dtype, x->info.op, out, leaves, c->size, count, x->lent->fold);
        if (x->info.op == COLL_MEAN)
            coll_divide(x->info.dtype, out, count, (unsigned)c->size);
    } else if (x->sig.coll == COLL_BROADCAST && c->rank == x->sig.root) {
        if (out != x->bufs[COLL_BUF_IN])
            memmove(out, x->bufs[COLL_BUF_IN], count * es);
    } else if (x->sig.coll == COLL_BROADCAST) {
        memcpy(out, gcl_eager_data(cell(x, x->sig.root, x->eager.at[x->sig.root])), count * es);
    }
}

/* A broadcast whose root's cell is found (or whose root we are), or a barrier whose first rank's
 * cell is found: the output is written, and the caller may go on (exec.h, returned) while the
 * other ranks' cells are still awaited or unread: they carry nothing the output needs, only
 * their entry clocks, signatures and acks. */
/* A barrier's other rank on a crowded host, leaving it: asks for the first rank's next cell. The
 * first rank publishes only once every rank has entered, and so leaves first, while the others
 * wait for a core: what it calls next is often published before they leave. A broadcast from it
 * right after the barrier then finds the root's lines here, not on the other core (0.1 of a
 * 4-rank broadcast's 0.25 us here, docs/benchmarks.md). Only a hint: if rank 0 has not written
 * them yet, its writes take them back. */
static void ahead(const gcl_exec_t *x)
{
    if (x->sig.coll != COLL_BARRIER || x->peers->rank == 0 || x->eager.at[0] < 0 ||
        !x->peers->ipu->host->crowded)
        return;
    const char *h = (const char *)cell(x, 0, (x->eager.at[0] + 1) % GCL_EAGER_CELLS);
    __builtin_prefetch(h, 0, 3);
    __builtin_prefetch(h + 64, 0, 3);
}

static gcl_status_t hand_over(gcl_exec_t *x)
{
    int root = lead(x);
    deliver(x);
    atomic_thread_fence(memory_order_acquire);
    if (root != x->peers->rank && atomic_load_explicit(&cell(x, root, x->eager.at[root])->key,
                                                       memory_order_relaxed) != x->key0)
        return gcl_err_set(x->err, GCL_ERR_INTERNAL,
                           "%s: the %s eager cell was reused while it was read", x->what,
                           x->sig.coll == COLL_BROADCAST ? "root's" : "first rank's");
    x->returned = 1;
    ahead(x);
    return GCL_OK;
}

/* After reading: whether every peer's cell still holds the call (the seqlock's second look). */
static int still_there(gcl_exec_t *x)
{
    atomic_thread_fence(memory_order_acquire);
    for (int q = 0; q < x->peers->size; q++)
        if (q != x->peers->rank &&
            atomic_load_explicit(&cell(x, q, x->eager.at[q])->key, memory_order_relaxed) != x->key0)
            return 0;
    return 1;
}

/* Tells every peer whose cell we found that we are done with it. */
static void ack(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    x->eager.acked = 1;
    for (int q = 0; q < c->size; q++) {
        if (q == c->rank || x->eager.at[q] < 0)
            continue;
        _Atomic uint64_t *a = gcl_eager_acks(box(x), cell(x, q, x->eager.at[q]));
        atomic_store_explicit(&a[c->rank], x->key0, memory_order_release);
    }
    /* No doorbell: an owner that waits for a free cell polls (eager_polls). Ringing would cost
     * every call a full fence on its way out, for a wait that almost never happens: a rank
     * that publishes a call has acked every call before it, so an owner one call ahead of its
     * readers finds its cells free. */
}

/* A barrier's first rank on a crowded host: every other rank's cell before its own. 1 once all
 * are found (the phase moves on to CLAIM), 0 while not, or a status. */
static int fan_in(gcl_exec_t *x)
{
    int rc = gather(x);
    if (rc < 0 && claim(x))
        publish(x); /* the others then name the mismatch too, as they would have */
    if (rc < 0 || x->eager.found < x->peers->size - 1)
        return rc;
    /* Every rank has published this call, so read its calls before: our cells are free. */
    x->peers->eager_seen = x->key0;
    x->eager.fanned_in = 1;
    x->eager.phase = CLAIM;
    return 1;
}

static int eager_progress(gcl_exec_t *x)
{
    gcl_eager_t *e = &x->eager;
    int did = 0;
    if (e->phase == ROOT) { /* the output first; publishing our cell can wait for the next pass */
        int rc = find(x, x->sig.root);
        if (rc <= 0)
            return rc;
        e->phase = CLAIM;
        gcl_status_t st = hand_over(x);
        return st == GCL_OK ? 1 : st;
    }
    if (e->phase == FANIN && (did = fan_in(x)) <= 0)
        return did;
    if (e->phase == CLAIM) {
        if (!claim(x))
            return 0;
        if (gcl_fault_hit(GCL_FAULT_POST)) /* GCL_FAULT_INJECT: as if the cell could not be had */
            return gcl_err_set(x->err, GCL_ERR_TRANSPORT,
                               "eager: publishing the call failed: injected (GCL_FAULT_INJECT)");
        publish(x);
        e->phase = GATHER;
        did = 1;
        /* A broadcast's root is done with its caller's part: it returns now, without a look at
         * the other ranks' cells (lines they write, each a miss), which its next call takes. */
        if (x->sig.coll == COLL_BROADCAST && x->sig.root == x->peers->rank) {
            gcl_status_t st = hand_over(x);
            return st == GCL_OK ? 1 : st;
        }
    }
    if (e->phase != GATHER)
        return did;
    int rc = gather(x);
    if (rc < 0)
        return rc;
    /* A barrier's other ranks return once the first rank's cell is found, if it says it published
     * only after it had found every rank's: every rank has entered. */
    if (x->sig.coll == COLL_BARRIER && x->peers->rank != 0 && !x->returned && e->at[0] >= 0 &&
        e->found < x->peers->size && *gcl_eager_data(cell(x, 0, e->at[0])) == 1) {
        gcl_status_t st = hand_over(x);
        return st == GCL_OK ? 1 : st;
    }
    if (e->found < x->peers->size)
        return did | rc;
    if (!x->returned)
        deliver(x);
    if (!still_there(x))
        return gcl_err_set(x->err, GCL_ERR_INTERNAL,
                           "%s: a peer's eager cell was reused while it was read", x->what);
    ack(x);
    x->peers->eager_seen = x->key0;
    e->phase = DONE;
    warm_next(x);
    ahead(x);
    GCL_CHECK(gcl_sim_call_end(x));
    x->done = 1;
    return 1;
}

static void eager_finish(gcl_exec_t *x)
{
    if (!x->eager.acked) /* whatever cells of peers it found */
        ack(x);
    x->eager.acked = 1;
}

/* Whether rank 0's cell is missing only because rank 0 waits, as a crowded host's barrier's
 * first rank, for another rank that has not entered either: that one is named, not rank 0. */
static int behind_rank0(const gcl_exec_t *x)
{
    if (x->sig.coll != COLL_BARRIER || x->peers->rank == 0 || !x->peers->ipu->host->crowded)
        return 0;
    for (int q = 1; q < x->peers->size; q++)
        if (x->eager.at[q] < 0)
            return 1;
    return 0;
}

/* CLAIM: the global IPUs that have not acked our busiest cell yet; GATHER: the ranks whose cell
 * is not found (ALL: rank 0 too when it only waits for another, behind_rank0). At most MAX of
 * them into IPUS. */
static int waited(const gcl_exec_t *x, int *ipus, int max, int all)
{
    int n = 0;
    if (x->eager.phase == CLAIM) {
        gcl_eager_head_t *h = cell(x, x->peers->rank, x->peers->ipu->eager_next);
        const gcl_eager_owner_t *o = gcl_eager_owner(box(x), h);
        const _Atomic uint64_t *a = gcl_eager_acks(box(x), h);
        uint64_t key = atomic_load(&h->key);
        for (int q = 0; q < o->n && n < max; q++)
            if (q != o->rank && atomic_load(&a[q]) != key)
                ipus[n++] = o->readers[q];
        return n;
    }
    for (int q = 0; x->eager.phase == ROOT && q < x->peers->size && n < max; q++)
        if (q == x->sig.root)
            ipus[n++] = x->peers->ipus[q];
    int gathering = x->eager.phase == GATHER || x->eager.phase == FANIN;
    for (int q = 0; gathering && q < x->peers->size && n < max; q++)
        if (x->eager.at[q] < 0 && q != x->peers->rank && (all || q != 0 || !behind_rank0(x)))
            ipus[n++] = x->peers->ipus[q];
    return n;
}

/* The ranks to name as awaited (liveness.c, the pending text). */
static int eager_waiting(const gcl_exec_t *x, int *ipus, int max)
{
    return waited(x, ipus, max, 0);
}

/* Whether the global IPU IPU, a rank of the call, has published it (the next pass takes it). */
static int published(const gcl_exec_t *x, int ipu)
{
    for (int q = 0; q < x->peers->size; q++)
        for (int i = 0; x->peers->ipus[q] == ipu && i < GCL_EAGER_CELLS; i++)
            if (atomic_load_explicit(&cell(x, q, i)->key, memory_order_acquire) == x->key0)
                return 1;
    return 0;
}

/* A peer we wait on that is gone: one that published the call before it left is not. */
static int eager_gone(gcl_exec_t *x, int *ipu, char *why, size_t len)
{
    const gcl_ipu_t *me = x->peers->ipu;
    int ipus[GCL_EAGER_MAX_RANKS];
    int n = waited(x, ipus, GCL_EAGER_MAX_RANKS, 1); /* rank 0 gone too, however it waits */
    for (int i = 0; i < n; i++)
        if (gcl_diag_peer_gone(me->job, &me->host->hb, me->gen, ipus[i], why, len) &&
            (x->eager.phase == CLAIM || !published(x, ipus[i]))) {
            *ipu = ipus[i];
            return 1;
        }
    return 0;
}

static void eager_pending(gcl_exec_t *x, char *buf, size_t len)
{
    int ipus[GCL_EAGER_MAX_RANKS], n = eager_waiting(x, ipus, GCL_EAGER_MAX_RANKS);
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n && i < 6; i++) {
        char who[160];
        gcl_job_describe_ipu(x->peers->ipu->job, ipus[i], who, sizeof who);
        used += (size_t)snprintf(
            buf + used, used < len ? len - used : 0, "%s%s %s", i ? "; " : "", who,
            x->eager.phase == CLAIM ? "to read this IPU's last eager call" : "to enter the call");
    }
}

static void eager_where(const gcl_exec_t *x, char *buf, size_t len)
{
    /* A barrier's first rank that fans in has not published yet, but it is in. */
    int in = x->eager.found + (x->eager.phase == FANIN);
    snprintf(buf, len, "eager, %d of %d ranks in", in, x->peers->size);
}

static int eager_polls(const gcl_exec_t *x)
{
    return x->eager.phase == CLAIM; /* a publication rings the readers that sleep; an ack not */
}

const gcl_engine_t gcl_engine_eager = {
    .name = "eager",
    .progress = eager_progress,
    .gone = eager_gone,
    .waiting = eager_waiting,
    .pending = eager_pending,
    .where = eager_where,
    .polls = eager_polls,
    .finish = eager_finish,
};
