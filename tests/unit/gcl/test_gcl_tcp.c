/*
 * Unit tests of the tcp network backend (gcl/src/transport/net/tcp.c, tcp_mesh.c): real
 * sockets over loopback, each instance a thread of this process with a bootstrap of its own
 * (an allgather over a barrier). Matching by tag in any order, messages that come before their
 * receive, zero-length and 24 MiB messages both ways at once, a send cancelled half-written
 * (the stream stays whole and the caller's buffer is not read after), a receive too small, the
 * late message of a cancelled receive dropped, a peer that goes away, and hellos without the
 * job's token or meant for another instance refused while the mesh still forms; and queues of sends
 * longer than one sendmsg takes, behind a send written part way (the iovec array's limit, at and
 * around it). Threads record their first failure; the test asserts in the main thread.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "base/param.h"
#include "base/wait.h"
#include "job/bootstrap.h"
#include "job/job.h"
#include "transport/net/backends.h"

enum { MAX_N = 4 };

/* ---- a bootstrap over threads ---- */

typedef struct {
    int n;
    pthread_barrier_t bar;
    char table[MAX_N][256];
    /* Called by rank 0 between the gather and the return: sees every block. */
    void (*spy)(const char *all, size_t bytes);
} world_t;

typedef struct {
    gcl_boot_t b;
    world_t *w;
} tboot_t;

static gcl_status_t t_allgather(gcl_boot_t *b, const void *mine, void *all, size_t bytes)
{
    world_t *w = ((tboot_t *)b)->w;
    memcpy(w->table[b->rank], mine, bytes);
    pthread_barrier_wait(&w->bar);
    for (int i = 0; i < w->n; i++)
        memcpy((char *)all + (size_t)i * bytes, w->table[i], bytes);
    if (b->rank == 0 && w->spy)
        w->spy(all, bytes);
    pthread_barrier_wait(&w->bar);
    return GCL_OK;
}

static gcl_status_t t_barrier(gcl_boot_t *b)
{
    pthread_barrier_wait(&((tboot_t *)b)->w->bar);
    return GCL_OK;
}

/* ---- running N instances ---- */

typedef struct inst inst_t;
typedef void (*scenario_t)(inst_t *me);

struct inst {
    int rank;
    world_t *w;
    tboot_t boot;
    gcl_net_t *net;
    scenario_t run;
    char failed[512];
};

static const uint8_t token[16] = "the job's token";

#define CHECK(me, cond)                                                                            \
    do {                                                                                           \
        if (!(cond) && !(me)->failed[0]) {                                                         \
            snprintf((me)->failed, sizeof(me)->failed, "rank %d, line %d: %s", (me)->rank,         \
                     __LINE__, #cond);                                                             \
        }                                                                                          \
    } while (0)

/* Tests REQ until it ends or 20 s pass: 1, -1, or 0 (timed out). */
static int wait_req(gcl_net_t *n, void *req)
{
    double until = gcl_now() + 20;
    while (gcl_now() < until) {
        gcl_progress_pass++;
        int f = n->test(n, req);
        if (f != 0)
            return f;
        sched_yield();
    }
    return 0;
}

static gcl_net_tag_t tag(uint32_t msg, uint32_t piece)
{
    return (gcl_net_tag_t){7, 1, msg, piece, 0, 0};
}

static void *inst_main(void *arg)
{
    inst_t *me = arg;
    gcl_params_t p;
    char err[256] = "";
    if (gcl_params_load(&p, err, sizeof err) != GCL_OK) {
        snprintf(me->failed, sizeof me->failed, "params: %s", err);
        return NULL;
    }
    gcl_job_t j;
    memset(&j, 0, sizeof j);
    j.num_instances = me->w->n;
    j.instance_index = me->rank;
    j.num_hosts = 1;
    me->boot.b = (gcl_boot_t){.name = "threads",
                              .rank = me->rank,
                              .size = me->w->n,
                              .allgather = t_allgather,
                              .barrier = t_barrier};
    me->boot.w = me->w;
    if (gcl_net_tcp_create(&p, &j, &me->boot.b, token, &me->net, err, sizeof err) != GCL_OK) {
        snprintf(me->failed, sizeof me->failed, "rank %d: create: %s", me->rank, err);
        return NULL;
    }
    me->run(me);
    t_barrier(&me->boot.b);
    if (me->net)
        me->net->destroy(me->net);
    return NULL;
}

static void run_world(int n, scenario_t run, void (*spy)(const char *, size_t))
{
    world_t w = {.n = n, .spy = spy};
    inst_t in[MAX_N];
    pthread_t th[MAX_N];
    pthread_barrier_init(&w.bar, NULL, (unsigned)n);
    for (int i = 0; i < n; i++) {
        in[i] = (inst_t){.rank = i, .w = &w, .run = run};
        assert_int_equal(pthread_create(&th[i], NULL, inst_main, &in[i]), 0);
    }
    for (int i = 0; i < n; i++)
        pthread_join(th[i], NULL);
    pthread_barrier_destroy(&w.bar);
    for (int i = 0; i < n; i++)
        if (in[i].failed[0])
            fail_msg("%s", in[i].failed);
}

/* ---- scenarios ---- */

/* Every rank sends message k (k bytes of k) to every other, k = 0..5; receives are posted in
 * reverse order, half of them after the messages came. */
static void exchange(inst_t *me)
{
    gcl_net_t *n = me->net;
    enum { K = 6 };
    char out[K][8], in[MAX_N][K][8];
    void *sreq[MAX_N][K], *rreq[MAX_N][K];
    for (int k = 0; k < K; k++)
        memset(out[k], 'a' + k + me->rank, sizeof out[k]);
    for (int peer = 0; peer < me->w->n; peer++)
        for (int k = 0; k < K && peer != me->rank; k++) {
            gcl_net_tag_t t = tag((uint32_t)k, 0);
            CHECK(me, n->isend(n, peer, out[k], (size_t)k, &t, &sreq[peer][k]) == 0);
        }
    for (int peer = 0; peer < me->w->n; peer++)
        for (int k = K - 1; k >= 0 && peer != me->rank; k--) {
            if (k == K / 2)
                usleep(20000); /* the rest have come by now: matched from the early queue */
            gcl_net_tag_t t = tag((uint32_t)k, 0);
            memset(in[peer][k], 0, 8);
            CHECK(me, n->irecv(n, peer, in[peer][k], 8, &t, &rreq[peer][k]) == 0);
        }
    for (int peer = 0; peer < me->w->n; peer++)
        for (int k = 0; k < K && peer != me->rank; k++) {
            CHECK(me, wait_req(n, sreq[peer][k]) == 1);
            CHECK(me, wait_req(n, rreq[peer][k]) == 1);
            for (int b = 0; b < k; b++)
                CHECK(me, in[peer][k][b] == 'a' + k + peer);
            CHECK(me, k == 7 || in[peer][k][k] == 0);
        }
}

static void test_exchange(void **state)
{
    (void)state;
    run_world(3, exchange, NULL);
}

/* 24 MiB each way at once, the receive posted first on one side and after on the other. */
static void large(inst_t *me)
{
    gcl_net_t *n = me->net;
    size_t len = 24u << 20;
    int peer = 1 - me->rank;
    uint32_t *out = malloc(len), *in = calloc(1, len);
    CHECK(me, out && in);
    if (!out || !in)
        return;
    for (size_t i = 0; i < len / 4; i++)
        out[i] = (uint32_t)(i * 2654435761u) ^ (uint32_t)me->rank;
    void *s, *r;
    gcl_net_tag_t t = tag(1, 1);
    if (me->rank == 0)
        CHECK(me, n->irecv(n, peer, in, len, &t, &r) == 0);
    CHECK(me, n->isend(n, peer, out, len, &t, &s) == 0);
    if (me->rank == 1) {
        usleep(10000);
        CHECK(me, n->irecv(n, peer, in, len, &t, &r) == 0);
    }
    /* Both requests progress together: each test moves both directions. */
    int fs = 0, fr = 0;
    double until = gcl_now() + 30;
    while ((!fs || !fr) && gcl_now() < until) {
        gcl_progress_pass++;
        if (!fs)
            fs = n->test(n, s);
        if (!fr)
            fr = n->test(n, r);
    }
    CHECK(me, fs == 1 && fr == 1);
    size_t bad = 0;
    for (size_t i = 0; i < len / 4; i++)
        bad += in[i] != ((uint32_t)(i * 2654435761u) ^ (uint32_t)peer);
    CHECK(me, bad == 0);
    free(out);
    free(in);
}

static void test_large(void **state)
{
    (void)state;
    run_world(2, large, NULL);
}

/* Rank 0 queues a send of 32 MiB, which the sockets cannot hold, and QUEUED small sends behind
 * it, and moves them until the first is written part way past its frame; rank 1 then receives
 * them all. One sendmsg takes at most 16 sends (32 iovecs): a send written past its frame needs
 * one iovec, every other two, so 15, 16 and 17 sends behind it sit at the limit, and 40 far past
 * it (the 64 MiB all_reduce between hosts that wrote an iovec past the array, issue 48). */
static int queued;
static void long_queue(inst_t *me)
{
    gcl_net_t *n = me->net;
    size_t big = 32u << 20, small = 1000;
    enum { MAXQ = 64 };
    char *buf = malloc(big + (size_t)MAXQ * small);
    void *req[MAXQ + 1];
    CHECK(me, buf != NULL);
    if (!buf)
        return;
    if (me->rank == 0) {
        for (size_t i = 0; i < big + (size_t)queued * small; i++)
            buf[i] = (char)(i * 131 + 7);
        for (int k = 0; k <= queued; k++) {
            gcl_net_tag_t t = tag(9, (uint32_t)k);
            char *at = k ? buf + big + (size_t)(k - 1) * small : buf;
            CHECK(me, n->isend(n, 1, at, k ? small : big, &t, &req[k]) == 0);
        }
        int first = 0; /* written part way: the sockets fill (a test that ends it frees it) */
        for (int i = 0; i < 50 && first == 0; i++) {
            gcl_progress_pass++;
            first = n->test(n, req[0]);
            usleep(200);
        }
        CHECK(me, first == 0); /* 32 MiB cannot all fit in the sockets */
        t_barrier(&me->boot.b);
        for (int k = first != 0; k <= queued; k++)
            CHECK(me, wait_req(n, req[k]) == 1);
    } else {
        memset(buf, 0, big + (size_t)queued * small);
        t_barrier(&me->boot.b);
        for (int k = 0; k <= queued; k++) {
            gcl_net_tag_t t = tag(9, (uint32_t)k);
            char *at = k ? buf + big + (size_t)(k - 1) * small : buf;
            CHECK(me, n->irecv(n, 0, at, k ? small : big, &t, &req[k]) == 0);
        }
        for (int k = 0; k <= queued; k++)
            CHECK(me, wait_req(n, req[k]) == 1);
        size_t bad = 0;
        for (size_t i = 0; i < big + (size_t)queued * small; i++)
            bad += buf[i] != (char)(i * 131 + 7);
        CHECK(me, bad == 0);
    }
    free(buf);
}

static void test_long_send_queue(void **state)
{
    (void)state;
    static const int counts[] = {15, 16, 17, 40};
    for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
        queued = counts[i];
        run_world(2, long_queue, NULL);
    }
}

/* Rank 0 posts a 32 MiB send that rank 1 does not read yet, moves it until part is written,
 * cancels it and scribbles over its buffer, then sends a small message behind it. Rank 1 then
 * receives both: the first whole and as it was, the second intact. */
static void cancel_mid(inst_t *me)
{
    gcl_net_t *n = me->net;
    size_t len = 32u << 20;
    char *big = malloc(len), small[16] = "after the cancel";
    CHECK(me, big != NULL);
    if (!big)
        return;
    gcl_net_tag_t t1 = tag(1, 1), t2 = tag(2, 0);
    void *s, *r;
    if (me->rank == 0) {
        memset(big, 'x', len);
        CHECK(me, n->isend(n, 1, big, len, &t1, &s) == 0);
        for (int i = 0; i < 100; i++) {
            gcl_progress_pass++;
            CHECK(me, n->test(n, s) == 0); /* 32 MiB cannot all fit in the sockets */
            usleep(1000);
        }
        n->cancel(n, s);
        memset(big, 'y', len);
        free(big);
        big = NULL;
        CHECK(me, n->isend(n, 1, small, sizeof small, &t2, &s) == 0);
        t_barrier(&me->boot.b);
        CHECK(me, wait_req(n, s) == 1);
    } else {
        t_barrier(&me->boot.b);
        char got[16] = "";
        void *r2;
        CHECK(me, n->irecv(n, 0, big, len, &t1, &r) == 0);
        CHECK(me, n->irecv(n, 0, got, sizeof got, &t2, &r2) == 0);
        CHECK(me, wait_req(n, r) == 1);
        CHECK(me, wait_req(n, r2) == 1);
        size_t bad = 0;
        for (size_t i = 0; i < len; i++)
            bad += big[i] != 'x';
        CHECK(me, bad == 0);
        CHECK(me, memcmp(got, small, sizeof got) == 0);
    }
    free(big);
}

static void test_cancel_mid_send(void **state)
{
    (void)state;
    run_world(2, cancel_mid, NULL);
}

/* A receive cancelled while nothing came, another while its message arrives: the messages
 * behind them still arrive whole. */
static void cancel_recv(inst_t *me)
{
    gcl_net_t *n = me->net;
    gcl_net_tag_t t1 = tag(1, 0), t2 = tag(2, 0);
    char a[64] = "first", b[64] = "second", got[64] = "";
    void *r, *s1, *s2;
    if (me->rank == 1) {
        CHECK(me, n->irecv(n, 0, got, sizeof got, &t1, &r) == 0);
        n->cancel(n, r);
        t_barrier(&me->boot.b);
        usleep(20000);
        CHECK(me, n->irecv(n, 0, got, sizeof got, &t2, &r) == 0);
        CHECK(me, wait_req(n, r) == 1);
        CHECK(me, strcmp(got, "second") == 0);
    } else {
        t_barrier(&me->boot.b);
        CHECK(me, n->isend(n, 1, a, sizeof a, &t1, &s1) == 0);
        CHECK(me, n->isend(n, 1, b, sizeof b, &t2, &s2) == 0);
        CHECK(me, wait_req(n, s1) == 1);
        CHECK(me, wait_req(n, s2) == 1);
    }
}

static void test_cancel_recv(void **state)
{
    (void)state;
    run_world(2, cancel_recv, NULL);
}

/* A receive cancelled before its message came: the message, when it comes, is dropped, not
 * kept in the early queue. Seen here by posting a receive of the same tag afterwards (libgcl
 * never does: its tags carry the call's number): it must get the message sent after, not the
 * one whose receive was cancelled. */
static void cancel_late(inst_t *me)
{
    gcl_net_t *n = me->net;
    gcl_net_tag_t t = tag(5, 0), mark = tag(6, 0);
    char stale[16] = "stale", fresh[16] = "fresh", m[16] = "marker", got[16] = "";
    void *r, *s1, *s2;
    if (me->rank == 1) {
        CHECK(me, n->irecv(n, 0, got, sizeof got, &t, &r) == 0);
        n->cancel(n, r);
        t_barrier(&me->boot.b);
        CHECK(me, n->irecv(n, 0, got, sizeof got, &mark, &r) == 0); /* after the stale one */
        CHECK(me, wait_req(n, r) == 1);
        CHECK(me, strcmp(got, "marker") == 0);
        t_barrier(&me->boot.b);
        memset(got, 0, sizeof got);
        CHECK(me, n->irecv(n, 0, got, sizeof got, &t, &r) == 0);
        CHECK(me, wait_req(n, r) == 1);
        CHECK(me, strcmp(got, "fresh") == 0);
    } else {
        t_barrier(&me->boot.b);
        CHECK(me, n->isend(n, 1, stale, sizeof stale, &t, &s1) == 0);
        CHECK(me, n->isend(n, 1, m, sizeof m, &mark, &s2) == 0);
        CHECK(me, wait_req(n, s1) == 1);
        CHECK(me, wait_req(n, s2) == 1);
        t_barrier(&me->boot.b);
        CHECK(me, n->isend(n, 1, fresh, sizeof fresh, &t, &s1) == 0);
        CHECK(me, wait_req(n, s1) == 1);
    }
}

static void test_cancel_recv_late_message(void **state)
{
    (void)state;
    run_world(2, cancel_late, NULL);
}

/* A message longer than its receive fails that receive with a sentence. */
static void too_small(inst_t *me)
{
    gcl_net_t *n = me->net;
    gcl_net_tag_t t = tag(3, 0);
    char buf[100] = "";
    void *r;
    if (me->rank == 0) {
        CHECK(me, n->isend(n, 1, buf, sizeof buf, &t, &r) == 0);
        CHECK(me, wait_req(n, r) == 1);
    } else {
        CHECK(me, n->irecv(n, 0, buf, 50, &t, &r) == 0);
        CHECK(me, wait_req(n, r) == -1);
        CHECK(me, strstr(n->error, "100 bytes") != NULL);
    }
}

static void test_receive_too_small(void **state)
{
    (void)state;
    run_world(2, too_small, NULL);
}

/* Rank 1 goes away (its backend destroyed: its sockets close): rank 0's pending receive fails
 * naming the instance, and so do requests posted to it afterwards. */
static void peer_gone(inst_t *me)
{
    gcl_net_t *n = me->net;
    gcl_net_tag_t t = tag(4, 0);
    char buf[8];
    void *r;
    if (me->rank == 1) {
        n->destroy(n);
        me->net = NULL;
        t_barrier(&me->boot.b);
        return;
    }
    CHECK(me, n->irecv(n, 1, buf, sizeof buf, &t, &r) == 0);
    t_barrier(&me->boot.b);
    CHECK(me, wait_req(n, r) == -1);
    CHECK(me, strstr(n->error, "instance 1 closed the connection") != NULL);
    CHECK(me, n->isend(n, 1, buf, sizeof buf, &t, &r) == 0);
    CHECK(me, wait_req(n, r) == -1);
}

static void test_peer_gone(void **state)
{
    (void)state;
    run_world(2, peer_gone, NULL);
}

/* Between the address exchange and rank 0's connect, two strangers connect to rank 1 and say
 * hello as instance 0: one with another token, one with the job's token but meant for another
 * instance (as a dial to an address that two hosts share can arrive). Both are refused, and the
 * mesh forms with the real rank 0. */
static int rogue_fd[2] = {-1, -1};
static void rogue(const char *all, size_t bytes)
{
    uint16_t port;
    memcpy(&port, all + bytes + 4, sizeof port); /* rank 1's block: ok (4 bytes), then port */
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons(port)};
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    struct {
        uint32_t magic, instance, to;
        uint8_t token[16];
    } hi[2] = {{0x47434c54u, 0, 1, "not the token!!"}, {0x47434c54u, 0, 5, {0}}};
    memcpy(hi[1].token, token, sizeof hi[1].token);
    for (int i = 0; i < 2; i++) {
        rogue_fd[i] = socket(AF_INET, SOCK_STREAM, 0);
        if (rogue_fd[i] >= 0 && connect(rogue_fd[i], (struct sockaddr *)&a, sizeof a) == 0)
            (void)!write(rogue_fd[i], &hi[i], sizeof hi[i]);
    }
}

static void test_rogue_hello_refused(void **state)
{
    (void)state;
    run_world(2, exchange, rogue);
    for (int i = 0; i < 2; i++) {
        assert_true(rogue_fd[i] >= 0);
        char c;
        assert_int_equal(read(rogue_fd[i], &c, 1), 0); /* closed by rank 1 */
        close(rogue_fd[i]);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exchange),
        cmocka_unit_test(test_large),
        cmocka_unit_test(test_long_send_queue),
        cmocka_unit_test(test_cancel_mid_send),
        cmocka_unit_test(test_cancel_recv),
        cmocka_unit_test(test_cancel_recv_late_message),
        cmocka_unit_test(test_receive_too_small),
        cmocka_unit_test(test_peer_gone),
        cmocka_unit_test(test_rogue_hello_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
