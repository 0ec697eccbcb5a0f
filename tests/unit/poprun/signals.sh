#!/usr/bin/env bash
# Signals and strays: SIGTERM or Ctrl-C (SIGINT) to poprun ends every instance, gracefully (each
# program gets the signal and ends by itself; one that does not is killed after
# --graceful-timeout); a second SIGINT kills mpirun hard and the instances still go; a failing instance ends the others, also when it
# is its wrapper that gets killed (poprun names it from mpirun's notice). Afterwards no process of
# the job is left, and poprun has reaped its children.
#
#   signals.sh POPRUN PROBE
set -euo pipefail
POPRUN=$1
PROBE=$2
source "$(dirname "$0")/lib.sh"

# Every process of a job carries this word in its command line (the probe's --stderr argument),
# so that pgrep finds exactly this test's processes.
tag="poprun-signal-test-$$-$RANDOM"

# job_procs: the processes of this test's jobs still alive (not zombies).
job_procs() {
  ps -eo pid=,stat=,args= | awk -v t="$tag" 'index($0, t) && $2 !~ /^Z/ && !/awk/' || true
}

# wait_gone NAME SECONDS: passes when no process of the job is left within SECONDS.
wait_gone() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ -z "$(job_procs)" ] && { ok "$1: no process left"; return; }
    sleep 0.1
  done
  bad "$1: processes left" "$(job_procs)"
}

# wait_running N: waits until N probes print their line (the job is up).
wait_running() {
  local i
  for ((i = 0; i < 300; i++)); do
    [ "$(grep -c '^\[instance' "$tmp/out" 2>/dev/null || true)" -ge "$1" ] && return 0
    sleep 0.1
  done
  return 1
}

# start ARGS...: starts poprun in the background with its own process group; sets $pid.
start() {
  : >"$tmp/out"
  setsid "$POPRUN" "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
}

for sig in TERM INT HUP; do
  start --num-replicas 4 --num-instances 4 "$PROBE" --sleep 120 --stderr "$tag"
  if ! wait_running 4; then bad "SIG$sig: job did not start" "$(cat "$tmp/err")"; fi
  t0=$(date +%s)
  kill -s "$sig" "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  want=$((128 + $(kill -l "$sig")))
  expect_rc "SIG$sig to poprun" "$want"
  if [ "$(tail -1 "$tmp/err")" = "poprun: interrupted by SIG$sig; every instance was ended" ] &&
    [ $(($(date +%s) - t0)) -lt 20 ]; then
    ok "SIG$sig message"
  else
    bad "SIG$sig message" "$(cat "$tmp/err")"
  fi
  wait_gone "SIG$sig" 10
done

# The graceful stop: every program gets SIGTERM (SIGINT for SIGINT) from its wrapper, not the
# SIGUSR1/SIGUSR2 that carried it, and ends by itself: here a second after the signal, with 143
# (130). poprun waits for them, and no instance is reported as failed.
for sig in TERM INT; do
  start --num-replicas 2 --num-instances 2 bash -c "trap 'echo got USR1' USR1; trap 'echo got USR2' USR2
    trap 'echo got TERM; sleep 1; exit 143' TERM; trap 'echo got INT; sleep 1; exit 130' INT
    echo up; while :; do sleep 0.1; done # $tag"
  wait_running 2 || bad "graceful SIG$sig: job did not start" "$(cat "$tmp/err")"
  t0=$(date +%s%N)
  kill -s "$sig" "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  ms=$((($(date +%s%N) - t0) / 1000000))
  want=$((128 + $(kill -l "$sig")))
  expect_rc "graceful SIG$sig" "$want"
  if [ "$(grep -c "^\[instance [01]\] got $sig\$" "$tmp/out")" -eq 2 ] &&
    ! grep -q "got USR" "$tmp/out" &&
    [ "$(tail -1 "$tmp/err")" = "poprun: interrupted by SIG$sig; every instance was ended" ] &&
    [ "$ms" -ge 900 ] && [ "$ms" -lt 30000 ]; then
    ok "graceful SIG$sig: both programs got SIG$sig and ended by themselves (${ms} ms)"
  else
    bad "graceful SIG$sig" "after ${ms} ms" "$(cat "$tmp/out" "$tmp/err")"
  fi
  wait_gone "graceful SIG$sig" 10
done

# A program that ignores SIGTERM is killed after --graceful-timeout, and poprun says so.
start --graceful-timeout 2 --num-replicas 2 --num-instances 2 bash -c \
  "trap 'echo ignored' TERM; echo up; while :; do sleep 0.1; done # $tag"
wait_running 2 || bad "graceful timeout: job did not start" "$(cat "$tmp/err")"
t0=$(date +%s%N)
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
ms=$((($(date +%s%N) - t0) / 1000000))
expect_rc "--graceful-timeout 2 expired" 143
if [ "$(tail -1 "$tmp/err")" = "poprun: interrupted by SIGTERM; instances still running after --graceful-timeout 2 s were killed" ] &&
  [ "$ms" -ge 2000 ] && [ "$ms" -lt 30000 ]; then
  ok "--graceful-timeout 2: killed after ${ms} ms, one line"
else
  bad "--graceful-timeout 2" "after ${ms} ms" "$(cat "$tmp/err")"
fi
wait_gone "graceful timeout" 10

# Two Ctrl-C: the second kills mpirun's process group; the wrappers then end their programs.
start --num-replicas 4 --num-instances 4 "$PROBE" --sleep 120 --stderr "$tag"
wait_running 4 || bad "double SIGINT: job did not start" "$(cat "$tmp/err")"
kill -INT "$pid"
kill -INT "$pid"
set +e
wait "$pid"
rc=$?
set -e
expect_rc "double SIGINT" 130
wait_gone "double SIGINT" 15

# A failing instance ends the others, whatever they are doing.
start --num-replicas 4 --num-instances 4 "$PROBE" --on 3 --exit 9 --others-sleep 120 \
  --stderr "$tag"
set +e
wait "$pid"
rc=$?
set -e
expect_rc "instance 3 fails" 9
if grep -q '^poprun: instance 3 (host localhost) exited with status 9$' "$tmp/err"; then
  ok "failure reported"
else
  bad "failure reported" "$(cat "$tmp/err")"
fi
wait_gone "failure" 10

# SIGKILL to the instance wrapper of instance 1 (the probe's parent): poprun names the instance
# from mpirun's notice, in one line of its own; mpirun's notices are dropped.
start --num-replicas 3 --num-instances 3 "$PROBE" --sleep 120 --stderr "$tag"
wait_running 3 || bad "wrapper killed: job did not start" "$(cat "$tmp/err")"
wrapper=
for p in $(pgrep -f -- "$tag"); do
  if tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -x 'POPDIST_INSTANCE_INDEX=1' >/dev/null &&
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" != poprun ]; then
    wrapper=$(awk '{print $4}' "/proc/$p/stat")
  fi
done
if [ -n "$wrapper" ] && [ "$(cat "/proc/$wrapper/comm")" = poprun ]; then
  kill -KILL "$wrapper"
  set +e
  wait "$pid"
  rc=$?
  set -e
  expect_rc "wrapper of instance 1 killed" 137
  want="poprun: instance 1 (host localhost) was killed by signal 9 (SIGKILL): its poprun wrapper died, and its program with it"
  if [ "$(grep -v '^\[instance' "$tmp/err")" = "$want" ]; then
    ok "wrapper killed: one line names the instance"
  else
    bad "wrapper killed: message" "$(cat "$tmp/err")"
  fi
  wait_gone "wrapper killed" 10
else
  bad "wrapper killed: no wrapper of instance 1 found" "$(job_procs)"
  kill -TERM "$pid"
  wait "$pid" || true
fi

# poprun reaps mpirun: while a job runs, poprun has no zombie child.
start --num-replicas 2 --num-instances 2 "$PROBE" --sleep 3 --stderr "$tag"
wait_running 2 || true
zombies=$(ps -o stat= --ppid "$pid" | grep -c '^Z' || true)
wait "$pid" || true
if [ "$zombies" -eq 0 ]; then ok "no zombie children"; else bad "zombies" "$zombies"; fi

finish
