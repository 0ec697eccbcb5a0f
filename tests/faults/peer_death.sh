#!/usr/bin/env bash
# peer_death.sh POPRUN GCL_BENCH INSTANCES REPLICAS VICTIM [TRANSPORT [WHAT [HOSTS]]]
#
# kill -9 of one instance during a collective. A long all_reduce runs under poprun (16 MiB per
# replica, 1000 iterations); once it is under way, instance VICTIM's program gets SIGKILL.
# Asserts:
#   - every process of the job is gone within 10 s of the kill (no hang);
#   - poprun exits non-zero (137) and says "poprun: instance VICTIM (host ...) was killed by
#     signal 9 (SIGKILL)";
#   - every surviving instance printed an error naming the dead instance and its pid (libgcl's
#     "replica R (instance VICTIM on host H, pid P) is gone: its process exited", or a peer's
#     failure that quotes it);
#   - nothing of the job is left: no new /dev/shm entry (host box, OpenMPI segment) and no
#     OpenMPI session directory that no live process holds.
# TRANSPORT (auto, shm, tcp, mpi or ofi) goes to GCL_TRANSPORT. WHAT is "program" (default) or
# "wrapper": poprun's instance wrapper of the victim is killed instead, and its program must
# follow it; poprun then names the instance from mpirun's notice ("... was killed by signal 9
# (SIGKILL): its poprun wrapper died, and its program with it") and drops mpirun's notices.
#   - no survivor crashes (a survivor ends with its error, or is ended by mpirun).
# GCL_TIMEOUT_S is 60, so only the failure detection, not the timeout, can end the survivors
# within the bound. FAULTS_FROZEN=I stops instance I's program across the kill (SIGSTOP 0.5 s
# before it, SIGCONT FAULTS_FROZEN_AFTER_S, default 0.02 s, after it). FAULTS_LATE=I stops
# instance I's program just after the kill and continues it FAULTS_LATE_S (default 0.5) later: a
# survivor the machine's load keeps from running while the others find the death. It must still
# name the victim: the others, failing first, wait for its verdict before they exit.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -ge 5 ] || { echo "usage: $0 POPRUN GCL_BENCH INSTANCES REPLICAS VICTIM [TRANSPORT]" >&2; exit 2; }
poprun=$1 bench=$2 ninst=$3 nrep=$4 victim=$5 transport=${6:-auto} what=${7:-program}
hosts=${8:-}
host_args=()
[ -n "$hosts" ] && host_args=(-H "$hosts")
faults_init "peer-death-$ninst-$victim-$transport-$what${hosts:+-hosts}"
bound_s=${FAULTS_DEATH_BOUND_S:-30} # more than 10 times the slowest quiet end (2.3 s)

out=$FT/out
marked env GCL_TIMEOUT_S=60 GCL_TRANSPORT="$transport" GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init \
  "$poprun" "${host_args[@]}" --num-replicas "$nrep" --num-instances "$ninst" \
  "$bench" all_reduce -b 16M -e 16M -n 1000 -w 0 >"$out" 2>&1 &
job=$!
FAULTS_BG+=("$job")

# Under way: every instance has logged the end of its gcl_init (GCL_LOG_SUBSYS=init; the
# program's own output is buffered), and then a moment: the 16 MiB loop runs for many seconds.
started() { [ "$(grep -c 'GCL INFO init: instance [0-9]* of' "$out")" -eq "$ninst" ]; }
for _ in $(seq 600); do
  started && break
  kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended before the kill"; }
  sleep 0.1
done
started || { cat "$out"; fail "the instances did not all start in 60 s"; }
sleep 1.5
pid=$(instance_pid "$victim" gcl-bench)
[ -n "$pid" ] || { cat "$out"; fail "no program process of instance $victim"; }
kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended before the kill"; }

prog_pid=$pid
if [ "$what" = wrapper ]; then
  pid=$(awk '{print $4}' "/proc/$prog_pid/stat")
  [ "$(cat "/proc/$pid/comm")" = poprun ] || fail "the parent of instance $victim's program is not poprun's wrapper"
fi
# FAULTS_FROZEN=I: instance I's program is stopped (SIGSTOP) across the kill and continued
# after it, so it finds the dead peer's last messages and its closed connection together.
frozen=
if [ -n "${FAULTS_FROZEN:-}" ]; then
  frozen=$(instance_pid "$FAULTS_FROZEN" gcl-bench)
  [ -n "$frozen" ] || { cat "$out"; fail "no program process of instance $FAULTS_FROZEN"; }
  kill -STOP "$frozen"
  sleep 0.5
fi
late=
if [ -n "${FAULTS_LATE:-}" ]; then
  late=$(instance_pid "$FAULTS_LATE" gcl-bench)
  [ -n "$late" ] || { cat "$out"; fail "no program process of instance $FAULTS_LATE"; }
fi
t0=$(now_ms)
kill -9 "$pid"
if [ -n "$late" ]; then
  kill -STOP "$late"
  sleep "${FAULTS_LATE_S:-0.5}"
  kill -CONT "$late"
fi
if [ -n "$frozen" ]; then
  sleep "${FAULTS_FROZEN_AFTER_S:-0.02}"
  kill -CONT "$frozen"
fi
status=0
# poprun must return, and every process of the job must be gone, within the bound.
while kill -0 "$job" 2>/dev/null && [ $(($(now_ms) - t0)) -lt $((bound_s * 1000)) ]; do
  sleep 0.05
done
if kill -0 "$job" 2>/dev/null; then
  cat "$out"
  fail "poprun still runs ${bound_s} s after instance $victim (pid $pid) was killed"
fi
wait "$job" || status=$?
left=$((bound_s * 1000 - ($(now_ms) - t0)))
wait_no_marked $(((left + 999) / 1000)) ||
  { cat "$out"; ps -o pid,comm,args -p "$(marked_pids | paste -sd, -)" || true
    fail "processes of the job still run ${bound_s} s after the kill"; }
elapsed=$(($(now_ms) - t0))

cat "$out"
# A survivor ends with an error that names the dead peer, or is ended by mpirun; it never
# crashes (OpenMPI's handler prints the first line for a signal poprun may not get to report).
! grep -E '\*\*\* Process received signal \*\*\*|was killed by signal (4|6|7|8|11) ' "$out" >/dev/null ||
  fail "a surviving instance crashed"
[ "$status" -ne 0 ] || fail "poprun exited 0 after instance $victim was killed"
[ "$status" -eq 137 ] || fail "poprun exited $status, not 137 (128 + SIGKILL)"
found=$(leaks)
[ -z "$found" ] || fail "left behind: $found"
if [ "$what" = wrapper ]; then
  # mpirun ends the other instances at once when a rank (the wrapper) dies, usually before
  # their libgcl notices the program's death: their naming it is not asserted here. poprun names
  # the instance from mpirun's notice, which it drops with the one before it.
  grep -Eq "^poprun: instance $victim \(host [^)]*\) was killed by signal 9 \(SIGKILL\): its poprun wrapper died, and its program with it\$" "$out" ||
    fail "poprun did not name instance $victim as killed by SIGKILL through its wrapper"
  # (On namespace hosts poprun also says once, before the job, that it binds nothing.)
  [ "$(grep '^poprun: ' "$out" | grep -vc '^poprun: instances are not bound to cores: ')" -eq 1 ] ||
    fail "poprun printed more than its one line"
  ! grep -Eq '^(mpirun noticed|Primary job|-{20,}$)' "$out" ||
    fail "mpirun's notices were not dropped"
  pass "instance $victim's wrapper killed; every process gone in $elapsed ms; poprun exited" \
    "$status and named it; nothing left"
  exit 0
fi
grep -Eq "^poprun: instance $victim \(host [^)]*\) was killed by signal 9 \(SIGKILL\)" "$out" ||
  fail "poprun did not name instance $victim as killed by SIGKILL"
# With HOSTS, instance i runs on host i*H/I: only those on the victim's host can see its pid.
nhosts=1
[ -n "$hosts" ] && nhosts=$(tr ',' '\n' <<<"$hosts" | wc -l)
host_of() { echo $(($1 * nhosts / ninst)); }
for ((i = 0; i < ninst; i++)); do
  [ "$i" -eq "$victim" ] && continue
  if grep -E "^\[instance $i\] " "$out" | grep "instance $victim on host [^,]*, pid $prog_pid)" >/dev/null; then
    continue
  fi
  [ "$(host_of "$i")" -eq "$(host_of "$victim")" ] ||
    { echo "note: instance $i (another host) was ended by mpirun before it named instance $victim"; continue; }
  fail "instance $i printed no error naming instance $victim (pid $prog_pid)"
done
pass "instance $victim of $ninst${hosts:+ on $hosts} killed ($what, transport $transport); every process gone in $elapsed ms; poprun exited $status; every survivor named it; nothing left"
