/*
 * sim-step --plan: each candidate's full simulation (the very job `sim-step` with the printed
 * options runs), the table of the best, their commands, and the JSON result (plan.h).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

static const char *const recomputes[] = {"checkpoints", "none", "stage"};

/* W's options with C's shape: what plan_command prints. */
static void options_of(const simstep_t *w, const plan_cand_t *c, simstep_opts_t *o)
{
    *o = w->o;
    o->plan = 0;
    o->json = NULL;
    o->sensitivity = 0;
    o->replicas = c->replicas;
    o->stages = c->stages;
    o->micro_batch = c->micro;
    o->accum = c->accum;
    o->global_batch = 0;
    o->gb_hi = 0;
    o->placement = c->placement[0] ? c->placement : NULL;
    o->layers_per_ipu = 0;
    o->recompute = recomputes[c->recompute];
    o->state = plan_state(c);
    o->offchip = 0;
    o->rts = NULL;
    o->steps = 1; /* one timed step after one untimed: enough for a plan, and printed */
    o->warmup = 1;
}

int plan_simulate(const simstep_t *w, plan_cand_t *c)
{
    simstep_t *v = calloc(1, sizeof *v);
    int status;

    if (!v)
        return 1;
    options_of(w, c, &v->o);
    v->model = w->model;
    v->minfo = w->minfo;
    v->default_stages = w->default_stages;
    status = simstep_run_job(v, 1, v->o.topology);
    if (status == 0) {
        const simstep_result_t *r = &v->res;
        double t[5] = {r->compute_us, r->exchange_us, r->sync_us, r->host_us, r->idle_us};

        c->simulated = 1;
        c->sps = simstep_samples_per_s(v);
        c->step_us = r->step_us;
        for (int i = 0; i < 5; i++)
            c->share[i] = r->step_us > 0 ? t[i] / r->step_us : 0;
        c->reduce_share = r->step_us > 0 ? r->reduce_us / r->step_us : 0;
        c->peak = (double)r->peak_memory;
        c->ttt_s = simstep_time_to_train(v);
    }
    free(v);
    return status ? 1 : 0;
}

void plan_command(const simstep_t *w, const plan_cand_t *c, char *buf, size_t len)
{
    simstep_opts_t o;
    size_t at = 0;

#define ADD(...) (at += (size_t)snprintf(buf + at, at < len ? len - at : 0, __VA_ARGS__))
    options_of(w, c, &o);
    ADD("sim-step --model %s", o.model);
    if (!strcmp(o.model, "bert-large"))
        ADD(" --sequence-length %d", o.seq);
    if (o.per_pack > 0)
        ADD(" --sequences-per-pack %g", o.per_pack);
    ADD(" --topology %s --replicas %ld --stages %ld --micro-batch %ld --gradient-accumulation %ld",
        o.topology, o.replicas, o.stages, o.micro_batch, o.accum);
    if (o.placement)
        ADD(" --att-ffn-placement %s", o.placement);
    ADD(" --recompute %s --optimizer-state %s", o.recompute, o.state);
    if (o.optimizer)
        ADD(" --optimizer %s", o.optimizer);
    if (o.grad_type != GCL_F16)
        ADD(" --grad-type %s", gcl_dtype_name(o.grad_type));
    if (o.host_servers)
        ADD(" --host-servers %ld", o.host_servers);
    if (o.host_rate >= 0)
        ADD(" --host-samples-per-s %g", o.host_rate);
    if (o.steps != 2 || o.warmup != 1)
        ADD(" --steps %ld --warmup %ld", o.steps, o.warmup);
    if (o.epochs > 0)
        ADD(" --epochs %g", o.epochs);
    if (o.train_samples > 0)
        ADD(" --train-samples %.0f", o.train_samples);
    if (o.eval_samples > 0)
        ADD(" --eval-samples %.0f", o.eval_samples);
    if (o.eval_every > 0)
        ADD(" --eval-every %.0f", o.eval_every);
    if (o.overhead_s > 0)
        ADD(" --run-overhead-s %g", o.overhead_s);
#undef ADD
}

static void print_row(const simstep_t *w, const plan_cand_t *c, int rank)
{
    char shape[32], batch[32], range[48];

    snprintf(shape, sizeof shape, "%d x %d", c->replicas, c->stages);
    snprintf(batch, sizeof batch, "%ld x %ld", c->micro, c->accum);
    if (c->range_hi > 0)
        snprintf(range, sizeof range, "%.0f-%.0f", c->range_lo, c->range_hi);
    else
        snprintf(range, sizeof range, "-");
    printf("%3d  %-9s %-10s %-32s %-11s %-17s %10.1f %15s %9.3f  %4.1f/%4.1f/%3.1f/%4.1f/%4.1f  "
           "%7.1f %7.1f",
           rank, shape, batch, c->placement[0] ? c->placement : "(balanced layers)",
           recomputes[c->recompute], plan_state(c), c->sps, range, c->step_us / 1e3,
           100 * c->share[0], 100 * c->share[1], 100 * c->share[2], 100 * c->share[3],
           100 * c->share[4], c->peak / 1e6, c->headroom / 1e6);
    if (c->ttt_s > 0)
        printf(" %9.1f", c->ttt_s / 60);
    printf("\n");
    (void)w;
}

static void write_json(const simstep_t *w, const plan_cand_t *c, size_t n, long considered,
                       long simulated, double reserve)
{
    FILE *f = fopen(w->o.json, "w");
    char cmd[1024];

    if (!f) {
        perror(w->o.json);
        return;
    }
    fprintf(f,
            "{\"model\": \"%s\", \"topology\": \"%s\", \"global_batch\": [%ld, %ld], "
            "\"memory_reserve_bytes\": %.0f, \"considered\": %ld, \"simulated\": %ld,\n "
            "\"loo_sets\": [",
            w->minfo.name, w->o.topology, w->o.global_batch,
            w->o.gb_hi ? w->o.gb_hi : w->o.global_batch, reserve, considered, simulated);
    for (size_t k = 0; k < plan_range_sets(); k++)
        fprintf(f, "%s\"%s\"", k ? ", " : "", plan_range_set(k));
    fprintf(f, "],\n \"candidates\": [");
    for (size_t i = 0; i < n; i++) {
        plan_command(w, &c[i], cmd, sizeof cmd);
        fprintf(f,
                "%s\n  {\"replicas\": %d, \"stages\": %d, \"micro_batch\": %ld, "
                "\"gradient_accumulation\": %ld, \"placement\": \"%s\", \"recompute\": \"%s\", "
                "\"optimizer_state\": \"%s\", \"fits\": %s, \"bound_samples_per_s\": %.3f, "
                "\"memory_headroom_bytes\": %.0f, \"simulated\": %s",
                i ? "," : "", c[i].replicas, c[i].stages, c[i].micro, c[i].accum,
                c[i].placement, recomputes[c[i].recompute], plan_state(&c[i]),
                c[i].dropped ? "false" : "true", c[i].bound,
                isfinite(c[i].headroom) ? c[i].headroom : 0, c[i].simulated ? "true" : "false");
        if (c[i].simulated)
            fprintf(f,
                    ", \"samples_per_s\": %.3f, \"step_time_us\": %.6f, \"compute_share\": %.6f, "
                    "\"exchange_share\": %.6f, \"sync_share\": %.6f, \"host_share\": %.6f, "
                    "\"idle_share\": %.6f, \"reduction_share\": %.6f, \"peak_memory_bytes\": "
                    "%.0f, \"time_to_train_s\": %.6f",
                    c[i].sps, c[i].step_us, c[i].share[0], c[i].share[1], c[i].share[2],
                    c[i].share[3], c[i].share[4], c[i].reduce_share, c[i].peak, c[i].ttt_s);
        if (c[i].simulated && c[i].range_hi > 0) {
            fprintf(f, ", \"samples_per_s_range\": [%.3f, %.3f], \"samples_per_s_sets\": [",
                    c[i].range_lo, c[i].range_hi);
            for (size_t k = 0; k < plan_range_sets() && k < PLAN_MAX_SETS; k++)
                fprintf(f, "%s%.3f", k ? ", " : "", c[i].under_set[k]);
            fprintf(f, "]");
        }
        fprintf(f, ", \"command\": \"%s\"}", cmd);
    }
    fprintf(f, "]}\n");
    fclose(f);
}

int plan_report(const simstep_t *w, plan_cand_t *c, size_t n, long considered, long simulated,
                long dropped, double reserve)
{
    char cmd[1024], range[64];
    long rows = 0;

    snprintf(range, sizeof range, w->o.gb_hi ? "%ld-%ld" : "%ld", w->o.global_batch, w->o.gb_hi);
    printf("sim-step --plan: %s on %s, global batch %s: %ld candidates considered, %ld did not "
           "fit with %.0f MB free per IPU; of the %ld that fit, %ld simulated in full, the others' "
           "bounds below the best %ld\n",
           w->minfo.name, w->o.topology, range, considered, dropped, reserve / 1e6,
           considered - dropped, simulated, w->o.top);
    while ((size_t)rows < n && rows < w->o.top && c[rows].simulated)
        rows++;
    if (!w->o.no_ranges && plan_ranges(w, c, (size_t)rows) != 0)
        return 1;
    printf("  #  R x K     B x A      placement                        recompute   state        "
           "      samples/s  range (%zu sets)   step ms  comp/exch/sync/host/idle %%  peak MB  "
           "free MB%s\n",
           w->o.no_ranges ? 0 : plan_range_sets(), c[0].ttt_s > 0 ? " ttt (min)" : "");
    for (long i = 0; i < rows; i++)
        print_row(w, &c[i], (int)i + 1);
    printf("commands (each gives these numbers, bit for bit):\n");
    for (size_t i = 0; i < (size_t)rows; i++) {
        plan_command(w, &c[i], cmd, sizeof cmd);
        printf("%3zu  %s\n", i + 1, cmd);
    }
    fflush(stdout);
    if (w->o.json)
        write_json(w, c, n, considered, simulated, reserve);
    return 0;
}
