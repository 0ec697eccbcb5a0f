#!/usr/bin/env bash
# poprun across two hosts made of network namespaces (scripts/netns-cluster): the instances
# of h1 and h2 run in different network namespaces and talk over TCP; a failure on h2 is
# reported with its host; SIGTERM to the cluster script ends the job; nothing is left behind.
# Needs root: otherwise netns-cluster's skip (exit 77) is passed on.
#
#   netns.sh NETNS_CLUSTER POPRUN PROBE
set -euo pipefail
CLUSTER=$1
POPRUN=$2
PROBE=$3
source "$(dirname "$0")/lib.sh"

# Not root, or no namespaces here: skip (77), as netns-cluster says.
set +e
"$CLUSTER" 1 -- true 2>"$tmp/skip"
rc=$?
set -e
if [ "$rc" -eq 77 ]; then
  cat "$tmp/skip"
  exit 77
fi
expect_rc "netns-cluster 1 -- true" 0

# Every cluster this test starts names its run on stderr ("..., run ID"): at the end, none of
# their namespaces or files may be left. (Other jobs' clusters come and go meanwhile: counting
# all namespaces would blame them on this test.)
run_ids=()
note_run() {
  local id
  id=$(sed -n 's/^netns-cluster: hosts .*, run \([0-9a-z]*\)$/\1/p' "$1" | awk 'NR <= 1')
  [ -z "$id" ] || run_ids+=("$id")
}

# --- 16 replicas, 4 instances on h1,h2 --------------------------------------------------------
run timeout 120 "$CLUSTER" 2 -- "$POPRUN" -H h1,h2 --num-instances 4 --num-replicas 16 "$PROBE" \
  --netns
note_run "$tmp/err"
expect_rc "poprun -H h1,h2" 0
sed -E 's/ netns=.*//' "$tmp/out" | sort >"$tmp/got"
for i in 0 1 2 3; do
  printf '[instance %d] instance=%d local=%d replicas=16 local_replicas=4 offset=%d ipr=1 instances=4 uniform=1 ilds=1 topology=POD16 offline=0 phantom=- rank=%d size=4 ranksum=6\n' \
    $i $i $((i % 2)) $((i * 4)) $i
done >"$tmp/want"
expect_same "POPDIST_* on two hosts" "$tmp/want" "$tmp/got"
ns() { sed -n "s/^\[instance $1\] .* netns=\(.*\)\$/\1/p" "$tmp/out"; }
mine=$(readlink /proc/self/ns/net)
if [ -n "$(ns 0)" ] && [ "$(ns 0)" = "$(ns 1)" ] && [ "$(ns 2)" = "$(ns 3)" ] &&
  [ "$(ns 0)" != "$(ns 2)" ] && [ "$(ns 0)" != "$mine" ] && [ "$(ns 2)" != "$mine" ]; then
  ok "instances 0-1 share h1's namespace, 2-3 h2's"
else
  bad "namespaces" "$(cat "$tmp/out")"
fi

# The data went over the veths: h2's port carried traffic.
run timeout 120 "$CLUSTER" 2 -- bash -c '"$0" -H h1,h2 --num-instances 2 --num-replicas 2 "$1" &&
  ip -n "$NETNS_CLUSTER_ID-h2" -s -j link show eth0' "$POPRUN" "$PROBE"
note_run "$tmp/err"
rx=$(grep -o '"rx":{"bytes":[0-9]*' "$tmp/out" | grep -o '[0-9]*$' || echo 0)
if [ "$rc" -eq 0 ] && [ "${rx:-0}" -gt 1000 ]; then
  ok "h2 received $rx bytes over its veth"
else
  bad "traffic over the veth" "rc $rc rx ${rx:-?}" "$(cat "$tmp/out" "$tmp/err")"
fi

# --- a failure on h2 ---------------------------------------------------------------------------
run timeout 120 "$CLUSTER" 2 -- "$POPRUN" -H h1,h2 --num-instances 4 --num-replicas 4 "$PROBE" \
  --on 3 --exit 4 --others-sleep 60
note_run "$tmp/err"
expect_rc "instance 3 fails on h2" 4
if grep -q '^poprun: instance 3 (host h2) exited with status 4$' "$tmp/err"; then
  ok "failure names instance 3 and host h2"
else
  bad "failure message" "$(cat "$tmp/err")"
fi

# --- SIGTERM to the cluster script while the job runs: all ends, all is torn down ------------
tag="netns-test-$$-$RANDOM"
setsid "$CLUSTER" 2 -- "$POPRUN" -H h1,h2 --num-instances 2 --num-replicas 2 "$PROBE" \
  --sleep 120 --stderr "$tag" >"$tmp/out" 2>"$tmp/err" &
pid=$!
for ((i = 0; i < 300; i++)); do
  [ "$(grep -c '^\[instance' "$tmp/out" || true)" -ge 2 ] && break
  sleep 0.1
done
kill -TERM "$pid"
set +e
wait "$pid"
rc=$?
set -e
expect_rc "SIGTERM to netns-cluster" 143
note_run "$tmp/err"
# Processes may take a moment to be reaped on a loaded machine: up to 20 s.
for _ in $(seq 200); do
  left=$(ps -eo args= | grep -c "$tag" | tr -d ' ' || true)
  [ "$left" -le 1 ] && break
  sleep 0.1
done
if [ "$left" -le 1 ]; then ok "no process left after SIGTERM"; else
  bad "processes left" "$(ps -eo pid,args | grep "$tag")"; fi

# --- nothing left behind -----------------------------------------------------------------------
left=""
for id in "${run_ids[@]}"; do
  left+=$(ip netns list | grep "^$id-" || true)
  left+=$(find /tmp -maxdepth 1 -name "netns-cluster.$id.*" 2>/dev/null || true)
done
if [ "${#run_ids[@]}" -eq 4 ] && [ -z "$left" ]; then
  ok "no namespace or file of the ${#run_ids[@]} clusters left behind"
else
  bad "left behind" "runs: ${run_ids[*]}" "$left"
fi

# Not root: a clear skip. The unprivileged user runs a copy of the script in a directory it can
# reach: the checkout may lie under a directory only root may enter (a clone in root's home, or
# under mktemp -d), where it could not even start the script (exit 126).
if command -v setpriv >/dev/null 2>&1; then
  pub=$(mktemp -d /tmp/netns-skip.XXXXXX)
  chmod 755 "$pub"
  install -m 755 "$CLUSTER" "$pub/netns-cluster"
  run bash -c 'cd / && exec setpriv --reuid=65534 --regid=65534 --clear-groups "$1" 1 -- true' \
    sh "$pub/netns-cluster"
  rm -rf "$pub"
  if [ "$rc" -eq 77 ] && grep -q '^netns-cluster: skip: needs root' "$tmp/err"; then
    ok "skip (77) when not root"
  else
    bad "skip when not root" "exit $rc" "$(cat "$tmp/err")"
  fi
fi

finish
