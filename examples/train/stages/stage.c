/*
 * A pipeline stage's setup and teardown: its communicator, its buffers in simulated IPU memory
 * and its initial weights. The training step itself is in step.c. See stage.h.
 */
#include "stages/stage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pipeline/share.h"
#include "gcl/sim.h"

/* Allocates in this IPU's simulated memory; an out-of-memory failure says what the stage needs
 * and what is already there (libgcl's report). */
static gcl_status_t ipu_alloc(stage_t *st, size_t bytes, const char *what, void **out)
{
    char label[128];
    snprintf(label, sizeof label, "%s, layers %d-%d", what, st->l0 + 1, st->l1);
    gcl_status_t rc = gcl_ipu_malloc(st->ctx, bytes ? bytes : 4, label, out);
    if (rc == GCL_ERR_OUT_OF_MEMORY) {
        double state = (double)st->np * 4 * (2 + st->job->nstate);
        train_fail(st->job,
                   "replica %d IPU %d (pipeline stage %d of %d, layers %d-%d) needs %.1f MB of "
                   "simulated IPU memory for its weights, gradients and optimizer state alone; "
                   "libgcl says:\n%s\nSplit the model over more IPUs (--ipus-per-replica) or "
                   "make it smaller.",
                   st->replica, st->stage, st->stage + 1, st->job->stages, st->l0 + 1, st->l1,
                   state / 1e6, gcl_ctx_last_error(st->ctx));
    } else if (rc != GCL_OK) {
        train_fail(st->job, "replica %d IPU %d: cannot allocate %s: %s (%s)", st->replica,
                   st->stage, what, gcl_status_string(rc), gcl_ctx_last_error(st->ctx));
    }
    return rc;
}

/* Floats of one activation slot: the stage's input and every layer's output. */
static size_t slot_floats(const stage_t *st)
{
    size_t n = (size_t)st->shape->dims[st->l0];
    for (int l = st->l0; l < st->l1; l++)
        n += (size_t)st->shape->dims[l + 1];
    return n * (size_t)st->job->micro;
}

/* Bytes per parameter: weights, gradients (and their f16 copy), optimizer state. */
static size_t param_bytes(const stage_t *st)
{
    return 4 * (2 + (size_t)st->job->nstate) + (st->job->o->grad_dtype == GCL_F16 ? 2 : 0);
}

/*
 * Whether what the stage will allocate (alloc_state, alloc_activations) fits in what its IPU has
 * free; when it does not, one line naming the layer where the stage passes the limit, and the
 * job's exit status is 2 (bad input, as an option that does not fit). The stage-wide buffers
 * (its input, the gradients it sends and receives, the backward scratch) come first, then each
 * layer's parameters with their gradients and optimizer state, and its outputs for every
 * micro-batch the stage holds.
 */
static gcl_status_t check_fits(stage_t *st)
{
    const model_shape_t *m = st->shape;
    gcl_sim_stats_t s;
    gcl_sim_stats(st->ctx, &s);
    size_t free_bytes = s.memory_capacity - s.memory_used, b = (size_t)st->job->micro;
    size_t slots = (size_t)st->nslots, wmax = model_inner_values(m, st->l0, st->l1);
    size_t in = st->last ? 0 : b * m->dims[st->l1], dx = st->stage > 0 ? b * m->dims[st->l0] : 0;
    size_t need = 4 * ((b * m->dims[st->l0] + dx) * slots + in + 2 * b * wmax), at = need;
    int over = -1;
    for (int l = st->l0; l < st->l1; l++) {
        need += layer_params(m, l) * param_bytes(st) + 4 * b * m->dims[l + 1] * slots;
        if (over < 0 && (need > free_bytes || need < at))
            over = l;
        at = need;
    }
    if (over < 0)
        return GCL_OK;
    const layer_t *y = &m->layer[over];
    char name[48], text[64], input[64];
    layer_name(m, over, name, sizeof name);
    if (y->kind == LAYER_DENSE)
        snprintf(input, sizeof input, "%d values", y->g.c);
    else
        snprintf(input, sizeof input, "%dx%dx%d", y->g.h, y->g.w, y->g.c);
    layer_text(&m->spec.layer[over], text, sizeof text);
    pthread_mutex_lock(&st->job->lock);
    st->job->usage_error = 1;
    pthread_mutex_unlock(&st->job->lock);
    train_fail(st->job,
               "pipeline stage %d of %d (layers %d-%d) does not fit in its IPU's simulated "
               "memory: it needs %.1f MB, and %.1f MB of the %.1f MB are free; it passes the "
               "limit at layer %d (%s: %s on %s, %zu parameters: %.1f MB with their "
               "gradients and optimizer state, and %.1f MB of outputs for %zu micro-batch%s of "
               "%zu): split the model over more IPUs (--ipus-per-replica) or make it smaller",
               st->stage + 1, st->job->stages, st->l0 + 1, st->l1, need / 1e6, free_bytes / 1e6,
               s.memory_capacity / 1e6, over + 1, name, text, input, layer_params(m, over),
               layer_params(m, over) * param_bytes(st) / 1e6,
               4.0 * b * m->dims[over + 1] * slots / 1e6, slots, slots > 1 ? "es" : "", b);
    return GCL_ERR_OUT_OF_MEMORY;
}

static gcl_status_t alloc_state(stage_t *st)
{
    size_t bytes = st->np * sizeof(float);
    int adam = st->job->o->optim.kind == OPTIM_ADAM;
    st->mem_weights = bytes;
    st->mem_gradients = bytes + (st->job->o->grad_dtype == GCL_F16 ? st->np * 2 : 0);
    st->mem_optimizer = bytes * (size_t)st->job->nstate;
    GCL_CHECK(ipu_alloc(st, bytes, "weights", (void **)&st->params));
    GCL_CHECK(ipu_alloc(st, bytes, "gradients", (void **)&st->grads));
    GCL_CHECK(
        ipu_alloc(st, bytes, adam ? "Adam first moments" : "momentum", (void **)&st->state[0]));
    if (st->job->nstate > 1)
        GCL_CHECK(ipu_alloc(st, bytes, "Adam second moments", (void **)&st->state[1]));
    if (st->job->o->grad_dtype == GCL_F16)
        GCL_CHECK(ipu_alloc(st, st->np * 2, "f16 gradients", (void **)&st->grads16));
    return GCL_OK;
}

static gcl_status_t alloc_activations(stage_t *st)
{
    const int *dims = st->shape->dims, b = st->job->micro, nl = st->l1 - st->l0;
    size_t per_slot = slot_floats(st), wmax = model_inner_values(st->shape, st->l0, st->l1);
    float *acts, *dxs = NULL, *grads = NULL;
    GCL_CHECK(ipu_alloc(st, per_slot * st->nslots * sizeof(float), "activations", (void **)&acts));
    for (int s = 0; s < st->nslots; s++) {
        float *p = acts + per_slot * s;
        for (int i = 0; i <= nl; i++) {
            st->act[s * (nl + 1) + i] = p;
            p += (size_t)b * dims[st->l0 + i];
        }
    }
    if (st->stage > 0) {
        size_t per = (size_t)b * dims[st->l0];
        GCL_CHECK(
            ipu_alloc(st, per * st->nslots * sizeof(float), "input gradients", (void **)&dxs));
        for (int s = 0; s < st->nslots; s++)
            st->dx[s] = dxs + per * s;
    }
    size_t in = st->last ? 0 : (size_t)b * dims[st->l1];
    size_t per_dx = st->stage > 0 ? (size_t)b * dims[st->l0] : 0;
    st->mem_activations = (per_slot + per_dx + in + 2 * (size_t)b * wmax) * sizeof(float);
    st->mem_stash = (per_slot + per_dx) * (size_t)(st->nslots - 1) * sizeof(float);
    GCL_CHECK(ipu_alloc(st, (in + 2 * (size_t)b * wmax) * sizeof(float), "backward buffers",
                        (void **)&grads));
    st->dy_in = grads;
    st->scratch[0] = grads + in;
    st->scratch[1] = grads + in + (size_t)b * wmax;
    return GCL_OK;
}

/* Host-side bookkeeping: pointers, requests, the schedule, the sample order. */
static gcl_status_t alloc_host(stage_t *st)
{
    int nl = st->l1 - st->l0, G = st->accum;
    st->act = calloc((size_t)st->nslots * (nl + 1), sizeof *st->act);
    st->dx = calloc((size_t)st->nslots, sizeof *st->dx);
    st->act_req = calloc((size_t)st->nslots, sizeof *st->act_req);
    st->dx_req = calloc((size_t)st->nslots, sizeof *st->dx_req);
    st->ops = calloc(2 * (size_t)G, sizeof *st->ops);
    /* The convolutions' im2col matrices, one set per micro-batch in flight, are how this host
     * computes them (conv.c), not what the IPU would hold: host memory, outside the simulated
     * SRAM. */
    st->col_floats = model_col_floats(st->shape, st->l0, st->l1, st->job->micro);
    size_t col = st->col_floats * (size_t)st->nslots;
    st->col = col ? malloc(col * sizeof(float)) : NULL;
    st->labels = calloc((size_t)st->nslots * st->job->micro, 1);
    st->idx = calloc((size_t)st->job->micro, sizeof *st->idx);
    st->perm = malloc((size_t)st->job->data->train_x.count * sizeof *st->perm);
    if (!st->act || !st->dx || !st->act_req || !st->dx_req || !st->ops || !st->labels || !st->idx ||
        !st->perm || (col && !st->col)) {
        train_fail(st->job, "replica %d IPU %d: out of host memory", st->replica, st->stage);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    pipe_schedule(st->job->o->schedule, st->stage, st->job->stages, G, st->ops);
    st->perm_epoch = -1;
    return GCL_OK;
}

gcl_status_t stage_setup(stage_t *st, gcl_ctx_t ctx, train_job_t *job)
{
    memset(st, 0, sizeof *st);
    st->ctx = ctx;
    st->job = job;
    st->shape = &job->shape;
    st->replica = gcl_ctx_replica(ctx);
    st->stage = gcl_ctx_ipu(ctx);
    st->last = st->stage == job->stages - 1;
    st->l0 = job->first[st->stage];
    st->l1 = job->first[st->stage + 1];
    st->poff = st->shape->offset[st->l0];
    st->np = st->shape->offset[st->l1] - st->poff;
    for (int l = st->l0; l < st->l1; l++)
        st->tensors += (st->shape->layer[l].nweights > 0) + (st->shape->layer[l].nbias > 0);
    train_step_share(job, st->replica, gcl_ctx_num_replicas(ctx), &st->q0, &st->accum,
                     &st->rescale);
    st->nslots = pipe_slots(job->o->schedule, st->stage, job->stages, st->accum);
    gcl_status_t rc = gcl_comm_create(ctx, gcl_group_all(), &st->comm);
    if (rc != GCL_OK) {
        train_fail(job, "replica %d IPU %d: gcl_comm_create: %s", st->replica, st->stage,
                   gcl_status_string(rc));
        return rc;
    }
    GCL_CHECK(alloc_host(st));
    GCL_CHECK(check_fits(st));
    GCL_CHECK(alloc_state(st));
    GCL_CHECK(alloc_activations(st));
    for (int l = st->l0; l < st->l1; l++)
        model_init_layer(st->shape, l, job->o->seed,
                         st->params + (st->shape->offset[l] - st->poff));
    for (int v = 0; v < job->nstate; v++)
        memset(st->state[v], 0, st->np * sizeof(float));
    return GCL_OK;
}

void stage_teardown(stage_t *st)
{
    for (int s = 0; st->act_req && s < st->nslots; s++) {
        stage_wait(st, &st->act_req[s]);
        stage_wait(st, &st->dx_req[s]);
    }
    if (st->act)
        gcl_ipu_free(st->ctx, st->act[0]);
    if (st->dx)
        gcl_ipu_free(st->ctx, st->dx[0]);
    gcl_ipu_free(st->ctx, st->dy_in);
    gcl_ipu_free(st->ctx, st->grads16);
    gcl_ipu_free(st->ctx, st->state[1]);
    gcl_ipu_free(st->ctx, st->state[0]);
    gcl_ipu_free(st->ctx, st->grads);
    gcl_ipu_free(st->ctx, st->params);
    free(st->act);
    free(st->dx);
    free(st->act_req);
    free(st->dx_req);
    free(st->ops);
    free(st->col);
    free(st->labels);
    free(st->idx);
    free(st->perm);
    free(st->m_step);
    free(st->m_coll);
    free(st->m_p2p);
    gcl_comm_destroy(st->comm);
}

gcl_status_t stage_wait(stage_t *st, gcl_request_t *req)
{
    if (!*req)
        return GCL_OK;
    double t = train_now_s();
    gcl_status_t rc = gcl_wait(*req);
    st->wait_p2p += train_now_s() - t;
    *req = NULL;
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: pipeline transfer failed: %s", st->replica,
                   st->stage, gcl_ctx_last_error(st->ctx));
    return rc;
}
