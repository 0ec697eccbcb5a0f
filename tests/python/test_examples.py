"""The examples under examples/python run as the README says, and print what they claim."""

import json
import os
import re

from helpers import CHECKOUT, PYTHON, by_instance, poprun, run

EXAMPLES = os.path.join(CHECKOUT, "examples", "python")


def test_allreduce_example():
    r = poprun(4, 2, [PYTHON, os.path.join(EXAMPLES, "allreduce.py")])
    assert r.returncode == 0, r.stdout + r.stderr
    lines = by_instance(r.stdout)
    assert lines == {0: ["replica 0: [6. 6. 6. 6.]", "replica 1: [6. 6. 6. 6.]"],
                     1: ["replica 2: [6. 6. 6. 6.]", "replica 3: [6. 6. 6. 6.]"]}, lines


def test_allreduce_example_alone():
    r = run([PYTHON, os.path.join(EXAMPLES, "allreduce.py")])
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines() == [f"replica {i}: [6. 6. 6. 6.]" for i in range(4)]


def test_bench_allreduce_runs_both_sides(tmp_path):
    out = tmp_path / "bench.json"
    r = run([PYTHON, os.path.join(EXAMPLES, "bench_allreduce.py"), "--replicas", "4",
             "--instances", "2", "--size", "256K", "--iters", "3", "--warmup", "1",
             "--rounds", "1", "--json", str(out)], timeout=240)
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"^round 1: C [0-9.]+ GB/s \(\w+\), Python [0-9.]+ GB/s \(\w+\), ratio "
                     r"[0-9.]+$", r.stdout, re.M), r.stdout
    assert re.search(r"Python reaches [0-9.]+% of C$", r.stdout.strip()), r.stdout
    rep = json.loads(out.read_text())
    assert rep["size_bytes"] == 256 << 10 and rep["replicas"] == 4 and rep["instances"] == 2
    (one,) = rep["rounds"]
    assert one["c"]["wrong"] == 0 and one["python"]["wrong"] == 0
    assert one["c"]["busbw_gbs"] > 0 and one["python"]["busbw_gbs"] > 0
    assert rep["median_round_ratio"] == one["python"]["busbw_gbs"] / one["c"]["busbw_gbs"]


def test_bench_allreduce_bad_arguments():
    r = run([PYTHON, os.path.join(EXAMPLES, "bench_allreduce.py"), "--size", "3"])
    assert r.returncode == 2 and "expected a multiple of 4 bytes" in r.stderr, r.stderr
