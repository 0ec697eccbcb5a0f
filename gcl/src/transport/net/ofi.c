/*
 * The libfabric network backend: an RDM endpoint with tagged messages (tcp;ofi_rxm unless
 * GCL_OFI_PROVIDER says otherwise), one per instance, shared by its IPU threads under a lock.
 * Addresses are exchanged through the bootstrap at start-up. Tags are exact 64-bit names:
 * 10 bits of communicator key, 14 of sequence, 12 of message, 12 of piece and 8 each of the
 * source's and destination's local IPU, so no two messages in flight share one. Progress is
 * manual: whoever tests reads the completion queue and marks the finished requests.
 * Declared in transport/net/backends.h.
 */
#include <pthread.h>
#include <sched.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdatomic.h>
#include <string.h>

#include "base/alloc.h"
#include "base/fault.h"
#include "base/log.h"
#include "transport/net/backends.h"
#include "transport/net/heap.h"
#include "base/wait.h"

/* How long a cancelled request may take to complete before it is left to libfabric. */
#define CANCEL_WAIT_S 0.02
/* Tests read completions at most once per progress pass of their thread (gcl_progress_pass)
 * and at most every DRAIN_INTERVAL_S while a large transfer is in flight: each read runs the
 * provider's progress, a poll() over its sockets, and an IPU thread testing a dozen requests
 * each pass spent a third of its time there (perf, 2 hosts x 2 instances, 64 MiB all_reduce:
 * 245 ms a call before, 145 ms after). 10 us is 10 KB at 1 GB/s: no large transfer waits on
 * it. With only small ones in flight (at most SMALL_BYTES: headers, inline messages), whose
 * time is the network's latency, every DRAIN_SMALL_S: an 8 B all_reduce across two namespace
 * hosts took 21-24 us at 10 us, 18.4 at 2 us, 16.7 reading on every pass; but every pass made
 * a waiting thread's 2000 spinning passes a poll() each, and 4 instances on 2 cores took
 * 1.8-2.1 ms for a 4 KiB all_reduce across 2 hosts, 0.29-0.50 ms at 10 us, 0.36 at 2 us. */
#define DRAIN_INTERVAL_S 10e-6
#define DRAIN_SMALL_S    2e-6
#define SMALL_BYTES      16384

enum { ADDR_MAX = 128, MAX_LOCAL_IPUS = 256 };

typedef struct {
    struct fi_context ctx; /* first: libfabric hands it back in the completion */
    volatile int state;    /* 0 pending, 1 done, -1 failed */
    int err;               /* the failure's libfabric error (positive) */
    int large;             /* more than SMALL_BYTES: counted in large_pending */
} ofi_req_t;

typedef struct {
    gcl_net_t base;
    struct fi_info *info;
    struct fid_fabric *fabric;
    struct fid_domain *domain;
    struct fid_av *av;
    struct fid_cq *cq;
    struct fid_ep *ep;
    fi_addr_t *addrs;         /* [num_instances] */
    atomic_int large_pending; /* posted requests of more than SMALL_BYTES not yet completed */
    pthread_mutex_t lock;
} net_ofi_t;

static _Thread_local unsigned long drained_pass; /* the pass this thread last read them in */
static _Thread_local double drained_at;

static uint64_t tag_of(const gcl_net_tag_t *t)
{
    return ((uint64_t)(t->comm & 0x3ffu) << 54) | ((uint64_t)(t->seq & 0x3fffu) << 40) |
           ((uint64_t)(t->msg & 0xfffu) << 28) | ((uint64_t)(t->piece & 0xfffu) << 16) |
           ((uint64_t)((unsigned)t->src_local & 0xffu) << 8) |
           (uint64_t)((unsigned)t->dst_local & 0xffu);
}

/* Marks request R finished with STATE (1 done, -1 failed). */
static void finish(net_ofi_t *o, ofi_req_t *r, int state)
{
    if (r->large)
        atomic_fetch_sub(&o->large_pending, 1);
    r->state = state;
}

/* Reads completions (the lock held): marks each finished request. With only small transfers
 * in flight it stops at a read that found fewer than it had room for, instead of reading
 * again until the queue is empty: each read runs the provider's progress, a poll() and a
 * read() of the signal libfabric 1.17's tcp provider writes after every send and receive,
 * about 1 us each on a VM like this one, between the message's arrival and the call's end
 * (2 namespace hosts x 1, 10 alternating pairs: 8 B all_reduce 0.88-0.93x the time). What is
 * left is found by the next read. */
static void drain(net_ofi_t *o)
{
    struct fi_cq_tagged_entry e[16];
    for (;;) {
        ssize_t n = fi_cq_read(o->cq, e, 16);
        if (n > 0) {
            for (ssize_t i = 0; i < n; i++)
                finish(o, e[i].op_context, 1);
            if (n < 16 && atomic_load(&o->large_pending) == 0)
                return;
            continue;
        }
        if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(o->cq, &err, 0) > 0 && err.op_context) {
                ((ofi_req_t *)err.op_context)->err = err.err;
                finish(o, err.op_context, -1);
            }
            continue;
        }
        return; /* -FI_EAGAIN: nothing more now */
    }
}

static int post(gcl_net_t *n, int send, int peer, void *buf, size_t len, const gcl_net_tag_t *t,
                void **out)
{
    net_ofi_t *o = (net_ofi_t *)n;
    ofi_req_t *r = gcl_calloc(1, sizeof *r);
    if (!r) {
        snprintf(n->error, sizeof n->error, "ofi: out of host memory");
        return -1;
    }
    if (gcl_fault_post(n->error, sizeof n->error, n->name, send, peer)) {
        free(r);
        return -1;
    }
    ssize_t rc = -FI_EAGAIN;
    r->large = len > SMALL_BYTES;
    pthread_mutex_lock(&o->lock);
    /* A full queue empties as completions are read: read them once and try again; still full,
     * the caller comes back later (a peer that stopped progressing must not hold us here). */
    for (int tries = 0; rc == -FI_EAGAIN && tries < 2; tries++) {
        rc = send ? fi_tsend(o->ep, buf, len, NULL, o->addrs[peer], tag_of(t), &r->ctx)
                  : fi_trecv(o->ep, buf, len, NULL, o->addrs[peer], tag_of(t), 0, &r->ctx);
        if (rc == -FI_EAGAIN)
            drain(o);
    }
    if (rc == 0 && r->large)
        atomic_fetch_add(&o->large_pending, 1);
    pthread_mutex_unlock(&o->lock);
    if (rc == -FI_EAGAIN) {
        free(r);
        return 1;
    }
    if (rc != 0) {
        snprintf(n->error, sizeof n->error, "ofi: posting a %s with instance %d failed: %s",
                 send ? "send" : "receive", peer, fi_strerror((int)-rc));
        free(r);
        return -1;
    }
    *out = r;
    return 0;
}

static int ofi_isend(gcl_net_t *n, int peer, const void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 1, peer, (void *)buf, len, tag, req);
}

static int ofi_irecv(gcl_net_t *n, int peer, void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    return post(n, 0, peer, buf, len, tag, req);
}

static int ofi_test(gcl_net_t *n, void *req)
{
    net_ofi_t *o = (net_ofi_t *)n;
    ofi_req_t *r = req;
    if (r->state == 0) {
        /* At most once a pass, and at most every DRAIN_INTERVAL_S: the clock is read once a
         * pass, when the first test of the pass finds its request still pending. */
        if (drained_pass == gcl_progress_pass)
            return 0;
        drained_pass = gcl_progress_pass;
        double now = gcl_now();
        double every = atomic_load(&o->large_pending) > 0 ? DRAIN_INTERVAL_S : DRAIN_SMALL_S;
        if (now - drained_at < every)
            return 0;
        pthread_mutex_lock(&o->lock);
        drain(o);
        pthread_mutex_unlock(&o->lock);
        drained_at = now;
    }
    int state = r->state;
    if (state == 0)
        return 0;
    if (state < 0)
        snprintf(n->error, sizeof n->error, "ofi: a transfer failed: %s",
                 r->err ? fi_strerror(r->err) : "no reason given");
    free(r);
    return state;
}

static void ofi_cancel(gcl_net_t *n, void *req)
{
    net_ofi_t *o = (net_ofi_t *)n;
    ofi_req_t *r = req;
    pthread_mutex_lock(&o->lock);
    if (r->state == 0)
        fi_cancel(&o->ep->fid, &r->ctx);
    /* A cancelled request completes with an error at once; one already moving completes
     * normally. A send to a peer that is gone never completes: give up after CANCEL_WAIT_S
     * (a request is cancelled when its call failed, and every request of the call is waited
     * for in turn, so the wait must stay short), yielding the core between looks. */
    double until = gcl_now() + CANCEL_WAIT_S;
    while (r->state == 0 && gcl_now() < until) {
        drain(o);
        if (r->state == 0)
            sched_yield();
    }
    pthread_mutex_unlock(&o->lock);
    if (r->state != 0)
        free(r); /* else leaked on purpose: libfabric may still write its context */
}

static void ofi_destroy(gcl_net_t *n)
{
    net_ofi_t *o = (net_ofi_t *)n;
    if (o->ep)
        fi_close(&o->ep->fid);
    if (o->av)
        fi_close(&o->av->fid);
    if (o->cq)
        fi_close(&o->cq->fid);
    if (o->domain)
        fi_close(&o->domain->fid);
    if (o->fabric)
        fi_close(&o->fabric->fid);
    if (o->info)
        fi_freeinfo(o->info);
    pthread_mutex_destroy(&o->lock);
    free(o->addrs);
    free(o);
}

/* The provider entry to use: GCL_OFI_IFACE's, else one not on the loopback interface when the
 * job spans hosts (a loopback address is unreachable from the others). */
static struct fi_info *pick_info(struct fi_info *all, const gcl_params_t *prm, const gcl_job_t *j)
{
    const char *iface = prm->ofi_iface;
    for (struct fi_info *p = all; p; p = p->next) {
        const char *dom = p->domain_attr->name ? p->domain_attr->name : "";
        if (iface[0] ? !strcmp(dom, iface) : (j->num_hosts == 1 || strcmp(dom, "lo") != 0))
            return p;
    }
    return NULL;
}

static int open_endpoint(net_ofi_t *o, struct fi_info *info, char *err, size_t len)
{
    struct fi_av_attr av = {.type = FI_AV_TABLE};
    struct fi_cq_attr cq = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    int rc;
    const char *what = "fi_fabric";
    if ((rc = fi_fabric(info->fabric_attr, &o->fabric, NULL)) == 0 && (what = "fi_domain") &&
        (rc = fi_domain(o->fabric, info, &o->domain, NULL)) == 0 && (what = "fi_av_open") &&
        (rc = fi_av_open(o->domain, &av, &o->av, NULL)) == 0 && (what = "fi_cq_open") &&
        (rc = fi_cq_open(o->domain, &cq, &o->cq, NULL)) == 0 && (what = "fi_endpoint") &&
        (rc = fi_endpoint(o->domain, info, &o->ep, NULL)) == 0 && (what = "fi_ep_bind") &&
        (rc = fi_ep_bind(o->ep, &o->cq->fid, FI_TRANSMIT | FI_RECV)) == 0 &&
        (rc = fi_ep_bind(o->ep, &o->av->fid, 0)) == 0 && (what = "fi_enable"))
        rc = fi_enable(o->ep);
    if (rc != 0)
        snprintf(err, len, "libfabric: %s failed: %s", what, fi_strerror(-rc));
    return rc;
}

/* Every instance takes part in the address exchange, even one whose endpoint failed, so that
 * none is left waiting; then they agree (the caller's job). Out of host memory, a job of up to
 * JOIN_STATIC instances still joins, with a static buffer (one instance per process). */
enum { JOIN_STATIC = 256 };
static void join_exchange(const gcl_job_t *j, gcl_boot_t *boot)
{
    static char fallback[JOIN_STATIC * ADDR_MAX];
    char blank[ADDR_MAX] = {0}, *scratch = gcl_calloc((size_t)j->num_instances, ADDR_MAX);
    if (scratch || j->num_instances <= JOIN_STATIC)
        boot->allgather(boot, blank, scratch ? scratch : fallback, ADDR_MAX);
    free(scratch);
}

/* Every instance learns every other's endpoint address. */
static gcl_status_t exchange(net_ofi_t *o, const gcl_job_t *j, gcl_boot_t *boot, char *err,
                             size_t len)
{
    char mine[ADDR_MAX] = {0};
    size_t alen = sizeof mine;
    if (fi_getname(&o->ep->fid, mine, &alen) != 0 || alen > ADDR_MAX) {
        snprintf(err, len, "libfabric: cannot read this endpoint's address");
        join_exchange(j, boot);
        return GCL_ERR_TRANSPORT;
    }
    size_t n = (size_t)j->num_instances;
    char *all = gcl_calloc(n, ADDR_MAX);
    o->addrs = gcl_calloc(n, sizeof *o->addrs);
    if (!all || !o->addrs) {
        free(all);
        snprintf(err, len, "libfabric: out of host memory");
        join_exchange(j, boot);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    gcl_status_t rc = boot->allgather(boot, mine, all, ADDR_MAX);
    for (size_t i = 0; rc == GCL_OK && i < n; i++)
        if (fi_av_insert(o->av, all + i * ADDR_MAX, 1, &o->addrs[i], 0, NULL) != 1)
            rc = GCL_ERR_TRANSPORT;
    if (rc != GCL_OK)
        snprintf(err, len, "libfabric: exchanging endpoint addresses failed");
    free(all);
    return rc;
}

/* A user's FI_OFI_RXM_EAGER_LIMIT below the piece size brings ofi_rxm's rendezvous back, and
 * with it the crash of a survivor whose peer died (bootstrap_mpi.c): said once, not refused. */
static void warn_rendezvous(size_t chunk)
{
    const char *v = getenv("FI_OFI_RXM_EAGER_LIMIT");
    char *end = NULL;
    unsigned long long limit = v ? strtoull(v, &end, 10) : 0;
    if (v && end != v && limit < chunk)
        GCL_WARN(GCL_SUB_OFI,
                 "FI_OFI_RXM_EAGER_LIMIT=%s is below GCL_OFI_CHUNK_BYTES (%zu): ofi_rxm sends "
                 "larger pieces by rendezvous, whose receive libfabric 1.17 crashes in when the "
                 "sending peer died (leave it unset, or raise it on every host)",
                 v, chunk);
}

gcl_status_t gcl_net_ofi_create(const gcl_params_t *prm, const gcl_job_t *j, gcl_boot_t *boot,
                                gcl_net_t **out, char *err, size_t len)
{
    struct fi_info *hints = fi_allocinfo(), *all = NULL;
    net_ofi_t *o = gcl_calloc(1, sizeof *o);
    gcl_status_t rc = GCL_ERR_TRANSPORT;
    if (!hints || !o) {
        fi_freeinfo(hints);
        free(o);
        snprintf(err, len, "libfabric: out of host memory");
        join_exchange(j, boot);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    pthread_mutex_init(&o->lock, NULL);
    atomic_init(&o->large_pending, 0);
    o->base = (gcl_net_t){.name = "ofi",
                          .chunk_bytes = (size_t)prm->ofi_chunk_bytes,
                          .exact_tags = 1,
                          .isend = ofi_isend,
                          .irecv = ofi_irecv,
                          .test = ofi_test,
                          .cancel = ofi_cancel,
                          .destroy = ofi_destroy};
    hints->ep_attr->type = FI_EP_RDM;
    /* Directed receives: a receive matches its tag from its source only (tags name the IPUs
     * within their instances, not the instances). */
    hints->caps = FI_TAGGED | FI_DIRECTED_RECV;
    hints->mode = FI_CONTEXT;
    hints->fabric_attr->prov_name = gcl_strdup(prm->ofi_provider);
    int frc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &all);
    struct fi_info *info = frc == 0 ? pick_info(all, prm, j) : NULL;
    if (!info)
        snprintf(err, len, "libfabric: no %s endpoint%s%s (%s)", prm->ofi_provider,
                 prm->ofi_iface[0] ? " on " : "", prm->ofi_iface,
                 frc ? fi_strerror(-frc) : "no matching interface");
    else if (info->domain_attr->mr_mode & FI_MR_LOCAL)
        snprintf(err, len,
                 "libfabric: provider %s needs registered buffers, which gcl does not "
                 "do",
                 info->fabric_attr->prov_name);
    else if (!(o->info = fi_dupinfo(info))) {
        snprintf(err, len, "libfabric: out of host memory");
        rc = GCL_ERR_NO_HOST_MEMORY;
    } else if (open_endpoint(o, o->info, err, len) == 0)
        rc = GCL_OK;
    fi_freeinfo(hints);
    fi_freeinfo(all);
    if (rc == GCL_OK) {
        GCL_INFO(GCL_SUB_OFI, "libfabric %s on %s", o->info->fabric_attr->prov_name,
                 o->info->domain_attr->name);
        warn_rendezvous(o->base.chunk_bytes);
        if (gcl_heap_keep(prm->heap_keep_bytes))
            GCL_INFO(GCL_SUB_OFI,
                     "glibc keeps up to %ld bytes of freed memory (GCL_HEAP_KEEP_BYTES)",
                     prm->heap_keep_bytes);
    }
    if (rc != GCL_OK) {
        join_exchange(j, boot);
        ofi_destroy(&o->base);
        return rc;
    }
    rc = exchange(o, j, boot, err, len);
    if (rc != GCL_OK) {
        ofi_destroy(&o->base);
        return rc;
    }
    *out = &o->base;
    return GCL_OK;
}
