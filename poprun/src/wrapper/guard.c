/*
 * The guard of a program's process group; see guard.h.
 */
#include "wrapper/guard.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include "common/proc.h"

/* The guard itself: never returns. */
static void guard_main(pid_t group, int rd, int keep_fd)
{
    static const int ignored[] = {SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2, SIGPIPE, SIGQUIT};
    if (setpgid(0, group) != 0)
        _exit(0); /* the program is gone already, and its group with it */
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        signal(ignored[i], SIG_IGN);
    prctl(PR_SET_NAME, "poprun-guard");
    proc_detach_fds(rd, keep_fd);
    for (;;) {
        char c;
        ssize_t n = read(rd, &c, 1);
        if (n == 0 || (n < 0 && errno != EINTR))
            break; /* the wrapper is gone */
    }
    kill(0, SIGKILL);
    _exit(0);
}

pid_t guard_start(pid_t group, int keep_fd, int *pipe_fd)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        guard_main(group, p[0], keep_fd);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return -1;
    }
    *pipe_fd = p[1];
    return pid;
}
