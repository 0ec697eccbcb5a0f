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

/* Takes a status marker out of LINE, remembering the first. Returns whether LINE is done with. */
static bool take_marker(struct outcome *o, const char *line, size_t len)
{
    struct marker m;
    size_t start, end;
    if (!marker_find(line, len, o->token, &m, &start, &end))
        return false;
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
    return true;
}

/* mpirun's notice that an instance's wrapper died of a signal: the failure (see outcome.h). */
static void note_wrapper_death(struct outcome *o, const struct notice_death *d)
{
    if (o->wrapper_died || o->interrupt_sig)
        return;
    o->have_failure = true;
    o->failure = (struct marker){d->rank, MARKER_SIGNAL, d->signo};
    o->wrapper_died = true;
    snprintf(o->wrapper_node, sizeof(o->wrapper_node), "%s", d->node);
}

static bool quiet(const struct outcome *o)
{
    return (o->have_failure || o->interrupt_sig) && o->verbose == 0;
}

/* Keeps LINE back, if it fits. */
static bool hold(struct outcome *o, const char *line, size_t len)
{
    if (len + 1 > sizeof(o->held) - o->held_len)
        return false;
    memcpy(o->held + o->held_len, line, len);
    o->held[o->held_len + len] = '\n';
    o->held_len += len + 1;
    return true;
}

/* Passes on the held lines, unless they restate a known failure, and forgets them. */
static void release(struct outcome *o)
{
    for (size_t at = 0; at < o->held_len && !quiet(o);) {
        const char *nl = memchr(o->held + at, '\n', o->held_len - at);
        o->emit(o->emit_ctx, o->held + at, (size_t)(nl - (o->held + at)));
        at = (size_t)(nl - o->held) + 1;
    }
    o->held_len = 0;
}

/* Passes LINE on after what was held, and goes on in state NEXT. */
static void show(struct outcome *o, const char *line, size_t len, enum outcome_notice next)
{
    release(o);
    o->emit(o->emit_ctx, line, len);
    o->notice = next;
}

/* FRAME opens a notice: dropped once the failure is known, else held until the next line. */
static void open_notice(struct outcome *o, const char *frame, size_t len)
{
    o->opened = true;
    if (quiet(o)) {
        release(o);
        o->notice = OUTCOME_DROP;
        return;
    }
    if (!hold(o, frame, len)) {
        release(o); /* no room beside what was held: pass that on first */
        if (!hold(o, frame, len)) {
            show(o, frame, len, OUTCOME_SHOW);
            return;
        }
    }
    o->notice = OUTCOME_HEAD;
}

void outcome_filter_line(void *ctx, const char *line, size_t len)
{
    struct outcome *o = ctx;
    if (take_marker(o, line, len))
        return;
    bool frame = notice_is_frame(line, len), first = o->opened;
    struct notice_death d;
    o->opened = false;
    if (first && !frame && notice_parse_death(line, len, &d))
        note_wrapper_death(o, &d);
    switch (o->notice) {
    case OUTCOME_OUT:
        /* Instances' lines pass a held restatement: mpirun may have printed it first, but what
         * decides it is mpirun's next notice. */
        if (frame)
            open_notice(o, line, len);
        else
            o->emit(o->emit_ctx, line, len);
        return;
    case OUTCOME_HEAD:
        if (quiet(o)) {
            release(o);
            o->notice = frame ? OUTCOME_OUT : OUTCOME_DROP;
        } else if (!frame && notice_is_restatement(line, len) && hold(o, line, len)) {
            o->notice = OUTCOME_HOLD;
        } else {
            show(o, line, len, frame ? OUTCOME_OUT : OUTCOME_SHOW);
        }
        return;
    case OUTCOME_HOLD:
        if (!hold(o, line, len))
            show(o, line, len, frame ? OUTCOME_OUT : OUTCOME_SHOW);
        else if (frame)
            o->notice = OUTCOME_OUT;
        return;
    case OUTCOME_SHOW:
        o->emit(o->emit_ctx, line, len);
        break;
    case OUTCOME_DROP:
        break;
    }
    if (frame)
        o->notice = OUTCOME_OUT;
}

void outcome_filter_finish(struct outcome *o)
{
    release(o);
    o->notice = OUTCOME_OUT;
    o->opened = false;
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
                           : o->wrapper_died ? o->wrapper_node
                                             : "?";
        if (m->kind == MARKER_SIGNAL) {
            snprintf(msg, msglen, "instance %d (host %s) was killed by signal %d (%s)%s",
                     m->instance, host, m->value, signame(m->value, sn, sizeof(sn)),
                     o->wrapper_died ? ": its poprun wrapper died, and its program with it" : "");
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
