/*
 * The MPI baseline's step and evaluation (mpi_replica.h). The order of every computation is the
 * gcl backend's for one stage (step.c): micro-batches in order, each a forward then a backward
 * that accumulates into the gradients; then the mean over the replicas (a sum and one division
 * by their number, as libgcl's mean divides once) and the update.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_replica.h"
#include "model/optim.h"
#include "data/order.h"

int mpi_replica_setup(mpi_replica_t *rp, train_job_t *job, MPI_Comm comm)
{
    memset(rp, 0, sizeof *rp);
    rp->job = job;
    rp->comm = comm;
    MPI_Comm_rank(comm, &rp->rank);
    MPI_Comm_size(comm, &rp->size);
    const model_shape_t *m = &job->shape;
    rp->np = model_params(m);
    size_t act = 0, b = (size_t)job->micro, wmax = model_inner_values(m, 0, m->nlayers);
    size_t col = model_col_floats(m, 0, m->nlayers, job->micro);
    for (int l = 0; l <= m->nlayers; l++)
        act += (size_t)m->dims[l] * b;
    rp->state = calloc((1 + (size_t)job->nstate) * rp->np, sizeof(float));
    rp->grads = calloc(rp->np, sizeof(float));
    rp->act = calloc(act + 2 * b * wmax, sizeof(float));
    rp->col = col ? malloc(col * sizeof(float)) : NULL;
    rp->labels = calloc(b, 1);
    rp->idx = calloc(b, sizeof *rp->idx);
    rp->perm = calloc((size_t)job->data->train_x.count, sizeof *rp->perm);
    if (!rp->state || !rp->grads || !rp->act || !rp->labels || !rp->idx || !rp->perm ||
        (col && !rp->col)) {
        fprintf(stderr, "train: rank %d: out of host memory\n", rp->rank);
        return 1;
    }
    float *p = rp->act;
    for (int l = 0; l <= m->nlayers; l++) {
        rp->layer[l] = p;
        p += (size_t)m->dims[l] * b;
    }
    rp->scratch[0] = p;
    rp->scratch[1] = p + b * wmax;
    for (int l = 0; l < m->nlayers; l++)
        model_init_layer(m, l, job->o->seed, rp->state + m->offset[l]);
    rp->perm_epoch = -1;
    return 0;
}

void mpi_replica_free(mpi_replica_t *rp)
{
    free(rp->state);
    free(rp->grads);
    free(rp->act);
    free(rp->col);
    free(rp->labels);
    free(rp->idx);
    free(rp->perm);
    free(rp->m_step);
    free(rp->m_coll);
}

static void forward(mpi_replica_t *rp, int rows)
{
    const model_shape_t *m = &rp->job->shape;
    model_forward(m, 0, m->nlayers, rp->state, rp->layer, rows, rp->col);
}

static void forward_micro(mpi_replica_t *rp, long step, int mb)
{
    train_job_t *job = rp->job;
    long epoch = step / job->steps_per_epoch;
    if (rp->perm_epoch != epoch) {
        order_epoch(job->o->seed, epoch, (uint32_t)job->data->train_x.count, rp->perm);
        rp->perm_epoch = epoch;
    }
    order_job_t oj = {job->steps_per_epoch, job->global_batch, job->accumulation, job->micro};
    int b = job->micro;
    for (int i = 0; i < b; i++) {
        rp->idx[i] = rp->perm[order_position(&oj, step, rp->rank, mb, i)];
        rp->labels[i] = job->data->train_y.data[rp->idx[i]];
    }
    order_flip_t flip = {job->o->seed, epoch};
    order_load_images(job->pixel, &job->data->train_x, rp->idx, b, job->o->augment ? &flip : NULL,
                      rp->layer[0]);
    forward(rp, b);
    const model_shape_t *m = &job->shape;
    float *logits = rp->layer[m->nlayers];
    float scale = 1.0f / (float)(b * job->accumulation);
    rp->loss_sum +=
        softmax_xent(logits, rp->labels, b, m->dims[m->nlayers], scale, logits, &rp->correct);
    rp->seen += b;
}

static void backward_micro(mpi_replica_t *rp)
{
    const model_shape_t *m = &rp->job->shape;
    model_backward(m, 0, m->nlayers, rp->state, rp->layer, rp->layer[m->nlayers], rp->grads, NULL,
                   rp->job->micro, rp->scratch, rp->col);
}

void mpi_replica_step(mpi_replica_t *rp, long step)
{
    train_job_t *job = rp->job;
    memset(rp->grads, 0, rp->np * sizeof(float));
    for (int mb = 0; mb < job->accumulation; mb++) {
        forward_micro(rp, step, mb);
        backward_micro(rp);
    }
    double t = train_now_s();
    MPI_Allreduce(MPI_IN_PLACE, rp->grads, (int)rp->np, MPI_FLOAT, MPI_SUM, rp->comm);
    rp->wait_coll += train_now_s() - t;
    for (size_t i = 0; i < rp->np; i++)
        rp->grads[i] = rp->grads[i] / (float)rp->size;
    const optim_cfg_t *c = &job->optim;
    float *s1 = job->nstate > 1 ? rp->state + 2 * rp->np : NULL;
    optim_update_layers(c, optim_lr(c, step, job->schedule_steps), step, &job->shape, 0,
                        job->shape.nlayers, rp->state, rp->grads, rp->state + rp->np, s1);
}

void mpi_replica_evaluate(mpi_replica_t *rp, double *loss, long *correct, long *count)
{
    const dataset_t *d = rp->job->data;
    const model_shape_t *m = &rp->job->shape;
    long n = d->test_x.count, from = n * rp->rank / rp->size, to = n * (rp->rank + 1) / rp->size;
    double sum = 0;
    long right = 0;
    for (long at = from; at < to; at += rp->job->micro) {
        int rows = (int)(to - at < rp->job->micro ? to - at : rp->job->micro);
        for (int i = 0; i < rows; i++)
            rp->idx[i] = (uint32_t)(at + i);
        order_load_images(rp->job->pixel, &d->test_x, rp->idx, rows, NULL, rp->layer[0]);
        forward(rp, rows);
        sum += softmax_xent(rp->layer[m->nlayers], d->test_y.data + at, rows, m->dims[m->nlayers],
                            1.0f, NULL, &right);
    }
    /* Sums of the whole job in f32, as the gcl backend makes them. */
    float sums[3] = {(float)sum, (float)right, (float)(to - from)};
    MPI_Allreduce(MPI_IN_PLACE, sums, 3, MPI_FLOAT, MPI_SUM, rp->comm);
    *loss = sums[0];
    *correct = (long)sums[1];
    *count = (long)sums[2];
}

int mpi_replica_agree(mpi_replica_t *rp)
{
    uint64_t h = 0xcbf29ce484222325ull; /* 64-bit FNV-1a, as the gcl backend's check */
    const uint8_t *p = (const uint8_t *)rp->state;
    for (size_t i = 0; i < (1 + (size_t)rp->job->nstate) * rp->np * sizeof(float); i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    uint64_t v[2] = {h, ~h};
    MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, rp->comm);
    return v[0] == ~v[1];
}
