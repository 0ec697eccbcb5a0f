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
#   alone       2 instances, one killed: the other goes on alone, and its replacement still joins
#               at a step boundary (a lone instance's step agreement goes through the store too)
#   hosts       the shrink across 4 namespace hosts (root; else skip, 77): bitwise the same as on
#               one host
#   outlive     --max-restarts 4: instances 1 and 2 killed in turn and replaced, then 0 and 3:
#               the job's mpirun, whose instances are all gone, ends, and the job goes on in the
#               replacements (their own mpiruns), takes those of 0 and 3 in, and ends 0
#   partition   4 namespace hosts (root; else skip, 77), --max-restarts 2: host h4's link down 7 s,
#               twice: each time the others leave instance 3 out and go on, and once the link is
#               back a replacement of it joins ($TRAIN_ELASTIC_JOIN_AT) and the job is whole
#               again; the second time the instance partitioned is itself a replacement. The job
#               ends 0 on 8 replicas, and nothing of it is left on the hosts
#   interrupt   SIGINT to every process of the job at once (as Slurm's scancel --signal sends
#               it): the job stops after a step as one without --elastic does (130, train says
#               so), and no instance is lost, replaced or left out on the way (before, the stop
#               markers of the wrappers were taken for losses: replacements started, and the
#               instances failed one another)
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

case_alone() {
  TRAIN_ELASTIC_JOIN_AT=12 twice alone "$poprun" --elastic --min-replicas 2 --max-restarts 1 \
    --num-replicas 4 --num-instances 2 "$train" "${small[@]}" --fault kill-after-step:6@1
  expect alone1 "^poprun: elastic: epoch 1: 1 instance, 2 replicas; lost instance 1$"
  expect alone1 "^poprun: elastic: epoch 2: 2 instances, 4 replicas; joined 1$"
  expect alone1 "^\[instance 0\] train: step 12: membership 2 \(joined 1\): 4 replicas over 2 instances go on from memory"
  expect alone1 "^\[instance 0\] train: elastic: steps 13-32 on 4 replicas: simulated"
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

# wait_line FILE REGEX SECONDS [N]: whether N lines (default 1) of FILE match REGEX within
# SECONDS. FILE may not exist yet (the job's shell has not opened it): no line matches then.
wait_line() {
  local i n
  for ((i = 0; i < $3 * 10; i++)); do
    n=$(grep -Ec -- "$2" "$1" 2>/dev/null)
    [ "${n:-0}" -lt "${4:-1}" ] || return 0
    sleep 0.1
  done
  return 1
}

# The oldest train process of instance $2 of the job marked $1 (ELASTIC_TEST_MARK).
oldest_train() {
  local p env
  for p in $(pgrep -x train | sort -n); do
    env=$(tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null) || continue
    if grep -qx "ELASTIC_TEST_MARK=$1" <<<"$env" >/dev/null &&
      grep -qx "POPDIST_INSTANCE_INDEX=$2" <<<"$env" >/dev/null; then
      echo "$p"
      return
    fi
  done
}

# stop_job PID OUT WHY: ends the job in the background and fails, with its output.
stop_job() {
  kill -TERM "$1" 2>/dev/null
  wait "$1"
  cat "$2" >&2
  fail "$3"
}

case_outlive() {
  local mark=elastic-outlive-$$ out=$work/outlive.out pid slot
  TRAIN_ELASTIC_JOIN_AT=8,120,240,360 ELASTIC_TEST_MARK=$mark "$poprun" \
    -x TRAIN_ELASTIC_JOIN_AT -x ELASTIC_TEST_MARK --elastic --min-replicas 4 --max-restarts 4 \
    "${job[@]}" "$train" "${small[@]}" --epochs 60 --fault kill-after-step:4@1 >"$out" 2>&1 &
  pid=$!
  wait_line "$out" "^poprun: elastic: epoch 2: 4 instances, 8 replicas; joined 1$" 60 ||
    stop_job "$pid" "$out" "instance 1's replacement did not join"
  kill_first "$pid" "$out" "$mark" 2
  wait_line "$out" "^poprun: elastic: epoch 4: 4 instances, 8 replicas; joined 2$" 60 ||
    stop_job "$pid" "$out" "instance 2's replacement did not join"
  kill_first "$pid" "$out" "$mark" 0 3 # the last two of the job's mpirun
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 0 ] || { cat "$out" >&2; fail "exit status $rc"; }
  for slot in 0 3; do
    expect outlive "^poprun: elastic: instance $slot \(host [^,]*, pid [0-9]+\) lost: "
    expect outlive "^poprun: elastic: epoch [0-9]+: [34] instances, [68] replicas; joined ([03], )?$slot"
  done
  expect outlive "^\[instance 0\] train: test accuracy "
}

case_interrupt() {
  local out=$work/interrupt.out pid rc
  setsid "$poprun" --elastic --min-replicas 2 --max-restarts 2 "${job[@]}" "$train" \
    "${small[@]}" --epochs 400 >"$out" 2>&1 &
  pid=$!
  wait_line "$out" "^\[instance 0\] epoch 2/400 step " 60 || stop_job "$pid" "$out" "no step"
  pkill -INT -s "$pid" # its own session: poprun, mpirun, the wrappers, the programs
  wait "$pid"
  rc=$?
  [ "$rc" -eq 130 ] || { cat "$out" >&2; fail "exit status $rc, not 130"; }
  # The program's stop names the first signal it got: the SIGINT, or the SIGTERM with which
  # the wrapper passes on mpirun's end of the job, when that comes first.
  expect interrupt "^\[instance 0\] train: SIG(INT|TERM): stopped after step [0-9]+ of "
  expect interrupt "^poprun: interrupted by SIGINT; every instance was ended$"
  absent interrupt "lost|replacement|left out|WARN|failed"
}

# kill_first PID OUT MARK SLOT...: kills the first process of each SLOT (the job's mpirun's).
kill_first() {
  local pid=$1 out=$2 mark=$3 slot victim
  shift 3
  for slot in "$@"; do
    victim=$(oldest_train "$mark" "$slot")
    [ -n "$victim" ] || stop_job "$pid" "$out" "no train process of instance $slot"
    kill -KILL "$victim"
  done
}

case_partition() {
  [ -n "$cluster" ] || fail "partition needs NETNS_CLUSTER"
  "$cluster" 4 -- "$0" partition_inside "$poprun" "$train" "$cmp"
  local rc=$?
  [ "$rc" -ne 77 ] || exit 77
  [ "$rc" -eq 0 ] || fail "inside the cluster: exit status $rc"
}

# Inside the cluster: the job, and h4's link down twice (as scripts/chaos --elastic does).
case_partition_inside() {
  local ns=$NETNS_CLUSTER_ID-h4 out=$work/part.out pid k
  TRAIN_ELASTIC_JOIN_AT=60,200 "$poprun" -H h1,h2,h3,h4 -x TRAIN_ELASTIC_JOIN_AT --elastic \
    --min-replicas 2 --max-restarts 2 "${job[@]}" "$train" "${small[@]}" --epochs 40 \
    >"$out" 2>&1 &
  pid=$!
  stop() { stop_job "$pid" "$out" "$1"; }
  wait_line "$out" "^\[instance 0\] epoch 1/40 step " 60 || stop "the job did not start"
  for k in 1 2; do
    ip -n "$ns" link set eth0 down
    wait_line "$out" "^poprun: elastic: epoch $((2 * k - 1)): 3 instances, 6 replicas; lost instance 3$" 20 ||
      { ip -n "$ns" link set eth0 up; stop "partition $k: instance 3 was not left out"; }
    sleep 3 # 7 s in all: the store's beat (4 s) and mpirun's keepalive (about 5 s) run out
    ip -n "$ns" link set eth0 up
    wait_line "$out" "^poprun: elastic: epoch $((2 * k)): 4 instances, 8 replicas; joined 3$" 60 ||
      stop "partition $k: no replacement joined within 60 s of the link's return"
    # The first step with it (the shrink's was the first): it runs, and is partitioned next.
    wait_line "$out" "^\[instance 0\] train: first step of this run " 20 $((2 * k)) ||
      stop "partition $k: no step after the replacement joined"
  done
  wait "$pid"
  local rc=$?
  [ "$rc" -eq 0 ] || { cat "$out" >&2; fail "exit status $rc"; }
  expect part "^poprun: elastic: starting a replacement for instance 3 on host h4 \(2 of 2\)$"
  expect part "^\[instance 0\] train: elastic: steps 201-320 on 8 replicas: simulated"
  local left i
  for ((i = 0; i < 100; i++)); do # every wrapper, daemon and program of the job ends
    left=$(for k in 1 2 3 4; do ip netns pids "$NETNS_CLUSTER_ID-h$k"; done | paste -sd,)
    [ -n "$left" ] || break
    sleep 0.1
  done
  [ -z "$left" ] || { ps -o pid,args -p "$left" >&2; fail "processes left on the hosts"; }
  grep -E "^poprun: elastic" "$out"
}

"case_$case_name"
echo "elastic_test.sh $case_name: ok"
