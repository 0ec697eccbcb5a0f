"""popdist's values under poprun (each instance prints them; the test knows what poprun must
have set), without poprun, and with malformed variables; init, execute_on_instances and
getDeviceId in the way Graphcore's published scripts call them; and the issue's acceptance
check: numpy arrays of f32, f16 and i32 all-reduced over 4 replicas in 2 instances."""

import json

import pytest

from helpers import PYTHON, by_instance, poprun, run

PRINT = ("import json, popdist as p; print(json.dumps([p.isPopdistEnvSet(), p.getNumInstances(), "
         "p.getInstanceIndex(), p.getLocalInstanceIndex(), p.getNumTotalReplicas(), "
         "p.getNumLocalReplicas(), p.getReplicaIndexOffset(), p.getNumIpusPerReplica(), "
         "p.isUniformReplicasPerInstance(), p.getDeviceId()]))")


@pytest.mark.parametrize("replicas, instances, ipr", [(4, 2, 1), (6, 3, 2), (2, 2, 1)])
def test_values_under_poprun(replicas, instances, ipr):
    r = poprun(replicas, instances, [PYTHON, "-c", PRINT], poprun_args=["--ipus-per-replica",
                                                                        str(ipr)])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)
    assert sorted(lines) == list(range(instances))
    local = replicas // instances
    # gc-info's numbering of a partition of 4, 8 or 16 IPUs: the singles, then the pairs, ...
    device = {(4, 2, 1): [4, 5], (6, 3, 2): [24, 25, 26], (2, 2, 1): [0, 1]}
    for i in range(instances):
        got = json.loads(lines[i][-1])
        # One host: the local index is the instance index.
        assert got == [True, instances, i, i, replicas, local, i * local, ipr, True,
                       device[replicas, instances, ipr][i]], got


def test_values_without_poprun():
    clear = {k: None for k in ("POPDIST_NUM_INSTANCES", "POPDIST_INSTANCE_INDEX",
                               "POPDIST_LOCAL_INSTANCE_INDEX", "POPDIST_NUM_TOTAL_REPLICAS",
                               "POPDIST_NUM_LOCAL_REPLICAS", "POPDIST_REPLICA_INDEX_OFFSET",
                               "POPDIST_NUM_IPUS_PER_REPLICA",
                               "POPDIST_UNIFORM_REPLICAS_PER_INSTANCE")}
    r = run([PYTHON, "-c", PRINT], **clear)
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == [False, 1, 0, 0, 1, 1, 0, 1, True, 0]


def test_malformed_values_read_as_defaults_like_libgcl():
    r = run([PYTHON, "-c", PRINT], POPDIST_NUM_INSTANCES="two", POPDIST_INSTANCE_INDEX="-1",
            POPDIST_LOCAL_INSTANCE_INDEX="1_0", POPDIST_NUM_TOTAL_REPLICAS=" 8",
            POPDIST_NUM_LOCAL_REPLICAS="0", POPDIST_REPLICA_INDEX_OFFSET="3x",
            POPDIST_NUM_IPUS_PER_REPLICA="+2", POPDIST_UNIFORM_REPLICAS_PER_INSTANCE="yes")
    assert r.returncode == 0, r.stderr
    # strtol's rules: leading blanks and a sign are fine, anything after the digits is not. A
    # local replica count that is not positive falls back to the total over the instances.
    assert json.loads(r.stdout) == [True, 1, 0, 0, 8, 8, 0, 2, True, 30]  # 16 IPUs: 16+8+4+2


# The way Graphcore's published training scripts use popdist: init under poprun, the replica
# counts for the batch and the data shard, the device to attach to, and the checkpoint written
# by instance 0 only.
PUBLISHED = """
import os, sys, popdist
ckpt_dir = sys.argv[1]
def persist_checkpoint(state, path, *, step):
    with open(os.path.join(path, f"ckpt-{step}.txt"), "w") as f:
        f.write(f"{state} written by instance {popdist.getInstanceIndex()}")
    return "saved"
if popdist.isPopdistEnvSet():
    popdist.init()
    popdist.init()  # again: harmless
    replicas = popdist.getNumTotalReplicas()
    local = popdist.getNumLocalReplicas()
    shard = list(range(24))[popdist.getReplicaIndexOffset():][:local]
    device = popdist.getDeviceId(popdist.getNumIpusPerReplica())
else:
    replicas, local, shard, device = 1, 1, [0], 0
r = popdist.execute_on_instances({0}, persist_checkpoint, "weights", ckpt_dir, step=7)
print(popdist.getInstanceIndex(), popdist.getNumInstances(), replicas, local, shard, device, r)
"""


def test_published_usage_under_poprun(tmp_path):
    r = poprun(4, 2, [PYTHON, "-c", PUBLISHED, str(tmp_path)])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)
    assert lines[0][-1] == "0 2 4 2 [0, 1] 4 saved", lines
    assert lines[1][-1] == "1 2 4 2 [2, 3] 5 None", lines
    assert [p.name for p in tmp_path.iterdir()] == ["ckpt-7.txt"]
    assert (tmp_path / "ckpt-7.txt").read_text() == "weights written by instance 0"


def test_published_usage_without_poprun(tmp_path):
    r = run([PYTHON, "-c", PUBLISHED, str(tmp_path)], POPDIST_NUM_INSTANCES=None,
            POPDIST_INSTANCE_INDEX=None, POPDIST_NUM_TOTAL_REPLICAS=None,
            POPDIST_NUM_LOCAL_REPLICAS=None, POPDIST_REPLICA_INDEX_OFFSET=None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "0 1 1 1 [0] 0 saved"
    assert (tmp_path / "ckpt-7.txt").read_text() == "weights written by instance 0"


CHECKS = """
import popdist
popdist.init()  # outside poprun: nothing to check, no error
for bad in ({1}, {0, 3, -1}):
    try:
        popdist.execute_on_instances(bad, print, "never")
    except ValueError as e:
        print(e)
try:
    popdist.execute_on_instances(0, print)
except TypeError as e:
    print(e)
try:
    popdist.getDeviceId(0)
except ValueError as e:
    print(e)
print(popdist.execute_on_instances(range(1), lambda: "ran"))
"""


def test_bad_arguments_are_one_clear_error():
    r = run([PYTHON, "-c", CHECKS], POPDIST_NUM_INSTANCES=None, POPDIST_INSTANCE_INDEX=None,
            POPDIST_NUM_TOTAL_REPLICAS=None, POPDIST_NUM_LOCAL_REPLICAS=None)
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [
        "popdist.execute_on_instances: instance 1 not in this job of 1 instance (0 to 0)",
        "popdist.execute_on_instances: instances -1, 3 not in this job of 1 instance (0 to 0)",
        "popdist.execute_on_instances: instances must be a set of instance indices, not int",
        "popdist.getDeviceId: ipus_per_replica must be a positive integer, not 0",
        "ran"]


@pytest.mark.parametrize("env, why", [
    (dict(POPDIST_NUM_TOTAL_REPLICAS="8", POPDIST_NUM_LOCAL_REPLICAS="4",
          POPDIST_REPLICA_INDEX_OFFSET="6"),
     "POPDIST_REPLICA_INDEX_OFFSET=6 is not the first replica of an instance (8 replicas in "
     "blocks of 4)"),
    (dict(POPDIST_NUM_TOTAL_REPLICAS="8", POPDIST_NUM_LOCAL_REPLICAS="3"),
     "POPDIST_NUM_TOTAL_REPLICAS=8 is not a multiple of POPDIST_NUM_LOCAL_REPLICAS=3"),
    (dict(POPDIST_NUM_TOTAL_REPLICAS="two"),
     "POPDIST_NUM_TOTAL_REPLICAS='two' is not an integer from 1"),
    (dict(POPDIST_NUM_TOTAL_REPLICAS="8", POPDIST_NUM_LOCAL_REPLICAS="4",
          POPDIST_NUM_INSTANCES="2", POPDIST_INSTANCE_INDEX="2"),
     "POPDIST_NUM_INSTANCES=2 and POPDIST_INSTANCE_INDEX=2 do not match 8 replicas in blocks "
     "of 4"),
])
def test_init_refuses_a_malformed_environment(env, why):
    clear = {k: None for k in ("POPDIST_NUM_INSTANCES", "POPDIST_INSTANCE_INDEX",
                               "POPDIST_REPLICA_INDEX_OFFSET", "POPDIST_NUM_LOCAL_REPLICAS")}
    r = run([PYTHON, "-c", "import popdist; popdist.init()"], **{**clear, **env})
    assert r.returncode == 1
    assert r.stderr.strip().splitlines()[-1] == f"ValueError: popdist.init: {why}"


ACCEPT = """
import gcl, numpy as np, popdist
assert popdist.getNumInstances() == 2
def program(ctx):
    comm, n = ctx.comm(), ctx.num_replicas
    for dt in (np.float32, np.float16, np.int32):
        x = np.arange(1000).astype(dt) % 7 + ctx.replica
        y = comm.all_reduce(x, np.empty_like(x), op="sum")
        want = (np.arange(1000) % 7 * n + n * (n - 1) // 2).astype(dt)
        assert y.dtype == dt and np.array_equal(y, want), (dt, y[:4], want[:4])
    return "ok"
with gcl.init() as inst:
    print(popdist.getNumInstances(), popdist.getInstanceIndex(), inst.run(program))
"""


def test_acceptance_f32_f16_i32_over_two_instances():
    r = poprun(4, 2, [PYTHON, "-c", ACCEPT])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)
    assert lines[0][-1] == "2 0 ['ok', 'ok']" and lines[1][-1] == "2 1 ['ok', 'ok']", lines


OFFLINE = """
import gcl, numpy as np
def program(ctx):
    comm = ctx.comm()
    x = ctx.ipu_malloc(16 << 20, "f32", "grads")      # 64 MiB with no payload
    t0 = ctx.sim_time()
    comm.all_reduce(x, op="sum")
    comm.all_reduce_start(x, ctx.ipu_malloc(16 << 20, "f32"), op="mean").wait()
    try:
        comm.all_reduce(x, np.empty(3, np.float32))
    except ValueError as e:
        assert "shape (16777216,)" in str(e), e
    ctx.ipu_free(x)
    return f"{type(x).__name__} {x.nbytes} {ctx.sim_time() - t0 > 0}"
with gcl.init() as inst:
    print(inst.run(program))
"""


def test_offline_mode_gives_phantom_buffers():
    r = poprun(4, 2, [PYTHON, "-c", OFFLINE], poprun_args=["--offline-mode"])
    assert r.returncode == 0, r.stdout + r.stderr
    want = "['PhantomBuffer 67108864 True', 'PhantomBuffer 67108864 True']"
    assert by_instance(r.stdout) == {0: [want], 1: [want]}
