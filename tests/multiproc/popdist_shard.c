/*
 * popdist-shard: what a program started by Graphcore's PopRun learns of its shard, through the
 * popdist_* calls and gcl_init, and whether the job it makes works: one line per instance,
 *
 *   popdist-shard: set=1 instances=4 index=2 local_index=0 replicas=8..9 of 8 ipr=1: PASSED
 *
 * PASSED when gcl_init's job agrees with popdist_* and an all_reduce of the replica indices over
 * all replicas gives 0 + 1 + ... + (R-1) on every replica.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include "gcl/gcl.h"
#include "gcl/popdist.h"

static atomic_int wrong;

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    (void)arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    int32_t v = gcl_ctx_replica(ctx), n = gcl_ctx_num_replicas(ctx);
    gcl_status_t rc = gcl_all_reduce(comm, &v, &v, 1, GCL_I32, GCL_SUM);
    if (rc != GCL_OK || v != n * (n - 1) / 2)
        atomic_fetch_add(&wrong, 1);
    gcl_comm_destroy(comm);
    return rc;
}

int main(void)
{
    gcl_instance_t inst;
    if (gcl_init(NULL, &inst) != GCL_OK) {
        fprintf(stderr, "popdist-shard: gcl_init failed: %s\n", gcl_init_error());
        return 1;
    }
    gcl_job_info_t j;
    gcl_instance_info(inst, &j);
    int first = popdist_replica_index_offset(), local = popdist_num_local_replicas();
    int agree = j.num_instances == popdist_num_instances() &&
                j.instance_index == popdist_instance_index() && j.replica_offset == first &&
                j.num_local_replicas == local && j.num_replicas == popdist_num_total_replicas();
    gcl_status_t rc = gcl_run(inst, program, NULL);
    printf("popdist-shard: set=%d instances=%d index=%d local_index=%d replicas=%d..%d of %d "
           "ipr=%d: %s\n",
           popdist_is_set(), popdist_num_instances(), popdist_instance_index(),
           popdist_local_instance_index(), first, first + local - 1, popdist_num_total_replicas(),
           popdist_num_ipus_per_replica(),
           agree && rc == GCL_OK && atomic_load(&wrong) == 0 ? "PASSED" : "FAILED");
    gcl_finalize(inst);
    return agree && rc == GCL_OK && atomic_load(&wrong) == 0 ? 0 : 1;
}
