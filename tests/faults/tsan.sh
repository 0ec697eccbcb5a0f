#!/usr/bin/env bash
# tsan.sh [BUILD_DIR]: the threaded parts of libgcl under ThreadSanitizer. Builds libgcl, its
# unit tests (tests/unit/gcl) and the poprun-free multi-replica programs with
# -fsanitize=thread into BUILD_DIR (default: build-tsan/ at the top of the source tree), then
# runs them with TSAN_OPTIONS=halt_on_error=1: any data race fails the run and its report is
# printed. Only one instance runs (replicas are threads of one process), so neither OpenMPI nor
# libfabric is exercised and no suppression is needed.
#
#   test_gcl_basics, test_gcl_allreduce, test_gcl_sim    the unit tests of libgcl
#   test_gcl_eager                                       the eager cells: early broadcasts, reuse
#   test_gcl_log                                         8 threads' first log lines at once
#   test_gcl_preempt                                     SIGTERM and gcl_preempt_agree
#   allreduce-check --replicas 6                         every group, type and operator
#   allreduce-check, GCL_LOG_LEVEL=trace                 the same with every log line on
#   faults-mismatch (4 replicas)                         mismatched calls, aborts and poison
#   faults-stall single (4 replicas)                     a stalled replica, a warning, a wait
#
# Any report fails (this suite found one: gcl_poison_group wrote a peer's poison text while
# the peer read it in gcl_poisoned, gcl/src/engine/request.c; fixed in c140842; and the log prefix's
# host name was written by each thread's first line while others read it, gcl/src/base/log.c). No
# suppressions.
# The runs go without address-space randomisation (setarch -R): ThreadSanitizer's fixed
# memory layout leaves no room, in some random layouts, for the 1 TiB that phantom mode
# reserves (gcl/src/pod/pod.c), and gcl_init would fail with "out of host memory".
#
# Environment: GCL_TSAN_CC (default: the C compiler CMake picks). Exit 77 (skip) when the
# compiler cannot build with -fsanitize=thread.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
out=${1:-$src/build-tsan}
cc=${GCL_TSAN_CC:-${CC:-cc}}

probe=$(mktemp -d "${TMPDIR:-/tmp}/gcl-tsan-probe.XXXXXX")
trap 'rm -rf "$probe"' EXIT
echo 'int main(void) { return 0; }' >"$probe/p.c"
"$cc" -fsanitize=thread "$probe/p.c" -o "$probe/p" 2>/dev/null && "$probe/p" ||
  { echo "SKIP: $cc cannot build and run with -fsanitize=thread"; exit 77; }

echo "== tsan: configuring $out"
CC=$cc cmake -S "$src" -B "$out" -DGCL_WERROR=1 -DGCL_SANITIZE=thread -DCMAKE_BUILD_TYPE=Debug \
  -DGCL_TEST_DIRS="unit/gcl;faults" >"$probe/configure.log" 2>&1 ||
  { cat "$probe/configure.log"; exit 1; }
echo "== tsan: building"
cmake --build "$out" -j "$(nproc)" --target test_gcl_basics test_gcl_allreduce test_gcl_sim \
  test_gcl_eager test_gcl_log test_gcl_preempt allreduce-check faults-mismatch faults-stall >"$probe/build.log" 2>&1 ||
  { tail -50 "$probe/build.log"; exit 1; }

export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}"
# No poprun: every POPDIST_* of an enclosing job would make these instances of it.
for v in $(env | sed -n 's/^\(POPDIST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
logs=$out/tsan-logs
rm -rf "$logs"
mkdir -p "$logs"
norand=()
setarch "$(uname -m)" -R true 2>/dev/null && norand=(setarch "$(uname -m)" -R)
failed=()
run() { # run NAME COMMAND...
  local name=$1
  shift
  local t0=$SECONDS st=0
  "${norand[@]}" "$@" >"$logs/$name.log" 2>&1 || st=$?
  if [ "$st" -eq 0 ]; then
    echo "ok    $name ($((SECONDS - t0)) s)"
  else
    echo "FAIL  $name (exit $st; the whole report: $logs/$name.log):"
    grep -A40 'WARNING: ThreadSanitizer' "$logs/$name.log" | awk 'NR <= 80' || tail -30 "$logs/$name.log"
    failed+=("$name")
  fi
}
run test_gcl_basics "$out/tests/test_gcl_basics"
run test_gcl_allreduce "$out/tests/test_gcl_allreduce"
run test_gcl_sim "$out/tests/test_gcl_sim"
run test_gcl_eager "$out/tests/test_gcl_eager"
run test_gcl_log "$out/tests/test_gcl_log"
run test_gcl_preempt "$out/tests/test_gcl_preempt"
run allreduce-check "$out/bin/allreduce-check" --replicas 6 --sizes 0,4,68,1K,100K
run "allreduce-check logging" env GCL_LOG_LEVEL=trace GCL_LOG_SUBSYS=all \
  "$out/bin/allreduce-check" --replicas 4 --sizes 4,1K
for c in "all_reduce count" "all_reduce op_direct" "reduce_scatter type" "all_gather group" \
         "all_to_all algorithm" "barrier collective"; do
  # shellcheck disable=SC2086 # two words
  run "faults-mismatch ${c/ /-}" env GCL_TIMEOUT_S=3 "$out/tests/faults-mismatch" $c
done
run "faults-stall" env GCL_STALL_WARN_S=0.5 GCL_TIMEOUT_S=30 "$out/tests/faults-stall" 3 1
[ ${#failed[@]} -eq 0 ] || { echo "FAIL: under ThreadSanitizer: ${failed[*]}"; exit 1; }
echo "PASS: no data race reported"
