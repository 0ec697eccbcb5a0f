#!/usr/bin/env bash
# simstep_check.sh POPRUN SIM_STEP
#
# sim-step on its own:
#  1. a step whose simulated time is known exactly (one IPU: 3 ms of compute, nothing else);
#  2. determinism: a pipelined, data-parallel job over two instances, run twice, gives bitwise
#     the same JSON result (step time, split, memory);
#  3. a model that does not fit an IPU's SRAM fails with the simulator's out-of-memory message;
#  4. bad options: exit status 2 and exactly one line on stderr, naming the option.
set -euo pipefail
poprun=$1 simstep=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() {
  echo "FAILED: $*" >&2
  exit 1
}

# 1. 250 GFLOP forward at the f16 peak of 250 TFLOPS is 1 ms; backward is 2 ms; one replica has
#    nothing to all-reduce and one stage nothing to send.
"$simstep" --params 1000 --flops-per-sample 250G --micro-batch 1 --gradient-accumulation 1 \
  --json "$dir/one.json" >/dev/null
python3 - "$dir/one.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["step_time_us"] == 3000.0, j
assert j["compute_us"] == 3000.0 and j["exchange_us"] == 0 and j["idle_us"] == 0, j
assert abs(j["samples_per_s"] - 1000 / 3) < 1e-3 and j["dominant"] == "compute", j
assert j["peak_memory_bytes"] == 4000, j   # 1000 f16 weights + 1000 f16 gradients
print("exact one-IPU step: 3000 us")
PY

# 2. The same job twice.
job=(--num-replicas 4 --ipus-per-replica 2 --num-instances 2 --offline-mode --topology POD16
     "$simstep" --model bert-large --gradient-accumulation 4 --steps 2)
"$poprun" "${job[@]}" --json "$dir/a.json" >/dev/null
"$poprun" "${job[@]}" --json "$dir/b.json" >/dev/null
cmp "$dir/a.json" "$dir/b.json" || fail "two runs of one job differ"
python3 - "$dir/a.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
assert j["replicas"] == 4 and j["stages"] == 2 and j["ipus"] == 8 and j["instances"] == 2, j
assert j["global_batch"] == 4 * 8 * 4 and j["grad_bytes_per_ipu"] == 170000000 * 2, j
parts = j["compute_us"] + j["exchange_us"] + j["sync_us"] + j["idle_us"]
assert 0 < parts <= j["step_time_us"] * (1 + 1e-9), j
# Two stages over four micro-batches: the pipeline leaves each stage idle for about one
# micro-batch's forward and backward of every step, a quarter of its compute.
assert 0.9 * j["compute_us"] / 4 <= j["idle_us"] <= 1.5 * j["compute_us"] / 4, j
assert j["exchange_us"] > 0 and j["allreduce_us"] > 0, j
print("deterministic: step", j["step_time_us"], "us")
PY

# 3. One stage of BERT-Large in f32: 1.36 GB of weights alone.
set +e
msg=$("$simstep" --model bert-large --compute-type f32 2>&1 >/dev/null)
rc=$?
set -e
[ $rc -eq 1 ] || fail "out of memory: exit status $rc, expected 1"
grep -q "out of simulated IPU memory" <<<"$msg" || fail "out of memory: got '$msg'"

# 4. Bad options.
bad() { # expected-text args...
  local want=$1 rc out
  shift
  set +e
  out=$("$simstep" "$@" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ $rc -eq 2 ] || fail "sim-step $*: exit status $rc, expected 2"
  [ "$(printf '%s\n' "$out" | wc -l)" -eq 1 ] || fail "sim-step $*: not one line: $out"
  grep -q -- "$want" <<<"$out" || fail "sim-step $*: '$out' does not say '$want'"
}
bad "--model 'gpt'" --model gpt
bad "--params '-5'" --params -5
bad "--params '1X'" --params 1X
bad "--micro-batch '0'" --model resnet50 --micro-batch 0
bad "--steps: needs a value" --model resnet50 --steps
bad "unknown option '--bogus'" --model resnet50 --bogus 1
bad "unknown option '--step'" --model resnet50 --step 1
bad "unexpected argument 'resnet50'" resnet50
bad "--grad-type 'bf16'" --model resnet50 --grad-type bf16
bad "--compute-efficiency '1.5'" --model resnet50 --compute-efficiency 1.5
bad "custom needs --params" --flops-per-sample 1G
bad "not both" --model resnet50 --gradient-accumulation 2 --global-batch 64
bad "--global-batch '100'" --model resnet50 --replicas 4 --global-batch 100
bad "--activation-size" --params 1M --flops-per-sample 1G --stages 2
set +e
out=$("$poprun" --num-replicas 2 --offline-mode "$simstep" --model resnet50 --stages 2 2>&1)
rc=$?
set -e
[ $rc -eq 2 ] || fail "--stages against the job: exit status $rc, expected 2"
grep -q "must equal the job's IPUs per replica" <<<"$out" || fail "--stages: got '$out'"
"$simstep" --help | grep -q "usage: sim-step" || fail "--help"
echo "sim-step checks PASSED"
