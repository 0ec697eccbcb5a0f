"""gcl-bench's grid and columns against the nccl-tests tools', for sizes that are not whole
elements or blocks: the same rows (nccl-tests' grid: -b, then times -f while at most -e, no row
off it), each with the size column and count the tool prints (the bytes moved: the size rounded
down to whole elements, or to whole blocks of N for the collectives of blocks; 0 below one), and
a bandwidth of the bytes moved: algbw = size / time, busbw = algbw x the bus factor, in the
table and in --json.

    python3 grid.py BINDIR

Both run alone with 4 replicas (gcl-bench --replicas 4, the tools -g 4), -n 2 -w 1.
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import nccl_format  # noqa: E402

BIN = sys.argv[1]
N = 4
TOOLS = {"all_reduce": "all_reduce", "reduce_scatter": "reduce_scatter",
         "all_gather": "all_gather", "broadcast": "broadcast", "all_to_all": "alltoall"}
GRIDS = [("3", "7", "2"), ("1", "9", "2"), ("5", "100", "3"), ("6", "64", "2"),
         ("8", "1M", "4"), ("0", "64", "2")]
ENV = dict(os.environ, GCL_TIMEOUT_S="60", GCL_LOG_LEVEL="none")
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


def run(cmd):
    r = subprocess.run(cmd, capture_output=True, text=True, env=ENV, timeout=120)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r.stdout


def bench_rows(text):
    """(size, count, time_us, algbw, busbw) of gcl-bench's table."""
    rows = []
    for line in text.splitlines():
        if line.startswith("#") or not line.strip():
            continue
        f = line.split()
        rows.append((int(f[0]), int(f[1]), float(f[5]), float(f[6]), float(f[7])))
    return rows


def close(a, b, rel=0.02, abs_=0.0015):
    """Within the rounding of printed figures (3 decimals of GB/s, 2 of us)."""
    return abs(a - b) <= max(abs_, rel * abs(b))


def check(coll, b, e, f, tmp):
    tool = TOOLS[coll]
    what = f"{coll} -b {b} -e {e} -f {f}"
    js = os.path.join(tmp, "rows.json")
    bench = run([os.path.join(BIN, "gcl-bench"), coll, "--replicas", str(N), "-b", b, "-e", e,
                 "-f", f, "-n", "2", "-w", "1", "-c", "--json", js])
    perf = nccl_format.parse(run([os.path.join(BIN, f"{tool}_perf"), "-g", str(N), "-b", b,
                                  "-e", e, "-f", f, "-n", "2", "-w", "1"]))
    ours = bench_rows(bench)
    want = [(r.size, r.count) for r in perf.rows]
    got = [(r[0], r[1]) for r in ours]
    if got == want and want:
        ok(f"{what}: the grid and columns of {tool}_perf, {len(want)} rows "
           f"({', '.join(str(s) for s, _ in want)})")
    else:
        bad(f"{what}: rows differ from {tool}_perf's", f"{tool}_perf: {want}", f"gcl-bench: {got}",
            bench)
    factor = nccl_format.BUS_FACTOR[tool](N)
    wrong = [r for r in ours if not (close(r[3], r[0] / r[2] / 1e3) and close(r[4], r[3] * factor))]
    if not wrong:
        ok(f"{what}: algbw = size / time, busbw = algbw x {factor:.3f}")
    else:
        bad(f"{what}: a bandwidth of other bytes than the size", *wrong)
    rows = json.load(open(js))
    jgot = [(r["size_bytes"], r["count"]) for r in rows]
    jwrong = [r for r in rows if r["time_us"] > 0 and not close(
        r["algbw_gbs"], r["size_bytes"] / r["time_us"] / 1e3, abs_=1e-6)]
    if jgot == want and not jwrong:
        ok(f"{what}: --json has the same rows and bandwidths")
    else:
        bad(f"{what}: --json", f"want {want}", f"got {jgot}", *jwrong)


with tempfile.TemporaryDirectory() as tmp:
    for coll in TOOLS:
        for b, e, f in GRIDS:
            try:
                check(coll, b, e, f, tmp)
            except (RuntimeError, nccl_format.FormatError, subprocess.TimeoutExpired) as err:
                bad(f"{coll} -b {b} -e {e} -f {f}: {err}")
print(f"{passed} passed, {len(failed)} failed")
sys.exit(1 if failed else 0)
