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

/* scripts/calibrate --no-fit --loo (its "C table"): the run left out, then the set as
 * overrides, reduction_buffer_bytes v1.1's. */
static const struct {
    const char *left_out, *overrides;
} loo_sets[] = {
    {"v1.0 resnet50-POD16", "amp_efficiency=0.641,host_sync_ns=1485000,gateway_domain_gbs=25.581,"
                            "reduction_buffer_bytes=4213642"},
    {"v1.0 resnet50-POD64", "amp_efficiency=0.638,host_sync_ns=1485000,gateway_domain_gbs=25.935,"
                            "reduction_buffer_bytes=4227895"},
    {"v1.0 bert-large-POD16",
     "amp_efficiency=0.631,host_sync_ns=1458286.29,gateway_domain_gbs=26.288,"
     "reduction_buffer_bytes=4232216"},
    {"v1.0 bert-large-POD64",
     "amp_efficiency=0.626,host_sync_ns=1402459.894,gateway_domain_gbs=26.203,"
     "reduction_buffer_bytes=4211042"},
    {"v1.1 resnet50-POD16",
     "amp_efficiency=0.621,host_sync_ns=1430819.597,gateway_domain_gbs=27.697,"
     "reduction_buffer_bytes=4296174"},
    {"v1.1 resnet50-POD64",
     "amp_efficiency=0.615,host_sync_ns=1410739.194,gateway_domain_gbs=28.52,"
     "reduction_buffer_bytes=4330911"},
    {"v1.1 resnet50-POD128",
     "amp_efficiency=0.626,host_sync_ns=1451008.707,gateway_domain_gbs=25.676,"
     "reduction_buffer_bytes=4272509"},
    {"v1.1 resnet50-POD256",
     "amp_efficiency=0.627,host_sync_ns=1467712.265,gateway_domain_gbs=30.353,"
     "reduction_buffer_bytes=4280716"},
    {"v1.1 bert-large-POD16",
     "amp_efficiency=0.626,host_sync_ns=1460172.6,gateway_domain_gbs=27.306,"
     "reduction_buffer_bytes=4194306"},
    {"v1.1 bert-large-POD64", "amp_efficiency=0.631,host_sync_ns=1485000,gateway_domain_gbs=27.886,"
                              "reduction_buffer_bytes=4336195"},
    {"v1.1 bert-large-POD128",
     "amp_efficiency=0.627,host_sync_ns=1459000.441,gateway_domain_gbs=27.036,"
     "reduction_buffer_bytes=4271113"},
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
