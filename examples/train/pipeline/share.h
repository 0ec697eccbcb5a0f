/*
 * A replica's share of a step's micro-batches. A step is the same R0 x G micro-batches however
 * many replicas are left (an elastic job keeps its global batch, elastic.h): with R live
 * replicas, replica r takes micro-batches [R0 G r / R, R0 G (r + 1) / R) of it.
 */
#ifndef TRAIN_SHARE_H
#define TRAIN_SHARE_H

#include "train.h"

/* Replica REPLICA's share of each step, of REPLICAS live replicas: its first micro-batch of the
 * step's R0 x G (*FIRST) and how many (*COUNT); and the gradient's scale R / R0 (*SCALE). */
void train_step_share(const train_job_t *job, int replica, int replicas, int *first, int *count,
                      float *scale);

#endif /* TRAIN_SHARE_H */
