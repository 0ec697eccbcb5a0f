#!/usr/bin/env bash
# attack.sh POPRUN TRAIN ATTACKER [FORGER]   (inside scripts/netns-cluster 3)
#
# Security across hosts: train runs on h1 and h2 (16 replicas, 2 instances a host,
# GCL_TIMEOUT_S=3, so that a step held up for 3 s fails the job), and a process on h3, a third
# host of the same network that belongs to no job, attacks the ports instance 0 listens on:
#   - every TCP port of its program (OpenMPI's libfabric endpoint, which carries libgcl's MPI
#     bootstrap: without OMPI_MCA_btl, which netns-cluster sets and these runs unset, the
#     bootstrap leaves OpenMPI's tcp BTL out, gcl/src/job/bootstrap_route.c; libgcl's
#     tcp transport, the default, listens only until its instances are connected, and
#     libgcl's libfabric endpoint is there only with GCL_TRANSPORT=ofi, which
#     faults_forge_ofi attacks): forged headers (shaped like libgcl's, with another token),
#     garbage, truncated headers held open for 4 s, 1000 connections held at once, then
#     connect-close cycles; and FORGER (chaos-forge-fabric), forged libgcl headers sent
#     through libfabric itself under the tags of calls the job is about to make;
#   - the control-plane UDP port of instance 0 and of instance 2: datagrams with its magic and
#     another token, truncated ones, a flood, and datagrams recorded by a tap on the network
#     (chaos-attacker capture, in the switch namespace) sent again: those of an earlier run of
#     the same job (another token) and those of this run (the token right), from h3 and with
#     their sender's address;
#   - TCP bytes recorded from the earlier run sent again on new connections.
# The earlier run is the same training, undisturbed: the reference. Asserts:
#   - the attacked run exits 0 with final weights bitwise identical (md5) to the reference;
#   - the instances' control planes report refused datagrams of every kind: without the token,
#     malformed or truncated, from an address other than the instance named, replayed;
#   - every attack reached its port (the attacker's lines);
#   - nothing of either run is left (processes, /dev/shm, OpenMPI session directories).
# Then a control: the same truncated header held on OpenMPI's tcp BTL port of a run with the
# tcp BTL (OMPI_MCA_btl=tcp,self,vader) and OMPI_MCA_btl_tcp_progress_thread=0 (OpenMPI's
# default) freezes every MPI call of the
# instance, and with it gcl_preempt_agree in each step: that run must fail (GCL_TIMEOUT_S).
# So the test can fail, and libgcl's bootstrap setting is what it shows.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../faults/lib.sh"

[ $# -ge 3 ] || { echo "usage: $0 POPRUN TRAIN ATTACKER [FORGER]" >&2; exit 2; }
poprun=$1 train=$2 attacker=$3 forger=${4:-}
[ -n "${NETNS_CLUSTER_ID:-}" ] || { echo "$0: run inside scripts/netns-cluster 3" >&2; exit 2; }
faults_init chaos-attack
command -v ss >/dev/null || skip "ss (iproute2) is not installed"
id=$NETNS_CLUSTER_ID
in_ns() { local h=$1; shift; ip netns exec "$id-$h" "$@"; }

steps=${CHAOS_ATTACK_STEPS:-700}
targs=(--epochs 6 --max-steps "$steps" --seed 5 --checkpoint-every 50 --log-every 10
       --progress plain)
xargs=() # more arguments of the next job's train
job() { # NAME EXTRA_ENV...: the training, in the background (its pid in $last), output in
  local name=$1 # $FT/NAME.out
  shift
  env -u OMPI_MCA_btl GCL_FAULTS_MARK="$MARK" POPRUN_JOB_NAME="$JOBNAME" TMPDIR="$FT/tmp" \
    GCL_TIMEOUT_S=3 GCL_LOG_TIME=1 "$@" "$poprun" -H h1,h2 \
    --num-replicas 16 --num-instances 4 "$train" "${targs[@]}" "${xargs[@]}" --checkpoint "$FT/$name.ckpt" \
    --save-weights "$FT/$name.w" >"$FT/$name.out" 2>&1 &
  last=$!
  FAULTS_BG+=("$last")
}
step_of() { grep -o 'step [0-9]*/' "$FT/$1.out" | tail -1 | tr -dc 0-9; }
wait_step() { # NAME STEP PID: waits (60 s at most) until the run NAME printed step STEP
  for _ in $(seq 600); do
    [ "$(step_of "$1")" -ge "$2" ] 2>/dev/null && return 0
    kill -0 "$3" 2>/dev/null || { cat "$FT/$1.out"; fail "$1 ended before step $2"; }
    sleep 0.1
  done
  fail "$1 did not reach step $2 in 60 s"
}
ports_of() { # HOST PID PROTO: the ports the process PID listens on, on HOST
  in_ns "$1" ss -"$3"lnpH | grep "pid=$2," | awk '{print $4}' | sed 's/.*://' | sort -un
}

# ---- 1. The earlier run (the reference), recorded by a tap at h1's port of the switch ----------
job reference
ref=$last
wait_step reference 10 "$ref"
ip netns exec "$id-sw" "$attacker" capture p1 3 "$FT/earlier.cap"
wait "$ref" || { cat "$FT/reference.out"; fail "the reference run failed"; }
want=$(md5sum <"$FT/reference.w" | cut -d' ' -f1)

# ---- 2. The attacked run -----------------------------------------------------------------------------
# It holds 10 steps before its end until the attack is over (every attack has ended): on a
# loaded machine the attack can take longer than the run's 700 steps.
xargs=(--fault "hold-after-step:$((steps - 10))")
job attacked GCL_LOG_LEVEL=warn TRAIN_HOLD_FILE="$FT/attack.over"
xargs=()
run=$last
wait_step attacked 10 "$run"
pid0=$(instance_pid 0 train)
pid2=$(instance_pid 2 train)
[ -n "$pid0" ] && [ -n "$pid2" ] || fail "no program process of instance 0 or 2"
tcp=$(ports_of h1 "$pid0" t)
udp0=$(ports_of h1 "$pid0" u)
udp2=$(ports_of h2 "$pid2" u)
[ -n "$tcp" ] && [ -n "$udp0" ] && [ -n "$udp2" ] || fail "instance 0 listens on no port"
echo "instance 0 (pid $pid0) listens on TCP $(echo $tcp) and UDP $udp0; instance 2 on UDP $udp2"
ip netns exec "$id-sw" "$attacker" capture p1 2 "$FT/current.cap"
att=()
forges=()
for p in $tcp; do
  in_ns h3 "$attacker" tcp 10.77.0.1 "$p" 4 >"$FT/att.tcp.$p" 2>&1 &
  att+=($!)
  in_ns h3 "$attacker" tcp-replay 10.77.0.1 "$p" "$FT/earlier.cap" >"$FT/att.replay.$p" 2>&1 &
  att+=($!)
  if [ -n "$forger" ] && [ "$p" != 1024 ]; then # a libfabric port: libgcl's, or OpenMPI's
    in_ns h3 "$forger" 10.77.0.1 "$p" 300 300 >"$FT/forge.$p" 2>&1 &
    forges+=($!)
  fi
done
# One after the other: a flood fills the socket's buffer, and replays sent meanwhile would be
# dropped by the kernel before the control plane could refuse them.
{
  in_ns h3 "$attacker" udp 10.77.0.1 "$udp0" "$FT/current.cap" >"$FT/att.udp0.current" 2>&1 &&
    in_ns h3 "$attacker" udp 10.77.0.1 "$udp0" "$FT/earlier.cap" >"$FT/att.udp0.earlier" 2>&1
} &
att+=($!)
in_ns h3 "$attacker" udp 10.77.0.2 "$udp2" "$FT/current.cap" >"$FT/att.udp2" 2>&1 &
att+=($!)
bad=0
for a in "${att[@]}"; do wait "$a" || bad=1; done
forged=0
for a in "${forges[@]}"; do wait "$a" && forged=1; done
cat "$FT"/att.* "$FT"/forge.* 2>/dev/null
[ -z "$forger" ] || [ "$forged" -eq 1 ] || fail "the forger reached no libfabric endpoint"
kill -0 "$run" 2>/dev/null || { cat "$FT/attacked.out"; fail "the run ended before the attack was over: it proves nothing"; }
touch "$FT/attack.over" # the run's hold ends
[ "$bad" -eq 0 ] || { cat "$FT/attacked.out"; fail "an attack reached nothing (see its line above)"; }
status=0
wait "$run" || status=$?
[ "$status" -eq 0 ] || { tail -30 "$FT/attacked.out"; fail "the attacked run exited $status"; }
got=$(md5sum <"$FT/attacked.w" | cut -d' ' -f1)
[ "$got" = "$want" ] || fail "the attacked run's weights differ: md5 $got, the reference's $want"
grep 'refused' "$FT/attacked.out" | awk 'NR <= 8'
sum_of() { # KIND: datagrams the instances refused for KIND, over their reports
  grep "control plane: refused" "$FT/attacked.out" |
    grep -o "[0-9]* $1" | awk '{s += $1} END {print s + 0}'
}
for kind in "without its token" "malformed or truncated" "from an address other" "replayed"; do
  [ "$(sum_of "$kind")" -gt 0 ] || fail "no instance reported a datagram refused as '$kind'"
done
echo "the attacked run: exit 0, md5 $got as the reference's; refused $(sum_of 'without its token') without the token, $(sum_of 'malformed or truncated') malformed, $(sum_of 'from an address other') from another address, $(sum_of replayed) replayed"
grep -o 'max [0-9.]* [ms]*' "$FT/attacked.out" | awk 'NR <= 1' | sed 's/^/longest step of the attacked run: /'

# ---- 3. The control: OpenMPI's tcp BTL as it comes, one truncated handshake on its port ----------
wait_no_marked 30 || fail "processes of the attacked run are left: $(marked_pids)"
job control OMPI_MCA_btl=tcp,self,vader OMPI_MCA_btl_tcp_progress_thread=0
ctl=$last
wait_step control 10 "$ctl"
pidc=$(instance_pid 0 train)
# (its port is the one on every interface: ss's 4th column, 0.0.0.0:PORT)
btl=$(in_ns h1 ss -tlnpH | grep "pid=$pidc," | awk '$4 ~ /^0\.0\.0\.0:[0-9]+$/ && !n++ {sub(/.*:/, "", $4); print $4}')
[ -n "$btl" ] || fail "the control run's instance 0 (pid ${pidc:-none}) has no tcp BTL port: $(in_ns h1 ss -tlnpH | grep "pid=${pidc:-none}," | tr '\n' ';')"
in_ns h3 "$attacker" tcp 10.77.0.1 "$btl" 8 >"$FT/att.control" 2>&1 || true
cst=0
wait "$ctl" || cst=$?
[ "$cst" -ne 0 ] || fail "control: with OpenMPI's default the held handshake did not stop the job: the test would not see the BTL freeze"
grep -q 'GCL_TIMEOUT_S' "$FT/control.out" || { tail -20 "$FT/control.out"; fail "control: the run failed, but not by GCL_TIMEOUT_S"; }
echo "control: with OMPI_MCA_btl_tcp_progress_thread=0 the held handshake on port $btl failed the run (exit $cst, GCL_TIMEOUT_S)"

wait_no_marked 30 || fail "processes of the runs are left: $(marked_pids)"
left=$(leaks)
[ -z "$left" ] || fail "left behind: $left"
pass "forged, truncated and replayed headers and floods from a third host were refused; the job went on to the same bits"
