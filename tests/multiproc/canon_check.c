/*
 * canon-check: the canonical reduction order, observed. Every replica runs all_reduce,
 * reduce_scatter and all_gather on inexact inputs (random f32, f16 and bf16, summed), over the
 * groups ALL, CONSECUTIVE and ORTHOGONAL, blocking and non-blocking, at sizes below and above
 * the host-direct threshold. It checks each result bit for bit against the fold of every
 * replica's input along the canonical tree (coll/canon.h, computed here from the same seeds),
 * and prints one digest per case and replica:
 *
 *   DIGEST all_reduce/f32/all/5000/blocking r7 0123456789abcdef
 *
 * so that runs on different layouts (1, 4, 16 instances; 2 or 4 hosts) can be compared line by
 * line (tests/multiproc/canon_layouts.sh). Exits 1 on any difference or failed call.
 *
 *   poprun --num-replicas 16 --num-instances 4 canon-check [--quick]
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/canon.h"
#include "coll/half.h"
#include "coll/reduce.h"
#include "gcl/gcl.h"

enum { COLLS = 3, TYPES = 3, GROUPS = 3, MAX_REPLICAS = 64 };

static const char *const coll_names[COLLS] = {"all_reduce", "reduce_scatter", "all_gather"};
static const gcl_dtype_t types[TYPES] = {GCL_F32, GCL_F16, GCL_BF16};

typedef struct {
    int quick;
    atomic_long checks, failures;
} job_t;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

/* Element I of replica R's input for case SEED: a float in (-0.5, 0.5) in the type's bits. */
static void fill(void *buf, gcl_dtype_t t, size_t n, int r, uint64_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t h = mix(seed * 1000003u + (uint64_t)r * 7919u + i);
        float v = (float)((double)(h >> 11) / 9007199254740992.0 - 0.5);
        if (t == GCL_F32)
            ((float *)buf)[i] = v;
        else if (t == GCL_F16)
            coll_f16_from_f32((uint16_t *)buf + i, &v, 1);
        else
            coll_bf16_from_f32((uint16_t *)buf + i, &v, 1);
    }
}

static uint64_t digest(const void *buf, size_t bytes)
{
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < bytes; i++)
        h = (h ^ ((const unsigned char *)buf)[i]) * 1099511628211ull;
    return h;
}

static gcl_group_t group_of(int g, int n)
{
    return g == 0   ? gcl_group_all()
           : g == 1 ? gcl_group_consecutive(n / 4)
                    : gcl_group_orthogonal(n / 4);
}

/* The expected output of rank RANK: every member's input folded along the tree (all_reduce,
 * reduce_scatter), or the members' inputs side by side (all_gather). */
static void expected(int coll, gcl_dtype_t t, size_t count, const int *members, int size, int rank,
                     uint64_t seed, char *want)
{
    size_t es = gcl_dtype_size(t), in = coll == 1 ? count * (size_t)size : count;
    char *inputs = malloc(in * es * (size_t)size), *scratch = malloc(8 * count * es + 64);
    const void *src[MAX_REPLICAS];
    for (int q = 0; q < size; q++) {
        fill(inputs + (size_t)q * in * es, t, in, members[q], seed);
        src[q] = inputs + (size_t)q * in * es + (coll == 1 ? (size_t)rank * count * es : 0);
    }
    if (coll == 2)
        for (int q = 0; q < size; q++)
            memcpy(want + (size_t)q * count * es, inputs + (size_t)q * in * es, count * es);
    else
        coll_canon_fold((coll_dtype_t)t, COLL_SUM, want, src, size, count, scratch);
    free(inputs);
    free(scratch);
}

typedef struct {
    int coll, type, group, blocking;
    size_t count;
} case_t;

static gcl_status_t run_case(gcl_comm_t comm, const case_t *c, const void *in, void *out)
{
    gcl_dtype_t t = types[c->type];
    gcl_request_t req;
    gcl_status_t rc;
    if (c->coll == 0)
        rc = c->blocking ? gcl_all_reduce(comm, in, out, c->count, t, GCL_SUM)
                         : gcl_all_reduce_start(comm, in, out, c->count, t, GCL_SUM, &req);
    else if (c->coll == 1)
        rc = c->blocking ? gcl_reduce_scatter(comm, in, out, c->count, t, GCL_SUM)
                         : gcl_reduce_scatter_start(comm, in, out, c->count, t, GCL_SUM, &req);
    else
        rc = c->blocking ? gcl_all_gather(comm, in, out, c->count, t)
                         : gcl_all_gather_start(comm, in, out, c->count, t, &req);
    return rc == GCL_OK && !c->blocking ? gcl_wait(req) : rc;
}

/* Runs one case on this replica, checks it and prints its digest. */
static gcl_status_t one_case(gcl_ctx_t ctx, job_t *job, gcl_comm_t comm, const case_t *c)
{
    int n = gcl_ctx_num_replicas(ctx), me = gcl_ctx_replica(ctx);
    int size = gcl_comm_size(comm), rank = gcl_comm_rank(comm), members[MAX_REPLICAS];
    gcl_dtype_t t = types[c->type];
    size_t es = gcl_dtype_size(t), in = c->coll == 1 ? c->count * (size_t)size : c->count;
    size_t out = c->coll == 2 ? c->count * (size_t)size : c->count;
    uint64_t seed =
        (uint64_t)(((c->coll * TYPES + c->type) * GROUPS + c->group) * 7 + 1) ^ c->count;
    gcl_group_t g = group_of(c->group, n);
    int base = g.kind == GCL_GROUP_ORTHOGONAL ? me % (n / g.size) : me - rank;
    for (int q = 0; q < size; q++)
        members[q] = g.kind == GCL_GROUP_ORTHOGONAL ? base + q * (n / g.size) : base + q;
    char *x = malloc(in * es + 1), *y = malloc(out * es + 1), *want = malloc(out * es + 1);
    fill(x, t, in, me, seed);
    gcl_status_t rc = run_case(comm, c, x, y);
    char name[96];
    snprintf(name, sizeof name, "%s/%s/%s/%zu/%s", coll_names[c->coll], gcl_dtype_name(t),
             c->group == 0   ? "all"
             : c->group == 1 ? "consecutive"
                             : "orthogonal",
             c->count, c->blocking ? "blocking" : "nonblocking");
    if (rc != GCL_OK) {
        fprintf(stderr, "canon-check: %s on replica %d: %s\n", name, me, gcl_last_error(comm));
    } else {
        expected(c->coll, t, c->count, members, size, rank, seed, want);
        atomic_fetch_add(&job->checks, 1);
        if (memcmp(y, want, out * es) != 0) {
            atomic_fetch_add(&job->failures, 1);
            fprintf(stderr, "canon-check: %s on replica %d differs from the canonical fold\n", name,
                    me);
        }
        printf("DIGEST %s r%d %016llx\n", name, me, (unsigned long long)digest(y, out * es));
    }
    free(x);
    free(y);
    free(want);
    return rc;
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *job = arg;
    int n = gcl_ctx_num_replicas(ctx);
    static const size_t counts[] = {1000, 5000, 300000};
    int ncounts = job->quick ? 2 : 3;
    gcl_comm_t comms[GROUPS];
    for (int g = 0; g < GROUPS; g++)
        GCL_CHECK(gcl_comm_create(ctx, group_of(g, n), &comms[g]));
    gcl_status_t rc = GCL_OK;
    for (int coll = 0; coll < COLLS && rc == GCL_OK; coll++)
        for (int t = 0; t < TYPES && rc == GCL_OK; t++)
            for (int g = 0; g < GROUPS && rc == GCL_OK; g++)
                for (int k = 0; k < ncounts && rc == GCL_OK; k++)
                    for (int b = 1; b >= 0 && rc == GCL_OK; b--) {
                        case_t c = {coll, t, g, b, counts[k] / (coll == 0 ? 1 : 4)};
                        rc = one_case(ctx, job, comms[g], &c);
                    }
    return rc;
}

int main(int argc, char **argv)
{
    job_t job = {0};
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--quick")) {
            job.quick = 1;
        } else {
            fprintf(stderr, "usage: canon-check [--quick]\n");
            return 2;
        }
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    gcl_instance_t inst;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.num_replicas = 16;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 2;
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    int ok = info.num_replicas % 4 == 0 && info.num_replicas <= MAX_REPLICAS;
    gcl_status_t rc = ok ? gcl_run(inst, program, &job) : GCL_ERR_INVALID_ARGUMENT;
    if (!ok)
        fprintf(stderr, "canon-check: needs a multiple of 4 replicas, at most %d\n", MAX_REPLICAS);
    else if (rc != GCL_OK)
        fprintf(stderr, "canon-check: %s\n", gcl_instance_error(inst));
    long checks = atomic_load(&job.checks), failures = atomic_load(&job.failures);
    printf("canon-check: instance %d of %d, %d replicas: %ld checks, %ld failures: %s\n",
           info.instance_index, info.num_instances, info.num_replicas, checks, failures,
           rc == GCL_OK && failures == 0 ? "PASSED" : "FAILED");
    gcl_finalize(inst);
    return rc == GCL_OK && failures == 0 ? 0 : 1;
}
