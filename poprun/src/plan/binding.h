/*
 * Where poprun binds its instances (the launcher's choice; numa.c binds, in each wrapper).
 *
 * A process bound to cores that another process of the machine is also bound to shares them,
 * however idle the rest of the machine is; an unbound one goes where the kernel finds room. So
 * poprun binds by default only where each host's cores are its instances' own:
 *   1. --process-placement POLICY wins: spreadcores, spreadnuma or disabled.
 *   2. --numa-aware: spreadnuma.
 *   3. Binding asked of mpirun (--bind-to, --cpu-set, --cpu-list, --rankfile or
 *      hwloc_base_binding_policy in --mpi-global-args, or OMPI_MCA_hwloc_base_binding_policy):
 *      mpirun binds as told, poprun not at all.
 *   4. Hosts that are network namespaces of the machine poprun runs on: /run/netns/HOST (ip
 *      netns add HOST), or /run/netns/RUNID-HOST of the cluster of scripts/netns-cluster or
 *      scripts/slurm-cluster poprun runs in (RUNID in NETNS_CLUSTER_ID, which both set, and
 *      sbatch and salloc pass on). They share its cores, and the first instance of each host
 *      would be bound to the same core. Nothing is bound, and poprun says so once.
 *   5. Otherwise (this host alone, distinct hosts, a Slurm allocation's nodes): spreadcores,
 *      each instance bound to its share of its host's cores (those it may use: a Slurm job's
 *      cpuset, a container's).
 */
#ifndef POPRUN_BINDING_H
#define POPRUN_BINDING_H

#include <stddef.h>

#include "plan/plan.h"
#include "cli/settings.h"

/* The policy for the instances of plan P: "spreadcores", "spreadnuma", or NULL for none. When
 * rule 4 leaves them unbound, NOTE gets the line to print once (else it is set to ""). NETNS_DIR
 * is where network namespaces are named ("/run/netns"; a test passes its own). */
const char *placement_choose(const struct poprun_options *o, const struct plan *p,
                             const char *netns_dir, char *note, size_t notelen);

#endif /* POPRUN_BINDING_H */
