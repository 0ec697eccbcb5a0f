/*
 * Unit tests of poprun's command line, config files, host lists and word splitting.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/config_file.h"
#include "plan/hostlist.h"
#include "cli/options.h"
#include "common/words.h"

/* Parses the NULL-terminated words after "poprun" into O; returns what options_parse returns. */
static int parse_words(struct poprun_options *o, char *err, size_t errlen, const char *const *words)
{
    char *argv[64];
    int argc = 0;
    argv[argc++] = "poprun";
    for (; *words; words++)
        argv[argc++] = (char *)*words;
    argv[argc] = NULL;
    options_init(o);
    return options_parse(o, argc, argv, err, errlen);
}

#define PARSE(o, err, ...)                                                                         \
    parse_words(o, err, sizeof(err), (const char *const[]){__VA_ARGS__, NULL})

static void test_defaults(void **state)
{
    struct poprun_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "prog"), 0);
    assert_int_equal(o.num_replicas, 1);
    assert_int_equal(o.num_instances, 1);
    assert_int_equal(o.ipus_per_replica, 1);
    assert_int_equal(o.num_ilds, 0);
    assert_int_equal(o.only_output_from_instance, -1);
    assert_int_equal(o.verbose, 0);
    assert_null(o.host);
    assert_null(o.topology);
    assert_false(o.numa_aware || o.offline_mode || o.dry_run || o.print_topology);
    assert_int_equal(o.program.n, 1);
    assert_string_equal(o.program.v[0], "prog");
    options_free(&o);
}

static void test_every_option(void **state)
{
    struct poprun_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--num-replicas", "16", "--num-instances=4",
                           "--ipus-per-replica", "2", "-H", "h[1-2]", "--num-ilds", "1",
                           "--mpi-global-args", "--mca btl tcp", "--mpi-local-args=-x A",
                           "--numa-aware", "--print-topology", "--only-output-from-instance", "0",
                           "--offline-mode", "--topology", "POD64", "--dry-run", "-vv",
                           "--export-config", "out.conf", "prog", "-v", "--num-replicas", "3"),
                     0);
    assert_int_equal(o.num_replicas, 16);
    assert_int_equal(o.num_instances, 4);
    assert_int_equal(o.ipus_per_replica, 2);
    assert_string_equal(o.host, "h[1-2]");
    assert_int_equal(o.num_ilds, 1);
    assert_string_equal(o.mpi_global_args, "--mca btl tcp");
    assert_string_equal(o.mpi_local_args, "-x A");
    assert_true(o.numa_aware && o.print_topology && o.offline_mode && o.dry_run);
    assert_int_equal(o.only_output_from_instance, 0);
    assert_string_equal(o.topology, "POD64");
    assert_int_equal(o.verbose, 2);
    assert_string_equal(o.export_config, "out.conf");
    /* Everything from the program on belongs to the program. */
    assert_int_equal(o.program.n, 4);
    assert_string_equal(o.program.v[1], "-v");
    assert_string_equal(o.program.v[3], "3");
    options_free(&o);
}

static void test_short_clusters_and_separator(void **state)
{
    struct poprun_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "-vHh1,h2", "-v", "--", "-prog", "x"), 0);
    assert_int_equal(o.verbose, 2);
    assert_string_equal(o.host, "h1,h2");
    assert_int_equal(o.program.n, 2);
    assert_string_equal(o.program.v[0], "-prog");
    options_free(&o);
    assert_int_equal(PARSE(&o, err, "--help"), 0);
    assert_true(o.help);
    assert_int_equal(o.program.n, 0);
    options_free(&o);
    assert_int_equal(PARSE(&o, err, "--numa-aware=false", "--verbose=3", "p"), 0);
    assert_false(o.numa_aware);
    assert_int_equal(o.verbose, 3);
    options_free(&o);
}

/* Booleans in every form; a bare boolean still works; a boolean takes the next word only when it
 * is a boolean word. */
static void test_boolean_forms(void **state)
{
    static const struct {
        const char *args[4];
        int numa, prog_index;
    } cases[] = {
        {{"--numa-aware", "1", "p"}, 1, 2},    {{"--numa-aware", "no", "p"}, 0, 2},
        {{"--numa-aware=yes", "p"}, 1, 1},     {{"--numa-aware=OFF", "p"}, 0, 1},
        {{"--numa-aware", "On", "p"}, 1, 2},   {{"--numa-aware", "false", "p"}, 0, 2},
        {{"--numa-aware", "--", "p"}, 1, 2},   {{"--numa-aware=0", "--", "p"}, 0, 2},
        {{"--numa-aware", "TRUE", "p"}, 1, 2},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct poprun_options o;
        char err[256] = "";
        assert_int_equal(parse_words(&o, err, sizeof(err), cases[i].args), 0);
        assert_int_equal(o.numa_aware, cases[i].numa);
        assert_int_equal(options_spread_numa(&o), cases[i].numa);
        assert_int_equal(o.program.n >= 1, 1);
        assert_string_equal(o.program.v[0], "p");
        options_free(&o);
    }
    /* The next word is the program when it is a path or on PATH, else a bad value. */
    struct poprun_options o;
    char err[256] = "";
    assert_int_equal(PARSE(&o, err, "--numa-aware", "./p", "1"), 0);
    assert_int_equal(o.numa_aware, 1);
    assert_string_equal(o.program.v[0], "./p");
    options_free(&o);
    assert_int_equal(PARSE(&o, err, "--numa-aware", "sh"), 0);
    assert_string_equal(o.program.v[0], "sh");
    options_free(&o);
    assert_int_not_equal(PARSE(&o, err, "--print-topology", "maybe", "p"), 0);
    assert_string_equal(err, "--print-topology takes a boolean (1/0, yes/no, on/off, true/false), "
                             "not 'maybe' (and 'maybe' is no program: no such file on PATH)");
    options_free(&o);
}

/* The forms of Graphcore's published training scripts. */
static void test_published_forms(void **state)
{
    struct poprun_options o;
    char err[256] = "";
    assert_int_equal(PARSE(&o, err, "--mpi-global-args=--allow-run-as-root --tag-output",
                           "--mpi-local-args=-x TF_POPLAR_FLAGS", "--numa-aware", "1",
                           "--ipus-per-replica", "1", "--num-instances", "8", "--num-replicas",
                           "16", "PROGRAM"),
                     0);
    assert_string_equal(o.mpi_global_args, "--allow-run-as-root --tag-output");
    assert_string_equal(o.mpi_local_args, "-x TF_POPLAR_FLAGS");
    assert_int_equal(o.numa_aware, 1);
    assert_int_equal(o.num_instances, 8);
    assert_int_equal(o.num_replicas, 16);
    assert_string_equal(o.program.v[0], "PROGRAM");
    options_free(&o);

    assert_int_equal(
        PARSE(&o, err, "-vv", "--host", "a,b,c,d", "--update-partition=no", "--reset-partition=no",
              "--vipu-server-timeout", "300", "--vipu-server-host", "a", "--vipu-partition=p64",
              "--vipu-cluster", "c16", "--vipu-allocation=alloc1", "--remove-partition=0",
              "--vipu-server-port", "8090", "--executable-cache-path", "/tmp/c",
              "--process-placement", "spreadnuma", "--offline-mode=on", "--allow-run-as-root",
              "--vv", "--print-topology=yes", "--mpi-global-args", "--tag-output",
              "--mpi-global-args=--mca a b", "-x", "A=1", "-x", "B", "PROGRAM"),
        0);
    assert_int_equal(o.verbose, 2);
    assert_int_equal(o.update_partition, 0);
    assert_int_equal(o.reset_partition, 0);
    assert_int_equal(o.remove_partition, 0);
    assert_int_equal(o.vipu_server_timeout, 300);
    assert_int_equal(o.vipu_server_port, 8090);
    assert_string_equal(o.vipu_server_host, "a");
    assert_string_equal(o.vipu_partition, "p64");
    assert_string_equal(o.vipu_cluster, "c16");
    assert_string_equal(o.vipu_allocation, "alloc1");
    assert_string_equal(o.executable_cache_path, "/tmp/c");
    assert_int_equal(options_spread_numa(&o), 1);
    assert_int_equal(o.offline_mode, 1);
    assert_int_equal(o.allow_run_as_root, 1);
    assert_int_equal(o.print_topology, 1);
    assert_string_equal(o.mpi_global_args, "--tag-output --mca a b");
    assert_string_equal(o.export_env, "A=1 B");
    /* Every given V-IPU option is reported, once, in table order. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    options_report_no_effect(&o, f);
    fclose(f);
    assert_string_equal(buf, "poprun: --vipu-server-host has no effect on simulated IPUs\n"
                             "poprun: --vipu-server-port has no effect on simulated IPUs\n"
                             "poprun: --vipu-server-timeout has no effect on simulated IPUs\n"
                             "poprun: --vipu-partition has no effect on simulated IPUs\n"
                             "poprun: --vipu-cluster has no effect on simulated IPUs\n"
                             "poprun: --vipu-allocation has no effect on simulated IPUs\n"
                             "poprun: --update-partition has no effect on simulated IPUs\n"
                             "poprun: --reset-partition has no effect on simulated IPUs\n"
                             "poprun: --remove-partition has no effect on simulated IPUs\n");
    free(buf);
    options_free(&o);

    /* --process-placement wins over --numa-aware either way. */
    assert_int_equal(PARSE(&o, err, "--numa-aware=yes", "--process-placement=disabled", "p"), 0);
    assert_int_equal(options_spread_numa(&o), 0);
    options_free(&o);
}

struct bad_case {
    const char *args[4];
    const char *message;
};

static void test_errors(void **state)
{
    static const struct bad_case cases[] = {
        {{"--num-replicas", "0", "p"}, "--num-replicas must be a positive integer, not '0'"},
        {{"--num-replicas", "-1", "p"}, "--num-replicas must be a positive integer, not '-1'"},
        {{"--num-instances", "four", "p"},
         "--num-instances must be a positive integer, not 'four'"},
        {{"--num-instances=", "p"}, "--num-instances must be a positive integer, not ''"},
        {{"--ipus-per-replica", "1.5", "p"},
         "--ipus-per-replica must be a positive integer, not '1.5'"},
        {{"--num-replicas", "99999999999", "p"},
         "--num-replicas 99999999999 is too large (at most 1048576)"},
        {{"--only-output-from-instance", "-1", "p"},
         "--only-output-from-instance must be a non-negative integer, not '-1'"},
        {{"--num-ilds", "0", "p"}, "--num-ilds must be a positive integer, not '0'"},
        {{"--frobnicate", "p"}, "unknown option '--frobnicate' (see poprun --help)"},
        {{"--frob=1", "p"}, "unknown option '--frob' (see poprun --help)"},
        {{"-q", "p"}, "unknown option '-q' (see poprun --help)"},
        {{"-x"}, "-x needs a value"},
        {{"-x", "1A=b", "p"},
         "-x takes NAME or NAME=VALUE (NAME of letters, digits and '_'), not '1A=b'"},
        {{"--num-replicas"}, "--num-replicas needs a value"},
        {{"-H"}, "-H needs a value"},
        {{"--numa-aware=maybe", "p"},
         "--numa-aware takes a boolean (1/0, yes/no, on/off, true/false), not 'maybe'"},
        {{"--process-placement", "packed", "p"},
         "--process-placement takes one of spreadnuma,spreadcores,disabled, not 'packed'"},
        {{"--version-format=xml"}, "--version-format takes one of text,json, not 'xml'"},
        {{"--vipu-server-port", "0", "p"},
         "--vipu-server-port must be a port from 1 to 65535, "
         "not '0'"},
        {{"--vipu-server-port=70000", "p"},
         "--vipu-server-port must be a port from 1 to 65535, "
         "not '70000'"},
        {{"--vipu-server-timeout", "-3", "p"},
         "--vipu-server-timeout must be a positive number of seconds, not '-3'"},
        {{"--vipu-partition", "p 64", "p"},
         "--vipu-partition must be a name of letters, digits, '.', '_' and '-', not 'p 64'"},
        {{"--vipu-server-host=a/b", "p"},
         "--vipu-server-host must be a host name or an IP address, not 'a/b'"},
        {{"--host-subnet", "10.5.0.0/33", "p"},
         "--host-subnet must be a subnet such as 10.5.0.0/16 or an interface name, not "
         "'10.5.0.0/33'"},
        {{"--executable-cache-path=", "p"}, "--executable-cache-path needs a non-empty path"},
        {{"--mpi-local-args", "-x 'A", "p"}, "--mpi-local-args: unterminated single quote"},
        {{"--update-partition=perhaps", "p"},
         "--update-partition takes a boolean (1/0, yes/no, on/off, true/false), not 'perhaps'"},
        {{"--_instance"}, "--_instance needs a value"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct poprun_options o;
        char err[256] = "";
        const char *const *a = cases[i].args;
        assert_int_equal(parse_words(&o, err, sizeof(err), a), -1);
        assert_string_equal(err, cases[i].message);
        options_free(&o);
    }
}

static void test_words(void **state)
{
    static const struct {
        const char *in;
        int n;
        const char *w[5];
    } cases[] = {
        {"", 0, {NULL}},
        {"  a  b\tc\n", 3, {"a", "b", "c"}},
        {"--mca btl_tcp_if_include '10.0.0.0/24' -x 'A=a b'",
         5,
         {"--mca", "btl_tcp_if_include", "10.0.0.0/24", "-x", "A=a b"}},
        {"\"say \\\"hi\\\"\" a\\ b '' $HOME", 4, {"say \"hi\"", "a b", "", "$HOME"}},
        {"x'y'\"z\"", 1, {"xyz"}},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strvec sv = STRVEC_INIT;
        char err[128];
        assert_int_equal(words_split(cases[i].in, &sv, err, sizeof(err)), 0);
        assert_int_equal(sv.n, cases[i].n);
        for (int k = 0; k < sv.n; k++)
            assert_string_equal(sv.v[k], cases[i].w[k]);
        /* Quoting and splitting again gives the same words. */
        char *joined = words_join_quoted(&sv);
        struct strvec again = STRVEC_INIT;
        assert_int_equal(words_split(joined, &again, err, sizeof(err)), 0);
        assert_int_equal(again.n, sv.n);
        for (int k = 0; k < sv.n; k++)
            assert_string_equal(again.v[k], sv.v[k]);
        free(joined);
        strvec_free(&again);
        strvec_free(&sv);
    }
    char err[128];
    struct strvec sv = STRVEC_INIT;
    assert_int_equal(words_split("a 'b", &sv, err, sizeof(err)), -1);
    assert_string_equal(err, "unterminated single quote");
    assert_int_equal(words_split("\"b", &sv, err, sizeof(err)), -1);
    assert_string_equal(err, "unterminated double quote");
    assert_int_equal(words_split("b\\", &sv, err, sizeof(err)), -1);
    assert_string_equal(err, "ends with a lone backslash");
    strvec_free(&sv);
    char *q = words_quote("it's");
    assert_string_equal(q, "'it'\\''s'");
    free(q);
    q = words_quote("/usr/bin/x");
    assert_string_equal(q, "/usr/bin/x");
    free(q);
}

static void test_hostlist(void **state)
{
    static const struct {
        const char *in;
        const char *out; /* expanded, joined by spaces */
    } cases[] = {
        {"h1", "h1"},
        {"host0,host1", "host0 host1"},
        {"host[0-2,4]", "host0 host1 host2 host4"},
        {"node[01-03]", "node01 node02 node03"},
        {"n[8-10]", "n8 n9 n10"},
        {"r[1-2]n[1-2]", "r1n1 r1n2 r2n1 r2n2"},
        {"a,b[1-2].lab,c", "a b1.lab b2.lab c"},
        {"x[3]", "x3"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        struct strvec sv = STRVEC_INIT;
        char err[256];
        assert_int_equal(hostlist_expand(cases[i].in, &sv, err, sizeof(err)), 0);
        char *j = strvec_join(&sv, " ");
        assert_string_equal(j, cases[i].out);
        free(j);
        strvec_free(&sv);
    }
    static const struct {
        const char *in;
        const char *msg;
    } bad[] = {
        {"h[1-", "malformed host list 'h[1-': missing ']'"},
        {"h[1-2", "malformed host list 'h[1-2': missing ']'"},
        {"h[]", "malformed host list 'h[]': expected a number in [...]"},
        {"h[a-b]", "malformed host list 'h[a-b]': unexpected 'a'"},
        {"h[2-1]", "malformed host list 'h[2-1]': range 2-1 runs backwards"},
        {"h[1-]", "malformed host list 'h[1-]': expected a number after '-'"},
        {"h1,,h2", "malformed host list 'h1,,h2': empty host name"},
        {"", "malformed host list '': empty host name"},
        {"h1:4", "malformed host list 'h1:4': unexpected ':'"},
        {"h]", "malformed host list 'h]': unexpected ']'"},
        {"h1,h[0-2]", "host list 'h1,h[0-2]' names host h1 twice"},
        {"h[0-99999]", "host list 'h[0-99999]' expands to more than 4096 hosts"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        struct strvec sv = STRVEC_INIT;
        char err[256] = "";
        assert_int_equal(hostlist_expand(bad[i].in, &sv, err, sizeof(err)), -1);
        assert_string_equal(err, bad[i].msg);
        strvec_free(&sv);
    }
}

/* Writes TEXT to a new temporary file and returns its path (static buffer). */
static const char *temp_file(const char *text)
{
    static char path[64];
    snprintf(path, sizeof(path), "/tmp/poprun-test-XXXXXX");
    int fd = mkstemp(path);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    return path;
}

static void test_hostfile(void **state)
{
    const char *path = temp_file("# cluster\nh1 slots=4\n\n  h[2-3]  # two more\n");
    struct strvec sv = STRVEC_INIT;
    char err[256];
    assert_int_equal(hostlist_read_file(path, &sv, err, sizeof(err)), 0);
    char *j = strvec_join(&sv, " ");
    assert_string_equal(j, "h1 h2 h3");
    free(j);
    strvec_free(&sv);
    unlink(path);

    path = temp_file("h1\nh[1-\n");
    assert_int_equal(hostlist_read_file(path, &sv, err, sizeof(err)), -1);
    char want[256];
    snprintf(want, sizeof(want), "%s:2: malformed host list 'h[1-': missing ']'", path);
    assert_string_equal(err, want);
    strvec_free(&sv);
    unlink(path);

    path = temp_file("# nothing\n");
    assert_int_equal(hostlist_read_file(path, &sv, err, sizeof(err)), -1);
    snprintf(want, sizeof(want), "hostfile %s names no host", path);
    assert_string_equal(err, want);
    strvec_free(&sv);
    unlink(path);
}

static void assert_same_options(const struct poprun_options *a, const struct poprun_options *b)
{
    assert_int_equal(a->num_replicas, b->num_replicas);
    assert_int_equal(a->num_instances, b->num_instances);
    assert_int_equal(a->ipus_per_replica, b->ipus_per_replica);
    assert_int_equal(a->num_ilds, b->num_ilds);
    assert_int_equal(a->only_output_from_instance, b->only_output_from_instance);
    assert_int_equal(a->verbose, b->verbose);
    assert_int_equal(a->numa_aware, b->numa_aware);
    assert_int_equal(a->print_topology, b->print_topology);
    assert_int_equal(a->offline_mode, b->offline_mode);
    assert_int_equal(a->reset_partition, b->reset_partition);
    assert_int_equal(a->vipu_server_port, b->vipu_server_port);
    assert_int_equal(a->allow_run_as_root, b->allow_run_as_root);
    const char *const sa[] = {a->host,           a->hostfile,          a->mpi_global_args,
                              a->mpi_local_args, a->topology,          a->export_env,
                              a->vipu_partition, a->process_placement, a->host_subnet};
    const char *const sb[] = {b->host,           b->hostfile,          b->mpi_global_args,
                              b->mpi_local_args, b->topology,          b->export_env,
                              b->vipu_partition, b->process_placement, b->host_subnet};
    for (int i = 0; i < 9; i++) {
        if (sa[i] || sb[i]) {
            assert_non_null(sa[i]);
            assert_non_null(sb[i]);
            assert_string_equal(sa[i], sb[i]);
        }
    }
    assert_int_equal(a->program.n, b->program.n);
    for (int i = 0; i < a->program.n; i++)
        assert_string_equal(a->program.v[i], b->program.v[i]);
}

static void test_config_round_trip(void **state)
{
    struct poprun_options a, b;
    char err[256];
    assert_int_equal(
        PARSE(&a, err, "--num-replicas", "16", "--num-instances", "4", "-H", "h[1-2]",
              "--mpi-global-args", "--mca btl 'tcp,self'", "--only-output-from-instance", "0",
              "--numa-aware", "--offline-mode", "--topology", "POD64", "-v", "-x", "A=a b", "-x",
              "B", "--mpi-global-args", "-x 'C=d'", "--vipu-partition=p1", "--reset-partition=no",
              "--vipu-server-port", "9000", "--process-placement", "spreadnuma", "--host-subnet",
              "eth0", "--allow-run-as-root=1", "prog", "a b", "it's", ""),
        0);
    char path[] = "/tmp/poprun-conf-XXXXXX";
    close(mkstemp(path));
    assert_int_equal(options_export_config(&a, path, err, sizeof(err)), 0);
    options_init(&b);
    assert_int_equal(options_load_config(&b, path, err, sizeof(err)), 0);
    assert_same_options(&a, &b);
    options_free(&b);

    /* The command line overrides the file; a program on it replaces the file's. */
    assert_int_equal(PARSE(&b, err, "--import-config", path, "--num-replicas", "8",
                           "--numa-aware=false", "other"),
                     0);
    assert_int_equal(b.num_replicas, 8);
    assert_int_equal(b.num_instances, 4);
    assert_false(b.numa_aware);
    assert_string_equal(b.host, "h[1-2]");
    assert_int_equal(b.program.n, 1);
    assert_string_equal(b.program.v[0], "other");
    options_free(&b);
    /* Without a program on the command line, the file's program runs. */
    assert_int_equal(PARSE(&b, err, "--import-config", path), 0);
    assert_int_equal(b.program.n, 4);
    assert_string_equal(b.program.v[2], "it's");
    options_free(&b);
    options_free(&a);
    unlink(path);
}

static void test_config_errors(void **state)
{
    static const struct {
        const char *text;
        const char *msg; /* after "PATH:" */
    } cases[] = {
        {"num-replicas = 4\nbogus = 1\n", "2: unknown option 'bogus'"},
        {"num-replicas 4\n", "1: expected \"name = value\""},
        {"# c\nnum-instances = 0\n", "2: --num-instances must be a positive integer, not '0'"},
        {"dry-run = true\n", "1: dry-run cannot be set in a config file"},
        {"import-config = x\n", "1: import-config cannot be set in a config file"},
        {"program = a b\n", "1: program needs exactly one word (put its arguments in args)"},
        {"args = 'x\n", "1: unterminated single quote"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const char *path = temp_file(cases[i].text);
        struct poprun_options o;
        char err[512], want[512];
        options_init(&o);
        assert_int_equal(options_load_config(&o, path, err, sizeof(err)), -1);
        snprintf(want, sizeof(want), "%s:%s", path, cases[i].msg);
        assert_string_equal(err, want);
        options_free(&o);
        unlink(path);
    }
    struct poprun_options o;
    char err[256];
    assert_int_equal(PARSE(&o, err, "--import-config", "/nonexistent/poprun.conf", "p"), -1);
    assert_string_equal(err,
                        "cannot read config /nonexistent/poprun.conf: No such file or directory");
    options_free(&o);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_option),
        cmocka_unit_test(test_short_clusters_and_separator),
        cmocka_unit_test(test_boolean_forms),
        cmocka_unit_test(test_published_forms),
        cmocka_unit_test(test_errors),
        cmocka_unit_test(test_words),
        cmocka_unit_test(test_hostlist),
        cmocka_unit_test(test_hostfile),
        cmocka_unit_test(test_config_round_trip),
        cmocka_unit_test(test_config_errors),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
