/* Call shapes for the simulator; see simshape.h. */
#include "simshape.h"

#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum { SHAPES_MAX = 16 };

static void shape_free(gcl_shape_t *sh)
{
    for (int q = 0; sh->s && q < sh->n; q++) {
        coll_schedule_free(&sh->s[q]);
        free(sh->mult ? sh->mult[q] : NULL);
    }
    free(sh->s);
    free(sh->mult);
    free(sh->ipus);
    memset(sh, 0, sizeof *sh);
}

static int same(const gcl_shape_t *sh, const struct gcl_comm *c, const coll_algo_t *algo,
                const coll_args_t *a)
{
    return sh->algo == algo && sh->n == c->size && sh->a.coll == a->coll &&
           sh->a.count == a->count && sh->a.root == a->root && sh->a.elem_size == a->elem_size &&
           sh->a.dtype == a->dtype && sh->a.op == a->op &&
           memcmp(sh->ipus, c->ipus, (size_t)c->size * sizeof(int)) == 0;
}

/* The queue places of every send, step by step: each step's sends in rank order, each taking
 * the next place in the queue of every link on its route; its place is the worst of those. */
static int queue_places(gcl_shape_t *sh, const sim_topology_t *topo)
{
    int nlinks = sim_topology_num_links(topo);
    uint32_t *load = calloc((size_t)(nlinks > 0 ? nlinks : 1), sizeof *load);
    size_t tcap = 1024, nt;
    int *touched = malloc(tcap * sizeof *touched);
    sim_route_t route;
    uint32_t steps = 0;
    for (int q = 0; q < sh->n; q++)
        steps = sh->s[q].nsteps > steps ? sh->s[q].nsteps : steps;
    for (uint32_t st = 0; load && touched && st < steps; st++) {
        nt = 0;
        for (int q = 0; q < sh->n; q++) {
            const coll_schedule_t *s = &sh->s[q];
            if (st >= s->nsteps)
                continue;
            for (uint32_t i = s->steps[st].first; i < s->steps[st].first + s->steps[st].count;
                 i++) {
                if (s->ops[i].kind != COLL_OP_SEND ||
                    sim_topology_route(topo, sh->ipus[q], sh->ipus[s->ops[i].peer], &route))
                    continue;
                uint32_t worst = 1;
                for (int h = 0; h < route.hops; h++) {
                    if (nt == tcap) {
                        int *t = realloc(touched, 2 * tcap * sizeof *touched);
                        if (!t)
                            goto out;
                        touched = t;
                        tcap *= 2;
                    }
                    touched[nt++] = route.links[h];
                    uint32_t place = ++load[route.links[h]];
                    worst = place > worst ? place : worst;
                }
                sh->mult[q][i] = worst;
            }
        }
        for (size_t k = 0; k < nt; k++) /* empty the queues for the next step */
            load[touched[k]] = 0;
    }
out:
    free(touched);
    free(load);
    return load && touched ? 0 : -1;
}

static int build(gcl_shape_t *sh, struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a)
{
    int n = c->size;
    sh->algo = algo;
    sh->a = *a;
    sh->a.node_of = NULL;
    sh->n = n;
    sh->ipus = malloc((size_t)n * sizeof *sh->ipus);
    sh->s = calloc((size_t)n, sizeof *sh->s);
    sh->mult = calloc((size_t)n, sizeof *sh->mult);
    if (!sh->ipus || !sh->s || !sh->mult)
        return -1;
    memcpy(sh->ipus, c->ipus, (size_t)n * sizeof *sh->ipus);
    for (int q = 0; q < n; q++) {
        coll_args_t aq = *a;
        aq.rank = q;
        if (coll_build(algo, &aq, &sh->s[q], NULL) != 0 ||
            !(sh->mult[q] = calloc(sh->s[q].nops + 1, sizeof **sh->mult)))
            return -1;
    }
    return queue_places(sh, c->ctx->inst->sim.topo);
}

gcl_shape_t *gcl_shape_acquire(struct gcl_comm *c, const coll_algo_t *algo, const coll_args_t *a)
{
    struct gcl_instance *inst = c->ctx->inst;
    pthread_mutex_lock(&inst->shape_lock);
    if (!inst->shapes && !(inst->shapes = calloc(SHAPES_MAX, sizeof *inst->shapes))) {
        pthread_mutex_unlock(&inst->shape_lock);
        return NULL;
    }
    gcl_shape_t *victim = &inst->shapes[0];
    for (int i = 0; i < SHAPES_MAX; i++) {
        gcl_shape_t *sh = &inst->shapes[i];
        if (sh->n && same(sh, c, algo, a)) {
            sh->used = ++inst->shape_tick;
            return sh;
        }
        if (!sh->n || (victim->n && sh->used < victim->used))
            victim = sh; /* an empty slot, else the least recently used */
    }
    shape_free(victim);
    if (build(victim, c, algo, a) != 0) {
        shape_free(victim);
        pthread_mutex_unlock(&inst->shape_lock);
        return NULL;
    }
    victim->used = ++inst->shape_tick;
    return victim;
}

void gcl_shape_release(struct gcl_comm *c)
{
    pthread_mutex_unlock(&c->ctx->inst->shape_lock);
}

void gcl_shapes_free(struct gcl_instance *inst)
{
    for (int i = 0; inst->shapes && i < SHAPES_MAX; i++)
        shape_free(&inst->shapes[i]);
    free(inst->shapes);
    inst->shapes = NULL;
}
