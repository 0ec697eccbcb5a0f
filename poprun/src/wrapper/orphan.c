/*
 * The watchdog of a host cut off from mpirun; see orphan.h.
 */
#include "wrapper/orphan.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "common/proc.h"

#define ORPHAN_KILL_S 3

static int is_daemon(const char *comm)
{
    return !strcmp(comm, "orted") || !strcmp(comm, "prted");
}

static void watch(pid_t daemon, unsigned long long start)
{
    if (proc_gone_within(daemon, start, ORPHAN_WAIT_S * 1000))
        return;
    kill(daemon, SIGTERM);
    if (!proc_gone_within(daemon, start, ORPHAN_KILL_S * 1000))
        kill(daemon, SIGKILL);
}

void orphan_watch(pid_t daemon)
{
    char comm[64];
    unsigned long long start = proc_started(daemon, comm, sizeof comm);
    if (!start || !is_daemon(comm))
        return;
    pid_t pid = fork();
    if (pid != 0)
        return; /* the wrapper goes on to exit; a failed fork leaves things as they were */
    /* The watchdog: in a session of its own, so that the daemon's end of the job (it kills its
     * children's process groups) does not take it along, and with nothing held open that the
     * daemon waits on: it counts an instance ended only once its output pipes are closed, so
     * the watchdog has no stderr either (a host cut off has nobody to read it). */
    setsid();
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_IGN);
    proc_detach_fds(-1, -1);
    watch(daemon, start);
    _exit(0);
}
