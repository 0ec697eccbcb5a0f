/*
 * outside: a program of someone else's project, built against an installed libgcl (with
 * pkg-config or find_package(gcl)) and run under the installed poprun. Each instance prints
 *
 *   outside: libgcl 0.2.0, instance 1 of 2, replicas 2-3 of 4: PASSED
 *
 * when the version macros and call agree, gcl_init works through gcl_config_t, and an
 * all_reduce and a gcl_all_reduce_multi give the exact sums on every replica.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <gcl/gcl.h>
#include <gcl/popdist.h>

#if !defined(GCL_VERSION_CODE) || GCL_VERSION_CODE < GCL_VERSION(0, 2, 0)
#error "libgcl's version macros are missing"
#endif

static atomic_int wrong;

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    (void)arg;
    gcl_comm_t comm;
    GCL_CHECK(gcl_comm_create(ctx, gcl_group_all(), &comm));
    int r = gcl_ctx_replica(ctx), n = gcl_ctx_num_replicas(ctx);
    float a[3] = {(float)r, 1.0f, 2.0f * (float)r};
    int32_t b[2] = {r, 1};
    gcl_tensor_t t[2] = {{a, a, 3, GCL_F32}, {b, b, 2, GCL_I32}};
    int32_t s = r;
    gcl_status_t rc = gcl_all_reduce(comm, &s, &s, 1, GCL_I32, GCL_SUM);
    if (rc == GCL_OK)
        rc = gcl_all_reduce_multi(comm, t, 2, GCL_SUM);
    int sum = n * (n - 1) / 2;
    if (rc != GCL_OK || s != sum || a[0] != (float)sum || a[1] != (float)n ||
        a[2] != 2.0f * (float)sum || b[0] != sum || b[1] != n)
        atomic_fetch_add(&wrong, 1);
    gcl_comm_destroy(comm);
    return rc;
}

int main(void)
{
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.log_level = GCL_LOG_LEVEL_WARN;
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK) {
        fprintf(stderr, "outside: gcl_init: %s\n", gcl_init_error());
        return 1;
    }
    gcl_job_info_t j;
    gcl_instance_info(inst, &j);
    gcl_status_t rc = gcl_run(inst, program, NULL);
    int ok = rc == GCL_OK && atomic_load(&wrong) == 0 && gcl_version() == GCL_VERSION_CODE &&
             popdist_num_instances() == j.num_instances;
    printf("outside: libgcl %s, instance %d of %d, replicas %d-%d of %d: %s\n",
           gcl_version_string(), j.instance_index, j.num_instances, j.replica_offset,
           j.replica_offset + j.num_local_replicas - 1, j.num_replicas, ok ? "PASSED" : "FAILED");
    gcl_finalize(inst);
    return ok ? 0 : 1;
}
