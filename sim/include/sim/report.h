/*
 * Per-IPU statistics, trace recording, and the two outputs: a JSON report and a Chrome trace.
 *
 * Who owns what. The caller keeps one sim_ipu_stats_t and one sim_trace_t per simulated IPU and
 * updates them from that IPU's context only (nothing here is locked). At the end, it describes
 * its IPUs in an array of sim_report_ipu_t and hands that to the writers, which only read.
 *
 * Time accounting. An IPU's clock is the sum of the time it spent in four activities:
 *   compute  - charged work (sim_device_compute_time());
 *   exchange - moving data over IPU-Links and GW-Links, from send to arrival;
 *   sync     - synchronisations (sim_sync_time());
 *   idle     - waiting for a peer that is behind (receive before the data could arrive, or the
 *              tail until the slowest IPU of the run finishes);
 *   host     - waiting for the host servers' data feed (sim/feed.h).
 * sim_stats_advance() and sim_stats_advance_to() keep clock == the sum of the five.
 *
 * The outputs print cycles of the device's tile clock (floor of each value separately, so the
 * printed parts may sum to one or two cycles less than the printed total).
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/device.h"
#include "sim/time.h"

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

/* ---- Writers. ---- */

/* One simulated IPU of this instance, as the writers see it. */
typedef struct sim_report_ipu {
    int ipu;                      /* global IPU id: the trace's tid */
    const sim_ipu_stats_t *stats; /* required */
    uint64_t peak_memory;         /* bytes, e.g. sim_mem_peak() */
    uint64_t memory_capacity;     /* bytes, e.g. sim_mem_capacity(); 0 to omit */
    const sim_trace_t *trace;     /* may be NULL */
} sim_report_ipu_t;

/* What the whole output is about. */
typedef struct sim_report_info {
    const char *topology;       /* topology name, e.g. sim_topology_name() */
    const sim_device_t *device; /* NULL means the GC200 */
    int instance;               /* this instance (process) index: the trace's pid */
    int num_instances;          /* 0 to omit */
    const char *program;        /* free text, e.g. argv[0]; NULL to omit */
} sim_report_info_t;

#define SIM_REPORT_INFO_INIT                                                                       \
    {                                                                                              \
        NULL, NULL, 0, 0, NULL                                                                     \
    }

/* Writes the JSON report (format in sim/README.md): per IPU, compute/exchange/sync/idle/total
 * cycles and peak memory; totals over this instance's IPUs; the topology and device. Returns 0,
 * -EINVAL for a NULL argument, or -EIO when writing failed. */
int sim_report_write_json(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                          size_t n);

/* Writes a Chrome trace (JSON object format; opens in https://ui.perfetto.dev and
 * chrome://tracing): one process per instance (pid = instance), one thread per simulated IPU
 * (tid = IPU id), every slice an "X" complete event with ts and dur in microseconds. Returns 0,
 * -EINVAL, or -EIO. */
int sim_trace_write_json(FILE *f, const sim_report_info_t *info, const sim_report_ipu_t *ipus,
                         size_t n);

/* The two writers to a path: the file is created (mode 0644 less umask) or truncated. Return 0,
 * -EINVAL, or a negative errno of fopen/fclose, or -EIO. */
int sim_report_write_json_path(const char *path, const sim_report_info_t *info,
                               const sim_report_ipu_t *ipus, size_t n);
int sim_trace_write_json_path(const char *path, const sim_report_info_t *info,
                              const sim_report_ipu_t *ipus, size_t n);

/* Expands PATTERN into OUT: "%i" becomes INSTANCE and "%%" a '%' (GCL_SIM_REPORT=run-%i.json).
 * Returns 0; -EINVAL for any other '%' sequence; -ENAMETOOLONG when OUT (LEN bytes) is too
 * small. */
int sim_report_expand_path(const char *pattern, int instance, char *out, size_t len);

#endif /* SIM_REPORT_H */
