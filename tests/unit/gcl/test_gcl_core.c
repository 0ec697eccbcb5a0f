/*
 * libgcl's core modules at the thread tier, without gcl_init: the error path (err.c), call
 * signatures (sig.c), the job's layout (job.c), the host box's slot state machine (hostbox.c),
 * waiting on a doorbell (wait.c), the diagnostics (diag.c), and the local and shm transports
 * carrying real messages between two threads (transport_local.c, transport_shm.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "job/diag.h"
#include "base/err.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "base/vocab/signature.h"
#include "transport/net/backends.h"
#include "transport/transport.h"
#include "base/wait.h"

static const uint8_t token[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void test_err(void **state)
{
    (void)state;
    gcl_err_t a = GCL_ERR_INIT, b = GCL_ERR_INIT;
    assert_string_equal(gcl_err_text(&a), "");
    assert_int_equal(gcl_err_set(&a, GCL_ERR_TIMEOUT, "waited %d s", 3), GCL_ERR_TIMEOUT);
    assert_string_equal(gcl_err_text(&a), "waited 3 s");
    const char *text = gcl_err_text(&a);
    gcl_err_move(&b, &a); /* handed over, not copied */
    assert_ptr_equal(gcl_err_text(&b), text);
    assert_int_equal(b.status, GCL_ERR_TIMEOUT);
    assert_int_equal(a.status, GCL_OK);
    assert_string_equal(gcl_err_text(&a), "");
    gcl_err_set(&b, GCL_ERR_MISMATCH, "%s", "again"); /* replaces, frees the old */
    assert_string_equal(gcl_err_text(&b), "again");
    gcl_err_move(&b, &b);
    assert_string_equal(gcl_err_text(&b), "again");
    gcl_err_clear(&b);
    assert_int_equal(b.status, GCL_OK);
}

static void test_sig(void **state)
{
    (void)state;
    gcl_sig_t s = {.seq = 3,
                   .coll = 0,
                   .dtype = 0,
                   .op = 0,
                   .gkind = 0,
                   .gsize = 8,
                   .root = -1,
                   .algo = gcl_sig_hash("canonical/ring"),
                   .count = 1024};
    char buf[200];
    gcl_sig_describe(&s, buf, sizeof buf);
    assert_non_null(strstr(buf, "all_reduce #3 of 1024 x f32, op sum"));
    assert_int_not_equal(gcl_sig_hash("host_direct/ring"), s.algo);
    s.coll = GCL_SIG_P2P;
    gcl_sig_describe(&s, buf, sizeof buf);
    assert_non_null(strstr(buf, "send/recv #3 of 1024"));
    int v[3] = {1, 2, 3}, w[3] = {1, 2, 4};
    assert_int_not_equal(gcl_hash_ints(v, 3), gcl_hash_ints(w, 3));
}

/* A job of INSTANCES instances of PER replicas each; this process is instance ME, and the
 * first HERE instances share its host. */
static void make_job(gcl_job_t *j, int instances, int per, int me, int here)
{
    memset(j, 0, sizeof *j);
    j->num_instances = instances;
    j->instance_index = me;
    j->num_replicas = instances * per;
    j->ipus_per_replica = 1;
    j->num_ipus = j->num_replicas;
    j->num_local_ipus = per;
    j->first_ipu = me * per;
    j->peers = calloc((size_t)instances, sizeof *j->peers);
    for (int i = 0; i < instances; i++) {
        gcl_peer_info_t *p = &j->peers[i];
        p->pid = 100 + i;
        p->replica_offset = i * per;
        p->num_local_replicas = per;
        p->num_replicas = j->num_replicas;
        p->ipus_per_replica = 1;
        snprintf(p->hostname, sizeof p->hostname, "h%d", i < here ? 0 : i);
        snprintf(p->hostid, sizeof p->hostid, "h%d/ns", i < here ? 0 : i);
    }
}

static void test_job(void **state)
{
    (void)state;
    gcl_job_t j;
    gcl_err_t e = GCL_ERR_INIT;
    make_job(&j, 4, 2, 1, 2);
    assert_int_equal(gcl_job_map(&j, &e), GCL_OK);
    assert_int_equal(j.num_hosts, 3);
    assert_int_equal(j.host_index, 0);
    assert_int_equal(j.ipu_instance[5], 2);
    assert_int_equal(j.ipu_hostlocal[3], 3); /* instances 0 and 1 share the box */
    assert_int_equal(j.ipu_hostlocal[4], -1);
    assert_int_equal(gcl_job_local_index(&j, 5), 1);
    int leader;
    assert_int_equal(gcl_job_instances_here(&j, &leader), 2);
    assert_int_equal(leader, 0);
    char who[160];
    gcl_job_describe_ipu(&j, 6, who, sizeof who);
    assert_string_equal(who, "replica 6 (instance 3 on host h3, pid 103)");
    gcl_job_free(&j);
    /* Instances that disagree, or replicas out of order, are refused with a sentence. */
    make_job(&j, 3, 2, 0, 3);
    j.peers[2].replica_offset = 5;
    assert_int_equal(gcl_job_map(&j, &e), GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gcl_err_text(&e), "instance 2's replicas start at 5, not 4"));
    gcl_job_free(&j);
    make_job(&j, 2, 2, 0, 2);
    j.peers[1].num_replicas = 8;
    assert_int_equal(gcl_job_map(&j, &e), GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(gcl_err_text(&e), "disagree"));
    gcl_job_free(&j);
    gcl_err_clear(&e);
}

static void box(gcl_hostbox_t *hb, int ipus, int shared)
{
    gcl_hostbox_sizes_t z = {.slots = 2, .chunks = 3, .chunk_bytes = 4096, .direct_bytes = 65536};
    char name[64], err[256];
    snprintf(name, sizeof name, "/gcl-test-core-%d", (int)getpid());
    assert_int_equal(gcl_hostbox_create(hb, shared ? name : NULL, token, ipus, &z, err, sizeof err),
                     GCL_OK);
}

/* The pid of a process that existed and is gone (reaped). */
static pid_t dead_pid(void)
{
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0)
        _exit(0);
    int st;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    return pid;
}

/* Shared state whose holder died holding it: the poison lock is taken over, and a slot a dead
 * receiver left BUSY is given up, instead of waiting forever. */
static void test_dead_holders(void **state)
{
    (void)state;
    gcl_hostbox_t hb;
    box(&hb, 2, 0);
    pid_t gone = dead_pid();
    assert_true(gcl_hostbox_pid_gone(gone));
    assert_false(gcl_hostbox_pid_gone(getpid()));
    atomic_store(&hb.ipus[0].poison_lock, (uint32_t)gone);
    memset(hb.ipus[0].poison, 'x', sizeof hb.ipus[0].poison); /* torn: no terminator */
    gcl_diag_poison_ipu(&hb, 0, 5ull << 32 | 1, "the reason");
    assert_int_equal(atomic_load(&hb.ipus[0].poison_key), 5ull << 32 | 1);
    assert_string_equal(hb.ipus[0].poison, "the reason");
    assert_int_equal(atomic_load(&hb.ipus[0].poison_lock), 0);
    gcl_err_t e = GCL_ERR_INIT;
    atomic_store(&hb.ipus[0].poison_lock, (uint32_t)gone);
    assert_int_equal(gcl_diag_poisoned(&hb, 0, 5ull << 32 | 1, &e), 1);
    assert_string_equal(gcl_err_text(&e), "the reason");
    gcl_err_clear(&e);
    hb.ipus[1].pid = gone;
    atomic_store(&gcl_hostbox_slot(&hb, 0, 1, 0)->state, GCL_SLOT_BUSY);
    assert_int_equal(gcl_hostbox_retract_slot(&hb, 0, 1, 0), 0);
    gcl_hostbox_destroy(&hb);
}

static void test_hostbox_slots(void **state)
{
    (void)state;
    gcl_hostbox_t hb;
    box(&hb, 3, 1);
    /* FREE -> FULL (sender posts) -> BUSY (receiver claims by key) -> FREE (released). */
    int s0 = gcl_hostbox_free_slot(&hb, 0, 1);
    assert_int_equal(s0, 0);
    gcl_hostbox_slot_t *s = gcl_hostbox_slot(&hb, 0, 1, s0);
    s->key0 = 7;
    s->key1 = 9;
    atomic_store(&s->state, GCL_SLOT_FULL);
    assert_int_equal(gcl_hostbox_free_slot(&hb, 0, 1), 1);
    assert_true(gcl_hostbox_has_message(&hb, 0, 1, 7));
    assert_false(gcl_hostbox_has_message(&hb, 0, 1, 8));
    assert_false(gcl_hostbox_has_message(&hb, 0, 2, 7));           /* slots are per ordered pair */
    assert_int_equal(gcl_hostbox_claim_slot(&hb, 0, 1, 7, 8), -1); /* another message */
    assert_int_equal(gcl_hostbox_claim_slot(&hb, 0, 1, 7, 9), s0);
    assert_int_equal(atomic_load(&s->state), GCL_SLOT_BUSY);
    assert_int_equal(gcl_hostbox_claim_slot(&hb, 0, 1, 7, 9), -1); /* claimed once only */
    gcl_hostbox_release_slot(&hb, 0, 1, s0);
    assert_int_equal(atomic_load(&s->state), GCL_SLOT_FREE);
    /* A posted slot nobody claimed can be taken back; a consumed one reports so. */
    s->key0 = 11;
    atomic_store(&s->state, GCL_SLOT_FULL);
    assert_int_equal(gcl_hostbox_retract_slot(&hb, 0, 1, s0), 1);
    assert_int_equal(atomic_load(&s->state), GCL_SLOT_FREE);
    assert_int_equal(gcl_hostbox_retract_slot(&hb, 0, 1, s0), 0);
    /* A mismatched message is rejected, not taken: the slot is neither free nor a message
     * waiting, and its sender frees it when it takes it back. */
    s->key0 = 12;
    atomic_store(&s->state, GCL_SLOT_FULL);
    assert_int_equal(gcl_hostbox_claim_slot(&hb, 0, 1, 12, 9), s0);
    gcl_hostbox_reject_slot(&hb, 0, 1, s0);
    assert_int_equal(atomic_load(&s->state), GCL_SLOT_REJECTED);
    assert_false(gcl_hostbox_has_message(&hb, 0, 1, 12));
    assert_int_equal(gcl_hostbox_claim_slot(&hb, 0, 1, 12, 9), -1);
    assert_int_equal(gcl_hostbox_free_slot(&hb, 0, 1), 1);
    assert_int_equal(gcl_hostbox_retract_slot(&hb, 0, 1, s0), 1);
    assert_int_equal(atomic_load(&s->state), GCL_SLOT_FREE);
    /* Both slots in flight: none free. */
    atomic_store(&gcl_hostbox_slot(&hb, 0, 1, 0)->state, GCL_SLOT_FULL);
    atomic_store(&gcl_hostbox_slot(&hb, 0, 1, 1)->state, GCL_SLOT_FULL);
    assert_int_equal(gcl_hostbox_free_slot(&hb, 0, 1), -1);
    /* Staging chunks: three, then none, then one back. */
    uint32_t c[3];
    for (int i = 0; i < 3; i++)
        assert_int_not_equal(c[i] = gcl_hostbox_take_chunk(&hb, 2), GCL_HOSTBOX_NO_CHUNK);
    assert_int_equal(gcl_hostbox_take_chunk(&hb, 2), GCL_HOSTBOX_NO_CHUNK);
    gcl_hostbox_give_chunk(&hb, 2, c[1]);
    assert_int_equal(gcl_hostbox_take_chunk(&hb, 2), c[1]);
    /* Another process attaches only with the token. */
    gcl_hostbox_t other;
    char err[256];
    uint8_t wrong[16] = {0};
    assert_int_equal(gcl_hostbox_attach(&other, hb.name, wrong, err, sizeof err), GCL_ERR_SYSTEM);
    assert_int_equal(gcl_hostbox_attach(&other, hb.name, token, err, sizeof err), GCL_OK);
    assert_int_equal(other.num_ipus, 3);
    gcl_hostbox_destroy(&other);
    gcl_hostbox_unlink(&hb);
    gcl_hostbox_destroy(&hb);
}

typedef struct {
    gcl_hostbox_t *hb;
    double delay;
} ringer_t;

static void *ring_later(void *arg)
{
    ringer_t *r = arg;
    struct timespec ts = {0, (long)(r->delay * 1e9)};
    nanosleep(&ts, NULL);
    gcl_hostbox_ring(r->hb, 0);
    return NULL;
}

static void test_wait_doorbell(void **state)
{
    (void)state;
    gcl_hostbox_t hb;
    box(&hb, 1, 0);
    gcl_params_t p = {.timeout_s = 5, .stall_warn_s = 1, .spin_count = 0};
    gcl_waiter_t w;
    gcl_waiter_init(&w, &p);
    /* A sleeping waiter is woken by a ring from another thread. */
    ringer_t r = {&hb, 0.02};
    pthread_t t;
    uint32_t seen = atomic_load(&hb.ipus[0].bell.rings);
    for (int i = 0; i < 52; i++) /* past the yields: the next idle calls sleep */
        gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, NULL, NULL);
    pthread_create(&t, NULL, ring_later, &r);
    double t0 = gcl_now();
    while (atomic_load(&hb.ipus[0].bell.rings) == seen && gcl_now() - t0 < 5)
        gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, NULL, NULL);
    pthread_join(t, NULL);
    assert_int_not_equal(atomic_load(&hb.ipus[0].bell.rings), seen);
    assert_int_equal(atomic_load(&hb.ipus[0].bell.sleeping), 0);
    /* A ring that came in before the waiter reads the doorbell is not lost: it does not sleep.
     * Twenty such calls take no time; twenty naps would take 2 s. */
    uint32_t before = atomic_load(&hb.ipus[0].bell.rings);
    gcl_hostbox_ring(&hb, 0);
    t0 = gcl_now();
    for (int i = 0; i < 20; i++)
        gcl_waiter_idle(&w, &hb.ipus[0].bell, before, 0, NULL, NULL);
    assert_true(gcl_now() - t0 < 1.0);
    gcl_waiter_progress(&w);
    assert_true(gcl_waiter_stalled(&w) < 0.5);
    gcl_hostbox_destroy(&hb);
}

typedef struct {
    gcl_hostbox_t *hb;
    atomic_int posted, rechecks;
} notified_t;

static void *notify_later(void *arg)
{
    notified_t *n = arg;
    struct timespec ts = {0, 20 * 1000 * 1000};
    nanosleep(&ts, NULL);
    atomic_store(&n->posted, 1);
    gcl_hostbox_notify(n->hb, 0);
    return NULL;
}

static int recheck_posted(void *arg)
{
    notified_t *n = arg;
    atomic_fetch_add(&n->rechecks, 1);
    return atomic_load(&n->posted);
}

/* A notify rings only a thread that sleeps or is about to: news posted while it is awake is
 * found by the pass it makes after announcing its sleep, and a sleeper is woken by it. */
static void test_wait_notify(void **state)
{
    (void)state;
    gcl_hostbox_t hb;
    box(&hb, 1, 0);
    gcl_params_t p = {.timeout_s = 5, .stall_warn_s = 1, .spin_count = 0};
    gcl_waiter_t w;
    gcl_waiter_init(&w, &p);
    notified_t n = {.hb = &hb};
    /* Awake: no ring is counted. */
    uint32_t seen = atomic_load(&hb.ipus[0].bell.rings);
    gcl_hostbox_notify(&hb, 0);
    assert_int_equal(atomic_load(&hb.ipus[0].bell.rings), seen);
    /* Posted before the sleep: the recheck finds it, and the waiter does not sleep (twenty
     * naps would take 2 s). */
    atomic_store(&n.posted, 1);
    for (int i = 0; i < 52; i++)
        gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, NULL, NULL);
    double t0 = gcl_now();
    for (int i = 0; i < 20; i++)
        gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, recheck_posted, &n);
    assert_true(gcl_now() - t0 < 1.0);
    assert_true(atomic_load(&n.rechecks) >= 1);
    /* Posted while it sleeps: the notify wakes it well before its 100 ms nap ends. */
    atomic_store(&n.posted, 0);
    for (int i = 0; i < 52; i++)
        gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, NULL, NULL);
    pthread_t t;
    pthread_create(&t, NULL, notify_later, &n);
    t0 = gcl_now();
    while (!gcl_waiter_idle(&w, &hb.ipus[0].bell, seen, 0, recheck_posted, &n) &&
           !atomic_load(&n.posted) && gcl_now() - t0 < 5)
        ;
    pthread_join(t, NULL);
    assert_int_equal(atomic_load(&n.posted), 1);
    assert_int_equal(atomic_load(&hb.ipus[0].bell.sleeping), 0);
    gcl_hostbox_destroy(&hb);
}

/* An alarm is a ring that the thread's checks answer at once: it counts as a ring (wakes a
 * sleeper), and gcl_doorbell_alarmed reports it once; a plain ring is no alarm. */
static void test_wait_alarm(void **state)
{
    (void)state;
    gcl_hostbox_t hb;
    box(&hb, 1, 0);
    gcl_doorbell_t *bell = &hb.ipus[0].bell;
    uint32_t seen = 0, rings = atomic_load(&bell->rings);
    assert_int_equal(gcl_doorbell_alarmed(bell, &seen), 0);
    gcl_hostbox_ring(&hb, 0);
    assert_int_equal(gcl_doorbell_alarmed(bell, &seen), 0);
    gcl_hostbox_alarm(&hb, 0);
    gcl_hostbox_alarm(&hb, 0);
    assert_int_equal(atomic_load(&bell->rings), rings + 3);
    assert_int_equal(gcl_doorbell_alarmed(bell, &seen), 1); /* two alarms, one round of checks */
    assert_int_equal(gcl_doorbell_alarmed(bell, &seen), 0);
    /* An alarm that came before the wait is not slept through (a nap would take 100 ms). */
    gcl_params_t p = {.timeout_s = 5, .stall_warn_s = 1, .spin_count = 0};
    gcl_waiter_t w;
    gcl_waiter_init(&w, &p);
    uint32_t before = atomic_load(&bell->rings);
    for (int i = 0; i < 52; i++) /* past the yields: the next idle calls sleep */
        gcl_waiter_idle(&w, bell, before, 0, NULL, NULL);
    double t0 = gcl_now();
    gcl_hostbox_alarm(&hb, 0);
    gcl_waiter_idle(&w, bell, before, 0, NULL, NULL);
    assert_true(gcl_now() - t0 < 0.05);
    assert_int_equal(gcl_doorbell_alarmed(bell, &seen), 1);
    gcl_hostbox_destroy(&hb);
}

static void test_diag(void **state)
{
    (void)state;
    gcl_job_t j;
    gcl_err_t e = GCL_ERR_INIT;
    make_job(&j, 2, 2, 0, 2);
    j.peers[0].pid = j.peers[1].pid = (int32_t)getpid();
    assert_int_equal(gcl_job_map(&j, &e), GCL_OK);
    gcl_hostbox_t hb;
    box(&hb, 4, 0);
    gcl_sig_t a = {.seq = 1, .gsize = 4, .root = -1, .count = 100}, b = a;
    b.count = 64;
    assert_int_equal(gcl_diag_check_message(&e, &j, 0, 3, &a, &a, 400, 400), GCL_OK);
    assert_int_equal(gcl_diag_check_message(&e, &j, 0, 3, &a, &b, 400, 256), GCL_ERR_MISMATCH);
    assert_non_null(strstr(gcl_err_text(&e), "replica 3 (instance 1 on host h0"));
    assert_non_null(strstr(gcl_err_text(&e), "of 64 x f32"));
    assert_int_equal(gcl_diag_check_message(&e, &j, 0, 3, &a, &a, 400, 12), GCL_ERR_MISMATCH);
    assert_non_null(strstr(gcl_err_text(&e), "a message of 12 bytes"));
    /* Liveness: a failed peer, one that returned, one that left. */
    char why[256];
    atomic_store(&hb.ipus[2].life, gcl_life(0, GCL_IPU_RUNNING));
    assert_false(gcl_diag_peer_gone(&j, &hb, 1, 2, why, sizeof why));
    snprintf(hb.ipus[2].reason, sizeof hb.ipus[2].reason, "it divided by zero");
    gcl_hostbox_set_state(&hb.ipus[2], GCL_IPU_FAILED);
    assert_true(gcl_diag_peer_gone(&j, &hb, 1, 2, why, sizeof why));
    assert_non_null(strstr(why, "failed: it divided by zero"));
    /* An IPU that failed after another of its instance is explained by that one, the cause
     * (IPUs 2 and 3 share a process here). */
    hb.ipus[2].pid = hb.ipus[3].pid = 4242;
    hb.ipus[2].global_ipu = 2;
    hb.ipus[3].global_ipu = 3;
    hb.ipus[3].after_other = 1;
    snprintf(hb.ipus[3].reason, sizeof hb.ipus[3].reason, "aborted: a quote of a quote");
    gcl_hostbox_set_state(&hb.ipus[3], GCL_IPU_FAILED);
    assert_true(gcl_diag_peer_gone(&j, &hb, 1, 3, why, sizeof why));
    assert_non_null(strstr(why, "replica 3 (instance 1 on host h0"));
    assert_non_null(strstr(why, "failed after replica 2 (instance 1 on host h0"));
    assert_non_null(strstr(why, "which failed first: it divided by zero"));
    assert_null(strstr(why, "a quote of a quote"));
    hb.ipus[2].pid = 4243; /* no cause in its process: its own reason */
    assert_true(gcl_diag_peer_gone(&j, &hb, 1, 3, why, sizeof why));
    assert_non_null(strstr(why, "replica 3 (instance 1 on host h0, pid"));
    assert_non_null(strstr(why, "failed: aborted: a quote of a quote"));
    hb.ipus[2].pid = hb.ipus[3].pid = -1;
    hb.ipus[2].global_ipu = hb.ipus[3].global_ipu = -1;
    hb.ipus[3].after_other = 0;
    gcl_hostbox_set_state(&hb.ipus[3], GCL_IPU_IDLE);
    atomic_store(&hb.ipus[2].life, gcl_life(1, GCL_IPU_FINISHED));
    assert_true(gcl_diag_peer_gone(&j, &hb, 1, 2, why, sizeof why));
    assert_non_null(strstr(why, "returned from its program"));
    assert_false(gcl_diag_peer_gone(&j, &hb, 2, 2, why, sizeof why)); /* an earlier run */
    /* One that starts run 2 is running it, never "returned" from it: its run and its state
     * change in one store (they were two, and a peer could read the new run beside the old
     * state). */
    atomic_store(&hb.ipus[2].life, gcl_life(2, GCL_IPU_RUNNING));
    assert_false(gcl_diag_peer_gone(&j, &hb, 2, 2, why, sizeof why));
    assert_int_equal(gcl_life_gen(gcl_hostbox_life(&hb.ipus[2])), 2);
    gcl_hostbox_set_state(&hb.ipus[2], GCL_IPU_FINISHED);
    assert_int_equal(gcl_life_gen(gcl_hostbox_life(&hb.ipus[2])), 2);
    assert_true(gcl_diag_peer_gone(&j, &hb, 2, 2, why, sizeof why));
    /* A published call with another signature is proof of a mismatch. */
    int ipus[4] = {0, 1, 2, 3};
    uint64_t key = (5ull << 32) | 1;
    gcl_call_view_t v = {&j, &hb, 1, 0, ipus, 4, 0, key, &a, NULL, 0};
    assert_false(gcl_diag_find_mismatch(&v, 0, why, sizeof why));
    gcl_diag_publish_call(&hb, 1, key, &b);
    assert_true(gcl_diag_find_mismatch(&v, 0, why, sizeof why));
    assert_non_null(strstr(why, "mismatched calls"));
    /* A peer whose latest call is an earlier one of the communicator, made another way: this
     * IPU's record of that call proves it; made the same way, or forgotten, it proves nothing. */
    gcl_sig_t hist[2] = {a, a}, other = a;
    hist[0].seq = other.seq = 0;
    other.gkind = 1;
    gcl_peer_life_t behind = {
        .state = GCL_IPU_FINISHED, .run_gen = 1, .last_call = key - 1, .sig = other, .valid = 1};
    gcl_call_view_t vh = v;
    vh.hist = hist;
    vh.nhist = 2;
    assert_false(gcl_diag_same_call_differs(&v, 3, &behind, why, sizeof why)); /* no record */
    assert_true(gcl_diag_same_call_differs(&vh, 3, &behind, why, sizeof why));
    assert_non_null(strstr(why, "mismatched calls: replica 0"));
    assert_non_null(strstr(why, "replica 3 (instance 1 on host h0"));
    behind.sig = hist[0];
    assert_false(gcl_diag_same_call_differs(&vh, 3, &behind, why, sizeof why));
    behind.sig = other;
    hist[0].seq = 2; /* the entry was reused by a later call */
    assert_false(gcl_diag_same_call_differs(&vh, 3, &behind, why, sizeof why));
    behind.last_call = key + (6ull << 32); /* another communicator */
    assert_false(gcl_diag_same_call_differs(&vh, 3, &behind, why, sizeof why));
    /* The poison mark reaches every other local member, once, with its first reason. */
    gcl_diag_poison_group(&v, "first reason");
    gcl_diag_poison_group(&v, "second reason");
    assert_false(gcl_diag_poisoned(&hb, 0, key, &e)); /* not the marker itself */
    assert_true(gcl_diag_poisoned(&hb, 1, key, &e));
    assert_string_equal(gcl_err_text(&e), "first reason");
    assert_true(gcl_diag_poisoned(&hb, 3, key + 1, &e)); /* a later call of the communicator */
    assert_non_null(strstr(gcl_err_text(&e), "call #1 of this communicator was mismatched"));
    assert_false(gcl_diag_poisoned(&hb, 3, (6ull << 32) | 1, &e)); /* another communicator */
    gcl_err_clear(&e);
    gcl_hostbox_destroy(&hb);
    gcl_job_free(&j);
}

/* ---- two threads, one message, over a transport ---- */

typedef struct {
    const gcl_transport_t *tp;
    gcl_fabric_t *fab;
    int me, peer, is_send;
    coll_op_t op;
    void *bufs[COLL_BUF_COUNT];
    coll_exec_info_t info;
    gcl_sig_t sig;
    size_t bytes;
    gcl_status_t rc;
    gcl_err_t err;
} side_t;

static void *run_side(void *arg)
{
    side_t *s = arg;
    gcl_xfer_t x = {.tp = s->tp,
                    .fab = s->fab,
                    .err = &s->err,
                    .is_send = s->is_send,
                    .me_ipu = s->me,
                    .me_hl = s->me,
                    .peer_ipu = s->peer,
                    .peer_hl = s->peer,
                    .op = &s->op,
                    .bufs = s->bufs,
                    .info = &s->info,
                    .sig = &s->sig,
                    .key0 = 42,
                    .key1 = 0,
                    .bytes = s->bytes,
                    .slot = -1};
    s->rc = s->tp->start(&x);
    double t0 = gcl_now();
    while (s->rc == GCL_OK && !x.done && gcl_now() - t0 < 10) {
        int rc = s->tp->progress(&x);
        if (rc < 0)
            s->rc = (gcl_status_t)rc;
        else if (rc == 0)
            sched_yield();
    }
    if (!x.done && s->rc == GCL_OK)
        s->rc = GCL_ERR_TIMEOUT;
    return NULL;
}

/* Sends N floats from IPU 0 to IPU 1 over TP and checks they arrive (RECV) or are added to what
 * is there (RECV_REDUCE). */
static void one_message(const gcl_transport_t *tp, gcl_fabric_t *fab, size_t n, int reduce)
{
    float *src = malloc(n * sizeof *src), *dst = malloc(n * sizeof *dst);
    for (size_t i = 0; i < n; i++) {
        src[i] = (float)i;
        dst[i] = 1.0f;
    }
    gcl_sig_t sig = {.seq = 1, .gsize = 2, .root = -1, .count = n};
    side_t tx = {.tp = tp,
                 .fab = fab,
                 .me = 0,
                 .peer = 1,
                 .is_send = 1,
                 .op = {.kind = COLL_OP_SEND, .buf = COLL_BUF_IN, .peer = 1, .count = n},
                 .bufs = {src, NULL, NULL},
                 .info = {COLL_F32, COLL_SUM, 4, 2},
                 .sig = sig,
                 .bytes = n * 4,
                 .err = GCL_ERR_INIT};
    side_t rx = tx;
    rx.me = 1;
    rx.peer = 0;
    rx.is_send = 0;
    rx.op = (coll_op_t){.kind = reduce ? COLL_OP_RECV_REDUCE : COLL_OP_RECV,
                        .buf = COLL_BUF_OUT,
                        .src_buf = COLL_BUF_OUT,
                        .peer = 0,
                        .count = n};
    rx.bufs[COLL_BUF_OUT] = dst;
    pthread_t a, b;
    pthread_create(&a, NULL, run_side, &tx);
    pthread_create(&b, NULL, run_side, &rx);
    pthread_join(a, NULL);
    pthread_join(b, NULL);
    assert_int_equal(tx.rc, GCL_OK);
    assert_int_equal(rx.rc, GCL_OK);
    for (size_t i = 0; i < n; i++)
        assert_true(dst[i] == (float)i + (reduce ? 1.0f : 0.0f));
    free(src);
    free(dst);
}

static void test_transports(void **state)
{
    (void)state;
    gcl_job_t j;
    gcl_err_t e = GCL_ERR_INIT;
    gcl_hostbox_t hb;
    box(&hb, 2, 1);
    /* One instance: local. Two instances of one host: shm (both threads here stand in for the
     * two processes; the transport only reads the host box). */
    for (int instances = 1; instances <= 2; instances++) {
        make_job(&j, instances, instances == 1 ? 2 : 1, 0, instances);
        assert_int_equal(gcl_job_map(&j, &e), GCL_OK);
        gcl_fabric_t fab = {&j, &hb, token, NULL, NULL, NULL, NULL};
        const gcl_transport_t *tp = gcl_transport_pick(&fab, 0, 1);
        assert_ptr_equal(tp, instances == 1 ? &gcl_transport_local : &gcl_transport_shm);
        assert_true(tp->can_connect(&fab, 0, 1));
        /* Sizes across the chunk (4 KiB): one piece, several, a ragged end. */
        size_t sizes[] = {1, 1024, 10000};
        for (int k = 0; k < 3; k++) {
            one_message(tp, &fab, sizes[k], 0);
            one_message(tp, &fab, sizes[k], 1);
        }
        gcl_job_free(&j);
    }
    gcl_hostbox_unlink(&hb);
    gcl_hostbox_destroy(&hb);
}

/* ---- a network transfer that failed ---- */

/* A network whose every request fails; it counts the tests of a NULL handle (a handle it
 * already freed, in a real backend: tcp_test(NULL) crashed an instance). */
static int null_tests;
static int fake_post(gcl_net_t *n, int peer, const void *buf, size_t len, const gcl_net_tag_t *tag,
                     void **req)
{
    (void)n, (void)peer, (void)buf, (void)len, (void)tag;
    *req = &null_tests;
    return 0;
}
static int fake_irecv(gcl_net_t *n, int peer, void *buf, size_t len, const gcl_net_tag_t *tag,
                      void **req)
{
    return fake_post(n, peer, buf, len, tag, req);
}
static int fake_test(gcl_net_t *n, void *req)
{
    null_tests += req == NULL;
    snprintf(n->error, sizeof n->error, "the connection was reset");
    return -1;
}
static void fake_cancel(gcl_net_t *n, void *req)
{
    (void)n, (void)req;
}

/* A transfer whose request failed fails again when looked at again (a liveness check's look,
 * then the request's progress), without handing the freed handle to the network. */
static void test_net_failed_again(void **state)
{
    (void)state;
    gcl_job_t j;
    gcl_err_t e = GCL_ERR_INIT;
    make_job(&j, 2, 1, 0, 1);
    assert_int_equal(gcl_job_map(&j, &e), GCL_OK);
    gcl_net_t net = {.name = "fake",
                     .chunk_bytes = 4096,
                     .isend = fake_post,
                     .irecv = fake_irecv,
                     .test = fake_test,
                     .cancel = fake_cancel};
    gcl_net_pool_init(&net);
    gcl_fabric_t fab = {&j, NULL, token, NULL, NULL, &net, NULL};
    float buf[256] = {0};
    void *bufs[COLL_BUF_COUNT] = {buf, buf, NULL};
    coll_exec_info_t info = {COLL_F32, COLL_SUM, 4, 2};
    gcl_sig_t sig = {.seq = 1, .gsize = 2, .root = -1, .count = 256};
    for (int is_send = 0; is_send <= 1; is_send++) {
        coll_op_t op = {.kind = is_send ? COLL_OP_SEND : COLL_OP_RECV,
                        .buf = is_send ? COLL_BUF_IN : COLL_BUF_OUT,
                        .peer = 1,
                        .count = 256};
        gcl_xfer_t x = {.tp = &gcl_transport_tcp,
                        .fab = &fab,
                        .err = &e,
                        .is_send = is_send,
                        .me_ipu = 0,
                        .me_hl = 0,
                        .peer_ipu = 1,
                        .peer_hl = -1,
                        .op = &op,
                        .bufs = bufs,
                        .info = &info,
                        .sig = &sig,
                        .key0 = 42,
                        .bytes = sizeof buf,
                        .slot = -1};
        null_tests = 0;
        assert_int_equal(x.tp->start(&x), GCL_OK);
        assert_int_equal(x.tp->progress(&x), GCL_ERR_PEER_FAILED);
        assert_non_null(strstr(gcl_err_text(&e), "the connection was reset"));
        assert_int_equal(x.tp->progress(&x), GCL_ERR_PEER_FAILED);
        assert_int_equal(null_tests, 0);
        x.tp->cancel(&x);
        gcl_err_clear(&e);
    }
    gcl_net_pool_fini(&net);
    gcl_job_free(&j);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_err),
        cmocka_unit_test(test_sig),
        cmocka_unit_test(test_job),
        cmocka_unit_test(test_hostbox_slots),
        cmocka_unit_test(test_wait_doorbell),
        cmocka_unit_test(test_wait_notify),
        cmocka_unit_test(test_diag),
        cmocka_unit_test(test_transports),
        cmocka_unit_test(test_dead_holders),
        cmocka_unit_test(test_wait_alarm),
        cmocka_unit_test(test_net_failed_again),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
