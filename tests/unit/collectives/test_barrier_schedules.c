/*
 * Every barrier algorithm, for groups of 1 to MAX_RANKS ranks and some larger ones: schedules are
 * valid and made of zero-byte tokens only, and they are barriers: no rank finishes before every
 * rank has started. That is checked by running a twin of each schedule in which every token
 * carries what its sender knows (a bool per rank, "has started"), OR-ed into the receiver's
 * knowledge: at the end every rank must know of every rank.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "sched_harness.h"

#define MAX_RANKS 33

static int log2_ceil(int n)
{
    int k = 0;
    while ((1 << k) < n)
        k++;
    return k;
}

/* The twin of S that carries knowledge: tokens become n-element messages of OUT, receives OR
 * them in. Steps and message order are S's. */
static void knowledge_twin(const coll_schedule_t *s, coll_schedule_t *t, int n)
{
    coll_schedule_init(t);
    t->rank = s->rank;
    t->nranks = n;
    t->out_count = (uint64_t)n;
    for (uint32_t st = 0; st < s->nsteps; st++) {
        coll_step(t);
        for (uint32_t i = 0; i < s->steps[st].count; i++) {
            const coll_op_t *op = &s->ops[s->steps[st].first + i];
            assert_int_equal(op->count, 0); /* a barrier only moves tokens */
            if (op->kind == COLL_OP_SEND)
                coll_send(t, op->peer, COLL_BUF_OUT, 0, (uint64_t)n);
            else if (op->kind == COLL_OP_RECV)
                coll_recv_reduce(t, op->peer, COLL_BUF_OUT, 0, COLL_BUF_OUT, 0, (uint64_t)n, 0);
            else
                fail_msg("a barrier schedule holds a local op");
        }
    }
    assert_int_equal(coll_schedule_status(t), 0);
}

/* Runs the knowledge twins of SCHEDS; returns how many ranks end knowing of every rank. */
static int ranks_that_know_all(coll_schedule_t *scheds, int n)
{
    coll_schedule_t *twins = calloc((size_t)n, sizeof *twins),
                    **ptrs = calloc((size_t)n, sizeof(coll_schedule_t *));
    uint8_t *know = calloc((size_t)n * (size_t)n, 1);
    void *(*bufs)[COLL_BUF_COUNT] = calloc((size_t)n, sizeof *bufs);
    assert_true(twins && ptrs && know && bufs);
    for (int r = 0; r < n; r++) {
        knowledge_twin(&scheds[r], &twins[r], n);
        ptrs[r] = &twins[r];
        know[r * n + r] = 1;
        bufs[r][COLL_BUF_IN] = bufs[r][COLL_BUF_OUT] = bufs[r][COLL_BUF_TMP] = know + r * n;
    }
    coll_exec_info_t x = {COLL_BOOL, COLL_LOGICAL_OR, 1, n};
    char why[200];
    if (coll_run_local(ptrs, (void *const(*)[COLL_BUF_COUNT])bufs, n, &x, why, sizeof why))
        fail_msg("%s", why);
    int all = 0;
    for (int r = 0; r < n; r++) {
        int k = 0;
        for (int q = 0; q < n; q++)
            k += know[r * n + q];
        all += k == n;
        coll_schedule_free(&twins[r]);
    }
    free(twins);
    free(ptrs);
    free(know);
    free(bufs);
    return all;
}

static void check_barrier(const coll_algo_t *algo, int n)
{
    harness_t h;
    coll_args_t a = {.coll = COLL_BARRIER, .nranks = n, .dtype = COLL_BOOL, .elem_size = 1};
    assert_int_equal(harness_build(&h, algo, a, 0, harness_fill), 0);
    harness_run(&h, a); /* tokens match in per-pair order, nothing deadlocks */
    uint32_t steps = harness_max_steps(&h);
    if (strcmp(algo->name, "dissemination") == 0)
        assert_int_equal(steps, (uint32_t)log2_ceil(n));
    else
        assert_true(steps <= 4);
    for (int r = 0; r < n; r++)
        assert_int_equal(h.scheds[r].tmp_count, 0);
    if (ranks_that_know_all(h.scheds, n) != n)
        fail_msg("%s n=%d: a rank can leave before every rank has arrived", algo->name, n);
    harness_free(&h);
}

static void test_all_algorithms(void **state)
{
    (void)state;
    static const int more[] = {48, 64, 65, 100, 129};
    size_t nalgo;
    const coll_algo_t *const *algos = coll_algo_list(COLL_BARRIER, &nalgo);
    assert_int_equal(nalgo, 2);
    for (size_t k = 0; k < nalgo; k++) {
        for (int n = 1; n <= MAX_RANKS; n++)
            check_barrier(algos[k], n);
        for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
            check_barrier(algos[k], more[i]);
    }
}

/* The knowledge check can fail: a dissemination barrier one round short is not a barrier. */
static void test_check_detects_short_barrier(void **state)
{
    (void)state;
    const coll_algo_t *algo = coll_algo_find(COLL_BARRIER, "dissemination");
    for (int n = 3; n <= 17; n++) {
        harness_t h;
        coll_args_t a = {.coll = COLL_BARRIER, .nranks = n, .dtype = COLL_BOOL, .elem_size = 1};
        assert_int_equal(harness_build(&h, algo, a, 0, harness_fill), 0);
        for (int r = 0; r < n; r++)
            h.scheds[r].nsteps--; /* every rank drops its last round: tokens still match */
        assert_true(ranks_that_know_all(h.scheds, n) < n);
        harness_free(&h);
    }
}

static void test_registry(void **state)
{
    (void)state;
    assert_non_null(coll_algo_find(COLL_BARRIER, "dissemination"));
    assert_non_null(coll_algo_find(COLL_BARRIER, "ring"));
    assert_string_equal(coll_algo_env_name(COLL_BARRIER), "GCL_BARRIER_ALGO");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_all_algorithms),
        cmocka_unit_test(test_check_detects_short_barrier),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
