#!/usr/bin/env bash
# scripts/check-pipes finds each kind of early reader planted in a pipefail script, passes the
# same pipelines written to read their whole input, and leaves scripts without pipefail alone.
# check-pipes: skip-file (it plants the violations)
set -euo pipefail
check=$(cd "$(dirname "$0")/../.." && pwd)/scripts/check-pipes
dir=$(mktemp -d "${TMPDIR:-/tmp}/check-pipes.XXXXXX")
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

planted=(
  "sort -rn log | head -10"
  "cmd --help | grep -q usage"
  "cmd | grep -qE 'a|b'"
  "cmd | grep -m1 x"
  "cmd | sed -n '/x/{p;q}'"
  "cmd | awk '/x/ {print; exit}'"
  "x=\$(cmd |& head -1)"
)
clean=(
  "sort -rn log | awk 'NR <= 10'"
  "cmd --help | grep usage >/dev/null"
  "[ -f a ] || grep -q x a"
  "grep -q x a && echo yes"
  "cmd | head -3 # check-pipes: ok, cmd writes 3 lines in one write"
  "# sort | head -1 in a comment"
)
n=0
for line in "${planted[@]}"; do
  n=$((n + 1))
  printf '#!/bin/bash\nset -o pipefail\n%s\n' "$line" >"$dir/bad$n.sh"
  out=$("$check" --files "$dir/bad$n.sh") && fail "not found: $line"
  grep -F ":3: $line" <<<"$out" >/dev/null || fail "wrong report for '$line': $out"
done
printf '#!/bin/bash\nset -o pipefail\n' >"$dir/clean.sh"
printf '%s\n' "${clean[@]}" >>"$dir/clean.sh"
out=$("$check" --files "$dir/clean.sh") || fail "a clean script was reported: $out"
printf '#!/bin/bash\nsort log | head -1\n' >"$dir/nopipefail.sh"
"$check" --files "$dir/nopipefail.sh" >/dev/null || fail "a script without pipefail was held to it"
echo "ok: ${#planted[@]} planted early readers found, ${#clean[@]} whole-input forms passed"
