#!/usr/bin/env bash
# Graphcore's published poprun command lines, run as they are with the program swapped for
# allreduce-check: each is accepted, its dry run prints the plan (and the mpirun command), and a
# real run passes on every instance.
#
#   published_forms.sh local POPRUN CHECK      on this host
#   published_forms.sh netns POPRUN CHECK      on hosts h1..h4 (run inside
#                                              scripts/netns-cluster 4 -- ...)
set -euo pipefail
MODE=$1
POPRUN=$2
CHECK=$3
tmp=$(mktemp -d "${TMPDIR:-/tmp}/published-forms.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok: $1"; }
bad() { failed=$((failed + 1)); echo "FAIL: $1"; shift; printf '  %s\n' "$@"; }
export GCL_TIMEOUT_S=60
SIZES=(--sizes 0,4,1K --types f32)

# form NAME INSTANCES PLAN_LINE NOTICES POPRUN-ARGS... -- : the dry run prints PLAN_LINE and the
# NOTICES (lines of "poprun: --X has no effect ..."), nothing else on stderr; the real run exits
# 0 with INSTANCES lines "PASSED" (in any tagging).
form() {
  local name=$1 instances=$2 plan=$3 notices=$4
  shift 4
  local rc=0
  "$POPRUN" --dry-run "$@" "$CHECK" "${SIZES[@]}" >"$tmp/dry.out" 2>"$tmp/dry.err" || rc=$?
  printf '%s' "$notices" >"$tmp/want.err"
  if [ "$rc" -eq 0 ] && grep -qF "$plan" "$tmp/dry.out" && grep -q '^mpirun command:$' "$tmp/dry.out" &&
    diff -q "$tmp/want.err" "$tmp/dry.err" >/dev/null; then
    ok "$name: dry run prints the plan"
  else
    bad "$name: dry run (exit $rc)" "$(cat "$tmp/dry.out" "$tmp/dry.err")"
  fi
  rc=0
  timeout 240 "$POPRUN" "$@" "$CHECK" "${SIZES[@]}" >"$tmp/run.out" 2>"$tmp/run.err" || rc=$?
  local passes
  passes=$(grep -c 'allreduce-check: instance [0-9]* of [0-9]*, .*: PASSED' "$tmp/run.out" || true)
  if [ "$rc" -eq 0 ] && [ "$passes" -eq "$instances" ]; then
    ok "$name: a real run passes on all $instances instances"
  else
    bad "$name: real run (exit $rc, $passes PASSED)" "$(tail -n 20 "$tmp/run.out" "$tmp/run.err")"
  fi
}

vipu() { # the notices of the V-IPU options given, in table order
  for o in "$@"; do printf 'poprun: --%s has no effect on simulated IPUs\n' "$o"; done
}

if [ "$MODE" = local ]; then
  # The MLPerf ResNet form: booleans with a value, mpirun's own flags, -x of an unset variable.
  form "--numa-aware 1 with --mpi-*-args" 8 \
    "job: 16 replicas x 1 IPU = 16 IPUs; 8 instances on 1 host" "" \
    --mpi-global-args="--allow-run-as-root --tag-output" --mpi-local-args="-x TF_POPLAR_FLAGS" \
    --numa-aware 1 --ipus-per-replica 1 --num-instances 8 --num-replicas 16
  # The flags new users tried one by one.
  form "--vv --allow-run-as-root --offline-mode=on --numa-aware=yes ..." 2 \
    "job: 4 replicas x 1 IPU = 4 IPUs; 2 instances on 1 host" \
    "$(vipu vipu-cluster remove-partition)"$'\n' \
    --vv --allow-run-as-root --offline-mode=on --numa-aware=yes --remove-partition=0 \
    --vipu-cluster c16 --executable-cache-path "$tmp/cache" --process-placement spreadnuma \
    --num-instances 2 --num-replicas 4
  for level in OFF ERR WARN INFO DEBUG TRACE; do
    form "-x GCL_LOG_LEVEL=$level" 2 "job: 4 replicas x 1 IPU = 4 IPUs; 2 instances on 1 host" "" \
      --mpi-local-args="-x GCL_LOG_LEVEL=$level" --num-instances 2 --num-replicas 4
    logged=$(cat "$tmp/run.out" "$tmp/run.err" | grep -c 'GCL INFO' || true)
    case $level in
      INFO | DEBUG | TRACE) [ "$logged" -gt 0 ] && ok "GCL_LOG_LEVEL=$level logs INFO lines" ||
        bad "GCL_LOG_LEVEL=$level logs nothing" ;;
      *) [ "$logged" -eq 0 ] && ok "GCL_LOG_LEVEL=$level keeps INFO lines back" ||
        bad "GCL_LOG_LEVEL=$level logged $logged INFO lines" ;;
    esac
  done
  # --process-placement spreadnuma binds each instance (hwloc), and says so with -v.
  rc=0
  "$POPRUN" -v --process-placement=spreadnuma --num-instances 2 --num-replicas 2 true \
    >"$tmp/p.out" 2>"$tmp/p.err" || rc=$?
  if [ "$rc" -eq 0 ] && [ "$(grep -c 'poprun: bound to NUMA node' "$tmp/p.err")" -eq 2 ]; then
    ok "--process-placement spreadnuma binds every instance"
  else
    bad "--process-placement spreadnuma (exit $rc)" "$(cat "$tmp/p.err")"
  fi
else
  hosts=${NETNS_CLUSTER_HOSTS:?run inside scripts/netns-cluster 4}
  # The POD64 form, over four namespace hosts (which share this machine's cores: poprun says
  # once that it binds nothing).
  unbound="poprun: instances are not bound to cores: hosts ${hosts//,/, } are network namespaces of this machine, whose cores they share (--process-placement spreadcores binds anyway)"
  form "POD64 form on $hosts" 4 "job: 16 replicas x 1 IPU = 16 IPUs; 4 instances on 4 hosts" \
    "$(vipu vipu-server-host vipu-server-timeout vipu-partition update-partition reset-partition)"$'\n'"$unbound"$'\n' \
    -vv --host "$hosts" --num-instances 4 --num-replicas 16 --ipus-per-replica 1 \
    --update-partition=no --reset-partition=no --vipu-server-timeout 300 \
    --vipu-server-host "h1" --vipu-partition=p64 --mpi-global-args="$NETNS_CLUSTER_MPI_ARGS" \
    --host-subnet 10.77.0.0/24 --executable-cache-path "$tmp/cache" --print-topology=yes
  # -x and --mpi-local-args -x reach every instance on every host; --host-subnet names each
  # host's interface for tcp and ofi; the cache directory is made and named.
  rc=0
  "$POPRUN" --host "$hosts" --num-instances 4 --num-replicas 4 -x A_VAR="a b" \
    --mpi-local-args="-x B_VAR=2" --host-subnet 10.77.0.0/24 --executable-cache-path "$tmp/c2" \
    sh -c 'echo "A=$A_VAR B=$B_VAR tcp=$GCL_TCP_IFACE ofi=$GCL_OFI_IFACE cache=$POPDIST_EXECUTABLE_CACHE_PATH"' \
    >"$tmp/x.out" 2>"$tmp/x.err" || rc=$?
  want="A=a b B=2 tcp=eth0 ofi=eth0 cache=$tmp/c2"
  if [ "$rc" -eq 0 ] && [ "$(grep -cF "] $want" "$tmp/x.out")" -eq 4 ] && [ -d "$tmp/c2" ]; then
    ok "-x, --mpi-local-args -x, --host-subnet and the cache path reach all 4 hosts"
  else
    bad "-x and --host-subnet on the hosts (exit $rc; want '$want')" "$(cat "$tmp/x.out" "$tmp/x.err")"
  fi
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
