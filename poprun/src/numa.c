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

void numa_share(int local_index, int local_count, int nodes, int *first, int *count)
{
    if (local_count < 1)
        local_count = 1;
    if (nodes >= local_count) {
        *first = (int)((long)local_index * nodes / local_count);
        *count = (int)((long)(local_index + 1) * nodes / local_count) - *first;
    } else {
        *first = local_index % nodes;
        *count = 1;
    }
}

/* The union of the cpusets and nodesets of nodes [FIRST, FIRST + COUNT). */
static void union_of(hwloc_topology_t topo, int first, int count, hwloc_bitmap_t cpus,
                     hwloc_bitmap_t mems)
{
    for (int k = first; k < first + count; k++) {
        hwloc_obj_t node = hwloc_get_obj_by_type(topo, HWLOC_OBJ_NUMANODE, (unsigned)k);
        hwloc_bitmap_or(cpus, cpus, node->cpuset);
        hwloc_bitmap_or(mems, mems, node->nodeset);
    }
}

int numa_bind_local(int local_index, int local_count, char *desc, size_t desclen, char *err,
                    size_t errlen)
{
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return errf(err, errlen, "--process-placement: hwloc cannot initialise");
    int rc = 0, first, count;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), mems = hwloc_bitmap_alloc();
    if (hwloc_topology_load(topo) != 0) {
        rc = errf(err, errlen, "--process-placement: hwloc cannot read this host's topology");
        goto out_destroy;
    }
    int nodes = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
    if (nodes <= 0) {
        rc = errf(err, errlen, "--process-placement: hwloc finds no NUMA node on this host");
        goto out_destroy;
    }
    numa_share(local_index, local_count, nodes, &first, &count);
    union_of(topo, first, count, cpus, mems);
    if (hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) != 0) {
        rc = errf(err, errlen, "--process-placement: cannot bind to the CPUs of NUMA node %d%s",
                  first, count > 1 ? " and the next" : "");
        goto out_destroy;
    }
    /* Best effort: memory binding is refused on some kernels and containers. */
    (void)hwloc_set_membind(topo, mems, HWLOC_MEMBIND_BIND,
                            HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET);
    char *list = NULL;
    hwloc_bitmap_list_asprintf(&list, cpus);
    if (count == 1)
        snprintf(desc, desclen, "NUMA node %d of %d (CPUs %s)", first, nodes, list ? list : "?");
    else
        snprintf(desc, desclen, "NUMA nodes %d-%d of %d (CPUs %s)", first, first + count - 1, nodes,
                 list ? list : "?");
    free(list);
out_destroy:
    hwloc_bitmap_free(mems);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
    return rc;
}
