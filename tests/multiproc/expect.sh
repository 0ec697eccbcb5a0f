#!/usr/bin/env bash
# expect.sh STATUS PATTERN -- COMMAND...
#
# Runs COMMAND and checks how it ends: STATUS is "0" (success) or "fail" (any non-zero status);
# every PATTERN (extended regular expressions separated by "&&") must appear in its combined
# output. Prints the output when a check fails.
set -uo pipefail
want=$1 patterns=$2
shift 2
[ "${1:-}" = "--" ] && shift
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$@" >"$out" 2>&1
status=$?
fail() {
  echo "expect.sh: $*" >&2
  echo "---- output of: $* ----" >&2
  cat "$out" >&2
  exit 1
}
case $want in
  0) [ $status -eq 0 ] || fail "exit status $status, expected 0: $*" ;;
  fail) [ $status -ne 0 ] || fail "exit status 0, expected a failure: $*" ;;
  *) [ $status -eq "$want" ] || fail "exit status $status, expected $want: $*" ;;
esac
IFS=$'\n'
for p in $(echo "$patterns" | sed 's/ && /\n/g'); do
  [ -z "$p" ] && continue
  grep -Eq -- "$p" "$out" || fail "output lacks /$p/: $*"
done
exit 0
