/*
 * Replaying a call's simulated timeline: every rank of a shape steps through its schedule on the
 * simulated pod, from the clock at which it entered the call, exactly as libgcl's message
 * executor charges a call step by step (gcl/src/engine/simtime.c): a step starts at the rank's clock T;
 * each send of B bytes holds its route for d = ceil(B / W) x q (W the route's bottleneck, q its
 * queue place) and arrives at T + latency + d; the step ends at the latest of T, the end of each
 * send's d and each arrival. Waiting before the latest sender even sent is idle time, the rest
 * exchange. Integer picoseconds in a fixed order: bitwise reproducible.
 *
 * libgcl replays the pod algorithm of a call whose bytes took another path (host-direct, the
 * canonical order's messages), and the automatic choice replays every candidate.
 */
#ifndef CHOICE_REPLAY_H
#define CHOICE_REPLAY_H

#include "choice/shape.h"
#include "sim/base/time.h"

typedef struct {
    int n;
    sim_time_t *end;  /* [n]: each rank's clock when its part of the call is done */
    sim_time_t *idle; /* [n]: idle time within the call */
    sim_time_t *exch; /* [n]: exchange time within the call */
} choice_outcome_t;

/* Replays SH on T with rank q entering at ENTRY[q] (all at 0 when ENTRY is NULL) into OUT.
 * Returns 0, -ENOMEM, or -EINVAL when the schedules cannot complete. */
int choice_replay(const choice_shape_t *sh, const sim_topology_t *t, const sim_time_t *entry,
                  choice_outcome_t *out);
void choice_outcome_free(choice_outcome_t *o);

/* The time from a common start to the last rank's end: 0, -ENOMEM or -EINVAL. */
int choice_makespan(const choice_shape_t *sh, const sim_topology_t *t, sim_time_t *out);

#endif /* CHOICE_REPLAY_H */
