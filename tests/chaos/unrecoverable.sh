#!/usr/bin/env bash
# unrecoverable.sh CHAOS   (root: scripts/chaos makes its own namespace hosts)
#
# When scripts/chaos cannot recover, it says so in one line and exits 1:
#   - every checkpoint torn as the job is killed (kind torn_all): train finds none valid,
#     refuses to start over (status 2), poprun does not restart; the line names the fault and
#     "last good checkpoint: none";
#   - restarts used up (--max-restarts 1, three kills): the line names poprun's "no restart left",
#     the faults seen and the newest valid checkpoint;
#   - a usage error: one line, exit 2.
# Nothing is left behind in any case (scripts/chaos checks it; so does this script, through the
# report's leftovers).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 CHAOS" >&2; exit 2; }
chaos=$1
out=$(mktemp -d /tmp/chaos-unrecoverable.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL (chaos-unrecoverable): $*" >&2; exit 1; }
case_run() { # NAME WANT ARGS...: scripts/chaos ARGS, its stdout in $out/NAME.out
  local name=$1 want=$2 st=0
  shift 2
  "$chaos" "$@" --out "$out/$name" >"$out/$name.out" 2>"$out/$name.err" || st=$?
  [ "$st" -ne 77 ] || { cat "$out/$name.err"; echo "SKIP: scripts/chaos skipped"; exit 77; }
  [ "$st" -eq "$want" ] || { cat "$out/$name.out" "$out/$name.err"; fail "$name: exit $st, want $want"; }
}
one_line() { # NAME PATTERN...: the last line of NAME's output says "cannot recover" with each
  local name=$1 line
  shift
  [ "$(grep -c '^chaos: cannot recover: ' "$out/$name.out")" -eq 1 ] ||
    { cat "$out/$name.out"; fail "$name: not exactly one 'cannot recover' line"; }
  line=$(tail -1 "$out/$name.out")
  for p in "$@"; do
    [[ "$line" == *$p* ]] || { echo "$line"; fail "$name: the line does not say '$p'"; }
  done
  echo "$name: $line"
  python3 - "$out/$name/report.json" <<'PY' || fail "$name: the report names leftovers"
import json, sys
lo = json.load(open(sys.argv[1]))["leftovers"]
bad = lo.get("processes", []) + lo.get("shm_and_session_dirs", [])
bad += [] if lo.get("work_dir_removed") else ["work directory"]
bad += [] if lo.get("namespaces") == "none" else [str(lo.get("namespaces"))]
sys.exit(1 if bad else 0)
PY
}

case_run torn 1 --faults 1 --seed 3 --kinds torn_all
one_line torn "faults seen: 1 torn_all" "last good checkpoint: none" "train: cannot resume" \
  "exited with status 2"
case_run restarts 1 --faults 3 --seed 4 --kinds kill --max-restarts 1
one_line restarts "no restart left (1 used)" "faults seen: 1 kill" "last good checkpoint: step"
kept=$(tail -1 "$out/restarts.out" | sed -n 's/.*, kept as \([^ ;]*\).*/\1/p')
[ -s "$kept" ] || fail "restarts: the last good checkpoint was not kept ($kept)"
st=0
"$chaos" --faults 0 --seed 1 >"$out/usage.out" 2>&1 || st=$?
[ "$st" -eq 2 ] && [ "$(wc -l <"$out/usage.out")" -eq 1 ] || { cat "$out/usage.out"; fail "usage: exit $st"; }
echo "usage: $(cat "$out/usage.out")"
echo "PASS (chaos-unrecoverable)"
