/*
 * One replica of the MPI baseline (--backend mpi): the rank's whole model in host memory, and
 * its training step, evaluation and checks over MPI_COMM_WORLD. backend_mpi.c starts it and
 * drives the epochs; mpi_step.c computes. The math is the gcl backend's, call for call (model.h,
 * order.h, optim.h): only the sum of the gradients over the replicas differs, MPI_Allreduce's
 * order of additions instead of libgcl's canonical one.
 */
#ifndef TRAIN_MPI_REPLICA_H
#define TRAIN_MPI_REPLICA_H

#include <mpi.h>
#include <stdint.h>

#include "train.h"

typedef struct {
    train_job_t *job;
    MPI_Comm comm;
    int rank, size;
    size_t np;
    float *state; /* (1 + nstate) x np: the weights, then each optimizer state vector */
    float *grads;
    float *act; /* one micro-batch: the input and every layer's output */
    float *layer[MODEL_MAX_LAYERS + 1];
    float *scratch[2]; /* input gradients of the hidden layers */
    float *col;        /* the convolutions' im2col matrix (NULL without any) */
    uint8_t *labels;
    uint32_t *idx, *perm;
    long perm_epoch;
    double loss_sum; /* since the last progress report */
    long correct, seen;
    double wait_coll;        /* real time of the step in flight inside MPI_Allreduce */
    double *m_step, *m_coll; /* this run's steps, from m_from */
    long m_from, m_count;
    ipu_record_t rec;
} mpi_replica_t;

/* Allocates the replica's buffers and initialises the weights from the seed. Returns 0, or 1
 * after a line. */
int mpi_replica_setup(mpi_replica_t *rp, train_job_t *job, MPI_Comm comm);
void mpi_replica_free(mpi_replica_t *rp);

/* Step STEP (0-based): every micro-batch's forward and backward, the gradient sum over the
 * ranks (MPI_Allreduce) divided by their number, and the optimizer update. */
void mpi_replica_step(mpi_replica_t *rp, long step);

/* The test set, each rank its share: the whole job's summed loss, correct and seen samples. */
void mpi_replica_evaluate(mpi_replica_t *rp, double *loss, long *correct, long *count);

/* 1 when every rank holds bitwise the same weights and optimizer state. */
int mpi_replica_agree(mpi_replica_t *rp);

#endif
