#!/usr/bin/env bash
# snapshot_race.sh: lib.sh's snapshot, under set -euo pipefail, beside a loop that makes and
# removes OpenMPI-style session directories as fast as it can (another job's mpirun starting
# and ending). Asserts that 1000 snapshots (or as many as 40 s allow on a loaded machine, at
# least 100) all return, each listing a directory that stays put. The loop works in a private root ($FAULTS_OMPI_ROOT), not in /tmp, so that it cannot
# disturb the leak checks of tests running beside it.
#
# The former snapshot (ls -1d on the glob's names) is run first, as a control: beside the same
# loop it exits with status 2 and no word (a name vanished between the glob and ls). That
# is reported, not asserted: it is a race.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
faults_init snapshot-race

export FAULTS_OMPI_ROOT=$FT/root
mkdir -p "$FAULTS_OMPI_ROOT/ompi.stay/pid.1"
( while :; do
    mkdir -p "$FAULTS_OMPI_ROOT/ompi.x/pid.$RANDOM" "$FAULTS_OMPI_ROOT/ompi.x/pid.$RANDOM"
    rm -rf "$FAULTS_OMPI_ROOT/ompi.x"
  done ) 2>/dev/null &
FAULTS_BG+=("$!")

old_snapshot() {
  { ls -1 /dev/shm 2>/dev/null | sed 's|^|shm |'
    ls -1d "$FAULTS_OMPI_ROOT"/ompi.*/* 2>/dev/null | sed 's|^|ompi |'; } | sort >"$1"
}
set +e
( set -euo pipefail; end=$((SECONDS + 20))
  for _ in $(seq 1000); do old_snapshot "$FT/old"; [ $SECONDS -lt $end ] || break; done )
control=$?
set -e
if [ "$control" -ne 0 ]; then
  echo "control: the former snapshot exited with status $control beside the loop"
else
  echo "note: the former snapshot survived this time (the race did not hit)"
fi

n=0 end=$((SECONDS + 40))
while [ "$n" -lt 1000 ] && { [ "$n" -lt 100 ] || [ $SECONDS -lt $end ]; }; do
  snapshot "$FT/snap"
  grep -qx "ompi $FAULTS_OMPI_ROOT/ompi.stay/pid.1" "$FT/snap" ||
    fail "snapshot $n lost the directory that stays: $(cat "$FT/snap")"
  if grep -qv '^\(shm\|ompi\) ' "$FT/snap"; then fail "snapshot $n: malformed line"; fi
  n=$((n + 1))
done
pass "$n snapshots beside a loop that makes and removes session directories"
