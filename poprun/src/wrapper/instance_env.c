/*
 * The POPDIST_* variables of one instance; see instance_env.h.
 */
#include "wrapper/instance_env.h"

#include <gcl/popdist_env.h>

static void add(struct strvec *env, const char *name, int value)
{
    strvec_push_take(env, xasprintf("%s=%d", name, value));
}

void instance_env_build(const struct plan *p, int index, const char *topology, bool offline,
                        struct strvec *env)
{
    const struct plan_instance *pi = &p->inst[index];
    add(env, POPDIST_ENV_NUM_TOTAL_REPLICAS, p->num_replicas);
    add(env, POPDIST_ENV_NUM_LOCAL_REPLICAS, pi->num_replicas);
    add(env, POPDIST_ENV_REPLICA_INDEX_OFFSET, pi->replica_offset);
    add(env, POPDIST_ENV_NUM_IPUS_PER_REPLICA, p->ipus_per_replica);
    add(env, POPDIST_ENV_NUM_INSTANCES, p->num_instances);
    add(env, POPDIST_ENV_INSTANCE_INDEX, index);
    add(env, POPDIST_ENV_LOCAL_INSTANCE_INDEX, pi->local_index);
    add(env, POPDIST_ENV_UNIFORM_REPLICAS_PER_INSTANCE, 1);
    add(env, POPDIST_ENV_NUM_ILDS, p->num_ilds);
    if (topology)
        strvec_push_take(env, xasprintf("%s=%s", POPDIST_ENV_TOPOLOGY, topology));
    add(env, POPDIST_ENV_OFFLINE_MODE, offline ? 1 : 0);
    if (offline)
        strvec_push(env, "GCL_SIM_PHANTOM=1");
}
