/* The control plane between the hosts of a job; see ctrl.h. */
#include "job/ctrl.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "job/diag.h"
#include "base/alloc.h"
#include "base/log.h"

#define CTRL_MAGIC 0x4c52544cu /* "LTRL" */
enum { BEAT = 1, BYE = 2, POISON = 3 };
enum { ALIVE = 0, FAILED = 1, LEFT = 2 };
enum { TEXT_MAX = 400, PAYLOAD_MAX = 60000, REPEAT = 3 };
/* Why a datagram was refused (decode), counted and reported at most every REFUSED_REPORT_S. */
enum { TAKEN = 0, NO_TOKEN, MALFORMED, WRONG_SOURCE, REPLAYED, NREASONS };
#define REFUSED_REPORT_S 10.0
/* Datagrams read per wake-up at most, so that a flood cannot hold back this instance's beats. */
#define READ_BATCH 256

typedef struct {
    uint32_t magic;
    uint16_t kind;
    uint16_t sender_state; /* BEAT, BYE: the sender's state */
    uint32_t sender;       /* its instance */
    int32_t failed_ipu;    /* BEAT of a FAILED instance: the IPU that failed */
    uint8_t token[16];
    uint64_t number;     /* the sender's count of datagrams: a receiver takes each number once */
    uint64_t call_key;   /* POISON: the key0 of the mismatched call */
    uint32_t items;      /* BEAT: ctrl_ipu_record_t records; POISON: int32_t IPUs to mark */
    uint32_t text_bytes; /* the text after the items: a FAILED sender's reason, a poison's */
} ctrl_head_t;

/* What a beat says of each IPU of its sender: what the host box says to the sender's host. */
typedef struct {
    int32_t ipu;
    uint32_t state, run_gen;
    uint32_t consistent; /* last_call and signature were read whole */
    uint64_t last_call;
    gcl_sig_t signature;
} ctrl_ipu_record_t;

typedef struct {
    ctrl_head_t head;
    char payload[PAYLOAD_MAX]; /* records or IPUs, then the text */
} ctrl_msg_t;

/* What this instance knows of one other. */
typedef struct {
    struct sockaddr_in addr;
    _Atomic uint64_t heard_ns; /* when it last said anything */
    _Atomic int state;         /* ALIVE, FAILED or LEFT; FAILED's reason is set before */
    int ipu;
    char reason[TEXT_MAX];
    uint64_t last_number; /* the newest datagram taken from it (the control thread's) */
} ctrl_peer_t;

/* What this instance knows of one IPU of another host, written by the control thread only and
 * read whole under a sequence lock (SEQ is odd while it is being written). */
typedef struct {
    _Atomic uint32_t seq;
    _Atomic uint32_t state, run_gen, valid;
    _Atomic uint64_t last_call;
    _Atomic uint64_t sig[4];
} ctrl_remote_t;

struct gcl_ctrl {
    const gcl_job_t *job;
    gcl_hostbox_t *hb;
    uint8_t token[16];
    int fd;
    double beat_s, timeout_s;
    ctrl_peer_t *peers;    /* [num_instances] */
    ctrl_remote_t *remote; /* [num_ipus]: other hosts' IPUs */
    pthread_t thread;
    atomic_int stop;
    pthread_mutex_t lock; /* my state and reason; sends (one datagram buffer) */
    int my_state, my_ipu;
    char my_reason[TEXT_MAX];
    uint64_t seq;   /* datagrams numbered so far, under the lock */
    ctrl_msg_t out; /* the datagram being sent, under the lock */
    /* Datagrams refused since the last report, by reason (the control thread's). */
    uint64_t refused[NREASONS], reported_ns;
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int remote(const gcl_ctrl_t *c, int instance)
{
    return c->job->peers[instance].host != c->job->host_index;
}

/* Sends M (head, then BYTES of payload) to instance I. */
static void send_to(gcl_ctrl_t *c, int i, const ctrl_msg_t *m, size_t bytes)
{
    sendto(c->fd, m, sizeof m->head + bytes, MSG_DONTWAIT,
           (const struct sockaddr *)&c->peers[i].addr, sizeof c->peers[i].addr);
}

/* A new datagram's header (the lock held): each gets the next number. */
static void head(gcl_ctrl_t *c, ctrl_msg_t *m, int kind)
{
    memset(&m->head, 0, sizeof m->head);
    m->head.magic = CTRL_MAGIC;
    m->head.kind = (uint16_t)kind;
    m->head.sender = (uint32_t)c->job->instance_index;
    m->head.number = ++c->seq;
    memcpy(m->head.token, c->token, 16);
}

/* IPU's record as the host box holds it; the latest call only when read consistently. */
static void read_ipu(const gcl_hostbox_ipu_t *p, int ipu, ctrl_ipu_record_t *r)
{
    memset(r, 0, sizeof *r);
    r->ipu = ipu;
    uint64_t life = gcl_hostbox_life(p);
    r->state = gcl_life_state(life);
    r->run_gen = gcl_life_gen(life);
    uint64_t key = atomic_load_explicit(&p->last_call, memory_order_acquire), w[4];
    for (int i = 0; i < 4; i++)
        w[i] = atomic_load_explicit(&p->last_sig[i], memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (key != 0 && atomic_load_explicit(&p->last_call, memory_order_relaxed) == key) {
        r->last_call = key;
        memcpy(&r->signature, w, sizeof w);
        r->consistent = 1;
    }
}

/* A beat (or a goodbye) to every instance on another host: this instance's state, and each of
 * its IPUs' life and latest call, as the host box shows them to the threads of this host. */
static void beat(gcl_ctrl_t *c, int kind)
{
    const gcl_job_t *j = c->job;
    pthread_mutex_lock(&c->lock);
    ctrl_msg_t *m = &c->out;
    head(c, m, kind);
    /* A failed instance's goodbye still says it failed, and why. */
    m->head.sender_state = (uint16_t)(kind == BYE && c->my_state == ALIVE ? LEFT : c->my_state);
    m->head.failed_ipu = c->my_ipu;
    ctrl_ipu_record_t *rec = (ctrl_ipu_record_t *)m->payload;
    size_t max = (PAYLOAD_MAX - TEXT_MAX) / sizeof *rec;
    for (int k = 0; k < j->num_local_ipus && (size_t)k < max; k++) {
        int ipu = j->first_ipu + k;
        read_ipu(&c->hb->ipus[j->ipu_hostlocal[ipu]], ipu, &rec[k]);
        m->head.items = (uint32_t)(k + 1);
    }
    size_t bytes = m->head.items * sizeof *rec;
    if (m->head.sender_state == FAILED) {
        m->head.text_bytes = (uint32_t)strnlen(c->my_reason, TEXT_MAX - 1);
        memcpy(m->payload + bytes, c->my_reason, m->head.text_bytes);
    }
    for (int i = 0; i < j->num_instances; i++)
        if (remote(c, i))
            send_to(c, i, m, bytes + m->head.text_bytes);
    pthread_mutex_unlock(&c->lock);
}

static void receive(gcl_ctrl_t *c, const ctrl_msg_t *m);

/* Whether the 16 bytes at A and B are equal, in a time that does not say where they differ. */
static int same_token(const uint8_t *a, const uint8_t *b)
{
    unsigned diff = 0;
    for (int i = 0; i < 16; i++)
        diff |= (unsigned)(a[i] ^ b[i]);
    return diff == 0;
}

/*
 * Checks a datagram of LEN bytes in M that came from address SRC: TAKEN, or why it is refused.
 * The job's token first (nothing else of a stranger's datagram is looked at); then the sender
 * must be an instance of another host, sending from the address it gave at start-up, in a
 * datagram whose parts add up; and its number must be newer than any taken from it, so that a
 * datagram recorded and sent again is refused even with the token.
 */
static int decode(gcl_ctrl_t *c, const ctrl_msg_t *m, size_t len, const struct sockaddr_in *src)
{
    const ctrl_head_t *h = &m->head;
    if (len < sizeof *h || h->magic != CTRL_MAGIC)
        return MALFORMED;
    if (!same_token(h->token, c->token))
        return NO_TOKEN;
    if (h->sender >= (uint32_t)c->job->num_instances || !remote(c, (int)h->sender))
        return MALFORMED;
    ctrl_peer_t *p = &c->peers[h->sender];
    if (src->sin_addr.s_addr != p->addr.sin_addr.s_addr || src->sin_port != p->addr.sin_port)
        return WRONG_SOURCE;
    size_t each = h->kind == POISON ? sizeof(int32_t) : sizeof(ctrl_ipu_record_t);
    if ((h->kind != BEAT && h->kind != BYE && h->kind != POISON) || h->text_bytes >= TEXT_MAX ||
        h->items > PAYLOAD_MAX / each || len != sizeof *h + h->items * each + h->text_bytes)
        return MALFORMED;
    for (uint32_t k = 0; k < h->items; k++) {
        int32_t ipu = h->kind == POISON ? ((const int32_t *)m->payload)[k]
                                        : ((const ctrl_ipu_record_t *)m->payload)[k].ipu;
        if (ipu < 0 || ipu >= c->job->num_ipus ||
            (h->kind != POISON && c->job->ipu_instance[ipu] != (int)h->sender))
            return MALFORMED;
    }
    if (h->number <= p->last_number)
        return REPLAYED;
    p->last_number = h->number;
    return TAKEN;
}

/* Says at warn level, at most every REFUSED_REPORT_S (and, FORCE, at the end), how many
 * datagrams were refused and why: another job's or an attacker's traffic at this instance's
 * control port. */
static void report_refused(gcl_ctrl_t *c, uint64_t now, int force)
{
    uint64_t *r = c->refused, total = 0;
    for (int k = 1; k < NREASONS; k++)
        total += r[k];
    if (total == 0 || (!force && (double)(now - c->reported_ns) < REFUSED_REPORT_S * 1e9))
        return;
    GCL_WARN(GCL_SUB_INIT,
             "control plane: refused %llu datagram(s) that were not this job's: %llu without its "
             "token, %llu malformed or truncated, %llu from an address other than the instance "
             "they name, %llu replayed",
             (unsigned long long)total, (unsigned long long)r[NO_TOKEN],
             (unsigned long long)r[MALFORMED], (unsigned long long)r[WRONG_SOURCE],
             (unsigned long long)r[REPLAYED]);
    memset(r, 0, sizeof c->refused);
    c->reported_ns = now;
}

/* Reads what has come, READ_BATCH datagrams at most: takes the job's, counts the others. */
static void read_datagrams(gcl_ctrl_t *c, ctrl_msg_t *m)
{
    for (int k = 0; k < READ_BATCH; k++) {
        struct sockaddr_in src;
        socklen_t slen = sizeof src;
        memset(&src, 0, sizeof src);
        ssize_t n = recvfrom(c->fd, m, sizeof *m, MSG_DONTWAIT, (struct sockaddr *)&src, &slen);
        if (n < 0)
            return;
        int why = decode(c, m, (size_t)n, &src);
        if (why == TAKEN)
            receive(c, m);
        else
            c->refused[why]++;
    }
}

/* The sender's IPUs, recorded; 1 when one of them changed its life. */
static int record(gcl_ctrl_t *c, const ctrl_msg_t *m)
{
    const ctrl_ipu_record_t *rec = (const ctrl_ipu_record_t *)m->payload;
    int changed = 0;
    for (uint32_t k = 0; k < m->head.items; k++) {
        ctrl_remote_t *r = &c->remote[rec[k].ipu];
        uint64_t w[4];
        memcpy(w, &rec[k].signature, sizeof w);
        changed |= atomic_load(&r->state) != rec[k].state;
        atomic_fetch_add(&r->seq, 1); /* odd: being written */
        atomic_store_explicit(&r->state, rec[k].state, memory_order_relaxed);
        atomic_store_explicit(&r->run_gen, rec[k].run_gen, memory_order_relaxed);
        if (rec[k].consistent) {
            atomic_store_explicit(&r->valid, 1, memory_order_relaxed);
            atomic_store_explicit(&r->last_call, rec[k].last_call, memory_order_relaxed);
            for (int i = 0; i < 4; i++)
                atomic_store_explicit(&r->sig[i], w[i], memory_order_relaxed);
        }
        atomic_fetch_add(&r->seq, 1);
    }
    return changed;
}

static void ring_all(gcl_ctrl_t *c)
{
    for (int i = 0; i < c->hb->num_ipus; i++) /* waiting threads look again */
        gcl_hostbox_alarm(c->hb, i);
}

static void receive(gcl_ctrl_t *c, const ctrl_msg_t *m)
{
    ctrl_peer_t *p = &c->peers[m->head.sender];
    const char *text =
        m->payload + m->head.items * (m->head.kind == POISON ? 4 : sizeof(ctrl_ipu_record_t));
    char reason[TEXT_MAX];
    memcpy(reason, text, m->head.text_bytes);
    reason[m->head.text_bytes] = '\0';
    atomic_store(&p->heard_ns, now_ns());
    if (m->head.kind == POISON) {
        for (uint32_t k = 0; k < m->head.items; k++) {
            int hl = c->job->ipu_hostlocal[((const int32_t *)m->payload)[k]];
            if (hl >= 0)
                gcl_diag_poison_ipu(c->hb, hl, m->head.call_key, reason);
        }
        return;
    }
    int changed = record(c, m);
    if (atomic_load(&p->state) == ALIVE &&
        (m->head.sender_state == FAILED || m->head.sender_state == LEFT)) {
        if (m->head.sender_state == FAILED) { /* the first news of a failure or a goodbye stays */
            p->ipu = m->head.failed_ipu;
            snprintf(p->reason, sizeof p->reason, "%s", reason);
        }
        atomic_store(&p->state, m->head.sender_state);
        changed = 1;
    }
    if (changed)
        ring_all(c);
}

static void *run(void *arg)
{
    gcl_ctrl_t *c = arg;
    uint64_t next = 0, period = (uint64_t)(c->beat_s * 1e9);
    ctrl_msg_t *m = gcl_malloc(sizeof *m);
    if (!m)
        return NULL;
    while (!atomic_load(&c->stop)) {
        uint64_t t = now_ns();
        if (t >= next) {
            beat(c, BEAT);
            next = t + period;
        }
        report_refused(c, t, 0);
        struct pollfd pfd = {c->fd, POLLIN, 0};
        int wait_ms = (int)((next - t) / 1000000u) + 1;
        if (poll(&pfd, 1, wait_ms > 100 ? 100 : wait_ms) > 0)
            read_datagrams(c, m);
    }
    free(m);
    return NULL;
}

/* This host's address, as the others reach it: GCL_OFI_IFACE's, else the first interface that
 * is up and not the loopback. */
static int my_address(const gcl_params_t *p, struct in_addr *out)
{
    struct ifaddrs *all, *a;
    int found = 0;
    if (getifaddrs(&all) != 0)
        return 0;
    for (a = all; a && !found; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP))
            continue;
        if (p->ofi_iface[0] ? strcmp(a->ifa_name, p->ofi_iface) != 0
                            : (a->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        *out = ((struct sockaddr_in *)a->ifa_addr)->sin_addr;
        found = 1;
    }
    freeifaddrs(all);
    return found;
}

static gcl_status_t open_socket(gcl_ctrl_t *c, const gcl_params_t *p, struct sockaddr_in *me,
                                gcl_err_t *err)
{
    socklen_t len = sizeof *me;
    memset(me, 0, sizeof *me);
    me->sin_family = AF_INET;
    int ok = my_address(p, &me->sin_addr);
    c->fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    if (!ok || c->fd < 0 || bind(c->fd, (struct sockaddr *)me, sizeof *me) != 0 ||
        getsockname(c->fd, (struct sockaddr *)me, &len) != 0)
        return gcl_err_set(err, GCL_ERR_SYSTEM, "the control plane between hosts: %s",
                           ok ? strerror(errno) : "no network interface (GCL_OFI_IFACE)");
    return GCL_OK;
}

static void ctrl_free(gcl_ctrl_t *c)
{
    if (c->fd >= 0)
        close(c->fd);
    free(c->peers);
    free(c->remote);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

gcl_status_t gcl_ctrl_start(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                            gcl_hostbox_t *hb, const uint8_t token[16], gcl_ctrl_t **out,
                            gcl_err_t *err)
{
    *out = NULL;
    if (j->num_hosts < 2)
        return GCL_OK;
    gcl_ctrl_t *c = gcl_calloc(1, sizeof *c);
    if (!c)
        return gcl_err_set(err, GCL_ERR_NO_HOST_MEMORY, "out of host memory");
    *c = (gcl_ctrl_t){.job = j,
                      .hb = hb,
                      .fd = -1,
                      .beat_s = p->heartbeat_s,
                      .timeout_s = p->peer_timeout_s,
                      .my_ipu = -1};
    memcpy(c->token, token, 16);
    pthread_mutex_init(&c->lock, NULL);
    struct sockaddr_in me, *all = gcl_calloc((size_t)j->num_instances, sizeof *all);
    c->peers = gcl_calloc((size_t)j->num_instances, sizeof *c->peers);
    c->remote = gcl_calloc((size_t)j->num_ipus, sizeof *c->remote);
    /* Every instance takes part in the exchange, even one whose socket failed. */
    gcl_status_t rc = all && c->peers && c->remote
                          ? open_socket(c, p, &me, err)
                          : gcl_err_set(err, GCL_ERR_NO_HOST_MEMORY, "out of memory");
    if (rc != GCL_OK)
        memset(&me, 0, sizeof me);
    if (boot->allgather(boot, &me, all ? all : &me, sizeof me) != GCL_OK && rc == GCL_OK)
        rc = gcl_err_set(err, GCL_ERR_MPI, "exchanging control-plane addresses failed");
    uint64_t t = now_ns();
    for (int i = 0; rc == GCL_OK && i < j->num_instances; i++) {
        c->peers[i].addr = all[i];
        atomic_store(&c->peers[i].heard_ns, t);
    }
    free(all);
    if (rc == GCL_OK && pthread_create(&c->thread, NULL, run, c) != 0)
        rc = gcl_err_set(err, GCL_ERR_SYSTEM, "cannot start the control-plane thread");
    if (rc != GCL_OK) {
        ctrl_free(c);
        return rc;
    }
    GCL_INFO(GCL_SUB_INIT,
             "control plane on %s:%d: heartbeats every %.2f s, peers gone after %.1f s",
             inet_ntoa(me.sin_addr), ntohs(me.sin_port), c->beat_s, c->timeout_s);
    *out = c;
    return GCL_OK;
}

void gcl_ctrl_stop(gcl_ctrl_t *c)
{
    if (!c)
        return;
    atomic_store(&c->stop, 1);
    pthread_join(c->thread, NULL);
    report_refused(c, now_ns(), 1); /* what the last period refused */
    for (int k = 0; k < REPEAT; k++)
        beat(c, BYE);
    ctrl_free(c);
}

int gcl_ctrl_life(gcl_ctrl_t *c, int ipu, gcl_peer_life_t *out)
{
    if (!c || !remote(c, c->job->ipu_instance[ipu]))
        return 0;
    ctrl_remote_t *r = &c->remote[ipu];
    for (int tries = 0; tries < 1000; tries++) { /* the writer holds it for a few stores */
        uint32_t s1 = atomic_load_explicit(&r->seq, memory_order_acquire);
        if (s1 & 1)
            continue;
        uint64_t w[4];
        out->state = atomic_load_explicit(&r->state, memory_order_relaxed);
        out->run_gen = atomic_load_explicit(&r->run_gen, memory_order_relaxed);
        out->valid = (int)atomic_load_explicit(&r->valid, memory_order_relaxed);
        out->last_call = atomic_load_explicit(&r->last_call, memory_order_relaxed);
        for (int i = 0; i < 4; i++)
            w[i] = atomic_load_explicit(&r->sig[i], memory_order_relaxed);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&r->seq, memory_order_relaxed) == s1) {
            memcpy(&out->sig, w, sizeof w);
            return 1;
        }
    }
    return 0;
}

int gcl_ctrl_peer_gone(gcl_ctrl_t *c, uint32_t run_gen, int ipu, char *why, size_t len)
{
    gcl_peer_life_t l;
    if (!c || !gcl_ctrl_life(c, ipu, &l))
        return 0;
    ctrl_peer_t *p = &c->peers[c->job->ipu_instance[ipu]];
    char who[160];
    gcl_job_describe_ipu(c->job, ipu, who, sizeof who);
    int state = atomic_load(&p->state);
    double silent = (double)(now_ns() - atomic_load(&p->heard_ns)) * 1e-9;
    if (state == FAILED)
        snprintf(why, len, "%s: its instance failed: %.300s", who, p->reason);
    else if ((state == LEFT || l.state == GCL_IPU_EXITED) && l.run_gen >= run_gen)
        snprintf(why, len,
                 "%s returned from its program without making this call (its instance has "
                 "since left the job)",
                 who);
    else if (state == LEFT || l.state == GCL_IPU_EXITED)
        snprintf(why, len, "%s has left the job (its instance called gcl_finalize)", who);
    else if ((l.state == GCL_IPU_FINISHED || l.state == GCL_IPU_CLOSING) && l.run_gen >= run_gen)
        snprintf(why, len, "%s returned from its program without making this call", who);
    else if (l.state == GCL_IPU_CLOSING) /* this run is one it will never make */
        snprintf(why, len, "%s has left the job (its instance called gcl_finalize)", who);
    else if (silent > c->timeout_s)
        snprintf(why, len,
                 "%s is gone: its instance has not been heard from for %.1f s (GCL_PEER_TIMEOUT_S"
                 "): its process or its host stopped",
                 who, silent);
    else
        return 0;
    return 1;
}

int gcl_ctrl_member_failed(gcl_ctrl_t *c, const int *ipus, int n, char *why, size_t len)
{
    for (int r = 0; c && r < n; r++) {
        int inst = c->job->ipu_instance[ipus[r]];
        if (!remote(c, inst) || atomic_load(&c->peers[inst].state) != FAILED)
            continue;
        char who[160];
        gcl_job_describe_ipu(c->job, ipus[r], who, sizeof who);
        snprintf(why, len, "%s: its instance failed: %.300s", who, c->peers[inst].reason);
        return 1;
    }
    return 0;
}

void gcl_ctrl_ipu_changed(gcl_ctrl_t *c)
{
    if (c)
        beat(c, BEAT);
}

void gcl_ctrl_ipu_failed(gcl_ctrl_t *c, int ipu, const char *reason)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    if (c->my_state == ALIVE) {
        c->my_state = FAILED;
        c->my_ipu = ipu;
        snprintf(c->my_reason, sizeof c->my_reason, "%s", reason);
    }
    pthread_mutex_unlock(&c->lock);
    beat(c, BEAT); /* at once; the thread repeats it with every beat */
}

void gcl_ctrl_poison(gcl_ctrl_t *c, const int *ipus, int n, uint64_t key0, const char *reason)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    ctrl_msg_t *m = &c->out;
    int32_t *list = (int32_t *)m->payload;
    size_t max = (PAYLOAD_MAX - TEXT_MAX) / sizeof *list;
    for (int i = 0; i < c->job->num_instances; i++) {
        if (!remote(c, i))
            continue;
        head(c, m, POISON);
        m->head.call_key = key0;
        for (int q = 0; q < n && m->head.items < max; q++)
            if (c->job->ipu_instance[ipus[q]] == i)
                list[m->head.items++] = ipus[q];
        size_t bytes = m->head.items * sizeof *list;
        m->head.text_bytes = (uint32_t)strnlen(reason, TEXT_MAX - 1);
        memcpy(m->payload + bytes, reason, m->head.text_bytes);
        for (int k = 0; m->head.items && k < REPEAT; k++) /* datagrams may be lost: say it thrice */
            send_to(c, i, m, bytes + m->head.text_bytes);
    }
    pthread_mutex_unlock(&c->lock);
}
