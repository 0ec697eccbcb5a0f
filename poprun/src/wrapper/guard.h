/*
 * The guard of a program's process group: what ends the program's own children once its
 * wrapper is gone.
 *
 * The wrapper runs its program in a process group of its own (instance.h), and the kernel kills
 * the program when the wrapper dies (PR_SET_PDEATHSIG), but nothing that the program started:
 * a shell's children, a data loader's workers, a daemon it left behind. The guard is a small
 * process the wrapper forks into the program's group. It waits on a pipe whose other end only
 * the wrapper holds; when the wrapper is gone, whether it exited after its program or was
 * killed outright (kill -9, or mpirun's teardown, which SIGKILLs the wrapper a second after its
 * SIGTERM), the guard kills the whole group with SIGKILL, itself included. It ignores the
 * signals the wrapper passes on to its program, and holds nothing that mpirun's daemon waits on
 * (its standard streams are /dev/null), so it never delays the end of an instance. Processes
 * that leave the group (setsid, setpgid) are beyond it.
 */
#ifndef POPRUN_GUARD_H
#define POPRUN_GUARD_H

#include <sys/types.h>

/* Forks the guard into process group GROUP (the program's, already made). KEEP_FD, when not -1,
 * stays open in the guard (the job's lock, jobdir.h), so that it is held until the group is
 * gone. Returns the guard's pid and sets *PIPE_FD to the end the wrapper keeps open until it
 * exits (close-on-exec); returns -1 when the guard could not be started. */
pid_t guard_start(pid_t group, int keep_fd, int *pipe_fd);

#endif /* POPRUN_GUARD_H */
