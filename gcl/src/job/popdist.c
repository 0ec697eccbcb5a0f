/*
 * The POPDIST_* environment: the public popdist_* queries and gcl_init's strict reader.
 *
 * Two launchers set these variables. Ours sets POPDIST_NUM_INSTANCES and POPDIST_INSTANCE_INDEX
 * besides Graphcore's; Graphcore's PopRun sets only the replica counts and offset, from which
 * PopDist derives the instance count (total / local replicas) and index (offset / local
 * replicas), as here. Example, 16 replicas over 4 instances, instance 2:
 *   POPDIST_NUM_TOTAL_REPLICAS=16 POPDIST_NUM_LOCAL_REPLICAS=4 POPDIST_REPLICA_INDEX_OFFSET=8
 *   -> 4 instances, this one index 8 / 4 = 2, replicas 8..11.
 */
#include "gcl/popdist.h"
#include "gcl/popdist_env.h"
#include "job/popdist.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Largest count or index accepted in a variable. */
#define POPDIST_MAX (1 << 20)

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
    return getenv(POPDIST_ENV_NUM_INSTANCES) != NULL ||
           getenv(POPDIST_ENV_NUM_TOTAL_REPLICAS) != NULL;
}

/* POPRUN_JOB_ID when it is a name a shared-memory segment can carry, else NULL. */
static const char *job_id(void)
{
    const char *v = getenv(POPRUN_ENV_JOB_ID);
    size_t n = v ? strlen(v) : 0;
    if (n == 0 || n > 60)
        return NULL;
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)v[i]) && v[i] != '-' && v[i] != '_')
            return NULL;
    return v;
}

/* Graphcore's derivation: *INSTANCES and *INDEX from the replica variables; 0 when they do not
 * give a whole number of instances. */
static int derive(int *instances, int *index)
{
    int total = env_or(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, 1);
    int local = env_or(POPDIST_ENV_NUM_LOCAL_REPLICAS, 1, total);
    int offset = env_or(POPDIST_ENV_REPLICA_INDEX_OFFSET, 0, 0);
    if (total % local != 0 || offset % local != 0 || offset >= total)
        return 0;
    *instances = total / local;
    *index = offset / local;
    return 1;
}

/* An elastic job's membership after a resize (gcl_popdist_override): the four answers that
 * change, under a lock, since any thread may ask. */
static pthread_mutex_t override_lock = PTHREAD_MUTEX_INITIALIZER;
static int override_set, override_v[4]; /* instances, index, total replicas, offset */

void gcl_popdist_override(const gcl_popdist_t *pd)
{
    pthread_mutex_lock(&override_lock);
    override_set = 1;
    override_v[0] = pd->num_instances;
    override_v[1] = pd->instance_index;
    override_v[2] = pd->num_total_replicas;
    override_v[3] = pd->replica_offset;
    pthread_mutex_unlock(&override_lock);
}

/* Answer K of the override into *V; 0 when there is none. */
static int overridden(int k, int *v)
{
    pthread_mutex_lock(&override_lock);
    int set = override_set;
    if (set)
        *v = override_v[k];
    pthread_mutex_unlock(&override_lock);
    return set;
}

int popdist_num_instances(void)
{
    int n = 1, i = 0;
    if (overridden(0, &n))
        return n;
    if (getenv(POPDIST_ENV_NUM_INSTANCES))
        return env_or(POPDIST_ENV_NUM_INSTANCES, 1, 1);
    return derive(&n, &i) ? n : 1;
}

int popdist_instance_index(void)
{
    int n = 1, i = 0;
    if (overridden(1, &i))
        return i;
    if (getenv(POPDIST_ENV_INSTANCE_INDEX))
        return env_or(POPDIST_ENV_INSTANCE_INDEX, 0, 0);
    return derive(&n, &i) ? i : 0;
}

int popdist_local_instance_index(void)
{
    return env_or(POPDIST_ENV_LOCAL_INSTANCE_INDEX, 0, 0);
}

int popdist_replica_index_offset(void)
{
    int v;
    if (overridden(3, &v))
        return v;
    return env_or(POPDIST_ENV_REPLICA_INDEX_OFFSET, 0, 0);
}

int popdist_num_local_replicas(void)
{
    int v, n;
    if (overridden(2, &v) && overridden(0, &n) && n > 0)
        return v / n;
    int total = env_or(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, 1);
    return env_or(POPDIST_ENV_NUM_LOCAL_REPLICAS, 1,
                  getenv(POPDIST_ENV_NUM_INSTANCES) ? total / popdist_num_instances() : total);
}

int popdist_num_total_replicas(void)
{
    int v;
    if (overridden(2, &v))
        return v;
    return env_or(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, 1);
}

int popdist_num_ipus_per_replica(void)
{
    return env_or(POPDIST_ENV_NUM_IPUS_PER_REPLICA, 1, 1);
}

const char *popdist_executable_cache_path(void)
{
    const char *v = getenv(POPDIST_ENV_EXECUTABLE_CACHE_PATH);
    return v && *v ? v : NULL;
}

int popdist_restart_count(void)
{
    return env_or(POPDIST_ENV_RESTART_COUNT, 0, 0);
}

/* Reads NAME into *OUT (keeping *OUT when unset); fails on a malformed or out-of-range value. */
static int read_var(const char *name, int lo, int *out, char *err, size_t len)
{
    if (env_int(name, lo, POPDIST_MAX, out) >= 0)
        return 0;
    snprintf(err, len, "%s=\"%.32s\" is not valid: expected an integer from %d to %d", name,
             getenv(name), lo, POPDIST_MAX);
    return -1;
}

/* Whether this process is a task of a job step that srun started: Slurm sets SLURM_STEP_ID in a
 * step, not in a batch script (which has SLURM_PROCID 0 and SLURM_NTASKS of the whole
 * allocation, and is no MPI world). */
static int srun_step(void)
{
    return getenv("SLURM_STEP_ID") != NULL && getenv("SLURM_STEP_NUM_TASKS") != NULL;
}

/* mpirun's world (gcl_config_t.mpi_world): OpenMPI's variables, else PMI's, else the tasks of
 * an srun step (srun --mpi=pmix sets only PMIX_RANK before MPI_Init, and the size is the
 * step's). Returns 1 with the size and rank, or 0 when no launcher started this process. */
static int mpi_world(int *size, int *rank)
{
    static const char *const names[][2] = {{"OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_RANK"},
                                           {"PMI_SIZE", "PMI_RANK"},
                                           {"SLURM_STEP_NUM_TASKS", "SLURM_PROCID"}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (i == 2 && !srun_step())
            break;
        if (env_int(names[i][0], 1, POPDIST_MAX, size) == 1 &&
            env_int(names[i][1], 0, *size - 1, rank) == 1)
            return 1;
    }
    return 0;
}

/* The instance count and index: ours when set, else derived as Graphcore's PopDist does, else
 * mpirun's world unless the caller declined it (MPI_WORLD -1), else a single instance. */
static gcl_status_t read_instances(gcl_popdist_t *p, int mpi, char *err, size_t len)
{
    int ours = getenv(POPDIST_ENV_NUM_INSTANCES) != NULL;
    if (read_var(POPDIST_ENV_NUM_INSTANCES, 1, &p->num_instances, err, len) ||
        read_var(POPDIST_ENV_INSTANCE_INDEX, 0, &p->instance_index, err, len) ||
        read_var(POPDIST_ENV_NUM_TOTAL_REPLICAS, 1, &p->num_total_replicas, err, len) ||
        read_var(POPDIST_ENV_NUM_IPUS_PER_REPLICA, 1, &p->ipus_per_replica, err, len) ||
        read_var(POPDIST_ENV_LOCAL_INSTANCE_INDEX, 0, &p->local_instance_index, err, len))
        return GCL_ERR_INVALID_ARGUMENT;
    if (!p->is_set && mpi >= 0 && mpi_world(&p->num_instances, &p->instance_index)) {
        p->num_total_replicas *= p->num_instances; /* the configured replicas, per instance */
        p->mpi_world = 1;
    }
    p->num_local_replicas = p->num_total_replicas / p->num_instances;
    p->replica_offset = p->instance_index * p->num_local_replicas;
    if (read_var(POPDIST_ENV_NUM_LOCAL_REPLICAS, 1, &p->num_local_replicas, err, len) ||
        read_var(POPDIST_ENV_REPLICA_INDEX_OFFSET, 0, &p->replica_offset, err, len))
        return GCL_ERR_INVALID_ARGUMENT;
    if (!ours && p->is_set) {
        const char *why = NULL;
        if (p->num_total_replicas % p->num_local_replicas != 0)
            why = "POPDIST_NUM_LOCAL_REPLICAS does not divide POPDIST_NUM_TOTAL_REPLICAS";
        else if (p->replica_offset % p->num_local_replicas != 0)
            why = "POPDIST_REPLICA_INDEX_OFFSET is not a multiple of POPDIST_NUM_LOCAL_REPLICAS";
        if (why) {
            snprintf(err, len, "inconsistent POPDIST_* variables: %s", why);
            return GCL_ERR_INVALID_ARGUMENT;
        }
        p->num_instances = p->num_total_replicas / p->num_local_replicas;
        p->instance_index = p->replica_offset / p->num_local_replicas;
    }
    return GCL_OK;
}

gcl_status_t gcl_popdist_read(gcl_popdist_t *p, int def_replicas, int def_ipr, int mpi, char *err,
                              size_t len)
{
    memset(p, 0, sizeof *p);
    p->is_set = popdist_is_set();
    p->num_instances = 1;
    p->num_total_replicas = def_replicas > 0 ? def_replicas : 1;
    p->ipus_per_replica = def_ipr > 0 ? def_ipr : 1;
    GCL_CHECK(read_instances(p, mpi, err, len));
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
    p->job_id = job_id();
    return GCL_OK;
}

int gcl_popdist_guess_instance(void)
{
    if (popdist_is_set())
        return popdist_instance_index();
    const char *v = getenv("OMPI_COMM_WORLD_RANK");
    if (!v)
        v = getenv("PMI_RANK");
    if (!v && srun_step())
        v = getenv("SLURM_PROCID");
    return v ? atoi(v) : 0;
}
