/*
 * faults-forge-ofi IPV4 PORT SEQ_FIRST SEQ_COUNT: a process of another job that knows where a
 * running instance's libfabric endpoint listens (tcp;ofi_rxm, as libgcl's ofi transport opens
 * it) and sends it forged message headers: 88 bytes shaped like gcl_wire_header_t, with a
 * wrong token, under the exact tags of the headers of calls SEQ_FIRST .. SEQ_FIRST+SEQ_COUNT-1
 * of the job's first communicator (gcl/src/transport/net/ofi.c tag_of: communicator key,
 * sequence, message 0, piece 0, local IPUs 0..1 to 0..1), in order. Calls the job has not reached
 * yet will post receives with those tags: a receive that did not check the sender would take the
 * forged header.
 *
 * Prints how many sends libfabric completed (the bytes reached the instance's endpoint) and
 * exits 0 when at least one did, 1 when none could be sent (nothing was tested), 2 for a usage
 * error. The job under attack must not notice: its receives are directed to its own instances'
 * addresses, and a header that did get matched would be refused by its token.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <rdma/fabric.h>
#include <rdma/fi_cm.h>
#include <rdma/fi_domain.h>
#include <rdma/fi_endpoint.h>
#include <rdma/fi_errno.h>
#include <rdma/fi_tagged.h>
#include <stdint.h>
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

static uint64_t tag_of(uint32_t comm, uint32_t seq, int src, int dst)
{
    return ((uint64_t)(comm & 0x3ffu) << 54) | ((uint64_t)(seq & 0x3fffu) << 40) |
           ((uint64_t)((unsigned)src & 0xffu) << 8) | (uint64_t)((unsigned)dst & 0xffu);
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: faults-forge-ofi IPV4 PORT SEQ_FIRST SEQ_COUNT\n");
        return 2;
    }
    struct sockaddr_in dst = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(argv[2]))};
    int first = atoi(argv[3]), count = 4 * atoi(argv[4]); /* 4 pairs of local IPUs per call */
    if (inet_pton(AF_INET, argv[1], &dst.sin_addr) != 1 || count < 1 || first < 0) {
        fprintf(stderr, "faults-forge-ofi: bad address or count\n");
        return 2;
    }
    struct fi_info *hints = fi_allocinfo(), *info = NULL;
    hints->ep_attr->type = FI_EP_RDM;
    hints->caps = FI_TAGGED | FI_DIRECTED_RECV;
    hints->mode = FI_CONTEXT;
    hints->fabric_attr->prov_name = strdup("tcp;ofi_rxm");
    hints->addr_format = FI_SOCKADDR_IN;
    struct fid_fabric *fabric = NULL;
    struct fid_domain *domain = NULL;
    struct fid_av *av = NULL;
    struct fid_cq *cq = NULL;
    struct fid_ep *ep = NULL;
    struct fi_av_attr av_attr = {.type = FI_AV_TABLE};
    struct fi_cq_attr cq_attr = {.format = FI_CQ_FORMAT_TAGGED, .wait_obj = FI_WAIT_NONE};
    int rc = fi_getinfo(FI_VERSION(1, 9), "127.0.0.1", NULL, 0, hints, &info);
    const char *what = "fi_getinfo";
    if (rc == 0 && (what = "fi_fabric") &&
        (rc = fi_fabric(info->fabric_attr, &fabric, NULL)) == 0 && (what = "fi_domain") &&
        (rc = fi_domain(fabric, info, &domain, NULL)) == 0 && (what = "fi_av_open") &&
        (rc = fi_av_open(domain, &av_attr, &av, NULL)) == 0 && (what = "fi_cq_open") &&
        (rc = fi_cq_open(domain, &cq_attr, &cq, NULL)) == 0 && (what = "fi_endpoint") &&
        (rc = fi_endpoint(domain, info, &ep, NULL)) == 0 && (what = "fi_ep_bind") &&
        (rc = fi_ep_bind(ep, &cq->fid, FI_TRANSMIT | FI_RECV)) == 0 &&
        (rc = fi_ep_bind(ep, &av->fid, 0)) == 0 && (what = "fi_enable"))
        rc = fi_enable(ep);
    if (rc != 0) {
        fprintf(stderr, "faults-forge-ofi: %s failed: %s\n", what, fi_strerror(-rc));
        return 1;
    }
    fi_addr_t peer;
    if (fi_av_insert(av, &dst, 1, &peer, 0, NULL) != 1) {
        fprintf(stderr, "faults-forge-ofi: fi_av_insert failed\n");
        return 1;
    }
    int parts[3] = {0x636f6d6d, 0, 0}; /* "comm", IPU position 0, first communicator */
    uint32_t comm = gcl_hash_ints(parts, 3);
    gcl_wire_header_t *h = calloc((size_t)count, sizeof *h);
    struct fi_context *ctx = calloc((size_t)count, sizeof *ctx);
    int posted = 0, completed = 0, failed = 0;
    double deadline = now() + 10;
    while ((completed + failed < posted || posted < count) && now() < deadline) {
        if (posted < count && posted - completed - failed < MAX_INFLIGHT) {
            gcl_wire_header_t *m = &h[posted];
            if (getrandom(m, sizeof *m, 0) != (ssize_t)sizeof *m)
                break;
            uint32_t seq = (uint32_t)(first + posted / 4);
            m->key0 = (uint64_t)comm << 32 | seq;
            m->key1 = 0;
            m->total = 256;
            m->sim_send = 0;
            m->sim_time = 1;
            m->sig.seq = seq;
            m->sig.coll = 0;
            m->sig.dtype = 0;
            m->sig.op = 0;
            m->sig.gkind = 0;
            m->sig.gsize = 4;
            m->sig.root = -1;
            m->sig.listhash = 0;
            m->sig.count = 64;
            uint64_t tag = tag_of(comm, seq, posted % 2, (posted / 2) % 2);
            ssize_t s = fi_tsend(ep, m, sizeof *m, NULL, peer, tag, &ctx[posted]);
            if (s == 0)
                posted++;
            else if (s != -FI_EAGAIN) {
                fprintf(stderr, "faults-forge-ofi: fi_tsend: %s\n", fi_strerror((int)-s));
                break;
            }
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
    printf("faults-forge-ofi: %d forged headers (calls %d..%d) to %s:%s: %d sent, %d completed, "
           "%d failed\n",
           count, first, first + count / 4 - 1, argv[1], argv[2], posted, completed, failed);
    fi_close(&ep->fid);
    fi_close(&av->fid);
    fi_close(&cq->fid);
    fi_close(&domain->fid);
    fi_close(&fabric->fid);
    fi_freeinfo(info);
    fi_freeinfo(hints);
    free(h);
    free(ctx);
    return completed > 0 ? 0 : 1;
}
