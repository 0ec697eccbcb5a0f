/*
 * Processes seen through /proc, and detached ones; see proc.h.
 */
#include "common/proc.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 50

unsigned long long proc_started(pid_t pid, char *comm, size_t len)
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
    if (comm)
        snprintf(comm, len, "%.*s", (int)(close_paren - open_paren - 1), open_paren + 1);
    if (close_paren[1] == ' ' && close_paren[2] == 'Z')
        return 0; /* a zombie has ended: only its status is left */
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

int proc_alive(pid_t pid, unsigned long long start)
{
    return start != 0 && proc_started(pid, NULL, 0) == start;
}

int proc_gone_within(pid_t pid, unsigned long long start, int ms)
{
    for (int t = 0; t < ms; t += POLL_MS) {
        if (!proc_alive(pid, start))
            return 1;
        struct timespec ts = {0, POLL_MS * 1000000L};
        nanosleep(&ts, NULL);
    }
    return !proc_alive(pid, start);
}

void proc_detach_fds(int keep_a, int keep_b)
{
    int null = open("/dev/null", O_RDWR);
    if (null >= 0) {
        for (int fd = 0; fd < 3; fd++)
            dup2(null, fd);
    }
    int keep[2] = {keep_a < keep_b ? keep_a : keep_b, keep_a < keep_b ? keep_b : keep_a};
    unsigned next = 3;
    for (int k = 0; k < 2; k++) {
        if (keep[k] < (int)next)
            continue;
        if ((unsigned)keep[k] > next)
            close_range(next, (unsigned)keep[k] - 1, 0);
        next = (unsigned)keep[k] + 1;
    }
    close_range(next, ~0U, 0);
}
