/*
 * Per-IPU time accounting and the trace recorder.
 *
 * A trace stores slices compactly (32 bytes: times, bytes, an interned name and an activity),
 * grows its array on demand up to the caller's cap, and counts what it had to drop, so a long
 * run keeps bounded memory and the trace says it was truncated instead of silently lying.
 */
#include "sim/report/trace.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/text.h"

struct event {
    sim_time_t start, dur;
    uint64_t bytes;
    uint16_t name;
    uint8_t activity;
};

struct open_slice {
    sim_time_t start;
    uint16_t name;
    uint8_t activity;
};

struct sim_trace {
    struct event *ev;
    size_t n, cap, max, dropped;
    int num_names;
    char names[SIM_TRACE_MAX_NAMES + 1][SIM_TRACE_NAME_MAX]; /* the last is "(other)" */
    struct open_slice open[SIM_TRACE_MAX_DEPTH];
    int depth;
};

const char *sim_activity_name(sim_activity_t a)
{
    static const char *const names[SIM_ACT_COUNT] = {"compute", "exchange", "sync", "idle", "host"};

    if ((int)a < 0 || a >= SIM_ACT_COUNT)
        return "unknown";
    return names[a];
}

void sim_stats_advance(sim_ipu_stats_t *s, sim_activity_t a, sim_time_t dur)
{
    if ((int)a < 0 || a >= SIM_ACT_COUNT)
        a = SIM_ACT_IDLE;
    s->clock = sim_time_add(s->clock, dur);
    s->time[a] = sim_time_add(s->time[a], dur);
}

sim_time_t sim_stats_advance_to(sim_ipu_stats_t *s, sim_activity_t a, sim_time_t t)
{
    sim_time_t dur;

    if (t <= s->clock)
        return 0;
    dur = t - s->clock;
    sim_stats_advance(s, a, dur);
    return dur;
}

int sim_trace_create(size_t max_events, sim_trace_t **out)
{
    sim_trace_t *t;

    if (out == NULL)
        return -EINVAL;
    t = calloc(1, sizeof(*t));
    *out = t;
    if (t == NULL)
        return -ENOMEM;
    t->max = max_events;
    sim_strlcpy(t->names[SIM_TRACE_MAX_NAMES], "(other)", SIM_TRACE_NAME_MAX);
    return 0;
}

void sim_trace_destroy(sim_trace_t *t)
{
    if (t == NULL)
        return;
    free(t->ev);
    free(t);
}

/* The id of NAME (truncated) in the table, adding it if there is room, else "(other)". */
static uint16_t intern(sim_trace_t *t, const char *name)
{
    char key[SIM_TRACE_NAME_MAX];

    sim_strlcpy(key, name, sizeof(key));
    for (int i = 0; i < t->num_names; i++)
        if (strcmp(t->names[i], key) == 0)
            return (uint16_t)i;
    if (t->num_names == SIM_TRACE_MAX_NAMES)
        return SIM_TRACE_MAX_NAMES;
    memcpy(t->names[t->num_names], key, sizeof(key));
    return (uint16_t)t->num_names++;
}

static int store(sim_trace_t *t, uint16_t name, sim_activity_t a, sim_time_t start, sim_time_t dur,
                 uint64_t bytes)
{
    if (t->n == t->max) {
        t->dropped++;
        return -ENOSPC;
    }
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 256;
        struct event *ev;

        if (cap > t->max)
            cap = t->max;
        ev = realloc(t->ev, cap * sizeof(*ev));
        if (ev == NULL) {
            t->dropped++;
            return -ENOMEM;
        }
        t->ev = ev;
        t->cap = cap;
    }
    if ((int)a < 0 || a >= SIM_ACT_COUNT)
        a = SIM_ACT_IDLE;
    t->ev[t->n++] = (struct event){start, dur, bytes, name, (uint8_t)a};
    return 0;
}

int sim_trace_add(sim_trace_t *t, const char *name, sim_activity_t a, sim_time_t start,
                  sim_time_t dur, uint64_t bytes)
{
    if (t == NULL || name == NULL)
        return -EINVAL;
    return store(t, intern(t, name), a, start, dur, bytes);
}

int sim_trace_begin(sim_trace_t *t, const char *name, sim_activity_t a, sim_time_t start)
{
    if (t == NULL || name == NULL)
        return -EINVAL;
    if (t->depth == SIM_TRACE_MAX_DEPTH)
        return -E2BIG;
    t->open[t->depth++] = (struct open_slice){start, intern(t, name), (uint8_t)a};
    return 0;
}

int sim_trace_end(sim_trace_t *t, sim_time_t end, uint64_t bytes)
{
    struct open_slice *o;

    if (t == NULL || t->depth == 0)
        return -EINVAL;
    o = &t->open[--t->depth];
    return store(t, o->name, (sim_activity_t)o->activity, o->start,
                 end > o->start ? end - o->start : 0, bytes);
}

size_t sim_trace_count(const sim_trace_t *t)
{
    return t->n;
}

size_t sim_trace_dropped(const sim_trace_t *t)
{
    return t->dropped;
}

void sim_trace_get(const sim_trace_t *t, size_t i, struct sim_trace_slice *out)
{
    const struct event *e = &t->ev[i];

    out->name = t->names[e->name];
    out->activity = (sim_activity_t)e->activity;
    out->start = e->start;
    out->dur = e->dur;
    out->bytes = e->bytes;
}
