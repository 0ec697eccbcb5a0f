/*
 * Running mpirun and watching it: poprun's side of a job.
 *
 * mpirun runs in its own process group, with its stderr piped to poprun (which removes the
 * instances' status markers, see outcome.h) and its stdout straight to poprun's. The first
 * SIGINT, SIGTERM or SIGHUP poprun gets starts a graceful stop: every instance's program, on
 * every host, gets SIGINT (for SIGINT) or SIGTERM (carried by mpirun as SIGUSR2 or SIGUSR1 to
 * the instance wrappers, see instance.h) and --graceful-timeout seconds to end by itself; then
 * mpirun gets SIGTERM, which kills what is left within a second or two. With --graceful-timeout
 * 0, mpirun gets SIGTERM at once. A second signal kills mpirun's process group with SIGKILL
 * (the instance wrappers then kill their programs). poprun reaps mpirun: no zombies. If poprun
 * itself is killed, mpirun gets SIGTERM from the kernel, and the janitor (janitor.h) sees the
 * job to its end.
 */
#ifndef POPRUN_LAUNCH_H
#define POPRUN_LAUNCH_H

#include <stdbool.h>
#include <stddef.h>

#include "launcher/outcome.h"
#include "common/util.h"

/* Runs ARGV (argv[0] found on PATH) until it exits, filling OUT (whose token, verbose, emit and
 * emit_ctx the caller set). When AS_ROOT, sets OMPI_ALLOW_RUN_AS_ROOT=1 and
 * OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 for mpirun. mpirun gets SIGTERM if poprun dies, and tells
 * the janitor at JANITOR_FD (-1: none; janitor.h) its pid. Returns 0, or -1 with a reason in
 * ERR when mpirun could not be started at all. */
int launch_run(const struct strvec *argv, bool as_root, int janitor_fd, struct outcome *out,
               char *err, size_t errlen);

#endif /* POPRUN_LAUNCH_H */
