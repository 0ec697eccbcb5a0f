#!/usr/bin/env bash
# leak_race.sh: lib.sh's leaks judges leftovers by name only, so another job's files coming and
# going beside a test are never taken for the test's. Beside a loop that plays other jobs (in a
# private root: their OpenMPI segments and libgcl host boxes are created, held, left unheld for
# a while and removed), this run leaves two things of its own: a host box carrying its job name
# and a session directory in its jobs' temporary directory. Each of 4 checks must report exactly
# those two; once they are removed, each of 4 more checks must report nothing.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
faults_init leak-race

export FAULTS_SHM_ROOT=$FT/shm
mkdir -p "$FAULTS_SHM_ROOT"

# Other jobs: new entries every 0.1 s, each living 1.8 s (about 18 at once, in every phase).
( i=0
  while :; do
    i=$((i + 1))
    ( a=$FAULTS_SHM_ROOT/vader_segment.other.$i b=$FAULTS_SHM_ROOT/gcl-job-other$i-h0
      : >"$a"; : >"$b"
      # shellcheck disable=SC2217 # the open stdin is the hold
      sleep 1.2 <"$a"
      sleep 0.6
      rm -f "$a" "$b" ) &
    sleep 0.1
  done ) 2>/dev/null &
FAULTS_BG+=("$!")
sleep 1 # the loop in its stride

mine="$FAULTS_SHM_ROOT/gcl-$JOBNAME-0123456789abcdef-h0"
: >"$mine"
mkdir -p "$FT/tmp/ompi.vm.0/pid.1"
want=$(printf '%s\n%s' "$mine" "$FT/tmp/ompi.vm.0")
for n in 1 2 3 4; do
  found=$(leaks)
  [ "$found" = "$want" ] ||
    fail "check $n reported '$(tr '\n' ' ' <<<"$found")', not exactly '$(tr '\n' ' ' <<<"$want")'"
  sleep 0.3
done
rm -rf "$mine" "$FT/tmp/ompi.vm.0"
for n in 1 2 3 4; do
  found=$(leaks)
  [ -z "$found" ] || fail "check $n without leaks reported '$(tr '\n' ' ' <<<"$found")'"
  sleep 0.3
done
pass "8 leak checks beside other jobs' files coming and going: each reported this run's leftovers and only them"
