#!/usr/bin/env bash
# shellcheck disable=SC2054 # commas inside array items are --hidden widths
# train_test.sh CASE POPRUN TRAIN WEIGHTS_CMP
#
# Multi-process checks of examples/train on small slices of Fashion-MNIST, so that each takes
# seconds. CASE is one of:
#   data_parallel  N replicas of batch b end with the weights of 1 replica of batch N x b
#   pipeline       k stages (gpipe and 1f1b) end with the weights of the unsplit model
#   resume         runs killed at several moments and resumed end bitwise as uninterrupted
#   corrupt        a corrupt newest checkpoint is skipped with a warning, and the result holds
#   diverge        replicas whose weights differ fail loudly
#   oom            a model too large for one IPU fails with the memory report; split, it runs
#   bad_input      bad options exit 2 with one line; bad data exits 1 with one line
#   json           f16 gradients train, and --json holds the results
# TRAIN_TEST_DATA points at the dataset (default: Debian's dataset-fashion-mnist).
set -uo pipefail
case_name=$1 poprun=$2 train=$3 cmp=$4
data=${TRAIN_TEST_DATA:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d /tmp/train-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
small=(--data "$data" --train-samples 2048 --test-samples 512 --hidden 64,32 --epochs 2
       --progress plain)

fail() {
  echo "train_test.sh $case_name: FAILED: $*" >&2
  exit 1
}

# run NAME STATUS COMMAND...: runs COMMAND with its output in $work/NAME.out; STATUS is 0,
# "fail" (any non-zero) or a number.
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$work/$name.out" 2>&1
  local status=$?
  local ok=0
  case $want in
    0) [ $status -eq 0 ] && ok=1 ;;
    fail) [ $status -ne 0 ] && ok=1 ;;
    *) [ $status -eq "$want" ] && ok=1 ;;
  esac
  if [ $ok -ne 1 ]; then
    echo "---- $name: exit status $status, expected $want: $* ----" >&2
    cat "$work/$name.out" >&2
    fail "$name"
  fi
}

# expect NAME PATTERN: the output of run NAME matches the extended regular expression.
expect() {
  grep -Eq -- "$2" "$work/$1.out" || {
    cat "$work/$1.out" >&2
    fail "the output of $1 lacks /$2/"
  }
}

same() { # bitwise equal parameters and optimizer state
  "$cmp" --exact "$1" "$2" || fail "$1 and $2 differ"
}

case_data_parallel() {
  # 4 replicas over 2 instances, batch 16 each; then 1 replica of batch 64: the same samples
  # in every step. SGD, because its update is linear in the gradient, so the rounding of the
  # two all-reduce orders stays at the rounding level; f32 throughout.
  local common=("${small[@]}" --optimizer sgd --max-steps 40 --seed 5)
  run dp4 0 "$poprun" --num-replicas 4 --num-instances 2 "$train" "${common[@]}" \
    --batch-size 16 --save-weights "$work/dp4.w"
  run dp1 0 "$train" "${common[@]}" --batch-size 64 --save-weights "$work/dp1.w"
  "$cmp" --rtol 1e-5 "$work/dp4.w" "$work/dp1.w" || fail "4 x 16 and 1 x 64 disagree"
  # Adam too, with a looser bound: it divides by the gradient's own size, so rounding counts
  # for more where gradients are tiny.
  run adam4 0 "$poprun" --num-replicas 4 --num-instances 2 "$train" "${common[@]}" \
    --optimizer adam --batch-size 16 --max-steps 10 --save-weights "$work/adam4.w"
  run adam1 0 "$train" "${common[@]}" --optimizer adam --batch-size 64 --max-steps 10 \
    --save-weights "$work/adam1.w"
  "$cmp" --rtol 1e-4 "$work/adam4.w" "$work/adam1.w" || fail "Adam: 4 x 16 and 1 x 64 disagree"
}

case_pipeline() {
  local common=("${small[@]}" --max-steps 12 --batch-size 8 --gradient-accumulation 4)
  run unsplit 0 "$train" "${common[@]}" --save-weights "$work/unsplit.w"
  for k in 2 3; do
    for sched in gpipe 1f1b; do
      run "p$k-$sched" 0 "$train" "${common[@]}" --ipus-per-replica "$k" \
        --pipeline-schedule "$sched" --save-weights "$work/p$k-$sched.w"
      expect "p$k-$sched" "pipeline $sched, 4 micro-batches"
      same "$work/unsplit.w" "$work/p$k-$sched.w"
    done
  done
  # Pipelined and data-parallel at once, across instances: 2 replicas of 2 stages.
  run dp_unsplit 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" "${common[@]}" \
    --save-weights "$work/dp_unsplit.w"
  run dp_split 0 "$poprun" --num-replicas 2 --num-instances 2 --ipus-per-replica 2 "$train" \
    "${common[@]}" --save-weights "$work/dp_split.w"
  same "$work/dp_unsplit.w" "$work/dp_split.w"
}

# The uninterrupted reference for the resume cases: 2 replicas over 2 instances, 30 steps.
resume_args=("${small[@]}" --batch-size 16 --max-steps 30 --checkpoint-every 4)
reference() {
  run reference 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" "${resume_args[@]}" \
    --save-weights "$work/reference.w"
}

# killed_then_resumed NAME FAULT...: a run with FAULT dies; resumed, it ends as the reference.
killed_then_resumed() {
  local name=$1
  shift
  local dir="$work/$name.ckpt"
  run "$name-killed" fail "$poprun" --num-replicas 2 --num-instances 2 "$train" \
    "${resume_args[@]}" --checkpoint "$dir" "$@"
  run "$name-resumed" 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" \
    "${resume_args[@]}" --checkpoint "$dir" --resume --save-weights "$work/$name.w"
  same "$work/reference.w" "$work/$name.w"
}

case_resume() {
  reference
  killed_then_resumed after_step --fault kill-after-step:14
  expect after_step-resumed "resuming from .*ckpt-0000000012.gclt \(step 12\)"
  killed_then_resumed mid_write --fault kill-mid-checkpoint:16
  expect mid_write-resumed "resuming from .*ckpt-0000000012.gclt"
  killed_then_resumed before_rename --fault kill-before-rename:8
  expect before_rename-resumed "resuming from .*ckpt-0000000004.gclt"
  # Killed from outside (poprun ends every instance on SIGTERM) at a moment the test does not
  # choose: a random delay after the first checkpoint appears, in a run long enough (1280 steps
  # of a wider model) for the signal to land in the middle. Then resumed twice: the second
  # resume finds the finished run's last checkpoint.
  local long=(--data "$data" --train-samples 4096 --test-samples 512 --hidden 256,128
              --epochs 10 --batch-size 16 --checkpoint-every 10 --progress plain --log-every 1)
  local dir="$work/term.ckpt"
  run long-reference 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" "${long[@]}" \
    --save-weights "$work/long-reference.w"
  "$poprun" --num-replicas 2 --num-instances 2 "$train" "${long[@]}" --checkpoint "$dir" \
    >"$work/term-killed.out" 2>&1 &
  local pid=$!
  for _ in $(seq 400); do
    [ -e "$dir/ckpt-0000000010.gclt" ] && break
    sleep 0.02
  done
  sleep "$((RANDOM % 2)).$((RANDOM % 10))"
  kill -TERM "$pid"
  wait "$pid" && echo "note: the run ended before SIGTERM reached it"
  grep -o "step [0-9]*/1280" "$work/term-killed.out" | tail -1 | sed 's/^/killed after /'
  for i in 1 2; do
    run "term-resumed$i" 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" "${long[@]}" \
      --checkpoint "$dir" --resume --save-weights "$work/term$i.w"
    same "$work/long-reference.w" "$work/term$i.w"
  done
  expect term-resumed2 "resuming from .*ckpt-0000001280.gclt"
  [ "$(stat -c %a "$dir/ckpt-0000001280.gclt")" = 600 ] || fail "checkpoints must be mode 0600"
  [ "$(find "$dir" -type f | wc -l)" -eq 3 ] || fail "--keep-checkpoints 3: $(ls -a "$dir")"
}

case_corrupt() {
  reference
  local dir="$work/c.ckpt"
  run killed fail "$poprun" --num-replicas 2 --num-instances 2 "$train" "${resume_args[@]}" \
    --checkpoint "$dir" --fault kill-after-step:22
  # Flip one byte in the middle of the newest checkpoint and cut the one before it short.
  printf '\x5a' | dd of="$dir/ckpt-0000000020.gclt" bs=1 seek=2000 conv=notrunc status=none
  truncate -s 1000 "$dir/ckpt-0000000016.gclt"
  run resumed 0 "$poprun" --num-replicas 2 --num-instances 2 "$train" "${resume_args[@]}" \
    --checkpoint "$dir" --resume --save-weights "$work/corrupt.w"
  expect resumed "warning: skipping corrupt checkpoint .*ckpt-0000000020.gclt: checksum mismatch"
  expect resumed "warning: skipping corrupt checkpoint .*ckpt-0000000016.gclt: .*truncated"
  expect resumed "resuming from .*ckpt-0000000012.gclt"
  same "$work/reference.w" "$work/corrupt.w"
  # A checkpoint of another configuration is refused, not silently used.
  run other fail "$train" "${resume_args[@]}" --seed 99 --checkpoint "$dir" --resume
  expect other "cannot resume from .*: it was written by a run with a different --seed"
}

case_diverge() {
  run diverge fail "$poprun" --num-replicas 4 --num-instances 2 "$train" "${small[@]}" \
    --batch-size 16 --max-steps 5 --fault diverge:3
  expect diverge "replicas diverged after step 5: the weights of pipeline stage 0 differ"
}

case_oom() {
  # 784-8192-8192-8192-10 with SGD momentum: weights, gradients and momentum are 1.69 GB, more
  # than a GC200's 940 MB of SRAM; over 4 IPUs the largest stage needs 806 MB.
  local big=(--data "$data" --train-samples 256 --test-samples 16 --hidden 8192,8192,8192
             --batch-size 4 --max-steps 1 --progress plain)
  run oom1 1 "$train" "${big[@]}"
  expect oom1 "needs 1689.0 MB of simulated IPU memory"
  expect oom1 "bytes are allocated"
  expect oom1 "weights, layers 1-4"
  expect oom1 "--ipus-per-replica"
  run oom4 0 "$poprun" --num-replicas 1 --ipus-per-replica 4 "$train" "${big[@]}" \
    --gradient-accumulation 4
  expect oom4 "peak IPU memory [0-9.]+ MB of 940.6 MB"
}

case_bad_input() {
  local bad=("--epochs 0" "--batch-size x" "--hidden 64,,32" "--hidden 0" "--optimizer rmsprop"
             "--lr -1" "--pipeline-schedule zigzag" "--grad-dtype i32" "--fault boom:1"
             "--frobnicate 1" "--resume" "--seed -3" "--progress loud" "--epochs")
  local i=0
  for args in "${bad[@]}"; do
    # shellcheck disable=SC2086 # the options are words
    run "bad$i" 2 "$train" $args
    [ "$(wc -l <"$work/bad$i.out")" -eq 1 ] || fail "'$args' must print one line"
    expect "bad$i" "^train: "
    i=$((i + 1))
  done
  run ga 2 "$train" "${small[@]}" --ipus-per-replica 3 --gradient-accumulation 2
  expect ga "needs at least 3 micro-batches"
  run layers 2 "$train" "${small[@]}" --ipus-per-replica 4
  expect layers "only 3 layers"
  run mismatch 2 "$poprun" --num-replicas 2 "$train" "${small[@]}" --replicas 4
  expect mismatch "disagrees with poprun's 2 replicas"
  run nodata 1 "$train" --data "$work/nowhere"
  expect nodata "cannot read the dataset: .*nowhere/train-images-idx3-ubyte.gz: No such file"
  # A truncated copy of the labels, and a corrupt copy of the images.
  mkdir "$work/d"
  cp "$data"/*.gz "$work/d/"
  head -c 20000 "$data/train-labels-idx1-ubyte.gz" >"$work/d/train-labels-idx1-ubyte.gz"
  run truncated 1 "$train" --data "$work/d"
  expect truncated "cannot read the dataset: .*train-labels-idx1-ubyte.gz: corrupt gzip stream"
  [ "$(wc -l <"$work/truncated.out")" -eq 1 ] || fail "a bad data file must be one line"
  cp "$data/train-labels-idx1-ubyte.gz" "$work/d/"
  printf 'garbage!' | dd of="$work/d/t10k-images-idx3-ubyte.gz" bs=1 seek=5000 conv=notrunc \
    status=none
  run corrupt 1 "$train" --data "$work/d"
  expect corrupt "cannot read the dataset: .*t10k-images-idx3-ubyte.gz: corrupt gzip stream"
  run phantom 2 env GCL_SIM_PHANTOM=1 "$train" "${small[@]}"
  expect phantom "phantom buffers"
}

case_json() {
  run f16 0 "$poprun" --num-replicas 4 --num-instances 2 "$train" "${small[@]}" --epochs 3 \
    --batch-size 16 --grad-dtype f16 --json "$work/r.json"
  expect f16 "f16 gradients"
  expect f16 "simulated on [A-Z0-9]+ \([0-9]+ IPUs\): [0-9.]+ (us|ms) per step"
  python3 - "$work/r.json" <<'PY' || fail "bad JSON"
import json, sys
r = json.load(open(sys.argv[1]))
for k in ("test_accuracy", "samples_per_s", "sim_step_time_s", "sim_samples_per_s", "topology",
          "epoch_history", "replicas", "global_batch"):
    assert k in r, k
assert 0.7 < r["test_accuracy"] <= 1, r["test_accuracy"]
assert r["sim_step_time_s"] > 0 and r["replicas"] == 4 and r["global_batch"] == 64
assert r["grad_dtype"] == "f16" and len(r["epoch_history"]) == 3
PY
  # A scale that overflows f16 stops the run with advice, rather than training on infinities.
  run overflow 1 "$train" "${small[@]}" --replicas 2 --grad-dtype f16 --grad-scale 65504
  expect overflow "f16 gradient all-reduce of stage 0 overflowed; use a smaller --grad-scale"
}

"case_$case_name"
echo "train_test.sh $case_name: PASSED"
