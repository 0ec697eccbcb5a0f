#!/usr/bin/env bash
# identify_check.sh SIM_STEP
#
# scripts/calibrate --identify: what the published runs determine (docs/validation.md, "What
# the runs determine"). Checks the claims the page makes from it:
#  1. each round's BERT-Large pair, solved alone, puts BERT-Large's compute where ResNet-50's
#     amp_efficiency puts it (k within 5% of 1) and demands a cost per PopART cycle between 1
#     and 2 ms; the v1.1 pair predicts v1.1's third BERT-Large run (IPU-POD128) within 5%;
#  2. v1.0's per-round constant is not determined without its ResNet-50 IPU-POD64 run: the
#     other three v1.0 runs stay within 5% over values at which that run's prediction spans
#     more than -5% to +5%; each of the other three v1.0 runs is determined by the rest.
set -euo pipefail
simstep=$1
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$root/scripts/calibrate" --identify --sim-step "$simstep" --out "$dir" >"$dir/out.txt" ||
  { cat "$dir/out.txt"; echo "FAILED: calibrate --identify" >&2; exit 1; }
grep -q '^  ## What the runs determine' "$dir/out.txt" || { echo "FAILED: no tables" >&2; exit 1; }
python3 - "$dir/calibration.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
cyc = r["cycle"]
assert sorted(cyc) == ["v1.0", "v1.1"], cyc
for rnd, c in cyc.items():
    assert abs(c["k"] - 1) < 0.05, (rnd, c)
    assert 1.0 < c["cycle_ms"] < 2.0, (rnd, c)
[(name, err)] = cyc["v1.1"]["checked"].items()
assert name == "v1.1 bert-large-POD128" and abs(err) < 0.05, (name, err)
pr = r["per_round"]
key = " reduction_buffer_bytes"
pod64 = pr["v1.0 resnet50-POD64" + key]
assert not pod64["determined"], pod64
assert pod64["span"][0] < -0.05 and pod64["span"][1] > 0.05, pod64
for run in ("resnet50-POD16", "bert-large-POD16", "bert-large-POD64"):
    assert pr["v1.0 " + run + key]["determined"], (run, pr["v1.0 " + run + key])
print("identify: k %.3f / %.3f, c %.3f / %.3f ms a cycle; v1.0 ResNet-50 IPU-POD64 spans "
      "%+.1f%% to %+.1f%% without it" % (cyc["v1.0"]["k"], cyc["v1.1"]["k"], cyc["v1.0"]["cycle_ms"],
                                         cyc["v1.1"]["cycle_ms"], 100 * pod64["span"][0],
                                         100 * pod64["span"][1]))
PY
