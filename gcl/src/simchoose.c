/*
 * The automatic choice of algorithm by the cost model: every algorithm that can run the call is
 * replayed on the simulated pod over the group's IPUs (simcost.c), and the fastest is taken.
 * The result is a pure function of the call's shape, the group's IPUs and the topology, so every
 * rank of the group picks the same algorithm without talking. The evaluations are cached per
 * instance (its IPU threads share them).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec.h"
#include "log.h"

enum { CHOICES_MAX = 256 };

struct gcl_choice {
    coll_args_t shape; /* rank and node_of ignored */
    int *ipus;         /* the group's IPUs, in rank order */
    const coll_algo_t *algo;
    char why[200];
};

static int same(const struct gcl_choice *ch, const struct gcl_comm *c, const coll_args_t *a)
{
    const coll_args_t *s = &ch->shape;
    return s->coll == a->coll && s->nranks == a->nranks && s->count == a->count &&
           s->root == a->root && s->elem_size == a->elem_size && s->dtype == a->dtype &&
           s->op == a->op && memcmp(ch->ipus, c->ipus, (size_t)c->size * sizeof(int)) == 0;
}

/* Replays every candidate and keeps the fastest (the first, on a tie). */
static const coll_algo_t *evaluate(struct gcl_comm *c, const coll_args_t *a, char *why, size_t len)
{
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(a->coll, &n);
    const coll_algo_t *best = NULL;
    sim_time_t best_t = 0, t;
    int tried = 0;
    for (size_t i = 0; i < n; i++) {
        const char *no = NULL;
        if (list[i]->supports && list[i]->supports(a, &no) != 0)
            continue;
        if (gcl_sim_makespan(c, list[i], a, &t) != GCL_OK)
            continue;
        tried++;
        if (!best || t < best_t) {
            best = list[i];
            best_t = t;
        }
    }
    if (best)
        snprintf(why, len, "%s (simulated %.3f us on %s, fastest of %d algorithms)", best->name,
                 (double)best_t * 1e-6, sim_topology_name(c->ctx->inst->sim.topo), tried);
    return best;
}

const coll_algo_t *gcl_sim_choose(struct gcl_comm *c, const coll_args_t *a, char *why, size_t len)
{
    struct gcl_instance *inst = c->ctx->inst;
    const coll_algo_t *algo = NULL;
    pthread_mutex_lock(&inst->lock);
    for (int i = 0; i < inst->nchoices && !algo; i++) {
        if (same(&inst->choices[i], c, a)) {
            algo = inst->choices[i].algo;
            snprintf(why, len, "%s", inst->choices[i].why);
        }
    }
    if (!algo && (algo = evaluate(c, a, why, len)) != NULL) {
        if (!inst->choices)
            inst->choices = calloc(CHOICES_MAX, sizeof *inst->choices);
        int slot = inst->nchoices < CHOICES_MAX ? inst->nchoices++ : (int)(a->count % CHOICES_MAX);
        struct gcl_choice *ch = inst->choices ? &inst->choices[slot] : NULL;
        int *ipus = ch ? malloc((size_t)c->size * sizeof *ipus) : NULL;
        if (ipus) {
            free(ch->ipus);
            memcpy(ipus, c->ipus, (size_t)c->size * sizeof *ipus);
            *ch = (struct gcl_choice){*a, ipus, algo, ""};
            snprintf(ch->why, sizeof ch->why, "%s", why);
        } else if (ch && slot == inst->nchoices - 1) {
            inst->nchoices--; /* out of memory: just do not cache it */
        }
    }
    pthread_mutex_unlock(&inst->lock);
    return algo;
}

void gcl_sim_choices_free(struct gcl_instance *inst)
{
    for (int i = 0; inst->choices && i < inst->nchoices; i++)
        free(inst->choices[i].ipus);
    free(inst->choices);
    inst->choices = NULL;
    inst->nchoices = 0;
}
