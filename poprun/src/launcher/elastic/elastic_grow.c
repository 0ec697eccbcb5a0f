/*
 * The replacement of a lost instance; see elastic_grow.h.
 */
#include "launcher/elastic/elastic_grow.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static void emit_stderr(void *ctx, const char *line, size_t len)
{
    (void)ctx;
    fprintf(stderr, "%.*s\n", (int)len, line);
}

int egrow_spawn(const struct strvec *argv, int slot_at, int host_at, int slot, const char *host,
                const char *token, int verbose, struct egrow_child *c, char *err, size_t errlen)
{
    memset(c, 0, sizeof *c);
    c->slot = slot;
    c->err_fd = -1;
    struct strvec words = STRVEC_INIT;
    for (int i = 0; i < argv->n; i++) {
        if (i == slot_at)
            strvec_push_take(&words, xasprintf("%d", slot));
        else if (i == host_at && host)
            strvec_push_take(&words, xasprintf("%s:1", host));
        else
            strvec_push(&words, argv->v[i]);
    }
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0) {
        strvec_free(&words);
        return errf(err, errlen, "pipe: %s", strerror(errno));
    }
    /* Its own process group (poprun ends it as a whole), every signal unblocked and at its
     * default (the launcher's thread blocks them), stderr into the pipe. */
    posix_spawnattr_t attr;
    posix_spawn_file_actions_t fa;
    sigset_t none, all;
    sigemptyset(&none);
    sigfillset(&all);
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
                                        POSIX_SPAWN_SETSIGDEF);
    posix_spawnattr_setpgroup(&attr, 0);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &all);
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, p[1], 2);
    pid_t pid;
    int rc = posix_spawnp(&pid, words.v[0], &fa, &attr, words.v, environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    close(p[1]);
    strvec_free(&words);
    if (rc != 0) {
        close(p[0]);
        return errf(err, errlen, "cannot start mpirun for the replacement of instance %d: %s", slot,
                    strerror(rc));
    }
    c->pid = pid;
    c->err_fd = p[0];
    c->out.token = token;
    c->out.verbose = verbose;
    c->out.emit = emit_stderr;
    c->out.elastic = true;
    c->out.mpirun_pid = pid;
    linebuf_init(&c->lb, 65536, outcome_filter_line, &c->out);
    return 0;
}

void egrow_read(struct egrow_child *c)
{
    char buf[16384];
    if (c->err_fd < 0)
        return;
    ssize_t n = read(c->err_fd, buf, sizeof buf);
    if (n > 0) {
        linebuf_feed(&c->lb, buf, (size_t)n);
    } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(c->err_fd);
        c->err_fd = -1;
    }
}

bool egrow_reap(struct egrow_child *c)
{
    if (c->pid <= 0)
        return true;
    int st;
    if (waitpid(c->pid, &st, WNOHANG) != c->pid)
        return false;
    c->status = st;
    c->out.mpirun_done = true;
    c->out.mpirun_status = st;
    c->pid = 0;
    return true;
}

void egrow_kill(struct egrow_child *c, int sig)
{
    if (c->pid > 0) {
        kill(-c->pid, sig);
        kill(c->pid, sig);
    }
}

int egrow_finish(struct egrow_child *c)
{
    while (c->err_fd >= 0)
        egrow_read(c);
    linebuf_finish(&c->lb);
    linebuf_free(&c->lb);
    outcome_filter_finish(&c->out);
    int code = 0;
    if (c->out.have_failure)
        code = c->out.failure.kind == MARKER_SIGNAL ? 128 + c->out.failure.value
                                                    : c->out.failure.value;
    else if (WIFSIGNALED(c->status))
        code = 128 + WTERMSIG(c->status);
    else if (WIFEXITED(c->status))
        code = WEXITSTATUS(c->status);
    return code;
}
