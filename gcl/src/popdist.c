/* The POPDIST_* environment: the public popdist_* queries and gcl_init's strict reader. */
#include "gcl/popdist.h"
#include "gcl/popdist_env.h"
#include "popdist.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* 1 and the value when NAME holds an integer in [lo, hi]; 0 when unset; -1 when malformed. */
static int env_int(const char *name, int lo, int hi, int *out)
{
    const char *v = getenv(name);
    if (!v)
        return 0;
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end != '\0' || x < lo || x > hi)
        return -1;
    *out = (int)x;
    return 1;
}

static int env_or(const char *name, int lo, int def)
{
    int v;
    return env_int(name, lo, INT_MAX, &v) == 1 ? v : def;
}

int popdist_is_set(void)
{
    return getenv(POPDIST_ENV_NUM_INSTANCES) != NULL;
}

int popdist_num_instances(void)
{
    return env_or(POPDIST_ENV_NUM_INSTANCES, 1, 1);
}

int popdist_instance_index(void)
{
    return env_or(POPDIST_ENV_INSTANCE_INDEX, 0, 0);
}

int popdist_replica_index_offset(void)
{
    return env_or(POPDIST_ENV_REPLICA_INDEX_OFFSET, 0, 0);
}

int popdist_num_local_replicas(void)
{
    return env_or(POPDIST_ENV_NUM_LOCAL_REPLICAS, 1, 1);
}

int popdist_num_total_replicas(void)
{
    return env_or(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, 1);
}

int popdist_num_ipus_per_replica(void)
{
    return env_or(POPDIST_ENV_NUM_IPUS_PER_REPLICA, 1, 1);
}

/* Reads NAME into *OUT (keeping *OUT when unset); fails on a malformed or out-of-range value. */
static int read_var(const char *name, int lo, int *out, char *err, size_t len)
{
    if (env_int(name, lo, 1 << 20, out) >= 0)
        return 0;
    snprintf(err, len, "%s=\"%.32s\" is not valid: expected an integer from %d to %d", name,
             getenv(name), lo, 1 << 20);
    return -1;
}

gcl_status_t gcl_popdist_read(gcl_popdist_t *p, int def_replicas, int def_ipr, char *err,
                              size_t len)
{
    memset(p, 0, sizeof *p);
    p->is_set = popdist_is_set();
    p->num_instances = 1;
    p->num_total_replicas = def_replicas > 0 ? def_replicas : 1;
    p->ipus_per_replica = def_ipr > 0 ? def_ipr : 1;
    if (read_var(POPDIST_ENV_NUM_INSTANCES, 1, &p->num_instances, err, len) ||
        read_var(POPDIST_ENV_INSTANCE_INDEX, 0, &p->instance_index, err, len) ||
        read_var(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, &p->num_total_replicas, err, len) ||
        read_var(POPDIST_ENV_NUM_IPUS_PER_REPLICA, 1, &p->ipus_per_replica, err, len))
        return GCL_ERR_INVALID_ARGUMENT;
    p->num_local_replicas = p->num_total_replicas / p->num_instances;
    p->replica_offset = p->instance_index * p->num_local_replicas;
    if (read_var(POPDIST_ENV_NUM_LOCAL_REPLICAS, 1, &p->num_local_replicas, err, len) ||
        read_var(POPDIST_ENV_REPLICA_INDEX_OFFSET, 0, &p->replica_offset, err, len))
        return GCL_ERR_INVALID_ARGUMENT;
    const char *why = NULL;
    if (p->instance_index >= p->num_instances)
        why = "POPDIST_INSTANCE_INDEX is not below POPDIST_NUM_INSTANCES";
    else if (p->num_local_replicas < 1)
        why = "the instance hosts no replica (more instances than replicas?)";
    else if (p->replica_offset + p->num_local_replicas > p->num_total_replicas)
        why = "POPDIST_REPLICA_INDEX_OFFSET + POPDIST_NUM_LOCAL_REPLICAS exceeds the replicas";
    if (why) {
        snprintf(err, len, "inconsistent POPDIST_* variables: %s", why);
        return GCL_ERR_INVALID_ARGUMENT;
    }
    const char *off = getenv(POPDIST_ENV_OFFLINE_MODE);
    p->offline = off && strcmp(off, "1") == 0;
    p->topology = getenv(POPDIST_ENV_TOPOLOGY);
    return GCL_OK;
}
