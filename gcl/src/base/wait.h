/*
 * Waiting without burning the cores: an IPU thread with nothing to do polls a little, then
 * sleeps on its doorbell (a futex word that every peer rings when it posts or frees something
 * for it). Transports that cannot ring (mpi) make it poll with short sleeps.
 * The waiter also keeps the clocks for the timeout, stall warnings and liveness checks.
 */
#ifndef GCL_WAIT_H
#define GCL_WAIT_H

#include <stdalign.h>
#include <stdatomic.h>
#include <stdint.h>

#include "base/param.h"

/* A doorbell: a futex word an IPU thread sleeps on, rung by every peer that posts or frees
 * something for it. It lives wherever the threads that ring it can all reach it (the host box).
 * Alone on its cache line: every ring writes it. */
typedef struct {
    alignas(64) _Atomic uint32_t rings;
    _Atomic uint32_t sleeping;
    _Atomic uint32_t alarms; /* rings for news only the checks find (gcl_doorbell_alarm) */
} gcl_doorbell_t;

/* What to pass gcl_waiter_idle as SEEN: read before a pass, so a ring during it is not lost. */
static inline uint32_t gcl_doorbell_read(gcl_doorbell_t *d)
{
    return atomic_load(&d->rings);
}

/* Rings D: counts the ring and wakes its thread if it sleeps. For news its thread's work does
 * not show (an abort, a failure): a thread about to sleep sees that the count moved. */
void gcl_doorbell_ring(gcl_doorbell_t *d);

/* Rings D for news that only its thread's checks find (a peer failed or left, a mismatch
 * marked, an abort): the thread runs its checks at once (gcl_doorbell_alarmed) instead of at
 * its next ~100 ms turn. So every waiting thread of a host names a failure within a wake-up of
 * the first, before the first one's exit ends the job. */
void gcl_doorbell_alarm(gcl_doorbell_t *d);

/* Whether D was alarmed since *SEEN (the thread's own count), which it then takes. A read of
 * D's own line, which its thread polls anyway. */
static inline int gcl_doorbell_alarmed(gcl_doorbell_t *d, uint32_t *seen)
{
    uint32_t a = atomic_load_explicit(&d->alarms, memory_order_acquire);
    if (a == *seen)
        return 0;
    *seen = a;
    return 1;
}

/* Rings D only if its thread sleeps or is about to: for news in memory its thread's progress
 * pass reads (a posted or freed slot, a barrier arrival), published before the call. A sleeper
 * announces its sleep and then makes one more pass (gcl_waiter_idle's RECHECK), so either it
 * sees the news or this sees it sleeping (both sides order their store before their load with
 * a full fence). Costs one read of a line that nobody writes while its thread is awake, instead
 * of a write to it: the thread that polls it keeps it in its cache. */
void gcl_doorbell_notify(gcl_doorbell_t *d);

/* The clocks are read lazily: a call that completes in its first passes reads none. */
typedef struct {
    double last_progress; /* seconds (monotonic) */
    double next_check;
    double timeout_s, stall_warn_s;
    long spin_count;
    long idle; /* idle calls since the last progress */
    int warned;
    int moved;        /* progress since the clock was last read */
    double last_look; /* when its caller last looked (a check or an idle pass); 0: not yet */
} gcl_waiter_t;

double gcl_now(void);
/* Counts the progress passes of this thread (gcl_ctx_progress): what a transport does once a
 * pass (reading its completion queue), it does when this has moved on. */
extern _Thread_local unsigned long gcl_progress_pass;
void gcl_waiter_init(gcl_waiter_t *w, const gcl_params_t *p);
/* Something moved: restart the spin phase and the timeout. */
void gcl_waiter_progress(gcl_waiter_t *w);
/* A waiter that lives across calls (a request's, polled by gcl_test, waited on later): at
 * every call. Time the caller spent elsewhere (more than 0.2 s since it last looked) is not a
 * stall, since nothing could move meanwhile: only time spent looking counts toward the timeout. */
void gcl_waiter_resume(gcl_waiter_t *w);
/* Whether the checks are due (about every 100 ms, whether or not anything moves). */
int gcl_waiter_due(gcl_waiter_t *w);

/*
 * Waits a little after a pass that made no progress: spins (a bounded number of passes, the
 * waiter's spin count), then yields the core a few times, then sleeps on its doorbell BELL.
 * SEEN is BELL as read before the pass (gcl_doorbell_read), so a ring that came in since wakes
 * us at once. Before sleeping it announces the sleep and calls RECHECK(ARG), one more pass of
 * the caller's work (1 if it moved anything): news that was only notified
 * (gcl_doorbell_notify) is found there. MUST_POLL: something we wait on does not ring. Returns
 * 1 when about 100 ms have passed since the last check (time for the caller's liveness checks),
 * else 0.
 */
int gcl_waiter_idle(gcl_waiter_t *w, gcl_doorbell_t *bell, uint32_t seen, int must_poll,
                    int (*recheck)(void *arg), void *arg);

/* Seconds since the last progress. */
double gcl_waiter_stalled(const gcl_waiter_t *w);

#endif /* GCL_WAIT_H */
