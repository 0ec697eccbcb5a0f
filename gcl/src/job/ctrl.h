/*
 * The control plane: what the instances of a job that spans hosts tell each other outside of any
 * call, over their own UDP sockets (one per instance, addresses exchanged at start-up):
 *   - a heartbeat every GCL_HEARTBEAT_S, so that an instance whose process or host is gone (its
 *     network link down: no connection is ever closed) is noticed within GCL_PEER_TIMEOUT_S;
 *   - the life of its IPU threads (a program that failed, and why; an instance that finished),
 *     which instances of one host learn from the host box;
 *   - the mark on a mismatched call ("poison"), so that every replica of it, on every host,
 *     fails with GCL_ERR_MISMATCH, not only those of the host where it was seen.
 * Every datagram carries the job's secret token and is dropped without it; it must also come
 * from the address its sender gave at start-up and carry a number newer than any taken from
 * that sender (so that a recorded datagram sent again is refused). Refused datagrams are
 * counted and reported at warn level at most every 10 s. A thread per instance receives them;
 * senders are the IPU threads and the heartbeat tick of that thread.
 */
#ifndef GCL_CTRL_H
#define GCL_CTRL_H

#include <stddef.h>
#include <stdint.h>

#include "job/bootstrap.h"
#include "job/diag.h"
#include "base/err.h"
#include "job/hostbox.h"
#include "job/job.h"
#include "base/param.h"

typedef struct gcl_ctrl gcl_ctrl_t;

/*
 * Starts the control plane of a job over several hosts (collective over the instances: the
 * addresses go through BOOT). HB is this host's box, where remote IPUs' failures and poison
 * marks are written for the local threads to see. Returns GCL_OK with *OUT NULL when the job
 * has one host (nothing to do), or a failure in ERR.
 */
gcl_status_t gcl_ctrl_start(const gcl_params_t *p, const gcl_job_t *j, gcl_boot_t *boot,
                            gcl_hostbox_t *hb, const uint8_t token[16], gcl_ctrl_t **out,
                            gcl_err_t *err);
/* Tells the other hosts this instance is leaving (its IPUs exited), and stops. */
void gcl_ctrl_stop(gcl_ctrl_t *c);

/* Whether global IPU IPU, on another host, is known to be gone: its instance failed (its reason),
 * left the job or was silent for GCL_PEER_TIMEOUT_S, or the IPU returned from its program of
 * run generation RUN_GEN; fills WHY. */
int gcl_ctrl_peer_gone(gcl_ctrl_t *c, uint32_t run_gen, int ipu, char *why, size_t len);

/* Whether an instance on another host that hosts one of the N global IPUS failed (a member of
 * a call's group: the call can never complete); fills WHY with the first one and its reason. */
int gcl_ctrl_member_failed(gcl_ctrl_t *c, const int *ipus, int n, char *why, size_t len);

/* What the beats of its instance last said of global IPU IPU, on another host: 1 and *OUT, or
 * 0 for an IPU of this host. */
int gcl_ctrl_life(gcl_ctrl_t *c, int ipu, gcl_peer_life_t *out);

/* Tells the other hosts at once that an IPU of this instance changed its life (finished). */
void gcl_ctrl_ipu_changed(gcl_ctrl_t *c);

/* Tells the other hosts that this instance's IPU IPU failed, with REASON. */
void gcl_ctrl_ipu_failed(gcl_ctrl_t *c, int ipu, const char *reason);

/* Marks call KEY0 as mismatched, with REASON, on every IPU of IPUS[0..n-1] that lives on
 * another host (their instances write it into their host box). */
void gcl_ctrl_poison(gcl_ctrl_t *c, const int *ipus, int n, uint64_t key0, const char *reason);

#endif /* GCL_CTRL_H */
