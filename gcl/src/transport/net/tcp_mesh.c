/* The tcp backend's connections; see tcp_mesh.h. IPv4 only. */
#include "transport/net/tcp_mesh.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/alloc.h"
#include "base/wait.h"

enum { MESH_ADDRS = 8 };
#define HELLO_MAGIC 0x47434c54u /* "GCLT" */
/* A connection that says nothing for this long is not one of ours: closed, the next taken. */
#define HELLO_WAIT_S 5.0
/* Each of a peer's addresses is tried for this long before the next. */
#define CONNECT_TRY_S 5.0

/* What every instance publishes: whether it listens, its port, and its addresses. */
typedef struct {
    uint32_t ok;
    uint16_t port, n;
    uint32_t ip[MESH_ADDRS]; /* network byte order */
} mesh_addr_t;

/* The first bytes of every connection: who dials, whom it means (an address another host
 * shares, such as a container bridge's, can reach the wrong instance), and the job's token. */
typedef struct {
    uint32_t magic, instance, to;
    uint8_t token[16];
} hello_t;

/* This instance's addresses: loopback for a job on one host; else every IPv4 address of an
 * interface that is up, running (has a carrier) and not loopback, or only GCL_TCP_IFACE's. */
static int my_addresses(const gcl_params_t *p, const gcl_job_t *j, mesh_addr_t *me, char *err,
                        size_t len)
{
    if (j->num_hosts == 1 && !p->tcp_iface[0]) {
        me->ip[me->n++] = htonl(INADDR_LOOPBACK);
        return 0;
    }
    struct ifaddrs *all = NULL;
    if (getifaddrs(&all) != 0) {
        snprintf(err, len, "tcp: cannot list the network interfaces: %s", strerror(errno));
        return -1;
    }
    for (struct ifaddrs *a = all; a && me->n < MESH_ADDRS; a = a->ifa_next) {
        if (!a->ifa_addr || a->ifa_addr->sa_family != AF_INET || !(a->ifa_flags & IFF_UP) ||
            !(a->ifa_flags & IFF_RUNNING))
            continue;
        if (p->tcp_iface[0] ? strcmp(a->ifa_name, p->tcp_iface) != 0
                            : (a->ifa_flags & IFF_LOOPBACK) != 0)
            continue;
        me->ip[me->n++] = ((struct sockaddr_in *)a->ifa_addr)->sin_addr.s_addr;
    }
    freeifaddrs(all);
    if (me->n == 0)
        snprintf(err, len, "tcp: no IPv4 address on %s%s", p->tcp_iface[0] ? "interface " : "",
                 p->tcp_iface[0] ? p->tcp_iface
                                 : "an interface that is up, running and not loopback");
    return me->n ? 0 : -1;
}

static int listen_any(int backlog, uint16_t *port, char *err, size_t len)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_ANY)};
    socklen_t alen = sizeof a;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, backlog) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &alen) != 0) {
        snprintf(err, len, "tcp: cannot listen: %s", strerror(errno));
        if (fd >= 0)
            close(fd);
        return -1;
    }
    *port = ntohs(a.sin_port);
    return fd;
}

/* Waits until FD is ready for EVENTS or UNTIL passes: 1 ready, 0 timed out, -1 failed. */
static int wait_fd(int fd, short events, double until)
{
    for (;;) {
        double left = until - gcl_now();
        if (left <= 0)
            return 0;
        struct pollfd pf = {fd, events, 0};
        int r = poll(&pf, 1, (int)(left * 1000) + 1);
        if (r > 0)
            return (pf.revents & (POLLERR | POLLNVAL)) && !(pf.revents & events) ? -1 : 1;
        if (r < 0 && errno != EINTR)
            return -1;
    }
}

/* Moves LEN bytes over non-blocking FD (write when OUT, else read) by UNTIL: 0, or -1. */
static int move_all(int fd, void *buf, size_t len, int out, double until)
{
    size_t done = 0;
    while (done < len) {
        ssize_t r = out ? send(fd, (char *)buf + done, len - done, MSG_NOSIGNAL)
                        : recv(fd, (char *)buf + done, len - done, 0);
        if (r > 0) {
            done += (size_t)r;
            continue;
        }
        if (r == 0 || (errno != EAGAIN && errno != EINTR))
            return -1;
        if (wait_fd(fd, out ? POLLOUT : POLLIN, until) != 1)
            return -1;
    }
    return 0;
}

static int connect_one(uint32_t ip, uint16_t port, double until)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = ip};
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0)
        return -1;
    int soerr = 0;
    socklen_t sl = sizeof soerr;
    if (connect(fd, (struct sockaddr *)&a, sizeof a) != 0 &&
        (errno != EINPROGRESS || wait_fd(fd, POLLOUT, until) != 1 ||
         getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) != 0 || soerr != 0)) {
        close(fd);
        return -1;
    }
    return fd;
}

/* Connects to an instance at one of its addresses (PEER) and says hello (HI). */
static int dial(const mesh_addr_t *peer, const hello_t *hi, double until)
{
    for (int i = 0; i < peer->n; i++) {
        double by = gcl_now() + CONNECT_TRY_S;
        int fd = connect_one(peer->ip[i], peer->port, by < until ? by : until);
        if (fd < 0)
            continue;
        if (move_all(fd, (void *)hi, sizeof *hi, 1, until) == 0)
            return fd;
        close(fd);
    }
    return -1;
}

/* Accepts the connections of the instances before ME: each must say hello with the job's
 * token, to ME, from a lower instance index not yet connected, else it is closed. */
static int accept_all(int lfd, int me, const uint8_t token[16], int *fds, double until)
{
    int have = 0;
    while (have < me) {
        if (wait_fd(lfd, POLLIN, until) != 1)
            return -1;
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            continue;
        hello_t hi;
        double by = gcl_now() + HELLO_WAIT_S;
        if (move_all(fd, &hi, sizeof hi, 0, by < until ? by : until) == 0 &&
            hi.magic == HELLO_MAGIC && hi.to == (uint32_t)me && hi.instance < (uint32_t)me &&
            fds[hi.instance] < 0 && memcmp(hi.token, token, sizeof hi.token) == 0) {
            fds[hi.instance] = fd;
            have++;
        } else {
            close(fd);
        }
    }
    return 0;
}

static void close_all(int *fds, int n)
{
    for (int i = 0; i < n; i++)
        if (fds[i] >= 0) {
            close(fds[i]);
            fds[i] = -1;
        }
}

/* Connects to every instance after this one and accepts every one before it. */
static gcl_status_t connect_mesh(const gcl_params_t *p, const gcl_job_t *j, const mesh_addr_t *all,
                                 int lfd, const uint8_t token[16], int *fds, char *err, size_t len)
{
    int me = j->instance_index;
    double wait = p->peer_timeout_s > 10 ? p->peer_timeout_s : 10;
    double until = gcl_now() + wait;
    hello_t hi = {HELLO_MAGIC, (uint32_t)me, 0, {0}};
    memcpy(hi.token, token, sizeof hi.token);
    for (int i = me + 1; i < j->num_instances; i++)
        if ((hi.to = (uint32_t)i, fds[i] = dial(&all[i], &hi, until)) < 0) {
            snprintf(err, len, "tcp: cannot connect to instance %d (port %u, %u address%s)", i,
                     (unsigned)all[i].port, (unsigned)all[i].n, all[i].n == 1 ? "" : "es");
            close_all(fds, j->num_instances);
            return GCL_ERR_TRANSPORT;
        }
    if (accept_all(lfd, me, token, fds, until) != 0) {
        snprintf(err, len, "tcp: not every instance before this one connected within %.0f s", wait);
        close_all(fds, j->num_instances);
        return GCL_ERR_TRANSPORT;
    }
    int one = 1;
    for (int i = 0; i < j->num_instances; i++)
        if (fds[i] >= 0)
            setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return GCL_OK;
}

gcl_status_t gcl_tcp_mesh(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                          const uint8_t token[16], int *fds, char *err, size_t len)
{
    int n = j->num_instances;
    mesh_addr_t me = {0}, *all = gcl_calloc((size_t)n, sizeof *all);
    int lfd = -1, no_memory = !all;
    err[0] = '\0';
    for (int i = 0; i < n; i++)
        fds[i] = -1;
    if (!all)
        snprintf(err, len, "tcp: out of host memory");
    else if (my_addresses(p, j, &me, err, len) == 0 &&
             (lfd = listen_any(n < 4096 ? n : 4096, &me.port, err, len)) >= 0)
        me.ok = 1;
    /* Everybody takes part, listening or not; with no room for the table, a blank one. */
    static mesh_addr_t blank[256];
    gcl_status_t rc = GCL_ERR_TRANSPORT;
    if (all || n <= 256)
        rc = boot->allgather(boot, &me, all ? all : blank, sizeof me);
    for (int i = 0; all && rc == GCL_OK && i < n; i++)
        if (!all[i].ok) {
            if (me.ok)
                snprintf(err, len, "tcp: instance %d could not listen", i);
            rc = GCL_ERR_TRANSPORT;
        }
    if (rc == GCL_OK)
        rc = connect_mesh(p, j, all, lfd, token, fds, err, len);
    else if (!err[0])
        snprintf(err, len, "tcp: exchanging addresses failed");
    if (lfd >= 0)
        close(lfd);
    free(all);
    return no_memory ? GCL_ERR_NO_HOST_MEMORY : rc;
}
