/*
 * chaos-forge-fabric HOST PORT SEQ_FIRST SEQ_COUNT: from another host, a process of no job that
 * speaks libfabric (tcp;ofi_rxm, as libgcl's ofi transport) to an instance's endpoint and sends
 * it forged headers: 88 bytes shaped like gcl_wire_header_t with a token of its own, under the
 * exact tags of calls SEQ_FIRST .. SEQ_FIRST+SEQ_COUNT-1 of the job's first communicator, from
 * local IPUs 0..3 to 0..3 (tests/faults' faults-forge-ofi does the same on one host's
 * loopback; this one binds to no address, so its connection leaves by the host's network).
 * Prints how many sends libfabric completed; exit 0 when some did, 1 when none, 2 for usage.
 */
#include <arpa/inet.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "base/vocab/signature.h" /* gcl_hash_ints: the communicator key, as comm.c derives it */
#include "transport/wire.h"

enum { MAX_INFLIGHT = 64 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* gcl/src/transport/net/ofi.c's tag_of, message 0, piece 0. */
static uint64_t tag_of(uint32_t comm, uint32_t seq, int src, int dst)
{
    return ((uint64_t)(comm & 0x3ffu) << 54) | ((uint64_t)(seq & 0x3fffu) << 40) |
           ((uint64_t)((unsigned)src & 0xffu) << 8) | (uint64_t)((unsigned)dst & 0xffu);
}

static struct fid_ep *open_ep(struct fid_av **av, struct fid_cq **cq)
{
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | FI_DIRECTED_RECV;
    hints->mode = FI_CONTEXT;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    hints->addr_format = FI_SOCKADDR_IN;
    struct fid_fabric *fabric = NULL;
    struct fid_domain *domain = NULL;
    struct fid_ep *ep = NULL;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    int rc = fi_getinfo(FI_VERSION(1, 9), NULL, NULL, 0, hints, &info);
    const char *what = "fi_getinfo";
    /* The first interface that is not the loopback: the one the other hosts are reached by. */
    while (rc == 0 && info && info->domain_attr->name && !strcmp(info->domain_attr->name, "lo"))
        info = info->next;
    if (rc == 0 && !info)
        rc = -FI_ENODATA;
    if (rc == 0 && (what = "fi_fabric") &&
        (rc = fi_fabric(info->fabric_attr, &fabric, NULL)) == 0 && (what = "fi_domain") &&
        (rc = fi_domain(fabric, info, &domain, NULL)) == 0 && (what = "fi_av_open") &&
        (rc = fi_av_open(domain, &av_attr, av, NULL)) == 0 && (what = "fi_cq_open") &&
        (rc = fi_cq_open(domain, &cq_attr, cq, NULL)) == 0 && (what = "fi_endpoint") &&
        (rc = fi_endpoint(domain, info, &ep, NULL)) == 0 && (what = "fi_ep_bind") &&
        (rc = fi_ep_bind(ep, &(*cq)->fid, FI_TRANSMIT | FI_RECV)) == 0 &&
        (rc = fi_ep_bind(ep, &(*av)->fid, 0)) == 0 && (what = "fi_enable"))
        rc = fi_enable(ep);
    if (rc != 0) {
        fprintf(stderr, "chaos-forge-fabric: %s failed: %s\n", what, fi_strerror(-rc));
        return NULL;
    }
    return ep;
}

static void forge(gcl_wire_header_t *m, uint32_t comm, uint32_t seq)
{
    if (getrandom(m, sizeof *m, 0) != (ssize_t)sizeof *m)
        memset(m, 0x5a, sizeof *m);
    m->key0 = (uint64_t)comm << 32 | seq;
    m->key1 = 0;
    m->total = 256;
    m->sim_send = 0;
    m->sim_time = 1;
    memset(&m->sig, 0, sizeof m->sig);
    m->sig.seq = seq;
    m->sig.gsize = 16;
    m->sig.root = -1;
    m->sig.count = 64;
}

int main(int argc, char **argv)
{
    struct sockaddr_in dst = {.sin_family = AF_INET};
    if (argc != 5 || inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1 || atoi(argv[2]) <= 0 ||
        atoi(argv[3]) < 0 || atoi(argv[4]) < 1) {
        fprintf(stderr, "usage: chaos-forge-fabric HOST PORT SEQ_FIRST SEQ_COUNT\n");
        return 2;
    }
    dst.sin_port = htons((uint16_t)atoi(argv[2]));
    int first = atoi(argv[3]), count = 16 * atoi(argv[4]); /* 16 pairs of local IPUs per call */
    struct fid_av *av = NULL;
    struct fid_cq *cq = NULL;
    struct fid_ep *ep = open_ep(&av, &cq);
    fi_addr_t peer;
    if (!ep || fi_av_insert(av, &dst, 1, &peer, 0, NULL) != 1) {
        fprintf(stderr, "chaos-forge-fabric: cannot reach %s:%s\n", argv[1], argv[2]);
        return 1;
    }
    int parts[3] = {0x636f6d6d, 0, 0}; /* "comm", IPU position 0, first communicator */
    uint32_t comm = gcl_hash_ints(parts, 3);
    gcl_wire_header_t *h = calloc((size_t)count, sizeof *h);
    struct fi_context *ctx = calloc((size_t)count, sizeof *ctx);
    int posted = 0, completed = 0, failed = 0;
    double deadline = now() + 10;
    while (h && ctx && (completed + failed < posted || posted < count) && now() < deadline) {
        if (posted < count && posted - completed - failed < MAX_INFLIGHT) {
            uint32_t seq = (uint32_t)(first + posted / 16);
            forge(&h[posted], comm, seq);
            uint64_t tag = tag_of(comm, seq, posted % 4, (posted / 4) % 4);
            ssize_t s = fi_tsend(ep, &h[posted], sizeof h[posted], NULL, peer, tag, &ctx[posted]);
            if (s == 0)
                posted++;
            else if (s != -FI_EAGAIN)
                break;
        }
        struct fi_cq_tagged_entry e[16];
        ssize_t n = fi_cq_read(cq, e, 16);
        if (n > 0) {
            completed += (int)n;
        } else if (n == -FI_EAVAIL) {
            struct fi_cq_err_entry err;
            memset(&err, 0, sizeof err);
            if (fi_cq_readerr(cq, &err, 0) > 0)
                failed++;
        }
    }
    printf("chaos-forge-fabric: %d forged headers (calls %d..%d) to %s:%s: %d sent, %d completed, "
           "%d failed\n",
           count, first, first + count / 16 - 1, argv[1], argv[2], posted, completed, failed);
    fi_close(&ep->fid);
    return completed > 0 ? 0 : 1;
}
