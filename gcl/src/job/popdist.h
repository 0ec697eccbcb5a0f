/* Strict reading of the POPDIST_* variables for gcl_init. */
#ifndef GCL_POPDIST_INTERNAL_H
#define GCL_POPDIST_INTERNAL_H

#include <stddef.h>

#include "gcl/status.h"

typedef struct {
    int is_set;    /* a poprun (ours or Graphcore's) set the variables */
    int mpi_world; /* not set, and the instances are mpirun's ranks (gcl_config_t.mpi_world) */
    int num_instances, instance_index, local_instance_index;
    int num_total_replicas, num_local_replicas, replica_offset;
    int ipus_per_replica;
    int offline;          /* POPDIST_OFFLINE_MODE=1 */
    const char *topology; /* POPDIST_TOPOLOGY or NULL */
    const char *job_id;   /* POPRUN_JOB_ID (letters, digits, '-', '_'; at most 60) or NULL */
} gcl_popdist_t;

/* Reads and checks the variables; DEF_REPLICAS / DEF_IPR apply when poprun did not set them
 * (DEF_REPLICAS per instance when MPI_WORLD and mpirun started the process). Returns GCL_OK or
 * GCL_ERR_INVALID_ARGUMENT with a sentence naming the variable in ERR. */
gcl_status_t gcl_popdist_read(gcl_popdist_t *out, int def_replicas, int def_ipr, int mpi_world,
                              char *err, size_t len);

/* From now on the popdist_* calls answer for PD's instances, index, replicas and offset: an
 * elastic job's membership after a resize. */
void gcl_popdist_override(const gcl_popdist_t *pd);

/* The instance this process is, as gcl_popdist_read will find it without a config's
 * mpi_world = -1: POPDIST_* first, then the MPI launcher's rank. Reads only the environment. */
int gcl_popdist_guess_instance(void);

#endif
