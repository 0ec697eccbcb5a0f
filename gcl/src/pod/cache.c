/* The instance's caches around the choice layer; see cache.h. */
#include "pod/cache.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "choice/choose.h"
#include "choice/replay.h"
#include "base/alloc.h"

enum { SHAPES_MAX = 16, CHOICES_MAX = 512, OUTCOMES_MAX = 8 };
enum { EMPTY, BUILDING, READY };

typedef struct {
    int state, refs, private_;
    uint64_t hash, id, used;
    const coll_algo_t *algo; /* the key, valid from BUILDING on */
    coll_args_t a;
    int *ipus;
    choice_shape_t sh; /* valid when READY */
} shape_slot_t;

typedef struct {
    uint64_t hash;
    coll_args_t a;
    int *ipus; /* NULL: the slot is free */
    int state; /* BUILDING while one thread evaluates it (the others wait), then READY */
    const coll_algo_t *algo; /* READY: the pick, or NULL when the evaluation failed */
    char why[200];
} choice_slot_t;

typedef struct {
    uint64_t shape_id; /* 0: empty */
    int n;
    sim_time_t *offsets, *idle, *exch;
    uint64_t used;
} outcome_slot_t;

struct gcl_simcache {
    pthread_mutex_t lock;
    pthread_cond_t built;
    uint64_t tick, next_id;
    shape_slot_t shapes[SHAPES_MAX];
    choice_slot_t *choices; /* [CHOICES_MAX], open addressing */
    int nchoices;
    outcome_slot_t outcomes[OUTCOMES_MAX];
};

gcl_status_t gcl_simcache_create(gcl_simcache_t **out)
{
    gcl_simcache_t *c = gcl_calloc(1, sizeof *c);
    if (!c || !(c->choices = gcl_calloc(CHOICES_MAX, sizeof *c->choices))) {
        free(c);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->built, NULL);
    c->next_id = 1;
    *out = c;
    return GCL_OK;
}

static void slot_free(shape_slot_t *s)
{
    choice_shape_free(&s->sh);
    free(s->ipus);
    memset(s, 0, sizeof *s);
}

void gcl_simcache_destroy(gcl_simcache_t *c)
{
    if (!c)
        return;
    for (int i = 0; i < SHAPES_MAX; i++)
        slot_free(&c->shapes[i]);
    for (int i = 0; i < CHOICES_MAX; i++)
        free(c->choices[i].ipus);
    for (int i = 0; i < OUTCOMES_MAX; i++) {
        free(c->outcomes[i].offsets);
        free(c->outcomes[i].idle);
        free(c->outcomes[i].exch);
    }
    free(c->choices);
    pthread_cond_destroy(&c->built);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

/* ---- shapes ---- */

static int slot_is(const shape_slot_t *s, uint64_t hash, const coll_algo_t *algo,
                   const coll_args_t *a, const int *ipus)
{
    return s->state != EMPTY && s->hash == hash && s->algo == algo && choice_same_call(&s->a, a) &&
           memcmp(s->ipus, ipus, (size_t)a->nranks * sizeof *ipus) == 0;
}

/* An empty slot, else the least recently used one nobody holds; NULL when all are held. */
static shape_slot_t *victim(gcl_simcache_t *c)
{
    shape_slot_t *v = NULL;
    for (int i = 0; i < SHAPES_MAX; i++) {
        shape_slot_t *s = &c->shapes[i];
        if (s->state == EMPTY)
            return s;
        if (s->state == READY && s->refs == 0 && (!v || s->used < v->used))
            v = s;
    }
    if (v)
        slot_free(v);
    return v;
}

/* Claims a slot for the key (the lock held): a slot of the cache, or a private one when every
 * slot is held. */
static shape_slot_t *claim(gcl_simcache_t *c, uint64_t hash, const coll_algo_t *algo,
                           const coll_args_t *a, const int *ipus)
{
    shape_slot_t *s = victim(c);
    int *copy = gcl_malloc((size_t)a->nranks * sizeof *copy);
    if (!s && copy && (s = gcl_calloc(1, sizeof *s)))
        s->private_ = 1;
    if (!s || !copy) {
        if (s && s->private_)
            free(s);
        free(copy);
        return NULL;
    }
    memcpy(copy, ipus, (size_t)a->nranks * sizeof *copy);
    s->state = BUILDING;
    s->refs = 1;
    s->hash = hash;
    s->algo = algo;
    s->a = *a;
    s->a.node_of = s->a.host_of = NULL;
    s->ipus = copy;
    return s;
}

const choice_shape_t *gcl_simcache_shape(gcl_simcache_t *c, const sim_topology_t *t,
                                         const coll_algo_t *algo, const coll_args_t *a,
                                         const int *ipus)
{
    uint64_t hash = choice_call_hash(a, ipus);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < SHAPES_MAX; i++) {
        shape_slot_t *s = &c->shapes[i];
        if (!slot_is(s, hash, algo, a, ipus))
            continue;
        while (s->state == BUILDING)
            pthread_cond_wait(&c->built, &c->lock);
        if (s->state == READY && slot_is(s, hash, algo, a, ipus)) {
            s->refs++;
            s->used = ++c->tick;
            pthread_mutex_unlock(&c->lock);
            return &s->sh;
        }
        i = -1; /* the slot changed while we waited: look again */
    }
    shape_slot_t *s = claim(c, hash, algo, a, ipus);
    pthread_mutex_unlock(&c->lock);
    if (!s)
        return NULL;
    int rc = choice_shape_build(&s->sh, t, algo, a, ipus);
    pthread_mutex_lock(&c->lock);
    if (rc == 0) {
        s->state = READY;
        s->id = c->next_id++;
        s->used = ++c->tick;
    } else if (s->private_) {
        free(s->ipus);
        free(s);
        s = NULL;
    } else {
        slot_free(s);
        s = NULL;
    }
    pthread_cond_broadcast(&c->built);
    pthread_mutex_unlock(&c->lock);
    return s ? &s->sh : NULL;
}

static shape_slot_t *slot_of(const choice_shape_t *sh)
{
    return (shape_slot_t *)((char *)sh - offsetof(shape_slot_t, sh));
}

void gcl_simcache_release(gcl_simcache_t *c, const choice_shape_t *sh)
{
    if (!sh)
        return;
    shape_slot_t *s = slot_of(sh);
    pthread_mutex_lock(&c->lock);
    int gone = --s->refs == 0 && s->private_;
    pthread_mutex_unlock(&c->lock);
    if (gone) {
        choice_shape_free(&s->sh);
        free(s->ipus);
        free(s);
    }
}

/* Puts the winner's shape, already built, into the cache (the lock held); frees it if there is
 * no room or the shape is there already. */
static void adopt(gcl_simcache_t *c, choice_shape_t *sh, const int *ipus)
{
    uint64_t hash = choice_call_hash(&sh->a, ipus);
    for (int i = 0; i < SHAPES_MAX; i++)
        if (slot_is(&c->shapes[i], hash, sh->algo, &sh->a, ipus)) {
            choice_shape_free(sh);
            return;
        }
    shape_slot_t *s = victim(c);
    int *copy = s ? gcl_malloc((size_t)sh->n * sizeof *copy) : NULL;
    if (!copy) {
        choice_shape_free(sh);
        return;
    }
    memcpy(copy, ipus, (size_t)sh->n * sizeof *copy);
    *s = (shape_slot_t){.state = READY,
                        .hash = hash,
                        .id = c->next_id++,
                        .used = ++c->tick,
                        .algo = sh->algo,
                        .a = sh->a,
                        .ipus = copy,
                        .sh = *sh};
}

/* ---- choices ---- */

static choice_slot_t *find_choice(gcl_simcache_t *c, uint64_t hash, const coll_args_t *a,
                                  const int *ipus, int *free_at)
{
    *free_at = -1;
    for (int k = 0; k < CHOICES_MAX; k++) {
        int i = (int)((hash + (uint64_t)k) % CHOICES_MAX);
        choice_slot_t *s = &c->choices[i];
        if (!s->ipus) {
            *free_at = i;
            return NULL;
        }
        if (s->hash == hash && choice_same_call(&s->a, a) &&
            memcmp(s->ipus, ipus, (size_t)a->nranks * sizeof *ipus) == 0)
            return s;
    }
    return NULL;
}

/* Claims the free slot AT for the key (the lock held), marked BUILDING; NULL when the table
 * is full enough that later calls evaluate again (the same answer) or out of memory. */
static choice_slot_t *claim_choice(gcl_simcache_t *c, int at, uint64_t hash, const coll_args_t *a,
                                   const int *ipus)
{
    if (at < 0 || c->nchoices >= CHOICES_MAX * 3 / 4)
        return NULL;
    int *copy = gcl_malloc((size_t)a->nranks * sizeof *copy);
    if (!copy)
        return NULL;
    memcpy(copy, ipus, (size_t)a->nranks * sizeof *copy);
    choice_slot_t *s = &c->choices[at];
    *s = (choice_slot_t){.hash = hash, .a = *a, .ipus = copy, .state = BUILDING};
    s->a.node_of = s->a.host_of = NULL;
    c->nchoices++;
    return s;
}

/* Evaluates the choice for A (without the lock) and publishes it in S, if there is one. */
static const coll_algo_t *evaluate(gcl_simcache_t *c, choice_slot_t *s, const sim_topology_t *t,
                                   const coll_args_t *a, const int *ipus, char *why, size_t len)
{
    choice_t ch;
    choice_shape_t winner;
    int rc = choice_choose(t, a, ipus, &ch, &winner, why, len);
    pthread_mutex_lock(&c->lock);
    if (rc == 0)
        adopt(c, &winner, ipus);
    if (s) {
        s->algo = rc == 0 ? ch.algo : NULL;
        snprintf(s->why, sizeof s->why, "%s", why);
        s->state = READY;
        pthread_cond_broadcast(&c->built);
    }
    pthread_mutex_unlock(&c->lock);
    return rc == 0 ? ch.algo : NULL;
}

const coll_algo_t *gcl_simcache_choose(gcl_simcache_t *c, const sim_topology_t *t,
                                       const coll_args_t *a, const int *ipus, char *why, size_t len)
{
    uint64_t hash = choice_call_hash(a, ipus);
    int at;
    pthread_mutex_lock(&c->lock);
    choice_slot_t *s = find_choice(c, hash, a, ipus, &at);
    /* One thread evaluates a new shape; the instance's others wait for its answer. */
    while (s && s->state == BUILDING)
        pthread_cond_wait(&c->built, &c->lock);
    if (s && s->algo) {
        const coll_algo_t *algo = s->algo;
        snprintf(why, len, "%s", s->why);
        pthread_mutex_unlock(&c->lock);
        return algo;
    }
    /* A slot whose evaluation failed (out of memory) is not reused: evaluate again, uncached. */
    s = s ? NULL : claim_choice(c, at, hash, a, ipus);
    pthread_mutex_unlock(&c->lock);
    return evaluate(c, s, t, a, ipus, why, len);
}

/* ---- replays ---- */

static outcome_slot_t *find_outcome(gcl_simcache_t *c, uint64_t id, int n,
                                    const sim_time_t *offsets)
{
    for (int i = 0; i < OUTCOMES_MAX; i++) {
        outcome_slot_t *o = &c->outcomes[i];
        if (o->shape_id == id && o->n == n &&
            memcmp(o->offsets, offsets, (size_t)n * sizeof *offsets) == 0)
            return o;
    }
    return NULL;
}

static void keep_outcome(gcl_simcache_t *c, uint64_t id, sim_time_t *offsets, choice_outcome_t *r)
{
    outcome_slot_t *v = &c->outcomes[0];
    for (int i = 1; i < OUTCOMES_MAX; i++)
        if (c->outcomes[i].used < v->used)
            v = &c->outcomes[i];
    free(v->offsets);
    free(v->idle);
    free(v->exch);
    *v = (outcome_slot_t){id, r->n, offsets, r->idle, r->exch, ++c->tick};
    r->idle = r->exch = NULL;
}

gcl_status_t gcl_simcache_replay(gcl_simcache_t *c, const sim_topology_t *t,
                                 const coll_algo_t *algo, const coll_args_t *a, const int *ipus,
                                 const sim_time_t *entry, int rank, sim_time_t *idle,
                                 sim_time_t *exch)
{
    const choice_shape_t *sh = gcl_simcache_shape(c, t, algo, a, ipus);
    int n = a->nranks;
    sim_time_t *offsets = sh ? gcl_malloc((size_t)n * sizeof *offsets) : NULL;
    if (!offsets) {
        gcl_simcache_release(c, sh);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    sim_time_t lo = entry[0];
    for (int q = 1; q < n; q++)
        lo = entry[q] < lo ? entry[q] : lo;
    for (int q = 0; q < n; q++)
        offsets[q] = entry[q] - lo;
    uint64_t id = slot_of(sh)->id;
    pthread_mutex_lock(&c->lock);
    outcome_slot_t *o = id ? find_outcome(c, id, n, offsets) : NULL;
    if (o) {
        *idle = o->idle[rank];
        *exch = o->exch[rank];
        o->used = ++c->tick;
    }
    pthread_mutex_unlock(&c->lock);
    gcl_status_t rc = GCL_OK;
    if (!o) {
        choice_outcome_t r;
        rc = choice_replay(sh, t, offsets, &r) == 0 ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
        if (rc == GCL_OK) {
            *idle = r.idle[rank];
            *exch = r.exch[rank];
            pthread_mutex_lock(&c->lock);
            if (id && !find_outcome(c, id, n, offsets)) {
                keep_outcome(c, id, offsets, &r);
                offsets = NULL;
            }
            pthread_mutex_unlock(&c->lock);
            choice_outcome_free(&r);
        }
    }
    free(offsets);
    gcl_simcache_release(c, sh);
    return rc;
}
