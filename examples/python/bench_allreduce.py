#!/usr/bin/env python3
"""Python's all_reduce against C's: gcl-bench and the same measurement through the gcl package,
side by side in one run, for one layout of replicas over instances.

    python3 examples/python/bench_allreduce.py --replicas 8 --instances 2 --size 64M

It alternates the two (C, Python, C, Python, ...) for --rounds rounds, each a poprun job that
times --iters out-of-place f32 sum all_reduces of --size bytes per replica after --warmup
untimed ones, in IPU memory (gcl_ipu_malloc), exactly as gcl-bench does. busbw is nccl-tests'
(size / time x 2(n-1)/n, time of the slowest replica). It prints each round, the median busbw
of each side and their ratio, and the median of the rounds' own ratios; --json FILE writes them. The Python side also checks its
result once against the exact sum.

With --worker it is the Python side itself (run under poprun; instance 0 prints one JSON line).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

from _require import require  # noqa: E402

require("numpy", "gcl")  # or re-run under Debian's python3, which has them

import numpy as np  # noqa: E402

import gcl  # noqa: E402

CHECKOUT = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def size_arg(text):
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    t = text.strip().upper()
    try:
        n = int(t[:-1]) * units[t[-1]] if t and t[-1] in units else int(t)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a size like 4K, 64M") from None
    if n < 4 or n % 4:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a multiple of 4 bytes")
    return n


def positive(text):
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text!r}: expected a positive integer")
    return n


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--replicas", type=positive, default=8, help="replicas (default 8)")
    p.add_argument("--instances", type=positive, default=2, help="instances (default 2)")
    p.add_argument("--size", type=size_arg, default=64 << 20,
                   help="bytes per replica (default 64M)")
    p.add_argument("--iters", type=positive, default=20, help="timed iterations (default 20)")
    p.add_argument("--warmup", type=int, default=5, help="untimed iterations first (default 5)")
    p.add_argument("--rounds", type=positive, default=3, help="C/Python pairs (default 3)")
    p.add_argument("--build", default=os.environ.get("GCL_BUILD_DIR",
                                                     os.path.join(CHECKOUT, "build")),
                   help="build directory with bin/poprun and bin/gcl-bench (default build/)")
    p.add_argument("--python", default=sys.executable, help="interpreter for the Python side")
    p.add_argument("--json", help="write the rounds and medians to this file")
    p.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    a = p.parse_args(argv)
    if a.warmup < 0:
        p.error("--warmup must be at least 0")
    return a


def worker_program(ctx, a):
    """Times the all_reduces on one IPU; returns (slowest ns, wrong elements) of all replicas."""
    stats, comm = ctx.comm(), ctx.comm()
    n, count = comm.size, a.size // 4
    x = ctx.ipu_malloc(count, "f32", "bench input")
    y = ctx.ipu_malloc(count, "f32", "bench output")
    x[:] = ctx.replica + 1  # the sum is n(n+1)/2, exact in f32
    comm.all_reduce(x, y, op="sum")
    wrong = int(np.count_nonzero(y != n * (n + 1) // 2))
    for _ in range(a.warmup):
        comm.all_reduce(x, y, op="sum")
    stats.barrier()
    t0 = time.perf_counter_ns()
    for _ in range(a.iters):
        comm.all_reduce(x, y, op="sum")
    mine = np.array([time.perf_counter_ns() - t0, wrong], np.uint64)
    worst = stats.all_reduce(mine, np.empty(2, np.uint64), op="max")
    ctx.ipu_free(x)
    ctx.ipu_free(y)
    return int(worst[0]), int(worst[1]), n, comm.algorithm("all_reduce")


def worker(a):
    with gcl.init() as inst:
        ns, wrong, n, algo = inst.run(worker_program, a)[0]
        if inst.info.instance_index == 0:
            t = ns / 1e9 / a.iters
            print(json.dumps({"side": "python", "time_us": t * 1e6, "algo": algo,
                              "busbw_gbs": a.size / t / 1e9 * 2 * (n - 1) / n, "wrong": wrong}),
                  flush=True)


def poprun(a, program):
    cmd = [os.path.join(a.build, "bin", "poprun"), "--num-replicas", str(a.replicas),
           "--num-instances", str(a.instances), "--only-output-from-instance", "0"] + program
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"bench_allreduce: {' '.join(cmd)} failed ({r.returncode}):\n"
                 f"{r.stdout}{r.stderr}")
    return r.stdout


def c_side(a, tmp):
    path = os.path.join(tmp, "c.json")
    poprun(a, [os.path.join(a.build, "bin", "gcl-bench"), "all_reduce", "-b", str(a.size),
               "-e", str(a.size), "-n", str(a.iters), "-w", str(a.warmup), "--json", path])
    with open(path) as f:
        row = json.load(f)[-1]
    return {"side": "c", "time_us": row["time_us"], "busbw_gbs": row["busbw_gbs"],
            "algo": row["algo"], "wrong": row["wrong"]}


def python_side(a):
    out = poprun(a, [a.python, os.path.abspath(__file__), "--worker", "--size", str(a.size),
                     "--iters", str(a.iters), "--warmup", str(a.warmup)])
    lines = [ln.split("] ", 1)[-1] for ln in out.splitlines() if '"side"' in ln]
    if not lines:
        sys.exit(f"bench_allreduce: the Python side printed no result:\n{out}")
    return json.loads(lines[-1])


def main(argv):
    a = parse_args(argv)
    if a.worker:
        return worker(a)
    print(f"bench_allreduce: f32 sum all_reduce of {a.size} bytes, {a.replicas} replicas over "
          f"{a.instances} instances, {a.iters} iterations after {a.warmup}; {a.rounds} rounds")
    rounds = []
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(a.rounds):
            c, py = c_side(a, tmp), python_side(a)
            if py["wrong"]:
                sys.exit(f"bench_allreduce: the Python all_reduce got {py['wrong']} elements "
                         f"wrong")
            rounds.append({"c": c, "python": py})
            print(f"round {i + 1}: C {c['busbw_gbs']:.3f} GB/s ({c['algo']}), Python "
                  f"{py['busbw_gbs']:.3f} GB/s ({py['algo']}), ratio "
                  f"{py['busbw_gbs'] / c['busbw_gbs']:.3f}", flush=True)
    med = {s: statistics.median(r[s]["busbw_gbs"] for r in rounds) for s in ("c", "python")}
    ratio = med["python"] / med["c"]
    paired = statistics.median(r["python"]["busbw_gbs"] / r["c"]["busbw_gbs"] for r in rounds)
    print(f"bench_allreduce: median busbw C {med['c']:.3f} GB/s, Python {med['python']:.3f} "
          f"GB/s (median of the rounds' ratios {paired:.3f}): Python reaches "
          f"{100 * ratio:.1f}% of C")
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"size_bytes": a.size, "replicas": a.replicas, "instances": a.instances,
                       "rounds": rounds, "median_busbw_gbs": med, "ratio": ratio,
                       "median_round_ratio": paired}, f, indent=1)


if __name__ == "__main__":
    main(sys.argv[1:])
