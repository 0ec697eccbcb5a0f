/*
 * The janitor: what finishes a job whose poprun was killed.
 *
 * poprun ends its job and removes the job's files (jobdir.h) however the job ends, as long as
 * poprun itself lives. When poprun is killed outright (kill -9, the OOM killer, a timeout's
 * SIGKILL), the kernel gives mpirun SIGTERM (PR_SET_PDEATHSIG, set in mpirun's process before
 * it is executed), and mpirun ends every instance on every host; but nobody would remove the
 * job's files, and an mpirun that does not end (a host it cannot reach) would hold the job.
 *
 * So before it starts mpirun, poprun forks a janitor: a process in a session of its own (a
 * kill of poprun's process group or a hang-up of its terminal does not reach it), holding
 * nothing but the read end of a pipe from poprun. Each mpirun tells it its pid as it starts;
 * poprun says "done" once it has removed everything itself, and the janitor exits at once.
 * When the pipe closes without that (poprun is gone), the janitor:
 *   1. waits up to JANITOR_MPIRUN_MS for mpirun to end the job, then kills mpirun's process
 *      group with SIGKILL (the instance wrappers then end their programs, and the daemons of
 *      other hosts theirs, as when mpirun is killed under a living poprun);
 *   2. waits up to JANITOR_IDLE_MS for the instances of this host to be gone (the job's lock,
 *      jobdir.h);
 *   3. removes what the job left, as poprun would have (jobdir_sweep, jobdir_close), and exits.
 * All of it ends within JANITOR_MPIRUN_MS + JANITOR_IDLE_MS of poprun's death.
 */
#ifndef POPRUN_JANITOR_H
#define POPRUN_JANITOR_H

#include "common/jobdir.h"

#define JANITOR_MPIRUN_MS 3000
#define JANITOR_IDLE_MS   5000

struct janitor {
    int fd;    /* poprun's end of the pipe, -1 when there is no janitor */
    pid_t pid; /* the janitor */
};

/* Starts the janitor of job directory D (a copy is taken). Without one (fork failed) JN->fd is
 * -1 and the job runs as before. */
void janitor_start(struct janitor *jn, const struct jobdir *d);

/* In mpirun's process, between fork and exec: tells the janitor that this process is the
 * job's mpirun. Async-signal-safe. */
void janitor_tell_mpirun(int fd);

/* poprun has ended the job and removed its files: the janitor exits without doing anything. */
void janitor_done(struct janitor *jn);

#endif /* POPRUN_JANITOR_H */
