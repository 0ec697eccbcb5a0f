#!/usr/bin/env bash
# The nccl-tests tools as nccl-tests' users run them and read them.
#
#   nccl_tests.sh POPRUN BINDIR
#
# 1. all_reduce_perf -b 8 -e 1M -f 4 -g 1 under poprun with 4 instances, read with the rules of
#    the scripts that parse nccl-tests' output: every line that does not start with '#' is a row
#    of 13 columns (size count type redop root, then time algbw busbw #wrong out of place and in
#    place); "# Out of bounds values : N OK|FAILED"; "# Avg bus bandwidth : X". poprun's
#    "[instance 0] " tag is taken off first, as users of a tagged launcher do.
# 2. Every tool under mpirun (-g 2 per rank) with -d all (-o all, -r all): #wrong 0, exit 0.
# 3. -J FILE is JSON with nccl-tests' keys; a spoiled element is counted and fails the run.
# 4. Malformed flags: one line, exit 2.
set -euo pipefail
mpirun_private=$(cd "$(dirname "$0")/.." && pwd)/mpirun-private # mpirun, a session directory of its own
POPRUN=$1
BIN=$2
tmp=$(mktemp -d "${TMPDIR:-/tmp}/nccl-tests.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; shift; printf '  %s\n' "$@"; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GCL_TIMEOUT_S=60

# parse FILE WANT_ROWS: nccl-tests users' rules; prints "rows wrong avg mean" or fails.
parse() {
  awk -v want="$2" '
    /^# Out of bounds values : / { oob = $7; oobok = $8; seen_oob = 1; next }
    /^# Avg bus bandwidth *: / { avg = $6; seen_avg = 1; next }
    /^#/ || NF == 0 { next }
    NF != 13 { printf "row with %d columns: %s\n", NF, $0; exit 1 }
    { rows++; wrong += $9 + $13; bw += $8 + $12; n += 2; sizes = sizes " " $1 }
    END {
      if (!seen_oob || !seen_avg) { print "no footer"; exit 1 }
      if (rows != want) { printf "%d rows, want %d\n", rows, want; exit 1 }
      printf "%d %d %s %s %.4f%s\n", rows, wrong, oob " " oobok, avg, bw / n, sizes
    }' "$1"
}

# --- 1. the published form under poprun, 4 instances ------------------------------------------
set +e
"$POPRUN" --num-instances 4 --num-replicas 4 "$BIN/all_reduce_perf" -b 8 -e 1M -f 4 -g 1 \
  >"$tmp/poprun.out" 2>"$tmp/poprun.err"
rc=$?
set -e
sed -n 's/^\[instance 0\] //p' "$tmp/poprun.out" >"$tmp/ar.txt"
if [ "$rc" -eq 0 ] && res=$(parse "$tmp/ar.txt" 9); then
  read -r rows wrong oob oobok avg mean sizes <<<"$res"
  if [ "$wrong" -eq 0 ] && [ "$oob $oobok" = "0 OK" ] &&
    [ "$sizes" = "8 32 128 512 2048 8192 32768 131072 524288" ] &&
    awk -v a="$avg" -v m="$mean" 'BEGIN { exit !(a > 0 && a - m < 0.01 && m - a < 0.01) }' &&
    grep -q '^# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 4(factor) ' "$tmp/ar.txt" &&
    [ "$(grep -c '^#  Rank ' "$tmp/ar.txt")" -eq 4 ] &&
    ! grep -q '^\[instance [1-3]\] [ 0-9]' "$tmp/poprun.out"; then
    ok "all_reduce_perf -b 8 -e 1M -f 4 -g 1, 4 instances: $rows rows, #wrong 0, avg busbw $avg"
  else
    bad "all_reduce_perf under poprun" "$res" "$(cat "$tmp/ar.txt")"
  fi
else
  bad "all_reduce_perf under poprun: exit $rc" "${res:-}" "$(tail -n 20 "$tmp/poprun.out" "$tmp/poprun.err")"
fi

# --- 2. every tool under mpirun, every type (and operator, and root) --------------------------
for tool in all_reduce reduce_scatter all_gather broadcast alltoall; do
  extra=()
  [ "$tool" = broadcast ] && extra=(-r all)
  [ "$tool" = all_reduce ] || [ "$tool" = reduce_scatter ] && extra=(-o all)
  set +e
  timeout 300 "$mpirun_private" --oversubscribe -np 2 "$BIN/${tool}_perf" -b 16 -e 64K -f 16 -g 2 \
    -d all -w 1 -n 3 "${extra[@]}" >"$tmp/$tool.txt" 2>"$tmp/$tool.err"
  rc=$?
  set -e
  # Types x operators (x roots) x 4 sizes: all_reduce 7 types x 5 ops less 4 integer means.
  case $tool in
    all_reduce | reduce_scatter) want=$(((7 * 5 - 4) * 4)) ;;
    broadcast) want=$((7 * 4 * 4)) ;;
    *) want=$((7 * 4)) ;;
  esac
  if [ "$rc" -eq 0 ] && res=$(parse "$tmp/$tool.txt" "$want") &&
    [ "$(echo "$res" | cut -d' ' -f2-4)" = "0 0 OK" ]; then
    ok "${tool}_perf under mpirun -np 2 -g 2, -d all ${extra[*]}: $want rows, #wrong 0"
  else
    bad "${tool}_perf under mpirun: exit $rc" "${res:-}" "$(tail -n 5 "$tmp/$tool.txt" "$tmp/$tool.err")"
  fi
done

# --- 3. JSON, and a wrong element counted -----------------------------------------------------
"$BIN/all_gather_perf" -b 64 -e 4K -f 4 -g 3 -J "$tmp/r.json" >"$tmp/json.txt"
if python3 - "$tmp/r.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["version"] == 1 and d["config"]["ngpus"] == 3 and len(d["config"]["devices"]) == 3
r = d["results"]
assert len(r) == 4 and [x["size"] for x in r] == [60, 252, 1020, 4092], [x["size"] for x in r]
for x in r:
    for half in ("out_of_place", "in_place"):
        assert x[half]["nwrong"] == 0 and x[half]["time"] > 0
assert d["out_of_bounds"] == {"count": 0, "okay": "true"}
assert d["average_bus_bandwidth"]["bandwidth"] > 0
PY
then
  ok "-J writes nccl-tests' JSON"
else
  bad "-J JSON" "$(cat "$tmp/r.json")"
fi
set +e
"$BIN/all_reduce_perf" -b 64 -e 256 -f 2 -g 3 --_corrupt >"$tmp/bad.txt" 2>&1
rc=$?
set -e
if [ "$rc" -eq 1 ] && grep -q '^# Out of bounds values : 6 FAILED$' "$tmp/bad.txt" &&
  [ "$(awk '!/^#/ && NF == 13 { print $9 $13 }' "$tmp/bad.txt" | sort -u)" = "11" ]; then
  ok "a spoiled element is #wrong 1 and fails the run"
else
  bad "spoiled element: exit $rc" "$(cat "$tmp/bad.txt")"
fi

# --- 4. malformed flags: one line, exit 2 ----------------------------------------------------
check_usage() { # NAME MESSAGE ARGS...
  local name=$1 msg=$2
  shift 2
  set +e
  "$BIN/all_reduce_perf" "$@" >"$tmp/u.out" 2>"$tmp/u.err"
  local rc=$?
  set -e
  if [ "$rc" -eq 2 ] && [ "$(cat "$tmp/u.err")" = "all_reduce_perf: $msg" ] && [ ! -s "$tmp/u.out" ]; then
    ok "$name"
  else
    bad "$name" "exit $rc: $(cat "$tmp/u.err" "$tmp/u.out")"
  fi
}
check_usage "bad -b" "-b 'lots': expected a size such as 8, 64K or 128M" -b lots
check_usage "bad -e" "-e '12X': expected a size such as 8, 64K or 128M" -e 12X
check_usage "bad -f" "-f '0': expected an integer factor from 1 to 1048576" -f 0
check_usage "bad -i" "-i '0': expected a positive size such as 1M" -i 0
check_usage "bad -n" "-n 'x': expected an integer from 0 to 100000000" -n x
check_usage "bad -w" "-w '-1': expected an integer from 0 to 100000000" -w -1
check_usage "bad -c" "-c '1.5': expected an integer from 0 to 1000000" -c 1.5
check_usage "bad -a" "-a '4': expected an integer from 0 to 3" -a 4
check_usage "bad -g" "-g '0': expected an integer from 1 to 1024" -g 0
check_usage "bad -t" "-t 'two': expected an integer from 1 to 1024" -t two
check_usage "bad -o" "-o 'xor': expected sum, prod, max, min, avg, all, or a GCL operator" -o xor
check_usage "bad -d" \
  "-d 'int8': expected int32, uint32, int64, uint64, half, float, bfloat16 or all (GCL has no int8, uint8 or double)" \
  -d int8
check_usage "bad -r" "-r 'first': expected a rank or all" -r first
check_usage "bad -m" "-m '0': expected an integer from 1 to 1024" -m 0
check_usage "bad -z" "-z '2': expected an integer from 0 to 1" -z 2
check_usage "bad -G" "-G 'no': expected an integer from 0 to 1000000" -G no
check_usage "sizes backwards" "invalid sizes for 'minbytes' and 'maxbytes': 1024 > 8; expected -b at most -e" -b 1K -e 8
check_usage "unknown flag" "unknown option '-q' (see --help)" -q
check_usage "missing value" "missing value for '-b' (see --help)" -b
check_usage "stray word" "unexpected argument 'extra' (see --help)" -b 8 extra
set +e
"$POPRUN" --num-instances 2 --num-replicas 4 "$BIN/all_reduce_perf" -g 1 -b 8 -e 8 \
  >"$tmp/g.out" 2>"$tmp/g.err"
rc=$?
set -e
if [ "$rc" -eq 2 ] && grep -q "all_reduce_perf: -t 1 x -g 1 is 1 ranks per process, but poprun gave this instance 2 replicas" "$tmp/g.err"; then
  ok "-g that disagrees with poprun's replicas"
else
  bad "-g against poprun: exit $rc" "$(cat "$tmp/g.err")"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
