#!/usr/bin/env bash
# shm_live.sh POPRUN GCL_BENCH INSTANCES
#
# The host box of a running job, seen from outside (as another job or user would). A long
# all_reduce runs with INSTANCES instances on this host; once every instance has started:
#   - every program process maps exactly one host box, /dev/shm/gcl-<16 hex digits>-h<host>,
#     and the same one as the others;
#   - the mapping is "(deleted)": the name was unlinked as soon as every local instance had
#     mapped it, so no other process can open it by name (asserted: it is not in /dev/shm);
#   - the segment (looked at through /proc/PID/map_files, root only) is mode 0600 and owned by
#     the job's user;
# then poprun is interrupted (SIGTERM) and nothing of the job may be left.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 POPRUN GCL_BENCH INSTANCES" >&2; exit 2; }
poprun=$1 bench=$2 ninst=$3
faults_init "shm-live-$ninst"
out=$FT/out
# Not through the function `marked`: $! must be poprun itself (env execs it), to signal it.
env GCL_FAULTS_MARK="$MARK" POPRUN_JOB_NAME="$JOBNAME" TMPDIR="$FT/tmp" GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init GCL_TIMEOUT_S=60 \
  "$poprun" --num-replicas $((2 * ninst)) --num-instances "$ninst" \
  "$bench" all_reduce -b 4M -e 4M -n 100000 -w 0 >"$out" 2>&1 &
job=$!
FAULTS_BG+=("$job")
started() { [ "$(grep -c 'GCL INFO init: instance [0-9]* of' "$out")" -eq "$ninst" ]; }
for _ in $(seq 600); do
  started && break
  kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended early"; }
  sleep 0.1
done
started || { cat "$out"; fail "the instances did not all start in 60 s"; }

names=()
for ((i = 0; i < ninst; i++)); do
  pid=$(instance_pid "$i" gcl-bench)
  [ -n "$pid" ] || fail "no program process of instance $i"
  maps=$(grep -E ' /dev/shm/gcl-' "/proc/$pid/maps" || true)
  [ "$(wc -l <<<"$maps")" -eq 1 ] && [ -n "$maps" ] ||
    fail "instance $i (pid $pid) maps $(grep -c . <<<"$maps") host boxes, not 1: $maps"
  seg=$(awk '{print $6}' <<<"$maps")
  [[ $seg =~ ^/dev/shm/gcl-${JOBNAME}-[0-9a-f]{16}-[0-9a-f]{16}-h[0-9]+$ ]] ||
    fail "unexpected segment name '$seg' (not gcl-JOBID-NONCE-hN, JOBID $JOBNAME-...)"
  grep -q '(deleted)$' <<<"$maps" ||
    fail "instance $i's host box $seg is still linked in /dev/shm after start-up"
  [ ! -e "$seg" ] || fail "$seg can still be opened by name"
  names+=("$seg")
  range=$(awk '{print $1}' <<<"$maps")
  if [ -e "/proc/$pid/map_files/$range" ]; then
    read -r mode owner < <(stat -L -c '%a %u' "/proc/$pid/map_files/$range")
    [ "$mode" = 600 ] || fail "the host box of instance $i has mode $mode, not 600"
    [ "$owner" = "$(id -u)" ] || fail "the host box of instance $i is owned by uid $owner"
    echo "instance $i (pid $pid): $seg (deleted), mode $mode, owner $owner"
  else
    echo "instance $i (pid $pid): $seg (deleted); mode not checked (no map_files access)"
  fi
done
for n in "${names[@]}"; do
  [ "$n" = "${names[0]}" ] || fail "instances map different host boxes: ${names[*]}"
done

kill -TERM "$job"
status=0
wait "$job" || status=$?
wait_no_marked 10 || { ps -o pid,ppid,stat,etime,comm,args -p "$(marked_pids | paste -sd,)" || true; cat "$out"; fail "processes of the job are left 10 s after SIGTERM"; }
grep -q '^poprun: interrupted by SIGTERM' "$out" || { cat "$out"; fail "poprun did not report the SIGTERM"; }
[ "$status" -eq 143 ] || fail "poprun exited $status after SIGTERM, not 143"
found=$(leaks)
[ -z "$found" ] || fail "left behind: $found"
pass "$ninst instances share ${names[0]}, unlinked and mode 0600 while they run; nothing left after SIGTERM"
