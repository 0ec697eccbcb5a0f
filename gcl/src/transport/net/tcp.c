/*
 * The tcp network backend: our own tagged messages over one TCP stream per pair of instances
 * (tcp_mesh.c makes the streams). A message is a frame (its full tag and length, 32 bytes)
 * followed by its bytes. Sends are written straight from the caller's buffer, several frames in
 * one sendmsg; a receive posted before its message arrives is read straight into the caller's
 * buffer, a message that arrives first is kept until its receive is posted. No thread of its
 * own: whoever tests a request moves what the sockets will take now (at most once per progress
 * pass of its thread), and a send is written as it is posted.
 *
 * Why not libfabric: its tcp provider (1.17) wakes a progress thread through a socketpair after
 * every send and receive, and polls before every completion read. On a VM where a system call
 * costs about 1 us that was 10 system calls a message against OpenMPI's 4, and a 1 MiB
 * all_reduce between 2 namespace hosts took 531-666 us against OpenMPI's 324-716
 * (docs/benchmarks.md). This path makes one sendmsg per batch of sends and one readv per batch
 * of arrivals. Declared in transport/net/backends.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/wait.h"
#include "transport/net/backends.h"
#include "transport/net/heap.h"
#include "transport/net/tcp_mesh.h"

/* Progress at most every PROGRESS_SMALL_S while only small transfers (at most SMALL_BYTES) are
 * in flight, every PROGRESS_LARGE_S while a large one is: each look at a socket is a system
 * call, and threads of oversubscribed instances spin (the same rule as the ofi backend's). */
#define PROGRESS_SMALL_S 2e-6
#define PROGRESS_LARGE_S 10e-6
#define SMALL_BYTES      16384
/* A frame longer than any message libgcl sends (pieces are at most 1 GiB): the stream is
 * corrupt, and the connection is closed. */
#define MAX_MESSAGE ((uint64_t)1 << 31)

enum {
    STAGE_BYTES = 128 * 1024, /* arrivals are read here, then copied: small messages, frames */
    IOV_SENDS = 16,           /* sends written by one sendmsg */
    READS_PER_PASS = 64,      /* reads of one socket per progress, at most */
};

typedef struct {
    uint32_t tag[6]; /* comm, seq, msg, piece, src_local, dst_local */
    uint64_t len;
} frame_t;
#define FRAME sizeof(frame_t)

typedef struct tcp_req {
    struct tcp_req *next;
    frame_t f;      /* a send's frame; a receive's wanted tag */
    char *buf;      /* the caller's buffer (an orphan's: its own copy of what is left) */
    size_t len;     /* bytes of payload to send, or room to receive */
    size_t done;    /* a send's bytes written, its frame included */
    uint64_t trunc; /* a receive failed because a message of this many bytes came */
    int peer, send, large, orphan;
    _Atomic int state; /* 0 pending, 1 done, -1 failed */
} tcp_req_t;

/* The tag of a receive that was cancelled before its message came: the message is dropped
 * as it arrives (its bytes read and thrown away), not kept for a receive that will never be
 * posted (tags carry the call's number: no later receive has the same). */
typedef struct drop {
    struct drop *next;
    uint32_t tag[6];
} drop_t;

/* A message that arrived before its receive was posted. */
typedef struct unexp {
    struct unexp *next;
    uint32_t tag[6];
    uint64_t len;
    char *buf;
} unexp_t;

typedef struct {
    int fd, dead;
    char why[160];           /* why the connection is gone */
    tcp_req_t *sq, *sq_tail; /* sends, in order */
    tcp_req_t *rq, *rq_tail; /* posted receives not yet matched, in order */
    unexp_t *uq, *uq_tail;   /* early messages, in order */
    drop_t *drops;           /* tags of cancelled receives whose messages have not come */
    int reading;             /* a frame's bytes are arriving into: */
    tcp_req_t *cur_req;      /*   a posted receive's buffer, */
    unexp_t *cur_unexp;      /*   or an early message's, */
    char *cur_dst;           /*   (NULL: they are dropped) */
    uint64_t cur_len, cur_got;
    char *stage;
    size_t stage_len;
} peer_t;

typedef struct {
    gcl_net_t base;
    int n;
    peer_t *peers;
    atomic_int large_pending;
    pthread_mutex_t lock;
} net_tcp_t;

static _Thread_local unsigned long progressed_pass;
static _Thread_local double progressed_at;

static void tag_fill(uint32_t out[6], const gcl_net_tag_t *t)
{
    out[0] = t->comm;
    out[1] = t->seq;
    out[2] = t->msg;
    out[3] = t->piece;
    out[4] = (uint32_t)t->src_local;
    out[5] = (uint32_t)t->dst_local;
}

static int tag_eq(const uint32_t a[6], const uint32_t b[6])
{
    return memcmp(a, b, 6 * sizeof a[0]) == 0;
}

/* Ends R with STATE (1 done, -1 failed): an orphan is freed, else the caller's test sees it. */
static void finish(net_tcp_t *o, tcp_req_t *r, int state)
{
    if (r->large)
        atomic_fetch_sub(&o->large_pending, 1);
    if (r->orphan) {
        free(r->buf);
        free(r);
        return;
    }
    atomic_store(&r->state, state);
}

static void unlink_req(tcp_req_t **head, tcp_req_t **tail, tcp_req_t *r)
{
    tcp_req_t *prev = NULL;
    for (tcp_req_t *q = *head; q; prev = q, q = q->next)
        if (q == r) {
            *(prev ? &prev->next : head) = r->next;
            if (*tail == r)
                *tail = prev;
            r->next = NULL;
            return;
        }
}

static void unlink_unexp(peer_t *p, unexp_t *u)
{
    unexp_t *prev = NULL;
    for (unexp_t *q = p->uq; q; prev = q, q = q->next)
        if (q == u) {
            *(prev ? &prev->next : &p->uq) = u->next;
            if (p->uq_tail == u)
                p->uq_tail = prev;
            return;
        }
}

static void free_drops(peer_t *p)
{
    for (drop_t *d = p->drops, *next; d; d = next) {
        next = d->next;
        free(d);
    }
    p->drops = NULL;
}

/* Whether a message of TAG is to be dropped (its receive was cancelled); forgets the tag. */
static int take_drop(peer_t *p, const uint32_t tag[6])
{
    for (drop_t **at = &p->drops; *at; at = &(*at)->next)
        if (tag_eq((*at)->tag, tag)) {
            drop_t *d = *at;
            *at = d->next;
            free(d);
            return 1;
        }
    return 0;
}

/* The connection to peer P is gone: every request with it fails, early messages are dropped. */
static void peer_fail(net_tcp_t *o, peer_t *p, const char *why)
{
    if (p->dead)
        return;
    p->dead = 1;
    snprintf(p->why, sizeof p->why, "%s", why);
    close(p->fd);
    p->fd = -1;
    for (tcp_req_t *r = p->sq, *next; r; r = next) {
        next = r->next;
        finish(o, r, -1);
    }
    for (tcp_req_t *r = p->rq, *next; r; r = next) {
        next = r->next;
        finish(o, r, -1);
    }
    if (p->cur_req)
        finish(o, p->cur_req, -1);
    for (unexp_t *u = p->uq, *next; u; u = next) {
        next = u->next;
        free(u);
    }
    free_drops(p);
    p->sq = p->sq_tail = p->rq = p->rq_tail = NULL;
    p->uq = p->uq_tail = NULL;
    p->cur_req = NULL;
    p->cur_unexp = NULL;
    p->reading = 0;
    free(p->stage);
    p->stage = NULL;
    p->stage_len = 0;
}

static void peer_fail_errno(net_tcp_t *o, peer_t *p, int peer, const char *what, int e)
{
    char why[160];
    if (e == 0)
        snprintf(why, sizeof why, "instance %d closed the connection", peer);
    else
        snprintf(why, sizeof why, "%s instance %d failed: %s", what, peer, strerror(e));
    peer_fail(o, p, why);
}

/* Writes what peer P's socket takes now of its queued sends, several per call. */
static void tx(net_tcp_t *o, peer_t *p, int peer)
{
    while (p->sq) {
        struct iovec iov[2 * IOV_SENDS];
        int k = 0;
        size_t total = 0;
        /* A send takes two iovecs (its frame, its bytes), one once its frame is written: stop
         * while there is room for two, or a queue of 16 behind a send written past its frame
         * writes one past the array (a 64 MiB all_reduce between hosts did, issue 48). */
        for (tcp_req_t *r = p->sq; r && k + 2 <= 2 * IOV_SENDS; r = r->next) {
            size_t d = r->done;
            if (d < FRAME) {
                iov[k++] = (struct iovec){(char *)&r->f + d, FRAME - d};
                d = FRAME;
            }
            if (r->len > d - FRAME)
                iov[k++] = (struct iovec){r->buf + (d - FRAME), r->len - (d - FRAME)};
        }
        for (int i = 0; i < k; i++)
            total += iov[i].iov_len;
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = (size_t)k};
        ssize_t w = sendmsg(p->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK)
                peer_fail_errno(o, p, peer, "sending to", errno);
            return;
        }
        size_t left = (size_t)w;
        while (left > 0 && p->sq) {
            tcp_req_t *r = p->sq;
            size_t rest = FRAME + r->len - r->done;
            if (left < rest) {
                r->done += left;
                break;
            }
            left -= rest;
            p->sq = r->next;
            if (!p->sq)
                p->sq_tail = NULL;
            finish(o, r, 1);
        }
        if ((size_t)w < total)
            return; /* the socket is full */
    }
}

/* The message being read is complete. */
static void read_done(net_tcp_t *o, peer_t *p)
{
    if (p->cur_req)
        finish(o, p->cur_req, 1);
    p->cur_req = NULL;
    p->cur_unexp = NULL;
    p->cur_dst = NULL;
    p->reading = 0;
}

/* Frame F arrived: its bytes go to the first posted receive of its tag, else into an early
 * message of their own. Returns 0, or -1 when the connection had to be closed. */
static int begin(net_tcp_t *o, peer_t *p, int peer, const frame_t *f)
{
    if (f->len > MAX_MESSAGE) {
        char why[160];
        snprintf(why, sizeof why, "instance %d sent a frame of %llu bytes: the stream is corrupt",
                 peer, (unsigned long long)f->len);
        peer_fail(o, p, why);
        return -1;
    }
    p->reading = 1;
    p->cur_len = f->len;
    p->cur_got = 0;
    for (tcp_req_t *r = p->rq; r; r = r->next)
        if (tag_eq(r->f.tag, f->tag)) {
            unlink_req(&p->rq, &p->rq_tail, r);
            if (f->len > r->len) {
                r->trunc = f->len;
                finish(o, r, -1);
            } else {
                p->cur_req = r;
                p->cur_dst = r->buf;
            }
            return 0;
        }
    if (take_drop(p, f->tag)) {
        p->cur_dst = NULL; /* read and thrown away */
        return 0;
    }
    unexp_t *u = gcl_malloc(sizeof *u + f->len);
    if (!u) {
        peer_fail(o, p, "out of host memory for a message that came before its receive");
        return -1;
    }
    memcpy(u->tag, f->tag, sizeof u->tag);
    u->len = f->len;
    u->buf = (char *)(u + 1);
    u->next = NULL;
    *(p->uq_tail ? &p->uq_tail->next : &p->uq) = u;
    p->uq_tail = u;
    p->cur_unexp = u;
    p->cur_dst = u->buf;
    return 0;
}

/* Takes frames and bytes out of P's staging buffer. Returns 0, or -1 when the connection was
 * closed. Leaves at most a partial frame in it. */
static int parse(net_tcp_t *o, peer_t *p, int peer)
{
    size_t off = 0;
    for (;;) {
        if (p->reading) {
            uint64_t take = p->cur_len - p->cur_got;
            if (take > p->stage_len - off)
                take = p->stage_len - off;
            if (take && p->cur_dst)
                memcpy(p->cur_dst + p->cur_got, p->stage + off, take);
            p->cur_got += take;
            off += take;
            if (p->cur_got < p->cur_len)
                break;
            read_done(o, p);
            continue;
        }
        if (p->stage_len - off < FRAME)
            break;
        frame_t f;
        memcpy(&f, p->stage + off, FRAME);
        off += FRAME;
        if (begin(o, p, peer, &f) != 0)
            return -1;
    }
    memmove(p->stage, p->stage + off, p->stage_len - off);
    p->stage_len -= off;
    return 0;
}

/* Reads what peer P's socket holds: the rest of a message straight into its buffer, and after
 * it as much as fits into the staging buffer, in one readv. */
static void rx(net_tcp_t *o, peer_t *p, int peer)
{
    if (!p->stage && !(p->stage = gcl_malloc(STAGE_BYTES))) {
        peer_fail(o, p, "out of host memory for a receive buffer");
        return;
    }
    for (int i = 0; i < READS_PER_PASS && !p->dead; i++) {
        struct iovec iov[2];
        int k = 0;
        uint64_t want = 0;
        if (p->reading && p->cur_dst && p->stage_len == 0) {
            want = p->cur_len - p->cur_got;
            iov[k++] = (struct iovec){p->cur_dst + p->cur_got, want};
        }
        size_t room = STAGE_BYTES - p->stage_len;
        iov[k++] = (struct iovec){p->stage + p->stage_len, room};
        ssize_t r = readv(p->fd, iov, k);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
                peer_fail_errno(o, p, peer, "receiving from", r == 0 ? 0 : errno);
            return;
        }
        size_t got = (size_t)r, direct = got < want ? got : want;
        p->cur_got += direct;
        if (want && p->cur_got == p->cur_len)
            read_done(o, p);
        p->stage_len += got - direct;
        if (parse(o, p, peer) != 0)
            return;
        if (got < want + room)
            return; /* the socket is empty */
    }
}

static void progress(net_tcp_t *o)
{
    for (int i = 0; i < o->n; i++) {
        peer_t *p = &o->peers[i];
        if (p->fd < 0 || p->dead)
            continue;
        if (p->sq)
            tx(o, p, i);
        if (!p->dead && (p->rq || p->reading))
            rx(o, p, i);
    }
}

/* Receive R takes the first early message of its tag, if one came: copied, or (still arriving)
 * the rest read straight into R's buffer. Returns whether one did. */
static int match_early(net_tcp_t *o, peer_t *p, tcp_req_t *r)
{
    for (unexp_t *u = p->uq; u; u = u->next) {
        if (!tag_eq(u->tag, r->f.tag))
            continue;
        int arriving = u == p->cur_unexp;
        uint64_t have = arriving ? p->cur_got : u->len;
        unlink_unexp(p, u);
        if (arriving)
            p->cur_unexp = NULL;
        if (u->len > r->len) {
            r->trunc = u->len;
            p->cur_dst = arriving ? NULL : p->cur_dst; /* the rest is dropped */
            finish(o, r, -1);
        } else {
            memcpy(r->buf, u->buf, have);
            if (arriving) {
                p->cur_req = r;
                p->cur_dst = r->buf;
            } else {
                finish(o, r, 1);
            }
        }
        free(u);
        return 1;
    }
    return 0;
}

static int post(gcl_net_t *n, int send, int peer, void *buf, size_t len, const gcl_net_tag_t *t,
                void **out)
{
    net_tcp_t *o = (net_tcp_t *)n;
    if (peer < 0 || peer >= o->n || (o->peers[peer].fd < 0 && !o->peers[peer].dead)) {
        snprintf(n->error, sizeof n->error, "tcp: no connection to instance %d", peer);
        return -1;
    }
    tcp_req_t *r = gcl_calloc(1, sizeof *r);
    if (!r) {
        snprintf(n->error, sizeof n->error, "tcp: out of host memory");
        return -1;
    }
    if (gcl_fault_post(n->error, sizeof n->error, n->name, send, peer)) {
        free(r);
        return -1;
    }
    tag_fill(r->f.tag, t);
    r->f.len = len;
    r->buf = buf;
    r->len = len;
    r->peer = peer;
    r->send = send;
    r->large = len > SMALL_BYTES;
    atomic_init(&r->state, 0);
    pthread_mutex_lock(&o->lock);
    peer_t *p = &o->peers[peer];
    if (r->large)
        atomic_fetch_add(&o->large_pending, 1);
    if (p->dead) {
        finish(o, r, -1);
    } else if (send) {
        *(p->sq_tail ? &p->sq_tail->next : &p->sq) = r;
        p->sq_tail = r;
        if (p->sq == r)
            tx(o, p, peer); /* an idle stream takes it now: no wait for a progress pass */
    } else if (!match_early(o, p, r)) {
        *(p->rq_tail ? &p->rq_tail->next : &p->rq) = r;
        p->rq_tail = r;
    }
    pthread_mutex_unlock(&o->lock);
    *out = r;
    return 0;
}

static int tcp_isend(gcl_net_t *n, int peer, const void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 1, peer, (void *)buf, len, tag, req);
}

static int tcp_irecv(gcl_net_t *n, int peer, void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 0, peer, buf, len, tag, req);
}

static int tcp_test(gcl_net_t *n, void *req)
{
    net_tcp_t *o = (net_tcp_t *)n;
    tcp_req_t *r = req;
    /* At most once a pass of this thread, and at most every PROGRESS_*_S. */
    if (atomic_load(&r->state) == 0 && progressed_pass != gcl_progress_pass) {
        progressed_pass = gcl_progress_pass;
        double now = gcl_now();
        double every = atomic_load(&o->large_pending) > 0 ? PROGRESS_LARGE_S : PROGRESS_SMALL_S;
        if (now - progressed_at >= every) {
            pthread_mutex_lock(&o->lock);
            progress(o);
            pthread_mutex_unlock(&o->lock);
            progressed_at = now;
        }
    }
    int state = atomic_load(&r->state);
    if (state == 0)
        return 0;
    if (state < 0 && r->trunc) {
        snprintf(n->error, sizeof n->error,
                 "tcp: a message of %llu bytes came from instance %d for a receive of %zu",
                 (unsigned long long)r->trunc, r->peer, r->len);
    } else if (state < 0) {
        pthread_mutex_lock(&o->lock);
        snprintf(n->error, sizeof n->error, "tcp: %s", o->peers[r->peer].why);
        pthread_mutex_unlock(&o->lock);
    }
    free(r);
    return state;
}

/* Send R was cancelled with part of it written: the rest is copied and written anyway, so that
 * the stream stays whole. Returns 1 when R stays queued (an orphan), 0 when the connection had
 * to be closed instead. */
static int keep_sending(net_tcp_t *o, peer_t *p, tcp_req_t *r)
{
    size_t sent = r->done > FRAME ? r->done - FRAME : 0, rest = r->len - sent;
    char *own = gcl_malloc(rest ? rest : 1);
    if (!own) {
        peer_fail(o, p, "out of host memory to finish a cancelled send");
        return 0;
    }
    memcpy(own, r->buf + sent, rest);
    r->buf = own;
    r->len = rest;
    if (r->done > FRAME)
        r->done = FRAME;
    r->orphan = 1;
    return 1;
}

static void tcp_cancel(gcl_net_t *n, void *req)
{
    net_tcp_t *o = (net_tcp_t *)n;
    tcp_req_t *r = req;
    pthread_mutex_lock(&o->lock);
    if (atomic_load(&r->state) == 0) {
        peer_t *p = &o->peers[r->peer];
        if (r->send && r->done > 0 && keep_sending(o, p, r)) {
            r = NULL; /* the backend frees it once written */
        } else if (atomic_load(&r->state) == 0) {
            if (r->send) {
                unlink_req(&p->sq, &p->sq_tail, r);
            } else if (p->cur_req == r) {
                p->cur_req = NULL;
                p->cur_dst = NULL; /* the rest of its message is dropped */
            } else {
                unlink_req(&p->rq, &p->rq_tail, r);
                drop_t *d = gcl_malloc(sizeof *d);
                if (d) { /* without memory the message is kept instead, as an early one */
                    memcpy(d->tag, r->f.tag, sizeof d->tag);
                    d->next = p->drops;
                    p->drops = d;
                }
            }
            if (r->large)
                atomic_fetch_sub(&o->large_pending, 1);
        }
    }
    pthread_mutex_unlock(&o->lock);
    free(r);
}

static void tcp_destroy(gcl_net_t *n)
{
    net_tcp_t *o = (net_tcp_t *)n;
    for (int i = 0; o->peers && i < o->n; i++) {
        peer_t *p = &o->peers[i];
        if (p->fd >= 0)
            close(p->fd);
        for (tcp_req_t *r = p->sq, *next; r; r = next) {
            next = r->next;
            if (r->orphan) {
                free(r->buf);
                free(r);
            }
        }
        for (unexp_t *u = p->uq, *next; u; u = next) {
            next = u->next;
            free(u);
        }
        free_drops(p);
        free(p->stage);
    }
    free(o->peers);
    pthread_mutex_destroy(&o->lock);
    free(o);
}

gcl_status_t gcl_net_tcp_create(const gcl_params_t *prm, const gcl_job_t *j, gcl_boot_t *boot,
                                const uint8_t token[16], gcl_net_t **out, char *err, size_t len)
{
    static int fallback[256];
    int n = j->num_instances;
    net_tcp_t *o = gcl_calloc(1, sizeof *o);
    peer_t *peers = gcl_calloc((size_t)n, sizeof *peers);
    int *fds = gcl_calloc((size_t)n, sizeof *fds), *use = fds ? fds : fallback;
    gcl_status_t rc = GCL_ERR_NO_HOST_MEMORY;
    snprintf(err, len, "tcp: out of host memory");
    if (fds || n <= 256) /* so that every instance takes part in the exchange */
        rc = gcl_tcp_mesh(prm, j, boot, token, use, err, len);
    if (rc == GCL_OK && (!o || !peers)) {
        for (int i = 0; i < n; i++)
            if (use[i] >= 0)
                close(use[i]);
        snprintf(err, len, "tcp: out of host memory");
        rc = GCL_ERR_NO_HOST_MEMORY;
    }
    if (rc != GCL_OK) {
        free(o);
        free(peers);
        free(fds);
        return rc;
    }
    pthread_mutex_init(&o->lock, NULL);
    atomic_init(&o->large_pending, 0);
    o->base = (gcl_net_t){.name = "tcp",
                          .chunk_bytes = (size_t)prm->tcp_chunk_bytes,
                          .exact_tags = 1,
                          .isend = tcp_isend,
                          .irecv = tcp_irecv,
                          .test = tcp_test,
                          .cancel = tcp_cancel,
                          .destroy = tcp_destroy};
    o->n = n;
    o->peers = peers;
    for (int i = 0; i < n; i++)
        peers[i].fd = use[i];
    free(fds);
    GCL_INFO(GCL_SUB_TCP, "tcp: a stream to each of the %d other instances", n - 1);
    if (gcl_heap_keep(prm->heap_keep_bytes))
        GCL_INFO(GCL_SUB_TCP, "glibc keeps up to %ld bytes of freed memory (GCL_HEAP_KEEP_BYTES)",
                 prm->heap_keep_bytes);
    *out = &o->base;
    return GCL_OK;
}
