/* Elastic training; see elastic.h. */
#include "stages/elastic.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/popdist.h"
#include "gcl/preempt.h"
#include "pipeline/share.h"

#define TAG_ELASTIC 3
#define MAX_CHANGES 64

/* One local IPU's state in host memory: weights then optimizer state, (1 + nstate) x np. */
typedef struct {
    float *cur, *prev;
    size_t np;
    long applied; /* steps applied to CUR */
    long prev_at; /* steps applied to PREV (-1: none) */
    long live;    /* steps applied to the stage's weights in the run under way */
    int have;     /* CUR holds a state */
} saved_t;

typedef struct {
    long step; /* the first step of the new membership (-1 until known) */
    int epoch, instances, replicas, nlost, njoined;
    int lost[GCL_ELASTIC_LIST_MAX], joined[GCL_ELASTIC_LIST_MAX];
    double wall_s; /* since the start of the process */
} change_t;

struct train_elastic {
    int on, epoch, slot;
    int replica_offset, nlocal;
    saved_t *saved; /* [nlocal] */
    int leaving;    /* a run returned at a step boundary to take a replacement in */
    long join_at[8]; /* $TRAIN_ELASTIC_JOIN_AT (steps), or none */
    int njoin_at;
    change_t changes[MAX_CHANGES];
    int nchanges;
    int announced; /* changes the printer has said */
    int first_step_said;
};

int train_elastic_on(const train_job_t *job)
{
    return job->el && job->el->on;
}

int train_elastic_changed(const train_job_t *job)
{
    return train_elastic_on(job) && job->el->epoch > 0;
}

int train_elastic_leaving(const train_job_t *job)
{
    return train_elastic_on(job) && job->el->leaving;
}

/* $TRAIN_ELASTIC_JOIN_AT: steps separated by commas, "12" or "12,40". */
static void parse_join_at(struct train_elastic *el, const char *at)
{
    el->njoin_at = 0;
    while (at && *at && el->njoin_at < (int)(sizeof el->join_at / sizeof el->join_at[0])) {
        char *end;
        long s = strtol(at, &end, 10);
        if (end == at || s < 0)
            break;
        el->join_at[el->njoin_at++] = s;
        at = *end == ',' ? end + 1 : end;
    }
}

/* Whether STEP is one of $TRAIN_ELASTIC_JOIN_AT's. */
static int joins_at(const struct train_elastic *el, long step)
{
    for (int i = 0; i < el->njoin_at; i++)
        if (el->join_at[i] == step)
            return 1;
    return 0;
}

int train_elastic_init(train_job_t *job, gcl_instance_t inst)
{
    gcl_elastic_info_t e;
    if (gcl_elastic_info(inst, &e) != GCL_OK)
        return 0;
    struct train_elastic *el = calloc(1, sizeof *el);
    int n = e.num_local_replicas * job->stages;
    if (!el || !(el->saved = calloc((size_t)n, sizeof *el->saved))) {
        free(el);
        fprintf(stderr, "train: out of host memory\n");
        return 1;
    }
    el->on = 1;
    el->epoch = e.epoch;
    el->slot = e.slot;
    el->replica_offset = e.replica_offset;
    el->nlocal = n;
    parse_join_at(el, getenv("TRAIN_ELASTIC_JOIN_AT"));
    for (int k = 0; k < n; k++)
        el->saved[k].prev_at = -1;
    job->el = el;
    return 0;
}

void train_elastic_free(train_job_t *job)
{
    struct train_elastic *el = job->el;
    if (!el)
        return;
    for (int k = 0; k < el->nlocal; k++) {
        free(el->saved[k].cur);
        free(el->saved[k].prev);
    }
    free(el->saved);
    free(el);
    job->el = NULL;
}

static saved_t *slot_of(stage_t *st)
{
    struct train_elastic *el = st->job->el;
    int k = (st->replica - el->replica_offset) * st->job->stages + st->stage;
    return k >= 0 && k < el->nlocal ? &el->saved[k] : NULL;
}

/* Copies the stage's weights and optimizer state into DST, or back from SRC. */
static void copy_out(const stage_t *st, float *dst)
{
    memcpy(dst, st->params, st->np * sizeof(float));
    for (int v = 0; v < st->job->nstate; v++)
        memcpy(dst + (size_t)(v + 1) * st->np, st->state[v], st->np * sizeof(float));
}

static void copy_in(stage_t *st, const float *src)
{
    memcpy(st->params, src, st->np * sizeof(float));
    for (int v = 0; v < st->job->nstate; v++)
        memcpy(st->state[v], src + (size_t)(v + 1) * st->np, st->np * sizeof(float));
}

static float *alloc_copy(const stage_t *st, float **p)
{
    if (!*p)
        *p = malloc((1 + (size_t)st->job->nstate) * st->np * sizeof(float));
    return *p;
}

/* The smallest X over the stages of this replica (point-to-point down the pipeline and back). */
static gcl_status_t min_over_stages(stage_t *st, int64_t *x)
{
    int k = st->stage, last = st->job->stages - 1;
    int64_t in;
    if (k > 0) {
        GCL_CHECK(gcl_recv(st->ctx, k - 1, &in, 1, GCL_I64, TAG_ELASTIC));
        *x = in < *x ? in : *x;
    }
    if (k < last) {
        GCL_CHECK(gcl_send(st->ctx, k + 1, x, 1, GCL_I64, TAG_ELASTIC));
        GCL_CHECK(gcl_recv(st->ctx, k + 1, x, 1, GCL_I64, TAG_ELASTIC));
    }
    if (k > 0)
        GCL_CHECK(gcl_send(st->ctx, k - 1, x, 1, GCL_I64, TAG_ELASTIC));
    return GCL_OK;
}

/* T: the last step every stage has applied somewhere (each stage's newest, at most). */
static gcl_status_t agree_step(stage_t *st, const saved_t *s, int64_t *T)
{
    int64_t v[2] = {s->have ? s->applied : -1, s->have ? -s->applied : INT64_MIN};
    GCL_CHECK(gcl_all_reduce(st->comm, v, v, 2, GCL_I64, GCL_MAX));
    *T = v[0];
    return min_over_stages(st, T);
}

/* Broadcasts the stage's state of step T from the lowest replica that holds it (its current
 * state, else its copy from before the update). */
static gcl_status_t share_state(stage_t *st, saved_t *s, int64_t T)
{
    int64_t R = gcl_ctx_num_replicas(st->ctx), r = st->replica;
    int64_t src = s->have && s->applied == T ? r : s->have && s->prev_at == T ? R + r : INT64_MAX;
    GCL_CHECK(gcl_all_reduce(st->comm, &src, &src, 1, GCL_I64, GCL_MIN));
    if (src == INT64_MAX) {
        train_fail(st->job,
                   "elastic: no replica holds the state of pipeline stage %d after step %lld; "
                   "the job cannot go on from memory",
                   st->stage, (long long)T);
        return GCL_ERR_INTERNAL;
    }
    int root = (int)(src % R);
    if (r == root && src >= R)
        copy_in(st, s->prev); /* ahead by one step: back to T */
    GCL_CHECK(gcl_broadcast(st->comm, st->params, st->params, st->np, GCL_F32, root));
    for (int v = 0; v < st->job->nstate; v++)
        GCL_CHECK(gcl_broadcast(st->comm, st->state[v], st->state[v], st->np, GCL_F32, root));
    return GCL_OK;
}

static void say_change(stage_t *st, long T);

gcl_status_t train_elastic_restore(stage_t *st, long *start, int *restored)
{
    struct train_elastic *el = st->job->el;
    *restored = 0;
    if (!el || !el->on || el->epoch == 0)
        return GCL_OK;
    saved_t *s = slot_of(st);
    if (!s)
        return GCL_ERR_INTERNAL;
    if (s->have)
        copy_in(st, s->cur);
    int64_t T;
    gcl_status_t rc = agree_step(st, s, &T);
    if (rc == GCL_OK && T < 0) {
        train_fail(st->job, "elastic: no replica holds the model's state");
        return GCL_ERR_INTERNAL;
    }
    if (rc == GCL_OK)
        rc = share_state(st, s, T);
    if (rc != GCL_OK) {
        train_fail(st->job, "replica %d IPU %d: elastic: agreeing on the state failed: %s",
                   st->replica, st->stage, gcl_last_error(st->comm));
        return rc;
    }
    s->live = T;
    s->prev_at = -1;
    st->el_valid = 1;
    *start = T;
    *restored = 1;
    say_change(st, T);
    return GCL_OK;
}

void train_elastic_before_step(stage_t *st, long step)
{
    if (!train_elastic_on(st->job) || st->job->stages == 1)
        return;
    saved_t *s = slot_of(st);
    if (s && alloc_copy(st, &s->prev)) {
        copy_out(st, s->prev);
        s->prev_at = step;
    }
}

void train_elastic_applied(stage_t *st, long applied)
{
    saved_t *s = train_elastic_on(st->job) ? slot_of(st) : NULL;
    if (s)
        s->live = applied;
    st->el_valid = 1;
}

void train_elastic_save(stage_t *st)
{
    saved_t *s = train_elastic_on(st->job) && st->params ? slot_of(st) : NULL;
    if (!s || !st->el_valid || !alloc_copy(st, &s->cur))
        return;
    copy_out(st, s->cur);
    s->np = st->np;
    s->applied = s->live;
    s->have = 1;
}

int train_elastic_boundary(stage_t *st, long step, gcl_status_t *rc)
{
    struct train_elastic *el = st->job->el;
    *rc = GCL_OK;
    if (!el || !el->on)
        return 0;
    int pending = gcl_elastic_pending(st->ctx);
    if (el->njoin_at > 0) {
        /* Tests: a replacement is taken in at steps S only, and waited for there when the job
         * is smaller than it started (there is a lost instance to replace). */
        if (!joins_at(el, step) || gcl_ctx_num_replicas(st->ctx) >= st->job->replicas)
            return 0;
        struct timespec nap = {0, 20 * 1000 * 1000};
        for (int i = 0; !pending && i < 30000; i++) { /* 10 min */
            int sig;
            nanosleep(&nap, NULL);
            if ((*rc = gcl_preempt_agree(st->ctx, &sig)) != GCL_OK)
                return 0;
            pending = gcl_elastic_pending(st->ctx);
        }
    }
    if (pending) {
        pthread_mutex_lock(&st->job->lock);
        el->leaving = 1;
        pthread_mutex_unlock(&st->job->lock);
    }
    return pending;
}

int train_fault_here(const stage_t *st)
{
    const train_job_t *job = st->job;
    unsigned long long mask = job->o->fault_instances ? job->o->fault_instances : 1;
    gcl_job_info_t info;
    gcl_instance_info(gcl_ctx_instance(st->ctx), &info);
    int slot = job->el ? job->el->slot : info.instance_index;
    if (popdist_restart_count() > 0)
        return 0; /* the job's first run only: a restarted job does not fail again */
    return slot < 64 && (mask >> slot & 1) && st->replica == info.replica_offset && st->stage == 0;
}

/* Records the change the resize made (its step is known once the next run agrees on it). */
static void record(train_job_t *job, const gcl_elastic_info_t *e)
{
    struct train_elastic *el = job->el;
    if (el->nchanges == MAX_CHANGES)
        return;
    change_t *c = &el->changes[el->nchanges++];
    memset(c, 0, sizeof *c);
    c->step = -1;
    c->epoch = e->epoch;
    c->instances = e->num_instances;
    c->replicas = e->num_replicas;
    c->nlost = e->num_lost;
    c->njoined = e->num_joined;
    memcpy(c->lost, e->lost, sizeof c->lost);
    memcpy(c->joined, e->joined_slots, sizeof c->joined);
    c->wall_s = train_now_s() - job->t0;
}

static void list(char *buf, size_t len, const int *v, int n)
{
    buf[0] = '\0';
    for (int i = 0; i < n && i < GCL_ELASTIC_LIST_MAX; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? ", " : "", v[i]);
}

/* The printer says what changed, once the step is known (replica 0, stage 0, which all agree). */
static void say_change(stage_t *st, long T)
{
    train_job_t *job = st->job;
    struct train_elastic *el = job->el;
    if (st->replica != 0 || st->stage != 0 || el->nchanges == 0)
        return;
    change_t *c = &el->changes[el->nchanges - 1];
    c->step = T;
    if (!job->printer)
        return;
    char lost[256], joined[256];
    list(lost, sizeof lost, c->lost, c->nlost);
    list(joined, sizeof joined, c->joined, c->njoined);
    int first, count, hi;
    float scale;
    train_step_share(job, 0, c->replicas, &first, &count, &scale);
    train_step_share(job, c->replicas - 1, c->replicas, &first, &hi, &scale);
    char what[600];
    snprintf(what, sizeof what, "%s%s%s%s%s%s", c->nlost ? "lost instance" : "",
             c->nlost > 1 ? "s "
             : c->nlost   ? " "
                          : "",
             lost, c->nlost && c->njoined ? "; " : "", c->njoined ? "joined " : "", joined);
    printf("train: step %ld: membership %d (%s): %d replica%s over %d instance%s go on from "
           "memory; each step's %ld micro-batches of %d split %d to %d per replica (global "
           "batch %ld)\n",
           T, c->epoch, what, c->replicas, c->replicas == 1 ? "" : "s", c->instances,
           c->instances == 1 ? "" : "s", (long)job->replicas * job->accumulation, job->micro,
           count < hi ? count : hi, count < hi ? hi : count, job->global_batch);
    fflush(stdout);
}

/* The mean simulated step (the slowest stage's, as recorded by replica 0's instance) of steps
 * [FROM, TO); 0 when none was recorded. */
static double mean_sim_step(const train_job_t *job, long from, long to)
{
    double sum = 0;
    long n = 0;
    for (long s = from; s < to && job->res.sim_step_s; s++) {
        double v = 0;
        for (int k = 0; k < job->stages; k++) {
            double t = job->res.sim_step_s[(size_t)k * job->total_steps + s];
            v = t > v ? t : v;
        }
        sum += v;
        n += v > 0;
    }
    return n ? sum / (double)n : 0;
}

/* Stretch I of the run (0: before the first change): its steps [*FROM, *TO) and replicas. */
static int segment(const train_job_t *job, int i, long *from, long *to)
{
    const struct train_elastic *el = job->el;
    *from = i == 0 ? 0 : el->changes[i - 1].step;
    *to = i < el->nchanges ? el->changes[i].step : job->total_steps;
    return i == 0 ? job->replicas : el->changes[i - 1].replicas;
}

void train_elastic_report(const train_job_t *job)
{
    const struct train_elastic *el = job->el;
    if (!el || !el->nchanges)
        return;
    for (int i = 0; i <= el->nchanges; i++) {
        long from, to;
        int replicas = segment(job, i, &from, &to);
        double t = from >= 0 && to > from ? mean_sim_step(job, from, to) : 0;
        if (t > 0)
            printf("train: elastic: steps %ld-%ld on %d replicas: simulated %.3f ms per step\n",
                   from + 1, to, replicas, 1e3 * t);
    }
}

void train_elastic_json(FILE *f, const train_job_t *job)
{
    const struct train_elastic *el = job->el;
    if (!el || !el->on) {
        fprintf(f, "  \"elastic\": null,\n");
        return;
    }
    fprintf(f, "  \"elastic\": [");
    for (int i = 0; i < el->nchanges; i++) {
        const change_t *c = &el->changes[i];
        long from, to, before_from, before_to;
        segment(job, i + 1, &from, &to);
        segment(job, i, &before_from, &before_to);
        fprintf(f,
                "%s\n    {\"step\": %ld, \"membership\": %d, \"instances\": %d, "
                "\"replicas\": %d, \"lost\": [",
                i ? "," : "", c->step, c->epoch, c->instances, c->replicas);
        for (int k = 0; k < c->nlost && k < GCL_ELASTIC_LIST_MAX; k++)
            fprintf(f, "%s%d", k ? ", " : "", c->lost[k]);
        fprintf(f, "], \"joined\": [");
        for (int k = 0; k < c->njoined && k < GCL_ELASTIC_LIST_MAX; k++)
            fprintf(f, "%s%d", k ? ", " : "", c->joined[k]);
        fprintf(f,
                "], \"wall_s\": %.3f, \"sim_step_before_s\": %.9g, "
                "\"sim_step_after_s\": %.9g}",
                c->wall_s, mean_sim_step(job, before_from, before_to),
                mean_sim_step(job, from, to));
    }
    fprintf(f, "%s],\n", el->nchanges ? "\n  " : "");
}

int train_elastic_next(train_job_t *job, gcl_instance_t inst, gcl_status_t run_rc, int *status)
{
    struct train_elastic *el = job->el;
    *status = -1;
    if (!el || !el->on || job->stop_signal || (run_rc == GCL_OK && !el->leaving))
        return 0;
    if (run_rc != GCL_OK)
        fprintf(stderr, "train: instance %d: the run failed (%s); resizing the job\n", el->slot,
                job->error[0] ? job->error : gcl_instance_error(inst));
    gcl_elastic_info_t e;
    if (gcl_elastic_resize(inst, &e) != GCL_OK) {
        fprintf(stderr, "train: %s\n", gcl_instance_error(inst));
        *status = 1;
        return 0;
    }
    pthread_mutex_lock(&job->lock);
    el->leaving = 0;
    el->epoch = e.epoch;
    el->replica_offset = e.replica_offset;
    job->instance = e.instance_index;
    job->printer = job->instance == 0 && job->o->progress != PROGRESS_NONE;
    job->aborted = 0;
    job->error[0] = '\0';
    job->arrived = 0;
    job->written = 0;
    pthread_mutex_unlock(&job->lock);
    record(job, &e);
    if (job->instance == 0 && !job->staging && (job->o->checkpoint_dir || job->o->save_weights) &&
        !(job->staging = malloc((1 + (size_t)job->nstate) * model_params(&job->shape) * 4))) {
        fprintf(stderr, "train: out of host memory\n");
        *status = 1;
        return 0;
    }
    return 1;
}
