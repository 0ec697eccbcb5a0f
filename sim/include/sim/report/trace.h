/*
 * Per-IPU statistics and trace recording.
 *
 * Who owns what. The caller keeps one sim_ipu_stats_t and one sim_trace_t per simulated IPU and
 * updates them from that IPU's context only (nothing here is locked). At the end, it describes
 * its IPUs in an array of sim_report_ipu_t and hands that to the writers, which only read.
 *
 * Time accounting. An IPU's clock is the sum of the time it spent in five activities:
 *   compute  - charged work (sim_device_compute_time());
 *   exchange - moving data over IPU-Links and GW-Links, from send to arrival;
 *   sync     - synchronisations (sim_sync_time());
 *   idle     - waiting for a peer that is behind (receive before the data could arrive, or the
 *              tail until the slowest IPU of the run finishes);
 *   host     - waiting for the host servers' data feed (sim/cost/feed.h).
 * sim_stats_advance() and sim_stats_advance_to() keep clock == the sum of the five.
 */
#ifndef SIM_TRACE_H
#define SIM_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "sim/base/time.h"

typedef enum sim_activity {
    SIM_ACT_COMPUTE = 0,
    SIM_ACT_EXCHANGE = 1,
    SIM_ACT_SYNC = 2,
    SIM_ACT_IDLE = 3,
    SIM_ACT_HOST = 4,
    SIM_ACT_COUNT
} sim_activity_t;

/* "compute", "exchange", "sync", "idle", "host" ("unknown" out of range). */
const char *sim_activity_name(sim_activity_t a);

typedef struct sim_ipu_stats {
    sim_time_t clock;               /* the IPU's simulated time now */
    sim_time_t time[SIM_ACT_COUNT]; /* time spent per activity */
} sim_ipu_stats_t;

#define SIM_IPU_STATS_INIT                                                                         \
    {                                                                                              \
        0,                                                                                         \
        {                                                                                          \
            0, 0, 0, 0, 0                                                                          \
        }                                                                                          \
    }

/* Spends DUR in activity A: clock += dur and time[a] += dur (saturating). */
void sim_stats_advance(sim_ipu_stats_t *s, sim_activity_t a, sim_time_t dur);

/* Moves the clock forward to T, spending the difference in A; nothing when T <= clock. Returns
 * the time spent. (A receive: advance_to(exchange part), then advance_to(arrival) as idle, or
 * however the caller splits it.) */
sim_time_t sim_stats_advance_to(sim_ipu_stats_t *s, sim_activity_t a, sim_time_t t);

/* ---- Trace recording: complete slices on one IPU's track. ---- */

typedef struct sim_trace sim_trace_t;

/* Distinct slice names one trace remembers; further names are recorded as "(other)". */
#define SIM_TRACE_MAX_NAMES 64
/* Slice names longer than this are truncated. */
#define SIM_TRACE_NAME_MAX 40
/* Nesting depth of sim_trace_begin(). */
#define SIM_TRACE_MAX_DEPTH 8

/* Creates a trace that stores at most MAX_EVENTS slices (bounded memory: 32 bytes each, grown
 * on demand); later slices are counted as dropped and the writer says so. Returns 0, -EINVAL,
 * or -ENOMEM. */
int sim_trace_create(size_t max_events, sim_trace_t **out);
void sim_trace_destroy(sim_trace_t *t);

/* Records a slice NAME of activity A from START for DUR. BYTES (0 for none) is shown as the
 * slice's "bytes" argument. Returns 0; -ENOSPC when the cap was reached (counted as dropped);
 * -ENOMEM when growing failed (also dropped); -EINVAL for a NULL trace or name. */
int sim_trace_add(sim_trace_t *t, const char *name, sim_activity_t a, sim_time_t start,
                  sim_time_t dur, uint64_t bytes);

/* Opens a slice at START that sim_trace_end() closes; slices nest (a collective around its
 * sync). Returns 0, or -E2BIG past SIM_TRACE_MAX_DEPTH open slices, or -EINVAL. */
int sim_trace_begin(sim_trace_t *t, const char *name, sim_activity_t a, sim_time_t start);

/* Closes the innermost open slice at END (clamped to its start) and records it, as
 * sim_trace_add() does. Returns what that returns, or -EINVAL when no slice is open. */
int sim_trace_end(sim_trace_t *t, sim_time_t end, uint64_t bytes);

size_t sim_trace_count(const sim_trace_t *t);   /* slices stored */
size_t sim_trace_dropped(const sim_trace_t *t); /* slices not stored because of the cap */

struct sim_trace_slice {
    const char *name;
    sim_activity_t activity;
    sim_time_t start, dur;
    uint64_t bytes;
};

/* For the writers (sim/report/report.h): fills OUT with slice I (I < sim_trace_count(T)), in
 * recording order. */
void sim_trace_get(const sim_trace_t *t, size_t i, struct sim_trace_slice *out);

#endif /* SIM_TRACE_H */
