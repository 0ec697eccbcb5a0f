/*
 * --process-placement spreadnuma (and --numa-aware) and spreadcores: binding an instance to its
 * share of the NUMA nodes or of the cores of its host, with hwloc. binding.h says when.
 */
#ifndef POPRUN_NUMA_H
#define POPRUN_NUMA_H

#include <stdbool.h>
#include <stddef.h>

/* The NUMA nodes (or cores) [*FIRST, *FIRST + *COUNT) of NODES that local instance LOCAL_INDEX
 * of LOCAL_COUNT gets: they are divided evenly among the instances when there are at least as
 * many as instances (4 nodes, 2 instances: 0-1 and 2-3), else instance k gets node
 * k mod NODES. Pure arithmetic, for the unit tests. */
void numa_share(int local_index, int local_count, int nodes, int *first, int *count);

/* Binds this process (and so the program it then starts) to its share (numa_share) of this
 * host's cores (CORES) or NUMA nodes (with their memory), among those it may use. Writes
 * "NUMA node 0 of 2 (CPUs 0-7)", "NUMA nodes 0-1 of 4 (CPUs ...)" or "core 1 of 2 (CPUs 1)"
 * into DESC. Returns 0, or -1 with a reason in ERR. A failure to bind memory only (single-node
 * machines, containers) is not an error: the CPU binding is what matters for IPU threads. With
 * CORES and more instances on the host than cores, nothing is bound: returns 1, DESC saying
 * why. */
int numa_bind_local(bool cores, int local_index, int local_count, char *desc, size_t desclen,
                    char *err, size_t errlen);

#endif /* POPRUN_NUMA_H */
