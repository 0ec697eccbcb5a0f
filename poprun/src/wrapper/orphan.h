/*
 * A host cut off from mpirun ends its own part of the job.
 *
 * When an instance fails, mpirun ends the job: it tells every host's daemon (orted) to kill its
 * instances and exits, and the daemons follow it. A host whose network is gone (its link down,
 * no connection ever closed) hears none of that: its daemon waits on a connection that will
 * only time out after TCP's retransmissions, some 15 minutes, while libgcl has already ended
 * that host's instances (their peers stopped answering). The wrapper of an instance that failed
 * therefore leaves a watchdog behind: a process of its own session that waits for the daemon
 * to go, and ends it (SIGTERM, then SIGKILL 3 s later) if it is still there ORPHAN_WAIT_S
 * seconds after the failure, by when a daemon that can reach mpirun is long gone. Only
 * OpenMPI's daemons are watched (orted, prted): when mpirun started the instance itself (one
 * host), poprun watches mpirun.
 */
#ifndef POPRUN_ORPHAN_H
#define POPRUN_ORPHAN_H

#include <sys/types.h>

#define ORPHAN_WAIT_S 15

/* Leaves the watchdog for DAEMON, the wrapper's parent, when it is one of OpenMPI's daemons. */
void orphan_watch(pid_t daemon);

#endif /* POPRUN_ORPHAN_H */
