# shellcheck shell=bash
# Shared helpers of the tests/faults scripts (sourced, not run).
#
# Every script calls faults_init NAME first. That makes a private temporary directory ($FT), a
# marker unique to this run ($MARK) and an EXIT trap that kills every process carrying the marker
# and removes the directory, whether the test passes, fails or is interrupted. Commands of a
# job are started through `marked CMD...`, which puts GCL_FAULTS_MARK=$MARK in their
# environment; poprun, mpirun, the instance wrappers and the programs all inherit it, so a test
# finds exactly its own processes even when other tests run alongside.
#
# Leftovers are judged by name, so that whatever else runs on the machine is never taken for
# this run's: every poprun of this run gets the job name $JOBNAME (POPRUN_JOB_NAME), which
# everything its job keeps in /dev/shm carries (OpenMPI's segments in /dev/shm/poprun-ID/,
# libgcl's host boxes /dev/shm/gcl-ID-...; poprun/src/common/jobdir.h), and a temporary directory of
# its own, $FT/tmp (TMPDIR), which holds OpenMPI's session directories. After the job, both
# must be empty of it: poprun removes all of it however the job ended. Other jobs' entries in
# /dev/shm and /tmp are not looked at.

faults_init() {
  FAULTS_NAME=$1
  FT=$(mktemp -d "${TMPDIR:-/tmp}/gcl-faults-$1.XXXXXX")
  MARK="gclfaults-$1-$$-$RANDOM$RANDOM"
  JOBNAME="gf-$$-$RANDOM$RANDOM" # 1 to 40 letters, digits and '-' (poprun's rule)
  mkdir "$FT/tmp"
  FAULTS_BG=()
  trap faults_cleanup EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM
}

faults_cleanup() {
  local rc=$?
  local p
  for p in $(marked_pids); do kill -9 "$p" 2>/dev/null || true; done
  for p in "${FAULTS_BG[@]}"; do kill -9 "$p" 2>/dev/null || true; done
  # (bash reports a background job that a signal killed on its own stderr as it reaps it.)
  { wait || true; } 2>/dev/null
  # A poprun killed with -9 cannot remove its job's segments: whatever carries this run's job
  # name goes here, so that a test that failed leaves nothing behind either.
  if [ -n "${JOBNAME:-}" ]; then
    rm -rf "${FAULTS_SHM_ROOT:-/dev/shm}"/*"$JOBNAME"* 2>/dev/null || true
  fi
  # A killed process may still be writing into $FT (an OpenMPI daemon's session files) until
  # the kernel has reaped it, and rm -rf then fails on a directory that is not empty yet: try
  # again for up to 2 s. A directory that survives that fails the test.
  local try
  for try in $(seq 20); do
    [ -n "${FT:-}" ] && [ -e "$FT" ] || break
    rm -rf "$FT" 2>/dev/null && break
    sleep 0.1
  done
  if [ -n "${FT:-}" ] && [ -e "$FT" ]; then
    echo "FAIL ($FAULTS_NAME): cannot remove $FT" >&2
    [ "$rc" -ne 0 ] || rc=1
  fi
  exit "$rc"
}

# A failure also shows the end of the job's output ($out, where a script keeps it): the
# directory that holds it is gone once the script exits, and a failure that does not come back
# is then all there is to go on.
fail() {
  echo "FAIL ($FAULTS_NAME): $*" >&2
  if [ -n "${out:-}" ] && [ -f "$out" ]; then
    echo "--- the last 40 lines of the job's output ($FAULTS_NAME):" >&2
    tail -n 40 "$out" >&2 || true
  fi
  exit 1
}

skip() {
  echo "SKIP ($FAULTS_NAME): $*"
  exit 77
}

pass() {
  echo "PASS ($FAULTS_NAME): $*"
}

# marked CMD ARGS...: runs CMD with this run's marker, job name and temporary directory in its
# environment. (Started with &, $! is then a subshell that waits for CMD: use
# `env GCL_FAULTS_MARK="$MARK" POPRUN_JOB_NAME="$JOBNAME" TMPDIR="$FT/tmp" CMD... &` to signal
# CMD itself.)
marked() {
  env GCL_FAULTS_MARK="$MARK" POPRUN_JOB_NAME="$JOBNAME" TMPDIR="$FT/tmp" "$@"
}

# The pids of every live process that carries this run's marker.
marked_pids() {
  [ -n "${MARK:-}" ] || return 0
  # -z reads NUL-separated variables, and so also ends each file name with a NUL.
  grep -lsaz -- "^GCL_FAULTS_MARK=$MARK\$" /proc/[0-9]*/environ 2>/dev/null | tr '\0' '\n' |
    sed -n 's|^/proc/\([0-9]*\)/environ$|\1|p' || true
}

# instance_pid INDEX COMM: the pid of the marked process named COMM (its program, not poprun's
# wrapper) of instance INDEX, or nothing.
instance_pid() {
  local p
  for p in $(marked_pids); do
    [ "$(cat "/proc/$p/comm" 2>/dev/null)" = "$2" ] || continue
    grep -qsaz -- "^POPDIST_INSTANCE_INDEX=$1\$" "/proc/$p/environ" && echo "$p" && return 0
  done
  return 0
}

# wait_no_marked SECONDS: waits until no process carries the marker; fails after SECONDS.
wait_no_marked() {
  local deadline=$((SECONDS + $1))
  while [ -n "$(marked_pids)" ]; do
    [ $SECONDS -lt "$deadline" ] || return 1
    sleep 0.1
  done
}

now_ms() {
  date +%s%3N
}

# leaks: prints every leftover of this run's jobs, one a line: entries of $FAULTS_SHM_ROOT
# (default /dev/shm) that carry $JOBNAME, and whatever is left in the jobs' temporary directory
# $FT/tmp. Call it once the jobs have ended (poprun has removed everything by the time it exits,
# so nothing needs waiting for). Prints nothing when nothing leaked.
leaks() {
  local f shm=${FAULTS_SHM_ROOT:-/dev/shm}
  for f in "$shm"/*"$JOBNAME"*; do
    if [ -e "$f" ]; then echo "$f"; fi
  done
  for f in "$FT/tmp"/* "$FT/tmp"/.[!.]*; do
    if [ -e "$f" ]; then echo "$f"; fi
  done
}
