/*
 * Unit tests of poprun's plan (replicas -> instances -> hosts -> ILDs -> IPUs), the POPDIST_*
 * environment of each instance, the mpirun command line, the topology table and the bridge to
 * sim's topologies.
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

#include "plan/hostlist.h"
#include "wrapper/instance_env.h"
#include "wrapper/instance_setup.h"
#include "launcher/mpirun_cmd.h"
#include "wrapper/numa.h"
#include "plan/plan.h"
#include "plan/print.h"
#include "plan/topo.h"
#include "common/words.h"

/* A topology of NUM_ILDS ILDs of ILD_SIZE IPUs each, as sim's presets are. */
static void make_topo(struct plan_topology *t, const char *name, int num_ilds, int ild_size)
{
    memset(t, 0, sizeof(*t));
    snprintf(t->name, sizeof(t->name), "%s", name);
    t->num_ilds = num_ilds;
    t->num_ipus = num_ilds * ild_size;
    t->ild_first = calloc((size_t)num_ilds, sizeof(int));
    t->ild_size = calloc((size_t)num_ilds, sizeof(int));
    for (int k = 0; k < num_ilds; k++) {
        t->ild_first[k] = k * ild_size;
        t->ild_size[k] = ild_size;
    }
}

struct plan_case {
    const char *topo; /* "POD16" etc.: ILDs x size below */
    int ilds, ild_size;
    int replicas, instances, ipr, req_ilds;
    const char *hosts; /* NULL: local */
    /* Expected: num_ilds, then per instance "host/local/ild/offset/first_ipu" joined by ' '. */
    int want_ilds;
    const char *want;
};

static char *describe(const struct plan *p)
{
    struct strvec items = STRVEC_INIT;
    for (int i = 0; i < p->num_instances; i++) {
        const struct plan_instance *pi = &p->inst[i];
        strvec_push_take(&items, xasprintf("%s/%d/%d/%d/%d", p->hosts.v[pi->host], pi->local_index,
                                           pi->ild, pi->replica_offset, pi->first_ipu));
    }
    char *s = strvec_join(&items, " ");
    strvec_free(&items);
    return s;
}

static void test_plan_table(void **state)
{
    static const struct plan_case cases[] = {
        {"M2000", 1, 4, 1, 1, 1, 0, NULL, 1, "localhost/0/0/0/0"},
        {"POD16", 1, 16, 16, 4, 1, 0, NULL, 1,
         "localhost/0/0/0/0 localhost/1/0/4/4 localhost/2/0/8/8 localhost/3/0/12/12"},
        {"POD16", 1, 16, 16, 4, 1, 0, "h1,h2", 1, "h1/0/0/0/0 h1/1/0/4/4 h2/0/0/8/8 h2/1/0/12/12"},
        {"POD16", 1, 16, 4, 2, 4, 0, "a,b", 1, "a/0/0/0/0 b/0/0/2/8"},
        {"POD16", 1, 16, 8, 8, 2, 0, "h[0-3]", 1,
         "h0/0/0/0/0 h0/1/0/1/2 h1/0/0/2/4 h1/1/0/3/6 h2/0/0/4/8 h2/1/0/5/10 h3/0/0/6/12 "
         "h3/1/0/7/14"},
        /* 64 IPUs fit one ILD of POD128; two ILDs only when asked for. */
        {"POD128", 2, 64, 64, 4, 1, 0, NULL, 1,
         "localhost/0/0/0/0 localhost/1/0/16/16 localhost/2/0/32/32 localhost/3/0/48/48"},
        {"POD128", 2, 64, 64, 4, 1, 2, NULL, 2,
         "localhost/0/0/0/0 localhost/1/0/16/16 localhost/2/1/32/64 localhost/3/1/48/80"},
        {"POD128", 2, 64, 128, 2, 1, 0, "h1,h2", 2, "h1/0/0/0/0 h2/0/1/64/64"},
        /* 192 IPUs on POD256 with 4 instances: 3 ILDs cannot divide 4 instances, so 4 of 48. */
        {"POD256", 4, 64, 192, 4, 1, 0, NULL, 4,
         "localhost/0/0/0/0 localhost/1/1/48/64 localhost/2/2/96/128 localhost/3/3/144/192"},
        {"POD256", 4, 64, 256, 8, 1, 0, "h[1-4]", 4,
         "h1/0/0/0/0 h1/1/0/32/32 h2/0/1/64/64 h2/1/1/96/96 h3/0/2/128/128 h3/1/2/160/160 "
         "h4/0/3/192/192 h4/1/3/224/224"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct plan_case *c = &cases[i];
        struct plan_topology t;
        struct strvec hosts = STRVEC_INIT;
        char err[256];
        make_topo(&t, c->topo, c->ilds, c->ild_size);
        if (c->hosts)
            assert_int_equal(hostlist_expand(c->hosts, &hosts, err, sizeof(err)), 0);
        struct plan_request req = {c->replicas, c->instances, c->ipr, c->req_ilds, &hosts};
        struct plan p;
        if (plan_build(&req, &t, &p, err, sizeof(err)) != 0)
            fail_msg("case %zu: %s", i, err);
        assert_int_equal(p.num_ilds, c->want_ilds);
        assert_int_equal(p.total_ipus, c->replicas * c->ipr);
        char *d = describe(&p);
        if (strcmp(d, c->want) != 0)
            fail_msg("case %zu: got %s, want %s", i, d, c->want);
        free(d);
        /* What each wrapper recomputes without the topology agrees with the full plan. */
        struct plan q;
        assert_int_equal(plan_layout(&req, p.num_ilds, &q, err, sizeof(err)), 0);
        for (int k = 0; k < p.num_instances; k++) {
            assert_int_equal(q.inst[k].host, p.inst[k].host);
            assert_int_equal(q.inst[k].local_index, p.inst[k].local_index);
            assert_int_equal(q.inst[k].ild, p.inst[k].ild);
            assert_int_equal(q.inst[k].replica_offset, p.inst[k].replica_offset);
            assert_int_equal(q.inst[k].first_ipu, -1);
        }
        plan_free(&q);
        plan_free(&p);
        strvec_free(&hosts);
        plan_topology_free(&t);
    }
}

static void test_plan_errors(void **state)
{
    static const struct plan_case cases[] = {
        {"POD16", 1, 16, 10, 4, 1, 0, NULL, 0,
         "10 replicas cannot be divided evenly among 4 instances"},
        {"POD16", 1, 16, 1, 2, 1, 0, NULL, 0,
         "1 replica cannot be divided evenly among 2 instances"},
        {"POD16", 1, 16, 6, 3, 1, 0, "h1,h2", 0,
         "3 instances cannot be divided evenly among 2 hosts"},
        {"POD16", 1, 16, 4, 4, 1, 0, "h[1-8]", 0,
         "4 instances cannot be divided evenly among 8 hosts"},
        {"POD256", 4, 64, 512, 1, 1, 0, NULL, 0,
         "512 IPUs (512 replicas x 1 IPU per replica) exceed the 256 IPUs of topology POD256"},
        {"POD16", 1, 16, 16, 4, 2, 0, NULL, 0,
         "32 IPUs (16 replicas x 2 IPUs per replica) exceed the 16 IPUs of topology POD16"},
        {"POD128", 2, 64, 128, 1, 1, 0, NULL, 0,
         "IPU-Link domain 1 would hold no instance (1 instance over 2 IPU-Link domains; each needs "
         "at least one)"},
        {"POD128", 2, 64, 8, 1, 1, 2, NULL, 0,
         "IPU-Link domain 1 would hold no instance (1 instance over 2 IPU-Link domains; each needs "
         "at least one)"},
        {"POD256", 4, 64, 12, 3, 1, 2, NULL, 0,
         "3 instances cannot be divided evenly among 2 IPU-Link domains"},
        {"POD128", 2, 64, 8, 4, 1, 3, NULL, 0,
         "--num-ilds 3 exceeds the 2 IPU-Link domains of topology POD128"},
        {"POD64", 1, 64, 8, 4, 1, 2, NULL, 0,
         "--num-ilds 2 exceeds the 1 IPU-Link domain of topology POD64"},
        /* 192 IPUs need 3 ILDs of 64, and 2 instances cannot fill 3. */
        {"POD256", 4, 64, 192, 2, 1, 0, NULL, 0,
         "IPU-Link domain 2 would hold no instance (2 instances over 3 IPU-Link domains; each "
         "needs at least one)"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const struct plan_case *c = &cases[i];
        struct plan_topology t;
        struct strvec hosts = STRVEC_INIT;
        char err[256] = "";
        make_topo(&t, c->topo, c->ilds, c->ild_size);
        if (c->hosts)
            assert_int_equal(hostlist_expand(c->hosts, &hosts, err, sizeof(err)), 0);
        struct plan_request req = {c->replicas, c->instances, c->ipr, c->req_ilds, &hosts};
        struct plan p;
        assert_int_equal(plan_build(&req, &t, &p, err, sizeof(err)), -1);
        if (strcmp(err, c->want) != 0)
            fail_msg("case %zu: got '%s', want '%s'", i, err, c->want);
        plan_free(&p);
        strvec_free(&hosts);
        plan_topology_free(&t);
    }
}

static void test_per_ild_fit(void **state)
{
    /* A topology file may make ILDs too small for an even share: 3 ILDs of 4, 12 IPUs over 2. */
    struct plan_topology t;
    make_topo(&t, "tiny", 3, 4);
    struct plan_request req = {12, 2, 1, 2, NULL};
    struct plan p;
    char err[256];
    assert_int_equal(plan_build(&req, &t, &p, err, sizeof(err)), -1);
    assert_string_equal(err, "6 IPUs per IPU-Link domain exceed the 4 IPUs of IPU-Link domain 0 of "
                             "topology tiny");
    plan_free(&p);
    plan_topology_free(&t);
}

static void test_env(void **state)
{
    struct plan_topology t;
    make_topo(&t, "POD16", 1, 16);
    struct strvec hosts = STRVEC_INIT;
    char err[256];
    assert_int_equal(hostlist_expand("h1,h2", &hosts, err, sizeof(err)), 0);
    struct plan_request req = {16, 4, 1, 0, &hosts};
    struct plan p;
    assert_int_equal(plan_build(&req, &t, &p, err, sizeof(err)), 0);
    struct strvec env = STRVEC_INIT;
    instance_env_build(&p, 3, "POD16", false, &env);
    char *j = strvec_join(&env, " ");
    assert_string_equal(j, "POPDIST_NUM_TOTAL_REPLICAS=16 POPDIST_NUM_LOCAL_REPLICAS=4 "
                           "POPDIST_REPLICA_INDEX_OFFSET=12 POPDIST_NUM_IPUS_PER_REPLICA=1 "
                           "POPDIST_NUM_INSTANCES=4 POPDIST_INSTANCE_INDEX=3 "
                           "POPDIST_LOCAL_INSTANCE_INDEX=1 "
                           "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE=1 POPDIST_NUM_ILDS=1 "
                           "POPDIST_TOPOLOGY=POD16 POPDIST_OFFLINE_MODE=0");
    free(j);
    strvec_free(&env);
    instance_env_build(&p, 0, "POD16", true, &env);
    j = strvec_join(&env, " ");
    assert_non_null(strstr(j, "POPDIST_INSTANCE_INDEX=0 POPDIST_LOCAL_INSTANCE_INDEX=0 "));
    assert_non_null(strstr(j, " POPDIST_OFFLINE_MODE=1 GCL_SIM_PHANTOM=1"));
    free(j);
    strvec_free(&env);
    plan_free(&p);
    strvec_free(&hosts);
    plan_topology_free(&t);
}

static void test_mpirun_argv(void **state)
{
    struct plan_topology t;
    make_topo(&t, "POD16", 1, 16);
    struct poprun_options o;
    options_init(&o);
    o.num_replicas = 16;
    o.num_instances = 4;
    /* Across hosts: the daemons' keepalive probes, except what the user set himself. */
    o.mpi_global_args =
        xstrdup("--mca btl_tcp_if_include '10.1.2.0/24' -mca oob_tcp_keepalive_time 7");
    o.mpi_local_args = xstrdup("-x 'A=a b'");
    o.offline_mode = true;
    o.only_output_from_instance = 2;
    o.verbose = 1;
    strvec_push(&o.program, "./train");
    strvec_push(&o.program, "--epochs=2");
    struct strvec hosts = STRVEC_INIT;
    char err[256];
    assert_int_equal(hostlist_expand("h[1-2]", &hosts, err, sizeof(err)), 0);
    struct plan_request req = {16, 4, 1, 0, &hosts};
    struct plan p;
    assert_int_equal(plan_build(&req, &t, &p, err, sizeof(err)), 0);
    struct mpirun_cmd cmd = {&o,   &p,   "mpirun",   "/opt/poprun", "abc123", "POD16",
                             true, NULL, "job-0123", NULL,          NULL,     false};
    struct strvec argv = STRVEC_INIT;
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    char *line = words_join_quoted(&argv);
    assert_string_equal(line,
                        "mpirun --allow-run-as-root --oversubscribe --bind-to none "
                        "--host h1:2,h2:2 --map-by slot --mca oob_tcp_keepalive_intvl 1 --mca "
                        "oob_tcp_keepalive_probes 3 --mca btl_tcp_if_include 10.1.2.0/24 -mca "
                        "oob_tcp_keepalive_time 7 -np 4 -x POPRUN_JOB_ID=job-0123 -x 'A=a b' "
                        "/opt/poprun --_instance abc123 "
                        "--num-replicas 16 "
                        "--num-instances 4 --ipus-per-replica 1 --num-ilds 1 --topology POD16 "
                        "--host h1,h2 --offline-mode --only-output-from-instance 2 -v -- ./train "
                        "--epochs=2");
    free(line);
    strvec_free(&argv);

    /* Local, not root: no --host, no --allow-run-as-root. */
    plan_free(&p);
    struct plan_request local = {2, 2, 1, 0, NULL};
    assert_int_equal(plan_build(&local, &t, &p, err, sizeof(err)), 0);
    free(o.mpi_global_args);
    free(o.mpi_local_args);
    o.mpi_global_args = o.mpi_local_args = NULL;
    o.offline_mode = false;
    o.only_output_from_instance = -1;
    o.verbose = 0;
    cmd.placement = "spreadnuma"; /* the launcher's choice (binding.h) reaches the wrappers */
    cmd.as_root = false;
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_string_equal(
        line,
        "mpirun --oversubscribe --bind-to none -np 2 -x "
        "POPRUN_JOB_ID=job-0123 /opt/poprun --_instance abc123 --num-replicas 2 --num-instances 2 "
        "--ipus-per-replica 1 --num-ilds 1 --topology POD16 "
        "--process-placement=spreadnuma -- ./train --epochs=2");
    free(line);
    strvec_free(&argv);

    /* --host-subnet reaches mpirun's tcp and the wrappers; -x words come first in the
     * application context; repeated --mpi-local-args add up; the cache path is the absolute one
     * the job made. */
    cmd.placement = NULL;
    o.host_subnet = xstrdup("10.5.0.0/16");
    o.export_env = xstrdup("FOO=bar 'B=c d'");
    o.mpi_local_args = xstrdup("-x A -x 'C=1 2'");
    cmd.cache_path = "/tmp/cache";
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_string_equal(line, "mpirun --oversubscribe --bind-to none --mca btl_tcp_if_include "
                              "10.5.0.0/16 --mca oob_tcp_if_include 10.5.0.0/16 -np 2 -x "
                              "POPRUN_JOB_ID=job-0123 -x FOO=bar -x 'B=c d' -x A -x 'C=1 2' "
                              "/opt/poprun --_instance abc123 "
                              "--num-replicas 2 --num-instances 2 --ipus-per-replica 1 "
                              "--num-ilds 1 --topology POD16 --host-subnet 10.5.0.0/16 "
                              "--executable-cache-path /tmp/cache -- ./train --epochs=2");
    free(line);
    strvec_free(&argv);
    free(o.mpi_local_args);
    o.mpi_local_args = NULL;
    cmd.cache_path = NULL;
    /* mpirun refuses an MCA parameter given twice: the user's own setting wins. */
    free(o.export_env);
    o.export_env = NULL;
    o.mpi_global_args = xstrdup("--mca btl_tcp_if_include eth1");
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_non_null(strstr(line, "--bind-to none --mca oob_tcp_if_include 10.5.0.0/16 --mca "
                                 "btl_tcp_if_include eth1 -np 2 "));
    free(line);
    strvec_free(&argv);
    free(o.mpi_global_args);
    o.mpi_global_args = NULL;

    o.mpi_global_args = xstrdup("--mca 'x");
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), -1);
    assert_string_equal(err, "--mpi-global-args: unterminated single quote");
    strvec_free(&argv);
    plan_free(&p);
    strvec_free(&hosts);
    options_free(&o);
    plan_topology_free(&t);
}

/* mpirun's session directory goes in the job's directory, unless the user named a base. */
static void test_mpirun_session_base(void **state)
{
    (void)state;
    struct plan_topology t;
    make_topo(&t, "POD16", 1, 16);
    struct poprun_options o;
    options_init(&o);
    strvec_push(&o.program, "./train");
    char err[256];
    struct plan_request local = {2, 2, 1, 0, NULL};
    struct plan p;
    assert_int_equal(plan_build(&local, &t, &p, err, sizeof(err)), 0);
    struct mpirun_cmd cmd = {&o,      &p,    "mpirun", "/opt/poprun", "abc123",
                             "M2000", false, NULL,     "job-0123",    "/dev/shm/poprun-job-0123",
                             NULL,    false};
    const char *own = "--bind-to none --mca orte_tmpdir_base /dev/shm/poprun-job-0123 -np 2";
    struct strvec argv = STRVEC_INIT;
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    char *line = words_join_quoted(&argv);
    assert_non_null(strstr(line, own));
    free(line);
    strvec_free(&argv);
    static const char *const users[] = {"--mca orte_tmpdir_base /scratch",
                                        "-mca orte_local_tmpdir_base /scratch",
                                        "--mca orte_remote_tmpdir_base /scratch"};
    for (int i = 0; i < 3; i++) {
        o.mpi_global_args = xstrdup(users[i]);
        assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
        line = words_join_quoted(&argv);
        assert_null(strstr(line, "poprun-job-0123 "));
        assert_non_null(strstr(line, users[i]));
        free(line);
        strvec_free(&argv);
        free(o.mpi_global_args);
        o.mpi_global_args = NULL;
    }
    setenv("OMPI_MCA_orte_tmpdir_base", "/scratch", 1);
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    unsetenv("OMPI_MCA_orte_tmpdir_base");
    line = words_join_quoted(&argv);
    assert_null(strstr(line, "orte_tmpdir_base"));
    free(line);
    strvec_free(&argv);
    /* Across hosts: OpenMPI's own place (the base would be made on every host). */
    plan_free(&p);
    struct strvec hosts = STRVEC_INIT;
    assert_int_equal(hostlist_expand("h[1-2]", &hosts, err, sizeof(err)), 0);
    struct plan_request across = {2, 2, 1, 0, &hosts};
    assert_int_equal(plan_build(&across, &t, &p, err, sizeof(err)), 0);
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_non_null(strstr(line, "--host h1:1,h2:1"));
    assert_null(strstr(line, "orte_tmpdir_base"));
    assert_null(strstr(line, "orte_launch_agent"));
    free(line);
    strvec_free(&argv);
    /* In a Slurm allocation, orted through poprun's agent (orted_agent.h), unless the user's. */
    cmd.slurm = true;
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_non_null(strstr(line, "--mca orte_launch_agent '/opt/poprun --_orted' -np 2"));
    free(line);
    strvec_free(&argv);
    o.mpi_global_args = xstrdup("--mca orte_launch_agent my-orted");
    assert_int_equal(mpirun_cmd_build(&cmd, &argv, err, sizeof(err)), 0);
    line = words_join_quoted(&argv);
    assert_null(strstr(line, "_orted"));
    free(line);
    strvec_free(&argv);
    strvec_free(&hosts);
    plan_free(&p);
    options_free(&o);
    plan_topology_free(&t);
}

/* Prints the table of a plan into a string. */
static char *table_of(const struct plan *p, const struct plan_topology *t)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    print_topology(f, p, t);
    fclose(f);
    return buf;
}

static void test_print_topology(void **state)
{
    struct plan_topology t;
    make_topo(&t, "POD128", 2, 64);
    struct strvec hosts = STRVEC_INIT;
    char err[256];
    assert_int_equal(hostlist_expand("node[1-2]", &hosts, err, sizeof(err)), 0);
    struct plan_request req = {8, 4, 2, 2, &hosts};
    struct plan p;
    assert_int_equal(plan_build(&req, &t, &p, err, sizeof(err)), 0);
    char *s = table_of(&p, &t);
    assert_string_equal(s, "topology POD128: 128 IPUs in 2 IPU-Link domains\n"
                           "job: 8 replicas x 2 IPUs = 16 IPUs; 4 instances on 2 hosts; "
                           "2 IPU-Link domains\n"
                           "host   ild  instance  replicas   ipus\n"
                           "node1  0    0         0-1        0-3\n"
                           "node1  0    1         2-3        4-7\n"
                           "node2  1    2         4-5        64-67\n"
                           "node2  1    3         6-7        68-71\n");
    free(s);
    plan_free(&p);
    struct plan_request one = {1, 1, 1, 0, NULL};
    assert_int_equal(plan_build(&one, &t, &p, err, sizeof(err)), 0);
    s = table_of(&p, &t);
    assert_string_equal(s, "topology POD128: 128 IPUs in 2 IPU-Link domains\n"
                           "job: 1 replica x 1 IPU = 1 IPU; 1 instance on 1 host; "
                           "1 IPU-Link domain\n"
                           "host       ild  instance  replicas   ipus\n"
                           "localhost  0    0         0          0\n");
    free(s);
    plan_free(&p);
    strvec_free(&hosts);
    plan_topology_free(&t);
}

/* The bridge to sim: presets, the default, files and errors. */
static void test_topo_resolve(void **state)
{
    struct plan_topology t;
    char *spec = NULL, err[512];
    assert_int_equal(topo_resolve(NULL, 16, 1, &t, &spec, err, sizeof(err)), 0);
    assert_string_equal(spec, "POD16");
    assert_int_equal(t.num_ipus, 16);
    assert_int_equal(t.num_ilds, 1);
    free(spec);
    plan_topology_free(&t);
    assert_int_equal(topo_resolve(NULL, 64, 2, &t, &spec, err, sizeof(err)), 0);
    assert_string_equal(spec, "POD128");
    assert_int_equal(t.num_ilds, 2);
    assert_int_equal(t.ild_first[1], 64);
    assert_int_equal(t.ild_size[1], 64);
    free(spec);
    plan_topology_free(&t);
    assert_int_equal(topo_resolve("pod256", 1, 1, &t, &spec, err, sizeof(err)), 0);
    assert_string_equal(spec, "POD256");
    assert_int_equal(t.num_ilds, 4);
    free(spec);
    plan_topology_free(&t);
    assert_int_equal(topo_resolve(NULL, 512, 1, &t, &spec, err, sizeof(err)), -1);
    assert_string_equal(err, "512 IPUs (512 replicas x 1 IPU per replica) exceed the largest "
                             "preset topology, POD256 (256 IPUs); describe a larger pod with "
                             "--topology FILE");
    assert_int_equal(topo_resolve("POD32", 1, 1, &t, &spec, err, sizeof(err)), -1);
    assert_string_equal(err, "--topology POD32: not a preset (M2000, POD16, POD64, POD128, "
                             "POD256) and not a file");

    char path[] = "/tmp/poprun-topo-XXXXXX";
    int fd = mkstemp(path);
    const char *text = "name bigpod\nipus 512\nild_size 64\n";
    assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
    assert_int_equal(topo_resolve(path, 512, 1, &t, &spec, err, sizeof(err)), 0);
    assert_string_equal(spec, path);
    assert_string_equal(t.name, "bigpod");
    assert_int_equal(t.num_ipus, 512);
    assert_int_equal(t.num_ilds, 8);
    free(spec);
    plan_topology_free(&t);
    unlink(path);
}

/* --process-placement spreadnuma: NUMA nodes divided among a host's instances. */
static void test_numa_share(void **state)
{
    static const struct {
        int index, count, nodes, first, n;
    } cases[] = {
        {0, 2, 4, 0, 2}, {1, 2, 4, 2, 2}, {0, 1, 2, 0, 2}, {0, 3, 4, 0, 1}, {1, 3, 4, 1, 1},
        {2, 3, 4, 2, 2}, {0, 4, 1, 0, 1}, {3, 4, 1, 0, 1}, {3, 4, 2, 1, 1}, {5, 8, 8, 5, 1},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        int first, n;
        numa_share(cases[i].index, cases[i].count, cases[i].nodes, &first, &n);
        assert_int_equal(first, cases[i].first);
        assert_int_equal(n, cases[i].n);
    }
}

/* --host-subnet's test of addresses, and --executable-cache-path's directories. */
static void test_host_setup(void **state)
{
    unsigned long a = (10UL << 24) | (77UL << 16) | 3; /* 10.77.0.3 */
    assert_int_equal(setup_in_subnet(a, "10.77.0.0/24"), 1);
    assert_int_equal(setup_in_subnet(a, "10.77.1.0/24"), 0);
    assert_int_equal(setup_in_subnet(a, "10.0.0.0/8"), 1);
    assert_int_equal(setup_in_subnet(a, "0.0.0.0/0"), 1);
    assert_int_equal(setup_in_subnet(a, "10.77.0.3/32"), 1);
    assert_int_equal(setup_in_subnet(a, "eth0"), -1);
    char iface[64];
    assert_int_equal(setup_subnet_iface("127.0.0.0/8", iface, sizeof(iface)), 0);
    assert_string_equal(iface, "lo");
    assert_int_equal(setup_subnet_iface("eth7", iface, sizeof(iface)), 0);
    assert_string_equal(iface, "eth7");
    assert_int_equal(setup_subnet_iface("203.0.113.0/24", iface, sizeof(iface)), -1);

    char dir[] = "/tmp/poprun-cache-XXXXXX", err[256];
    assert_non_null(mkdtemp(dir));
    char *deep = xasprintf("%s/a/b/c", dir);
    assert_int_equal(setup_cache_dir(deep, err, sizeof(err)), 0);
    assert_int_equal(setup_cache_dir(deep, err, sizeof(err)), 0); /* it exists: fine */
    char *file = xasprintf("%s/f", dir);
    FILE *f = fopen(file, "w");
    fclose(f);
    char *under = xasprintf("%s/x", file);
    assert_int_equal(setup_cache_dir(under, err, sizeof(err)), -1);
    char want[512];
    snprintf(want, sizeof(want), "--executable-cache-path: %s is not a directory", file);
    assert_string_equal(err, want);
    char *cmd = xasprintf("rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
    free(under);
    free(file);
    free(deep);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_plan_table),     cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_per_ild_fit),    cmocka_unit_test(test_env),
        cmocka_unit_test(test_mpirun_argv),    cmocka_unit_test(test_mpirun_session_base),
        cmocka_unit_test(test_print_topology), cmocka_unit_test(test_topo_resolve),
        cmocka_unit_test(test_numa_share),     cmocka_unit_test(test_host_setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
