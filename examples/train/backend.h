/*
 * The two ways train moves its gradients, each with its own start-up, training loop driver and
 * exit path. Both take the same options, data, model, sample order and optimizer (job.h,
 * order.h, model.h, optim.h), print the same progress and summary and write the same JSON keys
 * (report.h), so the two are compared on the same work.
 *
 *   gcl  libgcl over simulated IPUs, under poprun (or alone, or under plain mpirun, where libgcl
 *        forms one job of the ranks): the main job, with pipelines, checkpoints, preemption and
 *        restarts, and every IPU's simulated clock and memory.
 *   mpi  the baseline a team with an MPI cluster runs today: plain `mpirun -np N train --backend
 *        mpi`, one replica per rank, the gradients summed by MPI_Allreduce. It does not start
 *        libgcl (no gcl_init): nothing is simulated, and the JSON says so.
 */
#ifndef TRAIN_BACKEND_H
#define TRAIN_BACKEND_H

#include "args.h"

/* Each loads the data, trains and reports; returns the exit status (0, 1, 2, or 128 + the
 * signal that stopped the run). BAR: progress as a bar redrawn in place. */
int backend_gcl_main(const train_opts_t *o, int bar, double t0);
int backend_mpi_main(const train_opts_t *o, int bar, double t0);

#endif
