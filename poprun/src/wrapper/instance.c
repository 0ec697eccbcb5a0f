/*
 * The instance wrapper; see instance.h.
 */
#include "wrapper/instance.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
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

#include "wrapper/guard.h"
#include "plan/hostlist.h"
#include "wrapper/instance_env.h"
#include "common/jobdir.h"
#include "wrapper/instance_setup.h"
#include "common/linebuf.h"
#include "common/marker.h"
#include "wrapper/numa.h"
#include "wrapper/orphan.h"
#include "plan/plan.h"

#include <gcl/elastic_store.h>
#include <gcl/popdist_env.h>

/* mpirun's daemons read each instance's output in chunks of at most 4096 bytes (OpenMPI's
 * ORTE_IOF_BASE_MSG_MAX) and interleave the chunks of different instances: a line that a chunk
 * ends in the middle of was broken by another instance's output (2% of the lines of 4 instances
 * writing at full speed on a loaded host). So a tagged line is written only when it fits, with
 * what the pipe already holds, in one chunk (write_line_whole): every chunk then ends at the end
 * of a line. That needs a pipe, and the wrapper's stdout is the daemon's pseudo-terminal, whose
 * unread bytes cannot be asked: the program's stdout lines travel on the wrapper's stderr (a
 * pipe), each behind a marker (marker.h) that tells poprun to write it on its stdout. */
#define IOF_CHUNK 4096
/* Longest piece of a line tagged at once, so that a tagged piece fits a chunk; longer lines are
 * split and each piece tagged. */
#define TAG_LINE_MAX (IOF_CHUNK - 64)
/* How long the program gets between SIGTERM and SIGKILL. */
#define KILL_GRACE_MS 3000
/* How long to keep reading output after the program exited (a background child may hold the
 * pipe open forever). */
#define DRAIN_MS 200
/* How long the wrapper of a program that a signal ended (kill -9, say) waits before it exits.
 * Its exit makes mpirun end every instance at once; this gives the survivors time to notice the
 * death themselves and say which instance died (libgcl looks every ~100 ms). mpirun's own
 * teardown signal ends the wait early. */
#define LINGER_MS 1000
/* When poprun stops a job, mpirun carries the stop to every wrapper, but a program whose peer
 * ended first may fail on its own (its peer is gone) just after its wrapper was told. Such a
 * failure is the stop's doing, not the program's: a program that fails within STOP_RACE_MS of
 * being told counts as having stopped as asked, and is not reported. A failure later in a
 * graceful stop (a checkpoint that cannot be written) is. (A wrapper does not wait for a stop
 * after an unasked failure: survivors that linger are still alive when mpirun tears the job
 * down, and that costs a second, odls_base_sigkill_timeout.) */
#define STOP_RACE_MS 100

struct stream {
    int in;  /* read end of the program's pipe, -1 once at EOF */
    int out; /* 1 or 2 */
    bool drop;
    bool pipe; /* OUT is a pipe (to mpirun or its daemon) */
    const char *prefix;
    char mark[96]; /* before the prefix: stdout's marker when it travels on stderr, or "" */
    struct linebuf lb;
};

static void emit_line(void *ctx, const char *line, size_t len)
{
    struct stream *s = ctx;
    if (s->drop)
        return;
    size_t mlen = strlen(s->mark), plen = strlen(s->prefix), n = mlen + plen + len + 1;
    char *buf = xmalloc(n);
    memcpy(buf, s->mark, mlen);
    memcpy(buf + mlen, s->prefix, plen);
    memcpy(buf + mlen + plen, line, len);
    buf[n - 1] = '\n';
    /* nobody to tell if the reader is gone */
    if (s->pipe)
        (void)write_line_whole(s->out, buf, n, IOF_CHUNK);
    else
        (void)write_all(s->out, buf, n);
    free(buf);
}

/* The program's stdout (K 0) and stderr (K 1), read from IN, as the wrapper passes them on. */
static void stream_init(struct stream *s, int k, int in, bool drop, const char *prefix,
                        const char *token)
{
    bool via_err = k == 0 && is_pipe(2);

    *s = (struct stream){.in = in, .out = k == 0 && !via_err ? 1 : 2, .drop = drop};
    s->pipe = is_pipe(s->out);
    s->prefix = prefix;
    if (via_err)
        marker_out_prefix(s->mark, sizeof(s->mark), token);
    linebuf_init(&s->lb, TAG_LINE_MAX, emit_line, s);
}

/* Sets the POPDIST_* variables of instance RANK. */
static void set_env(const struct plan *p, int rank, const struct poprun_options *o,
                    const char *prefix)
{
    struct strvec env = STRVEC_INIT;
    instance_env_build(p, rank, o->topology, o->offline_mode > 0, &env);
    for (int i = 0; i < env.n; i++) {
        char *eq = strchr(env.v[i], '=');
        *eq = '\0';
        setenv(env.v[i], eq + 1, 1);
        if (o->verbose >= 2)
            fprintf(stderr, "%spoprun: %s=%s\n", prefix, env.v[i], eq + 1);
    }
    strvec_free(&env);
}

#ifndef POPRUN_BIN_TO_LIB
#define POPRUN_BIN_TO_LIB "../lib"
#endif

/* POPRUN_LIBGCL: the libgcl installed (or built) beside this poprun, for a program that loads
 * libgcl at run time (the Python package) to take the library of the poprun that runs it
 * rather than another build's. Left alone when set, or when there is none. */
static void export_libgcl(void)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (getenv("POPRUN_LIBGCL") || n <= 0)
        return;
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (!slash)
        return;
    *slash = '\0';
    static const char *const rel[] = {POPRUN_BIN_TO_LIB, "../lib"}; /* installed; a build */
    for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
        char lib[PATH_MAX + 64];
        snprintf(lib, sizeof(lib), "%s/%s/libgcl.so.0", exe, rel[i]);
        char real[PATH_MAX];
        if (realpath(lib, real) && access(real, R_OK) == 0) {
            setenv("POPRUN_LIBGCL", lib, 1);
            return;
        }
    }
}

/* The child: its own process group (orted signals the wrapper's group: only the wrapper decides
 * what reaches the program), restores signals, dies with the wrapper, execs the program. Never
 * returns. */
static void exec_program(char *const argv[], int out_w, int err_w, int report_fd,
                         const sigset_t *oldmask, const char *prefix)
{
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, oldmask, NULL);
    if (dup2(out_w, 1) < 0 || dup2(err_w, 2) < 0)
        _exit(127);
    execvp(argv[0], argv);
    int e = errno;
    dprintf(report_fd, "%spoprun: cannot run '%s': %s\n", prefix, argv[0], strerror(e));
    _exit(e == ENOENT ? 127 : 126);
}

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Reads what is available on S; closes it at EOF. */
static void pump(struct stream *s)
{
    char buf[16384];
    ssize_t n = read(s->in, buf, sizeof(buf));
    if (n > 0) {
        linebuf_feed(&s->lb, buf, (size_t)n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        linebuf_finish(&s->lb);
        close(s->in);
        s->in = -1;
    }
}

struct supervisor {
    pid_t parent;      /* the wrapper's parent: mpirun's daemon (or mpirun) */
    int rank;          /* for the stop marker */
    const char *token; /* the job's marker token */
    int carriers;      /* graceful-stop carriers (SIGUSR1/SIGUSR2) received from poprun */
    int outside_sig;   /* the first stop signal from outside poprun's chain, or 0 */
    pid_t child;
    pid_t guard;        /* the guard of the program's group (guard.h), 0 once reaped */
    int status;         /* valid once child == 0 */
    bool stopping;      /* told to stop: the failure is not the program's own */
    bool graceful;      /* poprun's graceful stop: the program ends when it is ready */
    bool teardown;      /* mpirun ends the job (or the wrapper's parent died) */
    long long stop_at;  /* when the graceful stop's carrier came */
    long long exit_at;  /* when the program ended */
    bool expired;       /* a second stop carrier: --graceful-timeout is over, program killed */
    long long kill_at;  /* when to SIGKILL the program, 0 for never */
    long long drain_to; /* when to stop reading after the program exited */
};

/* Whether stop signal SI came from outside poprun's chain: sent by a process (not the kernel)
 * that is not the wrapper's parent, which is still alive (a parent's death signal comes from
 * the parent). Slurm signals every process of a job step so: scancel, sbatch --signal. */
static bool from_outside(const struct supervisor *sv, const struct signalfd_siginfo *si)
{
    return si->ssi_code <= 0 && (pid_t)si->ssi_pid != sv->parent && getppid() == sv->parent;
}

/* A stop from outside poprun: a preemption of the whole job. The program gets the signal (the
 * sender may have given it too) and the time it needs; poprun hears of it at once and stops
 * the other instances gracefully. Not a graceful stop of poprun's: mpirun's teardown after it
 * still gives the program KILL_GRACE_MS (mpirun may have had the same signal). */
static void outside_stop(struct supervisor *sv, int sig)
{
    if (!sv->outside_sig) {
        char line[256];
        struct marker m = {sv->rank, MARKER_STOP, sig};
        size_t n = marker_format(line, sizeof(line), sv->token, &m);
        (void)write_all(2, line, n);
        sv->outside_sig = sig;
    }
    if (!sv->stopping && sv->child > 0) {
        kill(sv->child, sig == SIGHUP ? SIGTERM : sig);
        sv->stop_at = now_ms();
    }
    sv->stopping = true;
}

/* Handles one signal from the signalfd. */
static void on_signal(struct supervisor *sv, int sfd)
{
    struct signalfd_siginfo si;
    if (read(sfd, &si, sizeof(si)) != sizeof(si))
        return;
    if (si.ssi_signo == SIGCHLD) {
        int st;
        if (sv->guard > 0 && waitpid(sv->guard, &st, WNOHANG) == sv->guard)
            sv->guard = 0; /* killed with the program's group */
        if (sv->child > 0 && waitpid(sv->child, &st, WNOHANG) == sv->child) {
            sv->status = st;
            sv->child = 0;
            sv->exit_at = now_ms();
            sv->drain_to = now_ms() + DRAIN_MS;
        }
        return;
    }
    int sig = (int)si.ssi_signo;
    if (sig == SIGUSR1 || sig == SIGUSR2) {
        /* poprun's graceful stop, carried by mpirun: SIGTERM or SIGINT for the program, which
         * takes the time it needs (poprun ends the job after --graceful-timeout). */
        if (sv->carriers++ == 0) {
            if (!sv->stopping && sv->child > 0) {
                kill(sv->child, sig == SIGUSR2 ? SIGINT : SIGTERM);
                sv->stop_at = now_ms();
            }
        } else if (sv->graceful && sv->child > 0) {
            /* The stop's second carrier: poprun's --graceful-timeout is over. */
            kill(-sv->child, SIGKILL);
            sv->expired = true;
        }
        sv->stopping = sv->graceful = true;
        return;
    }
    if (from_outside(sv, &si)) {
        outside_stop(sv, sig);
        return;
    }
    /* mpirun ending the job, or the wrapper's parent gone. During a graceful stop that means
     * its time is up (or another instance failed): the program is killed now. */
    bool graceful = sv->graceful;
    sv->stopping = sv->teardown = true;
    if (sv->child > 0 && graceful) {
        kill(-sv->child, SIGKILL);
    } else if (sv->child > 0) {
        kill(sv->child, sig);
        if (!sv->kill_at)
            sv->kill_at = now_ms() + KILL_GRACE_MS;
    }
}

/* Runs the event loop until the program exited and its output is read. */
static void supervise(struct supervisor *sv, struct stream s[2], int sfd)
{
    for (;;) {
        if (sv->child == 0 && ((s[0].in < 0 && s[1].in < 0) || now_ms() >= sv->drain_to))
            return;
        struct pollfd pfd[3] = {{sfd, POLLIN, 0}, {s[0].in, POLLIN, 0}, {s[1].in, POLLIN, 0}};
        long long deadline = sv->child == 0 ? sv->drain_to : sv->kill_at;
        int timeout = deadline ? (int)(deadline - now_ms()) : -1;
        if (poll(pfd, 3, deadline && timeout < 0 ? 0 : timeout) < 0 && errno != EINTR)
            return;
        if (pfd[0].revents & POLLIN)
            on_signal(sv, sfd);
        for (int k = 0; k < 2; k++) {
            if (s[k].in >= 0 && (pfd[k + 1].revents & (POLLIN | POLLHUP | POLLERR)))
                pump(&s[k]);
        }
        if (sv->child > 0 && sv->kill_at && now_ms() >= sv->kill_at) {
            kill(-sv->child, SIGKILL); /* the program's whole group */
            sv->kill_at = 0;
        }
    }
}

/* Whether a program told to stop gracefully ended as asked: by itself with 0 or 128 plus
 * SIGTERM or SIGINT, or by one of them. */
static bool stopped_as_asked(int status)
{
    if (WIFSIGNALED(status))
        return WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGINT;
    int code = WEXITSTATUS(status);
    return code == 0 || code == 128 + SIGTERM || code == 128 + SIGINT;
}

/* SIGTERM or SIGINT when STATUS is a stop's (128 plus it, or death by it), else 0. */
static int stop_signal_of(int status)
{
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status) - 128;
    return sig == SIGTERM || sig == SIGINT ? sig : 0;
}

/* Whether a program in a graceful stop ended as asked, or as the stop's casualty (see
 * STOP_RACE_MS), or was killed when --graceful-timeout was over. */
static bool ended_by_stop(const struct supervisor *sv)
{
    return stopped_as_asked(sv->status) || sv->expired ||
           (sv->stop_at && sv->exit_at - sv->stop_at <= STOP_RACE_MS);
}

/* Turns the program's wait status into the wrapper's exit status, reporting a failure. In a
 * graceful stop the wrapper exits 0 whatever happened: mpirun would take any other status for
 * a failure and kill the instances still finishing their step and checkpoint; poprun knows it
 * was interrupted and reports that, or the failure that a marker names. */
static int finish(const struct supervisor *sv, int rank, const char *token)
{
    struct marker m = {rank, MARKER_EXIT, 0};
    int code;
    if (sv->graceful && ended_by_stop(sv))
        return 0;
    /* A stop that did not come from poprun is a preemption of the job, not a failure: from
     * outside (its marker went when the signal came), or the program's own as a stop ends
     * (exit 128+SIGTERM: train stops with its peers when any of them got the signal). */
    if (!sv->teardown && sv->outside_sig && stopped_as_asked(sv->status))
        return 0;
    if (!sv->teardown && !sv->stopping && stop_signal_of(sv->status)) {
        m.kind = MARKER_STOPPED;
        m.value = stop_signal_of(sv->status);
        char line[256];
        size_t n = marker_format(line, sizeof(line), token, &m);
        (void)write_all(2, line, n);
        return 0;
    }
    if (WIFSIGNALED(sv->status)) {
        m.kind = MARKER_SIGNAL;
        m.value = WTERMSIG(sv->status);
        code = 128 + m.value;
    } else {
        m.value = WEXITSTATUS(sv->status);
        code = m.value;
    }
    if (code != 0 && !sv->teardown && (!sv->stopping || sv->graceful)) {
        char line[256];
        size_t n = marker_format(line, sizeof(line), token, &m);
        (void)write_all(2, line, n);
        if (sv->graceful)
            return 0;
        orphan_watch(getppid()); /* in case this host is cut off from mpirun */
    }
    return code;
}

/* After the program died of a signal nobody here sent: wait up to LINGER_MS, or until mpirun
 * ends the job (any signal but SIGCHLD). */
static void linger(struct supervisor *sv, int sfd)
{
    if (!WIFSIGNALED(sv->status) || stop_signal_of(sv->status) || sv->stopping || sv->teardown ||
        sfd < 0)
        return;
    long long until = now_ms() + LINGER_MS;
    for (long long left; (left = until - now_ms()) > 0;) {
        struct pollfd pfd = {sfd, POLLIN, 0};
        int n = poll(&pfd, 1, (int)left);
        if (n < 0 && errno != EINTR)
            return;
        struct signalfd_siginfo si;
        if (n > 0 && read(sfd, &si, sizeof(si)) == sizeof(si) && si.ssi_signo != SIGCHLD) {
            sv->teardown = true;
            return;
        }
    }
}

/* Starts the program with piped output and supervises it; LOCK_FD (or -1) is the job's lock,
 * which the program's guard holds too. Returns the exit status. */
static int run_program(const struct poprun_options *o, int rank, const char *prefix, int lock_fd)
{
    int out_p[2], err_p[2];
    if (pipe2(out_p, O_CLOEXEC) != 0 || pipe2(err_p, O_CLOEXEC) != 0) {
        fprintf(stderr, "%spoprun: pipe: %s\n", prefix, strerror(errno));
        return 1;
    }
    sigset_t mask, oldmask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGUSR1);
    sigaddset(&mask, SIGUSR2);
    sigprocmask(SIG_BLOCK, &mask, &oldmask);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    int report_fd = fcntl(2, F_DUPFD_CLOEXEC, 3);
    struct supervisor sv = {.parent = getppid(),
                            .rank = rank,
                            .token = o->instance_token,
                            .child = sfd < 0 ? -1 : fork()};
    if (sv.child == 0)
        exec_program(o->program.v, out_p[1], err_p[1], report_fd, &oldmask, prefix);
    int guard_fd = -1;
    if (sv.child > 0) {
        setpgid(sv.child, sv.child); /* also here, so that no signal races the child's own call */
        sv.guard = guard_start(sv.child, lock_fd, &guard_fd);
        if (sv.guard < 0)
            sv.guard = 0;
    }
    close(out_p[1]);
    close(err_p[1]);
    close(report_fd);
    if (sv.child < 0) {
        fprintf(stderr, "%spoprun: cannot start the program: %s\n", prefix, strerror(errno));
        return 1;
    }
    bool drop = o->only_output_from_instance >= 0 && o->only_output_from_instance != rank;
    struct stream s[2];
    stream_init(&s[0], 0, out_p[0], drop, prefix, o->instance_token);
    stream_init(&s[1], 1, err_p[0], drop, prefix, o->instance_token);
    supervise(&sv, s, sfd);
    for (int k = 0; k < 2; k++) {
        if (s[k].in >= 0) {
            linebuf_finish(&s[k].lb);
            close(s[k].in);
        }
        linebuf_free(&s[k].lb);
    }
    /* The program has ended and its output is read: its guard now kills what it left in its
     * group (a background child), and itself. */
    if (guard_fd >= 0)
        close(guard_fd);
    int code = finish(&sv, rank, o->instance_token);
    linger(&sv, sfd);
    close(sfd);
    return code;
}

/* The rank mpirun gave this process, or -1. */
static int my_rank(void)
{
    const char *names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int r;
        const char *v = getenv(names[i]);
        if (v && parse_int_range(v, 0, INT_MAX, &r) == 0)
            return r;
    }
    return -1;
}

/* --executable-cache-path (created, and named in POPDIST_EXECUTABLE_CACHE_PATH) and
 * --host-subnet (GCL_TCP_IFACE and GCL_OFI_IFACE, each unless the user set it). Returns 0, or -1
 * having said why. */
static int setup_host(const struct poprun_options *o, const char *prefix)
{
    char err[512], iface[64];
    if (o->executable_cache_path) {
        if (setup_cache_dir(o->executable_cache_path, err, sizeof(err)) != 0) {
            fprintf(stderr, "%spoprun: %s\n", prefix, err);
            return -1;
        }
        setenv(POPDIST_ENV_EXECUTABLE_CACHE_PATH, o->executable_cache_path, 1);
    }
    if (o->host_subnet && (!getenv("GCL_TCP_IFACE") || !getenv("GCL_OFI_IFACE"))) {
        if (setup_subnet_iface(o->host_subnet, iface, sizeof(iface)) == 0) {
            setenv("GCL_TCP_IFACE", iface, 0);
            setenv("GCL_OFI_IFACE", iface, 0);
        } else {
            fprintf(stderr, "%spoprun: warning: no interface of this host is on --host-subnet %s\n",
                    prefix, o->host_subnet);
        }
    }
    if (o->verbose >= 2 && getenv("GCL_TCP_IFACE") && o->host_subnet)
        fprintf(stderr, "%spoprun: GCL_TCP_IFACE=%s GCL_OFI_IFACE=%s\n", prefix,
                getenv("GCL_TCP_IFACE"), getenv("GCL_OFI_IFACE") ? getenv("GCL_OFI_IFACE") : "");
    /* OpenMPI's shared-memory segments into the job's directory, where poprun removes them
     * whatever the end (jobdir.h), when this host sees it and the user chose no other place. */
    char dir[128];
    if (jobdir_for_instance(getenv(POPRUN_ENV_JOB_ID), dir, sizeof(dir)) &&
        !getenv("OMPI_MCA_btl_vader_backing_directory"))
        setenv("OMPI_MCA_btl_vader_backing_directory", dir, 1);
    return 0;
}

/* Recomputes the plan from the options poprun passed. */
static int layout(const struct poprun_options *o, struct plan *p, char *err, size_t errlen)
{
    struct strvec hosts = STRVEC_INIT;
    if (o->host && hostlist_expand(o->host, &hosts, err, errlen) != 0) {
        strvec_free(&hosts);
        return -1;
    }
    struct plan_request req = {o->num_replicas, o->num_instances, o->ipus_per_replica, o->num_ilds,
                               &hosts};
    int rc = plan_layout(&req, o->num_ilds > 0 ? o->num_ilds : 1, p, err, errlen);
    strvec_free(&hosts);
    return rc;
}

/* Warns when mpirun placed this rank elsewhere than the plan says (e.g. a user's --map-by). */
static void check_placement(const struct plan *p, int rank, const char *prefix)
{
    int local;
    const char *v = getenv("OMPI_COMM_WORLD_LOCAL_RANK");
    if (v && parse_int_range(v, 0, INT_MAX, &local) == 0 && local != p->inst[rank].local_index)
        fprintf(stderr,
                "%spoprun: warning: mpirun made this local rank %d of its host, but the plan "
                "says %d (did --mpi-global-args change the mapping?)\n",
                prefix, local, p->inst[rank].local_index);
}

int instance_main(const struct poprun_options *o)
{
    char err[512], prefix[32];
    int rank = my_rank();
    /* The replacement of a lost instance of an elastic job: mpirun's only rank stands in for
     * it, and joins the running job (elastic_grow.h). */
    if (o->elastic_slot && parse_int_range(o->elastic_slot, 0, INT_MAX, &rank) == 0)
        setenv(GCL_ELASTIC_ENV_JOIN, "1", 1);
    if (rank < 0) {
        fprintf(stderr, "poprun: --_instance is internal to poprun: it runs under mpirun\n");
        return POPRUN_EXIT_USAGE;
    }
    snprintf(prefix, sizeof(prefix), "[instance %d] ", rank);
    /* End with the launcher: if mpirun or orted dies, stop the program. */
    pid_t parent = getppid();
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent)
        return 128 + SIGTERM;
    signal(SIGPIPE, SIG_IGN);

    struct plan p;
    if (layout(o, &p, err, sizeof(err)) != 0) {
        fprintf(stderr, "%spoprun: bad instance options: %s\n", prefix, err);
        return POPRUN_EXIT_USAGE;
    }
    if (rank >= p.num_instances || o->program.n == 0) {
        fprintf(stderr, "%spoprun: bad instance options: %s\n", prefix,
                o->program.n == 0 ? "no program" : "rank beyond --num-instances");
        plan_free(&p);
        return POPRUN_EXIT_USAGE;
    }
    if (!o->elastic_slot)
        check_placement(&p, rank, prefix);
    set_env(&p, rank, o, prefix);
    export_libgcl();
    if (setup_host(o, prefix) != 0) {
        plan_free(&p);
        return POPRUN_EXIT_USAGE;
    }
    /* The launcher passes the policy it chose (binding.h), or none. */
    const char *place = o->process_placement;
    if (place && strcmp(place, "disabled") != 0) {
        char desc[256];
        int rc = numa_bind_local(strcmp(place, "spreadcores") == 0, p.inst[rank].local_index,
                                 p.instances_per_host, desc, sizeof(desc), err, sizeof(err));
        if (rc < 0)
            fprintf(stderr, "%spoprun: warning: %s\n", prefix, err);
        else if (o->verbose >= 1)
            fprintf(stderr, "%spoprun: bound to %s\n", prefix, desc);
    }
    plan_free(&p);
    fflush(stderr);
    /* While this wrapper and its program's group live, the job's lock is held: poprun, or its
     * janitor, sweeps the job's files only once every instance of this host has ended. */
    char dir[128];
    int lock_fd = -1;
    if (jobdir_for_instance(getenv(POPRUN_ENV_JOB_ID), dir, sizeof(dir)))
        lock_fd = jobdir_hold(dir);
    return run_program(o, rank, prefix, lock_fd);
}
