/*
 * Unit tests of poprun inside a Slurm allocation (slurm.c: the variables, where instances go,
 * what is refused) and of the launcher's choice of binding (binding.c).
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
#include "cli/options.h"
#include "plan/binding.h"
#include "plan/plan.h"
#include "plan/slurm.h"

/* Node lists and Slurm's compressed task counts. */
static void test_parse(void **state)
{
    (void)state;
    static const struct {
        const char *nodes, *tasks;
        int n, total;
        const char *first, *last;
        int last_tasks;
    } cases[] = {
        {"h[1-2]", "2(x2)", 2, 4, "h1", "h2", 2},
        {"node[01-03],gpu7", "2(x3),1", 4, 7, "node01", "gpu7", 1},
        {"a1", "16", 1, 16, "a1", "a1", 16},
        {"r[1-2]n[1-2]", "1,2,3,4", 4, 10, "r1n1", "r2n2", 4},
        {"c[1,3,5-6]", "4(x4)", 4, 16, "c1", "c6", 4},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct slurm_alloc a;
        char err[512];
        assert_int_equal(slurm_alloc_parse("7", cases[i].nodes, "SLURM_TASKS_PER_NODE",
                                           cases[i].tasks, &a, err, sizeof err),
                         0);
        assert_int_equal(a.nodes.n, cases[i].n);
        assert_int_equal(a.total_tasks, cases[i].total);
        assert_string_equal(a.nodes.v[0], cases[i].first);
        assert_string_equal(a.nodes.v[a.nodes.n - 1], cases[i].last);
        assert_int_equal(a.tasks[a.nodes.n - 1], cases[i].last_tasks);
        slurm_alloc_free(&a);
    }
}

/* Every malformed variable is one line naming it and its value. */
static void test_parse_errors(void **state)
{
    (void)state;
    static const struct {
        const char *nodes, *tasks, *err;
    } cases[] = {
        {"h[1-", "1",
         "Slurm allocation 7: SLURM_JOB_NODELIST: malformed host list 'h[1-': "
         "missing ']'"},
        {"h[2-1]", "1",
         "Slurm allocation 7: SLURM_JOB_NODELIST: malformed host list 'h[2-1]': "
         "range 2-1 runs backwards"},
        {"h1,,h2", "1",
         "Slurm allocation 7: SLURM_JOB_NODELIST: malformed host list 'h1,,h2': "
         "empty host name"},
        {"", "1", "Slurm allocation 7: SLURM_JOB_NODELIST is not set"},
        {"h[1-2]", "2(x",
         "Slurm allocation 7: SLURM_TASKS_PER_NODE=2(x is not understood "
         "(expected counts such as 2 or 2(x3), separated by commas)"},
        {"h[1-2]", "0,1",
         "Slurm allocation 7: SLURM_TASKS_PER_NODE=0,1 is not understood "
         "(expected counts such as 2 or 2(x3), separated by commas)"},
        {"h[1-2]", "2(x3)",
         "Slurm allocation 7: SLURM_TASKS_PER_NODE=2(x3) gives 3 nodes, "
         "SLURM_JOB_NODELIST 2"},
        {"h[1-2]", "2",
         "Slurm allocation 7: SLURM_TASKS_PER_NODE=2 gives 1 node, "
         "SLURM_JOB_NODELIST 2"},
        {"h[1-2]", "",
         "Slurm allocation 7: neither SLURM_TASKS_PER_NODE nor "
         "SLURM_JOB_CPUS_PER_NODE is set"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct slurm_alloc a;
        char err[512];
        assert_int_equal(slurm_alloc_parse("7", cases[i].nodes, "SLURM_TASKS_PER_NODE",
                                           cases[i].tasks, &a, err, sizeof err),
                         -1);
        assert_string_equal(err, cases[i].err);
        slurm_alloc_free(&a);
    }
}

/* The hosts a job of I instances gets on an allocation, joined by commas, or the error. */
static void pick(const char *nodes, const char *tasks, int instances, const char *want)
{
    struct slurm_alloc a;
    struct strvec hosts = STRVEC_INIT;
    char err[512];
    assert_int_equal(
        slurm_alloc_parse("7", nodes, "SLURM_TASKS_PER_NODE", tasks, &a, err, sizeof err), 0);
    if (slurm_alloc_pick(&a, instances, &hosts, err, sizeof err) == 0) {
        char *got = strvec_join(&hosts, ",");
        assert_string_equal(got, want);
        free(got);
    } else {
        assert_string_equal(err, want);
    }
    strvec_free(&hosts);
    slurm_alloc_free(&a);
}

static void test_pick(void **state)
{
    (void)state;
    pick("h[1-2]", "2(x2)", 4, "h1,h2");
    pick("h[1-2]", "2(x2)", 2, "h1,h2");
    pick("h[1-2]", "2(x2)", 1, "h1");
    pick("h[1-4]", "2(x4)", 6, "h1,h2,h3");
    pick("h[1-2]", "4,1", 2, "h1,h2");
    pick("h[1-2]", "4,1", 4, "h1");
    pick("h[1-2]", "2(x2)", 8,
         "8 instances exceed the 4 tasks of Slurm allocation 7 (SLURM_TASKS_PER_NODE=2(x2) on "
         "h[1-2]): ask Slurm for more tasks (sbatch -n, --ntasks-per-node) or start fewer "
         "instances");
    pick("h[1-2]", "2(x2)", 3,
         "3 instances cannot go to the nodes of Slurm allocation 7 the same number on each "
         "(SLURM_TASKS_PER_NODE=2(x2) on h[1-2]); name the hosts with -H, or ask for tasks that "
         "divide them");
}

/* Hosts the user named must be nodes of the allocation, each with room for its instances. */
static void test_check(void **state)
{
    (void)state;
    struct slurm_alloc a;
    struct strvec hosts = STRVEC_INIT;
    char err[512];
    assert_int_equal(
        slurm_alloc_parse("7", "h[1-2]", "SLURM_TASKS_PER_NODE", "2,1", &a, err, sizeof err), 0);
    assert_int_equal(hostlist_expand("h1", &hosts, err, sizeof err), 0);
    assert_int_equal(slurm_alloc_check(&a, &hosts, 2, "-H", err, sizeof err), 0);
    assert_int_equal(slurm_alloc_check(&a, &hosts, 3, "-H", err, sizeof err), -1);
    assert_string_equal(err, "3 instances on host h1 exceed its 2 tasks in Slurm allocation 7 "
                             "(SLURM_TASKS_PER_NODE=2,1 on h[1-2])");
    strvec_free(&hosts);
    assert_int_equal(hostlist_expand("h[1-2]", &hosts, err, sizeof err), 0);
    assert_int_equal(slurm_alloc_check(&a, &hosts, 4, "-H", err, sizeof err), -1);
    assert_string_equal(err, "4 instances exceed the 3 tasks of Slurm allocation 7 "
                             "(SLURM_TASKS_PER_NODE=2,1 on h[1-2]): ask Slurm for more tasks "
                             "(sbatch -n, --ntasks-per-node) or start fewer instances");
    strvec_free(&hosts);
    assert_int_equal(hostlist_expand("h2,h3", &hosts, err, sizeof err), 0);
    assert_int_equal(slurm_alloc_check(&a, &hosts, 2, "--hostfile", err, sizeof err), -1);
    assert_string_equal(err, "host h3 (--hostfile) is not a node of Slurm allocation 7 (h[1-2])");
    strvec_free(&hosts);
    char *line = slurm_alloc_describe(&a);
    assert_string_equal(line, "Slurm allocation 7: nodes h[1-2] (SLURM_JOB_NODELIST), tasks 2,1 "
                              "(SLURM_TASKS_PER_NODE)");
    free(line);
    slurm_alloc_free(&a);
}

/* Outside an allocation nothing is read; inside, the job's variables (tasks, else CPUs). */
static void test_from_env(void **state)
{
    (void)state;
    struct slurm_alloc a;
    char err[512];
    unsetenv("SLURM_JOB_ID");
    unsetenv("SLURM_JOBID");
    setenv("SLURM_JOB_NODELIST", "h[1-2]", 1);
    assert_int_equal(slurm_alloc_from_env(&a, err, sizeof err), 0);
    assert_null(a.job_id);
    setenv("SLURM_JOBID", "9", 1);
    unsetenv("SLURM_TASKS_PER_NODE");
    setenv("SLURM_JOB_CPUS_PER_NODE", "2(x2)", 1);
    if (access("/usr/bin/srun", X_OK) == 0) {
        assert_int_equal(slurm_alloc_from_env(&a, err, sizeof err), 1);
        assert_string_equal(a.job_id, "9");
        assert_string_equal(a.tasks_var, "SLURM_JOB_CPUS_PER_NODE");
        assert_int_equal(a.total_tasks, 4);
        slurm_alloc_free(&a);
    }
    setenv("SLURM_TASKS_PER_NODE", "1(x2)", 1);
    char *path = getenv("PATH") ? strdup(getenv("PATH")) : NULL;
    setenv("PATH", "/nonexistent", 1);
    assert_int_equal(slurm_alloc_from_env(&a, err, sizeof err), -1);
    assert_string_equal(err, "SLURM_JOB_ID is set (Slurm allocation 9) but srun is not on PATH: "
                             "mpirun starts its daemons on the nodes with srun (is Slurm "
                             "installed?)");
    slurm_alloc_free(&a);
    if (path)
        setenv("PATH", path, 1);
    free(path);
    unsetenv("SLURM_JOBID");
    unsetenv("SLURM_JOB_NODELIST");
    unsetenv("SLURM_TASKS_PER_NODE");
    unsetenv("SLURM_JOB_CPUS_PER_NODE");
}

/* The choice of binding for a plan on HOSTS (NULL: this host), given DIR of namespaces. */
static const char *choose(struct poprun_options *o, const char *hosts, const char *dir, char *note,
                          size_t len)
{
    struct strvec hv = STRVEC_INIT;
    char err[256];
    if (hosts)
        assert_int_equal(hostlist_expand(hosts, &hv, err, sizeof err), 0);
    struct plan_request req = {hv.n > 0 ? hv.n * 2 : 2, hv.n > 0 ? hv.n * 2 : 2, 1, 1, &hv};
    struct plan p;
    assert_int_equal(plan_layout(&req, 1, &p, err, sizeof err), 0);
    const char *got = placement_choose(o, &p, dir, note, len);
    plan_free(&p);
    strvec_free(&hv);
    return got;
}

/* This host alone, distinct hosts, and namespace hosts of this machine. */
static void test_placement(void **state)
{
    (void)state;
    struct poprun_options o;
    char dir[] = "/tmp/poprun-netns-XXXXXX", note[512], path[600];
    assert_non_null(mkdtemp(dir));
    options_init(&o);
    unsetenv("OMPI_MCA_hwloc_base_binding_policy");
    unsetenv("NETNS_CLUSTER_ID");
    /* This host alone, and distinct hosts: cores. */
    assert_string_equal(choose(&o, NULL, dir, note, sizeof note), "spreadcores");
    assert_string_equal(note, "");
    assert_string_equal(choose(&o, "h[1-2]", dir, note, sizeof note), "spreadcores");
    /* Namespace hosts: those of the cluster this runs in, or named as the host. */
    snprintf(path, sizeof path, "%s/nc1234-h1", dir);
    fclose(fopen(path, "w"));
    assert_string_equal(choose(&o, "h[1-2]", dir, note, sizeof note), "spreadcores");
    setenv("NETNS_CLUSTER_ID", "nc1234", 1);
    assert_null(choose(&o, "h[1-2]", dir, note, sizeof note));
    assert_string_equal(note, "poprun: instances are not bound to cores: host h1 is a network "
                              "namespace of this machine, whose cores its instances share "
                              "(--process-placement spreadcores binds anyway)");
    unsetenv("NETNS_CLUSTER_ID");
    snprintf(path, sizeof path, "%s/h2", dir);
    fclose(fopen(path, "w"));
    assert_null(choose(&o, "h[1-2]", dir, note, sizeof note));
    assert_non_null(strstr(note, "host h2 is a network namespace"));
    options_free(&o);
    char *cmd = malloc(strlen(dir) + 16);
    sprintf(cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

/* The options win over the hosts, in their order of precedence. */
static void test_placement_options(void **state)
{
    (void)state;
    struct poprun_options o;
    char dir[] = "/tmp/poprun-netns-XXXXXX", note[512], path[600];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/h2", dir);
    fclose(fopen(path, "w"));
    options_init(&o);
    unsetenv("OMPI_MCA_hwloc_base_binding_policy");
    o.process_placement = strdup("spreadcores");
    assert_string_equal(choose(&o, "h[1-2]", dir, note, sizeof note), "spreadcores");
    free(o.process_placement);
    o.process_placement = strdup("disabled");
    assert_null(choose(&o, NULL, dir, note, sizeof note));
    free(o.process_placement);
    o.process_placement = NULL;
    o.numa_aware = 1;
    assert_string_equal(choose(&o, "h[1-2]", dir, note, sizeof note), "spreadnuma");
    o.numa_aware = 0;
    static const char *const binds[] = {"--bind-to core",
                                        "-bind-to socket",
                                        "--bind-to=core",
                                        "--tag-output --cpu-set 0,1",
                                        "--cpu-list 0",
                                        "-rf ranks.txt",
                                        "--mca hwloc_base_binding_policy core"};
    for (size_t i = 0; i < sizeof binds / sizeof binds[0]; i++) {
        o.mpi_global_args = strdup(binds[i]);
        assert_null(choose(&o, NULL, dir, note, sizeof note));
        free(o.mpi_global_args);
    }
    o.mpi_global_args = strdup("--tag-output --report-bindings --mca btl tcp,self");
    assert_string_equal(choose(&o, NULL, dir, note, sizeof note), "spreadcores");
    free(o.mpi_global_args);
    o.mpi_global_args = NULL;
    setenv("OMPI_MCA_hwloc_base_binding_policy", "core", 1);
    assert_null(choose(&o, NULL, dir, note, sizeof note));
    unsetenv("OMPI_MCA_hwloc_base_binding_policy");
    options_free(&o);
    char *cmd = malloc(strlen(dir) + 16);
    sprintf(cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
    free(cmd);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_parse),
        cmocka_unit_test(test_parse_errors),
        cmocka_unit_test(test_pick),
        cmocka_unit_test(test_check),
        cmocka_unit_test(test_from_env),
        cmocka_unit_test(test_placement),
        cmocka_unit_test(test_placement_options),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
