#!/usr/bin/env bash
# bench_peers.sh CHECKOUT BUILD_DIR: scripts/bench-collectives --peers as a user runs it, small:
# ours, OpenMPI (mpirun.openmpi + mpi-peer-openmpi), MPICH (mpiexec.mpich + mpi-peer-mpich) and
# Gloo (gloo-peer, ring_chunked and bcube) on 2 ranks, 4 and 16 KiB, and the latency of 8 B to
# 4 KiB with 50 samples. Asserts that every peer ran in its own job and gave rows of both sizes
# and of latency, that no row is wrong, that the summary has its tables, and that bad arguments
# are one line and exit 2. Times are not judged: they are noise under a test's load.
set -euo pipefail
src=$1 build=$2
out=$(mktemp -d "${TMPDIR:-/tmp}/gcl-bench-peers.XXXXXX")
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL (bench-peers): $*" >&2; exit 1; }

st=0
GCL_BUILD_DIR=$build "$src/scripts/bench-collectives" --peers mpi,mpich,gloo --ranks 2 -b 4K \
  -e 16K --samples 50 --latency-warmup 10 --out "$out/r" >"$out/log" 2>&1 || st=$?
[ "$st" -eq 0 ] || { cat "$out/log"; fail "bench-collectives --peers exited $st"; }
csv=$out/r/results.csv
[ -s "$csv" ] || fail "no results.csv"
for impl in gcl openmpi mpich gloo; do
  for size in 4096 16384; do
    grep -q "^$impl,[^,]*,all_reduce,bandwidth,2,1,$size," "$csv" ||
      fail "no all_reduce row of $impl at $size bytes"
  done
  grep -q "^$impl,[^,]*,all_reduce,latency,2,1,8," "$csv" || fail "no latency row of $impl at 8 B"
done
# Every peer's program was its own job: one raw log per job, each named after its peer.
for job in openmpi mpich gloo; do
  ls "$out/r/raw" | grep "$job" >/dev/null || fail "no job of $job in raw/: $(ls "$out/r/raw" | paste -sd' ')"
done
wrong=$(awk -F, 'NR > 1 && $14 != 0' "$csv")
[ -z "$wrong" ] || fail "rows with wrong results: $wrong"
bad_time=$(awk -F, 'NR > 1 && !($10 > 0)' "$csv")
[ -z "$bad_time" ] || fail "rows without a time: $bad_time"
grep -q "In short" "$out/r/summary.md" || fail "summary.md has no 'In short' table"
grep -q "Latency on one host" "$out/r/summary.md" || fail "summary.md has no latency table"

for args in "--peers nccl" "--peers mpi --ranks 1" "--peers mpi --netns 9x1"; do
  st=0
  # shellcheck disable=SC2086 # the words of ARGS are the arguments
  GCL_BUILD_DIR=$build "$src/scripts/bench-collectives" $args --out "$out/bad" >"$out/bad.log" 2>&1 || st=$?
  [ "$st" -eq 2 ] && [ "$(wc -l <"$out/bad.log")" -eq 1 ] ||
    { cat "$out/bad.log"; fail "'$args': exit $st, not one line and 2"; }
done
# The MPI peer times a barrier too (--latency only: one row of size 0); Gloo's does not.
row=$(OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 /usr/bin/mpirun.openmpi -np 2 \
  "$build/bin/mpi-peer-openmpi" barrier --latency --samples 50 -w 10 2>&1 | awk '$1 == 0 && $2 > 0')
[ -n "$row" ] || fail "mpi-peer-openmpi barrier --latency gave no row of size 0"
for peer in "mpi-peer-openmpi barrier" "gloo-peer barrier --latency"; do
  st=0
  # shellcheck disable=SC2086 # the words of PEER are the command
  "$build/bin/"$peer >"$out/bad.log" 2>&1 || st=$?
  [ "$st" -eq 2 ] && [ "$(wc -l <"$out/bad.log")" -eq 1 ] ||
    { cat "$out/bad.log"; fail "'$peer': exit $st, not one line and 2"; }
done
echo "PASS (bench-peers): ours, OpenMPI, MPICH and Gloo, each in its own job: $(($(wc -l <"$csv") - 1)) rows, none wrong; bad arguments refused; the MPI peer's barrier"
