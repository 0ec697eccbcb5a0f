/*
 * Processes poprun leaves behind on purpose, and the processes they watch: what the janitor
 * (janitor.h), the guard (guard.h) and the orphan watchdog (orphan.h) share.
 */
#ifndef POPRUN_PROC_H
#define POPRUN_PROC_H

#include <stddef.h>
#include <sys/types.h>

/* /proc/PID/stat's start time (field 22), which tells PID's process from a later one of the
 * same number; 0 when PID is gone (or a zombie). Fills COMM (LEN bytes, may be NULL) with its
 * name. */
unsigned long long proc_started(pid_t pid, char *comm, size_t len);

/* Whether the process PID that started at START (proc_started) is still there. */
int proc_alive(pid_t pid, unsigned long long start);

/* Sleeps until the process PID that started at START is gone, or MS milliseconds passed.
 * Returns 1 when it is gone. */
int proc_gone_within(pid_t pid, unsigned long long start, int ms);

/* For a process that outlives the one that forked it: its standard streams become /dev/null
 * and every other descriptor is closed but KEEP_A and KEEP_B (-1: none), so that it holds
 * nothing another process waits on (a pipe's end, a terminal). */
void proc_detach_fds(int keep_a, int keep_b);

#endif /* POPRUN_PROC_H */
