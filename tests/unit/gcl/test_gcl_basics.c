/* libgcl's small parts: status strings, environment parameters, POPDIST_* reading, types. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "gcl/gcl.h"
#include "gcl/popdist.h"
#include "base/log.h"
#include "base/param.h"
#include "job/popdist.h"

static void test_status_strings(void **state)
{
    (void)state;
    assert_string_equal(gcl_status_string(GCL_OK), "success");
    assert_string_equal(gcl_status_name(GCL_ERR_TIMEOUT), "GCL_ERR_TIMEOUT");
    assert_string_equal(gcl_status_string(GCL_ERR_MISMATCH),
                        "replicas called mismatched collectives");
    assert_string_equal(gcl_status_string((gcl_status_t)-999), "unknown status");
    assert_true(GCL_ERR_INVALID_ARGUMENT < 0 && GCL_ERR_IN_PROGRESS < 0);
}

static void test_params_defaults_and_errors(void **state)
{
    (void)state;
    gcl_params_t p;
    char err[512];
    unsetenv("GCL_TIMEOUT_S");
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_true(p.timeout_s == 300.0);
    assert_string_equal(p.transport, "auto");
    assert_string_equal(p.algo[COLL_ALLREDUCE], "auto");

    setenv("GCL_TIMEOUT_S", "2.5", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_true(p.timeout_s == 2.5);
    const char *bad[][2] = {{"GCL_TIMEOUT_S", "abc"},         {"GCL_TIMEOUT_S", "-1"},
                            {"GCL_LOG_LEVEL", "loud"},        {"GCL_TRANSPORT", "carrier"},
                            {"GCL_SHM_SLOTS", "1.5"},         {"GCL_ALLREDUCE_ALGO", "nope"},
                            {"GCL_LOG_SUBSYS", "init,bogus"}, {"GCL_SHM_CHUNKS", "65"}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(bad[i][0], bad[i][1], 1);
        assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
        /* The error names the variable and the value. */
        assert_non_null(strstr(err, bad[i][0]));
        assert_non_null(strstr(err, bad[i][1]));
        unsetenv(bad[i][0]);
    }
    setenv("GCL_ALLREDUCE_ALGO", "clockwise_ring", 1);
    setenv("GCL_LOG_SUBSYS", "init,coll", 1);
    assert_int_equal(gcl_params_load(&p, err, sizeof err), GCL_OK);
    assert_string_equal(p.algo[COLL_ALLREDUCE], "clockwise_ring");
    assert_int_equal(p.log_subsys, GCL_SUB_INIT | GCL_SUB_COLL);
    unsetenv("GCL_ALLREDUCE_ALGO");
    unsetenv("GCL_LOG_SUBSYS");
    unsetenv("GCL_TIMEOUT_S");
}

static void clear_popdist(void)
{
    const char *vars[] = {"POPDIST_NUM_INSTANCES",        "POPDIST_INSTANCE_INDEX",
                          "POPDIST_NUM_TOTAL_REPLICAS",   "POPDIST_NUM_LOCAL_REPLICAS",
                          "POPDIST_REPLICA_INDEX_OFFSET", "POPDIST_NUM_IPUS_PER_REPLICA"};
    for (size_t i = 0; i < sizeof vars / sizeof vars[0]; i++)
        unsetenv(vars[i]);
}

static void test_popdist(void **state)
{
    (void)state;
    gcl_popdist_t pd;
    char err[256];
    clear_popdist();
    assert_int_equal(popdist_is_set(), 0);
    assert_int_equal(popdist_num_instances(), 1);
    assert_int_equal(popdist_num_total_replicas(), 1);
    assert_int_equal(gcl_popdist_read(&pd, 6, 2, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.num_total_replicas, 6);
    assert_int_equal(pd.num_local_replicas, 6);
    assert_int_equal(pd.ipus_per_replica, 2);

    setenv("POPDIST_NUM_INSTANCES", "4", 1);
    setenv("POPDIST_INSTANCE_INDEX", "2", 1);
    setenv("POPDIST_NUM_TOTAL_REPLICAS", "16", 1);
    setenv("POPDIST_NUM_LOCAL_REPLICAS", "4", 1);
    setenv("POPDIST_REPLICA_INDEX_OFFSET", "8", 1);
    setenv("POPDIST_NUM_IPUS_PER_REPLICA", "1", 1);
    assert_int_equal(popdist_is_set(), 1);
    assert_int_equal(popdist_replica_index_offset(), 8);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_OK);
    assert_int_equal(pd.replica_offset, 8);
    assert_int_equal(pd.instance_index, 2);

    setenv("POPDIST_INSTANCE_INDEX", "4", 1);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "POPDIST_INSTANCE_INDEX"));
    setenv("POPDIST_INSTANCE_INDEX", "x", 1);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "\"x\""));
    setenv("POPDIST_INSTANCE_INDEX", "3", 1);
    setenv("POPDIST_REPLICA_INDEX_OFFSET", "14", 1);
    assert_int_equal(gcl_popdist_read(&pd, 0, 0, 0, err, sizeof err), GCL_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(err, "exceeds"));
    clear_popdist();
}

static void test_types_and_groups(void **state)
{
    (void)state;
    gcl_dtype_t t;
    gcl_redop_t op;
    gcl_group_t g;
    char buf[32];
    assert_int_equal(gcl_dtype_parse("f16", &t), 0);
    assert_int_equal(t, GCL_F16);
    assert_int_equal(gcl_dtype_size(GCL_I64), 8);
    assert_int_equal(gcl_redop_parse("mean", &op), 0);
    assert_int_equal(op, GCL_MEAN);
    assert_int_equal(gcl_redop_parse("average", &op), -1);
    /* The type/op rule: mean only on floats, logical ops only on bool, a reason when refused. */
    const char *why = NULL;
    assert_int_equal(gcl_redop_check(GCL_F32, GCL_MEAN, &why), 0);
    assert_int_equal(gcl_redop_check(GCL_I32, GCL_MEAN, &why), -1);
    assert_non_null(why);
    assert_non_null(strstr(why, "mean"));
    assert_int_equal(gcl_redop_check(GCL_F32, GCL_LOGICAL_AND, &why), -1);
    assert_int_equal(gcl_redop_check(GCL_BOOL, GCL_LOGICAL_OR, NULL), 0);
    assert_int_equal(gcl_redop_check(GCL_I64, GCL_MAX, NULL), 0);
    assert_int_equal(gcl_group_parse("orthogonal:4", &g), 0);
    assert_int_equal(g.kind, GCL_GROUP_ORTHOGONAL);
    assert_string_equal(gcl_group_format(gcl_group_consecutive(2), buf, sizeof buf),
                        "consecutive:2");
}

static void test_log_parsing(void **state)
{
    (void)state;
    int level;
    unsigned sub;
    assert_int_equal(gcl_log_parse_level("DEBUG", &level), 0);
    assert_int_equal(level, GCL_LOG_DEBUG);
    assert_int_equal(gcl_log_parse_level("verbose", &level), -1);
    assert_int_equal(gcl_log_parse_subsys("shm,mpi", &sub), 0);
    assert_int_equal(sub, GCL_SUB_SHM | GCL_SUB_MPI);
    assert_int_equal(gcl_log_parse_subsys(",", &sub), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_status_strings), cmocka_unit_test(test_params_defaults_and_errors),
        cmocka_unit_test(test_popdist),        cmocka_unit_test(test_types_and_groups),
        cmocka_unit_test(test_log_parsing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
