/*
 * The two outputs of a simulated run: a JSON report and a Chrome trace, written from the
 * per-IPU statistics and traces of sim/report/trace.h. The writers only read.
 *
 * The outputs print cycles of the device's tile clock (floor of each value separately, so the
 * printed parts may sum to one or two cycles less than the printed total).
 */
#ifndef SIM_REPORT_H
#define SIM_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sim/device/device.h"
#include "sim/base/time.h"
#include "sim/report/trace.h"

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
