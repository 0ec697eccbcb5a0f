/*
 * chaos-attacker: a process on the same network as a job, that belongs to no job, and what it
 * does to the ports an instance listens on (tests/chaos/attack.sh runs it in a third network
 * namespace). It uses nothing of libgcl: only what anyone on the network can send.
 *
 *   chaos-attacker tcp HOST PORT HOLD_S      forged, garbage and truncated headers on
 *                                            connections to PORT (the truncated ones held
 *                                            HOLD_S seconds), then a flood of connections
 *   chaos-attacker udp HOST PORT [FILE]      forged, truncated and flooding datagrams to PORT;
 *                                            with FILE, the recorded datagrams of FILE sent
 *                                            again, from here and with their sender's address
 *   chaos-attacker capture IFACE SECONDS FILE
 *                                            records the control-plane datagrams (and the bytes
 *                                            of TCP connections) that pass IFACE, as a tap on
 *                                            the network would
 *   chaos-attacker tcp-replay HOST PORT FILE the recorded TCP bytes of FILE sent again on new
 *                                            connections to PORT
 *
 * Each prints one line of what it did. Exit status 0, 1 when nothing could be sent (nothing was
 * tested), 2 for a usage error.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/ip.h>
#include <netinet/tcp.h>
#include <netinet/udp.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define CTRL_MAGIC   0x4c52544cu /* gcl/src/job/ctrl.c: the control plane's datagrams */
#define HEAD_BYTES   64          /* at least a control-plane header */
#define FLOOD_HELD   1000
#define FLOOD_CYCLES 3000

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static void rnd(void *p, size_t n)
{
    if (getrandom(p, n, 0) != (ssize_t)n)
        memset(p, 0x5a, n);
}

static int addr_of(const char *host, const char *port, struct sockaddr_in *a)
{
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_port = htons((uint16_t)atoi(port));
    return inet_pton(AF_INET, host, &a->sin_addr) == 1 && atoi(port) > 0 ? 0 : -1;
}

/* A connection to A, or -1; waits at most 2 s. */
static int dial(const struct sockaddr_in *a)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    struct timeval tv = {2, 0};
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)a, sizeof *a) == 0)
        return fd;
    if (fd >= 0)
        close(fd);
    return -1;
}

/* A header shaped like libgcl's (gcl/src/transport/wire.h: two keys, a size, two clocks, a 16-byte token,
 * a signature) with a token of its own, and random bytes after it. */
static size_t forged(uint8_t *buf, size_t cap)
{
    rnd(buf, cap);
    uint64_t f[5] = {1, 1, 4096, 0, 1};
    memcpy(buf, f, sizeof f);
    return 88 + (size_t)(buf[87] % 64);
}

static void hold(double seconds)
{
    struct timespec t = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    nanosleep(&t, NULL);
}

static int attack_tcp(const struct sockaddr_in *a, double hold_s)
{
    uint8_t buf[4096];
    int fds[FLOOD_HELD], forged_n = 0, garbage_n = 0, trunc_n = 0, held = 0, cycles = 0;
    for (int i = 0; i < 10; i++) { /* forged headers, then garbage, each on its own connection */
        int fd = dial(a);
        if (fd >= 0 && send(fd, buf, forged(buf, sizeof buf), MSG_NOSIGNAL) > 0)
            forged_n++;
        if (fd >= 0)
            close(fd);
        fd = dial(a);
        rnd(buf, sizeof buf);
        if (fd >= 0 && send(fd, buf, 1 + buf[0] % sizeof buf, MSG_NOSIGNAL) > 0)
            garbage_n++;
        if (fd >= 0)
            close(fd);
    }
    for (int i = 0; i < 5; i++) { /* truncated: a few bytes of a header, and then nothing */
        fds[i] = dial(a);
        forged(buf, sizeof buf);
        if (fds[i] >= 0 && send(fds[i], buf, 1 + (size_t)i, MSG_NOSIGNAL) > 0)
            trunc_n++;
    }
    hold(hold_s);
    for (int i = 0; i < 5; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    double t0 = now();
    for (held = 0; held < FLOOD_HELD && (fds[held] = dial(a)) >= 0; held++)
        ;
    hold(2.0);
    for (int i = 0; i < held; i++)
        close(fds[i]);
    for (cycles = 0; cycles < FLOOD_CYCLES && now() - t0 < 20; cycles++) {
        int fd = dial(a);
        if (fd < 0)
            break;
        close(fd);
    }
    printf("tcp %s:%d: %d forged headers, %d garbage, %d truncated held %.1f s, %d connections "
           "held 2 s, %d connect-close cycles in %.1f s\n",
           inet_ntoa(a->sin_addr), ntohs(a->sin_port), forged_n, garbage_n, trunc_n, hold_s, held,
           cycles, now() - t0);
    return forged_n + garbage_n + trunc_n + held > 0 ? 0 : 1;
}

/* One recorded datagram or TCP segment: who sent it to whom, and its bytes. */
typedef struct {
    uint32_t len, src, dst;
    uint16_t sport, dport;
    uint8_t proto, pad[3];
} rec_t;

/* Sends PAYLOAD as an IPv4/UDP datagram from SRC:SPORT to A through the raw socket RAW. */
static int spoofed(int raw, uint32_t src, uint16_t sport, const struct sockaddr_in *a,
                   const uint8_t *payload, size_t n)
{
    uint8_t pkt[65536];
    struct iphdr *ip = (struct iphdr *)pkt;
    struct udphdr *udp = (struct udphdr *)(pkt + sizeof *ip);
    if (n > sizeof pkt - sizeof *ip - sizeof *udp)
        return -1;
    memset(pkt, 0, sizeof *ip + sizeof *udp);
    ip->version = 4;
    ip->ihl = 5;
    ip->ttl = 64;
    ip->protocol = IPPROTO_UDP;
    ip->saddr = src;
    ip->daddr = a->sin_addr.s_addr;
    udp->source = sport;
    udp->dest = a->sin_port;
    udp->len = htons((uint16_t)(sizeof *udp + n));
    memcpy(pkt + sizeof *ip + sizeof *udp, payload, n);
    return sendto(raw, pkt, sizeof *ip + sizeof *udp + n, 0, (const struct sockaddr *)a,
                  sizeof *a) > 0
               ? 0
               : -1;
}

/* The recorded datagrams of FILE, sent again to A: from this socket, and from their sender's
 * address (to the port they went to: the instance of that run). Returns how many were sent. */
static int replay_udp(int fd, const struct sockaddr_in *a, const char *file, int *spoof_n)
{
    FILE *f = fopen(file, "rb");
    int raw = socket(AF_INET, SOCK_RAW, IPPROTO_RAW), n = 0;
    rec_t r;
    uint8_t buf[65536];
    *spoof_n = 0;
    while (f && fread(&r, sizeof r, 1, f) == 1 && r.len <= sizeof buf &&
           fread(buf, 1, r.len, f) == r.len) {
        if (r.proto != IPPROTO_UDP)
            continue;
        struct sockaddr_in to = *a;
        to.sin_port = r.dport;
        n += sendto(fd, buf, r.len, 0, (const struct sockaddr *)a, sizeof *a) > 0;
        n += sendto(fd, buf, r.len, 0, (const struct sockaddr *)&to, sizeof to) > 0;
        if (raw >= 0 && to.sin_addr.s_addr == r.dst)
            *spoof_n += spoofed(raw, r.src, r.sport, &to, buf, r.len) == 0;
        if (raw >= 0)
            *spoof_n += spoofed(raw, r.src, r.sport, a, buf, r.len) == 0;
    }
    if (f)
        fclose(f);
    if (raw >= 0)
        close(raw);
    return n;
}

static int attack_udp(const struct sockaddr_in *a, const char *file)
{
    int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), forged_n = 0, trunc_n = 0;
    int flood = 0, replayed = 0, spoof_n = 0;
    uint8_t buf[1500];
    for (int i = 0; i < 1000; i++) { /* the control plane's magic, another token */
        rnd(buf, sizeof buf);
        uint32_t m = CTRL_MAGIC;
        memcpy(buf, &m, 4);
        forged_n += sendto(fd, buf, HEAD_BYTES + (size_t)(buf[5] % 400), 0,
                           (const struct sockaddr *)a, sizeof *a) > 0;
        trunc_n += sendto(fd, buf, (size_t)(buf[6] % HEAD_BYTES), 0, (const struct sockaddr *)a,
                          sizeof *a) > 0;
    }
    if (file)
        replayed = replay_udp(fd, a, file, &spoof_n);
    double t0 = now();
    for (; flood < 100000 && now() - t0 < 10; flood++) {
        rnd(buf, 64);
        sendto(fd, buf, 1 + buf[0] % sizeof buf, 0, (const struct sockaddr *)a, sizeof *a);
    }
    close(fd);
    printf("udp %s:%d: %d forged, %d truncated, %d replayed from here and %d with their "
           "sender's address, %d flooding datagrams in %.1f s\n",
           inet_ntoa(a->sin_addr), ntohs(a->sin_port), forged_n, trunc_n, replayed, spoof_n, flood,
           now() - t0);
    return forged_n > 0 ? 0 : 1;
}

/* Records what passes IFACE for SECONDS into FILE: UDP datagrams that start with the control
 * plane's magic, and the payload of TCP segments (up to 64 KiB of each direction's first
 * segments in all). */
static int capture(const char *iface, double seconds, const char *file)
{
    /* Every protocol: a bridge port's frames reach a packet socket of one protocol only after
     * the bridge took them (never), and those of all protocols before. */
    int fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_CLOEXEC, htons(ETH_P_ALL));
    struct sockaddr_ll ll = {.sll_family = AF_PACKET,
                             .sll_protocol = htons(ETH_P_ALL),
                             .sll_ifindex = (int)if_nametoindex(iface)};
    FILE *f = fopen(file, "wb");
    if (fd < 0 || !ll.sll_ifindex || bind(fd, (struct sockaddr *)&ll, sizeof ll) != 0 || !f) {
        fprintf(stderr, "chaos-attacker: cannot capture on %s: %s\n", iface, strerror(errno));
        return 1;
    }
    int udp_n = 0, tcp_n = 0;
    size_t tcp_bytes = 0;
    uint8_t pkt[65536];
    double end = now() + seconds;
    while (now() < end) {
        struct pollfd p = {fd, POLLIN, 0};
        if (poll(&p, 1, 100) <= 0)
            continue;
        struct sockaddr_ll from;
        socklen_t flen = sizeof from;
        ssize_t n = recvfrom(fd, pkt, sizeof pkt, 0, (struct sockaddr *)&from, &flen);
        if (n < (ssize_t)sizeof(struct iphdr) || from.sll_protocol != htons(ETH_P_IP))
            continue;
        const struct iphdr *ip = (const struct iphdr *)pkt;
        size_t ihl = (size_t)ip->ihl * 4, tot = ntohs(ip->tot_len);
        if (tot > (size_t)n || ihl < 20 || tot < ihl + 8)
            continue;
        rec_t r = {0, ip->saddr, ip->daddr, 0, 0, ip->protocol, {0}};
        const uint8_t *body = pkt + ihl;
        if (ip->protocol == IPPROTO_UDP) {
            const struct udphdr *u = (const struct udphdr *)body;
            uint32_t magic;
            r.len = (uint32_t)(tot - ihl - 8);
            if (r.len < 4 || (memcpy(&magic, body + 8, 4), magic != CTRL_MAGIC))
                continue;
            r.sport = u->source, r.dport = u->dest;
            body += 8;
            udp_n++;
        } else if (ip->protocol == IPPROTO_TCP) {
            const struct tcphdr *t = (const struct tcphdr *)body;
            size_t off = (size_t)t->doff * 4;
            if (tot < ihl + off || tot - ihl - off == 0 || tcp_bytes > (1u << 20))
                continue;
            r.len = (uint32_t)(tot - ihl - off);
            r.sport = t->source, r.dport = t->dest;
            body += off;
            tcp_n++;
            tcp_bytes += r.len;
        } else {
            continue;
        }
        fwrite(&r, sizeof r, 1, f);
        fwrite(body, 1, r.len, f);
    }
    fclose(f);
    close(fd);
    printf("capture %s: %d control-plane datagrams, %d TCP segments (%zu bytes) in %.1f s\n", iface,
           udp_n, tcp_n, tcp_bytes, seconds);
    return udp_n + tcp_n > 0 ? 0 : 1;
}

/* The recorded TCP bytes of FILE, flow by flow (by sender and port), each sent again on a new
 * connection to A. */
static int tcp_replay(const struct sockaddr_in *a, const char *file)
{
    FILE *f = fopen(file, "rb");
    rec_t r, last = {0};
    uint8_t buf[65536];
    int conns = 0, fd = -1;
    size_t bytes = 0;
    while (f && fread(&r, sizeof r, 1, f) == 1 && r.len <= sizeof buf &&
           fread(buf, 1, r.len, f) == r.len) {
        if (r.proto != IPPROTO_TCP)
            continue;
        if (fd < 0 || r.src != last.src || r.sport != last.sport || r.dport != last.dport) {
            if (fd >= 0)
                close(fd);
            if (conns >= 32)
                break;
            fd = dial(a);
            conns += fd >= 0;
            last = r;
        }
        if (fd >= 0 && send(fd, buf, r.len, MSG_NOSIGNAL) > 0)
            bytes += r.len;
    }
    if (fd >= 0)
        close(fd);
    if (f)
        fclose(f);
    printf("tcp-replay %s:%d: %zu recorded bytes sent again on %d connections\n",
           inet_ntoa(a->sin_addr), ntohs(a->sin_port), bytes, conns);
    return conns > 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    struct sockaddr_in a;
    struct rlimit fdmax = {FLOOD_HELD + 64, FLOOD_HELD + 64};
    setrlimit(RLIMIT_NOFILE, &fdmax);
    if (argc == 5 && !strcmp(argv[1], "tcp") && addr_of(argv[2], argv[3], &a) == 0)
        return attack_tcp(&a, atof(argv[4]));
    if ((argc == 4 || argc == 5) && !strcmp(argv[1], "udp") && addr_of(argv[2], argv[3], &a) == 0)
        return attack_udp(&a, argc == 5 ? argv[4] : NULL);
    if (argc == 5 && !strcmp(argv[1], "capture"))
        return capture(argv[2], atof(argv[3]), argv[4]);
    if (argc == 5 && !strcmp(argv[1], "tcp-replay") && addr_of(argv[2], argv[3], &a) == 0)
        return tcp_replay(&a, argv[4]);
    fprintf(stderr, "usage: chaos-attacker tcp HOST PORT HOLD_S | udp HOST PORT [FILE] | "
                    "capture IFACE SECONDS FILE | tcp-replay HOST PORT FILE\n");
    return 2;
}
