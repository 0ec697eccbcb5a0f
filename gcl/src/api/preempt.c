/*
 * Preemption (gcl/preempt.h): SIGTERM and SIGINT only set a flag, and gcl_preempt_agree turns
 * the flags of all instances into one decision that every IPU of the job gets alike.
 *
 * Why a collective: poprun forwards the signal to every instance, but each receives it at its
 * own moment, and the IPU threads of one instance look at the flag at their own moments too. If
 * each IPU stopped when it saw the flag, one replica would stop after step 41 and its peers
 * wait in step 42's all-reduce for it. So the IPU threads of an instance meet (the last to
 * arrive reads the flag once more), one of them exchanges the instance's value with the other
 * instances through the bootstrap, and all leave with the maximum.
 *
 * The meeting waits on a condition variable with a short period, so that a local IPU that fails
 * meanwhile (inst->abort) or a peer that never comes (GCL_TIMEOUT_S) ends the wait with a status.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/preempt.h"
#include "api/preempt.h"

#include "api/ctx.h"
#include "gcl/elastic_store.h"
#include "base/alloc.h"
#include "base/log.h"
#include "instance/signals.h"

/* How often a waiting IPU thread looks at the abort flag and the clock. */
#define PREEMPT_POLL_NS 50000000L

/* How long after the first request a second SIGINT counts as a second Ctrl-C: a signal sent
 * twice at once (timeout(1) signals its child and then its process group, which holds the child)
 * is one request. */
#define PREEMPT_AGAIN_NS 1000000000LL

/* The first SIGTERM or SIGINT (0: none), and when it came (CLOCK_MONOTONIC, ns). Lock-free
 * atomics: safe in a signal handler. */
static atomic_int stop_signal;
static atomic_llong stop_time_ns;

struct gcl_preempt {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    uint32_t run_gen; /* the gcl_run this meeting state belongs to */
    int arrived;      /* local IPUs in the current meeting */
    int seen;         /* the largest signal they saw on arrival */
    uint64_t gen;     /* meetings completed */
    int result;       /* of the last meeting */
    int joiners;      /* ... and whether instances wait to join (an elastic job) */
    gcl_status_t status;
};

static long long monotonic_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t); /* async-signal-safe */
    return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
}

static void on_stop_signal(int sig)
{
    int saved = errno, none = 0;
    long long now = monotonic_ns();
    if (atomic_compare_exchange_strong(&stop_signal, &none, sig)) {
        atomic_store(&stop_time_ns, now);
    } else if (sig == SIGINT && now - atomic_load(&stop_time_ns) >= PREEMPT_AGAIN_NS) {
        /* Ctrl-C again: end now, as the default action would have done the first time. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
    errno = saved;
}

gcl_status_t gcl_preempt_enable(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_stop_signal;
    sa.sa_flags = SA_RESTART;
    sigemptyset(&sa.sa_mask);
    sigaddset(&sa.sa_mask, SIGTERM);
    sigaddset(&sa.sa_mask, SIGINT);
    if (sigaction(SIGTERM, &sa, NULL) != 0 || sigaction(SIGINT, &sa, NULL) != 0)
        return GCL_ERR_SYSTEM;
    return GCL_OK;
}

int gcl_preempt_signal(void)
{
    return atomic_load(&stop_signal);
}

/* The instance's meeting state, made on first use. */
static struct gcl_preempt *meeting(struct gcl_instance *inst)
{
    struct gcl_preempt *p = __atomic_load_n(&inst->preempt, __ATOMIC_ACQUIRE), *none = NULL;
    if (p || !(p = gcl_calloc(1, sizeof *p)))
        return p;
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->cond, NULL);
    /* The first IPU thread to come publishes it; a later one that made its own gives it up. */
    if (__atomic_compare_exchange_n(&inst->preempt, &none, p, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
        return p;
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    return none;
}

int gcl_preempt_joiners(struct gcl_instance *inst)
{
    struct gcl_preempt *p = __atomic_load_n(&inst->preempt, __ATOMIC_ACQUIRE);
    if (!p)
        return 0;
    pthread_mutex_lock(&p->lock);
    int j = p->joiners;
    pthread_mutex_unlock(&p->lock);
    return j;
}

void gcl_preempt_free(struct gcl_instance *inst)
{
    struct gcl_preempt *p = inst->preempt;
    if (!p)
        return;
    pthread_cond_destroy(&p->cond);
    pthread_mutex_destroy(&p->lock);
    free(p);
    inst->preempt = NULL;
}

/* The last IPU of the instance to arrive: exchanges VALUE with the other instances, and
 * returns the largest in *OUT (and in *JOINERS whether instances wait to join an elastic job).
 * Called without the meeting's lock. */
static gcl_status_t exchange(struct gcl_instance *inst, int value, int *out, int *joiners)
{
    *out = value;
    *joiners = 0;
    /* A lone instance of an elastic job still asks the store: its answer is how a waiting
     * replacement is heard of (without it, a job shrunk to one instance never grew back). */
    if (inst->job.num_instances == 1 && !inst->elastic)
        return GCL_OK;
    int *all = gcl_calloc((size_t)inst->job.num_instances, sizeof *all);
    if (!all)
        return GCL_ERR_NO_HOST_MEMORY;
    gcl_status_t rc = inst->boot->allgather(inst->boot, &value, all, sizeof value);
    for (int i = 0; rc == GCL_OK && i < inst->job.num_instances; i++)
        if (all[i] > *out)
            *out = all[i];
    free(all);
    *joiners = rc == GCL_OK && (gcl_boot_store_flags(inst->boot) & GCL_STORE_F_JOINERS);
    return rc == GCL_OK || rc == GCL_ERR_TIMEOUT || rc == GCL_ERR_PEER_FAILED ? rc : GCL_ERR_MPI;
}

/* Records why CTX's gcl_preempt_agree failed, for gcl_ctx_last_error. */
static gcl_status_t agree_fail(struct gcl_ctx *ctx, gcl_status_t rc, const char *why, double s)
{
    if (s > 0)
        return gcl_ctx_fail(ctx, rc,
                            "gcl_preempt_agree: the other IPUs of this instance did not come for "
                            "%.1f s (GCL_TIMEOUT_S)",
                            s);
    return gcl_ctx_fail(ctx, rc, "gcl_preempt_agree: %s", why);
}

/* Waits, with P->lock held, until meeting GEN is over; GCL_OK or why not. */
static gcl_status_t await(struct gcl_ctx *ctx, struct gcl_preempt *p, uint64_t gen)
{
    struct gcl_instance *inst = ctx->inst;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (p->gen == gen) {
        if (atomic_load(&inst->run.abort))
            return agree_fail(ctx, GCL_ERR_ABORTED, "another IPU of this instance failed", 0);
        clock_gettime(CLOCK_MONOTONIC, &now);
        double waited = (double)(now.tv_sec - start.tv_sec) + 1e-9 * (now.tv_nsec - start.tv_nsec);
        if (waited > inst->params.timeout_s)
            return agree_fail(ctx, GCL_ERR_TIMEOUT, "", waited);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += PREEMPT_POLL_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec++;
            until.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&p->cond, &p->lock, &until);
    }
    return GCL_OK;
}

gcl_status_t gcl_preempt_agree(gcl_ctx_t ctx, int *signo)
{
    if (!ctx || !signo)
        return GCL_ERR_INVALID_ARGUMENT;
    *signo = 0;
    struct gcl_instance *inst = ctx->inst;
    struct gcl_preempt *p = meeting(inst);
    if (!p)
        return GCL_ERR_NO_HOST_MEMORY;
    pthread_mutex_lock(&p->lock);
    if (p->run_gen != inst->run.gen) { /* a new gcl_run: forget a meeting a failure cut short */
        p->run_gen = inst->run.gen;
        p->arrived = p->seen = 0;
    }
    int mine = atomic_load(&stop_signal);
    p->seen = mine > p->seen ? mine : p->seen;
    gcl_status_t rc = GCL_OK;
    if (++p->arrived < inst->job.num_local_ipus) {
        rc = await(ctx, p, p->gen);
    } else {
        int value = p->seen, now = atomic_load(&stop_signal), agreed = 0, joiners = 0;
        value = now > value ? now : value;
        p->arrived = p->seen = 0;
        pthread_mutex_unlock(&p->lock);
        gcl_status_t x = exchange(inst, value, &agreed, &joiners);
        pthread_mutex_lock(&p->lock);
        p->result = agreed;
        p->joiners = joiners;
        p->status = x;
        p->gen++;
        pthread_cond_broadcast(&p->cond);
    }
    if (rc == GCL_OK && (rc = p->status) != GCL_OK)
        agree_fail(ctx, rc,
                   rc == GCL_ERR_TIMEOUT ? "another instance did not come to the exchange of the "
                                           "stop request within GCL_TIMEOUT_S"
                   : inst->boot->why[0]  ? inst->boot->why
                                         : "exchanging the stop request with the other "
                                           "instances failed",
                   0);
    if (rc == GCL_OK)
        *signo = p->result;
    pthread_mutex_unlock(&p->lock);
    if (rc == GCL_OK && *signo)
        GCL_DEBUG(GCL_SUB_INIT, "gcl_preempt_agree: the job stops (signal %d)", *signo);
    return rc;
}
