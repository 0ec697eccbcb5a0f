#!/usr/bin/env bash
# plan_check.sh SIM_STEP RUNS [NAME...]
#
# sim-step --plan, end to end:
#  1. for each run NAME of the MLPerf v1.1 file RUNS (all when none is named: the full tier's
#     test), the plan at the same pod and global batch finds a configuration whose simulated
#     throughput is at least that of Graphcore's published configuration, simulated the same way
#     (one timed step after one untimed), and that fits in memory with the reserve;
#  2. every configuration the plan prints, run through plain sim-step with its printed command,
#     gives the same step time and throughput, bit for bit;
#  3. the plan says how many candidates it considered and simulated, and simulated few; each
#     printed row carries its throughput under every leave-one-out set of the fitted constants,
#     and its range is theirs;
#  4. a model that cannot fit any way is one line naming its largest layer, exit status 1.
set -euo pipefail
simstep=$1 runs=$2
shift 2
dir=$(mktemp -d "${TMPDIR:-/tmp}/gcl-plan.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAILED (plan): $*" >&2
  exit 1
}

# The published configurations and the planner's arguments, one line each:
# NAME POD GLOBAL_BATCH PLAN_ARGS... -- PUBLISHED_ARGS...
python3 - "$runs" "$@" >"$dir/runs" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
want = set(sys.argv[2:])
for model in ("resnet50", "bert-large"):
    for r in data[model]:
        name = "%s-%s" % (model, r["pod"])
        if want and name not in want:
            continue
        common = ["--model", model, "--optimizer", r["optimizer"]]
        if "seq" in r:
            common += ["--sequence-length", str(r["seq"]), "--sequences-per-pack",
                       str(r["sequences_per_pack"])]
        pub = common + ["--replicas", str(r["replicas"]), "--stages", str(r["stages"]),
                        "--micro-batch", str(r["micro_batch"]), "--gradient-accumulation",
                        str(r["accum"])]
        if r.get("att_ffn_placement"):
            pub += ["--att-ffn-placement", r["att_ffn_placement"]]
        if r.get("layers_per_ipu"):
            pub += ["--layers-per-ipu", r["layers_per_ipu"]]
        if "optimizer_state_offchip" in r:
            place = "streaming" if r["optimizer_state_offchip"] else "on-chip"
            if r.get("replicated_tensor_sharding"):
                place = "streaming-sharded" if r["optimizer_state_offchip"] else "sharded"
            pub += ["--optimizer-state", place]
        print(" ".join([name, r["pod"], str(r["global_batch"])] + common + ["--"] + pub))
PY
[ -s "$dir/runs" ] || fail "no run of $runs is named '$*'"

while read -r name pod gb rest; do
  plan=${rest%% -- *} pub=${rest#* -- }
  t0=$SECONDS
  # shellcheck disable=SC2086 # the words are options
  "$simstep" --plan $plan --topology "$pod" --global-batch "$gb" --json "$dir/$name.plan.json" \
    >"$dir/$name.plan.txt" 2>&1 || { cat "$dir/$name.plan.txt"; fail "$name: --plan failed"; }
  # shellcheck disable=SC2086
  "$simstep" $pub --topology "$pod" --steps 1 --warmup 1 --json "$dir/$name.pub.json" \
    >/dev/null 2>&1 || fail "$name: the published configuration failed"
  python3 - "$dir/$name.plan.json" "$dir/$name.pub.json" "$name" "$((SECONDS - t0))" \
    >"$dir/$name.cmds" <<'PY'
import json, sys
plan, pub, name, secs = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], sys.argv[4]
sim = [c for c in plan["candidates"] if c["simulated"]]
assert sim, "nothing simulated"
best = max(sim, key=lambda c: c["samples_per_s"])
assert best["fits"] and best["memory_headroom_bytes"] >= plan["memory_reserve_bytes"], best
assert best["samples_per_s"] >= pub["samples_per_s"], (name, best, pub["samples_per_s"])
assert 0 < plan["simulated"] <= plan["considered"] and plan["simulated"] <= 60, plan["simulated"]
sets = plan["loo_sets"]
assert len(sets) >= 10 and all("amp_efficiency=" in x for x in sets), sets
for c in sorted(sim, key=lambda c: -c["samples_per_s"])[:5]:
    under = c["samples_per_s_sets"]
    lo, hi = c["samples_per_s_range"]
    assert len(under) == len(sets), (len(under), len(sets))
    assert lo == min(under + [c["samples_per_s"]]) and hi == max(under + [c["samples_per_s"]]), c
    assert lo < hi, c  # the constants move every row
print("%s: plan %.1f samples/s >= published %.1f (%+.1f%%): %d x %d, %d x %d, %s, %s; %d "
      "considered, %d simulated, %s s" % (
          name, best["samples_per_s"], pub["samples_per_s"],
          100 * (best["samples_per_s"] / pub["samples_per_s"] - 1), best["replicas"],
          best["stages"], best["micro_batch"], best["gradient_accumulation"],
          best["placement"] or "balanced", best["optimizer_state"], plan["considered"],
          plan["simulated"], secs), file=sys.stderr)
for c in sorted(sim, key=lambda c: -c["samples_per_s"])[:5]:
    print("%.3f %.6f %s" % (c["samples_per_s"], c["step_time_us"], c["command"]))
PY
  # Each printed command, run as printed, gives the same numbers.
  i=0
  while read -r sps step cmd; do
    i=$((i + 1))
    # shellcheck disable=SC2086
    "${simstep%/sim-step}/${cmd%% *}" ${cmd#* } --json "$dir/$name.$i.json" >/dev/null 2>&1 ||
      fail "$name: '$cmd' failed"
    got=$(python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print('%.3f %.6f' % (j['samples_per_s'], j['step_time_us']))" "$dir/$name.$i.json")
    [ "$got" = "$sps $step" ] || fail "$name: '$cmd' gives $got, the plan printed $sps $step"
  done <"$dir/$name.cmds"
  echo "plan_check: $name: the $i printed commands give the plan's numbers"
done <"$dir/runs"

# A layer no IPU can hold: one line, exit 1.
printf 'gcl-model 1\nname huge\nlayer matmul name=giant in=100000 out=100000\n' >"$dir/huge.model"
set +e
msg=$("$simstep" --plan --model "$dir/huge.model" --topology POD16 --global-batch 16 2>&1 >/dev/null)
rc=$?
set -e
[ "$rc" -eq 1 ] || fail "a model that cannot fit: exit $rc, want 1 ($msg)"
[ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] || fail "a model that cannot fit: not one line: $msg"
grep -q "its largest layer, giant, needs" <<<"$msg" || fail "a model that cannot fit: '$msg'"
echo "plan_check: PASSED"
