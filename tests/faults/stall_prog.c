/*
 * faults-stall LATE SECONDS [COLLECTIVE]: replica LATE sleeps SECONDS before it enters
 * COLLECTIVE (all_reduce by default; or barrier, broadcast, all_to_all), while every other
 * replica is already waiting in it. What the others see is up to GCL_STALL_WARN_S (a warning
 * that names the late replica and its instance) and GCL_TIMEOUT_S (GCL_ERR_TIMEOUT naming it).
 * COLLECTIVE "poll" is an all_reduce started with gcl_all_reduce_start and polled with gcl_test
 * every millisecond; with it, SECONDS "return" makes replica LATE return from its program
 * without the call. COLLECTIVE "preempt" is gcl_preempt_agree, whose exchange between the
 * instances goes through the MPI bootstrap. SECONDS "finalize": after a first run that every
 * replica makes, the instance of replica LATE calls gcl_finalize while the others run again and
 * call COLLECTIVE, which it never will. Public API only.
 *
 * Each replica prints "faults-stall: replica R: STATUS after S.SS s: error text", S the time in
 * the call. Exit status 0 when every local replica returned GCL_OK, 1 otherwise, 2 for a usage
 * error.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/gcl.h"
#include "gcl/preempt.h"

typedef struct {
    int late;
    double seconds;
    const char *coll;
    int second; /* "finalize": this is the second run */
    atomic_int failed;
} job_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The all_reduce by polling gcl_test, as a program that computes between its looks would. */
static gcl_status_t poll_all_reduce(gcl_comm_t comm, float *buf)
{
    gcl_request_t req;
    gcl_status_t rc = gcl_all_reduce_start(comm, buf, buf, 256, GCL_F32, GCL_SUM, &req);
    for (int done = 0; rc == GCL_OK && !done;) {
        rc = gcl_test(req, &done);
        if (!done) {
            struct timespec ms = {0, 1000000};
            nanosleep(&ms, NULL);
        }
    }
    return rc;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    gcl_comm_t comm;
    if (gcl_comm_create(ctx, gcl_group_all(), &comm) != GCL_OK)
        return GCL_ERR_INTERNAL;
    int n = gcl_ctx_num_replicas(ctx);
    float *buf = calloc((size_t)n * 256, sizeof(float));
    if (!buf) {
        gcl_comm_destroy(comm);
        return GCL_ERR_NO_HOST_MEMORY;
    }
    if (j->seconds == -2 && !j->second) { /* "finalize": the first run, which every replica makes */
        gcl_status_t rc = gcl_all_reduce(comm, buf, buf, 256, GCL_F32, GCL_SUM);
        free(buf);
        gcl_comm_destroy(comm);
        return rc;
    }
    if (gcl_ctx_replica(ctx) == j->late) {
        if (j->seconds == -1) { /* "return": leaves without the call */
            free(buf);
            gcl_comm_destroy(comm);
            return GCL_OK;
        }
        sleep_s(j->seconds);
    }
    gcl_status_t rc;
    double t0 = now_s();
    int signo = 0;
    if (!strcmp(j->coll, "preempt"))
        rc = gcl_preempt_agree(ctx, &signo);
    else if (!strcmp(j->coll, "poll"))
        rc = poll_all_reduce(comm, buf);
    else if (!strcmp(j->coll, "barrier"))
        rc = gcl_barrier(comm);
    else if (!strcmp(j->coll, "broadcast"))
        rc = gcl_broadcast(comm, buf, buf, 256, GCL_F32, 0);
    else if (!strcmp(j->coll, "all_to_all"))
        rc = gcl_all_to_all(comm, buf, buf, 256, GCL_F32);
    else
        rc = gcl_all_reduce(comm, buf, buf, 256, GCL_F32, GCL_SUM);
    printf("faults-stall: replica %d: %s after %.2f s: %s\n", gcl_ctx_replica(ctx),
           gcl_status_name(rc), now_s() - t0,
           !strcmp(j->coll, "preempt") ? gcl_ctx_last_error(ctx) : gcl_last_error(comm));
    fflush(stdout);
    atomic_fetch_add(&j->failed, rc != GCL_OK);
    free(buf);
    gcl_comm_destroy(comm);
    /* A failure fails gcl_run, so the instance exits at once instead of waiting for the others
     * in gcl_finalize (which waits up to GCL_TIMEOUT_S for every instance whose run went well). */
    return rc;
}

int main(int argc, char **argv)
{
    char *end = NULL;
    job_t j = {.late = argc >= 3 ? atoi(argv[1]) : -1, .coll = argc == 4 ? argv[3] : "all_reduce"};
    int leaves = argc >= 3 && !strcmp(argv[2], "return") && !strcmp(j.coll, "poll");
    int finalizes = argc >= 3 && !strcmp(argv[2], "finalize");
    j.seconds = leaves ? -1 : finalizes ? -2 : argc >= 3 ? strtod(argv[2], &end) : -1;
    if (argc < 3 || argc > 4 ||
        (!leaves && !finalizes && (!end || *end || j.seconds < 0 || j.seconds > 3600))) {
        fprintf(stderr, "usage: faults-stall LATE_REPLICA SECONDS|return|finalize "
                        "[COLLECTIVE|poll|preempt]\n");
        return 2;
    }
    gcl_config_t cfg = {.num_replicas = 4, .ipus_per_replica = 1};
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 1;
    gcl_status_t rc = gcl_run(inst, program, &j);
    if (finalizes && rc == GCL_OK) {
        gcl_job_info_t info;
        gcl_instance_info(inst, &info);
        int mine =
            j.late >= info.replica_offset && j.late < info.replica_offset + info.num_local_replicas;
        j.second = 1;
        if (!mine) /* the instance of LATE leaves now; the others run again without it */
            rc = gcl_run(inst, program, &j);
    }
    int ok = rc == GCL_OK && atomic_load(&j.failed) == 0;
    gcl_finalize(inst);
    return ok ? 0 : 1;
}
