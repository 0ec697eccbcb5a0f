/*
 * Running and watching mpirun; see launch.h.
 */
#include "launcher/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/janitor.h"
#include "common/linebuf.h"

/* How long to keep reading mpirun's stderr after it exited: remote daemons may hold the pipe. */
#define DRAIN_MS 500

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The child: own process group, stderr to the pipe, ends with poprun, exec mpirun. Never
 * returns. */
static void exec_mpirun(char *const argv[], int err_w, bool as_root, const sigset_t *oldmask,
                        pid_t poprun, int janitor_fd)
{
    setpgid(0, 0);
    /* A poprun killed outright (kill -9) leaves mpirun SIGTERM, which ends every instance on
     * every host; mpirun would otherwise run on until an instance wrote to its closed stderr.
     * If poprun is already gone, there is nothing to run for. */
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != poprun)
        _exit(128 + SIGTERM);
    janitor_tell_mpirun(janitor_fd);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    if (as_root) {
        setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
        setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    }
    /* A wrapper exits 0 only when its program did, or stopped as poprun's graceful stop asked.
     * A program that MPI_Init'ed and then died of the SIGTERM it was given (any program without
     * a handler) never called MPI_Finalize; mpirun would take that rank for an "improper" exit
     * and tear the job down by signalling every other wrapper and sleeping a second
     * (odls_base_sigkill_timeout) before it kills them. Unless the user says otherwise. */
    setenv("OMPI_MCA_orte_allowed_exit_without_sync", "1", 0);
    if (dup2(err_w, 2) < 0)
        _exit(127);
    execvp(argv[0], argv);
    dprintf(2, "poprun: cannot run %s: %s\n", argv[0], strerror(errno));
    _exit(127);
}

struct watch {
    pid_t child; /* 0 once reaped */
    int interrupts;
    long long drain_to;
    long long graceful_to; /* when a graceful stop gives up (0: none under way) */
    int carrier;           /* the signal that carries the stop to the wrappers */
    int carried_again;     /* the stop's time is up and the carrier was sent again */
    bool stopping;         /* a graceful stop is under way (a signal, or an instance's marker) */
    long long failed_to;   /* when mpirun must have ended the job after a failure (0: none) */
    int failure_kills;     /* signals sent to mpirun for that: SIGTERM, then SIGKILL */
    bool complete;         /* an elastic job is complete: the deadline is for that */
};

/* After an instance failed, mpirun ends the others within a second or two; one whose daemon on
 * another host it cannot reach any more (the host fell off the network) may wait forever. */
#define FAILURE_GRACE_MS 10000
#define FAILURE_KILL_MS  3000

/* The first SIGINT, SIGTERM or SIGHUP: a graceful stop. mpirun passes SIGUSR1 and SIGUSR2 on to
 * every instance wrapper on every host, and the wrappers give their programs SIGTERM and SIGINT
 * (see instance.h); mpirun itself would answer SIGTERM by killing every instance within a
 * second. After --graceful-timeout, or at once when it is 0, mpirun gets SIGTERM after all. */
static void start_stop(struct watch *w, int sig, struct outcome *out)
{
    w->stopping = true;
    out->interrupt_sig = sig;
    if (out->on_stop)
        out->on_stop(out->marker_ctx);
    if (out->graceful_timeout_s <= 0) {
        kill(w->child, SIGTERM);
        return;
    }
    w->carrier = sig == SIGINT ? SIGUSR2 : SIGUSR1;
    kill(w->child, w->carrier);
    w->graceful_to = now_ms() + 1000LL * out->graceful_timeout_s;
}

/* If mpirun has not ended within this long of the carrier's second trip, it gets SIGTERM. */
#define EXPIRED_KILL_MS 2000

/* The graceful stop's time is up: what still runs is killed. The carrier goes out again, and
 * each wrapper kills its program at once and exits 0, so mpirun ends as after a clean run; it
 * would answer a SIGTERM of its own by signalling every wrapper and then sleeping a second
 * (odls_base_sigkill_timeout) before it kills them. mpirun gets SIGTERM only if that fails. */
static void end_stop(struct watch *w, struct outcome *out)
{
    out->graceful_expired = true;
    if (!w->carried_again) {
        w->carried_again = 1;
        kill(w->child, w->carrier);
        w->graceful_to = now_ms() + EXPIRED_KILL_MS;
        return;
    }
    w->graceful_to = 0;
    kill(w->child, SIGTERM);
}

static void on_signal(struct watch *w, int sfd, struct outcome *out)
{
    struct signalfd_siginfo si;
    if (read(sfd, &si, sizeof(si)) != sizeof(si))
        return;
    int sig = (int)si.ssi_signo;
    if (sig == SIGCHLD) {
        int st;
        if (w->child > 0 && waitpid(w->child, &st, WNOHANG) == w->child) {
            out->mpirun_done = true;
            out->mpirun_status = st;
            w->child = 0;
            w->drain_to = now_ms() + DRAIN_MS;
        }
        return;
    }
    if (w->child <= 0)
        return;
    if (w->interrupts++ == 0) {
        out->signaled = true;
        if (!w->stopping) /* else an instance's stop marker began the same stop */
            start_stop(w, sig, out);
        else
            out->interrupt_sig = sig;
    } else {
        static const char msg[] = "poprun: interrupted again: killing mpirun\n";
        (void)write_all(2, msg, sizeof(msg) - 1);
        kill(-w->child, SIGKILL);
        kill(w->child, SIGKILL);
    }
}

/* A failure is known and mpirun has not ended the job in time: end mpirun, once politely. */
static void failure_overdue(struct watch *w, struct outcome *out)
{
    if (w->failure_kills++ == 0) {
        char msg[160];
        int n = snprintf(msg, sizeof msg,
                         "poprun: mpirun did not end the job within %d s of %s (a host may be "
                         "unreachable): killing it\n",
                         FAILURE_GRACE_MS / 1000, w->complete ? "its elastic end" : "the failure");
        (void)write_all(2, msg, (size_t)n);
        out->overdue_s = FAILURE_GRACE_MS / 1000;
        kill(w->child, SIGTERM);
        w->failed_to = now_ms() + FAILURE_KILL_MS;
        return;
    }
    kill(-w->child, SIGKILL);
    kill(w->child, SIGKILL);
    w->failed_to = 0;
}

/* The nearest of the deadlines the loop keeps, or 0 for none. */
static long long next_deadline(const struct watch *w)
{
    if (w->child == 0)
        return w->drain_to;
    long long d = w->graceful_to;
    if (w->failed_to && (!d || w->failed_to < d))
        d = w->failed_to;
    return d;
}

static void watch_loop(struct watch *w, int sfd, int err_r, struct outcome *out)
{
    struct linebuf lb;
    linebuf_init(&lb, 65536, outcome_filter_line, out);
    for (;;) {
        if (w->child == 0 && (err_r < 0 || now_ms() >= w->drain_to))
            break;
        /* Before the poll, not after it: a failure the last read brought must set the deadline
         * this poll waits for, or a marker that is mpirun's last line (a host it cannot reach
         * keeps it from ending the job, and from saying more) left poprun waiting forever. */
        if (w->child > 0 && !out->elastic && (out->have_failure || out->host_lost) &&
            !w->failed_to && !w->failure_kills)
            w->failed_to = now_ms() + FAILURE_GRACE_MS;
        if (w->child > 0 && out->complete && !w->failed_to && !w->failure_kills &&
            (w->complete = out->complete(out->marker_ctx)))
            w->failed_to = now_ms() + FAILURE_GRACE_MS;
        struct pollfd pfd[2] = {{sfd, POLLIN, 0}, {err_r, POLLIN, 0}};
        long long deadline = next_deadline(w);
        if (out->complete && w->child > 0 && !w->failed_to &&
            (!deadline || deadline > now_ms() + 500))
            deadline = now_ms() + 500; /* look again at least every 0.5 s */
        int timeout = deadline ? (int)(deadline - now_ms()) : -1;
        if (poll(pfd, 2, deadline && timeout < 0 ? 0 : timeout) < 0 && errno != EINTR)
            break;
        if (w->child > 0 && w->graceful_to && now_ms() >= w->graceful_to)
            end_stop(w, out);
        if (w->child > 0 && w->failed_to && now_ms() >= w->failed_to)
            failure_overdue(w, out);
        if (pfd[0].revents & POLLIN)
            on_signal(w, sfd, out);
        if (err_r >= 0 && (pfd[1].revents & (POLLIN | POLLHUP | POLLERR))) {
            char buf[16384];
            ssize_t n = read(err_r, buf, sizeof(buf));
            if (n > 0) {
                linebuf_feed(&lb, buf, (size_t)n);
                /* An instance was stopped from outside poprun (Slurm signalled its step), or its
                 * program stopped by itself: the whole job stops, as on poprun's own signal. */
                if (out->stop_sig && !w->stopping && w->child > 0)
                    start_stop(w, out->stop_sig, out);
            } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
                close(err_r);
                err_r = -1;
            }
        }
    }
    linebuf_finish(&lb);
    linebuf_free(&lb);
    outcome_filter_finish(out);
    if (err_r >= 0)
        close(err_r);
}

int launch_run(const struct strvec *argv, bool as_root, int janitor_fd, struct outcome *out,
               char *err, size_t errlen)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return errf(err, errlen, "pipe: %s", strerror(errno));
    sigset_t mask, oldmask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigprocmask(SIG_BLOCK, &mask, &oldmask);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (sfd < 0) {
        int e = errno;
        close(p[0]);
        close(p[1]);
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        return errf(err, errlen, "signalfd: %s", strerror(e));
    }
    pid_t self = getpid();
    struct watch w = {.child = fork()};
    if (w.child == 0)
        exec_mpirun(argv->v, p[1], as_root, &oldmask, self, janitor_fd);
    int rc = 0;
    close(p[1]);
    if (w.child < 0) {
        rc = errf(err, errlen, "cannot start mpirun: %s", strerror(errno));
        close(p[0]);
    } else {
        setpgid(w.child, w.child); /* also here, so no signal can race the child's own call */
        out->mpirun_pid = w.child;
        watch_loop(&w, sfd, p[0], out);
    }
    close(sfd);
    /* The signals stay blocked: poprun is about to exit, and a late Ctrl-C must not kill it
     * before it reports how the job ended. */
    return rc;
}
