/*
 * faults-inject [REPLICAS [IPUS_PER_REPLICA]]: a small program of every kind of libgcl call, run
 * by tests/faults/inject.sh with GCL_FAULT_INJECT failing one allocation, mapping or post after
 * another. Public API only. Without poprun the job is one instance of REPLICAS (default 4)
 * replicas of IPUS_PER_REPLICA (default 2) IPUs; under poprun, poprun's layout.
 *
 * IPU 0 of every replica: two buffers of simulated IPU memory (gcl_ipu_malloc), communicators over
 * all replicas and over consecutive pairs, then all_reduce of 64 floats (eager on one host, by
 * messages over GCL_TRANSPORT=ofi or mpi) and of 8192 (32 KiB: host-direct on one host),
 * blocking; the same two started together (non-blocking, by messages, on the two
 * communicators), one completed by gcl_wait, the other by a gcl_test loop; reduce_scatter and
 * all_gather big enough for host-direct, broadcast, barrier, all_to_all, an all_reduce_multi of two
 * tensors apart (staged); a send from IPU 0 of each replica to its IPU 1, which does nothing else;
 *   and frees what it made. Every result is checked.
 *
 * Prints one line per instance and exits:
 *   0  "faults-inject: instance I ok: sim T0 T1 ..." (each local IPU 0's simulated time, exact);
 *   1  "faults-inject: instance I: CALL failed: GCL_ERR_...: the library's sentence";
 *   2  usage;
 *   3  a call returned GCL_OK with a wrong result (one line per wrong result, then the summary).
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gcl/gcl.h"
#include "gcl/sim.h"

enum { SMALL = 64, LARGE = 8192, MAX_LOCAL = 64 };

typedef struct {
    int ipus_per_replica;
    atomic_int wrong;
    double sim[MAX_LOCAL];
    int first_local_ipu;
} job_t;

/* What rank R's IPU at position POS contributes at I. */
static float value(int r, int pos, size_t i)
{
    return (float)((r + 1) * (int)(i % 7 + 1) + pos);
}

/* The sum over ranks R of the group MEMBERS[0..N) of value(R, POS, I). */
static float sum_of(const int *members, int n, int pos, size_t i)
{
    float s = 0;
    for (int k = 0; k < n; k++)
        s += value(members[k], pos, i);
    return s;
}

static void fill(float *p, size_t n, int r, int pos)
{
    for (size_t i = 0; i < n; i++)
        p[i] = value(r, pos, i);
}

static int check(job_t *j, gcl_ctx_t ctx, const char *what, const float *got, size_t i, float want)
{
    if (got[i] == want)
        return 0;
    if (atomic_fetch_add(&j->wrong, 1) < 8)
        printf("faults-inject: replica %d IPU %d: %s: element %zu is %g, expected %g\n",
               gcl_ctx_replica(ctx), gcl_ctx_ipu(ctx), what, i, (double)got[i], (double)want);
    return 1;
}

/* The members of COMM's group, as global replicas, for a group of consecutive SIZE. */
static void members_of(gcl_ctx_t ctx, int size, int *out)
{
    int base = gcl_ctx_replica(ctx) / size * size;
    for (int k = 0; k < size; k++)
        out[k] = base + k;
}

#define TRY(call)                                                                                  \
    do {                                                                                           \
        gcl_status_t try_rc_ = (call);                                                             \
        if (try_rc_ != GCL_OK)                                                                     \
            return try_rc_;                                                                        \
    } while (0)

/* Blocking and non-blocking all_reduce, small (eager, or messages) and large (host-direct). */
static gcl_status_t all_reduces(job_t *j, gcl_ctx_t ctx, gcl_comm_t all, gcl_comm_t pairs,
                                const float *in, float *out)
{
    int n = gcl_ctx_num_replicas(ctx), pos = gcl_ctx_ipu(ctx), every[MAX_LOCAL * 8], two[2];
    int psize = gcl_comm_size(pairs);
    members_of(ctx, n, every);
    members_of(ctx, psize, two);
    TRY(gcl_all_reduce(all, in, out, SMALL, GCL_F32, GCL_SUM));
    for (size_t i = 0; i < SMALL; i++)
        check(j, ctx, "all_reduce small", out, i, sum_of(every, n, pos, i));
    TRY(gcl_all_reduce(all, in, out, LARGE, GCL_F32, GCL_SUM));
    for (size_t i = 0; i < LARGE; i++)
        check(j, ctx, "all_reduce large", out, i, sum_of(every, n, pos, i));
    gcl_request_t a, b;
    TRY(gcl_all_reduce_start(pairs, in, out, SMALL, GCL_F32, GCL_SUM, &a));
    gcl_status_t rc = gcl_all_reduce_start(all, in, out + LARGE, LARGE, GCL_F32, GCL_SUM, &b);
    if (rc != GCL_OK)
        return rc; /* request A is cancelled at the end of the program */
    TRY(gcl_wait(a));
    for (int done = 0; !done;) { /* polled as a program that computes between its looks */
        TRY(gcl_test(b, &done));
        struct timespec pause = {0, 50000};
        if (!done)
            nanosleep(&pause, NULL);
    }
    for (size_t i = 0; i < SMALL; i++)
        check(j, ctx, "all_reduce_start small", out, i, sum_of(two, psize, pos, i));
    for (size_t i = 0; i < LARGE; i++)
        check(j, ctx, "all_reduce_start large", out + LARGE, i, sum_of(every, n, pos, i));
    return GCL_OK;
}

/* reduce_scatter, all_gather, broadcast, barrier, all_to_all, all_reduce_multi. */
static gcl_status_t others(job_t *j, gcl_ctx_t ctx, gcl_comm_t all, gcl_comm_t pairs, float *in,
                           float *out)
{
    int n = gcl_ctx_num_replicas(ctx), pos = gcl_ctx_ipu(ctx), r = gcl_comm_rank(all);
    int every[MAX_LOCAL * 8];
    members_of(ctx, n, every);
    fill(in, (size_t)n * LARGE, r, pos);
    TRY(gcl_reduce_scatter(all, in, out, LARGE, GCL_F32, GCL_SUM));
    for (size_t i = 0; i < LARGE; i++)
        check(j, ctx, "reduce_scatter", out, i, sum_of(every, n, pos, (size_t)r * LARGE + i));
    size_t per = LARGE / (size_t)n;
    TRY(gcl_all_gather(all, in, out, per, GCL_F32));
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < per; i++)
            check(j, ctx, "all_gather", out, (size_t)q * per + i, value(q, pos, i));
    TRY(gcl_broadcast(all, in, out, SMALL, GCL_F32, n > 1 ? 1 : 0));
    for (size_t i = 0; i < SMALL; i++)
        check(j, ctx, "broadcast", out, i, value(n > 1 ? 1 : 0, pos, i));
    TRY(gcl_barrier(pairs));
    TRY(gcl_all_to_all(all, in, out, SMALL, GCL_F32));
    for (int q = 0; q < n; q++)
        for (size_t i = 0; i < SMALL; i++)
            check(j, ctx, "all_to_all", out, (size_t)q * SMALL + i,
                  value(q, pos, (size_t)r * SMALL + i));
    gcl_tensor_t t[2] = {{in, out, SMALL, GCL_F32},
                         {in + 2 * SMALL, out + 2 * SMALL, SMALL, GCL_F32}};
    TRY(gcl_all_reduce_multi(all, t, 2, GCL_SUM));
    for (size_t i = 0; i < SMALL; i++) {
        check(j, ctx, "all_reduce_multi 0", out, i, sum_of(every, n, pos, i));
        check(j, ctx, "all_reduce_multi 1", out, 2 * SMALL + i,
              sum_of(every, n, pos, 2 * SMALL + i));
    }
    return GCL_OK;
}

/* IPU 0 of each replica sends to IPU 1, which checks what came. */
static gcl_status_t pipeline(job_t *j, gcl_ctx_t ctx, const float *in, float *out)
{
    int pos = gcl_ctx_ipu(ctx), r = gcl_ctx_replica(ctx);
    if (pos == 0)
        return gcl_send(ctx, 1, in, SMALL, GCL_F32, 7);
    if (pos != 1)
        return GCL_OK;
    TRY(gcl_recv(ctx, 0, out, SMALL, GCL_F32, 7));
    for (size_t i = 0; i < SMALL; i++)
        check(j, ctx, "recv", out, i, value(r, 0, i));
    return GCL_OK;
}

/* IPU 1 of each replica: the receiving end of the pipeline, nothing else. */
static gcl_status_t stage_1(job_t *j, gcl_ctx_t ctx)
{
    float *out;
    TRY(gcl_ipu_malloc(ctx, SMALL * sizeof(float), "received", (void **)&out));
    TRY(pipeline(j, ctx, NULL, out));
    gcl_ipu_free(ctx, out);
    return GCL_OK;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int n = gcl_ctx_num_replicas(ctx), pos = gcl_ctx_ipu(ctx);
    j->sim[gcl_ctx_global_ipu(ctx) - j->first_local_ipu] = -1;
    if (pos > 0) /* the collectives run on IPU 0 of every replica */
        return pos == 1 ? stage_1(j, ctx) : GCL_OK;
    size_t bytes = (size_t)n * LARGE * 2 * sizeof(float);
    float *in, *out;
    /* On a failure the program just returns: libgcl frees the communicators at the end of the
     * program and the IPU memory at gcl_finalize. On success it frees them itself. */
    TRY(gcl_ipu_malloc(ctx, bytes, "input", (void **)&in));
    TRY(gcl_ipu_malloc(ctx, bytes, "output", (void **)&out));
    fill(in, (size_t)n * LARGE * 2, gcl_ctx_replica(ctx), pos);
    gcl_comm_t all, pairs;
    TRY(gcl_comm_create(ctx, gcl_group_all(), &all));
    TRY(gcl_comm_create(ctx, n % 2 == 0 ? gcl_group_consecutive(2) : gcl_group_all(), &pairs));
    TRY(all_reduces(j, ctx, all, pairs, in, out));
    if (n > 1)
        TRY(others(j, ctx, all, pairs, in, out));
    fill(in, SMALL, gcl_ctx_replica(ctx), pos);
    if (j->ipus_per_replica > 1)
        TRY(pipeline(j, ctx, in, out));
    j->sim[gcl_ctx_global_ipu(ctx) - j->first_local_ipu] = gcl_sim_time(ctx);
    gcl_comm_destroy(pairs);
    gcl_comm_destroy(all);
    gcl_ipu_free(ctx, out);
    gcl_ipu_free(ctx, in);
    return GCL_OK;
}

static int arg_int(const char *s, int lo, int hi, int *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || v < lo || v > hi)
        return -1;
    *out = (int)v;
    return 0;
}

int main(int argc, char **argv)
{
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = 4;
    cfg.ipus_per_replica = 2;
    if (argc > 3 || (argc > 1 && arg_int(argv[1], 1, 64, &cfg.num_replicas) != 0) ||
        (argc > 2 && arg_int(argv[2], 1, 8, &cfg.ipus_per_replica) != 0)) {
        fprintf(stderr, "usage: faults-inject [REPLICAS (1-64) [IPUS_PER_REPLICA (1-8)]]\n");
        return 2;
    }
    gcl_instance_t inst;
    gcl_status_t rc = gcl_init(&cfg, &inst);
    if (rc != GCL_OK) {
        printf("faults-inject: instance ?: gcl_init failed: %s: %s\n", gcl_status_name(rc),
               gcl_init_error());
        return 1;
    }
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    int local = info.num_local_replicas * info.ipus_per_replica;
    static job_t job;
    job.first_local_ipu = info.replica_offset * info.ipus_per_replica;
    job.ipus_per_replica = info.ipus_per_replica;
    rc = local <= MAX_LOCAL ? gcl_run(inst, program, &job) : GCL_ERR_INVALID_ARGUMENT;
    if (rc != GCL_OK)
        printf("faults-inject: instance %d: gcl_run failed: %s: %s\n", info.instance_index,
               gcl_status_name(rc), gcl_instance_error(inst));
    gcl_status_t frc = gcl_finalize(inst);
    if (frc != GCL_OK)
        printf("faults-inject: instance %d: gcl_finalize failed: %s: %s\n", info.instance_index,
               gcl_status_name(frc), gcl_status_string(frc));
    if (atomic_load(&job.wrong)) {
        printf("faults-inject: instance %d: %d wrong results\n", info.instance_index,
               atomic_load(&job.wrong));
        return 3;
    }
    if (rc != GCL_OK || frc != GCL_OK)
        return 1;
    printf("faults-inject: instance %d ok: sim", info.instance_index);
    for (int k = 0; k < local; k++)
        if (job.sim[k] >= 0)
            printf(" %a", job.sim[k]);
    printf("\n");
    return 0;
}
