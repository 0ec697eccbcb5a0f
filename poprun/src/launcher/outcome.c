/*
 * Status markers, mpirun's notices and poprun's exit status; see outcome.h.
 */
#include "launcher/outcome.h"

#include <ctype.h>
#include <signal.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "common/util.h"

/* Whether marker M is the failure to name, given what was seen (see outcome.h): the first,
 * unless it is a death by a signal and the failure so far only an exit status. */
static bool names_failure(const struct outcome *o, const struct marker *m)
{
    if (!o->have_failure)
        return true;
    return m->kind == MARKER_SIGNAL && o->failure.kind == MARKER_EXIT && !o->interrupt_sig;
}

/* A stop that did not come from poprun (marker.h): the first is remembered; one from outside
 * wins over a program's own. */
static void note_stop(struct outcome *o, const struct marker *m)
{
    if (o->stop_sig && (o->stop_outside || m->kind != MARKER_STOP))
        return;
    o->stop_sig = m->value;
    o->stop_instance = m->instance;
    o->stop_outside = m->kind == MARKER_STOP;
}

/* Takes a status marker out of LINE, remembering the failure it names. Returns whether LINE is
 * done with. */
static bool take_marker(struct outcome *o, const char *line, size_t len)
{
    struct marker m;
    size_t start, end;
    if (!marker_find(line, len, o->token, &m, &start, &end))
        return false;
    if (o->on_marker)
        o->on_marker(o->marker_ctx, &m);
    if (m.kind == MARKER_STOP || m.kind == MARKER_STOPPED) {
        note_stop(o, &m);
        m.kind = MARKER_EXIT; /* no failure: the wrapper exits 0 */
        m.value = 0;
    } else if (m.instance >= 0 && m.instance < OUTCOME_INSTANCES_MAX)
        o->reported[m.instance / 8] |= (unsigned char)(1u << (m.instance % 8));
    if (m.kind == MARKER_EXIT && m.value == 2 && !o->usage_error) {
        o->usage_error = true;
        o->usage_instance = m.instance;
    }
    if (m.value != 0 && names_failure(o, &m)) {
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

/* mpirun's notice that it lost the daemon of a host: the failure (see outcome.h). */
static void note_host_lost(struct outcome *o, const char *node)
{
    if (o->host_lost || o->interrupt_sig)
        return;
    o->host_lost = true;
    snprintf(o->lost_node, sizeof(o->lost_node), "%s", node);
}

static bool quiet(const struct outcome *o)
{
    return (o->have_failure || o->host_lost || o->interrupt_sig || o->start_failed) &&
           o->verbose == 0;
}

/* Passes on the lines kept back before the instances spoke, and stops keeping them. */
static void release_early(struct outcome *o)
{
    for (size_t at = 0; at < o->early_len;) {
        const char *nl = memchr(o->early + at, '\n', o->early_len - at);
        if (!o->start_failed || o->verbose)
            o->emit(o->emit_ctx, o->early + at, (size_t)(nl - (o->early + at)));
        at = (size_t)(nl - o->early) + 1;
    }
    o->early_len = 0;
    o->launched = true;
}

/* A line of mpirun's stderr outside its notices, before any instance spoke: kept back (see
 * outcome.h), the last one as the reason of a start failure. Returns whether it was kept. */
static bool keep_early(struct outcome *o, const char *line, size_t len)
{
    static const char tag[] = "[instance ", own[] = "mpirun";
    if (o->launched || (len >= sizeof(tag) - 1 && memcmp(line, tag, sizeof(tag) - 1) == 0)) {
        if (!o->launched)
            release_early(o);
        return false;
    }
    if (len >= sizeof(own) - 1 && memcmp(line, own, sizeof(own) - 1) == 0)
        return false; /* mpirun's own word passes */
    bool kept = !o->verbose && len + 1 <= sizeof(o->early) - o->early_len;
    if (kept) { /* with -v every line passes at once, in order */
        memcpy(o->early + o->early_len, line, len);
        o->early[o->early_len + len] = '\n';
        o->early_len += len + 1;
    }
    size_t n = len < sizeof(o->start_reason) - 1 ? len : sizeof(o->start_reason) - 1;
    while (n > 0 && (line[n - 1] == '\r' || line[n - 1] == ' '))
        n--;
    memcpy(o->start_reason, line, n);
    o->start_reason[n] = '\0';
    return kept;
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

/* mpirun's word that it passed on the signal of poprun's graceful stop. */
static bool is_forwarding_note(const struct outcome *o, const char *line, size_t len)
{
    static const char note[] = "mpirun: Forwarding signal ";
    return o->interrupt_sig && o->verbose == 0 && len > sizeof(note) - 1 &&
           memcmp(line, note, sizeof(note) - 1) == 0;
}

/* After poprun killed an overdue mpirun: mpirun's own report of its crash on the way down
 * ("[h0:02301] *** Process received signal ***" and its backtrace, "mpirun: abort is already in
 * progress"), which says nothing about the job. */
static bool is_mpirun_dying(const struct outcome *o, const char *line, size_t len)
{
    if (!o->overdue_s || o->verbose)
        return false;
    static const char abort_note[] = "mpirun: abort is already in progress";
    if (len >= sizeof(abort_note) - 1 && memcmp(line, abort_note, sizeof(abort_note) - 1) == 0)
        return true;
    char tag[32];
    int n = snprintf(tag, sizeof tag, ":%05d] ", o->mpirun_pid);
    const char *close = len && line[0] == '[' ? memchr(line, ']', len < 80 ? len : 80) : NULL;
    return close && close - line + 2 >= n && memcmp(close + 2 - n, tag, (size_t)n) == 0;
}

/* A program's stdout line: what mpirun put before the marker (its --tag-output tag, which names
 * the stderr the wrapper carried the line on: say stdout, where the program wrote it), then the
 * program's line. */
static void emit_stdout(struct outcome *o, const char *line, size_t start, size_t at, size_t len)
{
    static const char err_tag[] = "<stderr>:", out_tag[] = "<stdout>:";
    size_t n = start + (len - at);
    char *out = xmalloc(n + 1);
    memcpy(out, line, start);
    size_t tl = sizeof(err_tag) - 1;
    if (start >= tl && memcmp(out + start - tl, err_tag, tl) == 0)
        memcpy(out + start - tl, out_tag, tl);
    memcpy(out + start, line + at, len - at);
    if (o->emit_out) {
        o->emit_out(o->emit_ctx, out, n);
    } else {
        out[n] = '\n';
        (void)write_all(1, out, n + 1);
    }
    free(out);
}

/* An elastic job (mpirun --enable-recovery): OpenMPI 4.1's PMIx prints a line when a rank ends
 * and the job goes on ("[h0:123] PMIX ERROR: BAD-PARAM in file
 * ../../../src/event/pmix_event_notification.c at line 1033"), which says nothing the elastic
 * report does not. Dropped unless verbose. */
static bool is_recovery_note(const struct outcome *o, const char *line, size_t len)
{
    static const char note[] = "PMIX ERROR: BAD-PARAM in file ";
    static const char where[] = "pmix_event_notification.c";
    return o->elastic && !o->verbose && memmem(line, len, note, sizeof(note) - 1) &&
           memmem(line, len, where, sizeof(where) - 1);
}

void outcome_filter_line(void *ctx, const char *line, size_t len)
{
    struct outcome *o = ctx;
    size_t start, at;
    if (marker_out_find(line, len, o->token, &start, &at)) {
        if (!o->launched)
            release_early(o);
        emit_stdout(o, line, start, at, len);
        return;
    }
    if (take_marker(o, line, len)) {
        if (!o->launched)
            release_early(o);
        return;
    }
    if (is_forwarding_note(o, line, len) || is_mpirun_dying(o, line, len) ||
        is_recovery_note(o, line, len))
        return;
    bool frame = notice_is_frame(line, len), first = o->opened;
    struct notice_death d;
    char node[NOTICE_NODE_MAX];
    o->opened = false;
    if (first && !frame && notice_parse_death(line, len, &d))
        note_wrapper_death(o, &d);
    if (first && !frame && !o->launched && notice_is_start_failure(line, len))
        o->start_failed = true;
    if (!frame && notice_parse_lost_node(line, len, node))
        note_host_lost(o, node);
    switch (o->notice) {
    case OUTCOME_OUT:
        /* Instances' lines pass a held restatement: mpirun may have printed it first, but what
         * decides it is mpirun's next notice. */
        if (frame)
            open_notice(o, line, len);
        else if (!keep_early(o, line, len))
            o->emit(o->emit_ctx, line, len);
        return;
    case OUTCOME_HEAD:
        if (quiet(o)) {
            release(o);
            o->notice = frame ? OUTCOME_OUT : OUTCOME_DROP;
        } else if (!frame &&
                   (notice_is_restatement(line, len) || notice_is_lost_daemon(line, len)) &&
                   hold(o, line, len)) {
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
    release_early(o);
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

/* "host h2 is lost: ... (instances 2, 3 ran there)". */
static int host_lost_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    char ran[256] = "";
    size_t at = 0;
    int n = 0;
    for (int i = 0; i < p->num_instances && at < sizeof(ran); i++) {
        if (p->inst[i].host >= p->hosts.n || strcmp(p->hosts.v[p->inst[i].host], o->lost_node))
            continue;
        at += (size_t)snprintf(ran + at, sizeof(ran) - at, "%s%d", n++ ? ", " : "", i);
    }
    if (n)
        snprintf(msg, msglen,
                 "host %s is lost: mpirun lost contact with its daemon (instance%s %s ran there)",
                 o->lost_node, n > 1 ? "s" : "", ran);
    else
        snprintf(msg, msglen, "host %s is lost: mpirun lost contact with its daemon", o->lost_node);
    int code = WIFEXITED(o->mpirun_status) ? WEXITSTATUS(o->mpirun_status) : 1;
    return code ? code : 1;
}

static bool reported(const struct outcome *o, int i)
{
    return i < OUTCOME_INSTANCES_MAX && (o->reported[i / 8] >> (i % 8) & 1);
}

/* Lists in LIST the instances of host H whose marker never came; returns how many, and sets
 * *ALL when none of the host's instances reported. */
static int silent_on(const struct outcome *o, const struct plan *p, int h, char *list, size_t len,
                     bool *all)
{
    size_t at = 0;
    int n = 0;
    *all = true;
    list[0] = '\0';
    for (int i = 0; i < p->num_instances; i++) {
        if (p->inst[i].host != h)
            continue;
        if (reported(o, i)) {
            *all = false;
        } else if (at < len) {
            at += (size_t)snprintf(list + at, len - at, "%s%d", n ? ", " : "", i);
            n++;
        }
    }
    return n;
}

/* Appends to MSG why poprun ended mpirun itself and the instances never heard from, by host. */
static void overdue_detail(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    size_t at = strlen(msg);
    at += (size_t)snprintf(msg + at, msglen - at,
                           "; mpirun did not end the job within %d s and was killed", o->overdue_s);
    const char *lead = ": ";
    for (int h = 0; h < p->hosts.n && at < msglen; h++) {
        char list[160];
        bool all;
        int n = silent_on(o, p, h, list, sizeof list, &all);
        if (!n)
            continue;
        at +=
            (size_t)snprintf(msg + at, msglen - at, "%s%s%s%s (instance%s %s there never reported)",
                             lead, all ? "host " : "on host ", p->hosts.v[h],
                             all ? " may be unreachable" : "", n > 1 ? "s" : "", list);
        lead = "; ";
    }
}

static int failure_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    char sn[32];
    const struct marker *m = &o->failure;
    const char *host = m->instance >= 0 && m->instance < p->num_instances
                           ? p->hosts.v[p->inst[m->instance].host]
                       : o->wrapper_died ? o->wrapper_node
                                         : "?";
    if (m->kind == MARKER_SIGNAL) {
        snprintf(msg, msglen, "instance %d (host %s) was killed by signal %d (%s)%s", m->instance,
                 host, m->value, signame(m->value, sn, sizeof(sn)),
                 o->wrapper_died ? ": its poprun wrapper died, and its program with it" : "");
        return 128 + m->value;
    }
    snprintf(msg, msglen, "instance %d (host %s) exited with status %d", m->instance, host,
             m->value);
    return m->value;
}

/* The host a start failure's REASON names (ssh names the host it could not reach, sometimes cut
 * at its first dot), else the first host other than this one. */
static const char *unreachable_host(const struct plan *p, const char *reason)
{
    const char *other = NULL;
    for (int h = 0; h < p->hosts.n; h++) {
        const char *name = p->hosts.v[h];
        size_t short_len = strcspn(name, ".");
        for (const char *at = reason; *at; at++) {
            if (strncmp(at, name, short_len) == 0 &&
                !(isalnum((unsigned char)at[short_len]) || at[short_len] == '-') &&
                (at == reason || !(isalnum((unsigned char)at[-1]) || at[-1] == '-')))
                return name;
        }
        if (!other && strcmp(name, "localhost") != 0)
            other = name;
    }
    return other ? other : p->hosts.n ? p->hosts.v[0] : "?";
}

/* The line of a job stopped by an instance's stop marker, not by a signal to poprun. */
static int stop_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    char sn[32];
    int i = o->stop_instance;
    const char *host = i >= 0 && i < p->num_instances ? p->hosts.v[p->inst[i].host] : "?";
    signame(o->stop_sig, sn, sizeof(sn));
    if (o->stop_outside)
        snprintf(msg, msglen,
                 "interrupted by %s, which instance %d (host %s) got from outside poprun; every "
                 "instance was ended",
                 sn, i, host);
    else
        snprintf(msg, msglen,
                 "interrupted: instance %d (host %s) stopped as %s stops (exit %d); every "
                 "instance was ended",
                 i, host, sn, 128 + o->stop_sig);
    return 128 + o->stop_sig;
}

int outcome_exit_status(const struct outcome *o, const struct plan *p, char *msg, size_t msglen)
{
    char sn[32];
    msg[0] = '\0';
    if (o->start_failed && !o->have_failure) {
        snprintf(msg, msglen, "cannot start instances on host '%s': %s",
                 unreachable_host(p, o->start_reason),
                 o->start_reason[0] ? o->start_reason
                                    : "mpirun could not start its daemon there (see -v)");
        return 1;
    }
    if (o->host_lost)
        return host_lost_status(o, p, msg, msglen);
    if (o->have_failure) {
        int code = failure_status(o, p, msg, msglen);
        if (o->overdue_s)
            overdue_detail(o, p, msg, msglen);
        return code;
    }
    if (o->interrupt_sig && o->graceful_expired) {
        snprintf(msg, msglen,
                 "interrupted by %s; instances still running after --graceful-timeout %d s were "
                 "killed",
                 signame(o->interrupt_sig, sn, sizeof(sn)), o->graceful_timeout_s);
        return 128 + o->interrupt_sig;
    }
    if (o->interrupt_sig && !o->signaled && o->stop_sig)
        return stop_status(o, p, msg, msglen);
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
