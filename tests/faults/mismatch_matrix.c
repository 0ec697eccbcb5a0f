/*
 * faults-mismatch COLLECTIVE ARGUMENT: the last replica of the job calls COLLECTIVE differently
 * from every other replica in one ARGUMENT, and every replica must come back with
 * GCL_ERR_MISMATCH naming the odd replica: never a hang, never GCL_OK with a wrong answer.
 * Public API only (gcl/gcl.h).
 *
 *   COLLECTIVE  all_reduce, reduce_scatter, all_gather, broadcast, all_to_all, barrier
 *   ARGUMENT    count      the odd replica passes another count
 *               type       another element type (f16 instead of f32)
 *               op         another reduction operator (max instead of sum)
 *               root       another broadcast root
 *               group      a communicator over consecutive:N/2 instead of all
 *               algorithm  another algorithm forced with gcl_comm_set_algorithm
 *               collective another collective (all_reduce, or barrier for all_reduce)
 *               skip       the odd replica skips the first of two calls
 *               count_nb   count, with the non-blocking form (start, then wait)
 *               count_direct, type_direct, op_direct
 *                          as count/type/op, with calls large enough to run host-direct
 *
 * faults-mismatch --applies COLLECTIVE ARGUMENT exits 0 when the pair is a case, 1 otherwise.
 *
 * Each replica prints one line: its status and its error text. A replica's outcome is
 *   named    GCL_ERR_MISMATCH, and its error names the odd replica (or it is the odd one);
 *   correct  GCL_OK, and its output is exactly what the majority's call computes (a replica
 *            that no message of the odd one reaches may finish: a broadcast from the right
 *            root, a barrier);
 *   next     GCL_OK with the right output, and GCL_ERR_MISMATCH naming the mismatched call
 *            (or the odd replica) from its next call on the communicator (a barrier);
 *   empty    GCL_ERR_MISMATCH, but gcl_last_error() is empty;
 *   failed   another error (GCL_ERR_PEER_FAILED, GCL_ERR_TIMEOUT, ...): no hang, no wrong
 *            result, but not the diagnosis;
 *   WRONG    GCL_OK with a wrong output, or GCL_OK on the odd replica of a call with data, or
 *            an unexpected status (GCL_ERR_INVALID_ARGUMENT, GCL_ERR_INTERNAL...).
 * The instance prints PASSED when every local replica is "named" (or "correct" in a root case,
 * as tests/multiproc/mismatch_check.c allows, or "next" in a broadcast, as gcl.h allows), SAFE when
 * none is WRONG, FAILED otherwise; and exits 0, 3 and 1 respectively (2 for a usage error). With
 * FAULTS_MISMATCH_ALLOW_TIMEOUT=1 a replica other than the odd one that ends with GCL_ERR_TIMEOUT
 * still counts as passed: the network transports may tell a replica that never meets the odd one
 * only by a timeout.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/gcl.h"

enum { SMALL = 64, LARGE = 16384 }; /* LARGE x f32 = 64 KiB: above GCL_DIRECT_MIN_BYTES */

typedef struct {
    const char *coll, *arg;
    int allow_timeout;
    atomic_int wrong, short_of_strict, named, timeouts, ok;
} job_t;

static const char *const collectives[] = {"all_reduce", "reduce_scatter", "all_gather",
                                          "broadcast",  "all_to_all",     "barrier"};
static const char *const arguments[] = {"count",    "type",         "op",          "root",
                                        "group",    "algorithm",    "collective",  "skip",
                                        "count_nb", "count_direct", "type_direct", "op_direct"};

/* Which arguments a collective has. */
static int applies(const char *coll, const char *arg)
{
    int reduces = !strcmp(coll, "all_reduce") || !strcmp(coll, "reduce_scatter");
    int direct = reduces || !strcmp(coll, "all_gather");
    int barrier = !strcmp(coll, "barrier");
    if (!strcmp(arg, "op") || !strcmp(arg, "op_direct"))
        return reduces && (arg[2] == '\0' || direct);
    if (!strcmp(arg, "root"))
        return !strcmp(coll, "broadcast");
    if (!strcmp(arg, "count_direct") || !strcmp(arg, "type_direct"))
        return direct;
    if (!strcmp(arg, "count") || !strcmp(arg, "type") || !strcmp(arg, "count_nb"))
        return !barrier;
    return 1; /* group, algorithm, collective, skip */
}

typedef struct {
    gcl_comm_t comm;
    float *in, *out;
    size_t floats;
} bufs_t;

/* Every replica's input: small integers, exact in f32 and f16, different per replica. */
static float input(int replica, size_t i)
{
    return (float)(replica + 1) + (float)(i % 7);
}

/* Whether OUT holds what the majority's call (all group, f32, sum, root 0, COUNT elements)
 * gives replica ME of N. */
static int majority_result_ok(const char *coll, const float *out, size_t count, int me, int n)
{
    if (!strcmp(coll, "barrier"))
        return 1;
    for (size_t i = 0; i < count; i++) {
        float want;
        if (!strcmp(coll, "all_reduce"))
            want = (float)(n * (n + 1) / 2) + (float)n * (float)(i % 7);
        else if (!strcmp(coll, "reduce_scatter"))
            want = (float)(n * (n + 1) / 2) + (float)n * (float)(((size_t)me * count + i) % 7);
        else if (!strcmp(coll, "broadcast"))
            want = input(0, i);
        else
            want = 0; /* all_gather and all_to_all: checked block by block below */
        if (!strcmp(coll, "all_gather") || !strcmp(coll, "all_to_all")) {
            for (int q = 0; q < n; q++) {
                size_t src = !strcmp(coll, "all_gather") ? i : (size_t)me * count + i;
                if (out[(size_t)q * count + i] != input(q, src))
                    return 0;
            }
        } else if (out[i] != want) {
            return 0;
        }
    }
    return 1;
}

/* One call of COLL with COUNT elements of TYPE, OP, ROOT; non-blocking when NB. */
static gcl_status_t call(const char *coll, bufs_t *b, size_t count, gcl_dtype_t type,
                         gcl_redop_t op, int root, int nb)
{
    gcl_request_t req = NULL;
    gcl_status_t rc;
    if (!strcmp(coll, "all_reduce"))
        rc = nb ? gcl_all_reduce_start(b->comm, b->in, b->out, count, type, op, &req)
                : gcl_all_reduce(b->comm, b->in, b->out, count, type, op);
    else if (!strcmp(coll, "reduce_scatter"))
        rc = nb ? gcl_reduce_scatter_start(b->comm, b->in, b->out, count, type, op, &req)
                : gcl_reduce_scatter(b->comm, b->in, b->out, count, type, op);
    else if (!strcmp(coll, "all_gather"))
        rc = nb ? gcl_all_gather_start(b->comm, b->in, b->out, count, type, &req)
                : gcl_all_gather(b->comm, b->in, b->out, count, type);
    else if (!strcmp(coll, "broadcast"))
        rc = nb ? gcl_broadcast_start(b->comm, b->in, b->out, count, type, root, &req)
                : gcl_broadcast(b->comm, b->in, b->out, count, type, root);
    else if (!strcmp(coll, "all_to_all"))
        rc = nb ? gcl_all_to_all_start(b->comm, b->in, b->out, count, type, &req)
                : gcl_all_to_all(b->comm, b->in, b->out, count, type);
    else
        rc = nb ? gcl_barrier_start(b->comm, &req) : gcl_barrier(b->comm);
    if (rc == GCL_OK && req)
        rc = gcl_wait(req);
    return rc;
}

/* The call every replica makes, with the odd replica's difference. */
static gcl_status_t mismatched_call(const job_t *j, bufs_t *b, int odd)
{
    const char *a = j->arg;
    int direct = strstr(a, "_direct") != NULL;
    size_t count = direct ? LARGE : SMALL;
    gcl_dtype_t type = GCL_F32;
    gcl_redop_t op = GCL_SUM;
    int root = 0;
    if (odd && (!strcmp(a, "count") || !strcmp(a, "count_nb") || !strcmp(a, "count_direct")))
        count += direct ? 4096 : 36;
    if (odd && (!strcmp(a, "type") || !strcmp(a, "type_direct")))
        type = GCL_F16;
    if (odd && (!strcmp(a, "op") || !strcmp(a, "op_direct")))
        op = GCL_MAX;
    if (odd && !strcmp(a, "root"))
        root = 1;
    if (!strcmp(a, "collective")) {
        const char *other = strcmp(j->coll, "all_reduce") ? "all_reduce" : "barrier";
        return call(odd ? other : j->coll, b, count, type, op, root, 0);
    }
    if (!strcmp(a, "skip")) {
        gcl_status_t rc = odd ? GCL_OK : call(j->coll, b, count, type, op, root, 0);
        return rc != GCL_OK ? rc : call(j->coll, b, count / 2, type, op, root, 0);
    }
    return call(j->coll, b, count, type, op, root, !strcmp(a, "count_nb"));
}

static void report(job_t *j, gcl_ctx_t ctx, const bufs_t *b, gcl_status_t rc, const char *err,
                   gcl_status_t next_rc, const char *next_err)
{
    int me = gcl_ctx_replica(ctx), n = gcl_ctx_num_replicas(ctx), odd = me == n - 1;
    char oddname[32];
    snprintf(oddname, sizeof oddname, "replica %d ", n - 1);
    int named = rc == GCL_ERR_MISMATCH && (odd || strstr(err, oddname));
    size_t count = strstr(j->arg, "_direct") ? LARGE : SMALL;
    if (!strcmp(j->arg, "skip"))
        count /= 2; /* the call that returned is the second one */
    /* The odd replica has no right result, unless its call has no data (a barrier). */
    int correct = rc == GCL_OK && (odd ? !strcmp(j->coll, "barrier") && strcmp(j->arg, "collective")
                                       : majority_result_ok(j->coll, b->out, count, me, n));
    int failed = rc == GCL_ERR_MISMATCH || rc == GCL_ERR_PEER_FAILED || rc == GCL_ERR_TIMEOUT ||
                 rc == GCL_ERR_ABORTED;
    /* As tests/multiproc/mismatch_check.c: with the odd root, a replica that only receives
     * from the right root may end well. */
    /* A barrier carries nothing but its sequence number: one skipped barrier is a replica that
     * made one call fewer, and the right diagnosis is that it left without the last one. */
    int barrier_skip = !strcmp(j->coll, "barrier") && !strcmp(j->arg, "skip");
    int strict =
        named || (correct && !strcmp(j->arg, "root")) ||
        (rc == GCL_ERR_TIMEOUT && j->allow_timeout && !odd) ||
        (barrier_skip && (odd ? rc == GCL_OK : rc == GCL_ERR_PEER_FAILED && strstr(err, oddname)));
    /* GCL_ERR_MISMATCH with no text: the diagnosis was lost on the way (see mismatch_gaps.txt). */
    int empty = rc == GCL_ERR_MISMATCH && err[0] == '\0';
    /* Told at its next call: "call #S of this communicator was mismatched: ..." */
    int next = correct && next_rc == GCL_ERR_MISMATCH &&
               (strstr(next_err, oddname) || strstr(next_err, "was mismatched"));
    /* gcl.h's promise for a broadcast: a receiver that got the right data from the right root
     * may return GCL_OK, and is told at its next call on the communicator. */
    strict = strict || (next && !strcmp(j->coll, "broadcast") && !odd);
    const char *verdict = strict    ? "passed"
                          : next    ? "next"
                          : correct ? "correct"
                          : empty   ? "empty"
                          : failed  ? "failed"
                                    : "WRONG";
    atomic_fetch_add(&j->named, named);
    atomic_fetch_add(&j->timeouts, rc == GCL_ERR_TIMEOUT);
    atomic_fetch_add(&j->ok, rc == GCL_OK);
    atomic_fetch_add(&j->short_of_strict, !strict);
    atomic_fetch_add(&j->wrong, !strict && !correct && !failed);
    printf("faults-mismatch %s %s: replica %d%s: %s (%s): %s%s%s\n", j->coll, j->arg, me,
           odd ? " (odd)" : "", gcl_status_name(rc), verdict,
           rc == GCL_OK && !correct ? "GCL_OK with a wrong result" : err,
           rc == GCL_OK && correct && !strict ? "; its next call: " : "",
           rc == GCL_OK && correct && !strict ? next_err : "");
}

static gcl_status_t program(gcl_ctx_t ctx, void *arg)
{
    job_t *j = arg;
    int n = gcl_ctx_num_replicas(ctx), odd = gcl_ctx_replica(ctx) == n - 1;
    bufs_t b = {NULL, NULL, NULL, 0};
    gcl_group_t g =
        !strcmp(j->arg, "group") && odd ? gcl_group_consecutive(n / 2) : gcl_group_all();
    if (gcl_comm_create(ctx, g, &b.comm) != GCL_OK)
        return GCL_ERR_INTERNAL;
    if (!strcmp(j->arg, "algorithm")) {
        const char *names[16];
        int na = gcl_algorithms(j->coll, names, 16);
        if (na < 2 || gcl_comm_set_algorithm(b.comm, j->coll, names[odd ? na - 1 : 0]) != GCL_OK) {
            printf("faults-mismatch: %s has fewer than two algorithms\n", j->coll);
            atomic_fetch_add(&j->wrong, 1);
            gcl_comm_destroy(b.comm);
            return GCL_OK;
        }
    }
    /* Room for the largest call: size blocks of LARGE + 4096 elements of up to 4 bytes. */
    b.floats = (size_t)n * (LARGE + 4096);
    b.in = malloc(b.floats * sizeof(float));
    b.out = malloc(b.floats * sizeof(float));
    gcl_status_t rc = GCL_ERR_NO_HOST_MEMORY;
    if (b.in && b.out) {
        for (size_t i = 0; i < b.floats; i++) {
            b.in[i] = input(gcl_ctx_replica(ctx), i);
            b.out[i] = -1.0f; /* an output left alone is wrong */
        }
        rc = mismatched_call(j, &b, odd);
    }
    char err[512];
    snprintf(err, sizeof err, "%s", gcl_last_error(b.comm));
    /* A replica that came out well makes one more call on the communicator: it must learn of
     * the mismatch there, if not before. (Not the odd replica of a skipped barrier: its call
     * count is the odd one.) */
    gcl_status_t next_rc = GCL_OK;
    const char *next_err = "";
    if (rc == GCL_OK && !(odd && !strcmp(j->coll, "barrier"))) {
        next_rc = gcl_barrier(b.comm);
        next_err = gcl_last_error(b.comm);
    }
    report(j, ctx, &b, rc, err, next_rc, next_err);
    free(b.in);
    free(b.out);
    gcl_comm_destroy(b.comm);
    return GCL_OK;
}

static int known(const char *s, const char *const *list, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(s, list[i]))
            return 1;
    return 0;
}

int main(int argc, char **argv)
{
    /* --applies COLLECTIVE ARGUMENT: exit 0 when the collective has the argument, else 1. */
    if (argc == 4 && !strcmp(argv[1], "--applies"))
        return known(argv[2], collectives, sizeof collectives / sizeof *collectives) &&
                       known(argv[3], arguments, sizeof arguments / sizeof *arguments) &&
                       applies(argv[2], argv[3])
                   ? 0
                   : 1;
    if (argc != 3 || !known(argv[1], collectives, sizeof collectives / sizeof *collectives) ||
        !known(argv[2], arguments, sizeof arguments / sizeof *arguments)) {
        fprintf(stderr, "usage: faults-mismatch COLLECTIVE ARGUMENT (see the source)\n");
        return 2;
    }
    if (!applies(argv[1], argv[2])) {
        fprintf(stderr, "faults-mismatch: %s has no argument %s\n", argv[1], argv[2]);
        return 2;
    }
    const char *allow = getenv("FAULTS_MISMATCH_ALLOW_TIMEOUT");
    job_t j = {.coll = argv[1], .arg = argv[2], .allow_timeout = allow && !strcmp(allow, "1")};
    gcl_config_t cfg = {.num_replicas = 4, .ipus_per_replica = 1};
    gcl_instance_t inst;
    if (gcl_init(&cfg, &inst) != GCL_OK)
        return 1;
    gcl_job_info_t info;
    gcl_instance_info(inst, &info);
    gcl_status_t rc = gcl_run(inst, program, &j);
    int wrong = rc != GCL_OK || atomic_load(&j.wrong) > 0,
        strict = !atomic_load(&j.short_of_strict);
    printf("faults-mismatch %s %s: instance %d: %s (%d of %d local replicas named the odd one, "
           "%d timed out, %d returned GCL_OK)\n",
           j.coll, j.arg, info.instance_index,
           wrong    ? "FAILED"
           : strict ? "PASSED"
                    : "SAFE",
           atomic_load(&j.named), info.num_local_replicas, atomic_load(&j.timeouts),
           atomic_load(&j.ok));
    fflush(stdout);
    gcl_finalize(inst);
    return wrong ? 1 : strict ? 0 : 3;
}
