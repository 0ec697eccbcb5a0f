/*
 * What a program (or a launcher) tells libgcl: PopDist's variables as Graphcore's PopRun sets
 * them, GCL_LOG_LEVEL's names, the version, gcl_config_t of any size and its fields, the reason
 * gcl_init failed, GCL's method and operator names, and GCL_OPTIONS' JSON. Links the internals
 * (gcl_internal) to read the parameters back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gcl/gcl.h"
#include "gcl/popdist.h"
#include "coll/types.h"
#include "instance/config.h"
#include "base/log.h"
#include "base/param.h"
#include "job/popdist.h"
#include "base/vocab/vocab.h"

static const char *const popdist_vars[] = {
    "POPDIST_NUM_INSTANCES",
    "POPDIST_INSTANCE_INDEX",
    "POPDIST_NUM_TOTAL_REPLICAS",
    "POPDIST_NUM_LOCAL_REPLICAS",
    "POPDIST_REPLICA_INDEX_OFFSET",
    "POPDIST_NUM_IPUS_PER_REPLICA",
    "POPDIST_LOCAL_INSTANCE_INDEX",
    "POPDIST_EXECUTABLE_CACHE_PATH",
    "OMPI_COMM_WORLD_SIZE",
    "OMPI_COMM_WORLD_RANK",
    "PMI_SIZE",
    "PMI_RANK",
    "SLURM_STEP_ID",
    "SLURM_STEP_NUM_TASKS",
    "SLURM_PROCID",
    "SLURM_NTASKS",
    "GCL_LOG_LEVEL",
    "GCL_OPTIONS",
    "GCL_ALLREDUCE_ALGO",
    "GCL_REDUCE_SCATTER_ALGO",
    "GCL_ALLGATHER_ALGO",
    "GCL_SIM_PHANTOM",
    "GCL_TOPOLOGY",
    "POPDIST_TOPOLOGY",
    "POPDIST_OFFLINE_MODE",
};

static int clean(void **state)
{
    (void)state;
    for (size_t i = 0; i < sizeof popdist_vars / sizeof popdist_vars[0]; i++)
        unsetenv(popdist_vars[i]);
    return 0;
}

/* Only the variables Graphcore's PopRun sets: instance 2 of 4, replicas 8..11 of 16. */
static void test_real_poprun_variables(void **state)
{
    (void)state;
    setenv("POPDIST_NUM_TOTAL_REPLICAS", "16", 1);
    setenv("POPDIST_NUM_LOCAL_REPLICAS", "4", 1);
    setenv("POPDIST_REPLICA_INDEX_OFFSET", "8", 1);
    setenv("POPDIST_NUM_IPUS_PER_REPLICA", "2", 1);
    setenv("POPDIST_LOCAL_INSTANCE_INDEX", "1", 1);
    assert_int_equal(popdist_is_set(), 1);
    assert_int_equal(popdist_num_instances(), 4);
    assert_int_equal(popdist_instance_index(), 2);
    assert_int_equal(popdist_local_instance_index(), 1);
    assert_int_equal(popdist_num_local_replicas(), 4);
    assert_int_equal(popdist_replica_index_offset(), 8);
    assert_int_equal(popdist_num_ipus_per_replica(), 2);
    assert_null(popdist_executable_cache_path());
    gcl_popdist_t pd;
    char err[256];
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 4);
    assert_int_equal(pd.instance_index, 2);
    assert_int_equal(pd.local_instance_index, 1);
    assert_int_equal(pd.num_local_replicas, 4);
    assert_int_equal(pd.replica_offset, 8);
    assert_int_equal(pd.ipus_per_replica, 2);

    /* Ours wins where both are set. */
    setenv("POPDIST_NUM_INSTANCES", "4", 1);
    setenv("POPDIST_INSTANCE_INDEX", "2", 1);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.instance_index, 2);
    unsetenv("POPDIST_NUM_INSTANCES");
    unsetenv("POPDIST_INSTANCE_INDEX");

    setenv("POPDIST_REPLICA_INDEX_OFFSET", "6", 1);
    assert_int_equal(popdist_instance_index(), 0); /* not a whole instance: the default */
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(err, "inconsistent POPDIST_* variables: POPDIST_REPLICA_INDEX_OFFSET is "
                             "not a multiple of POPDIST_NUM_LOCAL_REPLICAS");
    setenv("POPDIST_REPLICA_INDEX_OFFSET", "8", 1);
    setenv("POPDIST_NUM_LOCAL_REPLICAS", "5", 1);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(err, "inconsistent POPDIST_* variables: POPDIST_NUM_LOCAL_REPLICAS does "
                             "not divide POPDIST_NUM_TOTAL_REPLICAS");
    setenv("POPDIST_EXECUTABLE_CACHE_PATH", "/tmp/cache", 1);
    assert_string_equal(popdist_executable_cache_path(), "/tmp/cache");
    clean(NULL);
    assert_int_equal(popdist_is_set(), 0);
    assert_int_equal(popdist_num_instances(), 1);
    assert_int_equal(popdist_local_instance_index(), 0);
}

/* Without POPDIST_*, a plain mpirun's ranks are the instances (gcl_config_t.mpi_world 0 or 1);
 * -1 declines it. */
static void test_mpi_world(void **state)
{
    (void)state;
    gcl_popdist_t pd;
    char err[256];
    setenv("OMPI_COMM_WORLD_SIZE", "4", 1);
    setenv("OMPI_COMM_WORLD_RANK", "3", 1);
    assert_int_equal(gcl_popdist_read(&pd, 2, 1, 1, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 4);
    assert_int_equal(pd.instance_index, 3);
    assert_int_equal(pd.num_total_replicas, 8);
    assert_int_equal(pd.num_local_replicas, 2);
    assert_int_equal(pd.replica_offset, 6);
    assert_int_equal(pd.mpi_world, 1);
    /* The default is the same; -1 declines: one instance, a job of its own. */
    assert_int_equal(gcl_popdist_read(&pd, 2, 1, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 4);
    assert_int_equal(pd.mpi_world, 1);
    assert_int_equal(gcl_popdist_read(&pd, 2, 1, -1, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 1);
    assert_int_equal(pd.num_total_replicas, 2);
    /* POPDIST_* win over mpirun's world. */
    setenv("POPDIST_NUM_TOTAL_REPLICAS", "4", 1);
    setenv("POPDIST_NUM_LOCAL_REPLICAS", "1", 1);
    setenv("POPDIST_REPLICA_INDEX_OFFSET", "3", 1);
    assert_int_equal(gcl_popdist_read(&pd, 2, 1, 1, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_total_replicas, 4);
    assert_int_equal(pd.instance_index, 3);
    assert_int_equal(pd.mpi_world, 0);
    clean(NULL);
}

/* The tasks of an srun step are the instances, as mpirun's ranks are (srun --mpi=pmix sets no
 * size of its own before MPI_Init); a batch script, which has SLURM_PROCID and SLURM_NTASKS
 * but no step, is not. */
static void test_srun_world(void **state)
{
    (void)state;
    gcl_popdist_t pd;
    char err[256];
    setenv("SLURM_PROCID", "0", 1);
    setenv("SLURM_NTASKS", "4", 1);
    assert_int_equal(gcl_popdist_read(&pd, 1, 1, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 1);
    assert_int_equal(pd.mpi_world, 0);
    setenv("SLURM_STEP_ID", "0", 1);
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    setenv("SLURM_PROCID", "2", 1);
    assert_int_equal(gcl_popdist_read(&pd, 2, 1, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 4);
    assert_int_equal(pd.instance_index, 2);
    assert_int_equal(pd.num_total_replicas, 8);
    assert_int_equal(pd.replica_offset, 4);
    assert_int_equal(pd.mpi_world, 1);
    assert_int_equal(gcl_popdist_guess_instance(), 2);
    /* mpirun inside a step: its own ranks win. */
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    setenv("OMPI_COMM_WORLD_RANK", "1", 1);
    assert_int_equal(gcl_popdist_read(&pd, 1, 1, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_instances, 2);
    assert_int_equal(pd.instance_index, 1);
    clean(NULL);
}

static void test_log_levels(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        int level;
    } good[] = {
        {"OFF", GCL_LOG_NONE},    {"off", GCL_LOG_NONE},    {"none", GCL_LOG_NONE},
        {"ERR", GCL_LOG_ERROR},   {"Err", GCL_LOG_ERROR},   {"error", GCL_LOG_ERROR},
        {"WARN", GCL_LOG_WARN},   {"warn", GCL_LOG_WARN},   {"warning", GCL_LOG_WARN},
        {"INFO", GCL_LOG_INFO},   {"info", GCL_LOG_INFO},   {"DEBUG", GCL_LOG_DEBUG},
        {"Debug", GCL_LOG_DEBUG}, {"TRACE", GCL_LOG_TRACE}, {"trace", GCL_LOG_TRACE},
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        int level = -1;
        assert_int_equal(gcl_log_parse_level(good[i].name, &level), 0);
        assert_int_equal(level, good[i].level);
    }
    int level;
    assert_int_equal(gcl_log_parse_level("loud", &level), -1);
    assert_int_equal(gcl_log_parse_level("", &level), -1);
    gcl_params_t p;
    char err[600];
    setenv("GCL_LOG_LEVEL", "OFF", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_int_equal(p.log_level, GCL_LOG_NONE);
    setenv("GCL_LOG_LEVEL", "loud", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(err, "GCL_LOG_LEVEL=\"loud\" is not valid: expected one of "
                             "off|err|warn|info|debug|trace (or none; any case)");
    unsetenv("GCL_LOG_LEVEL");
    /* The public levels are the internal ones plus one. */
    assert_int_equal(GCL_LOG_LEVEL_OFF - 1, GCL_LOG_NONE);
    assert_int_equal(GCL_LOG_LEVEL_ERR - 1, GCL_LOG_ERROR);
    assert_int_equal(GCL_LOG_LEVEL_TRACE - 1, GCL_LOG_TRACE);
}

static void test_version(void **state)
{
    (void)state;
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", GCL_VERSION_MAJOR, GCL_VERSION_MINOR,
             GCL_VERSION_PATCH);
    assert_string_equal(gcl_version_string(), want);
    assert_int_equal(gcl_version(), GCL_VERSION_CODE);
    assert_int_equal(GCL_VERSION_CODE,
                     GCL_VERSION_MAJOR * 10000 + GCL_VERSION_MINOR * 100 + GCL_VERSION_PATCH);
    assert_true(GCL_VERSION(0, 1, 0) < GCL_VERSION_CODE);
}

/* A caller from a later release: this struct, then a field this library does not know. */
typedef struct {
    gcl_config_t base;
    int future;
} later_config_t;

static void test_config_sizes(void **state)
{
    (void)state;
    gcl_params_t p;
    gcl_config_t out, cfg = GCL_CONFIG_INITIALIZER;
    char err[512];
    assert_int_equal(cfg.size, sizeof(gcl_config_t));
    assert_int_equal(cfg.version, GCL_VERSION_CODE);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_OK);
    assert_int_equal(gcl_config_apply(NULL, &out, &p, err, sizeof err), GCL_OK);
    gcl_config_t zero = {.num_replicas = 3}; /* size 0: this header's */
    assert_int_equal(gcl_config_apply(&zero, &out, &p, err, sizeof err), GCL_OK);
    assert_int_equal(out.num_replicas, 3);
    /* The first release with a size: the fields before phantom. */
    cfg.size = offsetof(gcl_config_t, phantom);
    cfg.phantom = 1; /* beyond its size: not read */
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_OK);
    assert_int_equal(out.phantom, 0);
    cfg.size = 4;
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(err, "gcl_config_t.size is 4: initialise the config with "
                             "GCL_CONFIG_INITIALIZER");
    later_config_t later; /* zeroed whole: the bytes after base's fields include padding */
    gcl_config_t fresh = GCL_CONFIG_INITIALIZER;
    memset(&later, 0, sizeof later);
    later.base = fresh;
    later.base.size = sizeof later;
    assert_int_equal(gcl_config_apply(&later.base, &out, &p, err, sizeof err), GCL_OK);
    later.future = 7;
    assert_int_equal(gcl_config_apply(&later.base, &out, &p, err, sizeof err),
                     GCL_ERR_NOT_SUPPORTED);
    assert_non_null(strstr(err, "that this libgcl"));
}

static void test_config_fields(void **state)
{
    (void)state;
    gcl_params_t p;
    gcl_config_t out, cfg = GCL_CONFIG_INITIALIZER;
    char err[512];
    setenv("GCL_TOPOLOGY", "POD64", 1);
    setenv("GCL_LOG_LEVEL", "info", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_OK);
    assert_string_equal(p.topology, "POD64"); /* unset fields leave the variables */
    assert_int_equal(p.log_level, GCL_LOG_INFO);
    assert_int_equal(p.sim_phantom, 0);
    cfg.phantom = 1;
    cfg.topology = "POD16";
    cfg.log_level = GCL_LOG_LEVEL_ERR;
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_OK);
    assert_string_equal(p.topology, "POD16");
    assert_int_equal(p.log_level, GCL_LOG_ERROR);
    assert_int_equal(p.sim_phantom, 1);
    cfg.log_level = 9;
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(err, "gcl_config_t.log_level 9 is not a gcl_log_level_t");
    cfg.log_level = 0;
    cfg.phantom = 2;
    assert_int_equal(gcl_config_apply(&cfg, &out, &p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    clean(NULL);
}

/* gcl_init's reason, without an instance to ask. */
static void test_init_error(void **state)
{
    (void)state;
    gcl_config_t cfg = GCL_CONFIG_INITIALIZER;
    cfg.log_level = GCL_LOG_LEVEL_OFF;
    cfg.topology = "POD17";
    gcl_instance_t inst = (gcl_instance_t)1;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_ERR_INVALID_ARGUMENT);
    assert_null(inst);
    assert_non_null(strstr(gcl_init_error(), "POD17"));
    setenv("GCL_OPTIONS", "{\"method\": \"fastest\"}", 1);
    cfg.topology = NULL;
    assert_int_equal(gcl_init(&cfg, &inst), GCL_ERR_INVALID_ARGUMENT);
    assert_string_equal(gcl_init_error(), "GCL_OPTIONS='{\"method\": \"fastest\"}' is not valid: "
                                          "\"method\": \"fastest\" is not a GCL method or an "
                                          "algorithm");
    unsetenv("GCL_OPTIONS");
    assert_int_equal(gcl_init(&cfg, &inst), GCL_OK);
    assert_string_equal(gcl_init_error(), "");
    gcl_finalize(inst);
}

static void test_gcl_names(void **state)
{
    (void)state;
    static const struct {
        coll_collective_t c;
        const char *name, *ours;
    } cases[] = {
        {COLL_ALLREDUCE, "meet_in_middle_ring", "meet_in_middle_ring"},
        {COLL_ALLREDUCE, "clockwise_ring", "clockwise_ring"},
        {COLL_ALLREDUCE, "anticlockwise_ring", "anticlockwise_ring"},
        {COLL_ALLREDUCE, "bidirectional_ring_pair", "bidirectional_ring_pair"},
        {COLL_ALLREDUCE, "quad_directional_ring", "bidirectional_ring_pair"},
        {COLL_ALLREDUCE, "broadcast", "broadcast"},
        {COLL_ALLREDUCE, "AUTO", "auto"},
        {COLL_ALLREDUCE, "Halving_Doubling", "halving_doubling"},
        {COLL_REDUCE_SCATTER, "meet_in_middle_ring", "ring"},
        {COLL_REDUCE_SCATTER, "broadcast", "direct"},
        {COLL_ALLGATHER, "clockwise_ring", "ring"},
        {COLL_ALLGATHER, "bruck", "bruck"},
        {COLL_BROADCAST, "clockwise_ring", NULL},
        {COLL_ALLREDUCE, "fastest", NULL},
        {COLL_ALLREDUCE, "", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *got = gcl_algo_resolve(cases[i].c, cases[i].name);
        if (cases[i].ours)
            assert_string_equal(got, cases[i].ours);
        else
            assert_null(got);
    }
    static const struct {
        const char *name;
        gcl_redop_t op;
    } ops[] = {{"add", GCL_SUM},
               {"ADD", GCL_SUM},
               {"SUM", GCL_SUM},
               {"MEAN", GCL_MEAN},
               {"MUL", GCL_MUL},
               {"MIN", GCL_MIN},
               {"MAX", GCL_MAX},
               {"SQUARE_ADD", GCL_SQUARE_ADD},
               {"LOGICAL_AND", GCL_LOGICAL_AND},
               {"Logical_Or", GCL_LOGICAL_OR},
               {"LOCAL", GCL_LOCAL}};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        gcl_redop_t op = (gcl_redop_t)-1;
        assert_int_equal(gcl_redop_parse(ops[i].name, &op), 0);
        assert_int_equal(op, ops[i].op);
    }
    gcl_redop_t op;
    assert_int_equal(gcl_redop_parse("addition", &op), -1);
    gcl_dtype_t t;
    assert_int_equal(gcl_dtype_parse("F16", &t), 0);
    assert_int_equal(t, GCL_F16);
}

static void test_gcl_options(void **state)
{
    (void)state;
    gcl_params_t p;
    char err[600];
    setenv("GCL_OPTIONS", "{\"method\":\"meet_in_middle_ring\"}", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_string_equal(p.algo[COLL_ALLREDUCE], "meet_in_middle_ring");
    assert_string_equal(p.algo[COLL_REDUCE_SCATTER], "ring");
    assert_string_equal(p.algo[COLL_ALLGATHER], "ring");
    assert_string_equal(p.algo[COLL_BROADCAST], "auto");
    /* Our variable wins over GCL_OPTIONS for its collective; GCL's names work there too. */
    setenv("GCL_ALLREDUCE_ALGO", "quad_directional_ring", 1);
    setenv("GCL_OPTIONS",
           " { \"maxBytesPerTile\" : 4096, \"method\" : \"broadcast\", "
           "\"useSynclessCollectives\": true } ",
           1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_string_equal(p.algo[COLL_ALLREDUCE], "bidirectional_ring_pair");
    assert_string_equal(p.algo[COLL_REDUCE_SCATTER], "direct");
    unsetenv("GCL_ALLREDUCE_ALGO");
    static const struct {
        const char *text, *err;
    } bad[] = {
        {"method=ring", "GCL_OPTIONS='method=ring' is not valid: expected a JSON object such as "
                        "{\"method\":\"meet_in_middle_ring\"}"},
        {"{\"method\":\"ring\"", "GCL_OPTIONS='{\"method\":\"ring\"' is not valid: expected ',' "
                                 "or '}'"},
        {"{\"method\": {\"a\": 1}}", "GCL_OPTIONS='{\"method\": {\"a\": 1}}' is not valid: a "
                                     "nested value (the object is flat)"},
        {"{\"method\":\"ring\"} x", "GCL_OPTIONS='{\"method\":\"ring\"} x' is not valid: text "
                                    "after the object"},
        {"{\"a\":\"b", "GCL_OPTIONS='{\"a\":\"b' is not valid: an unterminated string"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("GCL_OPTIONS", bad[i].text, 1);
        assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
        assert_string_equal(err, bad[i].err);
    }
    clean(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_real_poprun_variables, clean),
        cmocka_unit_test_setup(test_mpi_world, clean),
        cmocka_unit_test_setup(test_srun_world, clean),
        cmocka_unit_test_setup(test_log_levels, clean),
        cmocka_unit_test_setup(test_version, clean),
        cmocka_unit_test_setup(test_config_sizes, clean),
        cmocka_unit_test_setup(test_config_fields, clean),
        cmocka_unit_test_setup(test_init_error, clean),
        cmocka_unit_test_setup(test_gcl_names, clean),
        cmocka_unit_test_setup(test_gcl_options, clean),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
