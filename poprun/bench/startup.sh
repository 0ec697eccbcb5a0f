#!/usr/bin/env bash
# What poprun adds to mpirun's own start-up, for a trivial program.
#
#   poprun/bench/startup.sh [POPRUN] [RUNS] [INSTANCES]
#
# Runs bare mpirun and poprun alternately (pairs, so that a change of machine load hits both
# alike) with /bin/true on INSTANCES ranks, and prints the median wall time of each and the
# median of the per-pair differences. Defaults: build/bin/poprun, 50 pairs, 4 instances.
set -euo pipefail
poprun=${1:-build/bin/poprun}
runs=${2:-50}
n=${3:-4}
root=()
[ "$(id -u)" -eq 0 ] && root=(--allow-run-as-root)
bare=(mpirun "${root[@]}" --oversubscribe --bind-to none -np "$n" /bin/true)
ours=("$poprun" --num-instances "$n" --num-replicas "$n" /bin/true)

ms() { # runs "$@" once, prints its wall time in microseconds
  local t0 t1
  t0=$(date +%s%N)
  "$@" >/dev/null
  t1=$(date +%s%N)
  echo $(((t1 - t0) / 1000))
}

median() { sort -n | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for ((i = 0; i < 3; i++)); do ms "${bare[@]}" >/dev/null; ms "${ours[@]}" >/dev/null; done
for ((i = 0; i < runs; i++)); do
  b=$(ms "${bare[@]}")
  o=$(ms "${ours[@]}")
  echo "$b" >>"$tmp/bare"
  echo "$o" >>"$tmp/ours"
  echo $((o - b)) >>"$tmp/diff"
done
printf 'bare mpirun:  median %6.1f ms   (%s)\n' "$(median <"$tmp/bare" | awk '{print $1/1000}')" "${bare[*]}"
printf 'poprun:       median %6.1f ms   (%s)\n' "$(median <"$tmp/ours" | awk '{print $1/1000}')" "${ours[*]}"
printf 'poprun adds:  median %6.1f ms per start-up (%d pairs)\n' "$(median <"$tmp/diff" | awk '{print $1/1000}')" "$runs"
