/*
 * Waiting without burning the cores: an IPU thread with nothing to do polls a little, then
 * sleeps on its doorbell (a futex word in the host box that every peer rings when it posts or
 * frees something for it). Transports that cannot ring (mpi) make it poll with short sleeps.
 * The waiter also keeps the clocks for the timeout, stall warnings and liveness checks.
 */
#ifndef GCL_WAIT_H
#define GCL_WAIT_H

#include <stdint.h>

#include "hostbox.h"
#include "param.h"

typedef struct {
    double last_progress; /* seconds (monotonic) */
    double next_check;
    double timeout_s, stall_warn_s;
    long spin_count;
    long idle; /* idle calls since the last progress */
    int warned;
} gcl_waiter_t;

double gcl_now(void);
void gcl_waiter_init(gcl_waiter_t *w, const gcl_params_t *p);
/* Something moved: restart the spin phase and the timeout. */
void gcl_waiter_progress(gcl_waiter_t *w);

/*
 * Waits a little after a pass that made no progress. SEEN is IPU ME's doorbell as read before
 * the pass, so a ring that came in since wakes us at once. MUST_POLL: something we wait on does
 * not ring. Returns 1 when about 100 ms have passed since the last check (time for the caller's
 * liveness checks), else 0.
 */
int gcl_waiter_idle(gcl_waiter_t *w, hostbox_t *hb, int me, uint32_t seen, int must_poll);

/* Seconds since the last progress. */
double gcl_waiter_stalled(const gcl_waiter_t *w);

#endif /* GCL_WAIT_H */
