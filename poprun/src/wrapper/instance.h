/*
 * The instance wrapper: what poprun runs on every rank (hidden option --_instance TOKEN).
 *
 * mpirun starts the same command on every rank, so poprun starts itself there; the wrapper reads
 * its rank (OMPI_COMM_WORLD_RANK), recomputes the plan from the options poprun passed, sets the
 * POPDIST_* variables, binds to a NUMA node with --numa-aware, and runs the program as its child
 * with stdout and stderr piped. It never calls MPI_Init: the program does, and inherits the
 * OpenMPI/PMIx environment of the rank.
 *
 * Output: every line the program writes is prefixed with "[instance N] " and written to the same
 * stream (stdout or stderr); with --only-output-from-instance M, instances other than M drop
 * their program's output (poprun's own messages still pass).
 *
 * Exit: the program's status, or 128+N when signal N killed it. When the program failed on its
 * own (not because the wrapper was told to stop), the wrapper first writes a status marker
 * (marker.h) on its stderr, which poprun turns into "instance N (host H) exited with status S".
 *
 * Signals: the program runs in a process group of its own, so that what orted sends to the
 * wrapper's group reaches the program only through the wrapper. SIGUSR1 and SIGUSR2 (poprun's
 * graceful stop, which mpirun passes on to every rank) become SIGTERM and SIGINT for the program,
 * which ends when it is ready: then the wrapper exits 0 if the program ended with 0, 130 or 143
 * or by SIGTERM or SIGINT (so that mpirun does not kill the instances still stopping), and with
 * the program's status and a marker otherwise. SIGTERM, SIGINT and SIGHUP (mpirun ending the
 * job) are passed to the program, whose process group gets SIGKILL if it is still there 3 s
 * later, or at once during a graceful stop (its time is up). If the wrapper's parent (mpirun or
 * orted) dies, the wrapper gets SIGTERM; if the wrapper dies, the program gets SIGKILL, and the
 * guard (guard.h) kills the rest of its process group: no strays. While the wrapper lives it
 * holds the job's lock (jobdir.h), so that poprun removes the job's files only after it.
 */
#ifndef POPRUN_INSTANCE_H
#define POPRUN_INSTANCE_H

#include "cli/options.h"

/* Runs the wrapper for the options O (instance_token set). Returns the exit status. */
int instance_main(const struct poprun_options *o);

#endif /* POPRUN_INSTANCE_H */
