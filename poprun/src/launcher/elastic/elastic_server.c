/*
 * poprun's elastic store on the network; see elastic_server.h.
 *
 * One thread, one poll loop: the listening socket, a pipe from the launcher's thread (status
 * markers, the stop), every instance's connection, and the stderr of every replacement's
 * mpirun. Connections are non-blocking; what cannot be written at once waits in the
 * connection's queue. A connection that sends more than a message's limit, or a malformed
 * head, is closed (and, once it said HELLO, its instance is lost).
 */
#include "launcher/elastic/elastic_server.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "launcher/elastic/elastic_grow.h"

#define MAX_CONNS     4096
#define MAX_JOINERS   64
#define JOINER_POLL_S 0.1
/* A replacement whose instance was lost (it joined and was left out, or was lost before it
 * joined) no longer holds its slot: the next one starts at once. Its mpirun is given STALE_GRACE_S
 * to end by itself (an instance that was stopped wakes, hears it was left out and exits), then
 * SIGTERM, then SIGKILL STALE_KILL_S later: one whose daemon is cut off (a partition) waits for
 * it forever. A replacement that has not joined JOIN_TIMEOUT_S after its start (its daemon
 * retries 60 s to reach mpirun) is ended the same way; one that ended before it joined is tried
 * again RETRY_DELAY_S later, not at once (a host ssh cannot reach would use them all up). */
#define STALE_GRACE_S  10.0
#define STALE_KILL_S   3.0
#define JOIN_TIMEOUT_S 90.0
#define RETRY_DELAY_S  5.0

struct conn {
    int fd; /* -1: free */
    int id;
    char *in;
    size_t in_len, in_cap;
    char *out;
    size_t out_len, out_off, out_cap;
    bool dead; /* close after this pass */
};

struct elastic_server {
    struct elastic_server_cfg cfg;
    struct emembers *em;
    int listen_fd, cmd_r, cmd_w;
    struct conn *conns;
    int nconns, next_id;
    struct egrow_child joiners[MAX_JOINERS];
    int njoiners, replacements;
    int replacement_failure;
    double *retry_at; /* [slots]: no replacement of the slot before (CLOCK_MONOTONIC) */
    pthread_t thread;
    bool running;
    double wait_s;        /* the stop's wait for replacements */
    atomic_bool complete; /* em_completed, for the launcher's thread */
    atomic_bool carried;  /* the job goes on in replacements (elastic_server_carried) */
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static struct conn *by_id(struct elastic_server *s, int id)
{
    for (int i = 0; i < s->nconns; i++)
        if (s->conns[i].fd >= 0 && s->conns[i].id == id)
            return &s->conns[i];
    return NULL;
}

static void flush_conn(struct conn *c)
{
    while (c->out_off < c->out_len) {
        ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL);
        if (n > 0) {
            c->out_off += (size_t)n;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        c->dead = true;
        return;
    }
    c->out_len = c->out_off = 0;
}

static void io_send(void *ctx, int id, const gcl_store_head_t *h, const void *payload)
{
    struct conn *c = by_id(ctx, id);
    if (!c || c->dead)
        return;
    size_t need = c->out_len + sizeof *h + h->bytes;
    if (need > c->out_cap) {
        c->out_cap = need * 2;
        c->out = xrealloc(c->out, c->out_cap);
    }
    memcpy(c->out + c->out_len, h, sizeof *h);
    if (h->bytes)
        memcpy(c->out + c->out_len + sizeof *h, payload, h->bytes);
    c->out_len = need;
    flush_conn(c);
}

static void io_drop(void *ctx, int id)
{
    struct conn *c = by_id(ctx, id);
    if (c) {
        flush_conn(c); /* a STOP or REFUSE said first */
        c->dead = true;
    }
}

static void io_say(void *ctx, const char *line)
{
    (void)ctx;
    fprintf(stderr, "poprun: %s\n", line);
}

static void close_conn(struct elastic_server *s, struct conn *c, double now)
{
    int id = c->id;
    close(c->fd);
    c->fd = -1;
    free(c->in);
    free(c->out);
    memset(c, 0, sizeof *c);
    c->fd = -1;
    em_closed(s->em, id, now);
}

static void accept_conns(struct elastic_server *s)
{
    for (;;) {
        int fd = accept4(s->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
            return;
        int one = 1;
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct conn *c = NULL;
        for (int i = 0; i < s->nconns && !c; i++)
            if (s->conns[i].fd < 0)
                c = &s->conns[i];
        if (!c && s->nconns < MAX_CONNS)
            c = &s->conns[s->nconns++];
        if (!c) {
            close(fd);
            continue;
        }
        memset(c, 0, sizeof *c);
        c->fd = fd;
        c->id = s->next_id++;
    }
}

/* Whole messages in C's input go to the state machine. */
static void take_messages(struct elastic_server *s, struct conn *c, double now)
{
    size_t at = 0;
    while (!c->dead && c->in_len - at >= sizeof(gcl_store_head_t)) {
        gcl_store_head_t h;
        memcpy(&h, c->in + at, sizeof h);
        if (h.magic != GCL_STORE_MAGIC || h.bytes > GCL_STORE_MAX_BYTES) {
            c->dead = true;
            break;
        }
        if (c->in_len - at < sizeof h + h.bytes)
            break;
        em_message(s->em, c->id, &h, c->in + at + sizeof h, now);
        at += sizeof h + h.bytes;
    }
    memmove(c->in, c->in + at, c->in_len - at);
    c->in_len -= at;
}

static void read_conn(struct elastic_server *s, struct conn *c, double now)
{
    if (c->in_cap - c->in_len < 65536) {
        c->in_cap = c->in_cap * 2 + 65536;
        c->in = xrealloc(c->in, c->in_cap);
    }
    ssize_t n = recv(c->fd, c->in + c->in_len, c->in_cap - c->in_len, 0);
    if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) {
        c->dead = true;
        return;
    }
    if (n > 0) {
        c->in_len += (size_t)n;
        take_messages(s, c, now);
    }
}

/* Commands from the launcher's thread: "L SLOT WHY" (an instance ended), "H" (the job stops:
 * replace nobody), "Q" (stop). */
static bool read_commands(struct elastic_server *s, double now)
{
    char buf[1024];
    ssize_t n = read(s->cmd_r, buf, sizeof buf - 1);
    if (n <= 0)
        return n == 0;
    buf[n] = '\0';
    bool quit = false;
    for (char *save, *line = strtok_r(buf, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        int slot, at = 0;
        if (line[0] == 'Q')
            quit = true;
        else if (line[0] == 'H')
            em_hold(s->em);
        else if (sscanf(line, "L %d %n", &slot, &at) == 1 && at > 0)
            em_lost(s->em, slot, line + at, now);
    }
    return quit;
}

/* Whether replacement J runs and still holds its slot (it is not stale). */
static bool holds_slot(const struct egrow_child *j)
{
    return j->slot >= 0 && j->stale_at == 0;
}

/* Whether a replacement of SLOT runs that still holds it. */
static bool replacing(const struct elastic_server *s, int slot)
{
    for (int i = 0; i < s->njoiners; i++)
        if (s->joiners[i].slot == slot && holds_slot(&s->joiners[i]))
            return true;
    return false;
}

/* Starts the replacement of every lost slot that has none, while replacements are left and
 * the job runs. */
static void grow(struct elastic_server *s, double now)
{
    int vacant[64], n = em_vacant(s->em, vacant, 64);
    for (int i = 0; i < n && s->replacements < s->cfg.max_replacements; i++) {
        int slot = vacant[i];
        if (replacing(s, slot) || now < s->retry_at[slot] || em_completed(s->em) ||
            em_stopped(s->em, NULL, 0) || s->njoiners == MAX_JOINERS)
            continue;
        const struct elastic_server_cfg *c = &s->cfg;
        const char *host = c->host_at >= 0 && c->hosts && c->hosts->n
                               ? c->hosts->v[slot / c->instances_per_host]
                               : NULL;
        char err[512];
        struct egrow_child *j = &s->joiners[s->njoiners];
        if (egrow_spawn(c->joiner_argv, c->slot_at, c->host_at, slot, host, c->token, c->verbose, j,
                        err, sizeof err) != 0) {
            fprintf(stderr, "poprun: elastic: %s\n", err);
            s->replacements = c->max_replacements; /* do not try again and again */
            return;
        }
        j->losses = em_slot_losses(s->em, slot);
        j->started = now;
        s->njoiners++;
        s->replacements++;
        fprintf(stderr, "poprun: elastic: starting a replacement for instance %d%s%s (%d of %d)\n",
                slot, host ? " on host " : "", host ? host : "", s->replacements,
                c->max_replacements);
    }
}

/* Replacements that ended. One that ended before its instance joined (and was not ended by
 * poprun) is tried again RETRY_DELAY_S later. */
static void reap_joiners(struct elastic_server *s, double now)
{
    for (int i = 0; i < s->njoiners; i++) {
        struct egrow_child *j = &s->joiners[i];
        if (j->slot < 0 || j->err_fd >= 0 || !egrow_reap(j))
            continue;
        int code = egrow_finish(j);
        if (code != 0 && !em_completed(s->em))
            s->replacement_failure = code;
        if (j->stale_at == 0 && em_slot_losses(s->em, j->slot) == j->losses &&
            !em_slot_member(s->em, j->slot))
            s->retry_at[j->slot] = now + RETRY_DELAY_S;
        j->slot = -1;
    }
}

/* Replacements that no longer hold their slot (see STALE_GRACE_S), and their end. */
static void tend_joiners(struct elastic_server *s, double now)
{
    for (int i = 0; i < s->njoiners; i++) {
        struct egrow_child *j = &s->joiners[i];
        if (j->slot < 0)
            continue;
        if (j->stale_at == 0 && em_slot_losses(s->em, j->slot) != j->losses) {
            j->stale_at = now; /* its instance was lost: the slot is vacant again */
        } else if (j->stale_at == 0 && !em_slot_member(s->em, j->slot) &&
                   now - j->started > JOIN_TIMEOUT_S) {
            fprintf(stderr,
                    "poprun: elastic: the replacement of instance %d did not join within %.0f s: "
                    "ending it\n",
                    j->slot, JOIN_TIMEOUT_S);
            j->stale_at = now - STALE_GRACE_S;
        }
        double late = j->stale_at > 0 ? now - j->stale_at - STALE_GRACE_S : -1;
        if ((j->kills == 0 && late >= 0) || (j->kills == 1 && late >= STALE_KILL_S)) {
            if (s->cfg.verbose >= 1)
                fprintf(stderr, "poprun: elastic: ending the stale replacement of instance %d\n",
                        j->slot);
            egrow_kill(j, j->kills++ ? SIGKILL : SIGTERM);
        }
    }
}

static int build_poll(struct elastic_server *s, struct pollfd *p, int *who)
{
    int n = 0;
    p[n] = (struct pollfd){s->listen_fd, POLLIN, 0};
    who[n++] = -1;
    p[n] = (struct pollfd){s->cmd_r, POLLIN, 0};
    who[n++] = -2;
    for (int i = 0; i < s->nconns; i++) {
        if (s->conns[i].fd < 0)
            continue;
        short ev = POLLIN | (s->conns[i].out_len > s->conns[i].out_off ? POLLOUT : 0);
        p[n] = (struct pollfd){s->conns[i].fd, ev, 0};
        who[n++] = i;
    }
    for (int i = 0; i < s->njoiners; i++) {
        if (s->joiners[i].err_fd < 0)
            continue;
        p[n] = (struct pollfd){s->joiners[i].err_fd, POLLIN, 0};
        who[n++] = -3 - i;
    }
    return n;
}

static int poll_timeout(const struct elastic_server *s, double now)
{
    double d = em_next_deadline(s->em), wait = JOINER_POLL_S;
    if (d > 0 && d - now < wait)
        wait = d - now;
    return wait <= 0 ? 0 : (int)(wait * 1000) + 1;
}

/* Whether the job goes on, and replacements run that hold their slots. */
static bool carried(const struct elastic_server *s)
{
    if (em_completed(s->em) || em_stopped(s->em, NULL, 0))
        return false;
    for (int i = 0; i < s->njoiners; i++)
        if (holds_slot(&s->joiners[i]))
            return true;
    return false;
}

/* The stop: the replacements still running are waited for up to WAIT_S (stale ones are ended
 * at once), then ended. Whether the thread may go (none left, or 5 s past the wait). */
static bool stop_joiners(struct elastic_server *s, double now, double *quit_at)
{
    if (*quit_at == 0) {
        *quit_at = now;
        for (int i = 0; i < s->njoiners; i++) {
            struct egrow_child *j = &s->joiners[i];
            if (j->slot >= 0 && s->wait_s <= 0)
                egrow_kill(j, SIGTERM);
            if (j->slot >= 0 && j->stale_at > now - STALE_GRACE_S)
                j->stale_at = now - STALE_GRACE_S;
        }
    }
    bool running = false;
    for (int i = 0; i < s->njoiners; i++)
        running |= s->joiners[i].slot >= 0;
    if (!running || now - *quit_at > s->wait_s + 5)
        return true;
    if (now - *quit_at > s->wait_s) {
        for (int i = 0; i < s->njoiners; i++)
            if (s->joiners[i].slot >= 0)
                egrow_kill(&s->joiners[i], now - *quit_at > s->wait_s + 3 ? SIGKILL : SIGTERM);
    }
    return false;
}

static void *serve(void *arg)
{
    struct elastic_server *s = arg;
    int cap = 2 + MAX_CONNS + MAX_JOINERS;
    struct pollfd *p = xcalloc((size_t)cap, sizeof *p);
    int *who = xcalloc((size_t)cap, sizeof *who);
    bool quit = false;
    double quit_at = 0;
    for (;;) {
        double now = now_s();
        int n = build_poll(s, p, who);
        if (poll(p, (nfds_t)n, poll_timeout(s, now)) < 0 && errno != EINTR)
            break;
        now = now_s();
        for (int i = 0; i < n; i++) {
            if (!p[i].revents)
                continue;
            if (who[i] == -1)
                accept_conns(s);
            else if (who[i] == -2)
                quit |= read_commands(s, now);
            else if (who[i] <= -3)
                egrow_read(&s->joiners[-3 - who[i]]);
            else if (p[i].revents & POLLOUT)
                flush_conn(&s->conns[who[i]]);
            if (who[i] >= 0 && (p[i].revents & (POLLIN | POLLHUP | POLLERR)))
                read_conn(s, &s->conns[who[i]], now);
        }
        for (int i = 0; i < s->nconns; i++)
            if (s->conns[i].fd >= 0 && s->conns[i].dead)
                close_conn(s, &s->conns[i], now);
        em_tick(s->em, now);
        atomic_store(&s->complete, em_completed(s->em));
        reap_joiners(s, now);
        tend_joiners(s, now);
        if (!quit)
            grow(s, now);
        atomic_store(&s->carried, carried(s));
        if (quit && stop_joiners(s, now, &quit_at))
            break;
    }
    free(p);
    free(who);
    return NULL;
}

static int listen_on(const char *addr, int *fd_out, char *out, size_t outlen, char *err,
                     size_t errlen)
{
    struct sockaddr_in sa = {.sin_family = AF_INET};
    if (inet_pton(AF_INET, addr, &sa.sin_addr) != 1)
        return errf(err, errlen, "elastic store: %s is no IPv4 address", addr);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    socklen_t len = sizeof sa;
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 256) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        int e = errno;
        if (fd >= 0)
            close(fd);
        return errf(err, errlen, "elastic store: cannot listen on %s: %s", addr, strerror(e));
    }
    snprintf(out, outlen, "%s:%d", addr, ntohs(sa.sin_port));
    *fd_out = fd;
    return 0;
}

int elastic_server_start(const struct elastic_server_cfg *cfg, struct elastic_server **out,
                         char *addr, size_t addrlen, char *err, size_t errlen)
{
    struct elastic_server *s = xcalloc(1, sizeof *s);
    s->cfg = *cfg;
    s->listen_fd = s->cmd_r = s->cmd_w = -1;
    int pfd[2];
    if (listen_on(cfg->bind_addr, &s->listen_fd, addr, addrlen, err, errlen) != 0 ||
        pipe2(pfd, O_CLOEXEC | O_NONBLOCK) != 0) {
        if (s->listen_fd >= 0)
            close(s->listen_fd);
        free(s);
        return err[0] ? -1 : errf(err, errlen, "pipe: %s", strerror(errno));
    }
    s->cmd_r = pfd[0];
    s->cmd_w = pfd[1];
    s->conns = xcalloc(MAX_CONNS, sizeof *s->conns);
    s->retry_at = xcalloc((size_t)cfg->members.slots, sizeof *s->retry_at);
    struct emembers_io io = {io_send, io_drop, io_say, s};
    s->em = em_create(&cfg->members, &io);
    /* The thread blocks every signal: the launcher reads its own through a signalfd, which
     * sees only signals no thread takes. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old);
    int rc = pthread_create(&s->thread, NULL, serve, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        elastic_server_free(s);
        return errf(err, errlen, "elastic store: cannot start its thread: %s", strerror(rc));
    }
    s->running = true;
    *out = s;
    return 0;
}

void elastic_server_lost(struct elastic_server *s, int slot, const char *why)
{
    char line[512];
    int n = snprintf(line, sizeof line, "L %d %s\n", slot, why);
    if (n > 0 && (size_t)n < sizeof line)
        (void)write_all(s->cmd_w, line, (size_t)n);
}

void elastic_server_hold(struct elastic_server *s)
{
    (void)write_all(s->cmd_w, "H\n", 2);
}

void elastic_server_stop(struct elastic_server *s, double wait_s)
{
    if (!s->running)
        return;
    s->wait_s = wait_s;
    (void)write_all(s->cmd_w, "Q\n", 2);
    pthread_join(s->thread, NULL);
    s->running = false;
    for (int i = 0; i < s->njoiners; i++)
        if (s->joiners[i].slot >= 0) {
            egrow_kill(&s->joiners[i], SIGKILL);
            while (!egrow_reap(&s->joiners[i]))
                usleep(1000);
            int code = egrow_finish(&s->joiners[i]);
            if (code != 0 && !em_completed(s->em))
                s->replacement_failure = code;
            s->joiners[i].slot = -1;
        }
}

bool elastic_server_complete(struct elastic_server *s)
{
    return atomic_load(&s->complete);
}

bool elastic_server_carried(struct elastic_server *s)
{
    return atomic_load(&s->carried);
}

const struct emembers *elastic_server_members(const struct elastic_server *s)
{
    return s->em;
}

int elastic_server_replacements(const struct elastic_server *s, int *failed_status)
{
    *failed_status = s->replacement_failure;
    return s->replacements;
}

void elastic_server_free(struct elastic_server *s)
{
    if (!s)
        return;
    if (s->running)
        elastic_server_stop(s, 0);
    for (int i = 0; s->conns && i < s->nconns; i++)
        if (s->conns[i].fd >= 0) {
            close(s->conns[i].fd);
            free(s->conns[i].in);
            free(s->conns[i].out);
        }
    free(s->conns);
    free(s->retry_at);
    em_free(s->em);
    if (s->listen_fd >= 0)
        close(s->listen_fd);
    if (s->cmd_r >= 0)
        close(s->cmd_r);
    if (s->cmd_w >= 0)
        close(s->cmd_w);
    free(s);
}
