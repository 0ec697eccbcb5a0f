#!/usr/bin/env bash
# simstep_check.sh POPRUN SIM_STEP
#
# sim-step, the layer-level simulated pod, end to end:
#  1. every run of Graphcore's MLPerf Training v1.0 and v1.1 results (11 runs, IPU-POD16 to
#     IPU-POD256) lands within 5% of its published throughput with the defaults and each
#     round's declared constant (scripts/calibrate --check), and BERT-Large's placement puts the
#     embedding and the heads on IPU 0; the Bow IPU runs the same step faster by its clock;
#  2. a step's time is the sum of its layers: one more micro-batch on one IPU adds exactly one
#     forward, backward and stream copy of its input, and the step one host sync; a pipeline's
#     every cycle syncs with the host; the reduction's per-step syncs grow with the replicas;
#  3. the pipeline bubble of equal stages matches (K-1)/(A+K-1), for gpipe and 1f1b, and gpipe
#     stashes more;
#  4. determinism: a pipelined, data-parallel job over two instances, run twice, gives bitwise
#     the same JSON, and the same figures as the job in one process;
#  5. the host feed: a slow host sets the step and shows as host wait;
#  6. time to train, --dump-model round trip, --sensitivity;
#  7. memory: BERT-Large on one IPU fails naming the stage, the layer, the bytes and the smallest
#     stage count that fits;
#  8. bad model files and bad options: exit status 2 and exactly one line on stderr.
set -euo pipefail
poprun=$1 simstep=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAILED: $*" >&2
  exit 1
}
json() { # FILE EXPR: prints EXPR evaluated over the JSON object j
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}

# 1. Every published run within 5%, from its configuration alone.
root=$(cd "$(dirname "$0")/../.." && pwd)
"$root/scripts/calibrate" --check --sim-step "$simstep" >"$dir/check.txt" ||
  { cat "$dir/check.txt"; fail "a run of the MLPerf v1.0 and v1.1 results is not within 5%"; }
grep -q "every run within 5%: yes" "$dir/check.txt" || fail "calibrate --check said no verdict"
[ "$(grep -c '^  | v1\.[01] ' "$dir/check.txt")" -eq 11 ] || fail "calibrate --check ran not 11 runs"
"$simstep" --model resnet50 --replicas 16 --topology POD16 --micro-batch 20 \
  --gradient-accumulation 10 --optimizer lars --json "$dir/rn50.json" >/dev/null
"$simstep" --model bert-large --replicas 4 --stages 4 --micro-batch 4 \
  --gradient-accumulation 192 --sequence-length 512 --sequences-per-pack 2 \
  --att-ffn-placement 4/5,7/6,6/7,7/6 --optimizer-state streaming-sharded --topology POD16 \
  --json "$dir/bert.json" >/dev/null
"$simstep" --model resnet50 --replicas 16 --topology POD16 --micro-batch 20 \
  --gradient-accumulation 10 --optimizer lars --ipu bow --json "$dir/rn50-bow.json" >/dev/null
python3 - "$dir/rn50.json" "$dir/bert.json" "$dir/rn50-bow.json" <<'PY'
import json, sys
rn, bert, bow = (json.load(open(p)) for p in sys.argv[1:4])
# The Bow IPU: the same tiles and memory at 1.85 GHz against 1.33: faster, by at most the clock.
assert rn["ipu"] == "GC200" and bow["ipu"] == "Bow", (rn["ipu"], bow["ipu"])
assert 1.2 < bow["samples_per_s"] / rn["samples_per_s"] < 1.85 / 1.33, bow["samples_per_s"]
assert bow["peak_memory_bytes"] == rn["peak_memory_bytes"]
assert rn["global_batch"] == 3200 and bert["global_batch"] == 3072, (rn, bert)
assert abs(rn["samples_per_s"] / 29543 - 1) < 0.05, rn["samples_per_s"]
assert abs(bert["samples_per_s"] / 1524 - 1) < 0.05, bert["samples_per_s"]
# The parts add up to the step; every stage fits its IPU.
for j in (rn, bert):
    parts = sum(j[k] for k in ("compute_us", "exchange_us", "sync_us", "idle_us", "host_wait_us"))
    assert abs(parts - j["step_time_us"]) < 1e-3 * j["step_time_us"], j
    assert all(s["memory_headroom_bytes"] >= 0 for s in j["per_stage"]), j["per_stage"]
# PopART's pipeline: 4 IPUs and the heads back on IPU 0 make 5 forward stages, 192 + 8 cycles;
# IPU 0 holds the embedding (layer 0) and the heads (the last layer).
assert bert["fragments"] == 5 and bert["pipeline_cycles"] == 200, bert
s0 = bert["per_stage"][0]
assert s0["first_layer"] == 0 and s0["last_layer"] == 254 and len(bert["per_stage"]) == 4, s0
print("calibration: ResNet-50 %.0f images/s (29,543), BERT-Large %.1f sequences/s (1,524)"
      % (rn["samples_per_s"], bert["samples_per_s"]))
PY

# 2. One IPU: accumulation 3 against 1 adds two micro-batches of every layer's passes.
cat >"$dir/mlp.model" <<'EOF'
gcl-model 1
name mlp
optimizer sgd
layer matmul name=fc1 in=4096 out=4096 bias=1 input_grad=0
layer elementwise name=relu values=4096
layer matmul name=fc2 in=4096 out=4096 bias=1
EOF
for a in 1 3; do
  "$simstep" --model "$dir/mlp.model" --micro-batch 64 --gradient-accumulation $a \
    --json "$dir/mlp$a.json" >/dev/null
done
python3 - "$dir/mlp1.json" "$dir/mlp3.json" <<'PY'
import json, sys
one, three = (json.load(open(p)) for p in sys.argv[1:3])
s = three["per_stage"][0]
hs = [c["value"] for c in three["constants"] if c["key"] == "host_sync_ns"][0] / 1e3
per = s["fwd_us"] + s["bwd_us"] + s["recompute_us"]  # no input bytes: no stream copy
assert s["recompute_us"] == 0 and per > 0 and hs > 0, s
assert abs((three["step_time_us"] - one["step_time_us"]) - 2 * per) < 1e-5, (one, three)
# One stage: one host sync per step, whatever the accumulation.
assert three["idle_us"] == 0 and abs(three["host_wait_us"] - hs) < 1e-5, three
assert abs(one["host_wait_us"] - hs) < 1e-5, one
print("a step is the sum of its layers and one host sync: %.3f us per micro-batch" % per)
PY

# 2b. A pipeline syncs with the host every cycle (A + 2P - 2 of them); the reduction's syncs
#     grow with the replicas: 2(n - 1) per call, ceil(gradient bytes / reduction_buffer_bytes)
#     calls (at most one per weight tensor).
for hs in 0 1000; do
  "$simstep" --model "$dir/mlp.model" --stages 2 --micro-batch 64 --gradient-accumulation 4 \
    --topology "POD16,host_sync_ns=$hs" --json "$dir/pipe$hs.json" >/dev/null
done
for r in 4 16; do
  "$simstep" --model "$dir/mlp.model" --replicas $r --micro-batch 64 --topology \
    POD16,reduction_buffer_bytes=1000000,sync_latency_ns=1000 --json "$dir/red$r.json" >/dev/null
done
python3 - "$dir/pipe0.json" "$dir/pipe1000.json" "$dir/red4.json" "$dir/red16.json" <<'PY'
import json, math, sys
p0, p1, r4, r16 = (json.load(open(p)) for p in sys.argv[1:5])
cycles = p1["pipeline_cycles"]
assert cycles == 4 + 2 * 2 - 2, cycles
assert abs((p1["host_wait_us"] - p0["host_wait_us"]) - cycles * 1.0) < 1e-6, (p0, p1)
# mlp: two 4096 x 4096 products with biases, 4 weight tensors carrying 67 MB of f16 gradient:
# 4 calls (one per tensor caps the 68 of 1 MB), each 2(n - 1) ring steps of a 1 us sync.
extra = (r16["sync_us"] - r4["sync_us"])
assert abs(extra - 4 * 2 * (16 - 4)) < 0.5, (r4["sync_us"], r16["sync_us"])
print("host syncs: %d a step of %d cycles; reduction syncs: +%.1f us from 4 to 16 replicas"
      % (cycles, cycles, extra))
PY

# 3. Four equal stages (a wide product between two narrow ones, so that what crosses a stage
#    boundary is small): the bubble is (K-1)/(A+K-1) = 3/11 for both schedules (no host
#    exchange here: it would be most of so small a step).
{
  echo "gcl-model 1"
  echo "optimizer sgd"
  for i in 0 1 2 3; do
    echo "layer matmul name=up$i in=64 out=4096"
    echo "layer matmul name=mid$i in=4096 out=4096"
    echo "layer matmul name=down$i in=4096 out=64"
  done
} >"$dir/eq.model"
for sched in gpipe 1f1b; do
  "$simstep" --model "$dir/eq.model" --stages 4 --pipeline-splits up1,up2,up3 --schedule $sched \
    --micro-batch 64 --gradient-accumulation 8 --topology POD16,host_sync_ns=0 \
    --json "$dir/eq-$sched.json" \
    >/dev/null
done
python3 - "$dir/eq-gpipe.json" "$dir/eq-1f1b.json" <<'PY'
import json, sys
g, f = (json.load(open(p)) for p in sys.argv[1:3])
for j in (g, f):
    assert abs(j["bubble_formula"] - 3 / 11) < 1e-6, j["bubble_formula"]
    assert abs(j["bubble_fraction"] / j["bubble_formula"] - 1) < 0.05, j
assert abs(g["step_time_us"] / f["step_time_us"] - 1) < 0.01, (g["step_time_us"], f["step_time_us"])
# gpipe holds all 8 micro-batches on stage 0, 1f1b at most 4.
assert g["per_stage"][0]["in_flight"] == 8 and f["per_stage"][0]["in_flight"] == 4
assert g["per_stage"][0]["plan_memory"]["stash"] == 2 * f["per_stage"][0]["plan_memory"]["stash"]
print("bubble: gpipe %.4f, 1f1b %.4f, formula %.4f" % (g["bubble_fraction"], f["bubble_fraction"],
                                                      f["bubble_formula"]))
PY

# 4. The same job twice over two instances, and in one process.
job=(--num-replicas 4 --ipus-per-replica 4 --num-instances 2 --offline-mode --topology POD16
     "$simstep" --model bert-large --gradient-accumulation 8 --steps 2)
"$poprun" "${job[@]}" --json "$dir/a.json" >/dev/null
"$poprun" "${job[@]}" --json "$dir/b.json" >/dev/null
cmp "$dir/a.json" "$dir/b.json" || fail "two runs of one job differ"
"$simstep" --model bert-large --replicas 4 --stages 4 --gradient-accumulation 8 --topology POD16 \
  --json "$dir/c.json" >/dev/null
python3 - "$dir/a.json" "$dir/c.json" <<'PY'
import json, sys
a, c = (json.load(open(p)) for p in sys.argv[1:3])
assert a["replicas"] == 4 and a["stages"] == 4 and a["ipus"] == 16 and a["instances"] == 2, a
assert a["exchange_us"] > 0 and a["allreduce_us"] > 0, a
for k in ("step_time_us", "compute_us", "exchange_us", "sync_us", "idle_us", "allreduce_us"):
    assert a[k] == c[k], (k, a[k], c[k])
print("deterministic: step", a["step_time_us"], "us, the same over 1 and 2 instances")
PY

# 5. A host that prepares 10,000 images/s feeds 3,200 a step: 320 ms, mostly host time.
"$simstep" --model resnet50 --replicas 16 --topology POD16 --host-samples-per-s 10000 \
  --json "$dir/host.json" >/dev/null
python3 - "$dir/host.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert abs(j["step_time_us"] / 320000 - 1) < 0.01, j["step_time_us"]
assert j["host_wait_us"] > 0.5 * j["step_time_us"] and j["dominant"] == "host", j
PY

# 6. Time to train; the dumped model is the built-in one; the sensitivity table.
"$simstep" --model resnet50 --replicas 16 --topology POD16 --epochs 2 --run-overhead-s 100 \
  --json "$dir/ttt.json" >/dev/null
python3 - "$dir/ttt.json" <<'PY'
import json, math, sys
j = json.load(open(sys.argv[1]))
steps = math.ceil(2 * 1281167 / 3200)
assert abs(j["time_to_train_s"] - (steps * j["step_time_us"] / 1e6 + 100)) < 1e-3, j
PY
"$simstep" --model resnet50 --dump-model >"$dir/rn50.model"
"$simstep" --model "$dir/rn50.model" --replicas 16 --topology POD16 --micro-batch 20 \
  --gradient-accumulation 10 --optimizer lars --json "$dir/rn50-file.json" >/dev/null
[ "$(json "$dir/rn50-file.json" 'j["step_time_us"]')" = "$(json "$dir/rn50.json" 'j["step_time_us"]')" ] ||
  fail "the dumped ResNet-50 model file does not simulate like the built-in one"
"$simstep" --model "$dir/mlp.model" --replicas 4 --topology POD16 --micro-batch 64 \
  --sensitivity --json "$dir/sens.json" >"$dir/sens.txt"
grep -q "^sensitivity: step time" "$dir/sens.txt" || fail "--sensitivity printed no table"
python3 - "$dir/sens.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
rows = {r["key"]: r for r in j["sensitivity"]}
t = j["step_time_us"]
amp = rows["amp_efficiency"]
assert amp["kind"] == "fitted" and amp["low_step_us"] > t > amp["high_step_us"] > 0, amp
assert rows["ipulink_latency_ns"]["high_step_us"] >= t, rows["ipulink_latency_ns"]
assert rows["gwlink_bandwidth_gbs"]["kind"] == "sourced"  # within its stated uncertainty
assert "amp_k_group_f32" not in rows  # no f32 layer: not rerun
PY

# 7. BERT-Large does not fit one IPU.
set +e
msg=$("$simstep" --model bert-large --stages 1 2>&1 >/dev/null)
rc=$?
set -e
[ $rc -eq 1 ] || fail "out of memory: exit status $rc, expected 1"
[ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] || fail "out of memory: not one line: $msg"
for want in "out of simulated IPU memory: stage 0 (layers word_embedding .. mlm_loss) needs" \
  "bytes of 940572672" "over, from layer" "; stage counts that fit: "; do
  grep -qF -- "$want" <<<"$msg" || fail "out of memory: '$msg' does not say '$want'"
done

# 8. Bad model files and options.
bad() { # expected-text args...
  local want=$1 rc out
  shift
  set +e
  out=$("$simstep" "$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "sim-step $*: exit status $rc, expected 2 ($out)"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "sim-step $*: not one line: $out"
  grep -qF -- "$want" <<<"$out" || fail "sim-step $*: '$out' does not say '$want'"
}
printf 'gcl-model 1\nlayer matmul in=8 out=8\nlayer lstm hidden=8\n' >"$dir/lstm.model"
bad "$dir/lstm.model:3: unsupported layer type 'lstm' (supported types: matmul, conv, attention, elementwise, norm, pool, embedding, loss)" \
  --model "$dir/lstm.model"
printf 'gcl-model 1\nlayer conv h=8 w=8 cin=3 kernel=3\n' >"$dir/conv.model"
bad "$dir/conv.model:2: conv: cout must be 1.." --model "$dir/conv.model"
printf 'gcl-model 1\nlayer matmul in=8 out=8 colour=red\n' >"$dir/key.model"
bad "$dir/key.model:2: matmul: unknown key 'colour' (matmul takes rows, in, out, bias" \
  --model "$dir/key.model"
printf 'layer matmul in=8 out=8\n' >"$dir/nover.model"
bad "$dir/nover.model:1: a model file starts with 'gcl-model 1'" --model "$dir/nover.model"
bad "cannot open model file 'gpt'" --model gpt
bad "--model: needed" --replicas 2
bad "--params was removed" --params 25M
bad "--micro-batch '0'" --model resnet50 --micro-batch 0
bad "--micro-batch 3: bert-large packs 2 samples per unit" --model bert-large --micro-batch 3 \
  --sequences-per-pack 2
bad "--sequences-per-pack '0.5'" --model bert-large --sequences-per-pack 0.5
bad "the placement holds 24 attention and 25 feed-forward sublayers, but bert-large has 24 and 24" \
  --model bert-large --stages 4 --att-ffn-placement 4/5,7/6,6/7,7/7
bad "the placement lists 2 IPUs, but a replica has 4 stages" --model bert-large --stages 4 \
  --att-ffn-placement 12/12,12/12
bad "'4/5,7' is not A/F,A/F" --model bert-large --stages 4 --att-ffn-placement 4/5,7
bad "--layers-per-ipu sums to 10 layers, but resnet50 has 175" --model resnet50 --stages 2 \
  --layers-per-ipu 5,5
bad "a placement runs PopART's pipeline (--schedule popart), not 1f1b" --model bert-large \
  --stages 4 --layers-per-ipu 3,7,7,7 --schedule 1f1b
bad "give a placement or --pipeline-splits, not both" --model bert-large --stages 4 \
  --layers-per-ipu 3,7,7,7 --pipeline-splits l8_qkv,l16_qkv,l20_qkv
bad "--replicated-tensor-sharding 'yes'" --model bert-large --replicated-tensor-sharding yes
bad "not both" --model bert-large --optimizer-state sharded --optimizer-state-offchip
bad "--optimizer 'lion'" --model resnet50 --optimizer lion
bad "--plan: needs --topology and --global-batch" --model resnet50 --plan
bad "a range LO-HI is for --plan" --model resnet50 --global-batch 1024-2048
bad "--no-ranges: is for --plan" --model resnet50 --no-ranges
bad "--ipu 'mk3': expected gc200 or bow" --model resnet50 --ipu mk3
bad "ipu must be gc200 or bow (got 'mk3')" --model resnet50 --topology POD16,ipu=mk3
bad "--steps: needs a value" --model resnet50 --steps
bad "unknown option '--bogus'" --model resnet50 --bogus 1
bad "unexpected argument 'resnet50'" resnet50
bad "--grad-type 'bf16'" --model resnet50 --grad-type bf16
bad "--sequence-length '256'" --model bert-large --sequence-length 256
bad "--sequence-length: applies to bert-large only" --model resnet50 --sequence-length 128
bad "--schedule 'zigzag'" --model resnet50 --schedule zigzag
bad "--pipeline-splits: 'nolayer' is not a layer" --model bert-large --pipeline-splits l8_qkv,l16_qkv,nolayer
bad "--pipeline-splits 'l8_qkv': give 3 first layers" --model bert-large --pipeline-splits l8_qkv
bad "not both" --model resnet50 --gradient-accumulation 2 --global-batch 64
bad "--global-batch '100'" --model resnet50 --replicas 4 --global-batch 100
bad "--epochs: bert-large has no dataset size" --model bert-large --epochs 1
bad "unknown key 'warp'" --model resnet50 --topology POD16,warp=1
set +e
out=$("$poprun" --num-replicas 2 --offline-mode "$simstep" --model resnet50 --stages 2 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "--stages against the job: exit status $rc, expected 2"
grep -q "must equal the job's IPUs per replica" <<<"$out" || fail "--stages: got '$out'"
set +e
out=$("$poprun" --num-replicas 2 --num-instances 2 --offline-mode "$simstep" --model resnet50 \
  --sensitivity 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "--sensitivity under poprun: exit status $rc, expected 2"
grep -q "run sim-step without poprun" <<<"$out" || fail "--sensitivity under poprun: '$out'"
help=$("$simstep" --help) # whole: grep -q on a pipe may close it early (SIGPIPE under pipefail)
grep -q "usage: sim-step" <<<"$help" || fail "--help"
echo "sim-step checks PASSED"
