/*
 * Simulated time of collectives and point-to-point transfers (see exec.h for the two modes).
 *
 * CHARGE, per step of the call's schedule (documented in the README):
 *  - A call starts with one synchronisation of its group (sim_sync_time), charged as sync.
 *  - A step starts at the IPU's clock T. Each message of B bytes it sends leaves at T, holds its
 *    route for d = ceil(B / W) x q, where W is the route's bottleneck bandwidth and q the
 *    message's place in the queue of the busiest link it shares with the other messages of the
 *    same step (all ranks' steps are known, because schedules are pure functions), and arrives
 *    at T + latency(route) + d. The sender carries both times in the message.
 *  - The step ends at the latest of T, the end of each send's d, and each arrival; the part of
 *    the wait before the latest sender even sent is idle, the rest is exchange.
 * So a ring all-reduce of S bytes over n IPUs that are neighbours in one IPU-Link domain costs
 * one sync plus 2(n-1) x (alpha + S/(nB)): the alpha-beta closed form.
 *
 * REPLAY: the same synchronisation, then the clock stands still while the bytes move; every
 * rank's clock at entry is learnt (from the host box, or from the first message of each peer,
 * which carries it), and at the end the pod algorithm's timeline is replayed from them by the
 * same rules (choice/replay.h): this rank's idle and exchange time are charged. Every quantity
 * is an integer number of picoseconds computed in a fixed order: bitwise reproducible.
 */
#include <stdlib.h>
#include <string.h>

#include "engine/simtime.h"

#include "base/alloc.h"
#include "base/log.h"
#include "pod/cache.h"

static gcl_sim_ipu_t *sim_ipu(gcl_exec_t *x)
{
    return x->peers->ipu->clock;
}

gcl_status_t gcl_sim_plan_replay(gcl_exec_t *x, const coll_algo_t *pod, const coll_args_t *a)
{
    gcl_simplan_t *p = &x->sim;
    p->mode = GCL_SIM_REPLAY;
    p->pod = pod;
    p->pod_args = *a;
    p->pod_args.node_of = p->pod_args.host_of = NULL;
    size_t n = (size_t)x->peers->size;
    gcl_group_scratch_t *g = x->lent;
    if (g && !g->entry && (g->entry = gcl_malloc(n * sizeof *g->entry)))
        g->seen = gcl_malloc(n);
    if (g && g->entry && g->seen) {
        p->entry = g->entry;
        p->seen = g->seen;
        memset(p->seen, 0, n);
    } else if (!g) {
        p->entry = gcl_calloc(n, sizeof *p->entry);
        p->seen = gcl_calloc(n, 1);
    }
    if (!p->entry || !p->seen)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY, "%s: out of host memory", x->what);
    return GCL_OK;
}

/* The queue places of this rank's sends in ALGO's call A: the group's memo when the
 * call has the last call's shape, else from the instance's shape cache. NULL with *OOM set when
 * out of memory (the call fails: a time charged without the queues would be another answer). */
static const uint32_t *queue_places(gcl_peers_t *c, const coll_algo_t *algo, const coll_args_t *a,
                                    uint32_t nops, int *oom)
{
    gcl_charge_memo_t *m = &c->charge;
    if (m->mult && m->algo == algo && choice_same_call(&m->a, a) && m->nops == nops)
        return m->mult;
    gcl_charge_memo_free(m);
    gcl_sim_t *s = c->ipu->sim;
    const choice_shape_t *sh = gcl_simcache_shape(s->cache, s->topo, algo, a, c->ipus);
    *oom = sh == NULL;
    if (sh && sh->s[c->rank].nops == nops) {
        m->mult = gcl_malloc((nops + 1) * sizeof *m->mult);
        *oom = m->mult == NULL;
    }
    if (m->mult) {
        memcpy(m->mult, sh->mult[c->rank], nops * sizeof *m->mult);
        m->algo = algo;
        m->a = *a;
        m->a.node_of = m->a.host_of = NULL;
        m->nops = nops;
    }
    gcl_simcache_release(s->cache, sh);
    return m->mult;
}

gcl_status_t gcl_sim_plan_charge(gcl_exec_t *x, const coll_algo_t *algo, const coll_args_t *a,
                                 int owned)
{
    gcl_simplan_t *p = &x->sim;
    uint32_t nops = x->sched->nops;
    int oom = 0;
    p->mode = GCL_SIM_CHARGE;
    p->mult = nops ? queue_places(x->peers, algo, a, nops, &oom) : NULL;
    /* A request may outlive the memo (the next call of another shape replaces it). */
    if (owned && p->mult && (p->mult_own = gcl_malloc(nops * sizeof *p->mult_own))) {
        memcpy(p->mult_own, p->mult, nops * sizeof *p->mult_own);
        p->mult = p->mult_own;
    } else if (owned) {
        oom |= p->mult != NULL;
        p->mult = NULL;
    }
    if (oom)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY,
                           "%s: out of host memory for the simulated pod's link queues", x->what);
    return GCL_OK;
}

void gcl_sim_enter(gcl_peers_t *c, int sync, gcl_sim_entry_t *at)
{
    gcl_sim_ipu_t *ipu = c->ipu->clock;
    at->call_start = ipu->stats.clock;
    if (sync && c->size > 1 && !c->sync_known) /* a pure function of the group */
        c->sync_known = sim_sync_time(c->ipu->sim->topo, c->ipus, c->size, &c->sync) == 0 ? 1 : -1;
    if (sync && c->size > 1 && c->sync_known == 1)
        sim_stats_advance(&ipu->stats, SIM_ACT_SYNC, c->sync);
    at->t = ipu->stats.clock;
}

void gcl_sim_call_entered(gcl_exec_t *x, const gcl_sim_entry_t *at)
{
    gcl_peers_t *c = x->peers;
    x->sim.call_start = at->call_start;
    x->sim.t = at->t;
    x->sim.idle_acc = x->sim.exch_acc = 0;
    if (x->sim.mode == GCL_SIM_REPLAY) { /* what every peer learns as this rank's entry */
        x->sim.entry[c->rank] = x->sim.t;
        x->sim.seen[c->rank] = 1;
    }
}

void gcl_sim_call_begin(gcl_exec_t *x)
{
    gcl_sim_entry_t at;
    gcl_sim_enter(x->peers, x->sim.sync, &at);
    gcl_sim_call_entered(x, &at);
}

void gcl_sim_step_post(gcl_exec_t *x)
{
    const gcl_ipu_t *me = x->peers->ipu;
    const sim_topology_t *topo = me->sim->topo;
    sim_time_t now = x->sim.t;
    x->sim.step_start = now;
    for (uint32_t i = 0; i < x->nxfers; i++) {
        gcl_xfer_t *t = &x->xfers[i];
        if (!t->is_send)
            continue;
        sim_route_t route;
        sim_time_t d = 0, lat = 0;
        if (x->sim.mode == GCL_SIM_CHARGE &&
            sim_topology_route(topo, me->global_ipu, t->peer_ipu, &route) == 0 && route.hops > 0) {
            uint32_t q = x->sim.mult ? x->sim.mult[t->op - x->sched->ops] : 0;
            d = choice_mult_time(sim_xfer_time(t->bytes, route.bandwidth), q);
            lat = route.latency;
        }
        t->sim_send = now;
        t->sim_busy_end = now + d;
        t->sim_arrival = now + lat + d;
    }
}

/* REPLAY: the first message from each peer carries its entry clock. */
static void learn_entries(gcl_exec_t *x)
{
    for (uint32_t i = 0; i < x->nxfers; i++) {
        const gcl_xfer_t *t = &x->xfers[i];
        int q = t->op->peer;
        if (!t->is_send && !x->sim.seen[q]) {
            x->sim.entry[q] = t->sim_send;
            x->sim.seen[q] = 1;
        }
    }
}

void gcl_sim_step_done(gcl_exec_t *x)
{
    if (x->sim.mode == GCL_SIM_REPLAY) {
        learn_entries(x);
        return;
    }
    sim_time_t start = x->sim.step_start, end = start, latest_sender = start;
    for (uint32_t i = 0; i < x->nxfers; i++) {
        const gcl_xfer_t *t = &x->xfers[i];
        sim_time_t until = t->is_send ? t->sim_busy_end : t->sim_arrival;
        end = until > end ? until : end;
        if (!t->is_send && t->sim_send > latest_sender)
            latest_sender = t->sim_send;
    }
    if (end <= x->sim.t)
        return;
    /* Waiting for a peer that had not sent yet is idle time; moving the bytes is exchange. */
    sim_time_t idle_until = latest_sender < end ? latest_sender : end;
    if (idle_until > x->sim.t) {
        x->sim.idle_acc += idle_until - x->sim.t;
        x->sim.t = idle_until;
    }
    x->sim.exch_acc += end - x->sim.t;
    x->sim.t = end;
}

/* Whether the group's last replay was of this very call shape, entered with the same offsets:
 * then *IDLE and *EXCH are its outcome (gcl_simcache_replay would compute the same). */
static int memo_replay(gcl_exec_t *x, sim_time_t *idle, sim_time_t *exch)
{
    const gcl_replay_memo_t *m = &x->peers->replay;
    int n = x->peers->size;
    if (m->pod != x->sim.pod || !choice_same_call(&m->a, &x->sim.pod_args))
        return 0;
    sim_time_t lo = x->sim.entry[0];
    for (int q = 1; q < n; q++)
        lo = x->sim.entry[q] < lo ? x->sim.entry[q] : lo;
    for (int q = 0; q < n; q++)
        if (x->sim.entry[q] - lo != m->offsets[q])
            return 0;
    *idle = m->idle;
    *exch = m->exch;
    return 1;
}

static void remember_replay(gcl_exec_t *x, sim_time_t idle, sim_time_t exch)
{
    gcl_replay_memo_t *m = &x->peers->replay;
    int n = x->peers->size;
    if (!m->offsets && !(m->offsets = gcl_malloc((size_t)n * sizeof *m->offsets)))
        return;
    sim_time_t lo = x->sim.entry[0];
    for (int q = 1; q < n; q++)
        lo = x->sim.entry[q] < lo ? x->sim.entry[q] : lo;
    for (int q = 0; q < n; q++)
        m->offsets[q] = x->sim.entry[q] - lo;
    m->pod = x->sim.pod;
    m->a = x->sim.pod_args;
    m->idle = idle;
    m->exch = exch;
}

static gcl_status_t replay(gcl_exec_t *x)
{
    gcl_peers_t *c = x->peers;
    gcl_sim_t *s = c->ipu->sim;
    for (int q = 0; q < c->size; q++)
        if (!x->sim.seen[q]) { /* a data path that does not hear from every rank: a bug */
            GCL_WARN(GCL_SUB_SIM, "%s #%u: no entry clock of rank %d: charged without a replay",
                     x->what, x->sig.seq, q);
            return GCL_OK;
        }
    sim_time_t idle = 0, exch = 0;
    if (!memo_replay(x, &idle, &exch) &&
        gcl_simcache_replay(s->cache, s->topo, x->sim.pod, &x->sim.pod_args, c->ipus, x->sim.entry,
                            c->rank, &idle, &exch) != GCL_OK)
        return gcl_err_set(x->err, GCL_ERR_NO_HOST_MEMORY,
                           "%s: out of host memory replaying the simulated time", x->what);
    remember_replay(x, idle, exch);
    x->sim.idle_acc += idle;
    x->sim.exch_acc += exch;
    x->sim.t += idle + exch;
    return GCL_OK;
}

gcl_status_t gcl_sim_call_end(gcl_exec_t *x)
{
    return x->sim.mode == GCL_SIM_REPLAY ? replay(x) : GCL_OK;
}

void gcl_sim_call_retire(gcl_exec_t *x)
{
    gcl_sim_ipu_t *ipu = sim_ipu(x);
    sim_time_t clock = ipu->stats.clock;
    if (x->sim.t > clock) { /* what the IPU did meanwhile hid the rest of the call */
        sim_time_t wait = x->sim.t - clock;
        sim_time_t exch = wait < x->sim.exch_acc ? wait : x->sim.exch_acc;
        sim_stats_advance(&ipu->stats, SIM_ACT_EXCHANGE, exch);
        sim_stats_advance(&ipu->stats, SIM_ACT_IDLE, wait - exch);
    }
    if (!ipu->trace)
        return;
    uint64_t bytes = x->sig.count * x->info.elem_size;
    sim_trace_add(ipu->trace, x->what, SIM_ACT_EXCHANGE, x->sim.call_start,
                  ipu->stats.clock - x->sim.call_start, bytes);
}
