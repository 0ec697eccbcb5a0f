/*
 * Human-readable output of a plan: --print-topology, --dry-run and -v.
 */
#ifndef POPRUN_PRINT_H
#define POPRUN_PRINT_H

#include <stdio.h>

#include "plan/plan.h"

/* Writes the one-line summary and the table of hosts, IPU-Link domains, instances, replicas and
 * IPUs, one row per instance:
 *
 *   topology POD16: 16 IPUs in 1 IPU-Link domain
 *   job: 16 replicas x 1 IPU = 16 IPUs; 4 instances on 2 hosts; 1 IPU-Link domain
 *   host  ild  instance  replicas  ipus
 *   h1    0    0         0-3       0-3
 *   ...
 */
void print_topology(FILE *f, const struct plan *p, const struct plan_topology *topo);

#endif /* POPRUN_PRINT_H */
