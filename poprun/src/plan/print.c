/*
 * The topology table of --print-topology and --dry-run; see print.h.
 */
#include "plan/print.h"

#include <string.h>

/* "a-b", or "a" when the range holds one value. */
static void format_range(char *buf, size_t len, int first, int count)
{
    if (count == 1)
        snprintf(buf, len, "%d", first);
    else
        snprintf(buf, len, "%d-%d", first, first + count - 1);
}

static const char *plural(int n, const char *one, const char *many)
{
    return n == 1 ? one : many;
}

void print_topology(FILE *f, const struct plan *p, const struct plan_topology *topo)
{
    fprintf(f, "topology %s: %d IPUs in %d IPU-Link %s\n", topo->name, topo->num_ipus,
            topo->num_ilds, plural(topo->num_ilds, "domain", "domains"));
    fprintf(f, "job: %d %s x %d IPU%s = %d IPU%s; %d %s on %d %s; %d IPU-Link %s\n",
            p->num_replicas, plural(p->num_replicas, "replica", "replicas"), p->ipus_per_replica,
            plural(p->ipus_per_replica, "", "s"), p->total_ipus, plural(p->total_ipus, "", "s"),
            p->num_instances, plural(p->num_instances, "instance", "instances"), p->hosts.n,
            plural(p->hosts.n, "host", "hosts"), p->num_ilds,
            plural(p->num_ilds, "domain", "domains"));
    int host_w = 4;
    for (int h = 0; h < p->hosts.n; h++) {
        int l = (int)strlen(p->hosts.v[h]);
        host_w = l > host_w ? l : host_w;
    }
    fprintf(f, "%-*s  %-3s  %-8s  %-9s  %s\n", host_w, "host", "ild", "instance", "replicas",
            "ipus");
    for (int i = 0; i < p->num_instances; i++) {
        const struct plan_instance *pi = &p->inst[i];
        char reps[32], ipus[32];
        format_range(reps, sizeof(reps), pi->replica_offset, pi->num_replicas);
        if (pi->first_ipu >= 0)
            format_range(ipus, sizeof(ipus), pi->first_ipu, pi->num_ipus);
        else
            snprintf(ipus, sizeof(ipus), "?");
        fprintf(f, "%-*s  %-3d  %-8d  %-9s  %s\n", host_w, p->hosts.v[pi->host], pi->ild, i, reps,
                ipus);
    }
}
