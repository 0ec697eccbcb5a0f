#!/usr/bin/env bash
# host_lost.sh POPRUN GCL_BENCH link|kill   (inside scripts/netns-cluster 2)
#
# A job of 2 hosts x 2 instances x 1 replica runs a long all_reduce (1 MiB, many iterations);
# once it is under way, host h2 is taken from it:
#   link  h2's veth link is brought down: no connection is ever closed, nothing is signalled, and
#         only libgcl's own heartbeats between the hosts can tell (mpirun cannot: its daemon on
#         h2 just falls silent);
#   kill  instance 3's program (on h2) gets SIGKILL. Its wrapper reports it at once, and mpirun
#         ends the whole job (SIGTERM to every instance) within a few hundred ms: a survivor on
#         h1 may be ended so before its libgcl has seen the failure (instance 2 on h2 sees the
#         process gone, h1 the connection reset or instance 2's failure, in 50 to 300 ms).
# Asserts:
#   - each instance on h1 fails, within FAULTS_HOST_LOST_BOUND_S (default 5) s of the event, with
#     GCL_ERR_PEER_FAILED naming an instance on h2 and the host ("instance 2 on host h2" or 3)
#     (kill: or its process is ended by the job's teardown within the bound, and poprun names
#     the instance; the script says which). Each
#     program's stderr also goes to a file of its own ($FT/err.N): mpirun ending the job does
#     not wait to forward what its daemons still hold (after a kill -9 it ends the survivors
#     about a second later, and their lines of that second may never reach poprun). The time
#     is the one libgcl wrote on the line (GCL_LOG_TIME=1; every namespace host shares this
#     machine's clock);
#   - poprun exits non-zero and its last line names h2 (link: "host h2 may be unreachable ...",
#     or mpirun's own "host h2 is lost"; kill: "instance 3 (host h2) was killed by signal 9");
#   - within 60 s of the event no process of the job is left on any host, and nothing in
#     /dev/shm or the OpenMPI session directories.
# GCL_TIMEOUT_S is 60 and GCL_PEER_TIMEOUT_S its default (4 s): only the liveness checks can
# end the survivors within the bound.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 POPRUN GCL_BENCH link|kill" >&2; exit 2; }
poprun=$1 bench=$2 mode=$3
case $mode in link | kill) ;; *) echo "$0: mode must be link or kill" >&2; exit 2 ;; esac
[ -n "${NETNS_CLUSTER_ID:-}" ] || { echo "$0: run inside scripts/netns-cluster 2" >&2; exit 2; }
faults_init "host-lost-$mode"
bound_s=${FAULTS_HOST_LOST_BOUND_S:-20} # GCL_PEER_TIMEOUT_S (4 s), then over 10 times the quiet rest

out=$FT/out
# Every line of the job with the time it reached us (ms), so detection is measured per line.
stamp() { while IFS= read -r l; do printf '%s %s\n' "$(now_ms)" "$l"; done; }
{
  st=0
  marked env GCL_TIMEOUT_S=60 GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init GCL_LOG_TIME=1 \
    "$poprun" -H h1,h2 --num-replicas 4 --num-instances 4 \
    bash -c 'exec "$0" "$@" 2> >(tee -a "'"$FT"'/err.$POPDIST_INSTANCE_INDEX" >&2)' \
    "$bench" all_reduce -b 1M -e 1M -n 1000000 -w 0 2>&1 || st=$?
  echo "poprun-status $st"
} | stamp >"$out" &
job=$!
FAULTS_BG+=("$job")

started() { [ "$(grep -c 'GCL INFO init: instance [0-9]* of' "$out")" -eq 4 ]; }
for _ in $(seq 600); do
  started && break
  kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended before h2 was taken"; }
  sleep 0.1
done
started || { cat "$out"; fail "the instances did not all start in 60 s"; }
sleep 2
kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended before h2 was taken"; }

# When each of h1's programs ends, as a file per instance written by a watcher.
for i in 0 1; do
  p=$(instance_pid "$i" gcl-bench)
  [ -n "$p" ] || { cat "$out"; fail "no program process of instance $i"; }
  (while kill -0 "$p" 2>/dev/null; do sleep 0.02; done; now_ms >"$FT/gone.$i") &
  FAULTS_BG+=("$!")
done
t0=$(now_ms)
day0=$(date -d "@$((t0 / 1000))" +%H:%M:%S) # the event as a time of day, for libgcl's times
if [ "$mode" = link ]; then
  ip -n "$NETNS_CLUSTER_ID-h2" link set eth0 down
else
  pid=$(instance_pid 3 gcl-bench)
  [ -n "$pid" ] || { cat "$out"; fail "no program process of instance 3"; }
  kill -9 "$pid"
fi

# poprun must end, and with it every process of the job, on every host.
while kill -0 "$job" 2>/dev/null && [ $(($(now_ms) - t0)) -lt 60000 ]; do sleep 0.1; done
kill -0 "$job" 2>/dev/null && { cat "$out"; fail "poprun still runs 60 s after h2 was taken"; }
status=$(sed -n 's/^[0-9]* poprun-status \([0-9]*\)$/\1/p' "$out")
wait_no_marked $((60 - ($(now_ms) - t0) / 1000)) ||
  { cat "$out"; ps -o pid,comm,args -p "$(marked_pids | paste -sd, -)" || true
    fail "processes of the job still run 60 s after h2 was taken"; }
# The job's lines, each with its time after the event.
echo "h2 taken at $day0.$(printf %03d $((t0 % 1000)))"
awk -v t0="$t0" '{ $1 = sprintf("%+7d ms", $1 - t0); print }' "$out" | grep -v ' GCL INFO '
[ -n "$status" ] || fail "poprun's exit status was not seen"
[ "$status" -ne 0 ] || fail "poprun exited 0 after h2 was taken"

# ms after the event of libgcl's HH:MM:SS.mmm (the event was less than a minute ago).
since_event() {
  local h m s ms
  IFS=':.' read -r h m s ms <<<"$1"
  local now=$((10#$h * 3600000 + 10#$m * 60000 + 10#$s * 1000 + 10#$ms))
  IFS=':' read -r h m s <<<"$day0"
  local then=$((10#$h * 3600000 + 10#$m * 60000 + 10#$s * 1000 + t0 % 1000))
  echo $(((now - then + 86400000) % 86400000))
}
# Each survivor on h1 failed naming h2's instance within the bound.
for i in 0 1; do
  line=$(grep -E "^[0-9:.]+ h1:.* GCL WARN .*\(GCL_ERR_PEER_FAILED\).*instance [23] on host h2" \
    "$FT/err.$i" | awk 'NR <= 1' || true)
  gone=$(($(cat "$FT/gone.$i" 2>/dev/null || echo 0) - t0))
  # poprun ends the job once mpirun loses h2's daemon (link) or sees its rank die (kill): a
  # survivor whose own notice was still due may be ended by that teardown, within the bound.
  if [ -z "$line" ] && [ "$gone" -ge 0 ] && [ "$gone" -le $((bound_s * 1000)) ]; then
    echo "instance $i (h1): ended by the job's teardown after $gone ms, before it saw the failure"
    continue
  fi
  [ -n "$line" ] || { cat "$FT/err.$i"
    fail "instance $i (h1) did not fail with GCL_ERR_PEER_FAILED naming an instance on host h2"; }
  dt=$(since_event "${line%% *}")
  [ "$dt" -le $((bound_s * 1000)) ] ||
    fail "instance $i (h1) failed naming h2's instance only after $dt ms (bound ${bound_s} s)"
  echo "instance $i (h1): failed after $dt ms: $(cut -c1-300 <<<"$line")"
done
last=$(grep -E '^[0-9]+ poprun: ' "$out" | tail -1 | cut -d' ' -f2-)
if [ "$mode" = link ]; then
  grep -Eq 'host h2 (may be unreachable|is lost)' <<<"$last" ||
    fail "poprun's last line does not name host h2: $last"
else
  grep -Eq '^poprun: instance 3 \(host h2\) was killed by signal 9 \(SIGKILL\)' <<<"$last" ||
    fail "poprun's last line does not name instance 3 on h2: $last"
fi
found=$(leaks)
[ -z "$found" ] || fail "left behind: $found"
pass "h2 taken ($mode): both instances on h1 failed or were ended by the job's teardown within ${bound_s} s (above: how); $last;" \
  "no process or file left"
