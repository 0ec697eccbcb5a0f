/*
 * allreduce-check: every replica fills buffers from its global replica index, all-reduces them
 * over each replica-group kind, type, operator and size, and checks the exact expected result
 * and that every replica holds bitwise the same bytes. One summary line per instance; exit
 * status 1 on any mismatch, 2 on bad usage.
 *
 *   poprun --num-replicas 16 --num-instances 4 build/bin/allreduce-check
 *   allreduce-check --replicas 4 --sizes 0,1K,64M --groups all,orthogonal:2
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check_args.h"
#include "common/init_error.h"
#include "common/parse.h"
#include "check_values.h"
#include "gcl/gcl.h"

typedef struct {
    const check_opts_t *o;
    atomic_long checks, failures;
    pthread_mutex_t lock;
    char first_failure[512];
} job_t;

static void record_failure(job_t *job, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void record_failure(job_t *job, const char *fmt, ...)
{
    atomic_fetch_add(&job->failures, 1);
    pthread_mutex_lock(&job->lock);
    if (!job->first_failure[0]) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(job->first_failure, sizeof job->first_failure, fmt, ap);
        va_end(ap);
    }
    pthread_mutex_unlock(&job->lock);
}

/* All replicas of the group hold the same result: all-reduce its hash with max and with min
 * (as four 16-bit pieces in f32, which max and min carry exactly) and compare. */
static gcl_status_t same_everywhere(gcl_comm_t comm, uint64_t hash, int *same)
{
    float hi[4], lo[4];
    for (int i = 0; i < 4; i++)
        hi[i] = lo[i] = (float)((hash >> (16 * i)) & 0xffff);
    GCL_CHECK(gcl_all_reduce(comm, hi, hi, 4, GCL_F32, GCL_MAX));
    GCL_CHECK(gcl_all_reduce(comm, lo, lo, 4, GCL_F32, GCL_MIN));
    *same = memcmp(hi, lo, sizeof hi) == 0;
    return GCL_OK;
}

typedef struct {
    gcl_comm_t comm;
    gcl_group_t group;
    gcl_dtype_t type;
    gcl_redop_t op;
    size_t count;
    int in_place;
} case_t;

static gcl_status_t run_case(job_t *job, gcl_ctx_t ctx, const case_t *c, void *send, void *recv)
{
    size_t es = gcl_dtype_size(c->type);
    int replica = gcl_ctx_replica(ctx);
    check_fill(send, c->type, c->count, replica);
    void *out = c->in_place ? send : recv;
    if (!c->in_place)
        memset(recv, 0xff, c->count * es);
    gcl_status_t rc = gcl_all_reduce(c->comm, send, out, c->count, c->type, c->op);
    char g[32];
    gcl_group_format(c->group, g, sizeof g);
    if (rc != GCL_OK) {
        record_failure(job, "replica %d: all_reduce %s %s group %s count %zu failed: %s", replica,
                       gcl_dtype_name(c->type), gcl_redop_name(c->op), g, c->count,
                       gcl_last_error(c->comm));
        return rc;
    }
    check_result_t r;
    check_expected(&r, c->comm, c->group, gcl_ctx_num_replicas(ctx), replica, c->type, c->op);
    size_t bad = check_compare(out, c->type, c->count, &r);
    atomic_fetch_add(&job->checks, 1);
    if (bad != SIZE_MAX)
        record_failure(job,
                       "replica %d: all_reduce %s %s group %s count %zu %s: element %zu is "
                       "%g, expected %g",
                       replica, gcl_dtype_name(c->type), gcl_redop_name(c->op), g, c->count,
                       c->in_place ? "in place" : "out of place", bad,
                       check_element(out, c->type, bad), check_want(&r, bad));
    int same = 0;
    GCL_CHECK(same_everywhere(c->comm, check_hash(out, c->count * es), &same));
    if (!same)
        record_failure(job,
                       "replica %d: all_reduce %s %s group %s count %zu: replicas of the "
                       "group hold different bytes",
                       replica, gcl_dtype_name(c->type), gcl_redop_name(c->op), g, c->count);
    return GCL_OK;
}

/* Elements of TYPE in BYTES. */
static size_t count_of(size_t bytes, gcl_dtype_t type)
{
    return bytes / gcl_dtype_size(type);
}

static gcl_status_t run_group(job_t *job, gcl_ctx_t ctx, gcl_group_t group, void *send, void *recv)
{
    const check_opts_t *o = job->o;
    case_t c = {.group = group};
    GCL_CHECK(gcl_comm_create(ctx, group, &c.comm));
    gcl_status_t rc = GCL_OK;
    for (int it = 0; rc == GCL_OK && it < o->iterations; it++) {
        for (int t = 0; rc == GCL_OK && t < o->ntypes; t++) {
            for (int p = 0; rc == GCL_OK && p < o->nops; p++) {
                for (int s = 0; rc == GCL_OK && s < o->nsizes; s++) {
                    c.type = o->types[t];
                    c.op = o->ops[p];
                    c.count = count_of(o->sizes[s], c.type);
                    c.in_place = (it + t + p + s) % 2;
                    rc = run_case(job, ctx, &c, send, recv);
                }
            }
        }
    }
    gcl_comm_destroy(c.comm);
    return rc;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *job = arg;
    const check_opts_t *o = job->o;
    gcl_job_info_t info;
    gcl_instance_info(gcl_ctx_instance(ctx), &info);
    if (info.instance_index == o->exit_before)
        return GCL_OK; /* the fault test: this instance never calls a collective */
    size_t max = 8;
    for (int s = 0; s < o->nsizes; s++)
        max = o->sizes[s] > max ? o->sizes[s] : max;
    void *send = malloc(max), *recv = malloc(max);
    gcl_status_t rc = send && recv ? GCL_OK : GCL_ERR_NO_HOST_MEMORY;
    for (int g = 0; rc == GCL_OK && g < o->ngroups; g++)
        rc = run_group(job, ctx, o->groups[g], send, recv);
    free(send);
    free(recv);
    return rc;
}

int main(int argc, char **argv)
{
    check_opts_t o;
    int prc = check_parse_args(argc, argv, &o);
    if (prc)
        return prc == 1 ? 0 : 2;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = o.replicas;
    cfg.ipus_per_replica = o.ipus_per_replica;
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        if (example_init_usage_error("allreduce-check", rc))
            return 2;
        fprintf(stderr, "allreduce-check: gcl_init failed: %s\n", gcl_status_string(rc));
        return 1;
    }
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    if (check_resolve_groups(&o, info.num_replicas) != 0) {
        gcl_finalize(inst);
        return 2;
    }
    job_t job = {.o = &o};
    pthread_mutex_init(&job.lock, NULL);
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    rc = gcl_run(inst, program, &job);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9;
    size_t max = 0;
    for (int s = 0; s < o.nsizes; s++)
        max = o.sizes[s] > max ? o.sizes[s] : max;
    char maxs[32];
    format_bytes(max, maxs, sizeof maxs);
    long checks = atomic_load(&job.checks), failures = atomic_load(&job.failures);
    int ok = rc == GCL_OK && failures == 0;
    printf("allreduce-check: instance %d of %d, replicas %d-%d of %d: %s: %ld checks "
           "(%d groups x %d types x %d ops x %d sizes up to %s, per replica), %.2f s\n",
           info.instance_index, info.num_instances, info.replica_offset,
           info.replica_offset + info.num_local_replicas - 1, info.num_replicas,
           ok ? "PASSED" : "FAILED", checks, o.ngroups, o.ntypes, o.nops, o.nsizes, maxs, secs);
    if (!ok)
        printf("allreduce-check: instance %d: %s\n", info.instance_index,
               job.first_failure[0] ? job.first_failure : gcl_instance_error(inst));
    fflush(stdout);
    gcl_finalize(inst);
    pthread_mutex_destroy(&job.lock);
    return ok ? 0 : 1;
}
