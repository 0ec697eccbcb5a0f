"""Every *_perf tool's output read with nccl_format (a parser written from nccl-tests' documented
format), at 1, 2 and 4 IPUs per replica, under poprun (2 instances of 1 replica) and alone
(-g 2 and GCL_IPUS_PER_REPLICA); then the runs that must not look like a verdict:

  - a run that fails in the middle prints nccl-tests' failure form, no footer, exits non-zero;
  - ranks given different flags are named ("instance 1 has -n 3, instance 0 -n 2"), exit 2,
    and nothing of the sweep is printed.

    python3 layout.py POPRUN BINDIR
"""

import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_format  # noqa: E402

POPRUN, BIN = sys.argv[1], sys.argv[2]
TOOLS = ["all_reduce", "reduce_scatter", "all_gather", "broadcast", "alltoall"]
SWEEP = ["-b", "1K", "-e", "4K", "-f", "4", "-n", "2", "-w", "1"]
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
           GCL_TIMEOUT_S="60", GCL_LOG_LEVEL="none")
failed = []
passed = 0


def ok(what):
    global passed
    passed += 1
    print(f"ok: {what}")


def bad(what, *detail):
    failed.append(what)
    print(f"FAIL: {what}")
    for d in detail:
        print("  " + str(d).replace("\n", "\n  "))


def run(cmd, env=None):
    p = subprocess.run(cmd, env=env or ENV, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def untag(out, instance=0):
    """Lines of one poprun instance, its "[instance N] " tag taken off; the others' count."""
    mine, others = [], 0
    for line in out.splitlines():
        m = re.match(r"\[instance (\d+)\] (.*)$", line)
        if m and int(m.group(1)) == instance:
            mine.append(m.group(2))
        elif m:
            others += 1
    return "\n".join(mine), others


def check_report(what, tool, text, ranks, ipus, sizes):
    """The parsed run against what nccl-tests' users expect of it."""
    try:
        r = nccl_format.parse(text)
    except nccl_format.FormatError as e:
        return bad(what, e, text)
    want_devices = [(q, ipu) for q in range(ranks) for ipu in range(ipus)]
    got_devices = [(d.rank, d.device) for d in r.devices]
    problems = []
    if got_devices != [(q, q * ipus + k) for q, k in want_devices]:
        problems.append(f"devices {got_devices}, want one line per rank and IPU in rank order")
    if [row.size for row in r.rows] != sizes:
        problems.append(f"sizes {[row.size for row in r.rows]}, want {sizes}")
    for row in r.rows:
        if row.out.wrong != 0 or row.inp.wrong != 0:
            problems.append(f"#wrong in {row}")
        problems += nccl_format.check_bandwidth(row, tool, ranks)
    if r.out_of_bounds != (0, "OK"):
        problems.append(f"out of bounds {r.out_of_bounds}")
    mean = sum(row.out.busbw + row.inp.busbw for row in r.rows) / (2 * len(r.rows))
    if abs(r.avg_busbw - mean) > 0.01:
        problems.append(f"avg busbw {r.avg_busbw}, mean of the rows {mean:.4f}")
    if problems:
        return bad(what, *problems, text)
    ok(f"{what}: {len(r.devices)} device lines, {len(r.rows)} rows")


def sizes_of(tool, ranks):
    """The size column nccl-tests prints for -b 1K -e 4K -f 4 of floats (PERFORMANCE.md: the
    whole array for reduce_scatter and all_gather, rounded to a multiple of the ranks)."""
    out = []
    for b in (1024, 4096):
        count = b // 4
        if tool in ("reduce_scatter", "all_gather", "alltoall"):
            count = count // ranks * ranks
        out.append(count * 4)
    return out


for ipus in (1, 2, 4):
    for tool in TOOLS:
        exe = os.path.join(BIN, f"{tool}_perf")
        rc, out, err = run([POPRUN, "--num-replicas", "2", "--num-instances", "2",
                            "--ipus-per-replica", str(ipus), exe] + SWEEP)
        text, others = untag(out)
        what = f"{tool}_perf, 2 instances x 1 replica x {ipus} IPUs"
        if rc != 0 or others:
            bad(what, f"exit {rc}, {others} lines from instance 1", out, err)
        else:
            check_report(what, tool, text, 2, ipus, sizes_of(tool, 2))
    # One process of 2 ranks (-g 2), its IPUs from the environment, as without poprun.
    exe = os.path.join(BIN, "all_reduce_perf")
    rc, out, err = run([exe, "-g", "2"] + SWEEP, dict(ENV, GCL_IPUS_PER_REPLICA=str(ipus)))
    what = f"all_reduce_perf -g 2 alone, GCL_IPUS_PER_REPLICA={ipus}"
    if rc != 0:
        bad(what, f"exit {rc}", out, err)
    else:
        check_report(what, "all_reduce", out, 2, ipus, sizes_of("all_reduce", 2))

# A run that fails half-way (instance 1's 30th transport post fails): the failure form on
# every instance, no footer, exit non-zero.
rc, out, err = run([POPRUN, "--num-replicas", "2", "--num-instances", "2", "--ipus-per-replica",
                    "2", "-x", "GCL_FAULT_INJECT=post:30@1", "-x", "GCL_DIRECT_MIN_BYTES=1000000000000",
                    os.path.join(BIN, "all_reduce_perf")] + SWEEP)
problems = []
for inst in (0, 1):
    text, _ = untag(out, inst)
    try:
        fails, traces = nccl_format.parse_failure(text)
        if len(fails) != 1 or traces != 1:
            problems.append(f"instance {inst}: {len(fails)} failure lines, {traces} traces")
    except nccl_format.FormatError as e:
        problems.append(f"instance {inst}: {e}")
if rc == 0 or "0 OK" in out or problems:
    bad(f"a failed run: exit {rc}", *problems, out, err)
else:
    ok(f"a failed run prints nccl-tests' failure form on both instances, no footer, exit {rc}")

# Ranks given different flags (mpirun's two application contexts): named, exit 2, no sweep.
exe = os.path.join(BIN, "all_reduce_perf")
# (mpirun with a session directory of its own: tests/mpirun-private)
MPIRUN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "mpirun-private")
rc, out, err = run([MPIRUN, "--oversubscribe", "--bind-to", "none", "-np", "1", exe, "-b", "1K",
                    "-e", "4K", "-n", "2", ":", "-np", "1", exe, "-b", "1K", "-e", "4K", "-n",
                    "3"])
line = ("all_reduce_perf: instance 1 has -n 3, instance 0 -n 2 "
        "(every rank must be given the same flags)")
if rc == 2 and err.count(line) == 1 and "Out of bounds" not in out and "Rank" not in out:
    ok("ranks with different -n are named: " + line)
else:
    bad(f"different -n: exit {rc}", out, err)

print(f"{passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
