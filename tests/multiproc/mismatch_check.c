/*
 * mismatch-check KIND: the last replica of the job makes a call that differs from everyone
 * else's in one way (KIND), and every replica must come back with GCL_ERR_MISMATCH, never hang
 * and never compute a wrong answer. Exits 0 when that holds on this instance, 1 otherwise.
 *
 * KIND: count, type, op, root, group, algorithm, collective, skip (the odd replica skips a
 * collective; needs a short GCL_TIMEOUT_S), direct_count (counts differ in calls large enough to
 * run host-direct), direct_vs_messages (one side large enough for host-direct, the other not).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/gcl.h"

typedef struct {
    const char *kind;
    atomic_int bad;
    atomic_int named; /* replicas whose error names the odd replica */
} job_t;

static int odd_one(gcl_ctx_t ctx)
{
    return gcl_ctx_replica(ctx) == gcl_ctx_num_replicas(ctx) - 1;
}

static gcl_status_t call(job_t *j, gcl_ctx_t ctx, gcl_comm_t comm, float *buf)
{
    int odd = odd_one(ctx);
    const char *k = j->kind;
    if (!strcmp(k, "count"))
        return gcl_all_reduce(comm, buf, buf, odd ? 100 : 64, GCL_F32, GCL_SUM);
    if (!strcmp(k, "direct_count")) /* large enough to run host-direct */
        return gcl_all_reduce(comm, buf, buf, odd ? 20000 : 16384, GCL_F32, GCL_SUM);
    if (!strcmp(k, "direct_vs_messages")) /* one side host-direct, the other by messages */
        return gcl_all_reduce(comm, buf, buf, odd ? 16 : 16384, GCL_F32, GCL_SUM);
    if (!strcmp(k, "type"))
        return gcl_all_reduce(comm, buf, buf, 64, odd ? GCL_F16 : GCL_F32, GCL_SUM);
    if (!strcmp(k, "op"))
        return gcl_all_reduce(comm, buf, buf, 64, GCL_F32, odd ? GCL_MAX : GCL_SUM);
    if (!strcmp(k, "root"))
        return gcl_broadcast(comm, buf, buf, 64, GCL_F32, odd ? 1 : 0);
    if (!strcmp(k, "collective"))
        return odd ? gcl_all_gather(comm, buf, buf + 64 * gcl_comm_rank(comm), 64, GCL_F32)
                   : gcl_all_reduce(comm, buf, buf, 64, GCL_F32, GCL_SUM);
    if (!strcmp(k, "skip")) {
        gcl_status_t rc = GCL_OK;
        if (!odd)
            rc = gcl_all_reduce(comm, buf, buf, 64, GCL_F32, GCL_SUM);
        return rc != GCL_OK ? rc : gcl_all_reduce(comm, buf, buf, 32, GCL_F32, GCL_SUM);
    }
    /* group and algorithm: the difference is in how the communicator was set up */
    return gcl_all_reduce(comm, buf, buf, 64, GCL_F32, GCL_SUM);
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int odd = odd_one(ctx), n = gcl_ctx_num_replicas(ctx);
    gcl_comm_t comm;
    gcl_group_t g =
        !strcmp(j->kind, "group") && odd ? gcl_group_consecutive(n / 2) : gcl_group_all();
    if (gcl_comm_create(ctx, g, &comm) != GCL_OK)
        return GCL_ERR_INTERNAL;
    if (!strcmp(j->kind, "algorithm")) {
        const char *names[16];
        int na = gcl_algorithms("all_reduce", names, 16);
        gcl_comm_set_algorithm(comm, "all_reduce", names[odd ? na - 2 : 0]);
    }
    float *buf = calloc((size_t)64 * (size_t)n + 20000, sizeof(float));
    gcl_status_t rc = call(j, ctx, comm, buf);
    const char *err = gcl_last_error(comm);
    char oddname[32];
    snprintf(oddname, sizeof oddname, "replica %d ", n - 1);
    if (rc == GCL_ERR_MISMATCH && (odd || strstr(err, oddname)))
        atomic_fetch_add(&j->named, 1);
    /* Root: replicas the odd root is not a parent of may legitimately finish. */
    int ok = rc == GCL_ERR_MISMATCH || (!strcmp(j->kind, "root") && !odd && rc == GCL_OK);
    if (!ok) {
        atomic_fetch_add(&j->bad, 1);
        printf("mismatch-check: replica %d: %s instead of GCL_ERR_MISMATCH: %s\n",
               gcl_ctx_replica(ctx), gcl_status_name(rc), err);
    } else if (rc == GCL_ERR_MISMATCH && gcl_ctx_replica(ctx) == 0) {
        printf("mismatch-check: replica 0 was told: %s\n", err);
    }
    free(buf);
    gcl_comm_destroy(comm);
    return GCL_OK;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr,
                "usage: mismatch-check count|type|op|root|group|algorithm|collective|skip\n");
        return 2;
    }
    job_t j = {.kind = argv[1]};
    gcl_config_t cfg = {.num_replicas = 4, .ipus_per_replica = 1};
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 1;
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    gcl_status_t rc = gcl_run(inst, program, &j);
    int ok = rc == GCL_OK && atomic_load(&j.bad) == 0;
    printf("mismatch-check %s: instance %d: %s (%d of %d local replicas saw the mismatch named)\n",
           j.kind, info.instance_index, ok ? "PASSED" : "FAILED", atomic_load(&j.named),
           info.num_local_replicas);
    fflush(stdout);
    gcl_finalize(inst);
    return ok ? 0 : 1;
}
