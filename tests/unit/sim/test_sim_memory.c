/*
 * Simulated SRAM accounting: capacity, out-of-memory without side effects, peaks, and the
 * largest-first report that goes into GCL_ERR_OUT_OF_MEMORY messages.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "sim/device/device.h"
#include "sim/device/memory.h"

static void test_fill_to_capacity(void **state)
{
    uint64_t cap = sim_device_memory(sim_device_gc200());
    uint64_t a, b, c;
    sim_mem_t *m;

    (void)state;
    assert_int_equal(sim_mem_create(cap, &m), 0);
    assert_int_equal(sim_mem_capacity(m), 940572672ULL);
    assert_int_equal(sim_mem_alloc(m, 900000000ULL, "weights", &a), 0);
    assert_int_equal(sim_mem_alloc(m, cap - 900000000ULL, "activations", &b), 0);
    assert_true(a != 0 && b != 0 && a != b);
    assert_int_equal(sim_mem_used(m), cap);
    /* One more byte does not fit, and the failed call changes nothing. */
    assert_int_equal(sim_mem_alloc(m, 1, "one byte too many", &c), -ENOSPC);
    assert_int_equal(sim_mem_used(m), cap);
    assert_int_equal(sim_mem_count(m), 2);
    /* Zero bytes always fit. */
    assert_int_equal(sim_mem_alloc(m, 0, "empty", &c), 0);
    assert_int_equal(sim_mem_free(m, c), 0);
    assert_int_equal(sim_mem_free(m, b), 0);
    assert_int_equal(sim_mem_used(m), 900000000ULL);
    assert_int_equal(sim_mem_peak(m), cap);
    assert_int_equal(sim_mem_free(m, b), -ENOENT);
    assert_int_equal(sim_mem_free(m, 12345), -ENOENT);
    assert_int_equal(sim_mem_free(m, a), 0);
    assert_int_equal(sim_mem_used(m), 0);
    assert_int_equal(sim_mem_count(m), 0);
    sim_mem_destroy(m);
}

static void test_no_overflow_near_uint64_max(void **state)
{
    uint64_t id;
    sim_mem_t *m;

    (void)state;
    assert_int_equal(sim_mem_create(UINT64_MAX, &m), 0);
    assert_int_equal(sim_mem_alloc(m, UINT64_MAX - 1, "huge", &id), 0);
    assert_int_equal(sim_mem_alloc(m, 2, "wraps", &id), -ENOSPC);
    assert_int_equal(sim_mem_alloc(m, 1, "fits", &id), 0);
    assert_int_equal(sim_mem_used(m), UINT64_MAX);
    sim_mem_destroy(m);
}

static void test_bad_arguments(void **state)
{
    uint64_t id;
    sim_mem_t *m;

    (void)state;
    assert_int_equal(sim_mem_create(10, NULL), -EINVAL);
    assert_int_equal(sim_mem_create(10, &m), 0);
    assert_int_equal(sim_mem_alloc(m, 1, "x", NULL), -EINVAL);
    assert_int_equal(sim_mem_alloc(NULL, 1, "x", &id), -EINVAL);
    assert_int_equal(sim_mem_free(NULL, 1), -EINVAL);
    sim_mem_destroy(m);
    sim_mem_destroy(NULL);
}

static void test_report_largest_first(void **state)
{
    const char *expect = "  300 bytes  b\n"
                         "  200 bytes  a\n"
                         "  200 bytes  c\n"
                         "  10 bytes  (unnamed)\n";
    char buf[256];
    uint64_t id;
    sim_mem_t *m;

    (void)state;
    assert_int_equal(sim_mem_create(1000, &m), 0);
    assert_int_equal(sim_mem_report(m, buf, sizeof(buf), 0), 0);
    assert_string_equal(buf, "");
    assert_int_equal(sim_mem_alloc(m, 200, "a", &id), 0);
    assert_int_equal(sim_mem_alloc(m, 300, "b", &id), 0);
    assert_int_equal(sim_mem_alloc(m, 200, "c", &id), 0); /* ties: older first */
    assert_int_equal(sim_mem_alloc(m, 10, NULL, &id), 0);
    assert_int_equal(sim_mem_report(m, buf, sizeof(buf), 0), strlen(expect));
    assert_string_equal(buf, expect);
    /* At most two lines, then a summary of the rest. */
    assert_int_equal(sim_mem_report(m, buf, sizeof(buf), 2),
                     strlen("  300 bytes  b\n  200 bytes  a\n"
                            "  ... and 2 more allocations (210 bytes)\n"));
    assert_string_equal(buf, "  300 bytes  b\n  200 bytes  a\n"
                             "  ... and 2 more allocations (210 bytes)\n");
    /* A short buffer is truncated but the full length is returned, as snprintf does. */
    assert_int_equal(sim_mem_report(m, buf, 8, 0), strlen(expect));
    assert_string_equal(buf, "  300 b");
    assert_int_equal(sim_mem_report(m, NULL, 0, 0), strlen(expect));
    sim_mem_destroy(m);
}

static void test_long_labels_truncated(void **state)
{
    char label[100], buf[256];
    uint64_t id;
    sim_mem_t *m;

    (void)state;
    memset(label, 'x', sizeof(label) - 1);
    label[sizeof(label) - 1] = '\0';
    assert_int_equal(sim_mem_create(1000, &m), 0);
    assert_int_equal(sim_mem_alloc(m, 1, label, &id), 0);
    sim_mem_report(m, buf, sizeof(buf), 0);
    /* "  1 bytes  " + 47 characters + newline. */
    assert_int_equal(strlen(buf), 11 + SIM_MEM_LABEL_MAX - 1 + 1);
    sim_mem_destroy(m);
}

static void test_many_allocations(void **state)
{
    uint64_t ids[2000];
    sim_mem_t *m;

    (void)state;
    assert_int_equal(sim_mem_create(2000000, &m), 0);
    for (int i = 0; i < 2000; i++)
        assert_int_equal(sim_mem_alloc(m, (uint64_t)i, "t", &ids[i]), 0);
    assert_int_equal(sim_mem_used(m), 1999 * 2000 / 2);
    /* Free in an order unlike the allocation order, to exercise the swap-remove. */
    for (int i = 0; i < 2000; i += 2)
        assert_int_equal(sim_mem_free(m, ids[i]), 0);
    for (int i = 1999; i > 0; i -= 2)
        assert_int_equal(sim_mem_free(m, ids[i]), 0);
    assert_int_equal(sim_mem_used(m), 0);
    assert_int_equal(sim_mem_peak(m), 1999 * 2000 / 2);
    sim_mem_destroy(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fill_to_capacity),
        cmocka_unit_test(test_no_overflow_near_uint64_max),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_report_largest_first),
        cmocka_unit_test(test_long_labels_truncated),
        cmocka_unit_test(test_many_allocations),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
