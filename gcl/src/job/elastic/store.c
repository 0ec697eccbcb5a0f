/* The client of poprun's elastic store; see store.h. */
#include "job/elastic/store.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/log.h"
#include "base/wait.h"
#include "gcl/elastic_store.h"

/* An answer from the store, queued in order of arrival until a request takes it. */
typedef struct answer {
    gcl_store_head_t head;
    char *payload; /* heap, head.bytes + 1 */
    struct answer *next;
} answer_t;

struct gcl_store {
    int fd;
    double beat_s;
    void (*on_news)(void *);
    void *ctx;
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t send_lock; /* one message at a time on the socket */
    pthread_mutex_t lock;      /* the answer, the state below */
    pthread_cond_t cond;
    answer_t *first, *last; /* answers not taken yet, oldest first */
    int gone;               /* the connection broke: poprun is gone */
    char *stopped;          /* the store said STOP, and why (heap): every wait ends with it */
    int epoch;              /* the current epoch (-1 before the first) */
    uint64_t seq;           /* bootstrap calls made in this epoch */
    gcl_store_news_t news;
};

void gcl_membership_free(gcl_membership_t *m)
{
    free(m->slots);
    memset(m, 0, sizeof *m);
}

static int send_all(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t k = send(fd, c, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
    char *c = p;
    while (n > 0) {
        ssize_t k = recv(fd, c, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        c += k;
        n -= (size_t)k;
    }
    return 0;
}

static gcl_status_t send_msg(gcl_store_t *s, int kind, unsigned flags, int arg, uint64_t seq,
                             const void *payload, size_t bytes)
{
    gcl_store_head_t h = {
        GCL_STORE_MAGIC, (uint16_t)kind, (uint16_t)flags, s->epoch, arg, seq, (uint32_t)bytes, 0};
    pthread_mutex_lock(&s->send_lock);
    int rc = send_all(s->fd, &h, sizeof h) || (bytes && send_all(s->fd, payload, bytes));
    pthread_mutex_unlock(&s->send_lock);
    return rc ? GCL_ERR_TRANSPORT : GCL_OK;
}

/* NEWS of epoch E: an instance lost. */
static void take_news(gcl_store_t *s, const gcl_store_head_t *h, const char *text)
{
    pthread_mutex_lock(&s->lock);
    int current = h->epoch == s->epoch && atomic_load(&s->news.lost) == 0;
    if (current) {
        snprintf(s->news.why, sizeof s->news.why, "%.*s", (int)h->bytes, text);
        atomic_store(&s->news.lost, h->arg + 1);
    }
    pthread_mutex_unlock(&s->lock);
    if (current && s->on_news)
        s->on_news(s->ctx);
}

static void broke(gcl_store_t *s)
{
    pthread_mutex_lock(&s->lock);
    int was = s->gone;
    s->gone = 1;
    if (!was && atomic_load(&s->news.lost) == 0) {
        snprintf(s->news.why, sizeof s->news.why,
                 "the connection to poprun's elastic store broke (poprun is gone)");
        atomic_store(&s->news.lost, -1);
    }
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    if (!was && s->on_news && !atomic_load(&s->stop))
        s->on_news(s->ctx);
}

/* Reads one message; 0, or -1 when the connection broke. */
static int read_one(gcl_store_t *s)
{
    gcl_store_head_t h;
    if (recv_all(s->fd, &h, sizeof h) || h.magic != GCL_STORE_MAGIC ||
        h.bytes > GCL_STORE_MAX_BYTES)
        return -1;
    char *payload = malloc(h.bytes + 1);
    if (!payload || (h.bytes && recv_all(s->fd, payload, h.bytes))) {
        free(payload);
        return -1;
    }
    payload[h.bytes] = '\0';
    if (h.kind == GCL_STORE_NEWS) {
        take_news(s, &h, payload);
        free(payload);
        return 0;
    }
    answer_t *a = malloc(sizeof *a);
    if (!a) {
        free(payload);
        return -1;
    }
    *a = (answer_t){h, payload, NULL};
    pthread_mutex_lock(&s->lock);
    if (h.kind == GCL_STORE_STOP && !s->stopped)
        s->stopped = strdup(payload);
    if (s->last)
        s->last->next = a;
    else
        s->first = a;
    s->last = a;
    pthread_cond_broadcast(&s->cond);
    pthread_mutex_unlock(&s->lock);
    return 0;
}

static void *serve(void *arg)
{
    gcl_store_t *s = arg;
    double next_beat = gcl_now() + s->beat_s;
    while (!atomic_load(&s->stop)) {
        struct pollfd p = {s->fd, POLLIN, 0};
        double wait = next_beat - gcl_now();
        int r = poll(&p, 1, wait > 0 ? (int)(wait * 1000) + 1 : 0);
        if (atomic_load(&s->stop))
            break;
        if (r > 0 && read_one(s) != 0) {
            broke(s);
            break;
        }
        if (gcl_now() >= next_beat) {
            if (send_msg(s, GCL_STORE_BEAT, 0, 0, 0, NULL, 0) != GCL_OK) {
                broke(s);
                break;
            }
            next_beat = gcl_now() + s->beat_s;
        }
    }
    return NULL;
}

/* Waits for an answer of one of the kinds KINDS (zero-ended), up to TIMEOUT_S; *A gets it (its
 * payload is the caller's). Answers of other kinds that came before it are dropped: they are
 * stale (an earlier call's that timed out, an earlier epoch's). */
static gcl_status_t await(gcl_store_t *s, const int *kinds, double timeout_s, answer_t *a)
{
    double until = gcl_now() + timeout_s;
    pthread_mutex_lock(&s->lock);
    for (;;) {
        while (s->first) {
            answer_t *f = s->first;
            s->first = f->next;
            if (!s->first)
                s->last = NULL;
            int wanted = 0;
            for (int i = 0; kinds[i]; i++)
                wanted |= f->head.kind == kinds[i];
            if (wanted) {
                *a = *f;
                free(f);
                pthread_mutex_unlock(&s->lock);
                return GCL_OK;
            }
            free(f->payload);
            free(f);
        }
        if (s->stopped) { /* sticky: a STOP taken by an earlier wait still counts */
            *a = (answer_t){{GCL_STORE_MAGIC, GCL_STORE_STOP, 0, s->epoch, 0, 0, 0, 0},
                            strdup(s->stopped),
                            NULL};
            pthread_mutex_unlock(&s->lock);
            return a->payload ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
        }
        if (s->gone) {
            pthread_mutex_unlock(&s->lock);
            return GCL_ERR_TRANSPORT;
        }
        double left = until - gcl_now();
        if (left <= 0) {
            pthread_mutex_unlock(&s->lock);
            return GCL_ERR_TIMEOUT;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        double step = left < 0.1 ? left : 0.1;
        ts.tv_nsec += (long)(step * 1e9);
        ts.tv_sec += ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&s->cond, &s->lock, &ts);
    }
}

static int open_socket(const char *addr, char *err, size_t len)
{
    char host[64];
    const char *colon = strrchr(addr, ':');
    struct sockaddr_in sa = {.sin_family = AF_INET};
    int port = colon ? atoi(colon + 1) : 0;
    if (!colon || (size_t)(colon - addr) >= sizeof host || port <= 0 || port > 65535) {
        snprintf(err, len, "GCL_ELASTIC_STORE=%s: expected IPV4:PORT (set by poprun --elastic)",
                 addr);
        return -1;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        snprintf(err, len, "GCL_ELASTIC_STORE=%s: %s is no IPv4 address", addr, host);
        return -1;
    }
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        snprintf(err, len, "cannot connect to poprun's elastic store at %s: %s", addr,
                 strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

/* HELLO, and the answer: WELCOME, or REFUSE / STOP with the store's reason. */
static gcl_status_t hello(gcl_store_t *s, const uint8_t token[16], int slot, int join, char *err,
                          size_t len)
{
    gcl_store_hello_t m;
    memset(&m, 0, sizeof m);
    memcpy(m.token, token, 16);
    m.pid = (int32_t)getpid();
    m.join = join;
    if (gethostname(m.host, sizeof m.host - 1) != 0)
        strcpy(m.host, "?");
    GCL_CHECK(send_msg(s, GCL_STORE_HELLO, 0, slot, 0, &m, sizeof m));
    static const int kinds[] = {GCL_STORE_WELCOME, GCL_STORE_REFUSE, GCL_STORE_STOP, 0};
    answer_t a;
    gcl_status_t rc = await(s, kinds, 30, &a);
    if (rc != GCL_OK) {
        snprintf(err, len, "poprun's elastic store did not answer this instance's hello");
        return rc;
    }
    if (a.head.kind != GCL_STORE_WELCOME) {
        snprintf(err, len, "poprun's elastic store refused instance %d: %s", slot, a.payload);
        rc = GCL_ERR_INVALID_ARGUMENT;
    }
    free(a.payload);
    return rc;
}

gcl_status_t gcl_store_connect(const char *addr, const uint8_t token[16], int slot, int join,
                               double beat_s, void (*on_news)(void *), void *ctx, gcl_store_t **out,
                               char *err, size_t len)
{
    *out = NULL;
    int fd = open_socket(addr, err, len);
    if (fd < 0)
        return GCL_ERR_TRANSPORT;
    gcl_store_t *s = gcl_calloc(1, sizeof *s);
    if (!s) {
        close(fd);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    s->fd = fd;
    s->beat_s = beat_s;
    s->on_news = on_news;
    s->ctx = ctx;
    s->epoch = -1;
    pthread_mutex_init(&s->send_lock, NULL);
    pthread_mutex_init(&s->lock, NULL);
    pthread_cond_init(&s->cond, NULL);
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &old); /* the program's signals are not this thread's */
    int e = pthread_create(&s->thread, NULL, serve, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (e != 0) {
        snprintf(err, len, "cannot start the elastic store's thread: %s", strerror(e));
        s->thread = 0;
        gcl_store_close(s);
        return GCL_ERR_SYSTEM;
    }
    gcl_status_t rc = hello(s, token, slot, join, err, len);
    if (rc != GCL_OK) {
        gcl_store_close(s);
        return rc;
    }
    *out = s;
    return GCL_OK;
}

/* The membership in A's payload into OUT (one allocation holds the three lists). */
static gcl_status_t read_membership(const answer_t *a, gcl_membership_t *out)
{
    gcl_store_epoch_t m;
    memset(out, 0, sizeof *out);
    if (a->head.bytes < sizeof m)
        return GCL_ERR_TRANSPORT;
    memcpy(&m, a->payload, sizeof m);
    size_t n = (size_t)m.members + (size_t)m.lost + (size_t)m.joined;
    if (m.members <= 0 || m.lost < 0 || m.joined < 0 || a->head.arg < 0 ||
        a->head.arg >= m.members || a->head.bytes != sizeof m + 4 * n)
        return GCL_ERR_TRANSPORT;
    int *all = gcl_malloc(n * sizeof(int));
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    memcpy(all, a->payload + sizeof m, n * sizeof(int));
    *out = (gcl_membership_t){
        a->head.epoch, a->head.arg, m.members,       m.replicas_per_instance, m.lost,
        m.joined,      all,         all + m.members, all + m.members + m.lost};
    return GCL_OK;
}

gcl_status_t gcl_store_wait_epoch(gcl_store_t *s, double timeout_s, gcl_membership_t *out,
                                  char *err, size_t len)
{
    static const int kinds[] = {GCL_STORE_EPOCH, GCL_STORE_STOP, 0};
    answer_t a;
    gcl_status_t rc = await(s, kinds, timeout_s, &a);
    if (rc == GCL_ERR_TIMEOUT)
        snprintf(err, len,
                 "no new membership from poprun's elastic store within %.1f s "
                 "(GCL_TIMEOUT_S)",
                 timeout_s);
    else if (rc != GCL_OK)
        snprintf(err, len, "the connection to poprun's elastic store broke (poprun is gone)");
    if (rc != GCL_OK)
        return rc;
    if (a.head.kind == GCL_STORE_STOP) {
        snprintf(err, len, "%s", a.payload);
        free(a.payload);
        return GCL_ERR_PEER_FAILED;
    }
    rc = read_membership(&a, out);
    free(a.payload);
    if (rc != GCL_OK) {
        snprintf(err, len, "a malformed membership from poprun's elastic store");
        return rc;
    }
    pthread_mutex_lock(&s->lock);
    s->epoch = out->epoch;
    s->seq = 0;
    atomic_store(&s->news.lost, 0);
    s->news.why[0] = '\0';
    pthread_mutex_unlock(&s->lock);
    return GCL_OK;
}

/* Why a request could not be sent: the store's STOP when it said one (it closes the connection
 * of an instance it left out), else the connection broke. */
static gcl_status_t not_sent(gcl_store_t *s, char *err, size_t len)
{
    pthread_mutex_lock(&s->lock);
    gcl_status_t rc = s->stopped ? GCL_ERR_PEER_FAILED : GCL_ERR_TRANSPORT;
    if (s->stopped)
        snprintf(err, len, "%s", s->stopped);
    else
        snprintf(err, len, "the connection to poprun's elastic store broke (poprun is gone)");
    pthread_mutex_unlock(&s->lock);
    return rc;
}

gcl_status_t gcl_store_resize(gcl_store_t *s, int failed, char *err, size_t len)
{
    if (send_msg(s, GCL_STORE_RESIZE, failed ? GCL_STORE_F_FAILED : 0, 0, 0, NULL, 0) != GCL_OK)
        return not_sent(s, err, len);
    return GCL_OK;
}

gcl_status_t gcl_store_coll(gcl_store_t *s, int root, const void *in, size_t bytes, void *out,
                            size_t out_bytes, unsigned *flags, double timeout_s, char *err,
                            size_t len)
{
    static const int kinds[] = {GCL_STORE_COLL_DONE, GCL_STORE_COLL_FAIL, GCL_STORE_STOP, 0};
    if (bytes > GCL_STORE_MAX_BYTES) {
        snprintf(err, len, "a bootstrap call of %zu bytes: more than the store's %u", bytes,
                 GCL_STORE_MAX_BYTES);
        return GCL_ERR_INVALID_ARGUMENT;
    }
    uint64_t seq = ++s->seq;
    gcl_status_t rc = send_msg(s, GCL_STORE_COLL, 0, root, seq, in, bytes);
    if (rc != GCL_OK)
        return not_sent(s, err, len);
    answer_t a;
    memset(&a, 0, sizeof a);
    for (;;) { /* an answer to an earlier call (one that timed out) is dropped */
        if (rc == GCL_OK)
            rc = await(s, kinds, timeout_s, &a);
        if (rc != GCL_OK || a.head.kind != GCL_STORE_COLL_DONE || a.head.seq == seq)
            break;
        free(a.payload);
    }
    if (rc == GCL_ERR_TIMEOUT)
        snprintf(err, len,
                 "bootstrap call %llu: no answer from poprun's elastic store within "
                 "%.1f s (GCL_TIMEOUT_S)",
                 (unsigned long long)seq, timeout_s);
    else if (rc != GCL_OK)
        snprintf(err, len, "the connection to poprun's elastic store broke (poprun is gone)");
    if (rc != GCL_OK)
        return rc;
    if (a.head.kind != GCL_STORE_COLL_DONE) {
        snprintf(err, len, "%s", a.payload);
        free(a.payload);
        return GCL_ERR_PEER_FAILED;
    }
    if (a.head.bytes != out_bytes) {
        snprintf(err, len, "bootstrap call %llu: poprun's elastic store answered %u bytes, not %zu",
                 (unsigned long long)seq, a.head.bytes, out_bytes);
        free(a.payload);
        return GCL_ERR_TRANSPORT;
    }
    if (flags)
        *flags = a.head.flags;
    memcpy(out, a.payload, out_bytes);
    free(a.payload);
    return GCL_OK;
}

void gcl_store_bye(gcl_store_t *s)
{
    if (s && !s->gone)
        send_msg(s, GCL_STORE_BYE, 0, 0, 0, NULL, 0);
}

const gcl_store_news_t *gcl_store_news(const gcl_store_t *s)
{
    return &s->news;
}

int gcl_store_epoch(const gcl_store_t *s)
{
    return s->epoch;
}

void gcl_store_close(gcl_store_t *s)
{
    if (!s)
        return;
    atomic_store(&s->stop, 1);
    shutdown(s->fd, SHUT_RDWR);
    if (s->thread)
        pthread_join(s->thread, NULL);
    close(s->fd);
    while (s->first) {
        answer_t *f = s->first;
        s->first = f->next;
        free(f->payload);
        free(f);
    }
    free(s->stopped);
    pthread_cond_destroy(&s->cond);
    pthread_mutex_destroy(&s->lock);
    pthread_mutex_destroy(&s->send_lock);
    free(s);
}
