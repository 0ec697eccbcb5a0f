/* Call shapes; see choice/shape.h. */
#include "choice/shape.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void choice_shape_free(choice_shape_t *sh)
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

int choice_same_call(const coll_args_t *x, const coll_args_t *y)
{
    return x->coll == y->coll && x->nranks == y->nranks && x->count == y->count &&
           x->root == y->root && x->elem_size == y->elem_size && x->dtype == y->dtype &&
           x->op == y->op && x->chunk_bytes == y->chunk_bytes;
}

int choice_shape_is(const choice_shape_t *sh, const coll_algo_t *algo, const coll_args_t *a,
                    const int *ipus)
{
    return sh->algo == algo && sh->n == a->nranks && choice_same_call(&sh->a, a) &&
           memcmp(sh->ipus, ipus, (size_t)sh->n * sizeof *ipus) == 0;
}

uint64_t choice_call_hash(const coll_args_t *a, const int *ipus)
{
    uint64_t v[] = {(uint64_t)a->coll, (uint64_t)a->nranks, a->count,       (uint64_t)a->root,
                    a->elem_size,      (uint64_t)a->dtype,  (uint64_t)a->op};
    uint64_t h = 1469598103934665603ull; /* FNV-1a over the fields, then the IPUs */
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        h = (h ^ v[i]) * 1099511628211ull;
    for (int q = 0; q < a->nranks; q++)
        h = (h ^ (uint64_t)(uint32_t)ipus[q]) * 1099511628211ull;
    return h;
}

/* Link loads of one step, emptied between steps by undoing only what the step touched. */
typedef struct {
    uint32_t *load;
    int *touched;
    size_t nt, cap;
} loads_t;

static int touch(loads_t *l, int link, uint32_t *place)
{
    if (l->nt == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 1024;
        int *t = realloc(l->touched, cap * sizeof *t);
        if (!t)
            return -ENOMEM;
        l->touched = t;
        l->cap = cap;
    }
    l->touched[l->nt++] = link;
    *place = ++l->load[link];
    return 0;
}

/* The multipliers of step ST's sends: each send, in rank order, takes the next place in the
 * queue of every link of its route. A send in place p of a link of bandwidth W_h is done after
 * p sends' worth of bytes crossed that link, p x B / W_h; its multiplier is the worst of these
 * over its route, over its own time B / W at the route's bottleneck W: max_h p_h x W / W_h (in
 * thousandths, at least one). With links of one bandwidth this is the worst place; a link that
 * several sends share but that is far faster than each one's own bottleneck (a gateway's
 * GW-Link behind its IPUs' own hops) slows none of them. */
static int step_places(choice_shape_t *sh, const sim_topology_t *t, loads_t *l, uint32_t st)
{
    sim_route_t route;
    for (int q = 0; q < sh->n; q++) {
        const coll_schedule_t *s = &sh->s[q];
        if (st >= s->nsteps)
            continue;
        for (uint32_t i = s->steps[st].first; i < s->steps[st].first + s->steps[st].count; i++) {
            if (s->ops[i].kind != COLL_OP_SEND ||
                sim_topology_route(t, sh->ipus[q], sh->ipus[s->ops[i].peer], &route))
                continue;
            uint64_t worst = CHOICE_MULT_ONE;
            uint32_t place;
            for (int h = 0; h < route.hops; h++) {
                sim_link_info_t link;
                if (touch(l, route.links[h], &place))
                    return -ENOMEM;
                if (sim_topology_link(t, route.links[h], &link) != 0 || link.bandwidth == 0)
                    continue;
                uint64_t m = ((uint64_t)place * CHOICE_MULT_ONE * (route.bandwidth / 1000) +
                              link.bandwidth / 1000 - 1) /
                             (link.bandwidth / 1000 ? link.bandwidth / 1000 : 1);
                worst = m > worst ? m : worst;
            }
            sh->mult[q][i] = worst > UINT32_MAX ? UINT32_MAX : (uint32_t)worst;
        }
    }
    for (size_t k = 0; k < l->nt; k++)
        l->load[l->touched[k]] = 0;
    l->nt = 0;
    return 0;
}

static int queue_places(choice_shape_t *sh, const sim_topology_t *t)
{
    int nlinks = sim_topology_num_links(t);
    loads_t l = {.load = calloc((size_t)(nlinks > 0 ? nlinks : 1), sizeof(uint32_t))};
    uint32_t steps = 0;
    int rc = l.load ? 0 : -ENOMEM;
    for (int q = 0; q < sh->n; q++)
        steps = sh->s[q].nsteps > steps ? sh->s[q].nsteps : steps;
    for (uint32_t st = 0; rc == 0 && st < steps; st++)
        rc = step_places(sh, t, &l, st);
    free(l.touched);
    free(l.load);
    return rc;
}

int *choice_pod_nodes(const sim_topology_t *t, const int *ipus, int n)
{
    int *nodes = malloc((size_t)(n > 0 ? n : 1) * sizeof *nodes);

    for (int q = 0; nodes && q < n; q++) {
        if (ipus[q] < 0 || ipus[q] >= sim_topology_num_ipus(t)) {
            free(nodes);
            return NULL;
        }
        nodes[q] = sim_topology_ild_of(t, ipus[q]);
    }
    return nodes;
}

int choice_shape_build(choice_shape_t *sh, const sim_topology_t *t, const coll_algo_t *algo,
                       const coll_args_t *a, const int *ipus)
{
    int n = a->nranks;
    int *nodes = choice_pod_nodes(t, ipus, n);
    memset(sh, 0, sizeof *sh);
    sh->algo = algo;
    sh->a = *a;
    sh->a.node_of = NULL;
    sh->a.host_of = NULL;
    sh->a.rank = 0;
    sh->n = n;
    sh->ipus = malloc((size_t)n * sizeof *sh->ipus);
    sh->s = calloc((size_t)n, sizeof *sh->s);
    sh->mult = calloc((size_t)n, sizeof *sh->mult);
    int rc = sh->ipus && sh->s && sh->mult ? 0 : -ENOMEM;
    for (int q = 0; rc == 0 && q < n; q++)
        if (ipus[q] < 0 || ipus[q] >= sim_topology_num_ipus(t))
            rc = -EINVAL; /* an IPU the pod does not have */
    if (rc == 0 && !nodes)
        rc = -ENOMEM;
    if (rc == 0)
        memcpy(sh->ipus, ipus, (size_t)n * sizeof *sh->ipus);
    for (int q = 0; rc == 0 && q < n; q++) {
        coll_args_t aq = *a;
        aq.rank = q;
        aq.node_of = nodes;
        aq.host_of = NULL;
        rc = coll_build(algo, &aq, &sh->s[q], NULL);
        if (rc == 0 && !(sh->mult[q] = calloc(sh->s[q].nops + 1, sizeof **sh->mult)))
            rc = -ENOMEM;
    }
    if (rc == 0)
        rc = queue_places(sh, t);
    free(nodes);
    if (rc != 0)
        choice_shape_free(sh);
    return rc < 0 ? rc : 0;
}
