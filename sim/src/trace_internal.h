/*
 * Read access to a trace's slices for the writers in report.c. Not part of the API.
 */
#ifndef SIM_TRACE_INTERNAL_H
#define SIM_TRACE_INTERNAL_H

#include "sim/report.h"

struct sim_trace_slice {
    const char *name;
    sim_activity_t activity;
    sim_time_t start, dur;
    uint64_t bytes;
};

/* Fills OUT with slice I (I < sim_trace_count(T)), in recording order. */
void sim_trace_get(const sim_trace_t *t, size_t i, struct sim_trace_slice *out);

#endif /* SIM_TRACE_INTERNAL_H */
