#!/usr/bin/env bash
# pilot_test.sh CASE SOURCE_DIR BUILD_DIR
#
#   cases  scripts/pilot --quick (the CNN) on a slice of Fashion-MNIST (8192 training, 2000 test
#          samples),
#          with prices: every run succeeds, the restarted run ends bitwise identical, the elastic
#          run goes on with 12 replicas and grows back to 16 without a restart, both reports
#          and their six plots exist, the HTML passes the browser check and has a screenshot;
#          then the report rebuilt from the same runs with the MPI baseline failed, without a
#          simulated part, and with every run failed says so (and every image still loads);
#          with an image removed the browser check fails and names it; bad options exit 2.
#   quick  scripts/pilot --quick as it is: under 10 minutes, exit 0, both reports, the accuracy
#          of the two platforms within 0.3 points, the restart bitwise identical.
set -uo pipefail
case_name=$1 src=$2 build=$3
work=$(mktemp -d /tmp/pilot-test-XXXXXX)
trap 'rm -rf "$work"' EXIT
export GCL_BUILD_DIR=$build

fail() {
  echo "pilot_test.sh $case_name: FAILED: $*" >&2
  exit 1
}

# has FILE PATTERN: FILE matches the extended regular expression.
has() {
  grep -Eq -- "$2" "$1" || { echo "---- $1 ----" >&2; head -c 4000 "$1" >&2; fail "$1 lacks /$2/"; }
}

# reports DIR: both reports, the six plots as PNG files, and each plot shown by both.
reports() {
  local d=$1 p
  for p in convergence step_time throughput sim_time_split memory cost; do
    [ "$(head -c 8 "$d/$p.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
      fail "$d/$p.png is not a PNG"
    has "$d/report.md" "!\[[a-z ]+\]\($p.png\)"
    has "$d/report.html" "<img src=\"$p.png\""
  done
}

# check_html DIR: the browser check passes: every image of the page loaded.
check_html() {
  "$src/scripts/pilot-check-html" "$1/report.html" >"$work/check.out" 2>&1 ||
    { cat "$work/check.out" >&2; fail "the browser check of $1/report.html failed"; }
  has "$work/check.out" "image check: all 6 images loaded"
}

# variant NAME: a copy of the good pilot's directory, to break.
variant() {
  rm -rf "$work/$1"
  cp -r "$work/ok" "$work/$1"
  rm -f "$work/$1"/*.png "$work/$1"/report.*
}

# json_edit FILE PYTHON: edits the JSON object r of FILE in place.
json_edit() {
  python3 - "$1" "$2" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
exec(sys.argv[2])
json.dump(r, open(sys.argv[1], "w"))
PY
}

case_cases() {
  PILOT_TRAIN_ARGS="--train-samples 8192 --test-samples 2000" "$src/scripts/pilot" --quick \
    --target-accuracy 0.7 --pod-cost-per-hour 40 --baseline-cost-per-hour 3 --out "$work/ok" \
    >"$work/ok.out" 2>&1 || { cat "$work/ok.out" >&2; fail "scripts/pilot failed"; }
  cat "$work/ok.out"
  local md=$work/ok/report.md
  reports "$work/ok"
  check_html "$work/ok"
  [ "$(head -c 8 "$work/ok/report.png" | od -An -tx1 | tr -d ' \n')" = 89504e470d0a1a0a ] ||
    fail "no screenshot"
  has "$md" "^- 12 of 12 runs succeeded\.$"
  has "$md" "points apart \(within 0\.3\)"
  has "$md" "the resumed run ends bitwise identical to the uninterrupted one"
  # The same loss under --elastic: 12 replicas go on, no restart, the replacement joins back.
  has "$md" "^- Elastic \(real\): instance 1 killed after step [0-9]+; the 12 replicas left went on from memory and finished their first step [0-9.]+ (ms|s) after the kill, with 0 whole-job restarts; the replacement joined at step [0-9]+ \(16 replicas again\); test accuracy [-+][0-9.]+ points from the gcl run's \(within 0\.3\)\.$"
  has "$md" "^\| [0-9]+ \| 1 \| lost instance 1 \| 3 x 12 \| [0-9.]+ (ms|s) \| [0-9.]+ (us|ms) \| [0-9.]+ (us|ms) \|$"
  has "$md" "^\| [0-9]+ \| 2 \| instance 1 joined \| 4 x 16 \|"
  has "$md" "^\| gcl \| [0-9.]+ (us|ms|s) \| [0-9.]+ (us|ms|s) \| [0-9.]+ (us|ms|s) \| [0-9.]+ (us|ms|s) \| 688 \|"
  has "$md" "^\| MPI baseline \| [0-9.]+ (us|ms|s) .* \| 688 \|"
  has "$md" "^\| POD64 \| 64 x 8 \| [0-9.]+ (us|ms) \|"
  # The CNN's layers on the simulated pod, and the all-reduce's share there and here.
  has "$md" "^# Pilot report: train's CNN on Fashion-MNIST"
  has "$md" "^\| conv2 \| conv \| 1 \| [0-9.]+ (us|ms) \| [0-9.]+ (us|ms) \|$"
  has "$md" "^\| pool1 \| pool \| 1 \| [0-9.]+ (us|ms) \| [0-9.]+ (us|ms) \|$"
  has "$md" "The gradient all-reduce: [0-9.]+ (us|ms) of the simulated step on POD16 \([0-9.]+%\), against [0-9.]+% of the real step on this host"
  has "$work/ok/raw/train-model.txt" "^layer conv name=conv2 h=14 w=14 cin=16 cout=32 kernel=3 stride=1 pad=1 bias=1$"
  has "$md" "^\| MPI baseline, this host \| [0-9.]+ s \| real, this host \| 3 \| [0-9.e-]+ \|$"
  has "$md" "^\| POD256, sim-step \(steps only\) \| [0-9.]+ ms \| simulated: a prediction \| 640 \|"
  # Each run and figure says what it is: a prediction is a prediction, a plan a plan, and no
  # label has a stray character.
  has "$md" "^\| sim-POD64 \| sim-step's prediction for POD64: "
  has "$md" "^\| plan-POD64 \| sim-step --plan's plan for POD64: "
  has "$md" "^\| planned throughput on POD64 \(sim-step --plan\) \| [0-9,]+ samples/s \| simulated: a plan \|"
  has "$md" "^\| predicted step time on POD64 \(sim-step\) \| [0-9.]+ (us|ms|s) \| simulated: a prediction \|"
  ! grep -Eq "for -POD|prediction for plan|plan-POD[0-9]+ .* prediction" "$md" || fail "a mislabelled run"
  has "$md" "^Prices as given: 40 per hour of POD16"
  has "$md" "^\| time to recover \(kill to the first new step\) \| [0-9.]+ (ms|s) \| real, this host \|$"
  has "$md" "^From run mpi: \`mpirun --oversubscribe --bind-to none -np 16 build[^ ]*/bin/train --backend mpi"
  # No figure without its kind.
  python3 - "$md" <<'PY' || fail "a figure without its kind"
import re, sys
kinds = "real, this host|simulated|simulated: a prediction|simulated: a plan|derived"
rows = [l for l in open(sys.argv[1]) if re.match(r"^\| [^|]+ \| [^|]+ \| (%s) \|$" % kinds, l)]
assert len(rows) >= 25, len(rows)
PY

  # The baseline failed: said in the summary, the runs and each section it would fill.
  variant failed
  echo 1 >"$work/failed/raw/mpi.status"
  rm -f "$work/failed/raw/mpi".{json,csv,w}
  echo "train: cannot read the dataset: no such file" >>"$work/failed/raw/mpi.log"
  python3 "$src/scripts/pilot-report" "$work/failed" >/dev/null || fail "report of a failed run"
  reports "$work/failed"
  check_html "$work/failed"
  md=$work/failed/report.md
  has "$md" "^- 11 of 12 runs succeeded; \*\*not: mpi \(FAILED \(exit status 1\)\)\*\*\.$"
  has "$md" "\*\*No comparison of the platforms: MPI baseline FAILED \(exit status 1\)\.\*\*"
  has "$md" "^\| mpi \| .* \| \*\*FAILED \(exit status 1\): .*cannot read the dataset"
  has "$md" "^\| MPI baseline \| \*\*FAILED \(exit status 1\)\*\* \|"
  has "$md" "^\| MPI baseline, this host \| \*\*FAILED \(exit status 1\)\*\* \|"

  # No simulated part: the gcl run says it simulated nothing, and sim-step did not run.
  variant nosim
  json_edit "$work/nosim/raw/gcl.json" 'r.update(simulated=False, sim_memory=None, sim_time_split=None, sim_step_time_s=None, sim_samples_per_s=None, topology=None)'
  rm -f "$work/nosim/raw/sim-"*
  python3 "$src/scripts/pilot-report" "$work/nosim" >/dev/null || fail "report without a simulated part"
  reports "$work/nosim"
  check_html "$work/nosim"
  md=$work/nosim/report.md
  has "$md" "\*\*The gcl run has no simulated part\*\*"
  has "$md" "^\*\*No simulated figures from train\*\*: the gcl run has no simulated part"
  has "$md" "^\*\*No simulated memory from train\*\*"
  has "$md" "^\| POD64 \| \*\*not run\*\* \|"
  has "$md" "^\*\*No simulated time to target\*\*: the gcl run has no simulated part .*; sim-step: POD16 not run, POD64 not run"
  ! grep -q "simulated POD16" "$md" || fail "a simulated figure without a simulated part"

  # Every run failed: a report that says so, every plot a notice.
  variant allfailed
  local f
  for f in "$work/allfailed/raw/"*.status; do echo 1 >"$f"; done
  rm -f "$work/allfailed/raw/"*.json "$work/allfailed/raw/"*.events
  python3 "$src/scripts/pilot-report" "$work/allfailed" >/dev/null || fail "report of failed runs"
  reports "$work/allfailed"
  check_html "$work/allfailed"
  has "$work/allfailed/report.md" "^- 0 of 12 runs succeeded"

  # A missing image fails the browser check, which names it.
  rm "$work/allfailed/memory.png"
  if "$src/scripts/pilot-check-html" "$work/allfailed/report.html" >"$work/check.out" 2>&1; then
    fail "the browser check passed without memory.png"
  fi
  has "$work/check.out" "image check: MISSING memory.png$"

  # Bad options: one line, status 2.
  local bad=("--bogus" "--epochs 0" "--target-accuracy 1.5" "--pod-cost-per-hour cheap" "--out")
  local args rc
  for args in "${bad[@]}"; do
    # shellcheck disable=SC2086 # the options are words
    "$src/scripts/pilot" $args >"$work/bad.out" 2>&1
    rc=$?
    [ "$rc" -eq 2 ] && [ "$(wc -l <"$work/bad.out")" -eq 1 ] && grep -q "^pilot: " "$work/bad.out" ||
      { cat "$work/bad.out" >&2; fail "'$args': exit $rc, want 2 and one line"; }
  done
  python3 "$src/scripts/pilot-report" "$work/nowhere" >"$work/bad.out" 2>&1
  [ $? -eq 2 ] || fail "pilot-report of no directory must exit 2"
  "$src/scripts/pilot-check-html" "$work/nowhere.html" >"$work/bad.out" 2>&1
  [ $? -eq 2 ] || fail "pilot-check-html of no file must exit 2"
}

case_quick() {
  local t0=$SECONDS
  "$src/scripts/pilot" --quick --out "$work/q" >"$work/q.out" 2>&1 ||
    { cat "$work/q.out" >&2; fail "scripts/pilot --quick failed"; }
  local took=$((SECONDS - t0))
  cat "$work/q.out"
  [ "$took" -lt 600 ] || fail "scripts/pilot --quick took $took s, not under 10 minutes"
  reports "$work/q"
  check_html "$work/q"
  has "$work/q/report.md" "^- 12 of 12 runs succeeded\.$"
  has "$work/q/report.md" "points apart \(within 0\.3\)"
  has "$work/q/report.md" "the resumed run ends bitwise identical to the uninterrupted one"
  echo "scripts/pilot --quick: $took s"
}

"case_$case_name"
echo "pilot_test.sh $case_name: PASSED"
