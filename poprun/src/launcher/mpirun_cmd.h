/*
 * The mpirun command line, built as an argument vector (it is executed with execvp, never
 * through a shell):
 *
 *   mpirun [--allow-run-as-root] --oversubscribe --bind-to none
 *          [--mca orte_tmpdir_base /dev/shm/poprun-ID]     (on one host, unless the user set one)
 *          [--host h1:2,h2:2 --map-by slot]          (with -H/--hostfile: I/H slots per host)
 *          [--mca orte_launch_agent "POPRUN --_orted"]  (across hosts in a Slurm allocation)
 *          [--mca btl_tcp_if_include S --mca oob_tcp_if_include S]      (--host-subnet S)
 *          [MPI-GLOBAL-ARGS...]
 *          -np I -x POPRUN_JOB_ID=ID [-x NAME[=VALUE]...] [MPI-LOCAL-ARGS...]
 *          POPRUN --_instance TOKEN --num-replicas R --num-instances I --ipus-per-replica P
 *                 --num-ilds K --topology T [--host h1,h2] [--offline-mode]
 *                 [--process-placement=spreadcores|spreadnuma] [--host-subnet S]
 *                 [--executable-cache-path DIR] [--only-output-from-instance N] [-v...]
 *                 -- PROGRAM ARGS...
 *
 * --oversubscribe: each instance runs many IPU threads and tests run more ranks than cores.
 * --bind-to none: an instance is not one thread; the wrapper binds it (binding.h), to its share
 * of its host's cores by default where they are the job's own. Words of --mpi-global-args come
 * later, and mpirun takes the last --bind-to.
 * --map-by slot with I/H slots per host puts instances on hosts in contiguous blocks, as planned.
 * orte_tmpdir_base: on one host, OpenMPI's session directories in the job's own (jobdir.h), not in
 * the parent that every OpenMPI job of the machine makes and removes.
 */
#ifndef POPRUN_MPIRUN_CMD_H
#define POPRUN_MPIRUN_CMD_H

#include <stdbool.h>
#include <stddef.h>

#include "cli/options.h"
#include "plan/plan.h"
#include "common/util.h"

struct mpirun_cmd {
    const struct poprun_options *opts;
    const struct plan *plan;
    const char *mpirun;     /* the mpirun to run: "mpirun", or $POPRUN_MPIRUN */
    const char *self;       /* absolute path of poprun itself, started on every rank */
    const char *token;      /* per-job token for status markers */
    const char *topology;   /* preset name or absolute file path, for the instances */
    bool as_root;           /* add --allow-run-as-root (root, or --allow-run-as-root) */
    const char *cache_path; /* --executable-cache-path made absolute, or NULL */
    const char *job_id;     /* the job's id (jobdir.h), passed on as POPRUN_JOB_ID */
    const char *job_dir;    /* the job's directory (jobdir.h): mpirun's session directory's base */
    const char *placement;  /* the wrappers' binding (binding.h): spreadcores, spreadnuma, NULL */
    bool slurm;             /* inside a Slurm allocation (slurm.h): orted through orted_agent.h */
};

/* Appends the command line to ARGV. Returns 0, or -1 with a reason in ERR (bad quoting in
 * --mpi-global-args or --mpi-local-args). */
int mpirun_cmd_build(const struct mpirun_cmd *c, struct strvec *argv, char *err, size_t errlen);

#endif /* POPRUN_MPIRUN_CMD_H */
