/* Replaying a call's simulated timeline; see choice/replay.h. */
#include "choice/replay.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/cost/cost.h"

typedef struct {
    sim_time_t send, arrival;
} msg_t;

typedef struct {
    msg_t *m;
    uint32_t head, len, cap;
} fifo_t;

typedef struct {
    const choice_shape_t *sh;
    const sim_topology_t *topo;
    size_t es;
    int n;
    sim_time_t *t, *busy, *idle, *exch; /* [n]: clock, link free, idle and exchange time */
    uint32_t *step, *need;              /* [n]: current step; messages a step takes per peer */
    char *posted;
    fifo_t *fifo; /* [n*n]: messages from p to q, in order */
} replay_t;

static int push(fifo_t *f, msg_t m)
{
    if (f->len == f->cap) {
        uint32_t cap = f->cap ? 2 * f->cap : 8;
        msg_t *nm = realloc(f->m, cap * sizeof *nm);
        if (!nm)
            return -ENOMEM;
        f->m = nm;
        f->cap = cap;
    }
    f->m[f->len++] = m;
    return 0;
}

/* Posts rank Q's sends of its current step. */
static int post(replay_t *r, int q)
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
            d = choice_mult_time(sim_xfer_time(op->count * r->es, route.bandwidth),
                                 r->sh->mult[q][i]);
            lat = route.latency;
        }
        if (r->t[q] + d > r->busy[q])
            r->busy[q] = r->t[q] + d;
        if (push(&r->fifo[(size_t)q * (size_t)r->n + (size_t)op->peer],
                 (msg_t){r->t[q], r->t[q] + lat + d}))
            return -ENOMEM;
    }
    r->posted[q] = 1;
    return 0;
}

/* Whether every message rank Q's current step receives has been sent. */
static int ready(replay_t *r, int q)
{
    const coll_schedule_t *s = &r->sh->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    int ok = 1;
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind == COLL_OP_RECV || op->kind == COLL_OP_RECV_REDUCE) {
            const fifo_t *f = &r->fifo[(size_t)op->peer * (size_t)r->n + (size_t)q];
            ok &= f->len - f->head >= ++r->need[op->peer];
        }
    }
    for (uint32_t i = st->first; i < st->first + st->count; i++)
        if (s->ops[i].peer >= 0)
            r->need[s->ops[i].peer] = 0;
    return ok;
}

/* Completes rank Q's step when all its messages are known; returns 1 if it did. */
static int finish(replay_t *r, int q)
{
    if (!ready(r, q))
        return 0;
    const coll_schedule_t *s = &r->sh->s[q];
    const coll_step_t *st = &s->steps[r->step[q]];
    sim_time_t start = r->t[q], end = r->busy[q], latest = start;
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        if (op->kind != COLL_OP_RECV && op->kind != COLL_OP_RECV_REDUCE)
            continue;
        fifo_t *f = &r->fifo[(size_t)op->peer * (size_t)r->n + (size_t)q];
        msg_t m = f->m[f->head++];
        end = m.arrival > end ? m.arrival : end;
        latest = m.send > latest ? m.send : latest;
    }
    if (end > start) { /* the executor's split: idle until the latest sender sent */
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

static int run(replay_t *r)
{
    for (int progressed = 1; progressed;) {
        progressed = 0;
        for (int q = 0; q < r->n; q++) {
            while (r->step[q] < r->sh->s[q].nsteps) {
                if (!r->posted[q] && post(r, q) != 0)
                    return -ENOMEM;
                if (!finish(r, q))
                    break;
                progressed = 1;
            }
        }
    }
    for (int q = 0; q < r->n; q++)
        if (r->step[q] < r->sh->s[q].nsteps)
            return -EINVAL; /* the schedules do not complete */
    return 0;
}

static void release(replay_t *r)
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

static int replay(replay_t *r, const choice_shape_t *sh, const sim_topology_t *topo,
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
        return -ENOMEM;
    for (size_t q = 0; q < n; q++)
        r->t[q] = entry ? entry[q] : 0;
    return run(r);
}

int choice_replay(const choice_shape_t *sh, const sim_topology_t *t, const sim_time_t *entry,
                  choice_outcome_t *out)
{
    replay_t r;
    memset(out, 0, sizeof *out);
    int rc = replay(&r, sh, t, entry);
    if (rc == 0) {
        *out = (choice_outcome_t){sh->n, r.t, r.idle, r.exch};
        r.t = r.idle = r.exch = NULL;
    }
    release(&r);
    return rc;
}

void choice_outcome_free(choice_outcome_t *o)
{
    free(o->end);
    free(o->idle);
    free(o->exch);
    memset(o, 0, sizeof *o);
}

int choice_makespan(const choice_shape_t *sh, const sim_topology_t *t, sim_time_t *out)
{
    choice_outcome_t o;
    int rc = choice_replay(sh, t, NULL, &o);
    *out = 0;
    for (int q = 0; rc == 0 && q < o.n; q++)
        *out = o.end[q] > *out ? o.end[q] : *out;
    choice_outcome_free(&o);
    return rc;
}
