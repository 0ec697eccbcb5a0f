#!/usr/bin/env bash
# bench_check.sh POPRUN GCL_BENCH
#
# gcl-bench --check passes (no wrong element, exit 0) for every collective at 2, 4, 8 and 16
# replicas, and for every all_reduce algorithm forced by name.
set -euo pipefail
poprun=$1 bench=$2
fails=0
check() { # REPLICAS INSTANCES ARGS...
  local n=$1 i=$2 out
  shift 2
  if ! out=$("$poprun" --num-replicas "$n" --num-instances "$i" "$bench" "$@" -b 4 -e 1M -f 32 \
             -n 1 -w 0 --check 2>&1) || ! grep -q "# check: 0 wrong element" <<<"$out"; then
    echo "bench_check: FAILED: $n replicas, $i instances: gcl-bench $*" >&2
    tail -n 12 <<<"$out" >&2
    fails=$((fails + 1))
    return
  fi
  echo "bench_check: ok: $n replicas, $i instances: gcl-bench $*"
}
for n in 2 4 8 16; do
  inst=$((n < 4 ? n : 4))
  for coll in all_reduce reduce_scatter all_gather broadcast all_to_all barrier; do
    check "$n" "$inst" "$coll"
  done
done
algos=$("$(dirname "$bench")/gcl-info" --algorithms | sed -n '/^all_reduce:/,/^[a-z_]*:$/p' |
        awk 'NF && $1 !~ /:$/ {print $1}')
[ -n "$algos" ] || { echo "bench_check: no all_reduce algorithms listed" >&2; exit 1; }
for a in $algos; do
  check 8 4 all_reduce -a "$a"
  check 5 5 all_reduce -a "$a" -t f16 -o mean
done
[ "$fails" -eq 0 ] || { echo "bench_check: $fails failed" >&2; exit 1; }
