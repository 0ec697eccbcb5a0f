/*
 * sim-step --sensitivity: how the step time moves when each constant of the cost model goes to
 * either end of its range (gcl_sim_param lists them with their ranges: a sourced one's stated
 * uncertainty, an assumed one's believed range, a fitted one's prior), without refitting the
 * fitted constants (scripts/calibrate --sensitivity does both). Each variant is the whole job
 * again, in this process, on the pod "BASE,KEY=VALUE" (a topology override), or with the
 * model's host preprocessing rate halved and doubled. The host servers go from one per
 * IPU-POD64 to four. A constant without a range (a datasheet count) or that cannot change this
 * job's time is not rerun: an AMP group of a precision no layer uses, the Streaming Memory
 * bandwidth when the optimizer state is not there.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "simstep.h"

typedef struct {
    const char *key, *kind;
    double value, v[2], step_us[2]; /* halved and doubled; step_us < 0: the run failed */
    int status[2];
} row_t;

/* Whether the model has a layer of DTYPE. */
static int uses_dtype(const simstep_t *w, gcl_dtype_t dtype)
{
    for (int i = 0; i < w->minfo.layers; i++) {
        gcl_layer_t l;

        if (gcl_sim_model_layer(w->model, i, &l) == GCL_OK && l.dtype == dtype)
            return 1;
    }
    return 0;
}

static int inert(const simstep_t *w, const char *key)
{
    if (!strcmp(key, "amp_k_group_f16"))
        return !uses_dtype(w, GCL_F16);
    if (!strcmp(key, "amp_k_group_f32"))
        return !uses_dtype(w, GCL_F32);
    if (!strcmp(key, "streaming_gbs")) /* the state off chip, or each micro-batch's input */
        return strncmp(w->pinfo.optimizer_state, "streaming", 9) != 0 && w->minfo.input_bytes <= 0;
    return 0;
}

/* The value KEY takes at the low (i = 0) and high (i = 1) end of its range; the host servers
 * from one to four per IPU-POD64. */
static double varied(const simstep_t *w, const gcl_sim_param_t *p, int i)
{
    if (!strcmp(p->key, "host_servers")) {
        double pods = ceil(w->info.num_replicas * w->stages / 64.0);

        return i ? 4 * pods : pods;
    }
    return i ? p->hi : p->lo;
}

/* Runs the job once more with OVERRIDE appended to the pod, or with host rate HOST_RATE (>= 0).
 * Returns the step time in us, or -1 with *STATUS set when the run failed. */
static double rerun(const simstep_t *w, const char *base, const char *override, double host_rate,
                    int *status)
{
    simstep_t *v = calloc(1, sizeof *v);
    char spec[512];
    double us = -1;

    if (!v)
        return -1;
    v->o = w->o;
    v->o.sensitivity = 0;
    v->o.json = NULL;
    if (host_rate >= 0)
        v->o.host_rate = host_rate;
    v->model = w->model;
    v->minfo = w->minfo;
    v->default_stages = w->default_stages;
    snprintf(spec, sizeof spec, "%s%s%s", base, override ? "," : "", override ? override : "");
    *status = simstep_run_job(v, 0, spec);
    if (*status == 0)
        us = v->res.step_us;
    free(v);
    return us;
}

static void run_rows(const simstep_t *w, const char *base, row_t *rows, int *n)
{
    for (int i = 0; i < w->nparams; i++) {
        const gcl_sim_param_t *p = &w->params[i];
        double value = p->value;
        row_t *r = &rows[*n];

        if ((p->lo == p->hi && strcmp(p->key, "host_servers") != 0) || inert(w, p->key))
            continue;
        if (!strcmp(p->key, "host_servers") && value <= 0) /* the default: one per 16 IPUs */
            value = ceil(w->info.num_replicas * w->stages / 16.0);
        *r = (row_t){p->key, p->kind, value, {0, 0}, {0, 0}, {0, 0}};
        for (int k = 0; k < 2; k++) {
            char kv[128];

            r->v[k] = varied(w, p, k);
            snprintf(kv, sizeof kv, "%s=%.3f", p->key, r->v[k]);
            r->step_us[k] = rerun(w, base, kv, -1, &r->status[k]);
        }
        (*n)++;
    }
    /* The model's host preprocessing rate (per server), when it has one. */
    if (w->feed.samples_per_s > 0) {
        row_t *r = &rows[(*n)++];

        *r =
            (row_t){"host_samples_per_s", "assumed", w->feed.samples_per_s, {0, 0}, {0, 0}, {0, 0}};
        for (int k = 0; k < 2; k++) {
            r->v[k] = k ? 2 * r->value : r->value / 2;
            r->step_us[k] = rerun(w, base, NULL, r->v[k], &r->status[k]);
        }
    }
}

static void print_rows(const simstep_t *w, const row_t *rows, int n)
{
    double t0 = w->res.step_us;

    printf("sensitivity: step time %.3f ms at the defaults; each constant at the low, then the "
           "high end of its range, the fitted ones not refitted (scripts/calibrate "
           "--sensitivity refits)\n",
           t0 / 1e3);
    printf("  %-24s %-8s %12s %12s %12s %9s %12s %12s %9s\n", "constant", "kind", "value", "low",
           "step (ms)", "change", "high", "step (ms)", "change");
    for (int i = 0; i < n; i++) {
        const row_t *r = &rows[i];

        printf("  %-24s %-8s %12.6g", r->key, r->kind, r->value);
        for (int k = 0; k < 2; k++) {
            if (r->step_us[k] < 0)
                printf(" %12.6g %12s %9s", r->v[k], r->status[k] == 1 ? "no fit/fail" : "error",
                       "-");
            else
                printf(" %12.6g %12.3f %+8.1f%%", r->v[k], r->step_us[k] / 1e3,
                       100 * (r->step_us[k] / t0 - 1));
        }
        printf("\n");
    }
    fflush(stdout);
}

static char *rows_json(const row_t *rows, int n)
{
    size_t cap = 256 + (size_t)n * 320, at = 0;
    char *s = malloc(cap);

    if (!s)
        return NULL;
    at += (size_t)snprintf(s + at, cap - at, "[");
    for (int i = 0; i < n; i++) {
        const row_t *r = &rows[i];

        at += (size_t)snprintf(s + at, cap - at,
                               "%s\n  {\"key\": \"%s\", \"kind\": \"%s\", \"value\": %.6g, "
                               "\"low\": %.6g, \"low_step_us\": %.6f, \"high\": %.6g, "
                               "\"high_step_us\": %.6f}",
                               i ? "," : "", r->key, r->kind, r->value, r->v[0], r->step_us[0],
                               r->v[1], r->step_us[1]);
    }
    snprintf(s + at, cap - at, "]");
    return s;
}

int simstep_sensitivity(simstep_t *w, const char *base, char **json)
{
    row_t rows[80];
    int n = 0, failed = 0;

    run_rows(w, base, rows, &n);
    for (int i = 0; i < n; i++)
        failed |= (rows[i].step_us[0] < 0 && rows[i].status[0] != 1) ||
                  (rows[i].step_us[1] < 0 && rows[i].status[1] != 1);
    print_rows(w, rows, n);
    *json = rows_json(rows, n);
    return failed;
}
