#!/usr/bin/env bash
# sim_outputs.sh POPRUN GCL_BENCH
#
# 1. The same gcl-bench run twice, the second time with both cores kept busy by another
#    process: the simulated times in the JSON rows must be bitwise the same.
# 2. GCL_SIM_REPORT and GCL_SIM_TRACE with %i: one valid JSON report and one Chrome trace per
#    instance, with a track (and statistics) for every simulated IPU of the instance.
set -euo pipefail
poprun=$1 bench=$2
dir=$(mktemp -d)
load_pids=()
cleanup() {
  for p in "${load_pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$dir"
}
trap cleanup EXIT

run() { # out.json [env...]
  local out=$1
  shift
  env "$@" "$poprun" --num-replicas 8 --num-instances 2 "$bench" all_reduce -b 4K -e 4M -f 4 \
    -n 5 -w 2 --topology POD16 --json "$out" >/dev/null
}

run "$dir/quiet.json"
for _ in 1 2; do (while :; do :; done) & load_pids+=($!); done
run "$dir/loaded.json"
for p in "${load_pids[@]}"; do kill "$p"; done
load_pids=()

python3 - "$dir/quiet.json" "$dir/loaded.json" <<'PY'
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
assert len(a) == len(b) == 6, (len(a), len(b))
for x, y in zip(a, b):
    assert x["sim_time_us"] == y["sim_time_us"], (x, y)
    assert x["sim_time_us"] > 0 and x["sim_busbw_gbs"] > 0, x
print("simulated times identical under load:", [r["sim_time_us"] for r in a])
PY

GCL_SIM_REPORT="$dir/report-%i.json" GCL_SIM_TRACE="$dir/trace-%i.json" \
  "$poprun" --num-replicas 4 --num-instances 2 --ipus-per-replica 2 "$bench" all_reduce \
  -b 64K -e 64K -n 3 -w 1 >/dev/null
python3 - "$dir" <<'PY'
import json, sys, os
d = sys.argv[1]
for i in range(2):
    rep = json.load(open(os.path.join(d, "report-%d.json" % i)))
    text = json.dumps(rep)
    for key in ("compute", "exchange", "sync", "idle", "peak_memory"):
        assert key in text, (key, text[:200])
    trace = json.load(open(os.path.join(d, "trace-%d.json" % i)))
    events = trace["traceEvents"] if isinstance(trace, dict) else trace
    slices = [e for e in events if e.get("ph") == "X"]
    tids = {e["tid"] for e in slices}
    assert len(tids) == 4, tids          # 2 replicas x 2 IPUs on each instance
    assert all(e["pid"] == i for e in slices)
    assert any(e["name"] == "all_reduce" for e in slices)
print("reports and traces valid for both instances")
PY
