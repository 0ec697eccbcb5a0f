#!/usr/bin/env bash
# forge_ofi.sh POPRUN GCL_BENCH FAULTS_FORGE_OFI
#
# Injection over the ofi transport. A job of 2 instances runs a checked all_to_all (algorithm
# direct: one message per pair and call, so message index 0) over GCL_TRANSPORT=ofi on the
# loopback interface (GCL_OFI_IFACE=lo; host-direct off, so every byte crosses libfabric).
# Right after start-up, faults-forge-ofi, a process of no job, sends forged headers (another
# token) with the exact tags of calls 300..999 of the job's communicator (4 MiB each, about
# 6 ms: the job reaches them a second or more later), to every loopback port on which instance 1's program listens
# (its libfabric endpoint). Asserts:
#   - the forger's sends reached the endpoint (libfabric completed some), so something was
#     tested;
#   - the job still ends with exit 0 and gcl-bench's check reports 0 wrong elements: nothing
#     forged was taken as data, and nothing made a call fail.
# Exit 77 (skip) when ss (iproute2) is missing or no loopback port of the instance is found.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 POPRUN GCL_BENCH FAULTS_FORGE_OFI" >&2; exit 2; }
poprun=$1 bench=$2 forger=$3
faults_init forge-ofi
command -v ss >/dev/null || skip "ss (iproute2) is not installed"
out=$FT/out
marked env GCL_TRANSPORT=ofi GCL_OFI_IFACE=lo GCL_DIRECT_MIN_BYTES=1000000000000000 \
  GCL_TIMEOUT_S=30 GCL_LOG_LEVEL=info GCL_LOG_SUBSYS=init \
  "$poprun" --num-replicas 4 --num-instances 2 "$bench" all_to_all -a direct -b 4M -e 4M \
  -n 1200 -w 0 -c \
  >"$out" 2>&1 &
job=$!
FAULTS_BG+=("$job")
started() { [ "$(grep -c 'GCL INFO init: instance [0-9]* of' "$out")" -eq 2 ]; }
for _ in $(seq 600); do
  started && break
  kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended early"; }
  sleep 0.1
done
started || { cat "$out"; fail "the instances did not start in 60 s"; }
t_start=$(now_ms)
pid=$(instance_pid 1 gcl-bench)
[ -n "$pid" ] || fail "no program process of instance 1"
ports=$(ss -ltnpH 2>/dev/null | grep "pid=$pid," | awk '{print $4}' | sed -n 's/^127\.0\.0\.1:\([0-9]*\)$/\1/p')
[ -n "$ports" ] || skip "instance 1 (pid $pid) listens on no loopback port"

delivered=0
for port in $ports; do
  # With the job's ofi_rxm settings (libgcl makes every message eager): rxm refuses a
  # connection whose eager limit differs from its own, and the forger would reach nothing.
  if marked env FI_OFI_RXM_EAGER_LIMIT=1073741824 "$forger" 127.0.0.1 "$port" 300 700 \
    >"$FT/forge-$port" 2>&1; then
    delivered=1
  fi
  cat "$FT/forge-$port"
done
forged_ms=$(($(now_ms) - t_start))
kill -0 "$job" 2>/dev/null || { cat "$out"; fail "the job ended before the forger was done: the test proves nothing"; }
# Call 300 comes after about 300 x 6 ms; later than that, some forged calls were already past.
[ "$forged_ms" -lt 1800 ] ||
  echo "note: the forger finished ${forged_ms} ms after start-up: the first forged calls may have been past already"
status=0
wait "$job" || status=$?
cat "$out"
[ "$delivered" -eq 1 ] || fail "no forged message reached the endpoint"
[ "$status" -eq 0 ] || fail "the job failed (exit $status) while a forger sent it messages"
grep -Eq '# check: 0 wrong element' "$out" || fail "gcl-bench's check did not report 0 wrong elements"
grep -q 'refused' "$out" && fail "a forged header was matched to a receive (refused by its token)"
wait_no_marked 10 || fail "processes of the job are left"
pass "forged headers reached instance 1's endpoint within ${forged_ms} ms of start-up; the job ran on, every result right"
