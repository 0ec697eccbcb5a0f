#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/half.h"
#include "sched_harness.h"

/* The runs allocate and free many buffers of up to a few MiB (messages, TMP): keeping freed memory
 * in the heap instead of returning it to the kernel spares most of the tests' time in page faults.
 * (glibc only; sanitizers bring their own allocator and ignore it.) */
static void keep_freed_memory(void)
{
    static int done;
    if (done)
        return;
    mallopt(M_MMAP_THRESHOLD, 64 << 20);
    mallopt(M_TRIM_THRESHOLD, 512 << 20);
    done = 1;
}

static void *poisoned(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    assert_non_null(p);
    memset(p, 0xa5, bytes);
    return p;
}

int harness_build(harness_t *h, const coll_algo_t *algo, coll_args_t args, int in_place,
                  harness_fill_fn fill)
{
    int n = args.nranks;
    keep_freed_memory();
    memset(h, 0, sizeof *h);
    h->n = n;
    h->scheds = calloc((size_t)n, sizeof *h->scheds);
    h->ptrs = calloc((size_t)n, sizeof *h->ptrs);
    h->bufs = calloc((size_t)n, sizeof *h->bufs);
    h->allocs = calloc((size_t)n, sizeof *h->allocs);
    assert_true(h->scheds && h->ptrs && h->bufs && h->allocs);
    for (int r = 0; r < n; r++) {
        coll_args_t a = args;
        a.rank = r;
        const char *why = NULL;
        coll_schedule_init(&h->scheds[r]);
        h->ptrs[r] = &h->scheds[r];
        int rc = coll_build(algo, &a, &h->scheds[r], &why);
        if (rc == -22 /* EINVAL: not supported */) {
            assert_non_null(why); /* a refusal always says why */
            harness_free(h);
            return -1;
        }
        assert_int_equal(rc, 0);
        char err[256];
        if (coll_schedule_validate(&h->scheds[r], err, sizeof err) != 0)
            fail_msg("%s n=%d rank=%d count=%llu: %s", algo->name, n, r,
                     (unsigned long long)args.count, err);
        const coll_schedule_t *s = &h->scheds[r];
        size_t es = args.elem_size;
        uint64_t span = s->in_alias + s->in_count > s->out_alias + s->out_count
                            ? s->in_alias + s->in_count
                            : s->out_alias + s->out_count;
        /* OUT and TMP start as garbage (0xa5 bytes: no expected value of any type), so a
         * schedule that leaves part of OUT unwritten fails even where the answer is 0. */
        if (in_place) {
            char *base = h->allocs[r][0] = poisoned((span + 1) * es);
            h->bufs[r][COLL_BUF_IN] = base + s->in_alias * es;
            h->bufs[r][COLL_BUF_OUT] = base + s->out_alias * es;
        } else {
            h->bufs[r][COLL_BUF_IN] = h->allocs[r][0] = poisoned((s->in_count + 1) * es);
            h->bufs[r][COLL_BUF_OUT] = h->allocs[r][1] = poisoned((s->out_count + 1) * es);
        }
        h->bufs[r][COLL_BUF_TMP] = h->allocs[r][2] = poisoned((s->tmp_count + 1) * es);
        fill(r, h->bufs[r][COLL_BUF_IN], s->in_count, &a);
    }
    return 0;
}

/*
 * Whether the schedules also finish when every send waits for its receiver (a rendezvous
 * transport) instead of being buffered as coll_run_local buffers it. A rank's step completes
 * once the receiver of each of its sends has posted the matching receive (reached its step) and
 * the sender of each of its receives has posted the matching send. sent[p * n + q] counts the
 * sends from p to q in p's steps so far, including the current one; recvd[q * n + p] the
 * receives at q from p. Returns 0, or -1 with the stuck rank in *STUCK.
 */
static int finishes_with_rendezvous(const harness_t *h, int *stuck)
{
    int n = h->n, rc = 0;
    uint32_t *sent = calloc((size_t)n * (size_t)n, sizeof *sent);
    uint32_t *recvd = calloc((size_t)n * (size_t)n, sizeof *recvd);
    uint32_t *k = calloc((size_t)n, sizeof *k);
    assert_true(sent && recvd && k);
    /* Every rank posts its first step. */
    for (int r = 0; r < n; r++)
        if (h->scheds[r].nsteps)
            for (uint32_t i = 0; i < h->scheds[r].steps[0].count; i++) {
                const coll_op_t *op = &h->scheds[r].ops[h->scheds[r].steps[0].first + i];
                if (op->kind == COLL_OP_SEND)
                    sent[r * n + op->peer]++;
                else if (op->kind <= COLL_OP_RECV_REDUCE)
                    recvd[r * n + op->peer]++;
            }
    for (int progress = 1; progress;) {
        progress = 0;
        for (int r = 0; r < n; r++) {
            const coll_schedule_t *s = &h->scheds[r];
            while (k[r] < s->nsteps) {
                const coll_step_t *st = &s->steps[k[r]];
                int ready = 1;
                /* Per-pair index of each op: counts posted so far minus the later ops of this
                 * step to the same peer and of the same kind. */
                for (uint32_t i = st->first; ready && i < st->first + st->count; i++) {
                    const coll_op_t *op = &s->ops[i];
                    if (op->kind > COLL_OP_RECV_REDUCE)
                        continue;
                    int snd = op->kind == COLL_OP_SEND;
                    uint32_t later = 0;
                    for (uint32_t j = i + 1; j < st->first + st->count; j++)
                        later += s->ops[j].peer == op->peer &&
                                 (s->ops[j].kind == COLL_OP_SEND) == snd &&
                                 s->ops[j].kind <= COLL_OP_RECV_REDUCE;
                    uint32_t idx = (snd ? sent : recvd)[r * n + op->peer] - 1 - later;
                    ready = idx < (snd ? recvd : sent)[op->peer * n + r];
                }
                if (!ready)
                    break;
                if (++k[r] < s->nsteps) {
                    st = &s->steps[k[r]];
                    for (uint32_t i = st->first; i < st->first + st->count; i++) {
                        const coll_op_t *op = &s->ops[i];
                        if (op->kind == COLL_OP_SEND)
                            sent[r * n + op->peer]++;
                        else if (op->kind <= COLL_OP_RECV_REDUCE)
                            recvd[r * n + op->peer]++;
                    }
                }
                progress = 1;
            }
        }
    }
    for (int r = 0; r < n && rc == 0; r++)
        if (k[r] < h->scheds[r].nsteps) {
            *stuck = r;
            rc = -1;
        }
    free(sent);
    free(recvd);
    free(k);
    return rc;
}

void harness_run(harness_t *h, coll_args_t args)
{
    int stuck;
    if (finishes_with_rendezvous(h, &stuck) != 0)
        fail_msg("%s n=%d count=%llu: rank %d never finishes when sends wait for receivers",
                 h->scheds[0].algo, h->n, (unsigned long long)args.count, stuck);
    coll_exec_info_t x = {args.dtype, args.op, args.elem_size, args.nranks};
    char why[256];
    if (coll_run_local(h->ptrs, (void *const(*)[COLL_BUF_COUNT])h->bufs, h->n, &x, why,
                       sizeof why) != 0)
        fail_msg("%s n=%d count=%llu: %s", h->scheds[0].algo, h->n, (unsigned long long)args.count,
                 why);
}

void *harness_out(harness_t *h, int r)
{
    return h->bufs[r][COLL_BUF_OUT];
}

void harness_free(harness_t *h)
{
    for (int r = 0; r < h->n; r++) {
        for (int i = 0; h->allocs && i < 3; i++)
            free(h->allocs[r][i]);
        coll_schedule_free(&h->scheds[r]);
    }
    free(h->scheds);
    free(h->ptrs);
    free(h->bufs);
    free(h->allocs);
    memset(h, 0, sizeof *h);
}

uint32_t harness_max_steps(const harness_t *h)
{
    uint32_t m = 0;
    for (int r = 0; r < h->n; r++)
        m = h->scheds[r].nsteps > m ? h->scheds[r].nsteps : m;
    return m;
}

uint64_t harness_max_sent(const harness_t *h)
{
    uint64_t m = 0;
    for (int r = 0; r < h->n; r++) {
        uint64_t sent = 0;
        for (uint32_t i = 0; i < h->scheds[r].nops; i++)
            if (h->scheds[r].ops[i].kind == COLL_OP_SEND)
                sent += h->scheds[r].ops[i].count;
        m = sent > m ? sent : m;
    }
    return m;
}

/* Message start times between one pair of ranks, in send order. */
typedef struct {
    uint32_t *t;
    uint32_t len, cap, used;
} times_t;

static void push_time(times_t *q, uint32_t t)
{
    if (q->len == q->cap) {
        q->cap = q->cap ? 2 * q->cap : 8;
        q->t = realloc(q->t, q->cap * sizeof *q->t);
        assert_non_null(q->t);
    }
    q->t[q->len++] = t;
}

static int is_recv(const coll_op_t *op)
{
    return op->kind == COLL_OP_RECV || op->kind == COLL_OP_RECV_REDUCE;
}

/* Finishes step K of S (which started at *T) when all its messages have been sent: a step with
 * traffic takes one unit, and a receive completes one unit after its send's step started.
 * FROM[p] holds the start times of p's messages to this rank. Returns 1 when it did. */
static int finish_step(const coll_schedule_t *s, uint32_t k, times_t *from, uint32_t *t)
{
    const coll_step_t *st = &s->steps[k];
    uint32_t done = *t, ok = 1;
    for (uint32_t i = st->first; i < st->first + st->count; i++) {
        const coll_op_t *op = &s->ops[i];
        done = op->kind <= COLL_OP_RECV_REDUCE && done < *t + 1 ? *t + 1 : done;
        if (is_recv(op) && from[op->peer].used++ >= from[op->peer].len)
            ok = 0;
    }
    for (uint32_t i = st->first + st->count; i-- > st->first;) {
        const coll_op_t *op = &s->ops[i];
        if (!is_recv(op))
            continue;
        times_t *q = &from[op->peer];
        q->used--;
        if (ok && q->t[q->used] + 1 > done)
            done = q->t[q->used] + 1;
    }
    if (!ok)
        return 0;
    for (uint32_t i = st->first; i < st->first + st->count; i++)
        if (is_recv(&s->ops[i]))
            from[s->ops[i].peer].used++;
    *t = done;
    return 1;
}

uint32_t harness_critical_path(const harness_t *h)
{
    int n = h->n;
    times_t *q = calloc((size_t)n * (size_t)n, sizeof *q); /* q[src * n + dst] */
    uint32_t *k = calloc((size_t)n, sizeof *k), *t = calloc((size_t)n, sizeof *t), longest = 0;
    char *posted = calloc((size_t)n, 1);
    assert_true(q && k && t && posted);
    for (int progress = 1; progress;) {
        progress = 0;
        for (int r = 0; r < n; r++) {
            const coll_schedule_t *s = &h->scheds[r];
            if (k[r] >= s->nsteps)
                continue;
            const coll_step_t *st = &s->steps[k[r]];
            for (uint32_t i = st->first; !posted[r] && i < st->first + st->count; i++)
                if (s->ops[i].kind == COLL_OP_SEND)
                    push_time(&q[r * n + s->ops[i].peer], t[r]);
            posted[r] = 1;
            /* This rank's incoming queues are q[p * n + r]: gather them as a strided view. */
            times_t from[256];
            assert_true(n <= 256);
            for (int p = 0; p < n; p++)
                from[p] = q[p * n + r];
            if (finish_step(s, k[r], from, &t[r])) {
                k[r]++;
                posted[r] = 0;
                progress = 1;
            }
            for (int p = 0; p < n; p++)
                q[p * n + r].used = from[p].used;
        }
    }
    for (int r = 0; r < n; r++) {
        assert_int_equal(k[r], h->scheds[r].nsteps); /* no deadlock */
        longest = t[r] > longest ? t[r] : longest;
    }
    for (int i = 0; i < n * n; i++)
        free(q[i].t);
    free(q);
    free(k);
    free(t);
    free(posted);
    return longest;
}

/* ---- Inputs and references ---- */

static int reducing(coll_collective_t c)
{
    return c == COLL_ALLREDUCE || c == COLL_REDUCE_SCATTER;
}

static int is_unsigned(coll_dtype_t t)
{
    return t == COLL_U32 || t == COLL_U64;
}

/* The reductions' inputs: small integers that repeat with period 7 (or 60 for MUL) along IN. */
static inline double reduce_input(coll_dtype_t t, coll_redop_t op, int r, uint32_t i)
{
    if (op == COLL_MUL) {
        static const int v[3] = {1, 2, -1};
        int x = (r + (int)(i % 5)) % 4 == 0 ? v[(i + (uint32_t)r) % 3] : 1;
        return is_unsigned(t) && x < 0 ? 3 : x;
    }
    int x = (int)((i * 5 + (uint32_t)r * 3) % 7) - 3;
    return t == COLL_BOOL ? x > 0 : is_unsigned(t) ? x + 3 : x;
}

double harness_input(const coll_args_t *a, int r, uint64_t i)
{
    coll_dtype_t t = a->dtype;
    if (reducing(a->coll))
        return reduce_input(t, a->op, r, (uint32_t)(i % 420));
    /* Moving data only: values that differ between neighbouring elements and ranks. */
    uint64_t m = t == COLL_F16 ? 2039 : t == COLL_BF16 ? 251 : t == COLL_BOOL ? 2 : 65521;
    uint64_t v = ((uint64_t)r * 1000003u + i * 7919u + i / 7) % m;
    return t == COLL_BOOL || is_unsigned(t) ? (double)v : (double)v - (double)(m / 2);
}

static void put(coll_dtype_t t, void *buf, uint64_t i, double v)
{
    switch (t) {
    case COLL_F32:
        ((float *)buf)[i] = (float)v;
        break;
    case COLL_F16:
        ((uint16_t *)buf)[i] = coll_f32_to_f16((float)v);
        break;
    case COLL_BF16:
        ((uint16_t *)buf)[i] = coll_f32_to_bf16((float)v);
        break;
    case COLL_I32:
        ((int32_t *)buf)[i] = (int32_t)v;
        break;
    case COLL_I64:
        ((int64_t *)buf)[i] = (int64_t)v;
        break;
    case COLL_U32:
        ((uint32_t *)buf)[i] = (uint32_t)v;
        break;
    case COLL_U64:
        ((uint64_t *)buf)[i] = (uint64_t)v;
        break;
    default:
        ((uint8_t *)buf)[i] = v != 0;
        break;
    }
}

double harness_get(coll_dtype_t t, const void *buf, uint64_t i)
{
    switch (t) {
    case COLL_F32:
        return ((const float *)buf)[i];
    case COLL_F16:
        return coll_f16_to_f32(((const uint16_t *)buf)[i]);
    case COLL_BF16:
        return coll_bf16_to_f32(((const uint16_t *)buf)[i]);
    case COLL_I32:
        return ((const int32_t *)buf)[i];
    case COLL_I64:
        return (double)((const int64_t *)buf)[i];
    case COLL_U32:
        return ((const uint32_t *)buf)[i];
    case COLL_U64:
        return (double)((const uint64_t *)buf)[i];
    default:
        return ((const uint8_t *)buf)[i];
    }
}

void harness_fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    for (uint64_t i = 0; i < count; i++)
        put(a->dtype, in, i, harness_input(a, r, i));
}

static uint32_t xorshift(uint32_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 17;
    *x ^= *x << 5;
    return *x;
}

void harness_fill_random(int r, void *in, uint64_t count, const coll_args_t *a)
{
    static const uint32_t specials[6] = {0x00000000u, 0x80000000u, 0x7fc00001u,
                                         0xffc00002u, 0x7fc12345u, 0x3f800000u};
    int special = coll_dtype_is_float(a->dtype) && (a->op == COLL_MIN || a->op == COLL_MAX);
    uint32_t x = 2463534242u ^ (uint32_t)(r * 7919 + 1);
    for (uint64_t i = 0; i < count; i++) {
        uint32_t u = xorshift(&x);
        float f = special ? coll_bits_f32(specials[u % 6]) : (float)u / 4294967296.0f - 0.5f;
        switch (a->dtype) {
        case COLL_F32:
            ((float *)in)[i] = f;
            break;
        case COLL_F16: /* NaN payloads kept in the top bits, which f16 has room for */
            ((uint16_t *)in)[i] =
                special ? (uint16_t)((specials[u % 6] >> 16) ^ (u % 6 == 4 ? 0x3u : 0))
                        : coll_f32_to_f16(f);
            break;
        case COLL_BF16:
            ((uint16_t *)in)[i] = special ? (uint16_t)(specials[u % 6] >> 16) : coll_f32_to_bf16(f);
            break;
        default:
            for (size_t b = 0; b < a->elem_size; b++)
                ((uint8_t *)in)[i * a->elem_size + b] = (uint8_t)(xorshift(&x) >> 7);
            if (a->dtype == COLL_BOOL)
                ((uint8_t *)in)[i] &= 1;
            break;
        }
    }
}

static double apply(coll_redop_t op, double acc, double v)
{
    switch (op) {
    case COLL_MUL:
        return acc * v;
    case COLL_MIN:
        return v < acc ? v : acc;
    case COLL_MAX:
        return v > acc ? v : acc;
    case COLL_LOGICAL_AND:
        return acc != 0 && v != 0;
    case COLL_LOGICAL_OR:
        return acc != 0 || v != 0;
    default: /* SUM, MEAN, and SQUARE_ADD: a sum of contributions that are already squares */
        return acc + v;
    }
}

/* Element I of the reduction over all ranks' inputs, for rank R (LOCAL keeps R's own). */
static double fold(const coll_args_t *a, int r, uint64_t i)
{
    if (a->op == COLL_LOCAL)
        return harness_input(a, r, i);
    double acc = harness_input(a, 0, i);
    for (int q = 1; q < a->nranks; q++)
        acc = apply(a->op, acc, harness_input(a, q, i));
    if (a->op != COLL_MEAN)
        return acc;
    /* A MEAN divides once, in the element type (through f32 for f16 and bf16). */
    float m = (float)acc / (float)a->nranks;
    if (a->dtype == COLL_F16)
        return coll_f16_to_f32(coll_f32_to_f16(m));
    if (a->dtype == COLL_BF16)
        return coll_bf16_to_f32(coll_f32_to_bf16(m));
    return m;
}

double harness_expected(const coll_args_t *a, int r, uint64_t i)
{
    uint64_t c = a->count, q = c ? i / c : 0, j = c ? i % c : 0;
    switch (a->coll) {
    case COLL_ALLREDUCE:
        return fold(a, r, i);
    case COLL_REDUCE_SCATTER:
        return fold(a, r, (uint64_t)r * c + i);
    case COLL_ALLGATHER:
        return harness_input(a, (int)q, j);
    case COLL_BROADCAST:
        return harness_input(a, a->root, i);
    case COLL_ALLTOALL:
        return harness_input(a, (int)q, (uint64_t)r * c + j);
    default:
        return 0;
    }
}

/* ---- Checking a whole run ---- */

static void describe(const coll_algo_t *algo, const coll_args_t *a, int in_place, char *buf,
                     size_t len)
{
    snprintf(buf, len, "%s %s %s/%s n=%d count=%llu root=%d chunk=%zu %s", algo->name,
             coll_collective_name(a->coll), coll_dtype_name(a->dtype), coll_redop_name(a->op),
             a->nranks, (unsigned long long)a->count, a->root, a->chunk_bytes,
             in_place ? "in place" : "out of place");
}

/* Compares rank R's OUT with the references (WANT, when not NULL, holds them for all ranks). */
static void check_out(harness_t *h, const coll_algo_t *algo, const coll_args_t *a, int r,
                      const double *want)
{
    const coll_schedule_t *s = &h->scheds[r];
    const void *out = harness_out(h, r);
    for (uint64_t i = 0; i < s->out_count; i++) {
        double got = harness_get(a->dtype, out, i);
        double exp = want ? want[i] : harness_expected(a, r, i);
        if (got != exp) {
            char what[200];
            describe(algo, a, 0, what, sizeof what);
            fail_msg("%s: rank %d OUT[%llu] is %g, want %g", what, r, (unsigned long long)i, got,
                     exp);
        }
    }
}

/* Inputs of the out-of-place run, handed to the in-place one (harness_check is not reentrant). */
static void **saved_in;

static void fill_saved(int r, void *in, uint64_t count, const coll_args_t *a)
{
    memcpy(in, saved_in[r], count * a->elem_size);
}

/* Copies of every rank's buffer BUF. */
static void **snapshot(harness_t *h, unsigned buf, size_t es)
{
    void **copy = calloc((size_t)h->n, sizeof *copy);
    assert_non_null(copy);
    for (int r = 0; r < h->n; r++) {
        const coll_schedule_t *s = &h->scheds[r];
        size_t bytes = (buf == COLL_BUF_IN ? s->in_count : s->out_count) * es;
        copy[r] = malloc(bytes + 1);
        assert_non_null(copy[r]);
        memcpy(copy[r], h->bufs[r][buf], bytes);
    }
    return copy;
}

static void free_snapshot(void **copy, int n)
{
    for (int r = 0; r < n; r++)
        free(copy[r]);
    free(copy);
}

/* Checks the out-of-place run H against the references, and that it left IN as it was. */
static void check_run(harness_t *h, const coll_algo_t *algo, const coll_args_t *a, void **in)
{
    /* The all-reduce reference is the same for every rank: compute it once. */
    double *want = NULL;
    int same_everywhere =
        (a->coll == COLL_ALLREDUCE && a->op != COLL_LOCAL) || a->coll == COLL_BROADCAST;
    if (a->coll == COLL_ALLREDUCE && a->op != COLL_LOCAL) {
        want = malloc((a->count + 1) * sizeof *want);
        assert_non_null(want);
        for (uint64_t i = 0; i < a->count; i++)
            want[i] = harness_expected(a, 0, i);
    }
    for (int r = 0; r < a->nranks; r++) {
        check_out(h, algo, a, r, want);
        if (same_everywhere && r > 0)
            assert_memory_equal(harness_out(h, r), harness_out(h, 0), a->count * a->elem_size);
        if (memcmp(h->bufs[r][COLL_BUF_IN], in[r], h->scheds[r].in_count * a->elem_size) != 0) {
            char what[200];
            describe(algo, a, 0, what, sizeof what);
            fail_msg("%s: rank %d wrote its input", what, r);
        }
    }
    free(want);
}

int harness_check(const coll_algo_t *algo, coll_args_t a)
{
    harness_t h;
    if (harness_build(&h, algo, a, 0, harness_fill) != 0)
        return -1;
    void **in = snapshot(&h, COLL_BUF_IN, a.elem_size);
    harness_run(&h, a);
    check_run(&h, algo, &a, in);
    void **out = snapshot(&h, COLL_BUF_OUT, a.elem_size);
    harness_free(&h);

    /* In place: the same inputs must give bitwise the same outputs. */
    saved_in = in;
    assert_int_equal(harness_build(&h, algo, a, 1, fill_saved), 0);
    saved_in = NULL;
    harness_run(&h, a);
    for (int r = 0; r < a.nranks; r++) {
        if (memcmp(harness_out(&h, r), out[r], h.scheds[r].out_count * a.elem_size) != 0) {
            char what[200];
            describe(algo, &a, 1, what, sizeof what);
            fail_msg("%s: rank %d's result differs from the out-of-place run's", what, r);
        }
    }
    free_snapshot(out, a.nranks);
    free_snapshot(in, a.nranks);
    harness_free(&h);
    return 0;
}

int harness_pairs(coll_dtype_t *types, coll_redop_t *ops, int max)
{
    int k = 0;
    for (int t = 0; t < COLL_DTYPE_COUNT; t++) {
        for (int op = 0; op < COLL_REDOP_COUNT; op++) {
            if (!coll_redop_valid((coll_dtype_t)t, (coll_redop_t)op, NULL))
                continue;
            assert_true(k < max);
            types[k] = (coll_dtype_t)t;
            ops[k] = (coll_redop_t)op;
            k++;
        }
    }
    return k;
}

void harness_layout(int *node_of, int n, int per_node, int contiguous)
{
    int nodes = n / per_node;
    for (int q = 0; q < n; q++)
        node_of[q] = contiguous ? q / per_node : q % nodes;
}

void harness_sweep(coll_collective_t c, int max_n, uint64_t (*big)(int n),
                   void (*f)(const coll_algo_t *algo, int n, int ci, uint64_t count))
{
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(c, &nalgo);
    assert_true(nalgo >= 2);
    for (size_t k = 0; k < nalgo; k++) {
        for (int n = 1; n <= max_n; n++) {
            uint64_t counts[] = {0, 1, (uint64_t)n - 1, (uint64_t)n + 1, big(n)};
            for (int ci = 0; ci < 5; ci++)
                f(algos[k], n, ci, counts[ci]);
        }
    }
}

/* Runs ALGO on harness_fill_random's inputs; returns copies of every rank's OUT. */
static void **run_random(const coll_algo_t *algo, const coll_args_t *a, int in_place)
{
    harness_t h;
    if (harness_build(&h, algo, *a, in_place, harness_fill_random) != 0)
        return NULL;
    harness_run(&h, *a);
    void **out = snapshot(&h, COLL_BUF_OUT, a->elem_size);
    harness_free(&h);
    return out;
}

int harness_check_deterministic(const coll_algo_t *algo, coll_args_t a)
{
    void **first = run_random(algo, &a, 0);
    if (!first)
        return -1;
    void **again = run_random(algo, &a, 0), **inplace = run_random(algo, &a, 1);
    char what[200];
    describe(algo, &a, 0, what, sizeof what);
    for (int r = 0; r < a.nranks; r++) {
        uint64_t out_count = a.coll == COLL_ALLGATHER || a.coll == COLL_ALLTOALL
                                 ? a.count * (uint64_t)a.nranks
                                 : a.count;
        size_t bytes = out_count * a.elem_size;
        if (memcmp(again[r], first[r], bytes) != 0)
            fail_msg("%s: rank %d's result differs from one run to the next", what, r);
        if (memcmp(inplace[r], first[r], bytes) != 0)
            fail_msg("%s: rank %d's result differs in place", what, r);
        if (a.coll == COLL_ALLREDUCE && a.op != COLL_LOCAL && memcmp(first[r], first[0], bytes))
            fail_msg("%s: rank %d's result differs from rank 0's", what, r);
    }
    free_snapshot(first, a.nranks);
    free_snapshot(again, a.nranks);
    free_snapshot(inplace, a.nranks);
    return 0;
}
