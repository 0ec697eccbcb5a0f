#!/usr/bin/env bash
# run.sh [BUILD_DIR]: builds the libFuzzer targets with clang (-fsanitize=fuzzer,address,
# undefined) into BUILD_DIR (default: build-fuzz/ at the top of the source tree) and runs each
# for a bounded time over its committed corpus, tests/faults/fuzz/corpus/<target>/. Any crash,
# leak, out-of-bounds read, undefined behaviour or broken invariant fails the run and leaves the
# input that caused it in BUILD_DIR/artifacts/<target>/ (its path is printed).
#
#   wire      gcl_wire_decode: the header check of every mpi/ofi message (gcl/src/transport/wire.c)
#   topology  sim_topology_load: topology files (sim/src/topology/topology_parse.c, topology_build.c)
#   ckpt      ckpt_read: train's checkpoints (examples/train/data/ckpt.c)
#   idx       idx_read: train's IDX data files, gzip'd or plain (examples/train/data/idx.c)
#
# Environment: FAULTS_FUZZ_SECONDS (default 12) per target; FAULTS_FUZZ_TARGETS (default all
# four, comma-separated). New inputs found go to BUILD_DIR/corpus/<target>/, never into the
# committed corpus; copy a useful one there by hand. Exit 77 (skip) when clang's libFuzzer is
# not installed (Debian: clang and libclang-rt-14-dev).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../../.." && pwd)
out=${1:-$src/build-fuzz}
seconds=${FAULTS_FUZZ_SECONDS:-12}
targets=${FAULTS_FUZZ_TARGETS:-wire,topology,ckpt,idx}
cc=${FAULTS_FUZZ_CC:-clang}

probe=$(mktemp -d "${TMPDIR:-/tmp}/gcl-fuzz-probe.XXXXXX")
trap 'rm -rf "$probe"' EXIT
command -v "$cc" >/dev/null || { echo "SKIP: $cc is not installed (Debian: clang)"; exit 77; }
echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n); int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return 0; }' >"$probe/p.c"
"$cc" -fsanitize=fuzzer "$probe/p.c" -o "$probe/p" 2>/dev/null ||
  { echo "SKIP: $cc cannot link libFuzzer (Debian: libclang-rt-14-dev)"; exit 77; }

mkdir -p "$out"
# shellcheck disable=SC2054 # the commas belong to -fsanitize=
flags=(-g -O1 -std=c11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined
       -fno-sanitize-recover=all -fno-omit-frame-pointer -Wall -Wextra -Werror
       -Wno-unused-parameter -I"$here")
build() { # build NAME SOURCES... -- EXTRA FLAGS
  local name=$1
  shift
  echo "== fuzz: building $name"
  "$cc" "${flags[@]}" "$@" -o "$out/fuzz_$name"
}
for t in ${targets//,/ }; do
  case $t in
    wire) build wire "$here/fuzz_wire.c" "$src/gcl/src/transport/wire.c" "$src/collectives/src/types.c" \
            -I"$src/gcl/src" -I"$src/gcl/include" -I"$src/collectives/include" ;;
    topology) build topology "$here/fuzz_topology.c" "$src"/sim/src/*/*.c \
                -I"$src/sim/include" -I"$src/sim/src" -lm ;;
    ckpt) build ckpt "$here/fuzz_ckpt.c" "$src/examples/train/data/ckpt.c" \
            "$src"/examples/train/model/*.c -I"$src/examples/train" $(pkg-config --cflags --libs openblas) \
            -lz -lm ;; # a checkpoint records the model's layers (model/)
    idx) build idx "$here/fuzz_idx.c" "$src/examples/train/data/idx.c" -I"$src/examples/train" -lz ;;
    *) echo "run.sh: unknown target $t" >&2; exit 2 ;;
  esac
done

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
failed=()
for t in ${targets//,/ }; do
  seeds=$here/corpus/$t
  work=$out/corpus/$t
  arts=$out/artifacts/$t
  mkdir -p "$work" "$arts"
  [ -n "$(ls -A "$seeds" 2>/dev/null)" ] || { echo "no seeds in $seeds" >&2; exit 1; }
  echo "== fuzz: $t for ${seconds} s over $(ls "$seeds" | wc -l) seeds"
  log=$out/$t.log
  # The seeds first on their own: each must run clean.
  if ! "$out/fuzz_$t" -runs=0 "$seeds" >"$log.seeds" 2>&1; then
    tail -40 "$log.seeds"
    failed+=("$t (a committed seed)")
    continue
  fi
  if "$out/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
       -max_len=4096 -print_final_stats=1 -artifact_prefix="$arts/" "$work" "$seeds" \
       >"$log" 2>&1; then
    grep -E '^stat::number_of_executed_runs|^stat::new_units_added' "$log" | tr '\n' ' '
    echo
  else
    tail -60 "$log"
    echo "== fuzz: $t failed; the input is in $arts/"
    failed+=("$t")
  fi
done
[ ${#failed[@]} -eq 0 ] || { echo "FAIL: fuzz targets: ${failed[*]}"; exit 1; }
echo "PASS: fuzz targets ${targets} ran ${seconds} s each without a finding"
