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
# Leftovers are judged the same way whatever else runs on the machine: an entry of /dev/shm
# (a /gcl-* host box, an OpenMPI vader segment) or an OpenMPI session directory is a leak of
# this run when it appeared since the snapshot and no live process holds it.

faults_init() {
  FAULTS_NAME=$1
  FT=$(mktemp -d "${TMPDIR:-/tmp}/gcl-faults-$1.XXXXXX")
  MARK="gclfaults-$1-$$-$RANDOM$RANDOM"
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

fail() {
  echo "FAIL ($FAULTS_NAME): $*" >&2
  exit 1
}

skip() {
  echo "SKIP ($FAULTS_NAME): $*"
  exit 77
}

pass() {
  echo "PASS ($FAULTS_NAME): $*"
}

# marked CMD ARGS...: runs CMD with this run's marker in its environment. (Started with &, $!
# is then a subshell that waits for CMD: use `env GCL_FAULTS_MARK="$MARK" CMD... &` to signal
# CMD itself.)
marked() {
  env GCL_FAULTS_MARK="$MARK" "$@"
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

# snapshot FILE: what /dev/shm and the OpenMPI session directories hold now. Other jobs' entries
# come and go meanwhile: the globs read each directory once, and an entry gone by the time it
# is listed is simply not there (ls on a vanished name failed, and under pipefail the caller
# exited with status 2 and no word). $FAULTS_SHM_ROOT (default /dev/shm) and $FAULTS_OMPI_ROOT
# (default /tmp, where the ompi.* session directories are looked for) are pointed elsewhere by
# the tests of these helpers themselves (snapshot_race.sh, leak_race.sh).
snapshot() {
  local f shm=${FAULTS_SHM_ROOT:-/dev/shm}
  {
    for f in "$shm"/*; do
      if [ -e "$f" ]; then echo "shm ${f#"$shm"/}"; fi
    done
    for f in "${FAULTS_OMPI_ROOT:-/tmp}"/ompi.*/*; do
      if [ -e "$f" ]; then echo "ompi $f"; fi
    done
  } | sort >"$1"
}

# held NAME: whether a live process maps $FAULTS_SHM_ROOT/NAME or has it open.
held() {
  local shm=${FAULTS_SHM_ROOT:-/dev/shm}
  grep -qsF -- "$shm/$1" /proc/[0-9]*/maps 2>/dev/null && return 0
  # find fails on processes that exit while it looks (and grep -q may close the pipe early):
  # only what it prints counts.
  { find /proc/[0-9]*/fd -lname "$shm/$1*" 2>/dev/null || true; } | grep -q .
}

# unheld_of FILE: prints the entries of FILE ("shm NAME" or "ompi PATH" lines) that still exist
# and that no live process holds (an ompi session directory: whose mpirun is gone).
unheld_of() {
  local kind name shm=${FAULTS_SHM_ROOT:-/dev/shm}
  while read -r kind name; do
    case $kind in
      shm)
        [ -e "$shm/$name" ] || continue
        held "$name" || echo "shm $name"
        ;;
      ompi) # /tmp/ompi.HOST.UID/pid.N belongs to mpirun N while it lives
        [ -e "$name" ] || continue
        local pid=${name##*/pid.}
        case $pid in *[!0-9]*) continue ;; esac
        kill -0 "$pid" 2>/dev/null || echo "ompi $name"
        ;;
    esac
  done <"$1"
}

# leaks BEFORE: prints every entry that appeared since the snapshot BEFORE and that nobody holds
# for good: found unheld 1 s, 3 s and 5 s after the snapshot. Another job's entries pass
# through short unheld windows that a single look can hit: a segment between its creation and
# its mapping, and an OpenMPI vader segment between the exit of its last rank and its unlinking
# by that job's mpirun (as long as the load makes it; a single look hit one in CI, beside
# scripts/test-beside's job). A leak stays. Prints nothing when nothing leaked.
leaks() {
  local after="$FT/snapshot.after" cand="$FT/leak.cand" next="$FT/leak.next" pause
  local shm=${FAULTS_SHM_ROOT:-/dev/shm}
  snapshot "$after"
  comm -13 "$1" "$after" >"$cand" || true
  for pause in 1 2 2; do
    [ -s "$cand" ] || return 0
    sleep "$pause"
    unheld_of "$cand" >"$next"
    mv "$next" "$cand"
  done
  sed -e "s|^shm |$shm/|" -e 's|^ompi ||' "$cand"
}
