/*
 * Per-IPU statistics, the trace recorder and the two writers, compared with golden text byte
 * for byte (the outputs are meant to be identical from run to run).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "sim/report/report.h"

#define US(x) ((sim_time_t)(x)*SIM_PS_PER_US)

static void test_stats(void **state)
{
    sim_ipu_stats_t s = SIM_IPU_STATS_INIT;

    (void)state;
    sim_stats_advance(&s, SIM_ACT_COMPUTE, 100);
    assert_int_equal(sim_stats_advance_to(&s, SIM_ACT_EXCHANGE, 250), 150);
    assert_int_equal(sim_stats_advance_to(&s, SIM_ACT_IDLE, 200), 0); /* the past: nothing */
    sim_stats_advance(&s, SIM_ACT_SYNC, 7);
    sim_stats_advance(&s, (sim_activity_t)9, 3); /* unknown activities count as idle */
    assert_int_equal(s.clock, 260);
    assert_int_equal(s.time[SIM_ACT_COMPUTE], 100);
    assert_int_equal(s.time[SIM_ACT_EXCHANGE], 150);
    assert_int_equal(s.time[SIM_ACT_SYNC], 7);
    assert_int_equal(s.time[SIM_ACT_IDLE], 3);
    sim_stats_advance(&s, SIM_ACT_COMPUTE, SIM_TIME_MAX);
    assert_int_equal(s.clock, SIM_TIME_MAX);
    assert_string_equal(sim_activity_name(SIM_ACT_EXCHANGE), "exchange");
    assert_string_equal(sim_activity_name((sim_activity_t)-1), "unknown");
}

static void test_trace_recording(void **state)
{
    char name[8];
    sim_trace_t *t;

    (void)state;
    assert_int_equal(sim_trace_create(3, &t), 0);
    assert_int_equal(sim_trace_begin(t, "all_reduce", SIM_ACT_EXCHANGE, 10), 0);
    assert_int_equal(sim_trace_begin(t, "sync", SIM_ACT_SYNC, 12), 0);
    assert_int_equal(sim_trace_end(t, 15, 0), 0);
    assert_int_equal(sim_trace_end(t, 40, 4096), 0);
    assert_int_equal(sim_trace_end(t, 50, 0), -EINVAL); /* nothing open */
    assert_int_equal(sim_trace_add(t, "compute", SIM_ACT_COMPUTE, 40, 5, 0), 0);
    assert_int_equal(sim_trace_count(t), 3);
    /* The cap: further slices are counted, not stored. */
    assert_int_equal(sim_trace_add(t, "compute", SIM_ACT_COMPUTE, 45, 5, 0), -ENOSPC);
    assert_int_equal(sim_trace_begin(t, "x", SIM_ACT_COMPUTE, 50), 0);
    assert_int_equal(sim_trace_end(t, 60, 0), -ENOSPC);
    assert_int_equal(sim_trace_count(t), 3);
    assert_int_equal(sim_trace_dropped(t), 2);
    assert_int_equal(sim_trace_add(t, NULL, SIM_ACT_COMPUTE, 0, 0, 0), -EINVAL);
    assert_int_equal(sim_trace_add(NULL, "x", SIM_ACT_COMPUTE, 0, 0, 0), -EINVAL);
    sim_trace_destroy(t);
    /* Nesting is bounded. */
    assert_int_equal(sim_trace_create(100, &t), 0);
    for (int i = 0; i < SIM_TRACE_MAX_DEPTH; i++)
        assert_int_equal(sim_trace_begin(t, "n", SIM_ACT_COMPUTE, (sim_time_t)i), 0);
    assert_int_equal(sim_trace_begin(t, "n", SIM_ACT_COMPUTE, 9), -E2BIG);
    /* More names than the table holds still record (as "(other)"). */
    for (int i = 0; i < SIM_TRACE_MAX_NAMES + 5; i++) {
        snprintf(name, sizeof(name), "n%d", i);
        assert_int_equal(sim_trace_add(t, name, SIM_ACT_COMPUTE, 0, 1, 0), 0);
    }
    assert_int_equal(sim_trace_count(t), SIM_TRACE_MAX_NAMES + 5);
    sim_trace_destroy(t);
    sim_trace_destroy(NULL);
    assert_int_equal(sim_trace_create(1, NULL), -EINVAL);
}

/* Runs a writer into memory and returns the text (caller frees). */
static char *write_to_string(int (*fn)(FILE *, const sim_report_info_t *, const sim_report_ipu_t *,
                                       size_t),
                             const sim_report_info_t *info, const sim_report_ipu_t *ipus, size_t n)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    assert_non_null(f);
    assert_int_equal(fn(f, info, ipus, n), 0);
    assert_int_equal(fclose(f), 0);
    return text;
}

/* Two IPUs of instance 1: IPU 4 with a trace, IPU 5 without. 1 us is 1330 cycles. */
struct fixture {
    sim_ipu_stats_t s[2];
    sim_trace_t *trace;
    sim_report_ipu_t ipus[2];
    sim_report_info_t info;
};

static void fixture_init(struct fixture *x)
{
    memset(x, 0, sizeof(*x));
    sim_stats_advance(&x->s[0], SIM_ACT_COMPUTE, US(2));
    sim_stats_advance(&x->s[0], SIM_ACT_EXCHANGE, US(1));
    sim_stats_advance(&x->s[1], SIM_ACT_SYNC, 1500000);
    sim_stats_advance(&x->s[1], SIM_ACT_IDLE, 1);
    assert_int_equal(sim_trace_create(2, &x->trace), 0);
    sim_trace_add(x->trace, "compute", SIM_ACT_COMPUTE, 0, US(2), 0);
    sim_trace_add(x->trace, "all_reduce \"big\"\\", SIM_ACT_EXCHANGE, US(2), US(1), 4096);
    sim_trace_add(x->trace, "dropped", SIM_ACT_COMPUTE, US(3), 1, 0);
    x->ipus[0] = (sim_report_ipu_t){4, &x->s[0], 1000, 940572672, x->trace};
    x->ipus[1] = (sim_report_ipu_t){5, &x->s[1], 0, 0, NULL};
    x->info = (sim_report_info_t)SIM_REPORT_INFO_INIT;
    x->info.topology = "POD16";
    x->info.instance = 1;
    x->info.num_instances = 2;
    x->info.program = "train";
}

static void test_report_json(void **state)
{
    static const char *want =
        "{\n"
        "  \"format\": \"gcl-sim-report/1\",\n"
        "  \"topology\": \"POD16\",\n"
        "  \"device\": \"GC200\",\n"
        "  \"clock_hz\": 1330000000,\n"
        "  \"instance\": 1,\n"
        "  \"num_instances\": 2,\n"
        "  \"program\": \"train\",\n"
        "  \"ipus\": [\n"
        "    {\"ipu\": 4, \"compute_cycles\": 2660, \"exchange_cycles\": 1330, \"sync_cycles\": 0, "
        "\"idle_cycles\": 0, \"host_cycles\": 0, \"total_cycles\": 3990, \"time_us\": 3.000000, "
        "\"peak_memory_bytes\": 1000, \"memory_capacity_bytes\": 940572672, "
        "\"trace_slices\": 2, \"trace_dropped\": 1},\n"
        "    {\"ipu\": 5, \"compute_cycles\": 0, \"exchange_cycles\": 0, \"sync_cycles\": 1995, "
        "\"idle_cycles\": 0, \"host_cycles\": 0, \"total_cycles\": 1995, \"time_us\": 1.500001, "
        "\"peak_memory_bytes\": 0}\n"
        "  ],\n"
        "  \"totals\": {\"ipus\": 2, \"compute_cycles\": 2660, \"exchange_cycles\": 1330, "
        "\"sync_cycles\": 1995, \"idle_cycles\": 0, \"host_cycles\": 0, "
        "\"max_total_cycles\": 3990, "
        "\"max_time_us\": 3.000000, \"max_peak_memory_bytes\": 1000}\n"
        "}\n";
    struct fixture x;
    char *text;

    (void)state;
    fixture_init(&x);
    text = write_to_string(sim_report_write_json, &x.info, x.ipus, 2);
    assert_string_equal(text, want);
    free(text);
    sim_trace_destroy(x.trace);
}

static void test_trace_json(void **state)
{
    static const char *want =
        "{\"traceEvents\":[\n"
        "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"tid\":0,"
        "\"args\":{\"name\":\"instance 1 (POD16)\"}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":4,\"args\":{\"name\":\"IPU "
        "4\"}},\n"
        "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":4,"
        "\"args\":{\"sort_index\":4}},\n"
        "{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":5,\"args\":{\"name\":\"IPU "
        "5\"}},\n"
        "{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":1,\"tid\":5,"
        "\"args\":{\"sort_index\":5}},\n"
        "{\"name\":\"compute\",\"cat\":\"compute\",\"ph\":\"X\",\"pid\":1,\"tid\":4,"
        "\"ts\":0.000000,\"dur\":2.000000},\n"
        "{\"name\":\"all_reduce \\\"big\\\"\\\\\",\"cat\":\"exchange\",\"ph\":\"X\",\"pid\":1,"
        "\"tid\":4,\"ts\":2.000000,\"dur\":1.000000,\"args\":{\"bytes\":4096}},\n"
        "{\"name\":\"trace truncated: 1 slices dropped\",\"ph\":\"i\",\"s\":\"t\",\"pid\":1,"
        "\"tid\":4,\"ts\":3.000000}\n"
        "],\n"
        "\"displayTimeUnit\":\"ns\",\n"
        "\"otherData\":{\n"
        "  \"topology\": \"POD16\",\n"
        "  \"device\": \"GC200\",\n"
        "  \"clock_hz\": 1330000000,\n"
        "  \"instance\": 1,\n"
        "  \"num_instances\": 2,\n"
        "  \"program\": \"train\",\n"
        "  \"time_unit\": \"simulated microseconds\",\n"
        "  \"dropped_slices\": 1\n"
        "}}\n";
    struct fixture x;
    char *text;

    (void)state;
    fixture_init(&x);
    text = write_to_string(sim_trace_write_json, &x.info, x.ipus, 2);
    assert_string_equal(text, want);
    free(text);
    sim_trace_destroy(x.trace);
}

static void test_writer_errors(void **state)
{
    char path[] = "/tmp/test_sim_report_XXXXXX";
    struct fixture x;
    sim_report_ipu_t nostats = {0, NULL, 0, 0, NULL};
    char *text, buf[4096];
    FILE *f;
    int fd;

    (void)state;
    fixture_init(&x);
    assert_int_equal(sim_report_write_json(NULL, &x.info, x.ipus, 2), -EINVAL);
    assert_int_equal(sim_report_write_json(stdout, NULL, x.ipus, 2), -EINVAL);
    assert_int_equal(sim_trace_write_json(stdout, &x.info, &nostats, 1), -EINVAL);
    assert_int_equal(sim_report_write_json_path(NULL, &x.info, x.ipus, 2), -EINVAL);
    assert_int_equal(sim_report_write_json_path("/nonexistent/r.json", &x.info, x.ipus, 2),
                     -ENOENT);
    /* A full disk is reported, not ignored. */
    assert_int_equal(sim_trace_write_json_path("/dev/full", &x.info, x.ipus, 2), -ENOSPC);
    /* Through a path the bytes are those of the FILE * writer. */
    fd = mkstemp(path);
    assert_true(fd >= 0);
    close(fd);
    assert_int_equal(sim_report_write_json_path(path, &x.info, x.ipus, 2), 0);
    f = fopen(path, "r");
    assert_non_null(f);
    buf[fread(buf, 1, sizeof(buf) - 1, f)] = '\0';
    fclose(f);
    unlink(path);
    text = write_to_string(sim_report_write_json, &x.info, x.ipus, 2);
    assert_string_equal(buf, text);
    free(text);
    sim_trace_destroy(x.trace);
}

static void test_expand_path(void **state)
{
    char out[16];

    (void)state;
    assert_int_equal(sim_report_expand_path("run-%i.json", 12, out, sizeof(out)), 0);
    assert_string_equal(out, "run-12.json");
    assert_int_equal(sim_report_expand_path("%%i-%i%%", 3, out, sizeof(out)), 0);
    assert_string_equal(out, "%i-3%");
    assert_int_equal(sim_report_expand_path("plain", 3, out, sizeof(out)), 0);
    assert_string_equal(out, "plain");
    assert_int_equal(sim_report_expand_path("a%d", 3, out, sizeof(out)), -EINVAL);
    assert_int_equal(sim_report_expand_path("a%", 3, out, sizeof(out)), -EINVAL);
    /* 15 characters and the NUL fit in 16; 16 do not. */
    assert_int_equal(sim_report_expand_path("123456789012345", 3, out, sizeof(out)), 0);
    assert_int_equal(sim_report_expand_path("1234567890123456", 3, out, sizeof(out)),
                     -ENAMETOOLONG);
    assert_int_equal(sim_report_expand_path("12345678901234%i", 55, out, sizeof(out)),
                     -ENAMETOOLONG);
    assert_int_equal(sim_report_expand_path(NULL, 3, out, sizeof(out)), -EINVAL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_stats),         cmocka_unit_test(test_trace_recording),
        cmocka_unit_test(test_report_json),   cmocka_unit_test(test_trace_json),
        cmocka_unit_test(test_writer_errors), cmocka_unit_test(test_expand_path),
    };

    return cmocka_run_group_tests(tests, NULL, NULL);
}
