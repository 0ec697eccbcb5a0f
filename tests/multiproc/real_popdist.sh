#!/usr/bin/env bash
# A program started with only the variables Graphcore's PopRun sets (no POPDIST_NUM_INSTANCES or
# POPDIST_INSTANCE_INDEX): mpirun starts 4 ranks, each with its own POPDIST_* as PopRun gives
# them (one application context per instance), and each must get its shard of 8 replicas and a
# working job. Then the same with allreduce-check, which checks every collective's values.
#
#   real_popdist.sh SHARD CHECK
set -euo pipefail
mpirun_private=$(cd "$(dirname "$0")/.." && pwd)/mpirun-private # mpirun, a session directory of its own
SHARD=$1
CHECK=$2
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GCL_TIMEOUT_S=60
for v in $(env | sed -n 's/^\(POPDIST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
tmp=$(mktemp -d "${TMPDIR:-/tmp}/real-popdist.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
failed=0

# mpirun -np 1 -x ... PROG : -np 1 -x ... PROG : ...   (instance i: replicas 2i, 2i+1 of 8)
contexts() {
  local prog=("$@") i
  for i in 0 1 2 3; do
    [ "$i" -gt 0 ] && printf '%s\n' ":"
    printf '%s\n' -np 1 -x POPDIST_NUM_TOTAL_REPLICAS=8 -x POPDIST_NUM_LOCAL_REPLICAS=2 \
      -x POPDIST_REPLICA_INDEX_OFFSET=$((2 * i)) -x POPDIST_NUM_IPUS_PER_REPLICA=1 \
      -x POPDIST_LOCAL_INSTANCE_INDEX=$i "${prog[@]}"
  done
}
mapfile -t args < <(contexts "$SHARD")
timeout 120 "$mpirun_private" --oversubscribe --bind-to none "${args[@]}" >"$tmp/out" 2>&1 || true
sort "$tmp/out" | grep '^popdist-shard:' >"$tmp/got" || true
for i in 0 1 2 3; do
  printf 'popdist-shard: set=1 instances=4 index=%d local_index=%d replicas=%d..%d of 8 ipr=1: PASSED\n' \
    "$i" "$i" $((2 * i)) $((2 * i + 1))
done >"$tmp/want"
if diff -u "$tmp/want" "$tmp/got"; then
  echo "ok: each instance gets its shard from PopRun's own variables"
else
  failed=1
  echo "FAIL: shards"
  cat "$tmp/out"
fi

mapfile -t args < <(contexts "$CHECK" --sizes 0,4,1K,100K)
rc=0
timeout 120 "$mpirun_private" --oversubscribe --bind-to none "${args[@]}" >"$tmp/out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] &&
  [ "$(grep -c 'allreduce-check: instance [0-3] of 4, replicas [0-7]-[0-7] of 8: PASSED' "$tmp/out")" -eq 4 ]; then
  echo "ok: allreduce-check passes on 4 instances started with PopRun's variables"
else
  failed=1
  echo "FAIL: allreduce-check (exit $rc)"
  cat "$tmp/out"
fi
exit "$failed"
