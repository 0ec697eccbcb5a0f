#!/usr/bin/env bash
# stall.sh CASE POPRUN FAULTS_STALL
#
# The stall inspector. Replica 3 of 4 (instance 1 of 2) enters a collective late, while the
# other replicas already wait in it.
#   warn      GCL_STALL_WARN_S=1, 3 s late: each waiting replica logs one warning naming
#             "not in this call yet: replica 3 (instance 1 on host H, pid P)"; the call then
#             completes and the job exits 0.
#   quiet     no GCL_STALL_WARN_S (default 60), 2 s late: no warning at all, exit 0.
#   timeout   GCL_TIMEOUT_S=2, 30 s late: each waiting replica fails with GCL_ERR_TIMEOUT,
#             "no progress for 2.0 s (GCL_TIMEOUT_S); not in this call yet: replica 3 (instance
#             1 ...)", or with GCL_ERR_ABORTED when another IPU of its instance timed out first;
#             poprun exits non-zero naming a failed instance; every process is gone well before
#             the late replica would have woken.
#   mpi       as warn, over GCL_TRANSPORT=mpi, with a barrier.
#   barrier   as warn, with an eager barrier on one core (taskset: a crowded host, where
#             replica 0 publishes only once every other replica's cell is there): every warning
#             names replica 3 as awaited, none replica 0, which only waits for it.
#   single    as warn, one instance of 4 replicas without poprun: "instance 0".
#   preempt   GCL_TIMEOUT_S=2, 30 s late, in gcl_preempt_agree: the replicas of instance 0 wait
#             in its exchange between the instances (the MPI bootstrap's allgather), which gives
#             up after GCL_TIMEOUT_S with GCL_ERR_TIMEOUT (it waited without end before), or
#             are aborted after their sibling; poprun exits non-zero long before replica 3 wakes.
#   poll_never, poll_returned, poll_killed: the others poll gcl_test (GCL_TIMEOUT_S=5) while
#             replica 3 never calls (30 s late), returns from its program without the call, or
#             has its instance killed (kill -9, 1 s after the others entered the call). Each
#             polling replica of instance 0 ends its loop within GCL_TIMEOUT_S + 1 s with
#             GCL_ERR_TIMEOUT naming replica 3, GCL_ERR_PEER_FAILED saying it returned, or
#             GCL_ERR_PEER_FAILED naming instance 1 as gone (or GCL_ERR_ABORTED after a sibling).
#   finalized after a first run of every replica, instance 1 calls gcl_finalize while instance 0
#             runs again and calls all_reduce (as instances that a Ctrl-C stops at different run
#             boundaries do): instance 0's replicas fail within 5 s with GCL_ERR_PEER_FAILED,
#             "replica 3 (instance 1 ...) has left the job (its instance called gcl_finalize)";
#             before, both sides waited GCL_TIMEOUT_S (30 s here, 300 by default).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 warn|quiet|timeout|preempt|mpi|single|barrier|poll_*|finalized POPRUN FAULTS_STALL" >&2; exit 2; }
case=$1 poprun=$2 prog=$3
faults_init "stall-$case"
out=$FT/out
status=0
t0=$(now_ms)
case $case in
  warn) marked env GCL_STALL_WARN_S=1 GCL_TIMEOUT_S=60 \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 3 >"$out" 2>&1 || status=$? ;;
  quiet) marked env -u GCL_STALL_WARN_S GCL_TIMEOUT_S=60 \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 2 >"$out" 2>&1 || status=$? ;;
  timeout) marked env GCL_STALL_WARN_S=1 GCL_TIMEOUT_S=2 \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 30 >"$out" 2>&1 || status=$? ;;
  preempt) marked env GCL_TIMEOUT_S=2 \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 30 preempt >"$out" 2>&1 ||
          status=$? ;;
  mpi) marked env GCL_STALL_WARN_S=1 GCL_TIMEOUT_S=60 GCL_TRANSPORT=mpi \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 3 barrier >"$out" 2>&1 ||
          status=$? ;;
  barrier) marked env GCL_STALL_WARN_S=1 GCL_TIMEOUT_S=60 taskset -c 0 \
          "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 3 barrier >"$out" 2>&1 ||
          status=$? ;;
  single) marked env GCL_STALL_WARN_S=1 GCL_TIMEOUT_S=60 "$prog" 3 3 >"$out" 2>&1 || status=$? ;;
  poll_never | poll_returned)
    late=30
    [ "$case" = poll_returned ] && late=return
    marked env GCL_TIMEOUT_S=5 GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init \
      "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 "$late" poll >"$out" 2>&1 ||
      status=$? ;;
  finalized)
    marked env GCL_TIMEOUT_S=30 \
      "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 finalize >"$out" 2>&1 ||
      status=$? ;;
  poll_killed)
    marked env GCL_TIMEOUT_S=5 GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init \
      "$poprun" --num-replicas 4 --num-instances 2 "$prog" 3 30 poll >"$out" 2>&1 &
    job=$!
    FAULTS_BG+=("$job")
    for _ in $(seq 600); do
      [ "$(grep -c 'GCL INFO init: instance [0-9]* of' "$out")" -eq 2 ] && break
      sleep 0.1
    done
    sleep 1
    victim=$(instance_pid 1 faults-stall)
    [ -n "$victim" ] || { cat "$out"; fail "no program process of instance 1"; }
    kill -9 "$victim"
    wait "$job" || status=$? ;;
  *) fail "unknown case $case" ;;
esac
elapsed=$(($(now_ms) - t0))
wait_no_marked 10 || fail "processes of the job are left 10 s after it ended"
cat "$out"

late_inst=1
[ "$case" = single ] && late_inst=0
who="replica 3 \\(instance $late_inst on host [^,]*, pid [0-9]+\\)"
warned() { grep -E "^(\[instance [0-9]\] )?[^ ]*:[0-9]+:[0-9]/$1 GCL WARN coll: .*stalled for [0-9.]+ s \(GCL_STALL_WARN_S\); not in this call yet: $who" "$out"; }

# ended_within WANT GROUP SECONDS: each replica of instance 0 ended its call with a line that
# matches WANT, whose group GROUP is its time in the call, at most SECONDS; or was aborted after
# its sibling. At least one ended itself.
ended_within() {
  local want=$1 group=$2 max=$3 r line s ended=0
  for r in 0 1; do
    line=$(grep -E "^\[instance 0\] faults-stall: replica $r: " "$out" || true)
    if grep -Eq "GCL_ERR_ABORTED after [0-9.]+ s: .*another IPU of this instance failed" <<<"$line"; then
      continue
    fi
    [[ $line =~ $want ]] || fail "replica $r did not end as expected: ${line:-no line}"
    s=${BASH_REMATCH[$group]}
    awk -v s="$s" -v m="$max" 'BEGIN { exit !(s <= m) }' ||
      fail "replica $r was $s s in its call, past $max s"
    ended=$((ended + 1))
  done
  [ "$ended" -ge 1 ] || fail "no replica of instance 0 ended its call itself"
}

case $case in
  warn | mpi | single | barrier)
    [ "$status" -eq 0 ] || fail "exit status $status: the late replica should have been waited for"
    for r in 0 1 2; do
      [ "$(warned "$r" | wc -l)" -eq 1 ] || fail "replica $r did not warn exactly once naming $who"
    done
    if [ "$case" = barrier ]; then
      warned '[0-2]' | grep -E "waiting for .*replica 0 \(" >/dev/null &&
        fail "a warning awaits replica 0"
      [ "$(warned '[0-2]' | grep -Ec "waiting for $who to enter the call$")" -eq 3 ] ||
        fail "not every warning awaits replica 3 alone"
    fi
    warned 3 >/dev/null && fail "the late replica itself warned"
    [ "$(grep -c 'faults-stall: replica [0-3]: GCL_OK after' "$out")" -eq 4 ] ||
      fail "not every replica completed the call"
    ;;
  quiet)
    [ "$status" -eq 0 ] || fail "exit status $status"
    grep -q 'GCL_STALL_WARN_S' "$out" && fail "a 2 s stall warned with the default GCL_STALL_WARN_S"
    ;;
  timeout)
    [ "$status" -ne 0 ] || fail "the job exited 0 although it timed out"
    grep -Eq '^poprun: instance [01] \(host [^)]*\) (exited with status [1-9]|was killed)' "$out" ||
      fail "poprun did not name a failed instance"
    # Each waiting replica times out naming the late one, unless another replica timed out
    # first: then it fails with that replica's failure (GCL_ERR_PEER_FAILED quoting its
    # timeout: "replica R (...) failed: ...", or, when the replica it saw fail was aborted after
    # a sibling, "replica R (...) failed after replica S (...) of its instance, which failed
    # first: ..."), or gcl_run aborts it when that replica is of its own instance
    # (GCL_ERR_ABORTED), by design. At least one replica timed out itself.
    stalled="no progress for [0-9.]+ s \(GCL_TIMEOUT_S\); not in this call yet: $who"
    timed_out() { grep -Eq "faults-stall: replica $1: GCL_ERR_TIMEOUT after [0-9.]+ s: .*$stalled" "$out"; }
    for r in 0 1 2; do
      timed_out "$r" ||
        grep -Eq "faults-stall: replica $r: GCL_ERR_PEER_FAILED after [0-9.]+ s: .*failed( first)?: .*$stalled" "$out" ||
        grep -q "faults-stall: replica $r: GCL_ERR_ABORTED after [0-9.]* s: .*another IPU of this instance failed" "$out" ||
        fail "replica $r neither failed with GCL_ERR_TIMEOUT naming $who (itself or quoted) nor was aborted"
    done
    timed_out 0 || timed_out 1 || timed_out 2 || fail "no replica timed out naming $who"
    [ "$elapsed" -lt 45000 ] || fail "the job took $elapsed ms: the timeout did not end it"
    ;;
  preempt)
    [ "$status" -ne 0 ] || fail "the job exited 0 although instance 1 never came"
    bound="GCL_ERR_TIMEOUT after [0-9.]+ s: .*another instance did not come to the exchange of the stop request within GCL_TIMEOUT_S"
    grep -Eq "^\[instance 0\] faults-stall: replica [01]: $bound" "$out" ||
      fail "no replica of instance 0 gave up the exchange with GCL_ERR_TIMEOUT"
    for r in 0 1; do
      grep -Eq "^\[instance 0\] faults-stall: replica $r: ($bound|GCL_ERR_ABORTED)" "$out" ||
        fail "replica $r neither timed out in the exchange nor was aborted"
    done
    [ "$elapsed" -lt 20000 ] || fail "the job took $elapsed ms: the exchange's bound did not end it"
    ;;
  finalized)
    # Instance 1 called gcl_finalize after the first run; instance 0's replicas, in their second
    # run's all_reduce, learn it at once: not after GCL_TIMEOUT_S (30 s), which is how long they
    # waited before (instance 1's final barrier waited for them as long).
    [ "$status" -ne 0 ] || fail "the job exited 0, although instance 1 never ran again"
    ended_within "GCL_ERR_PEER_FAILED after ([0-9.]+) s: .*replica [23] \(instance 1 on host [^,]*, pid [0-9]+\) has left the job \(its instance called gcl_finalize\)" 1 5.0
    [ "$elapsed" -lt 20000 ] || fail "the job took $elapsed ms"
    ;;
  poll_*)
    [ "$status" -ne 0 ] || fail "the job exited 0, although replica 3 never made the call"
    case $case in
      poll_never) want="GCL_ERR_(TIMEOUT|PEER_FAILED) after ([0-9.]+) s: .*no progress for [0-9.]+ s \(GCL_TIMEOUT_S\); not in this call yet: $who" ;;
      poll_returned) want="GCL_ERR_(PEER_FAILED) after ([0-9.]+) s: .*$who returned from its program without making this call" ;;
      poll_killed) want="GCL_ERR_(PEER_FAILED) after ([0-9.]+) s: .*replica [23] \(instance 1 on host [^,]*, pid [0-9]+\)( is gone| failed)" ;;
    esac
    # Within GCL_TIMEOUT_S + 1 s of entering the call (poll_killed: of the kill, 1 s in).
    ended_within "$want" 2 6.0
    ;;
esac
pass "$case: as expected in $elapsed ms"
