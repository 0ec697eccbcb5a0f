/*
 * train: the project's main job. Data-parallel and pipelined training of an MLP on
 * Fashion-MNIST over simulated IPUs, with libgcl moving the gradients and activations; or, with
 * --backend mpi, the same training over the ranks of plain mpirun with MPI_Allreduce.
 *
 *   poprun --num-replicas 16 --num-instances 4 build/bin/train
 *   mpirun -np 16 build/bin/train --backend mpi
 *
 * Exit status: 0 on success, 1 when the run fails (data, memory, divergence, I/O), 2 for a bad
 * option, 143 (130) when SIGTERM (SIGINT) stopped it after a step, with a checkpoint of that
 * step under --checkpoint. See args.c for the options and README.md for what the run prints.
 */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "backend.h"
#include "gcl/popdist.h"
#include "gcl/popdist_env.h"
#include "gcl/preempt.h"
#include "train.h"

int main(int argc, char **argv)
{
    double t0 = train_now_s();
    train_opts_t o;
    int rc = train_parse_args(argc, argv, &o);
    if (rc)
        return rc == 1 ? 0 : 2;
    /* SIGTERM and SIGINT from here on only set a flag: the job stops after the step in flight
     * (agreed by every replica), with a checkpoint. */
    if (gcl_preempt_enable() != GCL_OK) {
        fprintf(stderr, "train: cannot install the SIGTERM and SIGINT handlers\n");
        return 1;
    }
    /* Restarted by poprun --max-restarts: continue from the newest checkpoint. */
    if (popdist_restart_count() > 0 && o.checkpoint_dir)
        o.resume = 1;
    /* Each IPU thread does its own math: OpenBLAS must not start threads of its own. */
    openblas_set_num_threads(1);
    const char *phantom = getenv("GCL_SIM_PHANTOM"), *offline = getenv(POPDIST_ENV_OFFLINE_MODE);
    if ((phantom && !strcmp(phantom, "1")) || (offline && !strcmp(offline, "1"))) {
        fprintf(stderr, "train: phantom buffers (poprun --offline-mode, GCL_SIM_PHANTOM=1) hold no "
                        "data, and training computes on real data: run without them\n");
        return 2;
    }
    int bar = o.progress == PROGRESS_BAR || (o.progress == PROGRESS_AUTO && isatty(STDOUT_FILENO));
    return o.backend == BACKEND_MPI ? backend_mpi_main(&o, bar, t0) : backend_gcl_main(&o, bar, t0);
}
