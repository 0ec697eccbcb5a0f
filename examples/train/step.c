/*
 * One training step of a pipeline stage, and forward-only evaluation. See stage.h.
 *
 * Every matmul charges its FLOPs (2 x m x n x k) and the bytes it moves to the simulated IPU's
 * clock, as do the elementwise passes (ReLU, loss, optimizer) by their bytes.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "stage.h"

#include "gcl/sim.h"
#include "half.h"
#include "rng.h"

static void charge(stage_t *st, const char *name, double flops, double bytes)
{
    gcl_charge_compute(st->ctx, name, flops, bytes, GCL_F32);
}

/* The order of the training samples in EPOCH: a Fisher-Yates shuffle from the seed. */
static void make_perm(stage_t *st, long epoch)
{
    if (st->perm_epoch == epoch)
        return;
    uint32_t n = (uint32_t)st->job->data->train_x.count;
    rng_t r;
    rng_seed(&r, st->job->o->seed, 0x5045524d00000000ull + (uint64_t)epoch); /* "PERM" */
    for (uint32_t i = 0; i < n; i++)
        st->perm[i] = i;
    for (uint32_t i = n - 1; i > 0; i--) {
        uint32_t j = rng_below(&r, i + 1), t = st->perm[i];
        st->perm[i] = st->perm[j];
        st->perm[j] = t;
    }
    st->perm_epoch = epoch;
}

/* Index into the training set of sample I of micro-batch M of this replica at STEP: the step's
 * global batch is a contiguous run of the epoch's order, replica r taking its r-th share. */
static uint32_t sample_of(stage_t *st, long step, int m, int i)
{
    const train_job_t *job = st->job;
    long pos = step % job->steps_per_epoch;
    make_perm(st, step / job->steps_per_epoch);
    long at = pos * job->global_batch + (long)st->replica * job->accumulation * job->micro +
              (long)m * job->micro + i;
    return st->perm[at];
}

/* Standardised pixels of images IDX[0..rows) of SET into X: what the host streams to IPU 0. */
static void load_images(const train_job_t *job, const idx_array_t *set, const uint32_t *idx,
                        int rows, float *x)
{
    size_t d = (size_t)set->rows * set->cols;
    for (int r = 0; r < rows; r++) {
        const uint8_t *src = set->data + (size_t)idx[r] * d;
        for (size_t j = 0; j < d; j++)
            x[(size_t)r * d + j] = job->pixel[src[j]];
    }
}

static float *act(stage_t *st, int slot, int i)
{
    return st->act[slot * (st->l1 - st->l0 + 1) + i];
}

/* Forward through the stage's layers of ROWS rows in SLOT (its input already in place). */
static void forward_layers(stage_t *st, int slot, int rows)
{
    const model_shape_t *m = st->shape;
    for (int l = st->l0; l < st->l1; l++) {
        int in = m->dims[l], out = m->dims[l + 1];
        const float *w = st->params + (m->offset[l] - st->poff);
        dense_forward(act(st, slot, l - st->l0), w, w + (size_t)in * out,
                      act(st, slot, l - st->l0 + 1), rows, in, out, l < m->nlayers - 1);
        charge(st, "forward", layer_flops(m, l, rows),
               4.0 * ((double)rows * in + (double)in * out + 2.0 * rows * out));
    }
}

/* The stage's input for ROWS rows into SLOT: images from the host on stage 0, activations from
 * the previous stage otherwise. IDX is NULL on stages that do not read the data. */
static gcl_status_t stage_input(stage_t *st, int slot, int rows, const idx_array_t *set,
                                const uint32_t *idx)
{
    float *in = act(st, slot, 0);
    if (st->stage == 0) {
        load_images(st->job, set, idx, rows, in);
        return GCL_OK;
    }
    size_t n = (size_t)rows * st->shape->dims[st->l0];
    gcl_status_t rc = gcl_recv(st->ctx, st->stage - 1, in, n, GCL_F32, TAG_ACT);
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
    if (st->stage == 0 || st->last)
        for (int i = 0; i < b; i++)
            idx[i] = sample_of(st, step, m, i);
    GCL_CHECK(stage_input(st, slot, b, &st->job->data->train_x, idx));
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
    charge(st, "loss", 10.0 * b * classes, 8.0 * b * classes);
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
    gcl_status_t rc = gcl_recv(st->ctx, st->stage + 1, st->dy_in, n, GCL_F32, TAG_GRAD);
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
    for (int l = st->l1 - 1, t = 0; l >= st->l0; l--, t++) {
        int in = ms->dims[l], out = ms->dims[l + 1];
        if (l < ms->nlayers - 1)
            relu_backward(act(st, slot, l - st->l0 + 1), dy, (size_t)b * out);
        float *dx = l > st->l0 ? st->scratch[t % 2] : st->stage > 0 ? st->dx[slot] : NULL;
        size_t off = ms->offset[l] - st->poff;
        const float *w = st->params + off;
        dense_backward(act(st, slot, l - st->l0), w, dy, st->grads + off,
                       st->grads + off + (size_t)in * out, dx, b, in, out);
        charge(st, "backward", layer_flops(ms, l, b) * (dx ? 2 : 1),
               4.0 * (dx ? 2 : 1) * ((double)b * in + (double)in * out + (double)b * out));
        dy = dx;
    }
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

/* Mean of the gradients over the replicas: in f32, or cast to f16 after scaling by
 * --grad-scale (so that small gradients do not flush to zero) and back. */
static gcl_status_t reduce_grads(stage_t *st, long step)
{
    const train_opts_t *o = st->job->o;
    gcl_status_t rc;
    if (o->grad_dtype == GCL_F32) {
        rc = gcl_all_reduce(st->comm, st->grads, st->grads, st->np, GCL_F32, GCL_MEAN);
    } else {
        float scale = (float)o->grad_scale, inv = 1.0f / scale;
        for (size_t i = 0; i < st->np; i++)
            st->grads16[i] = half_from_float(st->grads[i] * scale);
        rc = gcl_all_reduce(st->comm, st->grads16, st->grads16, st->np, GCL_F16, GCL_MEAN);
        int finite = 1;
        for (size_t i = 0; rc == GCL_OK && i < st->np; i++) {
            st->grads[i] = half_to_float(st->grads16[i]) * inv;
            finite &= isfinite(st->grads[i]);
        }
        charge(st, "f16 casts", 2.0 * st->np, 12.0 * st->np);
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
    const optim_cfg_t *c = &job->o->optim;
    double lr = optim_lr(c, step, job->schedule_steps);
    for (int l = st->l0; l < st->l1; l++) {
        size_t off = st->shape->offset[l] - st->poff, nw = layer_params(st->shape, l);
        size_t nb = (size_t)st->shape->dims[l + 1];
        nw -= nb;
        float *s1 = st->state[1] ? st->state[1] + off : NULL;
        optim_update(c, lr, step, st->params + off, st->grads + off, st->state[0] + off, s1, nw, 1);
        optim_update(c, lr, step, st->params + off + nw, st->grads + off + nw,
                     st->state[0] + off + nw, s1 ? s1 + nw : NULL, nb, 0);
    }
    charge(st, "optimizer", 4.0 * st->np, optim_bytes_per_param(c) * st->np);
}

gcl_status_t stage_step(stage_t *st, long step)
{
    memset(st->grads, 0, st->np * sizeof(float));
    charge(st, "zero gradients", 0, 4.0 * st->np);
    for (int i = 0; i < 2 * st->job->accumulation; i++) {
        pipe_op_t op = st->ops[i];
        GCL_CHECK(op.pass == 'F' ? forward_micro(st, step, op.micro)
                                 : backward_micro(st, op.micro));
    }
    for (int s = 0; s < st->nslots; s++) {
        GCL_CHECK(stage_wait(st, &st->act_req[s]));
        GCL_CHECK(stage_wait(st, &st->dx_req[s]));
    }
    GCL_CHECK(reduce_grads(st, step));
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
    GCL_CHECK(stage_input(st, 0, rows, &d->test_x, st->idx));
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
    long n = st->job->data->test_x.count, r = st->replica, R = st->job->replicas;
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
