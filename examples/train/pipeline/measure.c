/* Statistics of the per-step measurements; see measure.h. */
#include "pipeline/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Nearest rank: the value at rank ceil(P/100 x N), 1-based. */
static double rank(const double *sorted, size_t n, double p)
{
    size_t k = (size_t)ceil(p / 100.0 * (double)n);
    return sorted[k ? k - 1 : 0];
}

void measure_dist(double *v, size_t n, measure_dist_t *out)
{
    memset(out, 0, sizeof *out);
    if (n == 0)
        return;
    qsort(v, n, sizeof *v, cmp_double);
    double sum = 0;
    for (size_t i = 0; i < n; i++)
        sum += v[i];
    out->p50 = rank(v, n, 50);
    out->p90 = rank(v, n, 90);
    out->p99 = rank(v, n, 99);
    out->max = v[n - 1];
    out->mean = sum / (double)n;
    out->count = (long)n;
}

long measure_warmup(long steps)
{
    if (steps >= 20)
        return MEASURE_WARMUP;
    return steps >= 4 ? steps / 4 : 0;
}

/* Replica R's time of step I: its slowest stage's. */
static double replica_step(const step_measures_t *m, int stages, int r, long i)
{
    double t = 0;
    for (int k = 0; k < stages; k++) {
        double v = m->step_s[((size_t)r * stages + k) * (size_t)m->nsteps + (size_t)i];
        t = v > t ? v : t;
    }
    return t;
}

/* Sum over IPUs [G0, G1) and steps from FROM of X, and of the step times. */
static double share(const step_measures_t *m, const double *x, int g0, int g1, long from)
{
    double part = 0, all = 0;
    for (int g = g0; g < g1; g++) {
        for (long i = from; i < m->nsteps; i++) {
            part += x[(size_t)g * (size_t)m->nsteps + (size_t)i];
            all += m->step_s[(size_t)g * (size_t)m->nsteps + (size_t)i];
        }
    }
    return all > 0 ? part / all : 0;
}

double measure_coll_fraction(const step_measures_t *m, int replicas, int stages, int r)
{
    if (r < 0 || r >= replicas)
        return 0;
    return share(m, m->coll_s, r * stages, (r + 1) * stages, measure_warmup(m->nsteps));
}

int measure_summarise(const step_measures_t *m, int replicas, int stages, measure_summary_t *out)
{
    memset(out, 0, sizeof *out);
    long w = measure_warmup(m->nsteps), later = m->nsteps - w;
    out->warmup = w;
    for (long i = 0; i < w; i++)
        for (int r = 0; r < replicas; r++) {
            double t = replica_step(m, stages, r, i);
            out->first[i] = t > out->first[i] ? t : out->first[i];
        }
    size_t n = (size_t)replicas * (size_t)(later > 0 ? later : 0);
    double *v = malloc((n ? n : 1) * sizeof *v);
    if (!v)
        return -1;
    for (int r = 0, k = 0; r < replicas; r++)
        for (long i = w; i < m->nsteps; i++)
            v[k++] = replica_step(m, stages, r, i);
    measure_dist(v, n, &out->step);
    free(v);
    out->coll_fraction = share(m, m->coll_s, 0, m->nipus, w);
    out->p2p_fraction = share(m, m->p2p_s, 0, m->nipus, w);
    for (int g = 0; g < m->nipus; g++) {
        const ipu_record_t *r = &m->ipu[g];
        if (r->first_step_s > out->time_to_first_step_s)
            out->time_to_first_step_s = r->first_step_s;
        if (r->host_peak_bytes > out->host_peak_bytes)
            out->host_peak_bytes = r->host_peak_bytes;
    }
    return 0;
}

void measure_free(step_measures_t *m)
{
    free(m->ipu);
    free(m->step_s);
    free(m->coll_s);
    free(m->p2p_s);
    memset(m, 0, sizeof *m);
}
