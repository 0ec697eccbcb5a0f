/*
 * One training step of a pipeline stage, and forward-only evaluation. See stage.h.
 *
 * Every dense layer, ReLU, the loss, the casts and the optimizer update charge the simulated
 * IPU's clock through libgcl's layer-level cost model (gcl_charge_layer, gcl_charge_update),
 * and every micro-batch a host sync (gcl_sim_host_exchange), as sim-step charges a pipeline cycle.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stages/stage.h"

#include "gcl/sim.h"
#include "model/half.h"
#include "data/order.h"

/* A layer's shape as libgcl's layer-level cost model takes it (gcl_charge_layer), in f32: a dense
 * layer as a matmul, a convolution as a convolution and pooling as pooling, as sim-step charges
 * ResNet-50's; its ReLU as an elementwise layer. */
static gcl_layer_t cost_layer(const model_shape_t *m, int l, const char *name)
{
    const layer_t *y = &m->layer[l];
    gcl_layer_t c = GCL_LAYER_INIT;
    c.name = name;
    c.dtype = GCL_F32;
    if (y->kind == LAYER_DENSE) {
        c.in = y->g.c;
        c.out = y->g.oc;
        c.bias = 1;
        return c;
    }
    c.type = y->kind == LAYER_CONV ? GCL_LAYER_CONV : GCL_LAYER_POOL;
    c.h = y->g.h, c.w = y->g.w, c.c_in = y->g.c;
    c.c_out = y->kind == LAYER_CONV ? y->g.oc : 0;
    c.kernel = y->g.kernel, c.stride = y->g.stride, c.pad = y->g.pad;
    c.bias = y->kind == LAYER_CONV;
    return c;
}

/* Charges PASS of layer L (and its ReLU: after it forward, before it backward) for ROWS samples,
 * and adds the simulated time to the layer's account (replica 0 reports it). INPUT_GRAD: the
 * backward pass computes the gradient of the layer's input. */
static void charge_layer(stage_t *st, int l, gcl_pass_t pass, int rows, int input_grad)
{
    char layer[32], name[48], relu_name[64];
    const char *p = pass == GCL_PASS_BACKWARD ? "backward" : "forward";
    layer_name(st->shape, l, layer, sizeof layer);
    snprintf(name, sizeof name, "%s %s", layer, p);
    snprintf(relu_name, sizeof relu_name, "%s relu %s", layer, p);
    gcl_layer_t c = cost_layer(st->shape, l, name), act = GCL_LAYER_INIT;
    c.no_input_grad = !input_grad;
    act.type = GCL_LAYER_ELEMENTWISE;
    act.name = relu_name;
    act.dtype = GCL_F32;
    act.values = st->shape->dims[l + 1];
    int relu = st->shape->layer[l].relu;
    double t0 = gcl_sim_time(st->ctx);
    if (pass == GCL_PASS_BACKWARD && relu)
        gcl_charge_layer(st->ctx, &act, pass, rows);
    gcl_charge_layer(st->ctx, &c, pass, rows);
    if (pass == GCL_PASS_FORWARD && relu)
        gcl_charge_layer(st->ctx, &act, pass, rows);
    if (st->in_step)
        st->sim_layer_s[pass == GCL_PASS_BACKWARD][l] += gcl_sim_time(st->ctx) - t0;
}

/* Elementwise work over N f32 values (casts, zeroing), as one unit. */
static void charge_values(stage_t *st, const char *name, size_t n, int ops)
{
    gcl_layer_t l = GCL_LAYER_INIT;

    l.type = GCL_LAYER_ELEMENTWISE;
    l.name = name;
    l.dtype = GCL_F32;
    l.values = (long)n;
    l.ops = ops;
    gcl_charge_layer(st->ctx, &l, GCL_PASS_FORWARD, 1);
}

/* Index into the training set of sample I of micro-batch M of this replica at STEP (order.h). */
static uint32_t sample_of(stage_t *st, long step, int m, int i)
{
    const train_job_t *job = st->job;
    long epoch = step / job->steps_per_epoch;
    if (st->perm_epoch != epoch) {
        order_epoch(job->o->seed, epoch, (uint32_t)job->data->train_x.count, st->perm);
        st->perm_epoch = epoch;
    }
    order_job_t oj = {job->steps_per_epoch, job->global_batch, job->accumulation, job->micro};
    int q = st->q0 + m; /* the step's micro-batch q is micro-batch q % G of replica q / G */
    return st->perm[order_position(&oj, step, q / job->accumulation, q % job->accumulation, i)];
}

static float *act(stage_t *st, int slot, int i)
{
    return st->act[slot * (st->l1 - st->l0 + 1) + i];
}

/* Forward through the stage's layers of ROWS rows in SLOT (its input already in place). */
static void forward_layers(stage_t *st, int slot, int rows)
{
    model_forward(st->shape, st->l0, st->l1, st->params, &st->act[slot * (st->l1 - st->l0 + 1)],
                  rows, st->col + st->col_floats * (size_t)slot);
    for (int l = st->l0; l < st->l1; l++)
        charge_layer(st, l, GCL_PASS_FORWARD, rows, 1);
}

/* The stage's input for ROWS rows into SLOT: images from the host on stage 0 (mirrored as FLIP
 * says, NULL: none), activations from the previous stage otherwise. IDX is NULL on stages that
 * do not read the data. */
static gcl_status_t stage_input(stage_t *st, int slot, int rows, const idx_array_t *set,
                                const uint32_t *idx, const order_flip_t *flip)
{
    float *in = act(st, slot, 0);
    if (st->stage == 0) {
        order_load_images(st->job->pixel, set, idx, rows, flip, in);
        return GCL_OK;
    }
    size_t n = (size_t)rows * st->shape->dims[st->l0];
    double t = train_now_s();
    gcl_status_t rc = gcl_recv(st->ctx, st->stage - 1, in, n, GCL_F32, TAG_ACT);
    st->wait_p2p += train_now_s() - t;
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: receiving activations from IPU %d: %s", st->replica,
                   st->stage, st->stage - 1, gcl_ctx_last_error(st->ctx));
    return rc;
}

/* Sends SLOT's output down the pipeline without waiting: the slot is not reused before the
 * request is complete (stage_wait on act_req[slot]). */
static gcl_status_t stage_output(stage_t *st, int slot, int rows)
{
    size_t n = (size_t)rows * st->shape->dims[st->l1];
    gcl_status_t rc = gcl_send_start(st->ctx, st->stage + 1, act(st, slot, st->l1 - st->l0), n,
                                     GCL_F32, TAG_ACT, &st->act_req[slot]);
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: sending activations to IPU %d: %s", st->replica,
                   st->stage, st->stage + 1, gcl_ctx_last_error(st->ctx));
    return rc;
}

static gcl_status_t forward_micro(stage_t *st, long step, int m)
{
    int slot = m % st->nslots, b = st->job->micro;
    uint32_t *idx = st->idx;
    GCL_CHECK(stage_wait(st, &st->act_req[slot]));
    GCL_CHECK(gcl_sim_host_exchange(st->ctx));
    if (st->stage == 0 || st->last)
        for (int i = 0; i < b; i++)
            idx[i] = sample_of(st, step, m, i);
    order_flip_t flip = {st->job->o->seed, step / st->job->steps_per_epoch};
    GCL_CHECK(
        stage_input(st, slot, b, &st->job->data->train_x, idx, st->job->o->augment ? &flip : NULL));
    forward_layers(st, slot, b);
    if (!st->last)
        return stage_output(st, slot, b);
    /* The loss of the mean over the replica's G x b samples: its gradient, scaled so that the
     * micro-batches' gradients add up to the step's, replaces the logits in place. */
    uint8_t *labels = st->labels + (size_t)slot * b;
    for (int i = 0; i < b; i++)
        labels[i] = st->job->data->train_y.data[idx[i]];
    float *logits = act(st, slot, st->l1 - st->l0);
    int classes = st->shape->dims[st->shape->nlayers];
    float scale = 1.0f / (float)(b * st->job->accumulation);
    st->loss_sum += softmax_xent(logits, labels, b, classes, scale, logits, &st->correct);
    st->seen += b;
    gcl_layer_t loss = GCL_LAYER_INIT;
    loss.type = GCL_LAYER_LOSS;
    loss.name = "loss";
    loss.dtype = GCL_F32;
    loss.out = classes;
    gcl_charge_layer(st->ctx, &loss, GCL_PASS_FORWARD, b);
    gcl_charge_layer(st->ctx, &loss, GCL_PASS_BACKWARD, b);
    return GCL_OK;
}

/* The gradient at the stage's output for micro-batch M: the loss gradient on the last stage,
 * received from the next stage otherwise. */
static gcl_status_t output_grad(stage_t *st, int slot, float **dy)
{
    if (st->last) {
        *dy = act(st, slot, st->l1 - st->l0);
        return GCL_OK;
    }
    size_t n = (size_t)st->job->micro * st->shape->dims[st->l1];
    double t = train_now_s();
    gcl_status_t rc = gcl_recv(st->ctx, st->stage + 1, st->dy_in, n, GCL_F32, TAG_GRAD);
    st->wait_p2p += train_now_s() - t;
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: receiving gradients from IPU %d: %s", st->replica,
                   st->stage, st->stage + 1, gcl_ctx_last_error(st->ctx));
    *dy = st->dy_in;
    return rc;
}

static gcl_status_t backward_micro(stage_t *st, int m)
{
    const model_shape_t *ms = st->shape;
    int slot = m % st->nslots, b = st->job->micro;
    float *dy;
    GCL_CHECK(output_grad(st, slot, &dy));
    if (st->stage > 0)
        GCL_CHECK(stage_wait(st, &st->dx_req[slot]));
    model_backward(ms, st->l0, st->l1, st->params, &st->act[slot * (st->l1 - st->l0 + 1)], dy,
                   st->grads, st->stage > 0 ? st->dx[slot] : NULL, b, st->scratch,
                   st->col + st->col_floats * (size_t)slot);
    for (int l = st->l1 - 1; l >= st->l0; l--)
        charge_layer(st, l, GCL_PASS_BACKWARD, b, l > 0);
    if (st->stage == 0)
        return GCL_OK;
    gcl_status_t rc =
        gcl_send_start(st->ctx, st->stage - 1, st->dx[slot], (size_t)b * ms->dims[st->l0], GCL_F32,
                       TAG_GRAD, &st->dx_req[slot]);
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: sending gradients to IPU %d: %s", st->replica,
                   st->stage, st->stage - 1, gcl_ctx_last_error(st->ctx));
    return rc;
}

/* The mean over the replicas of this stage's per-layer gradients in BUF (weights and biases of
 * each layer, in the order of the parameter vector), as GCL reduces a list of tensors: one
 * fused call (the layers lie end to end, so nothing is copied). */
static gcl_status_t all_reduce_layers(stage_t *st, void *buf, gcl_dtype_t type)
{
    int n = 2 * (st->l1 - st->l0);
    gcl_tensor_t *t = calloc((size_t)n, sizeof *t);
    if (!t)
        return GCL_ERR_NO_HOST_MEMORY;
    size_t es = gcl_dtype_size(type);
    int k = 0;
    for (int l = st->l0; l < st->l1; l++) {
        const layer_t *y = &st->shape->layer[l];
        char *w = (char *)buf + (st->shape->offset[l] - st->poff) * es, *b = w + y->nweights * es;
        if (y->nweights) /* pooling has no parameters */
            t[k++] = (gcl_tensor_t){w, w, y->nweights, type};
        if (y->nbias)
            t[k++] = (gcl_tensor_t){b, b, y->nbias, type};
    }
    double w = train_now_s(), s = gcl_sim_time(st->ctx);
    gcl_status_t rc = k ? gcl_all_reduce_multi(st->comm, t, k, GCL_MEAN) : GCL_OK;
    st->wait_coll += train_now_s() - w;
    st->sim_coll += gcl_sim_time(st->ctx) - s;
    free(t);
    return rc;
}

/* Mean of the gradients over the replicas: in f32, or cast to f16 after scaling by
 * --grad-scale (so that small gradients do not flush to zero) and back. */
static gcl_status_t reduce_grads(stage_t *st, long step)
{
    const train_opts_t *o = st->job->o;
    gcl_status_t rc;
    if (o->grad_dtype == GCL_F32) {
        rc = all_reduce_layers(st, st->grads, GCL_F32);
    } else {
        float scale = (float)o->grad_scale, inv = 1.0f / scale;
        for (size_t i = 0; i < st->np; i++)
            st->grads16[i] = half_from_float(st->grads[i] * scale);
        rc = all_reduce_layers(st, st->grads16, GCL_F16);
        int finite = 1;
        for (size_t i = 0; rc == GCL_OK && i < st->np; i++) {
            st->grads[i] = half_to_float(st->grads16[i]) * inv;
            finite &= isfinite(st->grads[i]);
        }
        charge_values(st, "f16 casts", 2 * st->np, 1);
        if (rc == GCL_OK && !finite) {
            train_fail(st->job,
                       "step %ld: the f16 gradient all-reduce of stage %d overflowed; "
                       "use a smaller --grad-scale than %g, or --grad-dtype f32",
                       step + 1, st->stage, o->grad_scale);
            return GCL_ERR_INVALID_ARGUMENT;
        }
    }
    if (rc != GCL_OK)
        train_fail(st->job, "replica %d IPU %d: gradient all-reduce failed: %s", st->replica,
                   st->stage, gcl_last_error(st->comm));
    return rc;
}

/* The optimizer, layer by layer: weights take weight decay, biases do not. */
static void update(stage_t *st, long step)
{
    const train_job_t *job = st->job;
    const optim_cfg_t *c = &job->optim;
    double lr = optim_lr(c, step, job->schedule_steps);
    optim_update_layers(c, lr, step, st->shape, st->l0, st->l1, st->params, st->grads, st->state[0],
                        st->state[1]);
    gcl_update_t u = {c->kind == OPTIM_ADAM ? GCL_OPTIM_ADAM
                      : c->momentum > 0     ? GCL_OPTIM_MOMENTUM
                                            : GCL_OPTIM_SGD,
                      (double)st->np,
                      st->tensors,
                      GCL_F32,
                      GCL_F32,
                      0};
    double t0 = gcl_sim_time(st->ctx);
    gcl_charge_update(st->ctx, &u);
    st->sim_update += gcl_sim_time(st->ctx) - t0;
}

gcl_status_t stage_step(stage_t *st, long step)
{
    memset(st->grads, 0, st->np * sizeof(float));
    charge_values(st, "zero gradients", st->np, 1);
    st->in_step = 1;
    for (int i = 0; i < 2 * st->accum; i++) {
        pipe_op_t op = st->ops[i];
        gcl_status_t rc =
            op.pass == 'F' ? forward_micro(st, step, op.micro) : backward_micro(st, op.micro);
        if (rc != GCL_OK) {
            st->in_step = 0;
            return rc;
        }
    }
    st->in_step = 0;
    for (int s = 0; s < st->nslots; s++) {
        GCL_CHECK(stage_wait(st, &st->act_req[s]));
        GCL_CHECK(stage_wait(st, &st->dx_req[s]));
    }
    GCL_CHECK(reduce_grads(st, step));
    for (size_t i = 0; st->rescale != 1.0f && i < st->np; i++) /* the mean over the job's */
        st->grads[i] *= st->rescale;                           /* replicas as it started */
    update(st, step);
    return GCL_OK;
}

/* Forward of ROWS test samples from FROM through the stage; the last stage adds up the loss. */
static gcl_status_t eval_chunk(stage_t *st, long from, int rows, double *loss, long *correct)
{
    const dataset_t *d = st->job->data;
    GCL_CHECK(stage_wait(st, &st->act_req[0]));
    for (int i = 0; i < rows; i++)
        st->idx[i] = (uint32_t)(from + i);
    GCL_CHECK(stage_input(st, 0, rows, &d->test_x, st->idx, NULL));
    forward_layers(st, 0, rows);
    if (!st->last)
        return stage_output(st, 0, rows);
    int classes = st->shape->dims[st->shape->nlayers];
    *loss += softmax_xent(act(st, 0, st->l1 - st->l0), d->test_y.data + from, rows, classes, 1.0f,
                          NULL, correct);
    return GCL_OK;
}

gcl_status_t stage_evaluate(stage_t *st, double *loss, long *correct, long *count)
{
    long n = st->job->data->test_x.count, r = st->replica, R = gcl_ctx_num_replicas(st->ctx);
    long from = n * r / R, to = n * (r + 1) / R; /* this replica's share */
    *loss = 0;
    *correct = 0;
    for (long at = from; at < to; at += st->job->micro) {
        int rows = (int)(to - at < st->job->micro ? to - at : st->job->micro);
        GCL_CHECK(eval_chunk(st, at, rows, loss, correct));
    }
    GCL_CHECK(stage_wait(st, &st->act_req[0]));
    if (!st->last)
        return GCL_OK;
    /* Sums of the whole job; f32 holds these counts exactly (below 2^24). */
    float sums[3] = {(float)*loss, (float)*correct, (float)(to - from)};
    gcl_status_t rc = gcl_all_reduce(st->comm, sums, sums, 3, GCL_F32, GCL_SUM);
    if (rc != GCL_OK) {
        train_fail(st->job, "replica %d IPU %d: evaluation all-reduce failed: %s", st->replica,
                   st->stage, gcl_last_error(st->comm));
        return rc;
    }
    *loss = sums[0];
    *correct = (long)sums[1];
    *count = (long)sums[2];
    return GCL_OK;
}
