/*
 * The janitor of a job whose poprun was killed; see janitor.h.
 */
#include "launcher/janitor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/proc.h"

/* What poprun writes: an mpirun's pid, or JANITOR_DONE. */
#define JANITOR_DONE 0

/* Ends mpirun PID (started at START) if it is still there: it got SIGTERM when poprun died. */
static void end_mpirun(pid_t pid, unsigned long long start)
{
    if (!proc_alive(pid, start) || proc_gone_within(pid, start, JANITOR_MPIRUN_MS))
        return;
    kill(-pid, SIGKILL);
    kill(pid, SIGKILL);
    proc_gone_within(pid, start, 1000);
}

/* The janitor itself: never returns. */
static void janitor_main(int rd, const struct jobdir *d)
{
    static const int ignored[] = {SIGINT, SIGHUP, SIGPIPE, SIGQUIT, SIGUSR1, SIGUSR2};
    setsid();
    for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
        signal(ignored[i], SIG_IGN);
    signal(SIGTERM, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    prctl(PR_SET_NAME, "poprun-janitor");
    proc_detach_fds(rd, -1);
    pid_t mpirun = 0;
    unsigned long long start = 0;
    for (;;) {
        pid_t v;
        ssize_t n = read(rd, &v, sizeof(v));
        if (n < 0 && errno == EINTR)
            continue;
        if (n != (ssize_t)sizeof(v))
            break; /* poprun is gone without saying it is done */
        if (v == JANITOR_DONE)
            _exit(0);
        mpirun = v;
        start = proc_started(v, NULL, 0);
    }
    if (mpirun > 0)
        end_mpirun(mpirun, start);
    jobdir_wait_idle(d, JANITOR_IDLE_MS);
    jobdir_sweep(d, mpirun, true);
    struct jobdir copy = *d;
    jobdir_close(&copy);
    _exit(0);
}

void janitor_start(struct janitor *jn, const struct jobdir *d)
{
    int p[2];
    jn->fd = -1;
    jn->pid = 0;
    if (pipe2(p, O_CLOEXEC) != 0)
        return;
    pid_t pid = fork();
    if (pid == 0) {
        close(p[1]);
        janitor_main(p[0], d);
    }
    close(p[0]);
    if (pid < 0) {
        close(p[1]);
        return;
    }
    jn->fd = p[1];
    jn->pid = pid;
}

void janitor_tell_mpirun(int fd)
{
    pid_t self = getpid();
    if (fd >= 0)
        (void)!write(fd, &self, sizeof(self));
}

void janitor_done(struct janitor *jn)
{
    pid_t done = JANITOR_DONE;
    if (jn->fd < 0)
        return;
    /* The janitor may be gone already: Slurm's scancel signals every process of the job's
     * batch step, the janitor too, and this write then must not end poprun with SIGPIPE (its
     * exit status would be the signal's, not the job's 143). */
    struct sigaction ignore = {.sa_handler = SIG_IGN}, old;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &old);
    (void)!write(jn->fd, &done, sizeof(done));
    sigaction(SIGPIPE, &old, NULL);
    close(jn->fd);
    jn->fd = -1;
    /* It exits at once; reaped here so that poprun leaves no zombie while it ends. */
    while (waitpid(jn->pid, NULL, 0) < 0 && errno == EINTR)
        ;
}
