/*
 * Simulated time of a call (exec.h describes the two modes, CHARGE and REPLAY): planned when the
 * call starts, advanced step by step by the message engine, ended and retired with the call.
 */
#ifndef GCL_SIMTIME_H
#define GCL_SIMTIME_H

#include "engine/exec.h"

/* REPLAY calls first set the pod algorithm POD and its arguments A. */
gcl_status_t gcl_sim_plan_replay(gcl_exec_t *x, const coll_algo_t *pod, const coll_args_t *a);
/* CHARGE calls their queue places on the pod's links, from ALGO's call A; OWNED: the request
 * may outlive its group's memo, so it keeps a copy. */
gcl_status_t gcl_sim_plan_charge(gcl_exec_t *x, const coll_algo_t *algo, const coll_args_t *a,
                                 int owned);
/* The call starts on the IPU's clock (after one synchronisation of its group, if X->sim.sync):
 * gcl_sim_enter, then gcl_sim_call_entered. */
void gcl_sim_call_begin(gcl_exec_t *x);
/* Where a call of PEERS starts on the IPU's clock: charges the group's synchronisation (SYNC),
 * and says when the call began and when the synchronisation ended. Apart from the call's
 * executor, for a call that does its caller's part before its executor is set up. */
typedef struct {
    sim_time_t call_start, t;
} gcl_sim_entry_t;
void gcl_sim_enter(gcl_peers_t *peers, int sync, gcl_sim_entry_t *at);
/* X's call began AT (gcl_sim_enter): its timeline starts there. */
void gcl_sim_call_entered(gcl_exec_t *x, const gcl_sim_entry_t *at);
/* A step's messages are about to leave: the times they carry. */
void gcl_sim_step_post(gcl_exec_t *x);
/* A step's messages are all in: the call's clock moves to the step's end. */
void gcl_sim_step_done(gcl_exec_t *x);
/* Ends the call's timeline: replays it (REPLAY). Fails only out of host memory. */
gcl_status_t gcl_sim_call_end(gcl_exec_t *x);
/* The call retires: the IPU's clock catches up with the call's end (as exchange, then idle),
 * and the call's slice goes into the trace. */
void gcl_sim_call_retire(gcl_exec_t *x);

#endif /* GCL_SIMTIME_H */
