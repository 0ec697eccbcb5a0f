/*
 * The topology file parser: every key, the defaults, and one test per kind of bad line, each
 * asserting the exact one-line message "FILE:LINE: reason". Ends with a small deterministic fuzz
 * (random and mutated files) that must never crash and must always explain a failure.
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

#include "sim/topology/topology.h"

#define NS(x) ((sim_time_t)(x)*SIM_PS_PER_NS)

static char dir[64];
static char path[128];
static char err[512];

static int setup(void **state)
{
    (void)state;
    snprintf(dir, sizeof(dir), "/tmp/test_sim_topo_XXXXXX");
    if (mkdtemp(dir) == NULL)
        return -1;
    snprintf(path, sizeof(path), "%s/pod.topo", dir);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(path);
    rmdir(dir);
    return 0;
}

static void write_bytes(const char *text, size_t len)
{
    FILE *f = fopen(path, "wb");

    assert_non_null(f);
    assert_int_equal(fwrite(text, 1, len, f), len);
    assert_int_equal(fclose(f), 0);
}

/* Loads TEXT from the test file; returns the status, the topology in *OUT (or NULL). */
static int load_text(const char *text, sim_topology_t **out)
{
    write_bytes(text, strlen(text));
    err[0] = '\0';
    return sim_topology_load(path, out, err, sizeof(err));
}

static sim_topology_t *load_ok(const char *text)
{
    sim_topology_t *t = NULL;
    int rc = load_text(text, &t);

    if (rc != 0)
        fail_msg("unexpected error %d: %s", rc, err);
    return t;
}

/* Asserts that TEXT fails with -EINVAL and the message "PATH:LINE: WANT" (LINE 0: "PATH: WANT"). */
static void expect_error(const char *text, int line, const char *want)
{
    char full[512];
    sim_topology_t *t = (sim_topology_t *)&t;

    if (line > 0)
        snprintf(full, sizeof(full), "%s:%d: %s", path, line, want);
    else
        snprintf(full, sizeof(full), "%s: %s", path, want);
    assert_int_equal(load_text(text, &t), -EINVAL);
    assert_null(t);
    assert_string_equal(err, full);
}

static void test_every_key(void **state)
{
    sim_topology_t *t = load_ok("# a small two-ILD pod\n"
                                "name Mini-pod_2.0\n"
                                "ipus 16\n"
                                "ild_size 8\t# two ILDs\n"
                                "wiring ring\n"
                                "link 0 4 2\n"
                                "ipus_per_gateway 2\n"
                                "gwlinks_per_gateway 4\n"
                                "ipulink_bandwidth_gbs 64.25\n"
                                "ipulink_latency_ns 100.5\n"
                                "gwlink_bandwidth_gbs 0.001\n"
                                "gwlink_latency_ns 2000\n"
                                "sync_latency_ns 0\n"
                                "gw_sync_latency_ns 1000000000\n");
    sim_topology_params_t p;
    sim_route_t r;

    (void)state;
    assert_string_equal(sim_topology_name(t), "Mini-pod_2.0");
    assert_int_equal(sim_topology_num_ipus(t), 16);
    assert_int_equal(sim_topology_num_ilds(t), 2);
    /* 8 gateways of 2 IPUs: nodes 16..23. */
    assert_int_equal(sim_topology_num_nodes(t), 24);
    sim_topology_get_params(t, &p);
    assert_string_equal(p.wiring, "ring");
    assert_int_equal(p.ipus_per_gateway, 2);
    assert_int_equal(p.gwlinks_per_gateway, 4);
    assert_int_equal(p.ipulink_bandwidth, 64250000000ULL);
    assert_int_equal(p.ipulink_latency, 100500);
    assert_int_equal(p.gwlink_bandwidth, 1000000ULL);
    assert_int_equal(p.gwlink_latency, NS(2000));
    assert_int_equal(p.sync_latency, 0);
    assert_int_equal(p.gw_sync_latency, 1000000000000ULL);
    /* The extra link bonds two IPU-Links. */
    assert_int_equal(sim_topology_route(t, 0, 4, &r), 0);
    assert_int_equal(r.hops, 1);
    assert_int_equal(r.bandwidth, 2 * 64250000000ULL);
    /* Two ILDs: all 4 ports of a gateway go to the one neighbour. */
    assert_int_equal(sim_topology_route(t, 0, 8, &r), 0);
    assert_int_equal(r.gw_hops, 1);
    assert_int_equal(r.gw_bandwidth, 4 * 1000000ULL);
    sim_topology_free(t);
}

static void test_defaults(void **state)
{
    sim_topology_t *t = load_ok("ipus 8\n");
    sim_topology_params_t p;

    (void)state;
    assert_string_equal(sim_topology_name(t), "pod"); /* the file's base name */
    assert_int_equal(sim_topology_num_ilds(t), 1);
    sim_topology_get_params(t, &p);
    assert_int_equal(p.ild_size, 8);
    assert_string_equal(p.wiring, "ladder");
    assert_int_equal(p.ipulink_bandwidth, 32000000000ULL);
    assert_int_equal(p.ipulink_latency, NS(500));
    assert_int_equal(p.gwlink_bandwidth, 12500000000ULL);
    sim_topology_free(t);
    /* Sizes that are no multiple of 4 default to a ring, a single IPU to no links. */
    t = load_ok("ipus 6\n");
    sim_topology_get_params(t, &p);
    assert_string_equal(p.wiring, "ring");
    assert_int_equal(sim_topology_num_links(t), 12);
    sim_topology_free(t);
    t = load_ok("ipus 2\n");
    assert_int_equal(sim_topology_num_links(t), 2); /* a ring of 2 is one cable */
    sim_topology_free(t);
    t = load_ok("ipus 1\n");
    sim_topology_get_params(t, &p);
    assert_string_equal(p.wiring, "none");
    assert_int_equal(sim_topology_num_links(t), 0);
    sim_topology_free(t);
}

static void test_layout_variants(void **state)
{
    sim_topology_t *t;
    sim_route_t r;

    (void)state;
    /* Explicit links only; CRLF line ends, tabs, blank lines and comments are fine. */
    t = load_ok("ipus 3\r\n\r\nwiring none\r\n\tlink 0 1 # first\r\nlink 1 2\r\n");
    assert_int_equal(sim_topology_hops(t, 0, 2), 2);
    sim_topology_free(t);
    /* Full wiring: everything one hop away. */
    t = load_ok("ipus 5\nwiring full\n");
    assert_int_equal(sim_topology_num_links(t), 20);
    assert_int_equal(sim_topology_diameter(t), 1);
    sim_topology_free(t);
    /* Three ILDs form a ring of GW-Links with half the ports to each side. */
    t = load_ok("ipus 12\nild_size 4\nipus_per_gateway 4\ngwlinks_per_gateway 4\n");
    assert_int_equal(sim_topology_num_ilds(t), 3);
    assert_int_equal(sim_topology_route(t, 0, 8, &r), 0);
    assert_int_equal(r.gw_hops, 1);
    assert_int_equal(r.gw_bandwidth, 2 * 12500000000ULL);
    sim_topology_free(t);
    /* A file with no final newline. */
    t = load_ok("ipus 4");
    assert_int_equal(sim_topology_num_ipus(t), 4);
    sim_topology_free(t);
}

static void test_syntax_errors(void **state)
{
    (void)state;
    expect_error("ipus 4\n\nfoo 3\n", 3, "unknown key 'foo'");
    expect_error("ipus\n", 1, "ipus takes 1 value (got 0)");
    expect_error("ipus 4 5\n", 1, "ipus takes 1 value (got 2)");
    expect_error("ipus 4\nlink 0\n", 2, "link takes 2 to 3 values (got 1)");
    expect_error("ipus 4\nlink 0 1 2 3 4 5\n", 2, "link: too many values");
    expect_error("ipus 4\nipus 4\n", 2, "ipus is set twice (first on line 1)");
    expect_error("name a\nname b\nipus 4\n", 2, "name is set twice (first on line 1)");
    expect_error("ipus 4\nwiring mesh\n", 2,
                 "wiring must be ladder, ring, full or none "
                 "(got 'mesh')");
    expect_error("name a/b\n", 1,
                 "name must be 1..63 characters of A-Z a-z 0-9 _ . - "
                 "(got 'a/b')");
    expect_error("name aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\n", 1,
                 "name must be 1..63 characters of A-Z a-z 0-9 _ . - (got "
                 "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')");
}

static void test_number_errors(void **state)
{
    (void)state;
    expect_error("ipus 4x\n", 1, "ipus: '4x' is not a whole number");
    expect_error("ipus -4\n", 1, "ipus: '-4' is not a whole number");
    expect_error("ipus +4\n", 1, "ipus: '+4' is not a whole number");
    expect_error("ipus 0x10\n", 1, "ipus: '0x10' is not a whole number");
    expect_error("ipus 99999999999\n", 1, "ipus: '99999999999' is not a whole number");
    expect_error("ipus 0\n", 1, "ipus must be 1..1024 (got 0)");
    expect_error("ipus 1025\n", 1, "ipus must be 1..1024 (got 1025)");
    expect_error("ipus 4\nlink 0 1 17\n", 2, "link count must be 1..16 (got 17)");
    expect_error("ipus 4\nipus_per_gateway 65\n", 2, "ipus_per_gateway must be 1..64 (got 65)");
    expect_error("ipus 4\ngwlinks_per_gateway 0\n", 2, "gwlinks_per_gateway must be 1..16 (got 0)");
    expect_error("ipulink_bandwidth_gbs 1.\n", 1,
                 "ipulink_bandwidth_gbs: '1.' is not a number with at most 3 decimals");
    expect_error("ipulink_bandwidth_gbs .5\n", 1,
                 "ipulink_bandwidth_gbs: '.5' is not a number with at most 3 decimals");
    expect_error("ipulink_bandwidth_gbs 1.2345\n", 1,
                 "ipulink_bandwidth_gbs: '1.2345' is not a number with at most 3 decimals");
    expect_error("gwlink_bandwidth_gbs 1e9\n", 1,
                 "gwlink_bandwidth_gbs: '1e9' is not a number with at most 3 decimals");
    expect_error("gwlink_latency_ns 1.2.3\n", 1,
                 "gwlink_latency_ns: '1.2.3' is not a number with at most 3 decimals");
    expect_error("sync_latency_ns 1234567890123\n", 1,
                 "sync_latency_ns: '1234567890123' is not a number with at most 3 decimals");
    expect_error("ipulink_bandwidth_gbs 0\n", 1, "ipulink_bandwidth_gbs is out of range (got 0)");
    expect_error("ipulink_bandwidth_gbs 1000000.001\n", 1,
                 "ipulink_bandwidth_gbs is out of range (got 1000000.001)");
    expect_error("ipulink_latency_ns 1000000000.001\n", 1,
                 "ipulink_latency_ns is out of range (got 1000000000.001)");
}

static void test_byte_and_size_errors(void **state)
{
    char line[400];
    sim_topology_t *t;

    (void)state;
    write_bytes("ipus 4\nname a\0b\n", 16);
    assert_int_equal(sim_topology_load(path, &t, err, sizeof(err)), -EINVAL);
    assert_non_null(strstr(err, ":2: invalid byte 0x00"));
    expect_error("ipus 4\x01\n", 1, "invalid byte 0x01");
    expect_error("# \x7f\n", 1, "invalid byte 0x7f");
    memset(line, 'x', sizeof(line));
    memcpy(line, "# ", 2);
    line[300] = '\0';
    expect_error(line, 1, "line longer than 255 characters");
    /* 255 characters are fine. */
    line[255] = '\0';
    t = (sim_topology_t *)&t;
    assert_int_equal(load_text(line, &t), -EINVAL);
    assert_string_equal(strchr(err, ' ') + 1, "missing required key 'ipus'");
}

static void test_limits(void **state)
{
    size_t n = 100001;
    char *big = malloc(n + 16);
    size_t pos = 0;

    (void)state;
    assert_non_null(big);
    memset(big, '\n', n);
    big[n] = '\0';
    expect_error(big, 100001, "file longer than 100000 lines");
    /* 65537 link lines: the 65537th is refused before it is stored. */
    big = realloc(big, 65537 * 12 + 16);
    assert_non_null(big);
    pos += (size_t)sprintf(big, "ipus 4\n");
    for (int i = 0; i < 65537; i++)
        pos += (size_t)sprintf(big + pos, "link 0 1\n");
    expect_error(big, 65538, "too many link lines (at most 65536)");
    free(big);
    /* A ring of 1024 is 512 hops across: more than routes may have. */
    expect_error("ipus 1024\nwiring ring\n", 0,
                 "the longest route has 512 hops; at most 256 are supported");
}

static void test_semantic_errors(void **state)
{
    (void)state;
    expect_error("name x\n", 0, "missing required key 'ipus'");
    expect_error("ipus 8\nild_size 3\n", 0, "ild_size 3 does not divide ipus 8");
    expect_error("ipus 6\nwiring ladder\n", 0,
                 "wiring ladder needs ild_size to be a multiple of 4 (got 6); use wiring ring, "
                 "full or none");
    expect_error("ipus 128\nwiring full\n", 0,
                 "wiring full allows at most 64 IPUs per ILD "
                 "(got 128)");
    expect_error("ipus 16\nild_size 8\nipus_per_gateway 3\n", 0,
                 "ipus_per_gateway 3 does not divide ild_size 8");
    expect_error("ipus 8\nlink 0 9\n", 2, "link 0 9 names an IPU outside 0..7");
    expect_error("ipus 8\nlink 3 3\n", 2, "link 3 3 joins an IPU to itself");
    expect_error("ipus 8\nild_size 4\nlink 3 4\n", 3,
                 "link 3 4 joins two ILDs; IPU-Links stay inside an ILD of 4 IPUs and ILDs are "
                 "joined by GW-Links");
    expect_error("ipus 8\nwiring none\nlink 0 1\nlink 1 0 2\n", 4,
                 "link 0 1 repeats the link of line 3");
    expect_error("ipus 8\nlink 0 1\n", 2, "link 0 1 is already part of the ILD wiring");
    expect_error("ipus 4\nwiring none\nlink 0 1\n", 0,
                 "IPU 2 cannot reach IPU 0 (the links leave it cut off)");
}

static void test_io_errors(void **state)
{
    sim_topology_t *t;

    (void)state;
    assert_int_equal(sim_topology_load("/nonexistent/x.topo", &t, err, sizeof(err)), -ENOENT);
    assert_string_equal(err, "cannot open topology file '/nonexistent/x.topo': No such file or "
                             "directory");
    /* A directory opens but cannot be read: it is named as a directory, not a read error. */
    assert_int_equal(sim_topology_load(dir, &t, err, sizeof(err)), -EISDIR);
    assert_null(t);
    assert_non_null(strstr(err, "': Is a directory"));
    assert_non_null(strstr(err, dir));
    assert_int_equal(sim_topology_load(NULL, &t, err, sizeof(err)), -EINVAL);
    /* Through sim_topology_open, a file is what is not a preset. */
    write_bytes("ipus 4\nname fromfile\n", 21);
    assert_int_equal(sim_topology_open(path, &t, err, sizeof(err)), 0);
    assert_string_equal(sim_topology_name(t), "fromfile");
    sim_topology_free(t);
}

/* xorshift64*: a fixed sequence, so the fuzz is the same on every run. */
static uint64_t rng_next(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static void fuzz_one(const char *data, size_t len)
{
    sim_topology_t *t = NULL;
    int rc;

    write_bytes(data, len);
    err[0] = '\0';
    rc = sim_topology_load(path, &t, err, sizeof(err));
    if (rc == 0) {
        assert_non_null(t);
        assert_true(sim_topology_num_ipus(t) >= 1);
        sim_topology_free(t);
        return;
    }
    /* Every failure explains itself, starting with the file name. */
    assert_null(t);
    assert_true(rc < 0);
    assert_int_equal(strncmp(err, path, strlen(path)), 0);
}

static void test_fuzz(void **state)
{
    static const char seed[] = "name F\nipus 32\nild_size 16\nwiring ladder\nlink 0 8 2\n"
                               "ipus_per_gateway 4\ngwlinks_per_gateway 2\n"
                               "ipulink_bandwidth_gbs 32.5\ngwlink_latency_ns 3000\n";
    static const char alphabet[] = "ipus ild_size link wiring ladder ring 0123456789.#\n\t -x";
    char buf[sizeof(seed) + 64];
    uint64_t s = 0x9e3779b97f4a7c15ULL;
    int ok = 0;

    (void)state;
    for (int i = 0; i < 1500; i++) {
        size_t len = sizeof(seed) - 1;

        memcpy(buf, seed, len);
        for (int m = 0; m < 1 + (int)(rng_next(&s) % 4); m++) {
            size_t at = rng_next(&s) % len;
            uint64_t r = rng_next(&s);

            buf[at] = (r & 1) ? (char)(r >> 8) : alphabet[(r >> 8) % (sizeof(alphabet) - 1)];
        }
        fuzz_one(buf, len);
    }
    for (int i = 0; i < 500; i++) {
        size_t len = rng_next(&s) % sizeof(buf);

        for (size_t k = 0; k < len; k++)
            buf[k] = alphabet[rng_next(&s) % (sizeof(alphabet) - 1)];
        fuzz_one(buf, len);
    }
    /* The unmutated seed is valid: the fuzz starts from a file that parses. */
    write_bytes(seed, sizeof(seed) - 1);
    sim_topology_t *t;
    ok = sim_topology_load(path, &t, err, sizeof(err)) == 0;
    assert_true(ok);
    sim_topology_free(t);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_key),       cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_layout_variants), cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_number_errors),   cmocka_unit_test(test_byte_and_size_errors),
        cmocka_unit_test(test_limits),          cmocka_unit_test(test_semantic_errors),
        cmocka_unit_test(test_io_errors),       cmocka_unit_test(test_fuzz),
    };

    return cmocka_run_group_tests(tests, setup, teardown);
}
