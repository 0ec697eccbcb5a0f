/*
 * Preemption: SIGTERM and SIGINT as a request to stop at the next step boundary, agreed by every
 * IPU of the job (what a cluster scheduler sends before it takes the machines back, and what
 * poprun forwards to every instance when it receives either).
 *
 *   gcl_preempt_enable();                       // in main, before gcl_init
 *   ...
 *   static gcl_status_t program(gcl_ctx_t ctx, void *arg) {
 *       for (long step = 0; step < steps; step++) {
 *           ... one training step (its collectives complete) ...
 *           int sig;
 *           GCL_CHECK(gcl_preempt_agree(ctx, &sig));
 *           if (sig) { ... checkpoint after STEP + 1 ...; break; }
 *       }
 *   }
 *   ...                                         // after gcl_run and gcl_finalize:
 *   return gcl_preempt_signal() ? 128 + gcl_preempt_signal() : 0;
 *
 * Without gcl_preempt_enable, SIGTERM and SIGINT keep their default action: the process ends at
 * once (libgcl removes the handlers that some libraries it links install, which called exit()
 * from the handler while IPU threads ran; see gcl/src/instance/signals.c).
 */
#ifndef GCL_PREEMPT_H
#define GCL_PREEMPT_H

#include "gcl/gcl.h"

#ifdef __cplusplus
extern "C" {
#endif

#pragma GCC visibility push(default)

/*
 * Installs handlers for SIGTERM and SIGINT that only record the signal (async-signal-safe; no
 * exit, no I/O). Later SIGTERMs change nothing (the stop is under way; SIGKILL is for "now"); a
 * SIGINT at least a second after the first request (Ctrl-C again) ends the process at once with
 * the default action. Call it once, in the main thread, before starting threads. Returns GCL_OK
 * or GCL_ERR_SYSTEM.
 */
gcl_status_t gcl_preempt_enable(void);

/* The first SIGTERM or SIGINT this process received since gcl_preempt_enable, or 0. Any thread,
 * at any time. This is this process's own view: to decide when to stop, use gcl_preempt_agree. */
int gcl_preempt_signal(void);

/*
 * The job's decision whether to stop here: a collective over every IPU of the job (every IPU
 * thread of every instance calls it at the same point of its program, e.g. after each step).
 * *SIGNO is, on every IPU alike, the largest signal number that any instance had received when
 * its IPUs arrived (SIGTERM over SIGINT), or 0 to go on. It is a host-side decision, as a real
 * pod's host program makes it between steps: no simulated time is charged and no message goes
 * over the simulated links. It talks to the other instances through the bootstrap (MPI), so
 * the IPU's point-to-point requests must be complete when it is called. Returns GCL_OK,
 * GCL_ERR_ABORTED (a local IPU failed meanwhile), GCL_ERR_MPI or GCL_ERR_NO_HOST_MEMORY.
 */
gcl_status_t gcl_preempt_agree(gcl_ctx_t ctx, int *signo);

#pragma GCC visibility pop

#ifdef __cplusplus
}
#endif

#endif /* GCL_PREEMPT_H */
