/*
 * Binding to NUMA nodes or cores with hwloc; see numa.h.
 *
 * poprun binds in the instance wrapper rather than asking mpirun for --bind-to numa or core,
 * because mpirun's mapping would also reorder ranks over hosts, and poprun places instances on
 * hosts in contiguous blocks; and mpirun refuses to bind more ranks than cores, which poprun
 * runs (--oversubscribe). mpirun itself always gets --bind-to none.
 */
#include "wrapper/numa.h"

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/util.h"

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

/* The union of the cpusets and nodesets of objects [FIRST, FIRST + COUNT) of TYPE. */
static void union_of(hwloc_topology_t topo, hwloc_obj_type_t type, int first, int count,
                     hwloc_bitmap_t cpus, hwloc_bitmap_t mems)
{
    for (int k = first; k < first + count; k++) {
        hwloc_obj_t obj = hwloc_get_obj_by_type(topo, type, (unsigned)k);
        hwloc_bitmap_or(cpus, cpus, obj->cpuset);
        hwloc_bitmap_or(mems, mems, obj->nodeset);
    }
}

int numa_bind_local(bool cores, int local_index, int local_count, char *desc, size_t desclen,
                    char *err, size_t errlen)
{
    hwloc_obj_type_t type = cores ? HWLOC_OBJ_CORE : HWLOC_OBJ_NUMANODE;
    const char *what = cores ? "core" : "NUMA node", *opt = "--process-placement";
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0)
        return errf(err, errlen, "%s: hwloc cannot initialise", opt);
    int rc = 0, first, count;
    hwloc_bitmap_t cpus = hwloc_bitmap_alloc(), mems = hwloc_bitmap_alloc();
    if (hwloc_topology_load(topo) != 0) {
        rc = errf(err, errlen, "%s: hwloc cannot read this host's topology", opt);
        goto out_destroy;
    }
    int objs = hwloc_get_nbobjs_by_type(topo, type);
    if (objs <= 0) {
        rc = errf(err, errlen, "%s: hwloc finds no %s on this host", opt, what);
        goto out_destroy;
    }
    if (cores && local_count > objs) {
        /* Fewer cores than instances: whichever pair shared a core would wait for each other
         * while another core idles; the kernel places them better (OpenMPI binds to cores only
         * up to 2 ranks, and to a socket above). */
        snprintf(desc, desclen, "nothing: %d instances on this host's %d core%s", local_count, objs,
                 objs == 1 ? "" : "s");
        rc = 1;
        goto out_destroy;
    }
    numa_share(local_index, local_count, objs, &first, &count);
    union_of(topo, type, first, count, cpus, mems);
    if (hwloc_set_cpubind(topo, cpus, HWLOC_CPUBIND_PROCESS) != 0) {
        rc = errf(err, errlen, "%s: cannot bind to the CPUs of %s %d%s", opt, what, first,
                  count > 1 ? " and the next" : "");
        goto out_destroy;
    }
    /* Best effort: memory binding is refused on some kernels and containers. */
    if (!cores)
        (void)hwloc_set_membind(topo, mems, HWLOC_MEMBIND_BIND,
                                HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET);
    char *list = NULL;
    hwloc_bitmap_list_asprintf(&list, cpus);
    if (count == 1)
        snprintf(desc, desclen, "%s %d of %d (CPUs %s)", what, first, objs, list ? list : "?");
    else
        snprintf(desc, desclen, "%ss %d-%d of %d (CPUs %s)", what, first, first + count - 1, objs,
                 list ? list : "?");
    free(list);
out_destroy:
    hwloc_bitmap_free(mems);
    hwloc_bitmap_free(cpus);
    hwloc_topology_destroy(topo);
    return rc;
}
