#!/usr/bin/env bash
# elastic_test.sh CASE POPRUN TRAIN WEIGHTS_CMP [NETNS_CLUSTER]
#
# Elastic training (poprun --elastic --min-replicas M) with examples/train on a small slice of
# Fashion-MNIST, 8 replicas over 4 instances, each case a few seconds. Instances die by train's
# own --fault kill-after-step:N@I (SIGKILL after step N), so that every run loses them at the same
# step. CASE is one of:
#   shrink      one of 4 instances killed: the job goes on with 3, from memory (no process
#               restarts, no checkpoint), and ends 0; two such runs end bitwise identical; the
#               accuracy is within 0.3 points of an undisturbed run's; the log names the step,
#               the instance lost and the new layout; the simulated step is reported before and
#               after
#   two_and_resize  two instances killed at once, and a third killed by GCL_FAULT_INJECT during
#               the resize itself: the last one goes on alone; two such runs are identical
#   below_min   --min-replicas 7: losing 2 of 8 replicas stops the job as a job without --elastic
#               stops (the lost instance's status, 137), one line naming the instance lost
#   pipeline    2 IPUs per replica (pipeline stages): a lost instance takes its whole replicas,
#               the others go on; two such runs identical
#   grow        --max-restarts 1: the lost instance's replacement joins at a step boundary
#               ($TRAIN_ELASTIC_JOIN_AT), receives the state, and the job ends on 8 replicas
#               again; two such runs identical
#   hosts       the shrink across 4 namespace hosts (root; else skip, 77): bitwise the same as on
#               one host
# and in the full tier:
#   accuracy    the main job (train's defaults, 30 epochs, 16 replicas over 4 instances) with
#               instance 1 killed at step 1000: within 0.3 points of the undisturbed run's test
#               accuracy, and with --max-restarts 1 (its replacement joins at step 2000) too
#   recovery    scripts/elastic-recovery --runs 1 (4 namespace hosts; root, else 77): the
#               elastic job's first step after the kill within 2 s of it, and sooner than the
#               restart path's
set -uo pipefail
case_name=$1 poprun=$2 train=$3 cmp=$4 cluster=${5:-}
data=${TRAIN_TEST_DATA:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d /tmp/elastic-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
small=(--data "$data" --train-samples 2048 --test-samples 512 --hidden 64,32 --epochs 2
       --progress plain)
job=(--num-replicas 8 --num-instances 4)

fail() {
  echo "elastic_test.sh $case_name: FAILED: $*" >&2
  exit 1
}

# run NAME STATUS COMMAND...: runs COMMAND with its output in $work/NAME.out; STATUS 0 or a number.
run() {
  local name=$1 want=$2
  shift 2
  "$@" >"$work/$name.out" 2>&1
  local status=$?
  if [ "$status" -ne "$want" ]; then
    echo "---- $name: exit status $status, expected $want: $* ----" >&2
    cat "$work/$name.out" >&2
    fail "$name"
  fi
}

expect() {
  grep -Eq -- "$2" "$work/$1.out" || {
    cat "$work/$1.out" >&2
    fail "the output of $1 lacks /$2/"
  }
}

absent() {
  ! grep -Eq -- "$2" "$work/$1.out" || {
    cat "$work/$1.out" >&2
    fail "the output of $1 has /$2/"
  }
}

same() { "$cmp" --exact "$work/$1.w" "$work/$2.w" || fail "$1 and $2 differ"; }

accuracy() { sed -nE 's/.*train: test accuracy ([0-9.]+) .*/\1/p' "$work/$1.out"; }

# The elastic runs NAME1 and NAME2 of the same fault: both end 0, bitwise the same.
twice() {
  local name=$1
  shift
  run "${name}1" 0 "$@" --save-weights "$work/${name}1.w"
  run "${name}2" 0 "$@" --save-weights "$work/${name}2.w"
  same "${name}1" "${name}2"
}

case_shrink() {
  run clean 0 "$poprun" "${job[@]}" "$train" "${small[@]}" --save-weights "$work/clean.w"
  twice shrink "$poprun" --elastic --min-replicas 2 "${job[@]}" "$train" "${small[@]}" \
    --fault kill-after-step:6@1
  local o=shrink1
  expect $o "^\[instance 1\] train: killing this instance after step 6 "
  expect $o "^poprun: elastic: instance 1 \(host [^,]*, pid [0-9]+\) lost: "
  expect $o "^poprun: elastic: epoch 1: 3 instances, 6 replicas; lost instance 1$"
  expect $o "^\[instance 0\] train: step 6: membership 1 \(lost instance 1\): 6 replicas over 3 instances go on from memory; each step's 8 micro-batches of 32 split 1 to 2 per replica \(global batch 256\)$"
  expect $o "^\[instance 0\] train: elastic: steps 1-6 on 8 replicas: simulated [0-9.]+ ms per step$"
  expect $o "^\[instance 0\] train: elastic: steps 7-16 on 6 replicas: simulated [0-9.]+ ms per step$"
  # No process started again: one banner, no restart, no replacement, no checkpoint.
  [ "$(grep -c "train: MLP " "$work/$o.out")" -eq 1 ] || fail "a second banner: a restart"
  absent $o "restart|replacement|resuming"
  local a b
  a=$(accuracy clean) b=$(accuracy $o)
  python3 -c "import sys; sys.exit(abs($a - $b) > 0.003)" ||
    fail "accuracy $b after the shrink, $a undisturbed: more than 0.3 points apart"
  echo "shrink: test accuracy $b (undisturbed $a)"
}

case_two_and_resize() {
  twice two "$poprun" -x GCL_FAULT_INJECT=resize:1@3 --elastic --min-replicas 2 "${job[@]}" \
    "$train" "${small[@]}" --fault kill-after-step:6@1+2
  expect two1 "^poprun: elastic: epoch 1: 2 instances, 4 replicas; lost instances [12], [12]$"
  expect two1 "GCL_FAULT_INJECT: resize #1 of this process fails on purpose"
  expect two1 "^poprun: elastic: epoch 2: 1 instance, 2 replicas; lost instance 3$"
  expect two1 "^\[instance 0\] train: step 6: membership 2 \(lost instances [12], [12], 3\): 2 replicas over 1 instance go on from memory"
}

case_below_min() {
  run below 137 "$poprun" --elastic --min-replicas 7 "${job[@]}" "$train" "${small[@]}" \
    --fault kill-after-step:6@2
  expect below "^poprun: the elastic job stopped: 6 replicas left \(instance 2 lost\), fewer than --min-replicas 7; instance 2 \(host localhost\) was killed by signal 9 \(SIGKILL\)$"
  expect below "train: the elastic job cannot go on: 6 replicas left \(instance 2 lost\), fewer than --min-replicas 7"
}

case_pipeline() {
  twice pipe "$poprun" --elastic --min-replicas 1 --num-replicas 4 --num-instances 4 \
    --ipus-per-replica 2 "$train" "${small[@]}" --gradient-accumulation 4 --batch-size 16 \
    --fault kill-after-step:6@2
  expect pipe1 "^\[instance 0\] train: step 6: membership 1 \(lost instance 2\): 3 replicas over 3 instances go on from memory; each step's 16 micro-batches of 16 split 5 to 6 per replica"
}

case_grow() {
  TRAIN_ELASTIC_JOIN_AT=12 twice grow "$poprun" --elastic --min-replicas 2 --max-restarts 1 \
    "${job[@]}" "$train" "${small[@]}" --fault kill-after-step:6@1
  expect grow1 "^poprun: elastic: starting a replacement for instance 1 \(1 of 1\)$"
  expect grow1 "^poprun: elastic: instance 1 \(host [^,]*, pid [0-9]+\) waits to rejoin at the next step boundary$"
  expect grow1 "^poprun: elastic: epoch 2: 4 instances, 8 replicas; joined 1$"
  expect grow1 "^\[instance 0\] train: step 12: membership 2 \(joined 1\): 8 replicas over 4 instances go on from memory"
  expect grow1 "^\[instance 0\] train: elastic: steps 13-16 on 8 replicas: simulated"
}

case_accuracy() {
  local full=(--progress none)
  run clean 0 "$poprun" --num-replicas 16 --num-instances 4 "$train" "${full[@]}"
  run lost 0 "$poprun" --elastic --min-replicas 8 --num-replicas 16 --num-instances 4 "$train" \
    "${full[@]}" --fault kill-after-step:1000@1
  TRAIN_ELASTIC_JOIN_AT=2000 run back 0 "$poprun" --elastic --min-replicas 8 --max-restarts 1 \
    --num-replicas 16 --num-instances 4 "$train" "${full[@]}" --fault kill-after-step:1000@1
  expect back "^poprun: elastic: epoch 2: 4 instances, 16 replicas; joined 1$"
  local a b c
  a=$(accuracy clean) b=$(accuracy lost) c=$(accuracy back)
  echo "test accuracy: undisturbed $a, shrunk at step 1000 $b, and grown back at 2000 $c"
  for x in "$b" "$c"; do
    python3 -c "import sys; sys.exit(abs($a - $x) > 0.003)" ||
      fail "accuracy $x: more than 0.3 points from the undisturbed run's $a"
  done
}

case_recovery() {
  local root out=$work/recovery.json
  root=$(cd "$(dirname "$0")/../.." && pwd)
  GCL_BUILD_DIR=$(cd "$(dirname "$poprun")/.." && pwd) "$root/scripts/elastic-recovery" \
    --runs 1 --out "$out" >"$work/recovery.out" 2>&1
  local rc=$?
  [ "$rc" -ne 77 ] || exit 77
  [ "$rc" -eq 0 ] || { cat "$work/recovery.out" >&2; fail "scripts/elastic-recovery: $rc"; }
  cat "$work/recovery.out"
  python3 - "$out" <<'EOF' || fail "the elastic recovery is not under 2 s and sooner than a restart"
import json, sys
m = json.load(open(sys.argv[1]))["median_recover_s"]
sys.exit(not (0 < m["elastic"] < 2.0 and m["elastic"] < m["restart"]))
EOF
}

case_hosts() {
  [ -n "$cluster" ] || fail "hosts needs NETNS_CLUSTER"
  run one 0 "$poprun" --elastic --min-replicas 2 "${job[@]}" "$train" "${small[@]}" \
    --fault kill-after-step:6@1 --save-weights "$work/one.w"
  "$cluster" 4 -- "$poprun" -H h1,h2,h3,h4 --elastic --min-replicas 2 "${job[@]}" "$train" \
    "${small[@]}" --fault kill-after-step:6@1 --save-weights "$work/hosts.w" \
    >"$work/hosts.out" 2>&1
  local rc=$?
  [ "$rc" -ne 77 ] || exit 77
  [ "$rc" -eq 0 ] || { cat "$work/hosts.out" >&2; fail "across hosts: exit status $rc"; }
  expect hosts "^poprun: elastic: instance 1 \(host h2, pid [0-9]+\) lost: "
  expect hosts "^poprun: elastic: epoch 1: 3 instances, 6 replicas; lost instance 1$"
  same one hosts
}

"case_$case_name"
echo "elastic_test.sh $case_name: ok"
