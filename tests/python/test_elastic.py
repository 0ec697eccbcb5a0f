"""Elastic jobs from Python (poprun --elastic): an instance that dies, and the others resize and
run again with fewer replicas; popdist follows the membership."""

from helpers import PYTHON, by_instance, poprun

SHRINK = """
import os, gcl, numpy as np, popdist
def program(ctx, step):
    comm = ctx.comm()
    if step == 1 and ctx.instance.elastic_info()["slot"] == 1:
        os._exit(3)                           # instance 1 (as poprun planned it) dies
    x = np.ones(4, np.float32)
    comm.all_reduce(x, op="sum")
    return int(x[0])
with gcl.init() as inst:
    step, sums = 0, []
    while step < 3:
        try:
            sums.append(inst.run(program, step)[0])
            step += 1
        except (gcl.PeerFailedError, gcl.AbortedError):
            e = inst.resize()                 # the others go on without it
            print(f"resized: {e['num_replicas']} replicas, lost {e['lost']}, "
                  f"popdist {popdist.getNumTotalReplicas()}", flush=True)
    print(f"sums {sums} info {inst.info.num_replicas} elastic {inst.elastic}", flush=True)
"""


def test_shrink_and_run_again():
    r = poprun(8, 4, [PYTHON, "-c", SHRINK], poprun_args=["--elastic", "--min-replicas", "2"],
               GCL_TIMEOUT_S=60)
    assert r.returncode == 0, r.stdout + r.stderr
    out = by_instance(r.stdout)
    assert out[0][0] == "resized: 6 replicas, lost [1], popdist 6", r.stdout
    assert out[0][-1] == "sums [8, 6, 6] info 6 elastic True", r.stdout
    assert "poprun: elastic: epoch 1: 3 instances, 6 replicas; lost instance 1" in r.stderr


def test_not_elastic():
    code = ("import gcl\nwith gcl.init() as inst:\n    print(inst.elastic)\n"
            "    try:\n        inst.resize()\n    except gcl.NotSupportedError as e:\n"
            "        print(e)\n")
    r = poprun(2, 2, [PYTHON, "-c", code])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)[0]
    assert lines[0] == "False"
    assert "not an elastic job (poprun --elastic)" in lines[1]
