/*
 * Simulated time of collectives and point-to-point transfers.
 *
 * The model, per step of a schedule (documented in the README):
 *  - A call starts with one synchronisation of its group (sim_sync_time), charged as sync.
 *  - A step starts at the IPU's clock T. Each message of B bytes it sends leaves at T, holds its
 *    route for d = ceil(B / W) x q, where W is the route's bottleneck bandwidth and q the
 *    message's place in the queue of the busiest link it shares with the other messages of the
 *    same step (all ranks' steps are known, because schedules are pure functions), and arrives
 *    at T + latency(route) + d. The sender carries both times in the message.
 *  - The step ends at the latest of T, the end of each send's d, and each arrival; the part of
 *    the wait before the latest sender even sent is idle, the rest is exchange.
 * So a ring all-reduce of S bytes over n IPUs that are neighbours in one IPU-Link domain costs
 * one sync plus 2(n-1) x (alpha + S/(nB)): the alpha-beta closed form. Every quantity is an
 * integer number of picoseconds computed in a fixed order: bitwise reproducible.
 */
#include <stdlib.h>
#include <string.h>

#include "coll/algo.h"
#include "exec.h"
#include "log.h"

static gcl_sim_ipu_t *sim_ipu(struct gcl_ctx *ctx)
{
    return &ctx->inst->sim.ipus[ctx->local_index];
}

void gcl_sim_call_begin(gcl_exec_t *x)
{
    struct gcl_comm *c = x->comm;
    gcl_sim_ipu_t *ipu = sim_ipu(c->ctx);
    x->sim_call_start = ipu->stats.clock;
    if (!x->sim_sync || c->size < 2)
        return;
    sim_time_t t = 0;
    if (sim_sync_time(c->ctx->inst->sim.topo, c->ipus, c->size, &t) == 0)
        sim_stats_advance(&ipu->stats, SIM_ACT_SYNC, t);
}

void gcl_sim_call_end(gcl_exec_t *x)
{
    gcl_sim_ipu_t *ipu = sim_ipu(x->comm->ctx);
    if (!ipu->trace)
        return;
    uint64_t bytes = x->sig.count * x->info.elem_size;
    sim_trace_add(ipu->trace, x->what, SIM_ACT_EXCHANGE, x->sim_call_start,
                  ipu->stats.clock - x->sim_call_start, bytes);
}

void gcl_sim_step_post(gcl_exec_t *x)
{
    struct gcl_ctx *ctx = x->comm->ctx;
    const sim_topology_t *topo = ctx->inst->sim.topo;
    sim_time_t now = sim_ipu(ctx)->stats.clock;
    x->sim_step_start = now;
    for (uint32_t i = 0; i < x->nxfers; i++) {
        gcl_xfer_t *t = &x->xfers[i];
        if (!t->is_send)
            continue;
        sim_route_t route;
        uint32_t q = x->sim_mult ? x->sim_mult[t->op - x->sched->ops] : 1;
        sim_time_t d = 0, lat = 0;
        if (sim_topology_route(topo, ctx->global_ipu, t->peer_ipu, &route) == 0 && route.hops > 0) {
            d = sim_xfer_time(t->bytes, route.bandwidth) * (q ? q : 1);
            lat = route.latency;
        }
        t->sim_send = now;
        t->sim_busy_end = now + d;
        t->sim_arrival = now + lat + d;
    }
}

void gcl_sim_step_done(gcl_exec_t *x)
{
    gcl_sim_ipu_t *ipu = sim_ipu(x->comm->ctx);
    sim_time_t start = x->sim_step_start, end = start, latest_sender = start;
    for (uint32_t i = 0; i < x->nxfers; i++) {
        const gcl_xfer_t *t = &x->xfers[i];
        sim_time_t until = t->is_send ? t->sim_busy_end : t->sim_arrival;
        end = until > end ? until : end;
        if (!t->is_send && t->sim_send > latest_sender)
            latest_sender = t->sim_send;
    }
    if (end <= ipu->stats.clock)
        return;
    /* Waiting for a peer that had not sent yet is idle time; moving the bytes is exchange. */
    sim_time_t idle_until = latest_sender < end ? latest_sender : end;
    if (idle_until > ipu->stats.clock)
        sim_stats_advance_to(&ipu->stats, SIM_ACT_IDLE, idle_until);
    sim_stats_advance_to(&ipu->stats, SIM_ACT_EXCHANGE, end);
}

/* ---- link contention of this rank's sends (the message path) ---- */

struct gcl_simcache {
    const coll_algo_t *algo;
    coll_args_t args; /* the call shape: every field but rank */
    uint32_t *mult;   /* per op of this rank's schedule */
    uint32_t nops;
};

void gcl_simcache_free(struct gcl_simcache *c)
{
    if (!c)
        return;
    free(c->mult);
    free(c);
}

static int same_shape(const struct gcl_simcache *c, const coll_algo_t *algo, const coll_args_t *a)
{
    return c && c->algo == algo && c->args.coll == a->coll && c->args.nranks == a->nranks &&
           c->args.count == a->count && c->args.root == a->root &&
           c->args.elem_size == a->elem_size && c->args.dtype == a->dtype && c->args.op == a->op;
}

gcl_status_t gcl_simcost_prepare(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                                 const coll_schedule_t *mine, const uint32_t **mult)
{
    *mult = NULL;
    if (same_shape(c->simcache, algo, a) && c->simcache->nops == mine->nops) {
        *mult = c->simcache->mult;
        return GCL_OK;
    }
    gcl_simcache_free(c->simcache);
    c->simcache = calloc(1, sizeof *c->simcache);
    if (!c->simcache)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_shape_t *sh = gcl_shape_acquire(c, algo, a);
    gcl_status_t rc = GCL_ERR_NO_HOST_MEMORY;
    if (sh && sh->s[c->rank].nops == mine->nops &&
        (c->simcache->mult = malloc((mine->nops + 1) * sizeof(uint32_t)))) {
        memcpy(c->simcache->mult, sh->mult[c->rank], mine->nops * sizeof(uint32_t));
        rc = GCL_OK;
    }
    if (sh)
        gcl_shape_release(c);
    if (rc != GCL_OK) {
        gcl_simcache_free(c->simcache);
        c->simcache = NULL;
        return rc;
    }
    c->simcache->algo = algo;
    c->simcache->args = *a;
    c->simcache->nops = mine->nops;
    *mult = c->simcache->mult;
    return GCL_OK;
}

/* ---- replaying a whole group's timeline (host-direct calls, the automatic choice) ---- */

typedef struct {
    sim_time_t send, arrival;
} sim_msg_t;

typedef struct {
    sim_msg_t *m;
    uint32_t head, len, cap;
} fifo_t;

typedef struct {
    const gcl_shape_t *sh;
    const sim_topology_t *topo;
    size_t es;
    int n;
    sim_time_t *t, *busy, *idle, *exch; /* [n]: clock, link free, idle and exchange time */
    uint32_t *step, *need;              /* [n]: current step; messages a step takes per peer */
    char *posted;
    fifo_t *fifo; /* [n*n]: messages from p to q, in order */
} replay_t;

static int replay_post(replay_t *r, int q)
{
    const coll_schedule_t *s = &r->sh->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    sim_route_t route;
    r->busy[q] = r->t[q];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_SEND)
            continue;
        sim_time_t d = 0, lat = 0;
        if (sim_topology_route(r->topo, r->sh->ipus[q], r->sh->ipus[op->peer], &route) == 0 &&
            route.hops > 0) {
            uint32_t m = r->sh->mult[q][i] ? r->sh->mult[q][i] : 1;
            d = sim_xfer_time(op->count * r->es, route.bandwidth) * m;
            lat = route.latency;
        }
        if (r->t[q] + d > r->busy[q])
            r->busy[q] = r->t[q] + d;
        fifo_t *f = &r->fifo[(size_t)q * (size_t)r->n + (size_t)op->peer];
        if (f->len == f->cap) {
            uint32_t cap = f->cap ? 2 * f->cap : 8;
            sim_msg_t *m = realloc(f->m, cap * sizeof *m);
            if (!m)
                return -1;
            f->m = m;
            f->cap = cap;
        }
        f->m[f->len++] = (sim_msg_t){r->t[q], r->t[q] + lat + d};
    }
    r->posted[q] = 1;
    return 0;
}

/* Completes rank Q's step when all its messages are known; returns 1 if it did. */
static int replay_finish(replay_t *r, int q)
{
    const coll_schedule_t *s = &r->sh->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    int ready = 1;
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind == COLL_OP_RECV || op->kind == COLL_OP_RECV_REDUCE) {
            const fifo_t *f = &r->fifo[(size_t)op->peer * (size_t)r->n + (size_t)q];
            ready &= f->len - f->head >= ++r->need[op->peer];
        }
    }
    for (uint32_t i = st->first; i < st->first + st->count; i++)
        if (s->ops[i].peer >= 0)
            r->need[s->ops[i].peer] = 0;
    if (!ready)
        return 0;
    sim_time_t start = r->t[q], end = r->busy[q], latest = start;
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        fifo_t *f = &r->fifo[(size_t)op->peer * (size_t)r->n + (size_t)q];
        sim_msg_t m = f->m[f->head++];
        end = m.arrival > end ? m.arrival : end;
        latest = m.send > latest ? m.send : latest;
    }
    if (end > start) { /* the same split as gcl_sim_step_done */
        sim_time_t idle_until = latest < end ? latest : end;
        if (idle_until > start)
            r->idle[q] += idle_until - start;
        r->exch[q] += end - (idle_until > start ? idle_until : start);
    }
    r->t[q] = end;
    r->step[q]++;
    r->posted[q] = 0;
    return 1;
}

static int replay_run(replay_t *r)
{
    for (int progressed = 1; progressed;) {
        progressed = 0;
        for (int q = 0; q < r->n; q++) {
            while (r->step[q] < r->sh->s[q].nsteps) {
                if (!r->posted[q] && replay_post(r, q) != 0)
                    return -1;
                if (!replay_finish(r, q))
                    break;
                progressed = 1;
            }
        }
    }
    for (int q = 0; q < r->n; q++)
        if (r->step[q] < r->sh->s[q].nsteps)
            return -1; /* the schedules do not complete */
    return 0;
}

static void replay_free(replay_t *r)
{
    for (size_t k = 0; r->fifo && k < (size_t)r->n * (size_t)r->n; k++)
        free(r->fifo[k].m);
    free(r->fifo);
    free(r->t);
    free(r->busy);
    free(r->idle);
    free(r->exch);
    free(r->step);
    free(r->need);
    free(r->posted);
}

/* Runs the timeline of shape SH from ENTRY[]; the caller holds the shape lock. */
static int replay(replay_t *r, const gcl_shape_t *sh, const sim_topology_t *topo,
                  const sim_time_t *entry)
{
    size_t n = (size_t)sh->n;
    *r = (replay_t){.sh = sh, .topo = topo, .es = sh->a.elem_size, .n = sh->n};
    r->t = malloc(n * sizeof *r->t);
    r->busy = calloc(n, sizeof *r->busy);
    r->idle = calloc(n, sizeof *r->idle);
    r->exch = calloc(n, sizeof *r->exch);
    r->step = calloc(n, sizeof *r->step);
    r->need = calloc(n, sizeof *r->need);
    r->posted = calloc(n, 1);
    r->fifo = calloc(n * n, sizeof *r->fifo);
    if (!r->t || !r->busy || !r->idle || !r->exch || !r->step || !r->need || !r->posted || !r->fifo)
        return -1;
    for (size_t q = 0; q < n; q++)
        r->t[q] = entry ? entry[q] : 0;
    return replay_run(r);
}

/* A host-direct call's replayed outcome for every rank, kept so that the other ranks of this
 * instance need not replay it again. */
enum { OUTCOMES_MAX = 8 };

struct gcl_outcome {
    uint64_t key0;
    int ipu0, n;
    sim_time_t *idle, *exch;
    uint64_t used;
};

void gcl_sim_outcomes_free(struct gcl_instance *inst)
{
    for (int i = 0; inst->outcomes && i < OUTCOMES_MAX; i++) {
        free(inst->outcomes[i].idle);
        free(inst->outcomes[i].exch);
    }
    free(inst->outcomes);
    inst->outcomes = NULL;
}

/* The outcome of call KEY0 over C's group, replayed if no rank of this instance did yet; the
 * caller holds the shape lock. */
static struct gcl_outcome *outcome(struct gcl_comm *c, const gcl_shape_t *sh, uint64_t key0,
                                   const sim_time_t *entry)
{
    struct gcl_instance *inst = c->ctx->inst;
    if (!inst->outcomes && !(inst->outcomes = calloc(OUTCOMES_MAX, sizeof *inst->outcomes)))
        return NULL;
    struct gcl_outcome *victim = &inst->outcomes[0];
    for (int i = 0; i < OUTCOMES_MAX; i++) {
        struct gcl_outcome *o = &inst->outcomes[i];
        if (o->n == c->size && o->key0 == key0 && o->ipu0 == c->ipus[0])
            return o;
        if (o->used < victim->used)
            victim = o;
    }
    replay_t r;
    int rc = replay(&r, sh, inst->sim.topo, entry);
    if (rc == 0) {
        free(victim->idle);
        free(victim->exch);
        *victim =
            (struct gcl_outcome){key0, c->ipus[0], c->size, r.idle, r.exch, ++inst->shape_tick};
        r.idle = r.exch = NULL;
    }
    replay_free(&r);
    return rc == 0 ? victim : NULL;
}

gcl_status_t gcl_sim_replay(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                            const sim_time_t *entry, uint64_t key0)
{
    gcl_sim_ipu_t *ipu = &c->ctx->inst->sim.ipus[c->ctx->local_index];
    gcl_shape_t *sh = gcl_shape_acquire(c, algo, a);
    if (!sh)
        return GCL_ERR_NO_HOST_MEMORY;
    struct gcl_outcome *o = outcome(c, sh, key0, entry);
    sim_time_t idle = o ? o->idle[c->rank] : 0, exch = o ? o->exch[c->rank] : 0;
    gcl_shape_release(c);
    sim_stats_advance(&ipu->stats, SIM_ACT_IDLE, idle);
    sim_stats_advance(&ipu->stats, SIM_ACT_EXCHANGE, exch);
    return o ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
}

gcl_status_t gcl_sim_makespan(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                              sim_time_t *makespan)
{
    gcl_shape_t *sh = gcl_shape_acquire(c, algo, a);
    if (!sh)
        return GCL_ERR_NO_HOST_MEMORY;
    replay_t r;
    int rc = replay(&r, sh, c->ctx->inst->sim.topo, NULL);
    *makespan = 0;
    for (int q = 0; rc == 0 && q < r.n; q++)
        *makespan = r.t[q] > *makespan ? r.t[q] : *makespan;
    replay_free(&r);
    gcl_shape_release(c);
    return rc == 0 ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
}
