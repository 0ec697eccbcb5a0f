/*
 * --process-placement spreadnuma (and --numa-aware): binding an instance to its share of the
 * NUMA nodes of its host, with hwloc.
 */
#ifndef POPRUN_NUMA_H
#define POPRUN_NUMA_H

#include <stddef.h>

/* The NUMA nodes [*FIRST, *FIRST + *COUNT) of NODES that local instance LOCAL_INDEX of
 * LOCAL_COUNT gets: the nodes are divided evenly among the instances when there are at least as
 * many nodes as instances (4 nodes, 2 instances: 0-1 and 2-3), else instance k gets node
 * k mod NODES. Pure arithmetic, for the unit tests. */
void numa_share(int local_index, int local_count, int nodes, int *first, int *count);

/* Binds this process (and so the program it then starts) to the CPUs and memory of its share of
 * this host's NUMA nodes (numa_share). Writes "NUMA node 0 of 2 (CPUs 0-7)" or "NUMA nodes 0-1 of
 * 4 (CPUs ...)" into DESC. Returns 0, or -1 with a reason in ERR. A failure to bind memory only
 * (single-node machines, containers) is not an error: the CPU binding is what matters for IPU
 * threads. */
int numa_bind_local(int local_index, int local_count, char *desc, size_t desclen, char *err,
                    size_t errlen);

#endif /* POPRUN_NUMA_H */
