#!/usr/bin/env bash
# libgcl as a library others install: `cmake --install BUILD --prefix P` into a temporary P, then
# an outside C program built against P with `pkg-config --cflags --libs gcl` and with
# find_package(gcl) (gcl::gcl), each run under P/bin/poprun; the installed nccl-tests tools run
# there too. libgcl.so exports exactly the calls its headers declare. Last, a build with the
# ofi transport, tests and examples left out (GCL_WITH_OFI/GCL_BUILD_TESTS/GCL_BUILD_EXAMPLES).
#
#   install_check.sh BUILD_DIR SOURCE_DIR [SANITIZERS]
set -euo pipefail
BUILD=$1
SRC=$2
SAN=${3:-}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/gcl-install.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
P=$tmp/prefix
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; shift; printf '  %s\n' "$@"; }
export GCL_TIMEOUT_S=60
for v in $(env | sed -n 's/^\(POPDIST_[A-Z_]*\)=.*/\1/p'); do unset "$v"; done
sanflags=()
[ -n "$SAN" ] && sanflags=(-fsanitize="$SAN")

cmake --install "$BUILD" --prefix "$P" >"$tmp/install.log"
missing=""
for f in include/gcl/gcl.h include/gcl/popdist.h include/gcl/popdist_env.h include/gcl/sim.h \
  include/gcl/status.h include/gcl/types.h include/gcl/version.h lib/libgcl.so lib/libgcl.so.0 \
  lib/pkgconfig/gcl.pc lib/cmake/gcl/gclConfig.cmake lib/cmake/gcl/gclConfigVersion.cmake \
  lib/cmake/gcl/gclTargets.cmake bin/poprun bin/gcl-info bin/gcl-bench bin/train \
  bin/allreduce-check bin/sim-step bin/all_reduce_perf bin/reduce_scatter_perf \
  bin/all_gather_perf bin/broadcast_perf bin/alltoall_perf; do
  [ -e "$P/$f" ] || missing="$missing $f"
done
soname=$(readelf -d "$P/lib/libgcl.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [ -z "$missing" ] && [ "$soname" = libgcl.so.0 ] && [ -L "$P/lib/libgcl.so" ]; then
  ok "cmake --install: headers, libgcl.so (SONAME $soname), poprun, tools, gcl.pc, CMake package"
else
  bad "installed files" "missing:$missing" "SONAME: $soname"
fi

# The exported symbols are exactly the functions the installed headers declare.
nm -D --defined-only "$P/lib/libgcl.so" | awk '$2 ~ /^[TDBRVW]$/ { print $3 }' | sort >"$tmp/exported"
cat "$P"/include/gcl/*.h | cpp -P -I"$P/include" - 2>/dev/null | python3 -c '
import re, sys
text = sys.stdin.read()
# Drop the bodies of static inline functions, then read each declaration up to its ";".
text = re.sub(r"static inline[^{;]*\{[^}]*\}", "", text)
names = set()
for stmt in text.split(";"):
    if "typedef" in stmt:
        continue
    m = re.search(r"\b((?:gcl|popdist)_\w+)\s*\(", stmt)
    if m:
        names.add(m.group(1))
print("\n".join(sorted(names)))' >"$tmp/declared"
if [ -s "$tmp/declared" ] && diff -u "$tmp/declared" "$tmp/exported" >"$tmp/sym.diff"; then
  ok "libgcl.so exports the $(wc -l <"$tmp/declared") calls of its headers and nothing else"
else
  bad "exported symbols (- declared only, + exported only)" "$(cat "$tmp/sym.diff")"
fi

# The outside program, built with pkg-config.
export PKG_CONFIG_PATH=$P/lib/pkgconfig
if [ "$(pkg-config --modversion gcl)" = "$(sed -n 's/^#define GCL_VERSION_MAJOR //p' "$SRC/gcl/include/gcl/version.h").$(sed -n 's/^#define GCL_VERSION_MINOR //p' "$SRC/gcl/include/gcl/version.h").$(sed -n 's/^#define GCL_VERSION_PATCH //p' "$SRC/gcl/include/gcl/version.h")" ] &&
  # shellcheck disable=SC2046 # pkg-config's words are meant to split
  cc -std=c11 -Wall -Wextra -Werror "${sanflags[@]}" "$SRC/tests/install/outside/prog.c" \
    $(pkg-config --cflags --libs gcl) -Wl,-rpath,"$P/lib" -o "$tmp/outside-pc" 2>"$tmp/cc.log"; then
  ok "built with pkg-config --cflags --libs gcl"
else
  bad "pkg-config build" "$(cat "$tmp/cc.log")"
fi

# The outside program, built with find_package(gcl).
if CC=cc cmake -S "$SRC/tests/install/outside" -B "$tmp/ob" -DCMAKE_PREFIX_PATH="$P" \
  -DCMAKE_C_FLAGS="${sanflags[*]}" >"$tmp/cmake.log" 2>&1 &&
  cmake --build "$tmp/ob" >>"$tmp/cmake.log" 2>&1; then
  ok "built with find_package(gcl) and gcl::gcl"
else
  bad "find_package build" "$(tail -n 30 "$tmp/cmake.log")"
fi

# Both run under the installed poprun, against the installed libgcl.
for prog in "$tmp/outside-pc" "$tmp/ob/outside"; do
  [ -x "$prog" ] || continue
  rc=0
  "$P/bin/poprun" --num-instances 2 --num-replicas 4 "$prog" >"$tmp/run.out" 2>&1 || rc=$?
  lib=$(ldd "$prog" | sed -n 's/.*libgcl\.so\.0 => \([^ ]*\).*/\1/p')
  if [ "$rc" -eq 0 ] && [ "$(grep -c 'outside: libgcl [0-9.]*, instance [01] of 2, .*: PASSED' "$tmp/run.out")" -eq 2 ] &&
    [ "$lib" = "$P/lib/libgcl.so.0" ]; then
    ok "$(basename "$(dirname "$prog")")/$(basename "$prog") passes under the installed poprun (libgcl from P/lib)"
  else
    bad "$prog under poprun (exit $rc, libgcl $lib)" "$(cat "$tmp/run.out")"
  fi
done
rc=0
"$P/bin/poprun" --num-instances 2 --num-replicas 2 "$P/bin/all_reduce_perf" -b 8 -e 1K -f 8 \
  >"$tmp/perf.out" 2>&1 || rc=$?
if [ "$rc" -eq 0 ] && grep -q '^\[instance 0\] # Out of bounds values : 0 OK$' "$tmp/perf.out"; then
  ok "the installed all_reduce_perf runs under the installed poprun"
else
  bad "installed all_reduce_perf (exit $rc)" "$(cat "$tmp/perf.out")"
fi

# Left out: the ofi transport (no libfabric), the tests and the examples.
if [ -z "$SAN" ]; then
  M=$tmp/minimal
  if cmake -S "$SRC" -B "$M" -DGCL_WITH_OFI=OFF -DGCL_BUILD_TESTS=OFF -DGCL_BUILD_EXAMPLES=OFF \
    -DGCL_WERROR=1 >"$tmp/min.log" 2>&1 && cmake --build "$M" -j2 >>"$tmp/min.log" 2>&1; then
    targets=$(cmake --build "$M" --target help)
    if ! ldd "$M/lib/libgcl.so" | grep libfabric >/dev/null && ! grep -q all_reduce_perf <<<"$targets" &&
      ! grep -q test_gcl <<<"$targets" && [ -x "$M/bin/poprun" ] && [ -x "$M/bin/gcl-info" ]; then
      ok "GCL_WITH_OFI=OFF GCL_BUILD_TESTS=OFF GCL_BUILD_EXAMPLES=OFF: libgcl without libfabric, poprun, no tests or examples"
    else
      bad "minimal build" "$(ldd "$M/lib/libgcl.so")"
    fi
  else
    bad "minimal build failed" "$(tail -n 30 "$tmp/min.log")"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
