/*
 * The canonical reduction order (coll/canon.h): the tree's shape, the fold against an independent
 * element-by-element recursion, the fold program, the pieces of a layout, and the canonical
 * schedules of all_reduce and reduce_scatter against coll_canon_fold, bit for bit, for every
 * valid type/operator pair and groups of 1 to 33, in place and out of place.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "coll/algo.h"
#include "coll/canon.h"
#include "coll/half.h"
#include "coll/reduce.h"
#include "sched_harness.h"

enum { MAX_N = 33, MAX_PAIRS = 64 };

static void test_split_and_depth(void **state)
{
    (void)state;
    assert_int_equal(coll_canon_split(0, 2), 1);
    assert_int_equal(coll_canon_split(0, 3), 2);
    assert_int_equal(coll_canon_split(0, 4), 2);
    assert_int_equal(coll_canon_split(0, 5), 4);
    assert_int_equal(coll_canon_split(0, 8), 4);
    assert_int_equal(coll_canon_split(0, 12), 8);
    assert_int_equal(coll_canon_split(8, 12), 10);
    assert_int_equal(coll_canon_split(4, 7), 6);
    assert_int_equal(coll_canon_depth(1), 0);
    assert_int_equal(coll_canon_depth(2), 1);
    assert_int_equal(coll_canon_depth(3), 2);
    assert_int_equal(coll_canon_depth(4), 2);
    assert_int_equal(coll_canon_depth(5), 3);
    assert_int_equal(coll_canon_depth(256), 8);
    /* An aligned power-of-two run is a subtree: [L*k, L*(k+1)) for every block of a layout of
     * n = L * b ranks, L a power of two. */
    for (int L = 1; L <= 16; L *= 2)
        for (int b = 1; b <= 9; b++) {
            int node_of[256];
            coll_canon_piece_t pieces[256];
            for (int q = 0; q < L * b; q++)
                node_of[q] = q / L;
            assert_int_equal(coll_canon_pieces(L * b, node_of, pieces), b);
            for (int k = 0; k < b; k++) {
                assert_int_equal(pieces[k].first, k * L);
                assert_int_equal(pieces[k].count, L);
            }
        }
}

/* value(lo, hi) of element I, folded one element at a time in f32 (independent of canon.c). */
static float ref_f32(float (*x)[64], int lo, int hi, int i)
{
    if (hi - lo == 1)
        return x[lo][i];
    int p = 1;
    while (2 * p < hi - lo)
        p *= 2;
    return ref_f32(x, lo, lo + p, i) + ref_f32(x, lo + p, hi, i);
}

static void test_fold_against_recursion(void **state)
{
    (void)state;
    static float x[MAX_N][64], out[64], scratch[8 * 64];
    srand(7);
    for (int n = 1; n <= MAX_N; n++) {
        const void *src[MAX_N];
        for (int q = 0; q < n; q++) {
            for (int i = 0; i < 64; i++)
                x[q][i] = (float)rand() / (float)RAND_MAX - 0.5f + (float)q * 1e-3f;
            src[q] = x[q];
        }
        coll_canon_fold(COLL_F32, COLL_SUM, out, src, n, 64, scratch);
        for (int i = 0; i < 64; i++) {
            float want = ref_f32(x, 0, n, i);
            assert_memory_equal(&out[i], &want, sizeof want);
        }
        /* Another order gives other bits somewhere: the test can tell orders apart. */
        if (n >= 3) {
            int differs = 0;
            for (int i = 0; i < 64; i++) {
                float seq = x[0][i];
                for (int q = 1; q < n; q++)
                    seq += x[q][i];
                differs |= memcmp(&seq, &out[i], sizeof seq) != 0;
            }
            if (n >= 5)
                assert_true(differs);
        }
    }
}

static void test_program(void **state)
{
    (void)state;
    coll_canon_insn_t insn[MAX_N];
    for (int n = 1; n <= MAX_N; n++) {
        int slots = -1, k = coll_canon_program(n, insn, &slots);
        assert_int_equal(k, n - 1);
        assert_true(slots >= 0 && slots <= coll_canon_depth(n));
        if (k > 0)
            assert_int_equal(insn[k - 1].dst, COLL_CANON_RESULT);
        /* Evaluate it on doubles carrying which leaves they hold (as bit sets): every leaf exactly
         * once, and each operation combines a lower range with the next one above it. */
        uint64_t slot[16] = {0};
        uint64_t result = n == 1 ? 1 : 0;
        for (int i = 0; i < k; i++) {
            uint64_t l = insn[i].left >= 0 ? 1ull << insn[i].left : slot[-1 - insn[i].left];
            uint64_t r = insn[i].right >= 0 ? 1ull << insn[i].right : slot[-1 - insn[i].right];
            assert_true(l && r && !(l & r));
            assert_true(__builtin_ctzll(r) == 64 - __builtin_clzll(l)); /* adjacent ranges */
            if (insn[i].dst == COLL_CANON_RESULT)
                result = l | r;
            else
                slot[-1 - insn[i].dst] = l | r;
        }
        assert_int_equal(result, n == 64 ? ~0ull : (1ull << n) - 1);
    }
}

static void test_pieces(void **state)
{
    (void)state;
    coll_canon_piece_t p[16];
    /* 12 ranks, 3 per block: the tree splits [0,12) into [0,8) and [8,12), so no block of
     * three is a subtree; its pieces are the largest subtrees inside it: (0,1) and 2; 3 and
     * (4,5); (6,7) and 8; 9 and (10,11). */
    int three[12] = {0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3};
    int k = coll_canon_pieces(12, three, p);
    int want[][2] = {{0, 2}, {2, 1}, {3, 1}, {4, 2}, {6, 2}, {8, 1}, {9, 1}, {10, 2}};
    assert_int_equal(k, 8);
    for (int i = 0; i < k; i++) {
        assert_int_equal(p[i].first, want[i][0]);
        assert_int_equal(p[i].count, want[i][1]);
    }
    /* Interleaved blocks (an orthogonal group): every rank its own piece. */
    int inter[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    assert_int_equal(coll_canon_pieces(8, inter, p), 8);
    int one[5] = {4, 4, 4, 4, 4};
    assert_int_equal(coll_canon_pieces(5, one, p), 1);
    assert_int_equal(p[0].count, 5);
}

static coll_dtype_t pair_type[MAX_PAIRS];
static coll_redop_t pair_op[MAX_PAIRS];
static int npairs;

/* Runs the canonical schedule of C and compares every rank's OUT with coll_canon_fold of the
 * same inputs. */
static void check_schedule(coll_collective_t c, int n, uint64_t count, coll_dtype_t t,
                           coll_redop_t op, int in_place)
{
    const coll_algo_t *algo = coll_algo_find(c, "canonical");
    coll_args_t a = {.coll = c,
                     .nranks = n,
                     .count = count,
                     .dtype = t,
                     .op = op,
                     .elem_size = coll_dtype_size(t)};
    harness_t h;
    assert_int_equal(harness_build(&h, algo, a, in_place, harness_fill_random), 0);
    size_t es = a.elem_size;
    uint64_t in_count = c == COLL_REDUCE_SCATTER ? (uint64_t)n * count : count;
    char **in = malloc((size_t)n * sizeof *in);
    for (int r = 0; r < n; r++) { /* what the ranks start from, before any in-place write */
        in[r] = malloc(in_count * es + 1);
        memcpy(in[r], h.bufs[r][COLL_BUF_IN], in_count * es);
    }
    harness_run(&h, a);
    char *want = malloc(count * es + 1), *scratch = malloc(8 * (count + 1) * es);
    const void *src[MAX_N];
    for (int r = 0; r < n; r++) {
        uint64_t block = c == COLL_REDUCE_SCATTER ? (uint64_t)r * count : 0;
        for (int q = 0; q < n; q++)
            src[q] = in[q] + block * es;
        if (c == COLL_REDUCE_SCATTER || r == 0) {
            coll_canon_fold(t, op, want, src, n, count, scratch);
            if (op == COLL_MEAN)
                coll_divide(t, want, count, (unsigned)n);
        }
        if (memcmp(harness_out(&h, r), want, count * es) != 0)
            fail_msg("canonical %s n=%d count=%llu %s/%s %s: rank %d differs from the tree fold",
                     coll_collective_name(c), n, (unsigned long long)count, coll_dtype_name(t),
                     coll_redop_name(op), in_place ? "in place" : "out of place", r);
    }
    for (int r = 0; r < n; r++)
        free(in[r]);
    free(in);
    free(want);
    free(scratch);
    harness_free(&h);
}

static void check_hosts(int n, const int *host_of, uint64_t count, coll_dtype_t t,
                        coll_redop_t op, int in_place)
{
    const coll_algo_t *algo = coll_algo_find(COLL_ALLREDUCE, "canonical");
    coll_args_t a = {.coll = COLL_ALLREDUCE,
                     .nranks = n,
                     .count = count,
                     .dtype = t,
                     .op = op,
                     .elem_size = coll_dtype_size(t),
                     .host_of = host_of,
                     .chunk_bytes = 8192};
    harness_t h;
    assert_int_equal(harness_build(&h, algo, a, in_place, harness_fill_random), 0);
    size_t es = a.elem_size;
    char **in = malloc((size_t)n * sizeof *in);
    const void *src[MAX_N];
    for (int r = 0; r < n; r++) {
        in[r] = malloc(count * es);
        memcpy(in[r], h.bufs[r][COLL_BUF_IN], count * es);
        src[r] = in[r];
    }
    harness_run(&h, a);
    char *want = malloc(count * es), *scratch = malloc(8 * count * es);
    coll_canon_fold(t, op, want, src, n, count, scratch);
    if (op == COLL_MEAN)
        coll_divide(t, want, count, (unsigned)n);
    for (int r = 0; r < n; r++)
        if (memcmp(harness_out(&h, r), want, count * es) != 0)
            fail_msg("canonical across hosts n=%d %s/%s %s: rank %d differs from the tree fold",
                     n, coll_dtype_name(t), coll_redop_name(op),
                     in_place ? "in place" : "out of place", r);
    for (int r = 0; r < n; r++)
        free(in[r]);
    free(in);
    free(want);
    free(scratch);
    harness_free(&h);
}

static void test_schedules_match_fold(void **state)
{
    (void)state;
    static const uint64_t counts[] = {1, 3, 17, 1000, 20000};
    for (int n = 1; n <= MAX_N; n++)
        for (int ci = 0; ci < 5; ci++)
            for (int p = 0; p < npairs; p++) {
                /* Every pair at the small counts; the large ones on a sample, to keep the suite
                 * quick under sanitizers. */
                if (pair_op[p] == COLL_LOCAL || (n > 17 && n % 8 > 1) || (ci == 3 && (p + n) % 4) ||
                    (ci == 4 && (n % 8 != 1 || p % 5)))
                    continue;
                check_schedule(COLL_ALLREDUCE, n, counts[ci], pair_type[p], pair_op[p], ci & 1);
                check_schedule(COLL_REDUCE_SCATTER, n, counts[ci] > 2000 ? 1999 : counts[ci],
                               pair_type[p], pair_op[p], !(ci & 1));
            }
}

/* Elements RANK's schedule sends to ranks of other hosts. */
static uint64_t sent_across(const coll_schedule_t *s, const int *host_of, int rank)
{
    uint64_t sent = 0;
    for (uint32_t i = 0; i < s->nops; i++)
        if (s->ops[i].kind == COLL_OP_SEND && host_of[s->ops[i].peer] != host_of[rank])
            sent += s->ops[i].count;
    return sent;
}

/* Across hosts: H hosts of L ranks each (the hosts in both orders of their numbers), chunked
 * so that the pipeline has many steps; the bits are the tree's, and a host sends no more than
 * 2 (H-1)/H of the vector across (plus a chunk's rounding). */
static void test_hosts_form(void **state)
{
    (void)state;
    static const int Ls[] = {1, 2, 3, 4, 8};
    for (int H = 2; H <= 5; H++)
        for (int li = 0; li < 5; li++) {
            int L = Ls[li], n = H * L, host_of[64];
            if (n > MAX_N)
                continue;
            for (int q = 0; q < n; q++)
                host_of[q] = (H - 1 - q / L) * 10; /* any numbering of the hosts */
            uint64_t count = 70001u + (uint64_t)n; /* above the small form (256 KiB sent) */
            for (int p = (H + li) % 4; p < npairs; p += 4) { /* a sample of the pairs */
                if (pair_op[p] == COLL_LOCAL)
                    continue;
                check_hosts(n, host_of, count, pair_type[p], pair_op[p], p & 1);
            }
            /* The traffic across, for f32. */
            coll_args_t a = {.coll = COLL_ALLREDUCE, .nranks = n, .count = count,
                             .dtype = COLL_F32, .op = COLL_SUM, .elem_size = 4,
                             .host_of = host_of, .chunk_bytes = 8192};
            int hosts = 0, per = 0;
            int aligned = coll_canon_host_blocks(&a, &hosts, &per);
            assert_int_equal(aligned, (L & (L - 1)) == 0); /* a block of 3 is no subtree */
            if (!aligned)
                continue;
            assert_int_equal(hosts, H);
            assert_int_equal(per, L);
            for (int r = 0; r < n; r++) {
                coll_schedule_t s;
                coll_schedule_init(&s);
                a.rank = r;
                assert_int_equal(coll_build(coll_algo_find(COLL_ALLREDUCE, "canonical"), &a, &s,
                                            NULL),
                                 0);
                double bound = 2.0 * (H - 1) / H * (double)count / L + 4.0 * 64 * H;
                if ((double)sent_across(&s, host_of, r) > bound)
                    fail_msg("H=%d L=%d rank %d sends %llu across, bound %.0f", H, L, r, (unsigned long long)sent_across(&s, host_of, r), bound);
                coll_schedule_free(&s);
            }
        }
}

static int setup(void **state)
{
    (void)state;
    npairs = harness_pairs(pair_type, pair_op, MAX_PAIRS);
    return 0;
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_split_and_depth),
        cmocka_unit_test(test_fold_against_recursion),
        cmocka_unit_test(test_program),
        cmocka_unit_test(test_pieces),
        cmocka_unit_test(test_schedules_match_fold),
        cmocka_unit_test(test_hosts_form),
    };
    return cmocka_run_group_tests(tests, setup, NULL);
}
