#!/usr/bin/env bash
# bench_peers_netns.sh CHECKOUT BUILD_DIR: scripts/bench-collectives --peers mpi --netns 2x1
# --wire, small: ours and OpenMPI each in its own job across two namespace hosts, and where the
# bytes go at 16 MiB. Asserts that both ran across the hosts (OpenMPI unbound, as poprun runs
# its mpirun: bound, both ranks would share core 0), that the wire table has both, with the
# bytes a host sent per payload byte between the algorithm's bound (1.0 for 2 hosts) and 3
# (retransmissions taken out, their share beside), and the veth link's rate. Times are not
# judged. Needs root (network namespaces): else a skip (77).
set -euo pipefail
src=$1 build=$2
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root for network namespaces"; exit 77; }
out=$(mktemp -d "${TMPDIR:-/tmp}/gcl-bench-netns.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL (bench-peers-netns): $*" >&2; exit 1; }

st=0
GCL_BUILD_DIR=$build "$src/scripts/bench-collectives" --peers mpi --ranks 2 --netns 2x1 --wire \
  -b 64K -e 256K --no-latency --job-repeats 2 --out "$out/r" >"$out/log" 2>&1 || st=$?
[ "$st" -eq 0 ] || { cat "$out/log"; fail "bench-collectives --netns 2x1 --wire exited $st"; }
csv=$out/r/results.csv
for impl in gcl openmpi; do
  for size in 65536 262144; do
    grep -Eq "^$impl,[^,]*,all_reduce,bandwidth,2,2,$size,.*,2x1," "$csv" ||
      fail "no 2-host row of $impl at $size bytes"
  done
done
# Each job ran --job-repeats 2 times (2 ranks fit the 2 cores), alternating: one row each.
for run in 1 2; do
  grep -q -- "--bind-to none" "$out/r/raw/openmpi-quiet-bw-h2x1-all_reduce-run$run.log" ||
    fail "OpenMPI across namespace hosts was not run unbound (run $run)"
done
runs=$(awk -F, 'NR > 1 && $16 == "2x1" && $1 == "gcl" && $7 == 65536 {print $19 + 0}' "$csv")
[ "$runs" = 2 ] || fail "the 2-host gcl row at 64 KiB says job_runs '$runs', not 2"
sum=$out/r/summary.md
grep -q "Where the time goes across hosts at 16 MiB" "$sum" || { cat "$sum"; fail "no wire table"; }
grep -Eq "veth link, plain TCP socket pair .*: [0-9.]+ GB/s one way" "$sum" || fail "no link rate"
for impl in gcl openmpi; do
  row=$(grep -E "^\| 2x1 \| $impl \|" "$sum") || fail "no wire row of $impl"
  per=$(echo "$row" | awk -F'|' '{print $5 + 0}')
  awk -v p="$per" 'BEGIN { exit !(p >= 0.99 && p <= 3) }' ||
    fail "$impl sent $per bytes a host per payload byte across 2 hosts (bound 1.0): $row"
  echo "$row" | awk -F'|' '{ exit !($9 ~ /^ *[0-9]+\.[0-9] *$/ && $9 + 0 < 100) }' ||
    fail "$impl's row has no share of retransmitted bytes: $row"
done
echo "PASS (bench-peers-netns): ours and OpenMPI across 2 namespace hosts, each in its own job; wire table: $(grep -cE '^\| 2x1 \|' "$sum") rows"
