/*
 * --topology through sim; see topo.h. poprun keeps no preset table or parser of its own.
 */
#include "plan/topo.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sim/topology/topology.h>

#include "common/util.h"

/* Copies what the plan needs out of a sim topology. */
static int fill(const sim_topology_t *st, struct plan_topology *t, char *err, size_t errlen)
{
    snprintf(t->name, sizeof(t->name), "%s", sim_topology_name(st));
    t->num_ipus = sim_topology_num_ipus(st);
    t->num_ilds = sim_topology_num_ilds(st);
    if (t->num_ipus <= 0 || t->num_ilds <= 0)
        return errf(err, errlen, "topology %s has no IPU", t->name);
    t->ild_first = xcalloc((size_t)t->num_ilds, sizeof(int));
    t->ild_size = xcalloc((size_t)t->num_ilds, sizeof(int));
    for (int k = 0; k < t->num_ilds; k++)
        t->ild_first[k] = -1;
    int prev = -1;
    for (int ipu = 0; ipu < t->num_ipus; ipu++) {
        int k = sim_topology_ild_of(st, ipu);
        /* sim numbers ILDs so that each holds consecutive IPUs; the plan relies on it. */
        if (k < 0 || k >= t->num_ilds || (k != prev && t->ild_first[k] >= 0)) {
            plan_topology_free(t);
            return errf(err, errlen, "topology %s: IPU-Link domain of IPU %d is not contiguous",
                        t->name, ipu);
        }
        if (t->ild_first[k] < 0)
            t->ild_first[k] = ipu;
        t->ild_size[k]++;
        prev = k;
    }
    return 0;
}

static int open_spec(const char *spec, sim_topology_t **st, char **instance_spec, char *err,
                     size_t errlen)
{
    char e[512];
    if (sim_topology_preset(spec, st, NULL, 0) == 0) {
        *instance_spec = xstrdup(sim_topology_name(*st));
        return 0;
    }
    if (access(spec, F_OK) != 0)
        return errf(err, errlen,
                    "--topology %s: not a preset (M2000, POD16, POD64, POD128, POD256) and not "
                    "a file",
                    spec);
    if (sim_topology_load(spec, st, e, sizeof(e)) != 0)
        return errf(err, errlen, "--topology: %s", e);
    char abs[PATH_MAX];
    *instance_spec = xstrdup(realpath(spec, abs) ? abs : spec);
    return 0;
}

int topo_resolve(const char *spec, int num_replicas, int ipus_per_replica, struct plan_topology *t,
                 char **instance_spec, char *err, size_t errlen)
{
    memset(t, 0, sizeof(*t));
    *instance_spec = NULL;
    long total = (long)num_replicas * ipus_per_replica;
    if (!spec) {
        spec = total <= INT_MAX ? sim_topology_smallest_preset((int)total) : NULL;
        if (!spec)
            return errf(err, errlen,
                        "%ld IPUs (%d replica%s x %d IPU%s per replica) exceed the largest "
                        "preset topology, POD256 (256 IPUs); describe a larger pod with "
                        "--topology FILE",
                        total, num_replicas, num_replicas == 1 ? "" : "s", ipus_per_replica,
                        ipus_per_replica == 1 ? "" : "s");
    }
    sim_topology_t *st = NULL;
    if (open_spec(spec, &st, instance_spec, err, errlen) != 0)
        return -1;
    int rc = fill(st, t, err, errlen);
    sim_topology_free(st);
    if (rc != 0) {
        free(*instance_spec);
        *instance_spec = NULL;
    }
    return rc;
}
