/*
 * The membership of an elastic job; see elastic_members.h.
 */
#include "launcher/elastic/elastic_members.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/util.h"

enum slot_state {
    S_NONE = 0, /* not heard from yet */
    S_READY,    /* said HELLO, epoch 0 not formed yet */
    S_MEMBER,   /* in the current epoch */
    S_JOINING,  /* a replacement waiting for the next epoch */
    S_LOST,     /* gone (or evicted) */
    S_DONE,     /* said BYE */
};

struct em_slot {
    enum slot_state state;
    int conn; /* -1: none */
    int pid;
    char host[64];
    double heard;  /* when it last said anything */
    bool resize;   /* asked for the epoch after the current one */
    bool failed;   /* ... after its run failed */
    bool replaced; /* its process is a replacement (not the one the job started with) */
    bool arrived;  /* in the bootstrap call in flight */
    char why[240]; /* S_LOST: why */
};

struct emembers {
    struct emembers_cfg cfg;
    struct emembers_io io;
    struct em_slot *slot;
    int *losses; /* [slots]: times an instance of the slot was lost */
    int epoch;   /* -1 before epoch 0 */
    int *members, nmembers;
    /* The bootstrap call in flight (one at a time: every member waits for its answer). */
    uint64_t seq;
    bool open, failed; /* a call with SEQ is collecting; it failed (late arrivals fail too) */
    char fail_why[GCL_STORE_TEXT_MAX];
    int root;
    uint32_t bytes;
    char *buf; /* nmembers x bytes */
    int arrived;
    /* The resize under way (the first RESIZE's time; 0: none), losses since the epoch formed. */
    double resize_since, change_since;
    int lost_since[EM_LIST_MAX], nlost_since;
    char loss_why[GCL_STORE_TEXT_MAX]; /* the first loss since the epoch formed */
    bool stopped, completed;
    bool held; /* the job stops (em_hold): no vacancy, and what ends, ends with it, quietly */
    char stop_why[GCL_STORE_TEXT_MAX];
    struct em_event *events;
    int nevents;
};

static void say(struct emembers *em, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void say(struct emembers *em, const char *fmt, ...)
{
    char line[700];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (em->io.say && !em->held)
        em->io.say(em->io.ctx, line);
}

static void send_msg(struct emembers *em, int conn, int kind, int arg, uint64_t seq, unsigned flags,
                     const void *payload, size_t bytes)
{
    gcl_store_head_t h = {
        GCL_STORE_MAGIC, (uint16_t)kind, (uint16_t)flags, em->epoch, arg, seq, (uint32_t)bytes, 0};
    if (conn >= 0)
        em->io.send(em->io.ctx, conn, &h, payload);
}

static void send_text(struct emembers *em, int conn, int kind, int arg, uint64_t seq,
                      const char *text)
{
    size_t n = strnlen(text, GCL_STORE_TEXT_MAX - 1);
    send_msg(em, conn, kind, arg, seq, 0, text, n);
}

struct emembers *em_create(const struct emembers_cfg *cfg, const struct emembers_io *io)
{
    struct emembers *em = xcalloc(1, sizeof *em);
    em->cfg = *cfg;
    em->io = *io;
    em->slot = xcalloc((size_t)cfg->slots, sizeof *em->slot);
    em->losses = xcalloc((size_t)cfg->slots, sizeof *em->losses);
    for (int s = 0; s < cfg->slots; s++)
        em->slot[s].conn = -1;
    em->members = xcalloc((size_t)cfg->slots, sizeof *em->members);
    em->epoch = -1;
    return em;
}

void em_free(struct emembers *em)
{
    if (!em)
        return;
    free(em->slot);
    free(em->losses);
    free(em->members);
    free(em->buf);
    free(em->events);
    free(em);
}

static int slot_of(const struct emembers *em, int conn)
{
    for (int s = 0; s < em->cfg.slots; s++)
        if (em->slot[s].conn == conn)
            return s;
    return -1;
}

static int rank_of(const struct emembers *em, int slot)
{
    for (int r = 0; r < em->nmembers; r++)
        if (em->members[r] == slot)
            return r;
    return -1;
}

static const char *host_of(const struct emembers *em, int slot)
{
    return em->slot[slot].host[0] ? em->slot[slot].host : "?";
}

/* STOP to every instance still connected: the job cannot go on. */
static void stop_all(struct emembers *em, const char *why)
{
    if (!em->stopped)
        snprintf(em->stop_why, sizeof em->stop_why, "%s", why);
    em->stopped = true;
    for (int s = 0; s < em->cfg.slots; s++) {
        struct em_slot *p = &em->slot[s];
        if (p->conn >= 0 && p->state != S_DONE && p->state != S_LOST)
            send_text(em, p->conn, GCL_STORE_STOP, s, 0, why);
    }
}

/* The bootstrap call in flight fails for everyone in it, and for late arrivals. */
static void fail_call(struct emembers *em, const char *why)
{
    if (!em->open)
        return;
    em->open = false;
    em->failed = true;
    snprintf(em->fail_why, sizeof em->fail_why, "%s", why);
    for (int r = 0; r < em->nmembers; r++) {
        struct em_slot *p = &em->slot[em->members[r]];
        if (p->arrived && p->state == S_MEMBER)
            send_text(em, p->conn, GCL_STORE_COLL_FAIL, 0, em->seq, why);
        p->arrived = false;
    }
}

static void record_event(struct emembers *em, const int *joined, int njoined, double now)
{
    em->events = xrealloc(em->events, (size_t)(em->nevents + 1) * sizeof *em->events);
    struct em_event *e = &em->events[em->nevents++];
    memset(e, 0, sizeof *e);
    e->epoch = em->epoch;
    e->t = now;
    e->first_t = em->change_since > 0 ? em->change_since : now;
    e->members = em->nmembers;
    e->nlost = em->nlost_since;
    memcpy(e->lost, em->lost_since, (size_t)em->nlost_since * sizeof(int));
    e->njoined = njoined < EM_LIST_MAX ? njoined : EM_LIST_MAX;
    if (e->njoined)
        memcpy(e->joined, joined, (size_t)e->njoined * sizeof(int));
}

/* A list of slots as "1, 3" into BUF. */
static void list_slots(const int *s, int n, char *buf, size_t len)
{
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        snprintf(buf + strlen(buf), len - strlen(buf), "%s%d", i ? ", " : "", s[i]);
}

/* Sends EPOCH to every member of the epoch just formed. */
static void announce(struct emembers *em, const int *joined, int njoined)
{
    int nl = em->nlost_since;
    size_t bytes = sizeof(gcl_store_epoch_t) + (size_t)(em->nmembers + nl + njoined) * 4;
    char *msg = xmalloc(bytes);
    gcl_store_epoch_t e = {em->nmembers, nl, njoined, em->cfg.local_replicas};
    memcpy(msg, &e, sizeof e);
    int32_t *list = (int32_t *)(msg + sizeof e);
    for (int r = 0; r < em->nmembers; r++)
        list[r] = em->members[r];
    for (int i = 0; i < nl; i++)
        list[em->nmembers + i] = em->lost_since[i];
    for (int i = 0; i < njoined; i++)
        list[em->nmembers + nl + i] = joined[i];
    for (int r = 0; r < em->nmembers; r++)
        send_msg(em, em->slot[em->members[r]].conn, GCL_STORE_EPOCH, r, 0, 0, msg, bytes);
    free(msg);
}

/* Forms the next epoch from the members that asked and the waiting joiners. */
static void form(struct emembers *em, double now)
{
    /* Replacements join at a step boundary (a resize no member asked for after a failed
     * run); after a failure the survivors go on first, and take them in at the next one. */
    bool failed = false;
    for (int r = 0; r < em->nmembers; r++)
        failed |= em->slot[em->members[r]].failed;
    int n = 0, joined[EM_LIST_MAX], nj = 0;
    for (int s = 0; s < em->cfg.slots; s++) {
        struct em_slot *p = &em->slot[s];
        bool joins = p->state == S_JOINING && !failed && nj < EM_LIST_MAX;
        if (joins)
            joined[nj++] = s;
        if ((p->state == S_MEMBER && p->resize) || joins)
            em->members[n++] = s;
    }
    char lost[300], who[300];
    list_slots(em->lost_since, em->nlost_since, lost, sizeof lost);
    list_slots(joined, nj, who, sizeof who);
    if (em->nlost_since == 0 && nj == 0 && failed) {
        stop_all(em, "no instance was lost or joined: the run failed for a cause of its own, "
                     "which a resize does not mend");
        return;
    }
    long replicas = (long)n * em->cfg.local_replicas;
    if (replicas < em->cfg.min_replicas) {
        char why[GCL_STORE_TEXT_MAX];
        snprintf(why, sizeof why,
                 "%ld replica%s left (instance%s %s lost), fewer than --min-replicas %d", replicas,
                 replicas == 1 ? "" : "s", em->nlost_since == 1 ? "" : "s", lost,
                 em->cfg.min_replicas);
        say(em, "elastic: the job stops: %s", why);
        stop_all(em, why);
        return;
    }
    for (int s = 0; s < em->cfg.slots; s++) {
        em->slot[s].resize = em->slot[s].failed = false;
        for (int i = 0; i < nj; i++)
            if (joined[i] == s)
                em->slot[s].state = S_MEMBER;
    }
    em->nmembers = n;
    em->epoch++;
    em->open = em->failed = false;
    em->resize_since = 0;
    record_event(em, joined, nj, now);
    say(em, "elastic: epoch %d: %d instance%s, %ld replicas%s%s%s%s%s", em->epoch, n,
        n == 1 ? "" : "s", replicas, em->nlost_since ? "; lost instance" : "",
        em->nlost_since > 1 ? "s "
        : em->nlost_since   ? " "
                            : "",
        lost, nj ? "; joined " : "", who);
    announce(em, joined, nj);
    em->nlost_since = 0;
    em->change_since = 0;
}

/* Whether every member of the epoch has asked to resize or is lost: then the next forms. */
static void maybe_form(struct emembers *em, double now)
{
    if (em->stopped || em->epoch < 0 || em->resize_since <= 0)
        return;
    for (int r = 0; r < em->nmembers; r++) {
        const struct em_slot *p = &em->slot[em->members[r]];
        if (p->state == S_MEMBER && !p->resize)
            return;
    }
    form(em, now);
}

/* Whether every member of the current epoch is gone: nobody can go on. */
static bool none_left(const struct emembers *em)
{
    for (int r = 0; r < em->nmembers; r++)
        if (em->slot[em->members[r]].state == S_MEMBER)
            return false;
    return em->nmembers > 0;
}

static void check_complete(struct emembers *em);

static void lose(struct emembers *em, int s, const char *why, double now)
{
    struct em_slot *p = &em->slot[s];
    enum slot_state was = p->state;
    if (was == S_LOST || was == S_DONE || was == S_NONE)
        return;
    p->state = S_LOST;
    em->losses[s]++;
    p->resize = p->arrived = false;
    snprintf(p->why, sizeof p->why, "%s", why);
    if (p->conn >= 0) { /* alive but left out (silent, late): it learns why when it wakes */
        char text[GCL_STORE_TEXT_MAX];
        snprintf(text, sizeof text, "this instance was left out of the job: %s", why);
        send_text(em, p->conn, GCL_STORE_STOP, s, 0, text);
        em->io.drop(em->io.ctx, p->conn);
    }
    p->conn = -1;
    if (was == S_JOINING) {
        say(em, "elastic: the replacement of instance %d (host %s) was lost before it joined: %s",
            s, host_of(em, s), why);
        return;
    }
    say(em, "elastic: instance %d (host %s, pid %d) lost: %s", s, host_of(em, s), p->pid, why);
    if (was == S_READY) {
        char line[GCL_STORE_TEXT_MAX];
        snprintf(line, sizeof line, "instance %d (host %s) was lost before the job started: %s", s,
                 host_of(em, s), why);
        stop_all(em, line);
        return;
    }
    if (em->nlost_since < EM_LIST_MAX)
        em->lost_since[em->nlost_since++] = s;
    if (em->change_since <= 0)
        em->change_since = now;
    char text[GCL_STORE_TEXT_MAX];
    snprintf(text, sizeof text, "instance %d (host %s, pid %d) was lost: %s", s, host_of(em, s),
             p->pid, why);
    if (em->nlost_since == 1)
        snprintf(em->loss_why, sizeof em->loss_why, "%s", text);
    /* The news first: a client that reads the failed call's answer knows the loss by then. */
    for (int r = 0; r < em->nmembers; r++) {
        const struct em_slot *q = &em->slot[em->members[r]];
        if (q->state == S_MEMBER)
            send_text(em, q->conn, GCL_STORE_NEWS, s, 0, text);
    }
    fail_call(em, text);
    check_complete(em);
    if (none_left(em) && !em->stopped && !em->completed) {
        say(em, "elastic: the job stops: no instance is left");
        stop_all(em, "no instance is left");
    }
    maybe_form(em, now);
}

static void welcome_all(struct emembers *em, double now)
{
    for (int s = 0; s < em->cfg.slots; s++)
        if (em->slot[s].state != S_READY)
            return;
    for (int s = 0; s < em->cfg.slots; s++) {
        em->slot[s].state = S_MEMBER;
        em->members[s] = s;
    }
    em->nmembers = em->cfg.slots;
    em->epoch = 0;
    record_event(em, NULL, 0, now);
    announce(em, NULL, 0);
}

static void hello(struct emembers *em, int conn, const gcl_store_head_t *h, const void *payload,
                  double now)
{
    gcl_store_hello_t m;
    int s = h->arg;
    if (h->bytes != sizeof m) {
        send_text(em, conn, GCL_STORE_REFUSE, 0, 0, "malformed hello");
        em->io.drop(em->io.ctx, conn);
        return;
    }
    memcpy(&m, payload, sizeof m);
    unsigned diff = 0;
    for (int i = 0; i < 16; i++)
        diff |= (unsigned)(m.token[i] ^ em->cfg.token[i]);
    const char *refuse = NULL;
    if (diff != 0)
        refuse = "wrong token: not this job's instance";
    else if (s < 0 || s >= em->cfg.slots)
        refuse = "no such instance in this job";
    else if (em->stopped || em->completed)
        refuse = em->stopped ? em->stop_why : "the job has ended";
    else if (!m.join && em->slot[s].state != S_NONE)
        refuse = "this instance has already said hello";
    else if (m.join && (em->epoch < 0 || em->slot[s].state != S_LOST))
        refuse = em->epoch < 0 ? "the job has not started: nothing to join"
                               : "this instance is not lost: nothing to replace";
    if (refuse) {
        send_text(em, conn, diff ? GCL_STORE_REFUSE : GCL_STORE_STOP, 0, 0, refuse);
        em->io.drop(em->io.ctx, conn);
        return;
    }
    struct em_slot *p = &em->slot[s];
    memset(p, 0, sizeof *p);
    p->conn = conn;
    p->pid = m.pid;
    p->heard = now;
    memcpy(p->host, m.host, sizeof p->host - 1);
    p->state = m.join ? S_JOINING : S_READY;
    p->replaced = m.join;
    send_msg(em, conn, GCL_STORE_WELCOME, s, 0, 0, NULL, 0);
    if (m.join) {
        say(em, "elastic: instance %d (host %s, pid %d) waits to rejoin at the next step boundary",
            s, host_of(em, s), p->pid);
        if (em->change_since <= 0)
            em->change_since = now;
    } else {
        welcome_all(em, now);
    }
}

/* A bootstrap call's contribution from member S. */
static void coll(struct emembers *em, int s, const gcl_store_head_t *h, const void *payload)
{
    struct em_slot *p = &em->slot[s];
    int r = rank_of(em, s);
    if (h->epoch != em->epoch || r < 0 || em->resize_since > 0 || p->resize) {
        send_text(em, p->conn, GCL_STORE_COLL_FAIL, 0, h->seq,
                  em->resize_since > 0 ? "the job is resizing" : "not a member of this epoch");
        return;
    }
    if (em->failed && h->seq == em->seq) {
        send_text(em, p->conn, GCL_STORE_COLL_FAIL, 0, h->seq, em->fail_why);
        return;
    }
    if (em->nlost_since > 0) { /* a member of this epoch is gone: no call can complete */
        send_text(em, p->conn, GCL_STORE_COLL_FAIL, 0, h->seq, em->loss_why);
        return;
    }
    if (!em->open || h->seq != em->seq) {
        em->open = true;
        em->failed = false;
        em->seq = h->seq;
        em->root = h->arg;
        em->bytes = h->bytes;
        em->arrived = 0;
        em->buf = xrealloc(em->buf, (size_t)em->nmembers * (h->bytes ? h->bytes : 1));
        for (int q = 0; q < em->nmembers; q++)
            em->slot[em->members[q]].arrived = false;
    }
    if (h->arg != em->root || h->bytes != em->bytes || h->arg >= em->nmembers || p->arrived) {
        char why[GCL_STORE_TEXT_MAX];
        snprintf(why, sizeof why,
                 "bootstrap call %llu: instance %d asked for %u bytes (root %d), others for %u "
                 "(root %d)",
                 (unsigned long long)h->seq, s, h->bytes, h->arg, em->bytes, em->root);
        p->arrived = true;
        fail_call(em, why);
        return;
    }
    memcpy(em->buf + (size_t)r * em->bytes, payload, em->bytes);
    p->arrived = true;
    if (++em->arrived < em->nmembers)
        return;
    bool joiners = false;
    for (int q = 0; q < em->cfg.slots; q++)
        joiners |= em->slot[q].state == S_JOINING;
    const char *out = em->root >= 0 ? em->buf + (size_t)em->root * em->bytes : em->buf;
    size_t n = em->root >= 0 ? em->bytes : (size_t)em->nmembers * em->bytes;
    em->open = false;
    for (int q = 0; q < em->nmembers; q++) {
        em->slot[em->members[q]].arrived = false;
        send_msg(em, em->slot[em->members[q]].conn, GCL_STORE_COLL_DONE, 0, em->seq,
                 joiners ? GCL_STORE_F_JOINERS : 0, out, n);
    }
}

static void resize(struct emembers *em, int s, const gcl_store_head_t *h, double now)
{
    struct em_slot *p = &em->slot[s];
    if (h->epoch != em->epoch || rank_of(em, s) < 0) {
        send_text(em, p->conn, GCL_STORE_STOP, s, 0,
                  "this instance was left out of the job's membership (it came too late)");
        return;
    }
    p->resize = true;
    p->failed = (h->flags & GCL_STORE_F_FAILED) != 0;
    if (p->arrived || em->open)
        fail_call(em, "an instance left for a resize");
    if (em->resize_since <= 0)
        em->resize_since = now;
    if (em->change_since <= 0)
        em->change_since = now;
    maybe_form(em, now);
}

/* Whether the job is complete: every member of the last epoch said BYE (or, having passed the
 * final barrier with the others, was lost before it could), at least one of them. A joiner still
 * waiting then gets STOP. */
static void check_complete(struct emembers *em)
{
    int done = 0;
    for (int r = 0; r < em->nmembers; r++) {
        enum slot_state st = em->slot[em->members[r]].state;
        if (st != S_DONE && st != S_LOST)
            return;
        done += st == S_DONE;
    }
    if (done == 0 || em->completed)
        return;
    em->completed = true;
    for (int q = 0; q < em->cfg.slots; q++)
        if (em->slot[q].state == S_JOINING)
            send_text(em, em->slot[q].conn, GCL_STORE_STOP, q, 0,
                      "the job ended before this instance could join");
}

static void bye(struct emembers *em, int s)
{
    em->slot[s].state = S_DONE;
    check_complete(em);
}

void em_message(struct emembers *em, int conn, const gcl_store_head_t *h, const void *payload,
                double now)
{
    if (h->kind == GCL_STORE_HELLO) {
        if (slot_of(em, conn) >= 0) {
            lose(em, slot_of(em, conn), "said hello twice", now);
            return;
        }
        hello(em, conn, h, payload, now);
        return;
    }
    int s = slot_of(em, conn);
    if (s < 0) {
        em->io.drop(em->io.ctx, conn); /* nothing before HELLO */
        return;
    }
    em->slot[s].heard = now;
    enum slot_state st = em->slot[s].state;
    if (h->kind == GCL_STORE_BEAT)
        return;
    if (st == S_MEMBER && h->kind == GCL_STORE_COLL)
        coll(em, s, h, payload);
    else if (st == S_MEMBER && h->kind == GCL_STORE_RESIZE)
        resize(em, s, h, now);
    else if (st == S_MEMBER && h->kind == GCL_STORE_BYE)
        bye(em, s);
    else if (st == S_DONE && h->kind == GCL_STORE_BYE)
        return;
    else
        lose(em, s, "broke the store's protocol", now);
}

void em_closed(struct emembers *em, int conn, double now)
{
    int s = slot_of(em, conn);
    if (s < 0)
        return;
    em->slot[s].conn = -1;
    if (em->slot[s].state != S_DONE)
        lose(em, s, "its connection to poprun closed (the process ended)", now);
}

void em_lost(struct emembers *em, int slot, const char *why, double now)
{
    /* The job's first process of SLOT ended: not the replacement that may hold it now. */
    if (slot >= 0 && slot < em->cfg.slots && !em->slot[slot].replaced)
        lose(em, slot, why, now);
}

void em_tick(struct emembers *em, double now)
{
    for (int s = 0; s < em->cfg.slots; s++) {
        struct em_slot *p = &em->slot[s];
        if ((p->state == S_MEMBER || p->state == S_READY || p->state == S_JOINING) &&
            now - p->heard > em->cfg.beat_timeout_s) {
            char why[120];
            snprintf(why, sizeof why, "silent for %.1f s (its host may be lost, or it is stopped)",
                     now - p->heard);
            lose(em, s, why, now);
        }
    }
    if (em->resize_since > 0 && now - em->resize_since > em->cfg.resize_timeout_s) {
        for (int r = 0; r < em->nmembers; r++) {
            int s = em->members[r];
            char why[160];
            snprintf(why, sizeof why,
                     "did not come to the resize within %.1f s of the first instance (stalled "
                     "outside libgcl?): left out",
                     em->cfg.resize_timeout_s);
            if (em->slot[s].state == S_MEMBER && !em->slot[s].resize)
                lose(em, s, why, now);
        }
    }
}

double em_next_deadline(const struct emembers *em)
{
    double d = 0;
    for (int s = 0; s < em->cfg.slots; s++) {
        const struct em_slot *p = &em->slot[s];
        if (p->state == S_MEMBER || p->state == S_READY || p->state == S_JOINING) {
            double t = p->heard + em->cfg.beat_timeout_s;
            d = d == 0 || t < d ? t : d;
        }
    }
    if (em->resize_since > 0) {
        double t = em->resize_since + em->cfg.resize_timeout_s;
        d = d == 0 || t < d ? t : d;
    }
    return d;
}

bool em_completed(const struct emembers *em)
{
    return em->completed;
}

bool em_stopped(const struct emembers *em, char *why, size_t len)
{
    if (em->stopped && why)
        snprintf(why, len, "%s", em->stop_why);
    return em->stopped;
}

int em_epoch(const struct emembers *em)
{
    return em->epoch;
}

int em_members(const struct emembers *em)
{
    return em->nmembers;
}

const struct em_event *em_events(const struct emembers *em, int *n)
{
    *n = em->nevents;
    return em->events;
}

bool em_slot_lost(const struct emembers *em, int slot, char *why, size_t len)
{
    if (slot < 0 || slot >= em->cfg.slots || !em->losses[slot])
        return false;
    if (why)
        snprintf(why, len, "%s", em->slot[slot].why);
    return true;
}

bool em_slot_member(const struct emembers *em, int slot)
{
    return slot >= 0 && slot < em->cfg.slots &&
           (em->slot[slot].state == S_MEMBER || em->slot[slot].state == S_JOINING ||
            em->slot[slot].state == S_DONE);
}

int em_slot_losses(const struct emembers *em, int slot)
{
    return slot >= 0 && slot < em->cfg.slots ? em->losses[slot] : 0;
}

void em_hold(struct emembers *em)
{
    em->held = true;
}

int em_vacant(const struct emembers *em, int *out, int max)
{
    int n = 0;
    if (em->held)
        return 0;
    for (int s = 0; s < em->cfg.slots && n < max; s++)
        if (em->slot[s].state == S_LOST)
            out[n++] = s;
    return n;
}
