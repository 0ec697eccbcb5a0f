/*
 * What a job keeps in shared memory and temporary files, and how poprun removes all of it,
 * even after it killed mpirun outright (a second Ctrl-C) or an instance was killed.
 *
 * Every job has an id: POPRUN_JOB_NAME (or "job"), a dash and 16 random hex digits. The
 * instances get it as POPRUN_JOB_ID (popdist_env.h), and everything the job makes on this
 * machine carries it:
 *   /dev/shm/poprun-ID/           OpenMPI's shared-memory segments (vader's backing directory,
 *                                 set by each instance wrapper whose host sees this directory:
 *                                 this machine and its network namespaces), and, for a job
 *                                 on this host alone, OpenMPI's session directories
 *                                 (orte_tmpdir_base, mpirun_cmd.h)
 *   /dev/shm/gcl-ID-NONCE-hN      libgcl's host box of host N (unlinked at start-up once every
 *                                 instance of the host has mapped it)
 * A job on this host alone keeps OpenMPI's session directories in the job's: by default every
 * OpenMPI job of the machine makes and removes one shared parent ($TMPDIR or /tmp,
 * ompi.NODE.UID), and OpenMPI 4.1 fails a job that makes it while another job's clean-up removes
 * it ("A call to mkdir was unable to create the desired directory ... File exists": once in a
 * run of the tests beside another job, on a machine where the parent did not exist yet). A job
 * across hosts keeps them where OpenMPI puts them: pid.PID for mpirun, jf.FAMILY for the
 * daemons, FAMILY read from mpirun's contact file.
 *
 * After each run of mpirun, poprun removes what that run left: the segments, the session
 * directories of an mpirun that did not remove them itself, and (after a run that failed) host
 * boxes of instances that died before they were unlinked. On other machines OpenMPI's daemons
 * clean up after a normal end; after a hard kill they cannot, and poprun cannot reach them.
 *
 * An instance can outlive mpirun by a few seconds (a wrapper gives its program 3 s after mpirun
 * died, see instance.h), and an OpenMPI program that still runs may write into its session
 * directory, so a sweep waits for them first: every wrapper that sees the directory holds a
 * shared lock on its file "poprun.lock" (jobdir_hold) for as long as the wrapper or its guard
 * lives, and the sweep takes the lock exclusively once they are gone (jobdir_wait_idle). When
 * poprun itself is killed, its janitor (janitor.h) does the same.
 */
#ifndef POPRUN_JOBDIR_H
#define POPRUN_JOBDIR_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct jobdir {
    char id[64];    /* NAME-HEX */
    char path[128]; /* /dev/shm/poprun-ID, from the start */
    char shm[128];  /* the same once made, or "" when it could not be made */
};

/* Picks the job's id. Returns 0, or -1 with a reason in ERR for a POPRUN_JOB_NAME that is not
 * 1 to 40 letters, digits, '-' or '_'. */
int jobdir_open(struct jobdir *d, char *err, size_t errlen);
/* Makes the job's directory in /dev/shm (mode 0700), before mpirun starts. One that cannot be
 * made is not an error: OpenMPI then keeps its segments where it always does. */
void jobdir_make(struct jobdir *d);

/* After a run of mpirun MPIRUN (reaped): removes what the run left; FAILED when the run did not
 * succeed. Returns how many entries it removed. */
int jobdir_sweep(const struct jobdir *d, pid_t mpirun, bool failed);

/* At poprun's end: removes the directory itself (also one that OpenMPI made after poprun could
 * not). */
void jobdir_close(struct jobdir *d);

/* Waits up to MS milliseconds until no instance of this host holds the job's lock (each has
 * ended). Returns 0 when none does (or there is no lock file), -1 when MS passed first. */
int jobdir_wait_idle(const struct jobdir *d, int ms);

/* The instance wrapper's side: the directory of job ID if this host sees it, else NULL. */
const char *jobdir_for_instance(const char *id, char *buf, size_t len);
/* The instance wrapper's side: takes a shared lock on DIR's lock file (DIR as
 * jobdir_for_instance gave it) and returns its descriptor (close-on-exec, so the program does
 * not hold it), or -1. The lock lasts while any process holding the descriptor lives. */
int jobdir_hold(const char *dir);

#endif /* POPRUN_JOBDIR_H */
