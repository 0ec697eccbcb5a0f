#!/usr/bin/env bash
# mismatch.sh POPRUN FAULTS_MISMATCH INSTANCES TRANSPORT [COLLECTIVES [HOSTS]]
#
# Runs faults-mismatch for every collective (or those in the comma list COLLECTIVES; "all")
# and every argument that applies to it, as a job of 4 replicas over INSTANCES instances with
# GCL_TRANSPORT=TRANSPORT, on this host or on HOSTS (poprun -H; run inside
# scripts/netns-cluster, whose hosts share no host box, so only messages tell a replica), and asserts for each case that the job ends within its bound and
# every instance reports PASSED (see mismatch_matrix.c: every replica gets GCL_ERR_MISMATCH
# naming the odd replica). TRANSPORT mpi, ofi and tcp also set GCL_DIRECT_MIN_BYTES out of reach,
# so that the calls really cross the network transport instead of going host-direct (except
# the *_direct cases, which are about host-direct).
# Prints one line per case and the list of failures.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -ge 4 ] || { echo "usage: $0 POPRUN FAULTS_MISMATCH INSTANCES TRANSPORT [COLLECTIVES]" >&2; exit 2; }
poprun=$1 prog=$2 ninst=$3 transport=$4
colls=${5:-all}
[ "$colls" = all ] && colls=all_reduce,reduce_scatter,all_gather,broadcast,all_to_all,barrier
hosts=${6:-}
host_args=()
[ -n "$hosts" ] && host_args=(-H "$hosts")
faults_init "mismatch-$ninst-$transport${hosts:+-hosts}"
args="count type op root group algorithm collective skip count_nb count_direct type_direct op_direct"
# Each case: GCL_TIMEOUT_S (FAULTS_MISMATCH_TIMEOUT_S, default 5 s) for a replica that can only
# time out, plus start-up.
bound_s=${FAULTS_MISMATCH_BOUND_S:-60}

# Known gaps: "TRANSPORT COLLECTIVE ARGUMENT" cases where libgcl is safe (no hang, no wrong
# result) but does not yet give every replica GCL_ERR_MISMATCH naming the odd one.
gaps_file=$here/mismatch_gaps.txt
# On several hosts, TRANSPORT is written as hosts-TRANSPORT in that file.
is_gap() { # is_gap COLLECTIVE ARGUMENT [KIND]: a line "TRANSPORT COLLECTIVE ARGUMENT [KIND]"
  grep -Eq "^(${hosts:+hosts-}$transport|any) ($1|any) ($2|any)${3:+ $3} *(#.*)?\$" "$gaps_file"
}

# How the replicas of a SAFE case fell short: "next" (GCL_OK and the right output, then
# GCL_ERR_MISMATCH from the next call), "empty" (GCL_ERR_MISMATCH without a text),
# "timeout" (GCL_ERR_TIMEOUT, with perhaps empty texts, GCL_ERR_PEER_FAILED of replicas whose
# peer gave up after its timeout, and a broadcast's GCL_OK with the right data whose next call
# timed out), "left" (GCL_OK and the right output, then GCL_ERR_PEER_FAILED from the next call:
# the odd replica returned from its program before its mismatch reached this one), or "other".
shortfall() {
  local lines timeout='GCL_ERR_TIMEOUT (failed)\|(correct).*its next call: .*(GCL_TIMEOUT_S)'
  lines=$(grep -h "faults-mismatch $coll $arg: replica" "$out" | grep -v '(passed)' || true)
  if ! grep -qv '(empty)' <<<"$lines"; then
    echo empty
  elif ! grep -qv '(next)\|(empty)' <<<"$lines"; then
    echo next
  elif ! grep -qv '(correct).*its next call: .*returned from its program' <<<"$lines"; then
    echo left
  elif grep -q "$timeout" <<<"$lines" &&
       ! grep -v "$timeout" <<<"$lines" | grep -v '(empty)\|GCL_ERR_PEER_FAILED (failed)' >/dev/null; then
    echo timeout
  else
    echo other
  fi
}

failures=() gaps=() fixed=()
cases=0
for coll in ${colls//,/ }; do
  for arg in $args; do
    out=$FT/$coll-$arg
    "$prog" --applies "$coll" "$arg" || continue
    # Across hosts no call runs host-direct: the *_direct cases would repeat count, type, op.
    [ -n "$hosts" ] && [[ $arg == *_direct ]] && continue
    extra=()
    if [ "$transport" = mpi ] || [ "$transport" = ofi ] || [ "$transport" = tcp ]; then
      case $arg in *_direct) ;; *) extra=(GCL_DIRECT_MIN_BYTES=1000000000000000) ;; esac
    fi
    t0=$(now_ms)
    status=0
    marked env GCL_TIMEOUT_S="${FAULTS_MISMATCH_TIMEOUT_S:-5}" GCL_TRANSPORT="$transport" "${extra[@]}" \
      timeout -k 5 "$bound_s" "$poprun" "${host_args[@]}" --num-replicas 4 --num-instances "$ninst" \
      "$prog" "$coll" "$arg" >"$out" 2>&1 || status=$?
    ms=$(($(now_ms) - t0))
    cases=$((cases + 1))
    count() { grep -c "^\(\[instance [0-9]*\] \)\?faults-mismatch $coll $arg: instance [0-9]*: $1" "$out" || true; }
    npass=$(count PASSED) nsafe=$(count SAFE)
    summary=$(grep -o "instance [0-9]*: [A-Z]* (.*)" "$out" | paste -sd';' || true)
    if [ "$status" -eq 0 ] && [ "$npass" -eq "$ninst" ]; then
      if is_gap "$coll" "$arg"; then
        fixed+=("$coll $arg")
        echo "ok    $coll $arg (${ms} ms; listed as a gap, passed now): $summary"
      else
        echo "ok    $coll $arg (${ms} ms): $summary"
      fi
    elif [ "$status" -eq 124 ] && is_gap "$coll" "$arg" hang; then
      echo "hang  $coll $arg (${ms} ms; a known hang, see $gaps_file):"
      grep -h "faults-mismatch $coll $arg: instance" "$out" | sed 's/^/      /' || true
      gaps+=("$coll $arg (hang)")
    elif [ $((npass + nsafe)) -eq "$ninst" ] && [ "$status" -ne 124 ] &&
         kind=$(shortfall) && { { [ "$kind" = empty ] && is_gap any any empty; } ||
                                { [ "$kind" = next ] && is_gap "$coll" "$arg" next; } ||
                                { [ "$kind" = timeout ] && is_gap "$coll" "$arg" timeout; } ||
                                { [ "$kind" = left ] && is_gap "$coll" "$arg" left; } ||
                                is_gap "$coll" "$arg"; }; then
      echo "gap   $coll $arg (${ms} ms; safe, but not every replica named the mismatch: $kind):"
      grep -h "faults-mismatch $coll $arg: replica" "$out" | grep -v '(passed)' | sed 's/^/      /'
      gaps+=("$coll $arg ($kind)")
    else
      echo "FAIL  $coll $arg (${ms} ms, status $status; $npass passed, $nsafe safe of $ninst):"
      sed 's/^/      /' "$out"
      failures+=("$coll $arg")
    fi
  done
done
wait_no_marked 10 || fail "processes of the jobs are left"
[ "$cases" -gt 0 ] || fail "no case ran"
[ ${#fixed[@]} -eq 0 ] || echo "note: listed in $gaps_file but passed: ${fixed[*]}"
[ ${#failures[@]} -eq 0 ] || fail "${#failures[@]} of $cases cases failed: ${failures[*]}"
[ ${#gaps[@]} -eq 0 ] ||
  skip "$cases cases, none with a wrong result; ${#gaps[@]} known gaps (a replica not told of the" \
    "mismatch, or a hang; see $gaps_file): ${gaps[*]}"
pass "$cases cases, $ninst instance(s)${hosts:+ on $hosts}, transport $transport"
