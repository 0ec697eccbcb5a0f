#!/usr/bin/env bash
# poprun running real jobs on this host: popdist-probe (an MPI program) checks the POPDIST_*
# variables of every instance, output tagging, --only-output-from-instance, --print-topology,
# --offline-mode, --numa-aware, -vv, and the exit status and message of a failing instance.
#
#   run.sh POPRUN PROBE
set -euo pipefail
POPRUN=$1
PROBE=$2
source "$(dirname "$0")/lib.sh"

# The line popdist-probe prints for instance I of a job (see popdist_probe.c).
probe_line() { # I LOCAL REPLICAS LOCAL_REPLICAS IPR INSTANCES ILDS TOPOLOGY OFFLINE PHANTOM SUM
  printf '[instance %d] instance=%d local=%d replicas=%d local_replicas=%d offset=%d ipr=%d instances=%d uniform=1 ilds=%d topology=%s offline=%d phantom=%s rank=%d size=%d ranksum=%d\n' \
    "$1" "$1" "$2" "$3" "$4" $(($1 * $4)) "$5" "$6" "$7" "$8" "$9" "${10}" "$1" "$6" "${11}"
}

# --- POPDIST_* of every instance, tagged output, MPI across the instances ---------------------
run timeout 60 "$POPRUN" --num-replicas 16 --num-instances 4 "$PROBE"
expect_rc "16 replicas over 4 instances" 0
sort "$tmp/out" >"$tmp/got"
for i in 0 1 2 3; do probe_line $i $i 16 4 1 4 1 POD16 0 - 6; done >"$tmp/want"
expect_same "POPDIST_* of 4 instances" "$tmp/want" "$tmp/got"
if [ ! -s "$tmp/err" ]; then ok "nothing on stderr"; else bad "stderr" "$(cat "$tmp/err")"; fi

run timeout 60 "$POPRUN" --num-replicas 4 --num-instances 2 --ipus-per-replica 4 \
  --topology pod64 --offline-mode "$PROBE"
sort "$tmp/out" >"$tmp/got"
for i in 0 1; do probe_line $i $i 4 2 4 2 1 POD64 1 1 1; done >"$tmp/want"
expect_same "--ipus-per-replica, --topology, --offline-mode" "$tmp/want" "$tmp/got"

# Two "hosts" that are both this one: local indices restart on each host.
run timeout 60 "$POPRUN" -H localhost --num-replicas 2 --num-instances 2 "$PROBE"
sort "$tmp/out" >"$tmp/got"
for i in 0 1; do probe_line $i $i 2 1 1 2 1 M2000 0 - 1; done >"$tmp/want"
expect_same "-H localhost" "$tmp/want" "$tmp/got"

# --- OpenMPI's session directory: in the job's own on one host, OpenMPI's place with -H ---------
run timeout 60 "$POPRUN" --num-replicas 2 --num-instances 2 env
job=$(sed -n 's/^\[instance 0\] POPRUN_JOB_ID=//p' "$tmp/out")
top=$(sed -n 's/^\[instance 0\] OMPI_MCA_orte_top_session_dir=//p' "$tmp/out")
if [ -n "$job" ] && [[ "$top" == "/dev/shm/poprun-$job/ompi."* ]] && [ ! -e "/dev/shm/poprun-$job" ]; then
  ok "one host: the session directory in the job's directory ($top), removed after"
else
  bad "session directory of a job on one host" "job '$job', top '$top'" "$(ls -d "/dev/shm/poprun-$job" 2>&1)"
fi
run timeout 60 "$POPRUN" -H localhost --num-replicas 2 --num-instances 2 env
top=$(sed -n 's/^\[instance 0\] OMPI_MCA_orte_top_session_dir=//p' "$tmp/out")
if [ -n "$top" ] && [[ "$top" != /dev/shm/poprun-* ]]; then
  ok "-H: the session directory where OpenMPI puts it ($top)"
else
  bad "session directory of a job with -H" "top '$top'"
fi

# --- output: stderr tagged on stderr, partial lines, --only-output-from-instance --------------
run timeout 60 "$POPRUN" --num-replicas 3 --num-instances 3 "$PROBE" --stderr "to stderr" \
  --no-newline
sort "$tmp/err" >"$tmp/got"
printf '[instance %d] to stderr\n' 0 1 2 >"$tmp/want"
expect_same "stderr lines are tagged" "$tmp/want" "$tmp/got"
if [ "$(grep -c '^\[instance [0-2]\] instance=.*ranksum=3$' "$tmp/out")" -eq 3 ]; then
  ok "an unterminated last line is tagged and ended"
else
  bad "unterminated last line" "$(cat "$tmp/out")"
fi

run timeout 60 "$POPRUN" --num-replicas 4 --num-instances 4 --only-output-from-instance 2 \
  "$PROBE" --stderr "err line"
probe_line 2 2 4 1 1 4 1 M2000 0 - 6 >"$tmp/want"
expect_same "--only-output-from-instance: stdout" "$tmp/want" "$tmp/out"
printf '[instance 2] err line\n' >"$tmp/want"
expect_same "--only-output-from-instance: stderr" "$tmp/want" "$tmp/err"

# --- --print-topology runs the job after the table ---------------------------------------------
run timeout 60 "$POPRUN" --print-topology --num-replicas 4 --num-instances 2 "$PROBE"
head -5 "$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<'WANT'
topology M2000: 4 IPUs in 1 IPU-Link domain
job: 4 replicas x 1 IPU = 4 IPUs; 2 instances on 1 host; 1 IPU-Link domain
host       ild  instance  replicas   ipus
localhost  0    0         0-1        0-1
localhost  0    1         2-3        2-3
WANT
expect_same "--print-topology table" "$tmp/want" "$tmp/got"
if [ "$(grep -c '^\[instance' "$tmp/out")" -eq 2 ]; then ok "--print-topology then runs"; else
  bad "--print-topology then runs" "$(cat "$tmp/out")"; fi

# --- -vv: the plan and command from poprun, the variables from each instance -----------------
run timeout 60 "$POPRUN" -vv --num-replicas 2 --num-instances 2 "$PROBE"
if grep -q '^poprun: running: mpirun ' "$tmp/err" &&
  grep -q '^\[instance 1\] poprun: POPDIST_REPLICA_INDEX_OFFSET=1$' "$tmp/err" &&
  grep -q '^\[instance 0\] poprun: POPDIST_LOCAL_INSTANCE_INDEX=0$' "$tmp/err"; then
  ok "-vv"
else
  bad "-vv" "$(cat "$tmp/err")"
fi

# --- --numa-aware: each instance bound to the CPUs of NUMA node (local index mod nodes) -------
nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -ge 1 ]; then
  run timeout 60 "$POPRUN" --numa-aware -v --num-replicas 2 --num-instances 2 "$PROBE" --affinity
  fail=""
  for i in 0 1; do
    node=$(ls -d /sys/devices/system/node/node[0-9]* | sed -n "$((i % nodes + 1))p")
    want=$(python3 -c "
import sys
out=[]
for part in open('$node/cpulist').read().strip().split(','):
    a,_,b=part.partition('-'); out+=range(int(a),int(b or a)+1)
print(','.join(map(str,out)))")
    grep -q "^\[instance $i\] .* cpus=$want\$" "$tmp/out" || fail="instance $i not on CPUs $want"
    grep -q "^\[instance $i\] poprun: bound to NUMA node" "$tmp/err" || fail="no binding report"
  done
  if [ -z "$fail" ]; then ok "--numa-aware ($nodes NUMA node(s))"; else
    bad "--numa-aware" "$fail" "$(cat "$tmp/out" "$tmp/err")"; fi
fi

# --- failures: status, message, the others ended ----------------------------------------------
start=$(date +%s)
run timeout 60 "$POPRUN" --num-replicas 8 --num-instances 4 "$PROBE" --on 2 --exit 3 \
  --others-sleep 60
expect_rc "instance 2 exits 3" 3
if [ "$(tail -1 "$tmp/err")" = "poprun: instance 2 (host localhost) exited with status 3" ] &&
  ! grep -q -- '-----' "$tmp/err" && [ $(($(date +%s) - start)) -lt 30 ]; then
  ok "failure message, no mpirun notice, the others ended early"
else
  bad "failure message" "$(cat "$tmp/err")"
fi

run timeout 60 "$POPRUN" --num-replicas 3 --num-instances 3 "$PROBE" --on 1 --signal 9 \
  --others-sleep 60
expect_rc "instance 1 killed by SIGKILL" 137
if [ "$(tail -1 "$tmp/err")" = "poprun: instance 1 (host localhost) was killed by signal 9 (SIGKILL)" ]; then
  ok "signal message"
else
  bad "signal message" "$(cat "$tmp/err")"
fi

# SIGUSR1 rather than SIGSEGV, which sanitizer builds catch and turn into an abort.
run timeout 60 "$POPRUN" --num-replicas 2 --num-instances 2 "$PROBE" --on 0 --signal 10
expect_rc "instance 0 killed by SIGUSR1" 138
if grep -q '^poprun: instance 0 (host localhost) was killed by signal 10 (SIGUSR1)$' "$tmp/err"; then
  ok "SIGUSR1 message"
else
  bad "SIGUSR1 message" "$(cat "$tmp/err")"
fi

# Whole lines: 4 instances writing 20,000 lines each as fast as they can, stdout and stderr,
# beside a CPU hog. mpirun's daemons read every instance's output in 4 KiB chunks and
# interleave them: before the wrappers kept those chunks to whole lines, about 2% of these lines
# came out broken by another instance's ("[instance 3] LINE r3 i00997[instance 1] LINE ...").
( while :; do :; done ) &
hog=$!
run "$POPRUN" --num-replicas 4 --num-instances 4 /bin/sh -c '
  r=$OMPI_COMM_WORLD_RANK; i=0
  awk -v r="$r" "BEGIN { for (i = 0; i < 20000; i++) { printf \"LINE r%s i%05d %s END\n\", r, i, \"xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx\"; if (i % 10 == 0) printf \"ERR r%s i%05d END\n\", r, i > \"/dev/stderr\" } }"'
kill "$hog"
wait "$hog" 2>/dev/null || true
lines=$(grep -c '^\[instance [0-3]\] LINE r[0-3] i[0-9]\{5\} x\{48\} END$' "$tmp/out" || true)
errs=$(grep -c '^\[instance [0-3]\] ERR r[0-3] i[0-9]\{5\} END$' "$tmp/err" || true)
if [ "$rc" -eq 0 ] && [ "$lines" -eq 80000 ] && [ "$(wc -l <"$tmp/out")" -eq 80000 ] &&
  [ "$errs" -eq 8000 ] && [ "$(wc -l <"$tmp/err")" -eq 8000 ]; then
  ok "80,000 stdout and 8,000 stderr lines of 4 instances beside a CPU hog, every one whole"
else
  bad "whole lines: exit $rc, $lines of 80000 stdout lines whole ($(wc -l <"$tmp/out") in all), $errs of 8000 stderr" \
    "$(grep -v '^\[instance [0-3]\] LINE r[0-3] i[0-9]\{5\} x\{48\} END$' "$tmp/out" | awk 'NR <= 3')"
fi

# mpirun itself missing: its own failure, reported as such.
POPRUN_MPIRUN=/nonexistent/mpirun run timeout 20 "$POPRUN" "$PROBE"
expect_rc "no mpirun" 127
if [ "$(cat "$tmp/err")" = "poprun: cannot run /nonexistent/mpirun: No such file or directory
poprun: mpirun exited with status 127" ]; then
  ok "no mpirun message"
else
  bad "no mpirun message" "$(cat "$tmp/err")"
fi

# A failure marker as mpirun's last line, then silence (as when a host it cannot reach keeps it
# from ending the job): poprun ends mpirun 10 s after the failure. Before, the deadline was set
# only by the poll after the read that brought the marker, which then waited without one.
fake=$tmp/fake-mpirun
cat >"$fake" <<'FAKE'
#!/usr/bin/env bash
while [ $# -gt 0 ] && [ "$1" != --_instance ]; do shift; done
printf '@@poprun-status %s 1 exit 3\n' "$2" >&2
exec sleep 60
FAKE
chmod +x "$fake"
t0=$SECONDS
POPRUN_MPIRUN=$fake run timeout 45 "$POPRUN" --num-replicas 2 --num-instances 2 "$PROBE"
took=$((SECONDS - t0))
if [ "$rc" -eq 3 ] && [ "$took" -lt 40 ] &&
  grep -q "^poprun: instance 1 (host [^)]*) exited with status 3; mpirun did not end the job within 10 s and was killed" "$tmp/err"; then
  ok "a silent mpirun after a failure is ended ($took s): $(tail -n 1 "$tmp/err")"
else
  bad "a silent mpirun after a failure: exit $rc after $took s" "$(cat "$tmp/err")"
fi

# A host mpirun cannot reach (".invalid" never resolves): one line with ssh's reason, exit 1;
# mpirun's banner only with -v.
run timeout 60 "$POPRUN" --host nosuchhost.invalid "$PROBE"
expect_rc "unreachable host" 1
if [ "$(wc -l <"$tmp/err")" -eq 1 ] &&
  grep -q "^poprun: cannot start instances on host 'nosuchhost.invalid': ssh: ." "$tmp/err"; then
  ok "unreachable host: one line, $(cat "$tmp/err")"
else
  bad "unreachable host message" "$(cat "$tmp/err")"
fi
run timeout 60 "$POPRUN" -v --host nosuchhost.invalid "$PROBE"
if [ "$rc" -eq 1 ] && grep -q "^ORTE was unable to reliably start one or more daemons" "$tmp/err" &&
  tail -n 1 "$tmp/err" | grep "^poprun: cannot start instances on host 'nosuchhost.invalid': " >/dev/null; then
  ok "unreachable host with -v: mpirun's banner, then the line"
else
  bad "unreachable host with -v: exit $rc" "$(cat "$tmp/err")"
fi

finish
