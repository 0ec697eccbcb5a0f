/*
 * The environment of one instance: the POPDIST_* contract of gcl/include/gcl/popdist_env.h.
 */
#ifndef POPRUN_INSTANCE_ENV_H
#define POPRUN_INSTANCE_ENV_H

#include <stdbool.h>

#include "plan/plan.h"
#include "common/util.h"

/* Appends "NAME=VALUE" for every variable instance INDEX of PLAN gets:
 *   POPDIST_NUM_TOTAL_REPLICAS, POPDIST_NUM_LOCAL_REPLICAS, POPDIST_REPLICA_INDEX_OFFSET,
 *   POPDIST_NUM_IPUS_PER_REPLICA, POPDIST_NUM_INSTANCES, POPDIST_INSTANCE_INDEX,
 *   POPDIST_LOCAL_INSTANCE_INDEX, POPDIST_UNIFORM_REPLICAS_PER_INSTANCE (always 1: poprun only
 *   makes uniform plans), POPDIST_NUM_ILDS, POPDIST_TOPOLOGY (when TOPOLOGY is not NULL),
 *   POPDIST_OFFLINE_MODE (1 or 0), and GCL_SIM_PHANTOM=1 in offline mode. */
void instance_env_build(const struct plan *p, int index, const char *topology, bool offline,
                        struct strvec *env);

#endif /* POPRUN_INSTANCE_ENV_H */
