/*
 * sim-step --plan's ranges: each printed row simulated again under every leave-one-out set of
 * the fitted constants (docs/validation.md): the constants refitted without one published run
 * at a time. The spread of a row's throughput over the sets is the model's own uncertainty for
 * that configuration; a plan that beats another under every set beats it whatever run the fit
 * leans on. The sets are those `scripts/calibrate --loo` printed (its "C table" line), with the
 * newest round's (v1.1's) per-round constant, as sim-step's defaults have it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plan.h"

/* scripts/calibrate --loo (its "C table"): the run left out, then the set as overrides. */
static const struct {
    const char *left_out, *overrides;
} loo_sets[] = {
    /* LOO-SETS-BEGIN */
    {"none", "amp_efficiency=0.6"},
    /* LOO-SETS-END */
};

#define NSETS (sizeof loo_sets / sizeof loo_sets[0])

size_t plan_range_sets(void)
{
    return NSETS;
}

const char *plan_range_set(size_t i)
{
    return i < NSETS ? loo_sets[i].overrides : NULL;
}

int plan_ranges(const simstep_t *w, plan_cand_t *c, size_t rows)
{
    char topo[512];
    simstep_t *v = malloc(sizeof *v);
    int status = 0;

    if (!v)
        return 1;
    for (size_t i = 0; i < rows && status == 0; i++) {
        c[i].range_lo = c[i].range_hi = c[i].sps;
        for (size_t k = 0; k < NSETS && status == 0; k++) {
            plan_cand_t x = c[i];

            if (snprintf(topo, sizeof topo, "%s,%s", w->o.topology, loo_sets[k].overrides) >=
                (int)sizeof topo) {
                fprintf(stderr, "sim-step: --plan: the topology is too long for its ranges\n");
                status = 1;
                break;
            }
            *v = *w;
            v->o.topology = topo;
            status = plan_simulate(v, &x);
            if (k < PLAN_MAX_SETS)
                c[i].under_set[k] = x.sps;
            c[i].range_lo = x.sps < c[i].range_lo ? x.sps : c[i].range_lo;
            c[i].range_hi = x.sps > c[i].range_hi ? x.sps : c[i].range_hi;
        }
    }
    free(v);
    return status;
}
