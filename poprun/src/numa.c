/*
 * NUMA binding with hwloc; see numa.h.
 *
 * poprun binds in the instance wrapper rather than asking mpirun for --bind-to numa, because
 * mpirun's NUMA mapping would also reorder ranks over hosts, and poprun places instances on
 * hosts in contiguous blocks. mpirun itself always gets --bind-to none.
 */
#include "numa.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "util.h"

int numa_bind_local(int local_index, char *desc, size_t desclen, char *err, size_t errlen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return errf(err, errlen, "--numa-aware: hwloc cannot initialise");
    int rc = 0;
    if (hwloc_topology_load(topo) != 0) {
        rc = errf(err, errlen, "--numa-aware: hwloc cannot read this host's topology");
        goto out_destroy;
    }
    int nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (nodes <= 0) {
        rc = errf(err, errlen, "--numa-aware: hwloc finds no NUMA node on this host");
        goto out_destroy;
    }
    hwloc_obj_t node =
        hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)(local_index % nodes));
    if (hwloc_set_cpubind(topo, node->cpuset, HWLOC_CPUBIND_PROCESS) != 0) {
        rc = errf(err, errlen, "--numa-aware: cannot bind to the CPUs of NUMA node %u",
                  node->os_index);
        goto out_destroy;
    }
    /* Best effort: memory binding is refused on some kernels and containers. */
    (void)hwloc_set_membind(topo, node->nodeset, HWLOC_MEMBIND_BIND,
                            HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET);
    char *cpus = NULL;
    hwloc_bitmap_list_asprintf(&cpus, node->cpuset);
    snprintf(desc, desclen, "NUMA node %u of %d (CPUs %s)", node->os_index, nodes,
             cpus ? cpus : "?");
    free(cpus);
out_destroy:
    hwloc_topology_destroy(topo);
    return rc;
}
