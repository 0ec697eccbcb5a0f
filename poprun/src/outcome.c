/*
 * Status markers, mpirun's notices and poprun's exit status; see outcome.h.
 */
#include "outcome.h"

#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "util.h"

/* mpirun frames each notice with a line of dashes. */
static bool is_notice_frame(const char *line, size_t len)
{
    return len >= 20 && strspn(line, "-") >= len;
}

void outcome_filter_line(void *ctx, const char *line, size_t len)
{
    struct outcome *o = ctx;
    struct marker m;
    size_t start, end;
    if (marker_find(line, len, o->token, &m, &start, &end)) {
        if (!o->have_failure) {
            o->have_failure = true;
            o->failure = m;
        }
        /* Keep whatever another instance's output left glued to the marker. */
        if (start > 0 || end < len) {
            char *rest = xmalloc(len);
            memcpy(rest, line, start);
            memcpy(rest + start, line + end, len - end);
            o->emit(o->emit_ctx, rest, len - (end - start));
            free(rest);
        }
        return;
    }
    bool quiet = (o->have_failure || o->interrupt_sig) && o->verbose == 0;
    if (quiet && is_notice_frame(line, len)) {
        o->in_notice = !o->in_notice;
        return;
    }
    if (quiet && o->in_notice)
        return;
    o->emit(o->emit_ctx, line, len);
}

static const char *signame(int sig, char *buf, size_t len)
{
    const char *abbrev = sigabbrev_np(sig);
    if (abbrev)
        snprintf(buf, len, "SIG%s", abbrev);
    else
        snprintf(buf, len, "signal %d", sig);
    return buf;
}

int outcome_exit_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    char sn[32];
    msg[0] = '\0';
    if (o->have_failure) {
        const struct marker *m = &o->failure;
        const char *host = m->instance >= 0 && m->instance < p->num_instances
                               ? p->hosts.v[p->inst[m->instance].host]
                               : "?";
        if (m->kind == MARKER_SIGNAL) {
            snprintf(msg, msglen, "instance %d (host %s) was killed by signal %d (%s)", m->instance,
                     host, m->value, signame(m->value, sn, sizeof(sn)));
            return 128 + m->value;
        }
        snprintf(msg, msglen, "instance %d (host %s) exited with status %d", m->instance, host,
                 m->value);
        return m->value;
    }
    if (o->interrupt_sig) {
        snprintf(msg, msglen, "interrupted by %s; every instance was ended",
                 signame(o->interrupt_sig, sn, sizeof(sn)));
        return 128 + o->interrupt_sig;
    }
    if (WIFSIGNALED(o->mpirun_status)) {
        int sig = WTERMSIG(o->mpirun_status);
        snprintf(msg, msglen, "mpirun was killed by signal %d (%s)", sig,
                 signame(sig, sn, sizeof(sn)));
        return 128 + sig;
    }
    int code = WIFEXITED(o->mpirun_status) ? WEXITSTATUS(o->mpirun_status) : 1;
    if (code != 0)
        snprintf(msg, msglen, "mpirun exited with status %d", code);
    return code;
}
