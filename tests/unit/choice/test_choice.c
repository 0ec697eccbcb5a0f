/*
 * The choice layer (choice/), with no processes and no threads: shapes of every algorithm, the
 * replay against the ring's closed form, the replay's independence from where the clocks start,
 * and the automatic choice against a brute-force minimum over every algorithm, for groups of 1
 * to 20 on the preset pods.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "choice/choose.h"
#include "choice/replay.h"
#include "sim/cost/cost.h"

static sim_topology_t *pod(const char *name)
{
    sim_topology_t *t = NULL;
    char err[128];
    assert_int_equal(sim_topology_open(name, &t, err, sizeof err), 0);
    return t;
}

static coll_args_t args(coll_collective_t c, int n, uint64_t count)
{
    return (coll_args_t){
        .coll = c, .nranks = n, .count = count, .dtype = COLL_F32, .op = COLL_SUM, .elem_size = 4};
}

/* The ring's replay against the closed form of sim/cost/cost.h. Every rank's step ends when its
 * neighbour's chunk arrives, so the replay equals the closed form, steps x the slowest edge,
 * when every edge is as fast (the whole ladder of POD16, a ring of 2), and is at most that
 * otherwise (a ring over part of the ladder closes over several hops). */
static void test_ring_closed_form(void **state)
{
    (void)state;
    sim_topology_t *t = pod("POD16");
    int ipus[16];
    for (int n = 2; n <= 16; n++) {
        for (int q = 0; q < n; q++)
            ipus[q] = q;
        uint64_t count = 1024u * (uint64_t)n; /* chunks of equal size */
        coll_args_t a = args(COLL_ALLREDUCE, n, count);
        choice_shape_t sh;
        assert_int_equal(
            choice_shape_build(&sh, t, coll_algo_find(COLL_ALLREDUCE, "clockwise_ring"), &a, ipus),
            0);
        sim_time_t span;
        assert_int_equal(choice_makespan(&sh, t, &span), 0);
        sim_time_t closed = sim_ring_allreduce_time(t, ipus, n, count * 4);
        if (n == 2 || n == 16)
            assert_int_equal(span, closed);
        else
            assert_true(span <= closed && span > 0);
        choice_shape_free(&sh);
    }
    sim_topology_free(t);
}

static void test_replay_offsets(void **state)
{
    (void)state;
    sim_topology_t *t = pod("POD64");
    int ipus[8] = {0, 1, 2, 3, 4, 5, 6, 7};
    coll_args_t a = args(COLL_ALLREDUCE, 8, 100000);
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(COLL_ALLREDUCE, &n);
    for (size_t i = 0; i < n; i++) {
        choice_shape_t sh;
        if (choice_shape_build(&sh, t, list[i], &a, ipus) != 0)
            continue;
        sim_time_t e1[8] = {0, 5000, 0, 123456, 7, 0, 0, 99}, e2[8];
        for (int q = 0; q < 8; q++)
            e2[q] = e1[q] + 1000000000u; /* the same skew, later */
        choice_outcome_t o1, o2;
        assert_int_equal(choice_replay(&sh, t, e1, &o1), 0);
        assert_int_equal(choice_replay(&sh, t, e2, &o2), 0);
        for (int q = 0; q < 8; q++) {
            assert_int_equal(o1.idle[q], o2.idle[q]);
            assert_int_equal(o1.exch[q], o2.exch[q]);
            assert_int_equal(o1.end[q] + 1000000000u, o2.end[q]);
            /* A rank's clock only moves by what the replay says it spent. */
            assert_int_equal(o1.end[q], e1[q] + o1.idle[q] + o1.exch[q]);
        }
        choice_outcome_free(&o1);
        choice_outcome_free(&o2);
        choice_shape_free(&sh);
    }
    sim_topology_free(t);
}

/* The brute-force answer: the least makespan over every algorithm, the first on a tie. */
static const coll_algo_t *brute(const sim_topology_t *t, const coll_args_t *a, const int *ipus)
{
    size_t n;
    const coll_algo_t *const *list = coll_algo_list(a->coll, &n), *best = NULL;
    sim_time_t best_t = 0;
    for (size_t i = 0; i < n; i++) {
        const char *no;
        if (list[i]->canonical || (list[i]->supports && list[i]->supports(a, &no)))
            continue;
        choice_shape_t sh;
        sim_time_t span;
        if (choice_shape_build(&sh, t, list[i], a, ipus) != 0)
            continue;
        assert_int_equal(choice_makespan(&sh, t, &span), 0);
        choice_shape_free(&sh);
        if (!best || span < best_t)
            best = list[i], best_t = span;
    }
    return best;
}

static void test_choose_is_the_minimum(void **state)
{
    (void)state;
    static const char *const pods[] = {"M2000", "POD16", "POD64", "POD128"};
    static const uint64_t counts[] = {1, 1000, 1u << 20};
    static const coll_collective_t colls[] = {COLL_ALLREDUCE, COLL_REDUCE_SCATTER, COLL_ALLGATHER,
                                              COLL_BROADCAST, COLL_BARRIER};
    int ipus[128];
    for (int p = 0; p < 4; p++) {
        sim_topology_t *t = pod(pods[p]);
        int max_n = sim_topology_num_ipus(t) < 20 ? sim_topology_num_ipus(t) : 20;
        for (int n = 1; n <= max_n; n++) {
            /* A strided group on the larger pods: it crosses ILDs on POD128. */
            int stride = sim_topology_num_ipus(t) / max_n;
            for (int q = 0; q < n; q++)
                ipus[q] = q * stride;
            for (int c = 0; c < 5; c++)
                for (int k = 0; k < 3; k++) {
                    if (n > 8 && k == 2 && p != 1)
                        continue; /* large counts on big groups: POD16 only, for time */
                    coll_args_t a = args(colls[c], n, counts[k]);
                    choice_t ch, again;
                    char why[200];
                    assert_int_equal(choice_choose(t, &a, ipus, &ch, NULL, why, sizeof why), 0);
                    assert_ptr_equal(ch.algo, brute(t, &a, ipus));
                    assert_false(ch.algo->canonical);
                    assert_non_null(strstr(why, ch.algo->name));
                    /* Pure: the same answer again, from scratch. */
                    assert_int_equal(choice_choose(t, &a, ipus, &again, NULL, NULL, 0), 0);
                    assert_ptr_equal(again.algo, ch.algo);
                    assert_int_equal(again.makespan, ch.makespan);
                }
        }
        sim_topology_free(t);
    }
}

static void test_winner_shape(void **state)
{
    (void)state;
    sim_topology_t *t = pod("POD16");
    int ipus[16];
    for (int q = 0; q < 16; q++)
        ipus[q] = q;
    coll_args_t a = args(COLL_ALLREDUCE, 16, 1u << 18);
    choice_t ch;
    choice_shape_t sh;
    assert_int_equal(choice_choose(t, &a, ipus, &ch, &sh, NULL, 0), 0);
    assert_true(choice_shape_is(&sh, ch.algo, &a, ipus));
    sim_time_t span;
    assert_int_equal(choice_makespan(&sh, t, &span), 0);
    assert_int_equal(span, ch.makespan);
    choice_shape_free(&sh);
    /* A call no algorithm can run: an IPU outside the pod. */
    ipus[3] = 99;
    assert_int_not_equal(choice_choose(t, &a, ipus, &ch, NULL, NULL, 0), 0);
    sim_topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_ring_closed_form),
        cmocka_unit_test(test_replay_offsets),
        cmocka_unit_test(test_choose_is_the_minimum),
        cmocka_unit_test(test_winner_shape),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
