/*
 * What each replica trains on: the order of the training samples in every epoch, the samples
 * of one micro-batch, and their pixels as the model reads them. Both backends (libgcl and the
 * MPI baseline) take their batches from here, so the same seed gives them the same samples in
 * the same order.
 *
 * Every epoch has one order, a Fisher-Yates shuffle from --seed and the epoch number. Each step
 * takes the next global batch, a contiguous run of that order; replica r takes its r-th share
 * (accumulation x micro samples), micro-batch m of it the m-th run of micro samples.
 */
#ifndef TRAIN_ORDER_H
#define TRAIN_ORDER_H

#include <stdint.h>

#include "data/idx.h"

/* The order of N samples in EPOCH: PERM[0..N) becomes a permutation of 0..N-1. */
void order_epoch(uint64_t seed, long epoch, uint32_t n, uint32_t *perm);

/* The layout of a job's steps. */
typedef struct {
    long steps_per_epoch, global_batch;
    int accumulation, micro;
} order_job_t;

/* Position in its epoch's order of sample I of micro-batch M of REPLICA at STEP (0-based). */
long order_position(const order_job_t *j, long step, int replica, int m, int i);

/*
 * --augment flip: whether training sample SAMPLE is mirrored left to right in EPOCH, one coin
 * per sample and epoch from the seed (Fashion-MNIST's clothes are as good mirrored). Every
 * replica, stage and backend gets the same answer without talking to the others.
 */
int order_flipped(uint64_t seed, long epoch, uint32_t sample);

typedef struct {
    uint64_t seed;
    long epoch;
} order_flip_t;

/* Standardised pixels (PIXEL maps each byte) of images IDX[0..ROWS) of SET into X, each mirrored
 * when FLIP (NULL: none) says so for its sample. */
void order_load_images(const float *pixel, const idx_array_t *set, const uint32_t *idx, int rows,
                       const order_flip_t *flip, float *x);

#endif
