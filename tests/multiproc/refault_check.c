/*
 * refault-check BYTES CALLS LIMIT [LAG_US]: counts this process's page faults (getrusage) over
 * CALLS all_reduce calls of BYTES per replica, after as many warm-up calls, and fails when there
 * are more than LIMIT a call. A process that gives memory back to the kernel and faults it in
 * again at every call (libgcl's own scratch, or its network library's buffers for pieces that
 * come before their receive: network/heap.h) shows here. Replica 0 starts every call LAG_US late
 * (default 0), so that its peers' pieces reach it before its receives are posted. Every replica
 * checks its result too. One replica per instance, so the process's faults are its replica's.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "gcl/gcl.h"

typedef struct {
    size_t count;
    long calls;
    double limit;
    long lag_us;     /* replica 0 starts every call this late */
    double per_call; /* the faults a call, measured */
    int wrong;       /* elements off in the last result */
} job_t;

static long faults(void)
{
    struct rusage u;
    getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt + u.ru_majflt;
}

static gcl_status_t calls(gcl_comm_t comm, float *in, float *out, size_t count, long n, long lag)
{
    struct timespec ts = {lag / 1000000, lag % 1000000 * 1000};
    gcl_status_t rc = GCL_OK;
    for (long i = 0; i < n && rc == GCL_OK; i++) {
        if (lag > 0)
            nanosleep(&ts, NULL);
        rc = gcl_all_reduce(comm, in, out, count, GCL_F32, GCL_SUM);
    }
    return rc;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    gcl_comm_t comm;
    gcl_status_t rc = gcl_comm_create(ctx, gcl_group_all(), &comm);
    if (rc != GCL_OK)
        return rc;
    float *in = malloc(j->count * sizeof *in), *out = malloc(j->count * sizeof *out);
    if (!in || !out) {
        free(in);
        free(out);
        gcl_comm_destroy(comm);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    int me = gcl_ctx_replica(ctx), n = gcl_ctx_num_replicas(ctx);
    for (size_t i = 0; i < j->count; i++)
        in[i] = (float)((me + (int)i) % 7);
    long lag = me == 0 ? j->lag_us : 0;
    rc = calls(comm, in, out, j->count, j->calls, lag); /* warm-up: every buffer is in by now */
    long before = faults();
    if (rc == GCL_OK)
        rc = calls(comm, in, out, j->count, j->calls, lag);
    j->per_call = (double)(faults() - before) / (double)j->calls;
    for (size_t i = 0; i < j->count && rc == GCL_OK; i++) {
        float want = 0;
        for (int r = 0; r < n; r++)
            want += (float)((r + (int)i) % 7);
        j->wrong += out[i] != want;
    }
    free(in);
    free(out);
    gcl_comm_destroy(comm);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 4 || argc > 5 || atol(argv[1]) < 4 || atol(argv[2]) < 1 || atof(argv[3]) < 0 ||
        (argc == 5 && atol(argv[4]) < 0)) {
        fprintf(stderr,
                "usage: refault-check BYTES CALLS LIMIT [LAG_US] (BYTES >= 4, CALLS >= 1)\n");
        return 2;
    }
    job_t j = {.count = (size_t)atol(argv[1]) / sizeof(float),
               .calls = atol(argv[2]),
               .limit = atof(argv[3]),
               .lag_us = argc == 5 ? atol(argv[4]) : 0};
    gcl_config_t cfg = {.num_replicas = 0, .ipus_per_replica = 1};
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 1;
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    gcl_status_t rc =
        info.num_local_replicas == 1 ? gcl_run(inst, program, &j) : GCL_ERR_INVALID_ARGUMENT;
    int ok = rc == GCL_OK && j.wrong == 0 && j.per_call <= j.limit;
    printf("refault-check: instance %d: %.2f page faults a call over %ld calls of %s bytes "
           "(limit %.2f), %d wrong: %s (%s)\n",
           info.instance_index, j.per_call, j.calls, argv[1], j.limit, j.wrong,
           ok ? "PASSED" : "FAILED", gcl_status_name(rc));
    fflush(stdout);
    gcl_finalize(inst);
    return ok ? 0 : 1;
}
