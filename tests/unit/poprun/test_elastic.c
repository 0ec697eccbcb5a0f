/*
 * Unit tests of the elastic store's membership (poprun/src/launcher/elastic/elastic_members.h): the
 * state machine driven by scripted messages, closed connections and the clock, its answers
 * recorded. Jobs of 4 instances of 2 replicas each (slot = connection id). The store against real
 * jobs is tests/elastic.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/elastic/elastic_members.h"

#define NCONN 16

/* What the state machine said to each connection: its messages, newest last. */
struct msg {
    gcl_store_head_t h;
    char payload[512];
};
struct world {
    struct msg sent[NCONN][32];
    int nsent[NCONN];
    int dropped[NCONN];
    char said[8][700];
    int nsaid;
};

static void w_send(void *ctx, int conn, const gcl_store_head_t *h, const void *payload)
{
    struct world *w = ctx;
    assert_true(conn >= 0 && conn < NCONN && w->nsent[conn] < 32);
    struct msg *m = &w->sent[conn][w->nsent[conn]++];
    m->h = *h;
    assert_true(h->bytes < sizeof m->payload);
    if (h->bytes)
        memcpy(m->payload, payload, h->bytes);
    m->payload[h->bytes] = '\0';
}

static void w_drop(void *ctx, int conn)
{
    ((struct world *)ctx)->dropped[conn] = 1;
}

static void w_say(void *ctx, const char *line)
{
    struct world *w = ctx;
    snprintf(w->said[w->nsaid++ % 8], sizeof w->said[0], "%s", line);
}

static const uint8_t token[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static struct emembers *make(struct world *w, int min_replicas)
{
    memset(w, 0, sizeof *w);
    struct emembers_cfg cfg = {4, 2, min_replicas, 4.0, 30.0, {0}};
    memcpy(cfg.token, token, 16);
    struct emembers_io io = {w_send, w_drop, w_say, w};
    return em_create(&cfg, &io);
}

static const struct msg *last(struct world *w, int conn)
{
    assert_true(w->nsent[conn] > 0);
    return &w->sent[conn][w->nsent[conn] - 1];
}

static void message(struct emembers *em, int conn, int kind, int epoch, int arg, uint64_t seq,
                    unsigned flags, const void *payload, uint32_t bytes, double now)
{
    gcl_store_head_t h = {
        GCL_STORE_MAGIC, (uint16_t)kind, (uint16_t)flags, epoch, arg, seq, bytes, 0};
    em_message(em, conn, &h, payload, now);
}

static void hello(struct emembers *em, int conn, int slot, int join, const uint8_t *tok)
{
    gcl_store_hello_t m;
    memset(&m, 0, sizeof m);
    memcpy(m.token, tok, 16);
    m.pid = 100 + conn;
    m.join = join;
    snprintf(m.host, sizeof m.host, "h%d", slot);
    message(em, conn, GCL_STORE_HELLO, 0, slot, 0, 0, &m, sizeof m, 0);
}

/* The membership in an EPOCH message: members' slots, rank. */
static void epoch_of(const struct msg *m, int *members, int *slots, int *nlost, int *lost)
{
    assert_int_equal(m->h.kind, GCL_STORE_EPOCH);
    gcl_store_epoch_t e;
    memcpy(&e, m->payload, sizeof e);
    *members = e.members;
    *nlost = e.lost;
    const int32_t *l = (const int32_t *)(m->payload + sizeof e);
    for (int i = 0; i < e.members; i++)
        slots[i] = l[i];
    for (int i = 0; i < e.lost; i++)
        lost[i] = l[e.members + i];
}

static struct emembers *started(struct world *w, int min_replicas)
{
    struct emembers *em = make(w, min_replicas);
    for (int s = 0; s < 4; s++)
        hello(em, s, s, 0, token);
    return em;
}

static void test_epoch_zero(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = make(&w, 2);
    for (int s = 0; s < 3; s++) {
        hello(em, s, s, 0, token);
        assert_int_equal(last(&w, s)->h.kind, GCL_STORE_WELCOME);
    }
    assert_int_equal(em_epoch(em), -1); /* not before the last one */
    hello(em, 3, 3, 0, token);
    for (int s = 0; s < 4; s++) {
        int n, slots[4], nl, lost[4];
        epoch_of(last(&w, s), &n, slots, &nl, lost);
        assert_int_equal(n, 4);
        assert_int_equal(last(&w, s)->h.arg, s); /* rank = slot */
        assert_int_equal(nl, 0);
    }
    assert_int_equal(em_epoch(em), 0);
    em_free(em);
}

static void test_refusals(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = make(&w, 2);
    uint8_t wrong[16] = {0};
    hello(em, 0, 0, 0, wrong);
    assert_int_equal(last(&w, 0)->h.kind, GCL_STORE_REFUSE);
    assert_string_equal(last(&w, 0)->payload, "wrong token: not this job's instance");
    assert_true(w.dropped[0]);
    hello(em, 1, 7, 0, token);
    assert_string_equal(last(&w, 1)->payload, "no such instance in this job");
    hello(em, 2, 1, 1, token);
    assert_string_equal(last(&w, 2)->payload, "the job has not started: nothing to join");
    hello(em, 3, 1, 0, token);
    hello(em, 4, 1, 0, token);
    assert_string_equal(last(&w, 4)->payload, "this instance has already said hello");
    em_free(em);
}

/* An allgather of 4 bytes from each member: every member gets the 4 blocks in rank order. */
static void test_allgather_and_broadcast(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    for (int s = 0; s < 4; s++) {
        int32_t v = 10 * s;
        message(em, s, GCL_STORE_COLL, 0, -1, 1, 0, &v, 4, 0);
        if (s < 3)
            assert_int_equal(last(&w, s)->h.kind, GCL_STORE_EPOCH); /* no answer yet */
    }
    for (int s = 0; s < 4; s++) {
        const struct msg *m = last(&w, s);
        assert_int_equal(m->h.kind, GCL_STORE_COLL_DONE);
        assert_int_equal(m->h.bytes, 16);
        assert_int_equal(m->h.flags, 0);
        const int32_t *v = (const int32_t *)m->payload;
        assert_int_equal(v[0] + v[1] + v[2] + v[3], 60);
        assert_int_equal(v[3], 30);
    }
    for (int s = 0; s < 4; s++) {
        int32_t v = 100 + s;
        message(em, s, GCL_STORE_COLL, 0, 2, 2, 0, &v, 4, 0);
    }
    for (int s = 0; s < 4; s++)
        assert_int_equal(*(const int32_t *)last(&w, s)->payload, 102); /* root 2's */
    em_free(em);
}

/* A member that dies during a call: the others' call fails, they hear it, they resize, and the
 * next epoch holds the 3 left, renumbered; a late arrival of the failed call fails too. */
static void test_shrink(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    int32_t v = 1;
    message(em, 0, GCL_STORE_COLL, 0, -1, 1, 0, &v, 4, 1);
    message(em, 2, GCL_STORE_COLL, 0, -1, 1, 0, &v, 4, 1);
    em_closed(em, 1, 2.0);
    assert_int_equal(w.sent[0][w.nsent[0] - 2].h.kind, GCL_STORE_NEWS);
    assert_int_equal(w.sent[0][w.nsent[0] - 2].h.arg, 1);
    assert_int_equal(last(&w, 0)->h.kind, GCL_STORE_COLL_FAIL);
    assert_non_null(strstr(last(&w, 0)->payload, "instance 1 (host h1, pid 101) was lost"));
    assert_int_equal(last(&w, 3)->h.kind, GCL_STORE_NEWS);
    message(em, 3, GCL_STORE_COLL, 0, -1, 1, 0, &v, 4, 2.1);
    assert_int_equal(last(&w, 3)->h.kind, GCL_STORE_COLL_FAIL);
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_RESIZE, 0, 0, 0, GCL_STORE_F_FAILED, NULL, 0, 2.2);
    assert_int_equal(em_epoch(em), 1);
    int expect_rank[4] = {0, -1, 1, 2};
    for (int s = 0; s < 4; s++) {
        if (s == 1)
            continue;
        int n, slots[4], nl, lost[4];
        epoch_of(last(&w, s), &n, slots, &nl, lost);
        assert_int_equal(n, 3);
        assert_int_equal(last(&w, s)->h.arg, expect_rank[s]);
        assert_int_equal(slots[0] * 100 + slots[1] * 10 + slots[2], 23);
        assert_int_equal(nl, 1);
        assert_int_equal(lost[0], 1);
    }
    char why[200];
    assert_true(em_slot_lost(em, 1, why, sizeof why));
    assert_non_null(strstr(why, "connection to poprun closed"));
    int n;
    const struct em_event *ev = em_events(em, &n);
    assert_int_equal(n, 2);
    assert_int_equal(ev[1].members, 3);
    assert_true(ev[1].first_t == 2.0 && ev[1].t == 2.2);
    em_free(em);
}

/* Below --min-replicas: STOP for all, naming the instances lost. */
static void test_below_min(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 7);
    em_closed(em, 2, 1.0);
    for (int s = 0; s < 4; s++)
        if (s != 2)
            message(em, s, GCL_STORE_RESIZE, 0, 0, 0, GCL_STORE_F_FAILED, NULL, 0, 1.1);
    char why[GCL_STORE_TEXT_MAX];
    assert_true(em_stopped(em, why, sizeof why));
    assert_string_equal(why, "6 replicas left (instance 2 lost), fewer than --min-replicas 7");
    assert_int_equal(last(&w, 0)->h.kind, GCL_STORE_STOP);
    assert_string_equal(last(&w, 3)->payload, why);
    em_free(em);
}

/* A resize with no loss and no joiner after a failed run: the failure was the program's own. */
static void test_cause_of_its_own(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    for (int s = 0; s < 4; s++)
        message(em, s, GCL_STORE_RESIZE, 0, 0, 0, s == 0 ? GCL_STORE_F_FAILED : 0, NULL, 0, 1);
    char why[GCL_STORE_TEXT_MAX];
    assert_true(em_stopped(em, why, sizeof why));
    assert_non_null(strstr(why, "no instance was lost or joined"));
    em_free(em);
}

/* Two lost at once, one more during the resize, and one that never comes (evicted after the
 * resize timeout): the epoch forms from those that asked. */
static void test_losses_during_resize(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 1);
    em_closed(em, 1, 1.0);
    em_closed(em, 2, 1.0);
    message(em, 0, GCL_STORE_RESIZE, 0, 0, 0, GCL_STORE_F_FAILED, NULL, 0, 1.1);
    for (double t = 2; t < 32; t += 1) { /* 0 and 3 beat: alive, and 3 busy elsewhere */
        message(em, 0, GCL_STORE_BEAT, 0, 0, 0, 0, NULL, 0, t);
        message(em, 3, GCL_STORE_BEAT, 0, 0, 0, 0, NULL, 0, t);
        em_tick(em, t);
        if (t < 31)
            assert_int_equal(em_epoch(em), 0);
    }
    em_tick(em, 1.1 + 30.5); /* 3 never asked: evicted, the epoch forms with 0 alone */
    assert_int_equal(em_epoch(em), 1);
    assert_true(w.dropped[3]);
    int n, slots[4], nl, lost[4];
    epoch_of(last(&w, 0), &n, slots, &nl, lost);
    assert_int_equal(n, 1);
    assert_int_equal(nl, 3);
    char why[240];
    assert_true(em_slot_lost(em, 3, why, sizeof why));
    assert_non_null(strstr(why, "did not come to the resize within 30.0 s"));
    em_free(em);
}

/* A silent member (no beat for the beat timeout) is lost. */
static void test_silent(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    for (double t = 1; t < 6; t += 1)
        for (int s = 0; s < 3; s++)
            message(em, s, GCL_STORE_BEAT, 0, 0, 0, 0, NULL, 0, t);
    em_tick(em, 3.9);
    assert_false(em_slot_lost(em, 3, NULL, 0));
    em_tick(em, 5.5);
    char why[240];
    assert_true(em_slot_lost(em, 3, why, sizeof why));
    assert_non_null(strstr(why, "silent for 5.5 s"));
    assert_false(em_slot_lost(em, 0, NULL, 0));
    em_free(em);
}

/* A replacement: refused while its slot is a member, waits once it is lost, is flagged in every
 * answer meanwhile, and joins at the next resize in its slot's rank; then every member's BYE
 * completes the job, and a later joiner is refused. */
static void test_grow(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    hello(em, 4, 1, 1, token);
    assert_string_equal(last(&w, 4)->payload, "this instance is not lost: nothing to replace");
    em_closed(em, 1, 1);
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_RESIZE, 0, 0, 0, GCL_STORE_F_FAILED, NULL, 0, 1);
    int vac[4];
    assert_int_equal(em_vacant(em, vac, 4), 1);
    assert_int_equal(vac[0], 1);
    hello(em, 5, 1, 1, token);
    assert_int_equal(last(&w, 5)->h.kind, GCL_STORE_WELCOME);
    em_lost(em, 1, "it exited with status 1", 1.5); /* the first process's late status */
    assert_true(em_slot_member(em, 1));             /* is not the replacement's */
    int32_t v = 0;
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_COLL, 1, -1, 1, 0, &v, 4, 2);
    assert_int_equal(last(&w, 0)->h.flags, GCL_STORE_F_JOINERS);
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_RESIZE, 1, 0, 0, 0, NULL, 0, 3);
    assert_int_equal(em_epoch(em), 2);
    int n, slots[4], nl, lost[4];
    epoch_of(last(&w, 5), &n, slots, &nl, lost);
    assert_int_equal(n, 4);
    assert_int_equal(last(&w, 5)->h.arg, 1);
    assert_true(em_slot_member(em, 1));
    for (int c = 0; c < 6; c++)
        if (c != 1 && c != 4)
            message(em, c, GCL_STORE_BYE, 2, 0, 0, 0, NULL, 0, 4);
    assert_true(em_completed(em));
    em_free(em);
}

/* The job stops (em_hold): an instance that ends from then on leaves no vacancy (nobody is
 * replaced) and no line on poprun's stderr; the others still hear of it, so that none waits for
 * it in a bootstrap call. Before the hold the same loss leaves a vacancy and a line. */
static void test_hold(void **state)
{
    (void)state;
    struct world w;
    int vac[4];
    struct emembers *em = started(&w, 2);
    em_closed(em, 1, 1);
    assert_int_equal(em_vacant(em, vac, 4), 1);
    assert_int_equal(w.nsaid, 1);
    em_free(em);
    em = started(&w, 2);
    em_hold(em);
    int32_t v = 0;
    message(em, 0, GCL_STORE_COLL, 0, -1, 1, 0, &v, 4, 1);
    em_closed(em, 1, 1);
    assert_int_equal(w.nsaid, 0);
    assert_int_equal(em_vacant(em, vac, 4), 0);
    assert_int_equal(last(&w, 0)->h.kind, GCL_STORE_COLL_FAIL);
    assert_int_equal(last(&w, 3)->h.kind, GCL_STORE_NEWS);
    em_free(em);
}

/* Each loss of a slot counts, the replacement's too (after it joined): poprun's server starts
 * the next replacement once the count moved past the one it started the last at. */
static void test_replacement_lost(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 2);
    assert_int_equal(em_slot_losses(em, 1), 0);
    em_closed(em, 1, 1);
    assert_int_equal(em_slot_losses(em, 1), 1);
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_RESIZE, 0, 0, 0, GCL_STORE_F_FAILED, NULL, 0, 1);
    hello(em, 5, 1, 1, token);
    em_lost(em, 1, "it exited with status 1", 1.5); /* the first process's late status */
    assert_int_equal(em_slot_losses(em, 1), 1);
    for (int s = 0; s < 4; s++)
        if (s != 1)
            message(em, s, GCL_STORE_RESIZE, 1, 0, 0, 0, NULL, 0, 2);
    assert_int_equal(em_epoch(em), 2);
    for (int c = 0; c < 6; c++) /* the replacement falls silent, as behind a partition */
        if (c != 1 && c != 5)
            message(em, c, GCL_STORE_BEAT, 2, 0, 0, 0, NULL, 0, 7);
    em_tick(em, 7);
    assert_int_equal(em_slot_losses(em, 1), 2);
    int vac[4];
    assert_int_equal(em_vacant(em, vac, 4), 1);
    assert_int_equal(vac[0], 1);
    hello(em, 6, 1, 1, token); /* the next replacement is taken */
    assert_int_equal(last(&w, 6)->h.kind, GCL_STORE_WELCOME);
    em_free(em);
}

/* A member that asks for a resize of an epoch that is over was left out: STOP. */
static void test_stale_resize(void **state)
{
    (void)state;
    struct world w;
    struct emembers *em = started(&w, 1);
    message(em, 0, GCL_STORE_RESIZE, 0, 0, 0, 0, NULL, 0, 1);
    em_closed(em, 3, 1);
    message(em, 1, GCL_STORE_RESIZE, 0, 0, 0, 0, NULL, 0, 1);
    message(em, 2, GCL_STORE_RESIZE, 0, 0, 0, 0, NULL, 0, 1);
    assert_int_equal(em_epoch(em), 1);
    message(em, 2, GCL_STORE_RESIZE, 0, 0, 0, 0, NULL, 0, 2);
    assert_int_equal(last(&w, 2)->h.kind, GCL_STORE_STOP);
    em_free(em);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_epoch_zero),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_allgather_and_broadcast),
        cmocka_unit_test(test_shrink),
        cmocka_unit_test(test_below_min),
        cmocka_unit_test(test_cause_of_its_own),
        cmocka_unit_test(test_losses_during_resize),
        cmocka_unit_test(test_silent),
        cmocka_unit_test(test_grow),
        cmocka_unit_test(test_replacement_lost),
        cmocka_unit_test(test_hold),
        cmocka_unit_test(test_stale_resize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
