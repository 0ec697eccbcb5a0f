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

/* ---- link contention ---- */

struct gcl_simcache {
    const coll_algo_t *algo;
    coll_args_t args; /* the call shape: every field but rank */
    uint32_t *mult;   /* per op of this rank's schedule */
    uint32_t nops;
};

typedef struct {
    uint32_t step;
    int src, dst; /* global IPUs */
    int rank;     /* the sender's rank */
    int32_t op;   /* the send's op index in its schedule */
} flow_t;

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

/* Appends the sends of rank Q's schedule S to FLOWS (grown as needed). */
static int add_flows(const struct gcl_comm *c, const coll_schedule_t *s, int q, flow_t **flows,
                     size_t *n, size_t *cap)
{
    for (uint32_t st = 0; st < s->nsteps; st++) {
        for (uint32_t i = s->steps[st].first; i < s->steps[st].first + s->steps[st].count; i++) {
            if (s->ops[i].kind != COLL_OP_SEND)
                continue;
            if (*n == *cap) {
                size_t ncap = *cap ? *cap * 2 : 1024;
                flow_t *f = realloc(*flows, ncap * sizeof *f);
                if (!f)
                    return -1;
                *flows = f;
                *cap = ncap;
            }
            (*flows)[(*n)++] = (flow_t){st, c->ipus[q], c->ipus[s->ops[i].peer], q, (int32_t)i};
        }
    }
    return 0;
}

static int by_step(const void *a, const void *b)
{
    const flow_t *x = a, *y = b;
    if (x->step != y->step)
        return x->step < y->step ? -1 : 1;
    return x < y ? -1 : x > y; /* keeps rank order within a step: qsort is not stable */
}

/* For every flow of every step, in (rank, op) order: its place in each link's queue; a flow's
 * multiplier is its worst place. Fills MULT[rank][op] for the ranks whose MULT[rank] is set. */
static int queue_places(const sim_topology_t *topo, flow_t *flows, size_t n, uint32_t **mult)
{
    int nlinks = sim_topology_num_links(topo);
    uint32_t *load = calloc((size_t)(nlinks > 0 ? nlinks : 1), sizeof *load);
    if (!load)
        return -1;
    sim_route_t route;
    for (size_t begin = 0; begin < n;) {
        size_t end = begin;
        while (end < n && flows[end].step == flows[begin].step)
            end++;
        for (size_t f = begin; f < end; f++) {
            uint32_t worst = 1;
            if (sim_topology_route(topo, flows[f].src, flows[f].dst, &route) != 0)
                continue;
            for (int h = 0; h < route.hops; h++) {
                uint32_t place = ++load[route.links[h]];
                worst = place > worst ? place : worst;
            }
            if (mult[flows[f].rank])
                mult[flows[f].rank][flows[f].op] = worst;
        }
        for (size_t f = begin; f < end; f++) /* empty the queues for the next step */
            if (sim_topology_route(topo, flows[f].src, flows[f].dst, &route) == 0)
                for (int h = 0; h < route.hops; h++)
                    load[route.links[h]] = 0;
        begin = end;
    }
    free(load);
    return 0;
}

/* The multipliers of this rank's sends for a call shape, built from every rank's schedule. */
static gcl_status_t build_cache(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                                const coll_schedule_t *mine, struct gcl_simcache *cache)
{
    flow_t *flows = NULL;
    size_t n = 0, cap = 0;
    coll_schedule_t tmp;
    coll_schedule_init(&tmp);
    int rc = 0;
    for (int q = 0; rc == 0 && q < c->size; q++) {
        if (q == c->rank) {
            rc = add_flows(c, mine, q, &flows, &n, &cap);
            continue;
        }
        coll_args_t other = *a;
        other.rank = q;
        rc = coll_build(algo, &other, &tmp, NULL) ? -1 : add_flows(c, &tmp, q, &flows, &n, &cap);
    }
    coll_schedule_free(&tmp);
    cache->mult = calloc(mine->nops ? mine->nops : 1, sizeof *cache->mult);
    uint32_t **mult = calloc((size_t)c->size, sizeof *mult);
    if (rc == 0 && cache->mult && mult) {
        mult[c->rank] = cache->mult;
        if (n > 0)
            qsort(flows, n, sizeof *flows, by_step);
        rc = queue_places(c->ctx->inst->sim.topo, flows, n, mult);
    }
    free(mult);
    free(flows);
    return rc == 0 && cache->mult ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
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
    gcl_status_t rc = build_cache(c, algo, a, mine, c->simcache);
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

/* ---- replaying a whole group's timeline (host-direct calls) ---- */

typedef struct {
    sim_time_t send, arrival;
} sim_msg_t;

typedef struct {
    coll_schedule_t *s; /* [n]: every rank's schedule */
    uint32_t **mult;    /* [n][ops]: queue places of the sends */
    size_t es;
    const sim_topology_t *topo;
    const int *ipus;
    int n, me;
    sim_time_t *t, *busy;  /* [n]: step start, and when the step's sends free their links */
    uint32_t *step, *need; /* [n]; need: messages a step takes from each peer */
    char *posted;
    sim_msg_t **fifo; /* [n*n]: messages from p to q, in order */
    uint32_t *head, *len;
    gcl_sim_ipu_t *ipu; /* this IPU, whose steps are charged as they complete */
} replay_t;

static int replay_post(replay_t *r, int q)
{
    const coll_schedule_t *s = &r->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    sim_route_t route;
    r->busy[q] = r->t[q];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_SEND)
            continue;
        sim_time_t d = 0, lat = 0;
        if (sim_topology_route(r->topo, r->ipus[q], r->ipus[op->peer], &route) == 0 &&
            route.hops > 0) {
            uint32_t m = r->mult[q][i] ? r->mult[q][i] : 1;
            d = sim_xfer_time(op->count * r->es, route.bandwidth) * m;
            lat = route.latency;
        }
        if (r->t[q] + d > r->busy[q])
            r->busy[q] = r->t[q] + d;
        size_t k = (size_t)q * (size_t)r->n + (size_t)op->peer;
        sim_msg_t *f = realloc(r->fifo[k], (r->len[k] + 1) * sizeof *f);
        if (!f)
            return -1;
        r->fifo[k] = f;
        f[r->len[k]++] = (sim_msg_t){r->t[q], r->t[q] + lat + d};
    }
    r->posted[q] = 1;
    return 0;
}

/* Completes rank Q's step when all its messages are known; returns 1 if it did. */
static int replay_finish(replay_t *r, int q)
{
    const coll_schedule_t *s = &r->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    int ready = 1;
    for (uint32_t i = st->first; i < st->first + st->count; i++) { /* messages per peer */
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        size_t k = (size_t)op->peer * (size_t)r->n + (size_t)q;
        if (r->len[k] - r->head[k] < ++r->need[op->peer])
            ready = 0;
    }
    for (uint32_t i = st->first; i < st->first + st->count; i++)
        r->need[s->ops[i].peer >= 0 ? s->ops[i].peer : 0] = 0;
    if (!ready)
        return 0;
    sim_time_t end = r->busy[q], latest = r->t[q];
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        size_t k = (size_t)op->peer * (size_t)r->n + (size_t)q;
        sim_msg_t m = r->fifo[k][r->head[k]++];
        end = m.arrival > end ? m.arrival : end;
        latest = m.send > latest ? m.send : latest;
    }
    if (q == r->me && end > r->ipu->stats.clock) { /* the same split as gcl_sim_step_done */
        sim_time_t idle_until = latest < end ? latest : end;
        if (idle_until > r->ipu->stats.clock)
            sim_stats_advance_to(&r->ipu->stats, SIM_ACT_IDLE, idle_until);
        sim_stats_advance_to(&r->ipu->stats, SIM_ACT_EXCHANGE, end);
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
            while (r->step[q] < r->s[q].nsteps) {
                if (!r->posted[q] && replay_post(r, q) != 0)
                    return -1;
                if (!replay_finish(r, q))
                    break;
                progressed = 1;
            }
        }
    }
    return 0;
}

static void replay_free(replay_t *r)
{
    for (int q = 0; r->s && q < r->n; q++) {
        coll_schedule_free(&r->s[q]);
        free(r->mult ? r->mult[q] : NULL);
    }
    for (int k = 0; r->fifo && k < r->n * r->n; k++)
        free(r->fifo[k]);
    free(r->s);
    free(r->mult);
    free(r->t);
    free(r->busy);
    free(r->step);
    free(r->need);
    free(r->posted);
    free(r->fifo);
    free(r->head);
    free(r->len);
}

gcl_status_t gcl_sim_replay(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a,
                            const sim_time_t *entry)
{
    int n = c->size;
    size_t nn = (size_t)n * (size_t)n;
    replay_t r = {.es = a->elem_size,
                  .topo = c->ctx->inst->sim.topo,
                  .ipus = c->ipus,
                  .n = n,
                  .me = c->rank,
                  .ipu = &c->ctx->inst->sim.ipus[c->ctx->local_index]};
    r.s = calloc((size_t)n, sizeof *r.s);
    r.mult = calloc((size_t)n, sizeof *r.mult);
    r.t = malloc((size_t)n * sizeof *r.t);
    r.busy = calloc((size_t)n, sizeof *r.busy);
    r.step = calloc((size_t)n, sizeof *r.step);
    r.need = calloc((size_t)n, sizeof *r.need);
    r.posted = calloc((size_t)n, 1);
    r.fifo = calloc(nn, sizeof *r.fifo);
    r.head = calloc(nn, sizeof *r.head);
    r.len = calloc(nn, sizeof *r.len);
    flow_t *flows = NULL;
    size_t nflows = 0, cap = 0;
    int rc =
        r.s && r.mult && r.t && r.busy && r.step && r.need && r.posted && r.fifo && r.head && r.len
            ? 0
            : -1;
    for (int q = 0; rc == 0 && q < n; q++) {
        coll_args_t aq = *a;
        aq.rank = q;
        r.t[q] = entry[q];
        rc = coll_build(algo, &aq, &r.s[q], NULL) != 0 ||
                     !(r.mult[q] = calloc(r.s[q].nops + 1, sizeof **r.mult))
                 ? -1
                 : add_flows(c, &r.s[q], q, &flows, &nflows, &cap);
    }
    if (rc == 0) {
        if (nflows > 0)
            qsort(flows, nflows, sizeof *flows, by_step);
        rc = queue_places(r.topo, flows, nflows, r.mult);
    }
    if (rc == 0)
        rc = replay_run(&r);
    free(flows);
    replay_free(&r);
    return rc == 0 ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
}
