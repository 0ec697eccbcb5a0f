/*
 * Pipeline schedules, the balancing rule and the ideal-pipeline simulation (sim/schedule/pipeline.h).
 */
#include "sim/schedule/pipeline.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const sched_names[SIM_SCHED_COUNT] = {"gpipe", "1f1b", "popart"};

const char *sim_schedule_name(sim_schedule_t s)
{
    return (int)s >= 0 && s < SIM_SCHED_COUNT ? sched_names[s] : "unknown";
}

int sim_schedule_parse(const char *name)
{
    for (int i = 0; name && i < SIM_SCHED_COUNT; i++)
        if (strcmp(name, sched_names[i]) == 0)
            return i;
    return -1;
}

void sim_pipe_order(sim_schedule_t s, int stage, int stages, uint32_t micro, sim_pipe_op_t *ops)
{
    uint32_t n = 0, f = 0, b = 0;
    uint32_t warm = s == SIM_SCHED_GPIPE ? micro : (uint32_t)(stages - stage - 1);

    if (warm > micro)
        warm = micro;
    while (f < warm)
        ops[n++] = (sim_pipe_op_t){'F', f++};
    while (f < micro) {
        ops[n++] = (sim_pipe_op_t){'F', f++};
        ops[n++] = (sim_pipe_op_t){'B', b++};
    }
    while (b < micro)
        ops[n++] = (sim_pipe_op_t){'B', b++};
}

uint32_t sim_pipe_in_flight(sim_schedule_t s, int stage, int stages, uint32_t micro)
{
    uint32_t held = s == SIM_SCHED_GPIPE    ? micro
                    : s == SIM_SCHED_POPART ? (uint32_t)(2 * (stages - stage) - 1)
                                            : (uint32_t)(stages - stage);

    return held < micro ? held : micro;
}

double sim_pipe_bubble_formula(int stages, uint32_t micro)
{
    return (double)(stages - 1) / ((double)micro + stages - 1);
}

double sim_pipe_bubble_popart(int fragments, uint32_t micro)
{
    return (double)(2 * fragments - 2) / ((double)micro + 2 * fragments - 2);
}

uint32_t sim_pipe_cycles(int fragments, uint32_t micro)
{
    return micro + 2 * (uint32_t)(fragments > 0 ? fragments : 1) - 2;
}

/* Front-to-back packing into stages of at most T (see the header); returns the stages used, or
 * STAGES + 1 when T is too small. FIRST may be NULL. */
static int pack(const sim_time_t *cost, size_t n, int stages, sim_time_t t, uint32_t *first)
{
    int s = 0;
    sim_time_t load = 0;

    if (first)
        first[0] = 0;
    for (size_t i = 0; i < n; i++) {
        int close = load > 0 && (cost[i] > t - load || n - i == (size_t)(stages - s - 1));

        if (cost[i] > t)
            return stages + 1;
        if (close) {
            if (++s >= stages)
                return stages + 1;
            if (first)
                first[s] = (uint32_t)i;
            load = 0;
        }
        load += cost[i];
    }
    return s + 1;
}

int sim_pipe_balance(const sim_time_t *cost, size_t n, int stages, size_t pin, uint32_t *first)
{
    sim_time_t lo = 0, hi = 0;
    int rest;

    if (stages < 1 || n < (size_t)stages || (pin > 0 && stages > 1 && n - pin < (size_t)stages - 1))
        return -EINVAL;
    if (pin > 0 && stages > 1) {
        first[0] = 0;
        rest = sim_pipe_balance(cost + pin, n - pin, stages - 1, 0, first + 1);
        for (int s = 1; rest == 0 && s < stages; s++)
            first[s] += (uint32_t)pin;
        return rest;
    }
    for (size_t i = 0; i < n; i++) {
        lo = cost[i] > lo ? cost[i] : lo;
        hi = sim_time_add(hi, cost[i]);
    }
    while (lo < hi) { /* the smallest T that packs into STAGES stages */
        sim_time_t mid = lo + (hi - lo) / 2;

        if (pack(cost, n, stages, mid, NULL) <= stages)
            hi = mid;
        else
            lo = mid + 1;
    }
    return pack(cost, n, stages, lo, first) <= stages ? 0 : -EINVAL;
}

/* Ends of each stage's forward and backward of every micro-batch, filled in dependency order. */
struct sim_state {
    int k;
    uint32_t a;
    sim_pipe_op_t *ops;                         /* [k][2a] */
    uint32_t *next;                             /* [k]: next op of each stage */
    sim_time_t *f_end, *b_end, *free_at, *busy; /* [k][a], [k][a], [k], [k] */
};

/* Runs every op whose input is there; returns how many ran. */
static uint32_t sweep(struct sim_state *st, const sim_time_t *fwd, const sim_time_t *bwd,
                      sim_time_t link)
{
    uint32_t ran = 0;

    for (int s = 0; s < st->k; s++) {
        while (st->next[s] < 2 * st->a) {
            sim_pipe_op_t op = st->ops[(size_t)s * 2 * st->a + st->next[s]];
            size_t at = (size_t)s * st->a + op.micro;
            sim_time_t ready = 0, *dep = NULL;

            if (op.pass == 'F' && s > 0)
                dep = &st->f_end[at - st->a];
            if (op.pass == 'B')
                dep = s < st->k - 1 ? &st->b_end[at + st->a] : &st->f_end[at];
            if (dep && *dep == SIM_TIME_MAX)
                break;
            if (dep)
                ready = *dep + (op.pass == 'B' && s == st->k - 1 ? 0 : link);
            ready = sim_time_max(ready, st->free_at[s]);
            st->free_at[s] = ready + (op.pass == 'F' ? fwd[s] : bwd[s]);
            st->busy[s] += op.pass == 'F' ? fwd[s] : bwd[s];
            (op.pass == 'F' ? st->f_end : st->b_end)[at] = st->free_at[s];
            st->next[s]++;
            ran++;
        }
    }
    return ran;
}

int sim_pipe_simulate(sim_schedule_t s, int stages, uint32_t micro, const sim_time_t *fwd,
                      const sim_time_t *bwd, sim_time_t link, sim_pipe_result_t *out)
{
    struct sim_state st = {stages, micro, NULL, NULL, NULL, NULL, NULL, NULL};
    size_t cells = (size_t)stages * micro;
    int rc = 0;

    if (stages < 1 || micro < 1 || stages > 4096 || micro > 4096)
        return -EINVAL;
    st.ops = malloc(2 * cells * sizeof(*st.ops));
    st.next = calloc((size_t)stages, sizeof(*st.next));
    st.f_end = malloc(cells * sizeof(sim_time_t));
    st.b_end = malloc(cells * sizeof(sim_time_t));
    st.free_at = calloc((size_t)stages, sizeof(sim_time_t));
    st.busy = calloc((size_t)stages, sizeof(sim_time_t));
    if (!st.ops || !st.next || !st.f_end || !st.b_end || !st.free_at || !st.busy) {
        rc = -ENOMEM;
        goto out_free;
    }
    for (size_t i = 0; i < cells; i++)
        st.f_end[i] = st.b_end[i] = SIM_TIME_MAX;
    for (int k = 0; k < stages; k++)
        sim_pipe_order(s, k, stages, micro, st.ops + (size_t)k * 2 * micro);
    while (sweep(&st, fwd, bwd, link) > 0)
        ;
    *out = (sim_pipe_result_t){0};
    for (int k = 0; k < stages; k++)
        out->makespan = sim_time_max(out->makespan, st.free_at[k]);
    for (int k = 0; k < stages && out->makespan > 0; k++) {
        sim_time_t idle = out->makespan - st.busy[k];

        out->idle_max = sim_time_max(out->idle_max, idle);
        out->bubble += (double)idle / (double)out->makespan / stages;
    }
out_free:
    free(st.busy);
    free(st.free_at);
    free(st.b_end);
    free(st.f_end);
    free(st.next);
    free(st.ops);
    return rc;
}
