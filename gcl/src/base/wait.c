/* Spin, then sleep on a futex; see wait.h. */
#include "base/wait.h"

#include <limits.h>
#include <linux/futex.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { YIELDS = 50 };
#define POLL_SLACK_NS 1000UL

static _Thread_local int slack_set; /* this thread's timer slack is POLL_SLACK_NS */

_Thread_local unsigned long gcl_progress_pass;

double gcl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void gcl_waiter_init(gcl_waiter_t *w, const gcl_params_t *p)
{
    w->last_progress = w->next_check = w->last_look = 0;
    w->timeout_s = p->timeout_s;
    w->stall_warn_s = p->stall_warn_s;
    w->spin_count = p->spin_count;
    w->idle = 0;
    w->warned = 0;
    w->moved = 0;
}

/* Reads the clock: the first time, the waiter starts from now; progress since the last read
 * counts as made now. */
static double look(gcl_waiter_t *w)
{
    double now = gcl_now();
    if (w->last_look == 0) {
        w->last_progress = now;
        w->next_check = now + 0.1;
    } else if (w->moved) {
        w->last_progress = now;
    }
    w->moved = 0;
    w->last_look = now;
    return now;
}

void gcl_waiter_resume(gcl_waiter_t *w)
{
    w->idle = 0;
    if (w->last_look == 0) /* it has not started waiting yet */
        return;
    double before = w->last_look, now = look(w);
    if (now - before > 0.2)
        w->last_progress += now - before;
}

int gcl_waiter_due(gcl_waiter_t *w)
{
    double now = look(w);
    if (now < w->next_check)
        return 0;
    w->next_check = now + 0.1;
    return 1;
}

void gcl_waiter_progress(gcl_waiter_t *w)
{
    w->idle = 0;
    w->moved = 1;
}

double gcl_waiter_stalled(const gcl_waiter_t *w)
{
    return w->last_look == 0 || w->moved ? 0 : gcl_now() - w->last_progress;
}

static void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

void gcl_doorbell_ring(gcl_doorbell_t *d)
{
    atomic_fetch_add(&d->rings, 1);
    if (atomic_load(&d->sleeping))
        syscall(SYS_futex, &d->rings, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void gcl_doorbell_alarm(gcl_doorbell_t *d)
{
    atomic_fetch_add(&d->alarms, 1);
    gcl_doorbell_ring(d);
}

void gcl_doorbell_notify(gcl_doorbell_t *d)
{
    atomic_thread_fence(memory_order_seq_cst);
    if (atomic_load_explicit(&d->sleeping, memory_order_relaxed))
        gcl_doorbell_ring(d);
}

/* Sleeps on P for at most SECONDS unless it rang since SEEN or RECHECK finds work; returns what
 * RECHECK returned. */
static int sleep_on(gcl_doorbell_t *p, uint32_t seen, double seconds, int (*recheck)(void *),
                    void *arg)
{
    struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
    atomic_store(&p->sleeping, 1); /* sequentially consistent: a full fence before the pass */
    int did = recheck ? recheck(arg) : 0;
    /* Re-read after announcing the sleep: a ring between the two is not lost (the ringer sees
     * `sleeping` or we see its increment). */
    if (!did && atomic_load(&p->rings) == seen)
        syscall(SYS_futex, &p->rings, FUTEX_WAIT, seen, &ts, NULL, 0);
    atomic_store(&p->sleeping, 0);
    return did;
}

int gcl_waiter_idle(gcl_waiter_t *w, gcl_doorbell_t *bell, uint32_t seen, int must_poll,
                    int (*recheck)(void *arg), void *arg)
{
    w->idle++;
    int did = 0;
    if (w->idle <= w->spin_count) {
        cpu_relax();
    } else if (w->idle <= w->spin_count + YIELDS) {
        sched_yield();
    } else if (must_poll) {
        /* Nothing will ring: poll, backing off from 20 us to 1 ms. The sleeps are exact to
         * POLL_SLACK_NS (Linux's default slack, 50 us, made a 20 us sleep last up to 70 while
         * a network transfer waited to be read); set once, it stays the thread's slack. */
        if (!slack_set) {
            prctl(PR_SET_TIMERSLACK, POLL_SLACK_NS, 0, 0, 0);
            slack_set = 1;
        }
        long extra = w->idle - w->spin_count - YIELDS;
        double s = extra < 50 ? 20e-6 : extra < 500 ? 200e-6 : 1e-3;
        did = sleep_on(bell, seen, s, recheck, arg);
    } else {
        did = sleep_on(bell, seen, 0.1, recheck, arg);
    }
    if (did)
        gcl_waiter_progress(w);
    /* While spinning or yielding, the clock is read every 8th pass: the checks are ~100 ms
     * apart, and reading it on every pass was a sixth of a busy IPU thread's time. */
    if (w->idle <= w->spin_count + YIELDS && w->idle % 8)
        return 0;
    return gcl_waiter_due(w);
}
