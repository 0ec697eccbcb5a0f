/*
 * --numa-aware: binding an instance to one NUMA node of its host, with hwloc.
 */
#ifndef POPRUN_NUMA_H
#define POPRUN_NUMA_H

#include <stddef.h>

/* Binds this process (and so the program it then starts) to the CPUs and memory of NUMA node
 * LOCAL_INDEX mod (NUMA nodes of this host). Writes "NUMA node N of M (CPUs ...)" into DESC.
 * Returns 0, or -1 with a reason in ERR. A failure to bind memory only (single-node machines,
 * containers) is not an error: the CPU binding is what matters for IPU threads. */
int numa_bind_local(int local_index, char *desc, size_t desclen, char *err, size_t errlen);

#endif /* POPRUN_NUMA_H */
