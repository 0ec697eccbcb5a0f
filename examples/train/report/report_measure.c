/*
 * The per-step measurements in what train prints and writes (report.h): the real step-time
 * line of the summary, their keys in --json, and the --step-log CSV. Real figures are measured
 * on this host; keys that start with sim_ are simulated on the pod.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

/* "123.4 us", "1.23 ms", "4.567 s". */
static void fmt_time(double s, char *buf, size_t len)
{
    if (s < 1e-3)
        snprintf(buf, len, "%.1f us", 1e6 * s);
    else if (s < 1)
        snprintf(buf, len, "%.2f ms", 1e3 * s);
    else
        snprintf(buf, len, "%.3f s", s);
}

void report_measures_line(const train_job_t *job)
{
    const step_measures_t *m = &job->res.m;
    measure_summary_t ms;
    if (!m->ipu || measure_summarise(m, job->replicas, job->stages, &ms))
        return;
    char p50[32], p90[32], p99[32], mx[32];
    fmt_time(ms.step.p50, p50, sizeof p50);
    fmt_time(ms.step.p90, p90, sizeof p90);
    fmt_time(ms.step.p99, p99, sizeof p99);
    fmt_time(ms.step.max, mx, sizeof mx);
    printf("train: real step time p50 %s, p90 %s, p99 %s, max %s (%ld steps of %d replica%s "
           "after %ld warm-up); first step done %.2f s after the start; %.1f%% of step time in "
           "the gradient all-reduce\n",
           p50, p90, p99, mx, m->nsteps - ms.warmup, job->replicas, job->replicas > 1 ? "s" : "",
           ms.warmup, ms.time_to_first_step_s, 100 * ms.coll_fraction);
}

/* Replica 0's simulated step, stage by stage, split into its shares; the layers' compute; the
 * gradient all-reduce's share beside its real one. */
void report_sim_split(const train_job_t *job, const summary_t *s)
{
    const step_measures_t *m = &job->res.m;
    const train_results_t *r = &job->res;
    measure_summary_t ms;
    if (!m->ipu || m->nsteps < 1 || measure_summarise(m, job->replicas, job->stages, &ms))
        return;
    double n = (double)m->nsteps, coll = 0, step = 0;
    for (int k = 0; k < job->stages; k++) {
        const ipu_record_t *p = &m->ipu[k];
        char t[5][32], st[48] = "";
        double v[5] = {p->sim_step_s / n, p->sim_compute_s / n, p->sim_exchange_s / n,
                       p->sim_sync_s / n, p->sim_host_wait_s / n};
        for (int i = 0; i < 5; i++)
            fmt_time(v[i], t[i], sizeof t[i]);
        if (job->stages > 1)
            snprintf(st, sizeof st, ", stage %d of %d", k + 1, job->stages);
        printf("train: simulated step on %s (replica 0%s): %s = compute %s + exchange %s + sync "
               "%s + host %s + idle %.1f%%\n",
               s->topology, st, t[0], t[1], t[2], t[3], t[4],
               v[0] > 0 ? 100 * p->sim_idle_s / n / v[0] : 0);
        coll = p->sim_allreduce_s / n > coll ? p->sim_allreduce_s / n : coll;
        step = v[0] > step ? v[0] : step;
    }
    char line[2048] = "train: simulated layers per step:", t[32], u[32];
    size_t at = strlen(line);
    for (int l = 0; l < job->shape.nlayers && at < sizeof line; l++) {
        char name[48];
        layer_name(&job->shape, l, name, sizeof name);
        fmt_time(r->sim_layer_s[0][l], t, sizeof t);
        fmt_time(r->sim_layer_s[1][l], u, sizeof u);
        at += (size_t)snprintf(line + at, sizeof line - at, " %s %s + %s,", name, t, u);
    }
    double upd = 0;
    for (int k = 0; k < job->stages; k++)
        upd += r->sim_update_s[k];
    fmt_time(upd, t, sizeof t);
    printf("%s update %s (forward + backward, each with its ReLU, syncs and on-chip exchange)\n",
           line, t);
    fmt_time(coll, t, sizeof t);
    printf("train: the gradient all-reduce: %s of the simulated step (%.1f%%); %.1f%% of the real "
           "step on this host\n",
           t, step > 0 ? 100 * coll / step : 0, 100 * ms.coll_fraction);
}

static void json_dist(FILE *f, const char *key, const measure_dist_t *d)
{
    fprintf(f,
            "  \"%s\": {\"p50\": %.9g, \"p90\": %.9g, \"p99\": %.9g, \"max\": %.9g, \"mean\": "
            "%.9g, \"count\": %ld},\n",
            key, d->p50, d->p90, d->p99, d->max, d->mean, d->count);
}

/* Replica 0's simulated step times (its slowest stage) after the warm-up, as a distribution. */
static void json_sim_dist(FILE *f, const train_job_t *job, long warmup)
{
    const train_results_t *r = &job->res;
    long from = r->start_step + warmup, n = job->total_steps - from;
    double *t = n > 0 ? calloc((size_t)n, sizeof *t) : NULL;
    if (!t) {
        fprintf(f, "  \"sim_step_time_dist_s\": null,\n");
        return;
    }
    for (long i = 0; i < n; i++)
        for (int k = 0; k < job->stages; k++) {
            double v = r->sim_step_s[(size_t)k * job->total_steps + from + i];
            t[i] = v > t[i] ? v : t[i];
        }
    measure_dist_t d;
    measure_dist(t, (size_t)n, &d);
    json_dist(f, "sim_step_time_dist_s", &d);
    free(t);
}

/* Every IPU's simulated memory and its simulated time per step, by share. */
static void json_sim_ipus(FILE *f, const train_job_t *job)
{
    const step_measures_t *m = &job->res.m;
    double steps = m->nsteps > 0 ? (double)m->nsteps : 1;
    fprintf(f, "  \"sim_memory\": [");
    for (int g = 0; g < m->nipus; g++) {
        const ipu_record_t *p = &m->ipu[g];
        double known = p->mem_weights + p->mem_gradients + p->mem_optimizer + p->mem_activations +
                       p->mem_stash;
        fprintf(f,
                "%s\n    {\"ipu\": %d, \"replica\": %d, \"stage\": %d, \"peak_bytes\": %.0f, "
                "\"capacity_bytes\": %.0f, \"headroom_bytes\": %.0f, \"weights_bytes\": %.0f, "
                "\"gradients_bytes\": %.0f, \"optimizer_bytes\": %.0f, \"activations_bytes\": "
                "%.0f, \"stash_bytes\": %.0f, \"other_bytes\": %.0f}",
                g ? "," : "", g, g / job->stages, g % job->stages, p->mem_peak, p->mem_capacity,
                p->mem_capacity - p->mem_peak, p->mem_weights, p->mem_gradients, p->mem_optimizer,
                p->mem_activations, p->mem_stash, p->mem_peak > known ? p->mem_peak - known : 0);
    }
    fprintf(f, "\n  ],\n  \"sim_time_split\": [");
    for (int g = 0; g < m->nipus; g++) {
        const ipu_record_t *p = &m->ipu[g];
        fprintf(f,
                "%s\n    {\"ipu\": %d, \"replica\": %d, \"stage\": %d, \"step_s\": %.9g, "
                "\"compute_s\": %.9g, \"exchange_s\": %.9g, \"sync_s\": %.9g, \"host_wait_s\": "
                "%.9g, \"idle_s\": %.9g, \"allreduce_s\": %.9g}",
                g ? "," : "", g, g / job->stages, g % job->stages, p->sim_step_s / steps,
                p->sim_compute_s / steps, p->sim_exchange_s / steps, p->sim_sync_s / steps,
                p->sim_host_wait_s / steps, p->sim_idle_s / steps, p->sim_allreduce_s / steps);
    }
    fprintf(f, "\n  ],\n  \"sim_layers\": [");
    const train_results_t *r = &job->res;
    for (int l = 0, k = 0; l < job->shape.nlayers; l++) {
        static const char *const kinds[] = {"dense", "conv", "pool"};
        char name[48];
        while (k + 1 < job->stages && l >= job->first[k + 1])
            k++;
        layer_name(&job->shape, l, name, sizeof name);
        fprintf(f,
                "%s\n    {\"name\": \"%s\", \"kind\": \"%s\", \"stage\": %d, \"forward_s\": "
                "%.9g, \"backward_s\": %.9g}",
                l ? "," : "", name, kinds[job->shape.layer[l].kind], k, r->sim_layer_s[0][l],
                r->sim_layer_s[1][l]);
    }
    fprintf(f, "\n  ],\n  \"sim_update_s\": [");
    for (int k = 0; k < job->stages; k++)
        fprintf(f, "%s%.9g", k ? ", " : "", r->sim_update_s[k]);
    fprintf(f, "],\n");
}

void report_json_measures(FILE *f, const train_job_t *job, const summary_t *s)
{
    const train_results_t *r = &job->res;
    const step_measures_t *m = &r->m;
    measure_summary_t ms;
    memset(&ms, 0, sizeof ms);
    if (m->ipu)
        measure_summarise(m, job->replicas, job->stages, &ms);
    double start_unix = train_unix_s() - (train_now_s() - job->t0);
    fprintf(f, "  \"backend\": \"%s\",\n  \"simulated\": %s,\n",
            job->o->backend == BACKEND_MPI ? "mpi" : "gcl", s->simulated ? "true" : "false");
    fprintf(f, "  \"start_unix_s\": %.6f,\n  \"first_step_unix_s\": %.6f,\n", start_unix,
            r->first_step_unix_s);
    fprintf(f, "  \"time_to_first_step_s\": %.6f,\n  \"warmup_steps\": %ld,\n",
            ms.time_to_first_step_s, ms.warmup);
    fprintf(f, "  \"warmup_step_time_s\": [");
    for (long i = 0; i < ms.warmup; i++)
        fprintf(f, "%s%.9g", i ? ", " : "", ms.first[i]);
    fprintf(f, "],\n");
    json_dist(f, "step_time_s", &ms.step);
    fprintf(f, "  \"collective_wait_fraction\": %.6f,\n", ms.coll_fraction);
    fprintf(f, "  \"collective_wait_fraction_per_replica\": [");
    for (int q = 0; m->ipu && q < job->replicas; q++)
        fprintf(f, "%s%.6f", q ? ", " : "",
                measure_coll_fraction(m, job->replicas, job->stages, q));
    fprintf(f, "],\n  \"pipeline_wait_fraction\": %.6f,\n", ms.p2p_fraction);
    fprintf(f, "  \"compute_fraction\": %.6f,\n", 1 - ms.coll_fraction - ms.p2p_fraction);
    fprintf(f, "  \"host_memory_peak_bytes\": %.0f,\n", ms.host_peak_bytes);
    if (s->simulated && m->ipu) {
        json_sim_dist(f, job, ms.warmup);
        json_sim_ipus(f, job);
    } else {
        fprintf(f, "  \"sim_step_time_dist_s\": null,\n  \"sim_memory\": null,\n"
                   "  \"sim_time_split\": null,\n  \"sim_layers\": null,\n"
                   "  \"sim_update_s\": null,\n");
        fprintf(f, "  \"sim_note\": \"%s\",\n",
                job->o->backend == BACKEND_MPI
                    ? "--backend mpi trains on this host's CPUs with MPI_Allreduce: nothing is "
                      "simulated"
                    : "no simulated figures were recorded");
    }
}

/* One CSV row per step and IPU: the simulated time is replica 0's (every replica of a
 * data-parallel step takes the same on the pod). */
static void step_rows(FILE *f, const train_job_t *job)
{
    const step_measures_t *m = &job->res.m;
    const train_results_t *r = &job->res;
    int sim = job->o->backend == BACKEND_GCL;
    for (int g = 0; g < m->nipus; g++) {
        int replica = g / job->stages, stage = g % job->stages;
        for (long i = 0; i < m->nsteps; i++) {
            size_t at = (size_t)g * (size_t)m->nsteps + (size_t)i;
            long step = r->start_step + i;
            fprintf(f, "%ld,%d,%d,%.9g,%.9g,%.9g,", step + 1, replica, stage, m->step_s[at],
                    m->coll_s[at], m->p2p_s[at]);
            if (sim && replica == 0)
                fprintf(f, "%.9g\n", r->sim_step_s[(size_t)stage * job->total_steps + step]);
            else
                fprintf(f, "\n");
        }
    }
}

int report_step_log(const train_job_t *job, const char *path)
{
    char tmp[4200];
    snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
    FILE *f = fopen(tmp, "w");
    if (!f) {
        fprintf(stderr, "train: cannot write %s: %s\n", tmp, strerror(errno));
        return -1;
    }
    fprintf(f, "step,replica,stage,step_s,collective_s,pipeline_wait_s,sim_step_s\n");
    if (job->res.m.ipu)
        step_rows(f, job);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad || rename(tmp, path) != 0) {
        fprintf(stderr, "train: cannot write %s: %s\n", path, strerror(errno));
        unlink(tmp);
        return -1;
    }
    return 0;
}
