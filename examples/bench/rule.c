/* The shared timing rule: see rule.h. */
#include "rule.h"

#include <math.h>
#include <stdlib.h>

rule_t rule_default(void)
{
    return (rule_t){.warmup = 5, .iters = 0, .repeats = RULE_REPEATS, .target_s = RULE_TARGET_S};
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Calls per batch so that one lasts about TARGET seconds (never 0, at most RULE_MAX_CALLS). */
static long calibrate(rule_batch_fn fn, void *arg, double target)
{
    long n = 1;
    for (;;) {
        double t = fn(arg, n);
        if (t < 0)
            return -1;
        if (t >= target / 4 || n >= RULE_MAX_CALLS) {
            double per = t > 0 ? t / (double)n : target;
            double want = ceil(target / per);
            return want < 1 ? 1 : want > RULE_MAX_CALLS ? RULE_MAX_CALLS : (long)want;
        }
        n *= 2;
    }
}

/* One round of R batches of N calls: the median and the spread of the times per call. */
static int round_of(rule_batch_fn fn, void *arg, long n, int r, double *median, double *spread)
{
    double t[64];
    if (r > 64)
        r = 64;
    for (int i = 0; i < r; i++) {
        t[i] = fn(arg, n);
        if (t[i] < 0)
            return -1;
        t[i] = t[i] / (double)n * 1e6;
    }
    qsort(t, (size_t)r, sizeof t[0], cmp_double);
    *median = r % 2 ? t[r / 2] : (t[r / 2 - 1] + t[r / 2]) / 2;
    int lo = r / 4, hi = r - 1 - r / 4; /* 2nd and 4th of 5 */
    *spread = r >= 3 && *median > 0 ? (t[hi] - t[lo]) / *median : 0;
    return 0;
}

int rule_time(const rule_t *r, rule_batch_fn fn, void *arg, rule_result_t *out)
{
    int repeats = r->repeats < 1 ? 1 : r->repeats;
    if (r->warmup > 0 && fn(arg, r->warmup) < 0)
        return -1;
    long n = r->iters > 0 ? r->iters : calibrate(fn, arg, r->target_s > 0 ? r->target_s : 0.02);
    if (n < 0)
        return -1;
    double median = 0, spread = 0;
    for (int round = 0;; round++) {
        if (round_of(fn, arg, n, repeats, &median, &spread) != 0)
            return -1;
        /* A doubled round would last 2 n R t: not past RULE_MAX_ROUND_S. */
        double next_s = 2.0 * (double)n * repeats * median / 1e6;
        if (repeats < 3 || spread <= RULE_STABLE || round >= RULE_MAX_DOUBLINGS ||
            n * 2 > RULE_MAX_CALLS || next_s > RULE_MAX_ROUND_S)
            break;
        n *= 2;
    }
    *out = (rule_result_t){.iters = n,
                           .repeats = repeats,
                           .time_us = median,
                           .spread = spread,
                           .stable = spread <= RULE_STABLE};
    return 0;
}

void rule_percentiles(double *v, long n, double *median, double *p99)
{
    if (n <= 0) {
        *median = *p99 = 0;
        return;
    }
    qsort(v, (size_t)n, sizeof v[0], cmp_double);
    *median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
    long k = (long)ceil(0.99 * (double)n) - 1; /* nearest rank */
    *p99 = v[k < 0 ? 0 : k >= n ? n - 1 : k];
}
