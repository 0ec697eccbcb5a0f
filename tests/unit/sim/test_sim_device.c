/*
 * The GC200 preset, the roofline compute cost and the integer time arithmetic, held to exact
 * picoseconds.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "sim/device/device.h"
#include "sim/base/time.h"

static void test_gc200_numbers(void **state)
{
    const sim_device_t *d = sim_device_gc200();

    (void)state;
    assert_string_equal(d->name, "GC200");
    assert_int_equal(d->tiles, 1472);
    assert_int_equal(d->sram_per_tile, 624 * 1024);
    /* 1472 * 624 KiB: the "900 MB" of the datasheet. */
    assert_int_equal(sim_device_memory(d), 940572672ULL);
    assert_int_equal(d->clock_hz, 1330000000ULL);
    assert_int_equal(d->peak_flops[SIM_PREC_F16], 250000000000000ULL);
    assert_int_equal(d->peak_flops[SIM_PREC_F32], 62500000000000ULL);
    assert_int_equal(d->sram_bandwidth, 47500000000000ULL);
    assert_int_equal(d->exchange_bandwidth, 8000000000000ULL);
    assert_int_equal(d->host_link_bandwidth, 64000000000ULL);
    assert_int_equal(d->ipu_links, 10);
    assert_int_equal(d->ipu_links_bandwidth, 320000000000ULL);
}

static void test_preset_lookup(void **state)
{
    (void)state;
    assert_ptr_equal(sim_device_preset("GC200"), sim_device_gc200());
    assert_ptr_equal(sim_device_preset("gc200"), sim_device_gc200());
    assert_null(sim_device_preset("GC2"));
    assert_null(sim_device_preset(""));
    assert_null(sim_device_preset(NULL));
}

static void test_compute_is_a_roofline(void **state)
{
    const sim_device_t *d = sim_device_gc200();

    (void)state;
    /* 250 TFLOPS is 250 flops per picosecond, 62.5 TFLOPS is 62.5. */
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 250000, 0), 1000);
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F32, 62500, 0), 1000);
    /* 47.5 TB/s is 47.5 bytes per picosecond: memory-bound work. */
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 0, 47500), 1000);
    /* The larger of the two terms wins, in either direction. */
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 250000, 95000), 2000);
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F32, 125000, 47500), 2000);
    /* Rounded up: one flop is not free. */
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 1, 0), 1);
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 251, 0), 2);
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F16, 0, 0), 0);
    /* A petaflop of f32 takes 16 s. */
    assert_int_equal(sim_device_compute_time(d, SIM_PREC_F32, 1000000000000000ULL, 0),
                     16 * SIM_PS_PER_S);
    /* An unknown precision is charged at the slow (f32) rate. */
    assert_int_equal(sim_device_compute_time(d, (sim_precision_t)7, 62500, 0), 1000);
    assert_int_equal(sim_device_compute_time(d, (sim_precision_t)-1, 62500, 0), 1000);
}

static void test_exchange_and_host(void **state)
{
    const sim_device_t *d = sim_device_gc200();

    (void)state;
    assert_int_equal(sim_device_exchange_time(d, 8000), 1000);
    assert_int_equal(sim_device_host_time(d, 64), 1000);
    assert_int_equal(sim_device_host_time(d, 64000000000ULL), SIM_PS_PER_S);
}

static void test_cycles(void **state)
{
    const sim_device_t *d = sim_device_gc200();

    (void)state;
    assert_int_equal(sim_device_cycles(d, SIM_PS_PER_S), 1330000000ULL);
    assert_int_equal(sim_device_cycles(d, 1000), 1); /* 1.33 cycles, floored */
    assert_int_equal(sim_device_cycles(d, 751), 0);  /* a cycle is 751.88 ps */
    assert_int_equal(sim_device_cycles(d, 752), 1);
    assert_int_equal(sim_cycles_to_time(133, d->clock_hz), 100000);
    assert_int_equal(sim_cycles_to_time(1, d->clock_hz), 752);
    assert_int_equal(sim_cycles_to_time(0, d->clock_hz), 0);
    assert_int_equal(sim_cycles_to_time(5, 0), SIM_TIME_MAX);
    assert_int_equal(sim_time_to_cycles(SIM_TIME_MAX, 1330000000ULL), 24534169618033703ULL);
}

static void test_time_arithmetic(void **state)
{
    char buf[32];

    (void)state;
    assert_int_equal(sim_xfer_time(0, 0), 0);
    assert_int_equal(sim_xfer_time(1, 0), SIM_TIME_MAX);
    assert_int_equal(sim_xfer_time(32, 32000000000ULL), 1000);
    assert_int_equal(sim_xfer_time(1, 32000000000ULL), 32); /* 31.25 rounded up */
    assert_int_equal(sim_xfer_time(UINT64_MAX, 1), SIM_TIME_MAX);
    assert_int_equal(sim_time_add(SIM_TIME_MAX - 1, 5), SIM_TIME_MAX);
    assert_int_equal(sim_time_add(2, 3), 5);
    assert_int_equal(sim_time_max(2, 3), 3);
    sim_time_format_us(1234567, buf, sizeof(buf));
    assert_string_equal(buf, "1.234567");
    sim_time_format_us(0, buf, sizeof(buf));
    assert_string_equal(buf, "0.000000");
    sim_time_format_us(5 * SIM_PS_PER_S + 7, buf, sizeof(buf));
    assert_string_equal(buf, "5000000.000007");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_gc200_numbers),
        cmocka_unit_test(test_preset_lookup),
        cmocka_unit_test(test_compute_is_a_roofline),
        cmocka_unit_test(test_exchange_and_host),
        cmocka_unit_test(test_cycles),
        cmocka_unit_test(test_time_arithmetic),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
