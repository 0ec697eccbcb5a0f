/*
 * The watchdog of a host cut off from mpirun; see orphan.h.
 */
#include "orphan.h"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ORPHAN_KILL_S  3
#define ORPHAN_POLL_MS 200

/* /proc/PID/stat's start time (field 22), which tells PID's process from a later one of the
 * same number; 0 when PID is gone. Fills COMM with its name. */
static unsigned long long started(pid_t pid, char *comm, size_t len)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *open_paren = strchr(buf, '('), *close_paren = strrchr(buf, ')');
    if (!open_paren || !close_paren || close_paren < open_paren)
        return 0;
    snprintf(comm, len, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
    unsigned long long start = 0;
    char *at = close_paren + 2; /* field 3 on */
    for (int field = 3; field < 22 && at; field++) {
        at = strchr(at, ' ');
        at = at ? at + 1 : NULL;
    }
    if (at)
        sscanf(at, "%llu", &start);
    return start;
}

static int is_daemon(const char *comm)
{
    return !strcmp(comm, "orted") || !strcmp(comm, "prted");
}

/* Sleeps until DAEMON (started at START) is gone or SECONDS passed. Returns 1 when gone. */
static int gone_within(pid_t daemon, unsigned long long start, int seconds)
{
    char comm[64];
    for (int t = 0; t < seconds * 1000; t += ORPHAN_POLL_MS) {
        if (started(daemon, comm, sizeof comm) != start)
            return 1;
        struct timespec ts = {0, ORPHAN_POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return started(daemon, comm, sizeof comm) != start;
}

static void watch(pid_t daemon, unsigned long long start)
{
    if (gone_within(daemon, start, ORPHAN_WAIT_S))
        return;
    kill(daemon, SIGTERM);
    if (!gone_within(daemon, start, ORPHAN_KILL_S))
        kill(daemon, SIGKILL);
}

void orphan_watch(pid_t daemon)
{
    char comm[64];
    unsigned long long start = started(daemon, comm, sizeof comm);
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
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
    }
    close_range(3, ~0U, 0);
    watch(daemon, start);
    _exit(0);
}
