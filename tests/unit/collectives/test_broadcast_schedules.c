/*
 * Every broadcast algorithm, run with no communication for groups of 1 to MAX_RANKS ranks, every
 * kind of root, awkward counts and segment sizes, in place and out of place, for every element
 * size, against the root's input (sched_harness.h); documented steps and bytes; segmenting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <string.h>

#include "sched_harness.h"

#define MAX_RANKS 33

static uint64_t big_count(int n)
{
    return 997u * (uint64_t)n + 13;
}

static int log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

static void no_fill(int r, void *in, uint64_t count, const coll_args_t *a)
{
    (void)r, (void)in, (void)count, (void)a;
}

static uint64_t nsegments(const coll_args_t *a)
{
    size_t chunk = a->chunk_bytes ? a->chunk_bytes : COLL_CHUNK_BYTES;
    uint64_t per = chunk / a->elem_size ? chunk / a->elem_size : 1;
    uint64_t k = (a->count + per - 1) / per;
    return k < 1 ? 1 : k > COLL_MAX_SEGMENTS ? COLL_MAX_SEGMENTS : k;
}

static void check_costs(const coll_algo_t *algo, coll_args_t a)
{
    harness_t h;
    assert_int_equal(harness_build(&h, algo, a, 0, no_fill), 0);
    int n = a.nranks, lg = log2_ceil(n);
    uint64_t c = a.count, k = nsegments(&a);
    uint64_t steps, sent;
    if (strcmp(algo->name, "binomial_tree") == 0) {
        steps = k + (uint64_t)lg - 1;
        sent = (uint64_t)lg * c;
    } else if (strcmp(algo->name, "chain") == 0) {
        steps = k + (uint64_t)n - 2;
        sent = c;
    } else {
        steps = (uint64_t)(lg + n - 1);
        sent = 2 * c + (uint64_t)n;
    }
    /* Pipelined ranks have few steps of their own; what the documentation counts is the
     * longest chain of dependent steps, the latencies a broadcast pays. */
    uint32_t path = harness_critical_path(&h);
    if (n > 1 && c >= (uint64_t)n && path != steps)
        fail_msg("%s n=%d count=%llu chunk=%zu: %u steps deep, documented %llu", algo->name, n,
                 (unsigned long long)c, a.chunk_bytes, path, (unsigned long long)steps);
    if (harness_max_sent(&h) > sent)
        fail_msg("%s n=%d count=%llu: a rank sends %llu elements, documented at most %llu",
                 algo->name, n, (unsigned long long)c, (unsigned long long)harness_max_sent(&h),
                 (unsigned long long)sent);
    harness_free(&h);
}

static void one_case(const coll_algo_t *algo, int n, int ci, uint64_t count)
{
    int roots[3] = {0, n - 1, (n * 7 + ci) % n};
    for (int j = 0; j < (ci < 4 ? 3 : 1); j++) {
        coll_dtype_t t = (coll_dtype_t)((n * 3 + ci + j) % COLL_DTYPE_COUNT);
        coll_args_t a = {.coll = COLL_BROADCAST,
                         .nranks = n,
                         .count = count,
                         .root = roots[(j + ci) % 3],
                         .dtype = t,
                         .op = COLL_SUM,
                         .elem_size = coll_dtype_size(t),
                         .chunk_bytes = (n + ci + j) % 3 == 0 ? 0 : 24};
        assert_int_equal(harness_check(algo, a), 0);
        check_costs(algo, a);
    }
}

static void test_all_algorithms(void **state)
{
    (void)state;
    harness_sweep(COLL_BROADCAST, MAX_RANKS, big_count, one_case);
}

/* Large messages are cut into segments of about chunk_bytes, never more than COLL_MAX_SEGMENTS. */
static void test_segments(void **state)
{
    (void)state;
    static const char *const pipelined[] = {"binomial_tree", "chain"};
    static const uint64_t counts[] = {1u << 20, (uint64_t)5 << 30};
    for (int p = 0; p < 2; p++) {
        const coll_algo_t *algo = coll_algo_find(COLL_BROADCAST, pipelined[p]);
        for (int i = 0; i < 2; i++) {
            for (int r = 0; r < 6; r++) {
                coll_args_t a = {.coll = COLL_BROADCAST,
                                 .rank = r,
                                 .nranks = 6,
                                 .root = 2,
                                 .count = counts[i],
                                 .dtype = COLL_F16,
                                 .elem_size = 2};
                coll_schedule_t s;
                coll_schedule_init(&s);
                const char *why;
                assert_int_equal(coll_build(algo, &a, &s, &why), 0);
                uint64_t k = nsegments(&a), seg = (counts[i] + k - 1) / k;
                for (uint32_t o = 0; o < s.nops; o++)
                    if (s.ops[o].kind != COLL_OP_COPY)
                        assert_true(s.ops[o].count <= seg);
                assert_true(s.nsteps <= k + 6);
                coll_schedule_free(&s);
            }
        }
    }
}

static void test_larger_groups(void **state)
{
    (void)state;
    static const int sizes[] = {48, 64, 65, 100, 127};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_BROADCAST, &nalgo);
    for (size_t k = 0; k < nalgo; k++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            coll_args_t a = {.coll = COLL_BROADCAST,
                             .nranks = sizes[si],
                             .count = 2 * (uint64_t)sizes[si] + 3,
                             .root = sizes[si] / 3,
                             .dtype = COLL_I64,
                             .elem_size = 8,
                             .chunk_bytes = 64};
            assert_int_equal(harness_check(algos[k], a), 0);
        }
    }
}

static void test_registry(void **state)
{
    (void)state;
    static const char *const names[] = {"binomial_tree", "scatter_allgather", "chain"};
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(COLL_BROADCAST, &n);
    assert_int_equal(n, 3);
    for (size_t i = 0; i < n; i++)
        assert_ptr_equal(coll_algo_find(COLL_BROADCAST, names[i]), list[i]);
    assert_string_equal(coll_algo_env_name(COLL_BROADCAST), "GCL_BROADCAST_ALGO");
    /* A root outside the group is refused with a reason. */
    coll_args_t a = {.coll = COLL_BROADCAST, .nranks = 4, .root = 4, .count = 1, .elem_size = 4};
    coll_schedule_t s;
    coll_schedule_init(&s);
    const char *why = NULL;
    assert_int_equal(coll_build(list[0], &a, &s, &why), -22);
    assert_non_null(strstr(why, "root"));
    coll_schedule_free(&s);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_segments),
        cmocka_unit_test(test_larger_groups),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
