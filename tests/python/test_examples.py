"""The examples under examples/python run as the README says, and print what they claim."""

import json
import os
import re
import subprocess

import pytest

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


# Every example started with an interpreter that lacks numpy (a venv without the system's
# packages, as a pyenv python3 is): it runs again under Debian's, saying so in one line, or,
# when that one lacks them too, stops with one line naming the interpreter and the fix.
SCRIPTS = {"allreduce.py": [], "bench_allreduce.py": ["--help"], "train_torch.py": ["--help"]}


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory):
    d = tmp_path_factory.mktemp("bare") / "v"
    r = subprocess.run([PYTHON, "-m", "venv", "--without-pip", str(d)], capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    py = str(d / "bin" / "python")
    assert subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 1
    return py


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_without_numpy_reruns_under_debians_python(bare_python, script):
    r = run([bare_python, os.path.join(EXAMPLES, script)] + SCRIPTS[script], timeout=240,
            GCL_PYTHON=PYTHON)
    assert r.returncode == 0, r.stdout + r.stderr
    first = r.stderr.splitlines()[0]
    assert first == f"{script}: {bare_python} has no numpy; running it with {PYTHON}", r.stderr
    assert r.stdout.strip(), r.stdout


@pytest.mark.parametrize("script", sorted(SCRIPTS))
def test_example_without_numpy_anywhere_says_so_in_one_line(bare_python, script):
    r = run([bare_python, os.path.join(EXAMPLES, script)] + SCRIPTS[script], timeout=120,
            GCL_PYTHON=bare_python)
    assert r.returncode == 1 and r.stdout == "", r.stdout + r.stderr
    deb = "python3-numpy python3-torch" if script == "train_torch.py" else "python3-numpy"
    miss = "numpy, torch" if script == "train_torch.py" else "numpy"
    assert r.stderr == (f"{script}: {bare_python} has no {miss}: run it with Debian's "
                        f"/usr/bin/python3 (apt-get install {deb}, as scripts/setup does), or a "
                        "venv made from it with --system-site-packages\n"), r.stderr
