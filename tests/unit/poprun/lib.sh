# Shared helpers of poprun's script tests (sourced). Each check prints "ok: NAME" or
# "FAIL: NAME" with what differed; the script ends with "N passed, N failed" and fails if any did.
passed=0
failed=0
tmp=$(mktemp -d /tmp/poprun-test.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

ok() {
  passed=$((passed + 1))
  echo "ok: $1"
}

bad() {
  failed=$((failed + 1))
  echo "FAIL: $1"
  shift
  printf '  %s\n' "$@"
}

# run CMD...: runs it with stdout in $tmp/out, stderr in $tmp/err, status in $rc.
run() {
  set +e
  "$@" >"$tmp/out" 2>"$tmp/err"
  rc=$?
  set -e
}

# expect_same NAME WANT_FILE GOT_FILE
expect_same() {
  if diff -u "$2" "$3" >"$tmp/diff"; then
    ok "$1"
  else
    bad "$1" "$(cat "$tmp/diff")"
  fi
}

# expect_rc NAME WANT: compares $rc.
expect_rc() {
  if [ "$rc" -eq "$2" ]; then
    ok "$1 (exit $2)"
  else
    bad "$1: exit status" "want $2, got $rc" "stderr: $(head -c 2000 "$tmp/err")"
  fi
}

# expect_usage_error NAME MESSAGE POPRUN-ARGS...: exit 2, exactly one line "poprun: MESSAGE" on
# stderr, nothing on stdout.
expect_usage_error() {
  local name=$1 msg=$2
  shift 2
  run timeout 20 "$POPRUN" "$@"
  printf 'poprun: %s\n' "$msg" >"$tmp/want"
  if [ "$rc" -eq 2 ] && cmp -s "$tmp/want" "$tmp/err" && [ ! -s "$tmp/out" ]; then
    ok "$name"
  else
    bad "$name" "want exit 2 and: poprun: $msg" "got exit $rc and: $(cat "$tmp/err")" \
      "stdout: $(cat "$tmp/out")"
  fi
}

finish() {
  echo "$passed passed, $failed failed"
  [ "$failed" -eq 0 ]
}
