#!/usr/bin/env bash
# inject.sh KIND WHERE POPRUN FAULTS_INJECT
#
# Walks every cleanup path of one kind of resource with GCL_FAULT_INJECT (gcl/src/base/fault.h):
# runs faults-inject (tests/faults/inject_prog.c: init, communicators, blocking and non-blocking
# collectives by messages and host-direct, point-to-point, finalize) with KIND:N for N = 1, 2,
# 3, ... until a run no longer reaches its Nth event (libgcl's closing "GCL_FAULT_INJECT=...:
# ... not reached" line). KIND is alloc, map or post. WHERE:
#   single     one instance, 4 replicas x 2 IPUs, no MPI. Every N also under valgrind memcheck
#              (definite leaks and memory errors fail) when map; when alloc, N = 1..10 and every
#              25th (FAULTS_INJECT_VALGRIND_EVERY; 1 for all of them, about 20 minutes), the
#              others without it.
#   2inst      poprun, 2 instances of 2 replicas x 2 IPUs on this host (shm between them),
#              KIND:N@1: only instance 1 fails. Every N for post and map; for alloc N = 1..30
#              and every 10th (FAULTS_INJECT_2INST_EVERY; 1 for all of them, about 3 minutes).
#   2inst-mpi, 2inst-ofi, 2inst-tcp: the same over GCL_TRANSPORT=mpi, ofi or tcp (posts are
#              then the network backend's isend and irecv; N = 1..30 and every 4th of them,
#              about 70 in all).
# FAULTS_INJECT_SAMPLE=FIRST:EVERY: only N <= FIRST and every EVERY-th after (any WHERE): the
#              default tier's short walks; the full tier walks as described above.
# FAULTS_INJECT_VALGRIND=0: single without valgrind (the sanitizer build, whose binaries
# valgrind cannot run, finds memory errors itself).
#
# Each run must end within its timeout (no hang) with one of:
#   - exit 0, the event reached but absorbed (a cache not filled, the heap instead of shareable
#     memory): every instance's line bitwise the same as the clean run's (results and simulated
#     times);
#   - exit 1 (poprun: non-zero) and the failing instance's one line "faults-inject: instance I:
#     CALL failed: GCL_ERR_...: SENTENCE", the sentence libgcl's own (not "the program
#     returned ..."). With 2 instances, instance 0 either reports a failure of its own the same
#     way, or (its calls done before instance 1 failed) the clean line, or is ended by the job's
#     teardown; every process of the job is gone 10 s after poprun, and poprun names
#     instance 1 (or 0 when instance 0 failed too: poprun names the first it saw);
#   - exit 0 and "not reached": the walk ends.
# Never a signal, a hang, exit 3 (a wrong result) or 2. Nothing is left in /dev/shm. At the end,
# one line counts the outcomes. Exit 77 (skip) without valgrind (single) or libfabric (ofi).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 4 ] || { echo "usage: $0 alloc|map|post single|2inst|2inst-mpi|2inst-ofi|2inst-tcp POPRUN FAULTS_INJECT" >&2; exit 2; }
kind=$1 where=$2 poprun=$(readlink -f "$3") prog=$(readlink -f "$4")
case $kind in alloc | map | post) ;; *) echo "inject.sh: unknown kind $kind" >&2; exit 2 ;; esac
case $where in single | 2inst | 2inst-mpi | 2inst-ofi | 2inst-tcp) ;; *) echo "inject.sh: unknown place $where" >&2; exit 2 ;; esac
faults_init "inject-$kind-$where"

vg_every=${FAULTS_INJECT_VALGRIND_EVERY:-25}
[ "$kind" = map ] && vg_every=1
two_every=1
[ "$kind" = alloc ] && two_every=10
[ "$kind" = post ] && [ "$where" != 2inst ] && two_every=4
two_every=${FAULTS_INJECT_2INST_EVERY:-$two_every}
max_n=${FAULTS_INJECT_MAX_N:-5000}
vg=()
if [ "$where" = single ]; then
  command -v valgrind >/dev/null || skip "valgrind is not installed (Debian: valgrind)"
  # --fair-sched: IPU threads that poll must not starve the one they wait for (valgrind runs
  # one thread at a time, and its default lock lets a spinning thread take it back at once).
  vg=(valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99
      --suppressions="$here/valgrind.supp" --num-callers=30 --fair-sched=yes)
fi
transport=auto
case $where in
  2inst-mpi) transport=mpi ;;
  2inst-ofi) transport=ofi ;;
  2inst-tcp) transport=tcp ;;
esac

# Whether run N goes under valgrind.
under_vg() {
  [ "$where" = single ] && [ "$1" -gt 0 ] && [ "${FAULTS_INJECT_VALGRIND:-1}" != 0 ] &&
    { [ "$vg_every" -eq 1 ] || [ "$1" -le 10 ] || [ $(($1 % vg_every)) -eq 0 ]; }
}

# Whether the walk runs N at all (2 instances, alloc: a sample; FAULTS_INJECT_SAMPLE: its own).
sample=${FAULTS_INJECT_SAMPLE:-}
if [ -n "$sample" ] && ! [[ $sample =~ ^[0-9]+:[1-9][0-9]*$ ]]; then
  echo "inject.sh: FAULTS_INJECT_SAMPLE='$sample': expected FIRST:EVERY" >&2
  exit 2
fi
sampled() {
  if [ -n "$sample" ]; then
    [ "$1" -le "${sample%%:*}" ] || [ $(($1 % ${sample##*:})) -eq 0 ]
    return
  fi
  [ "$where" = single ] || [ "$two_every" -eq 1 ] || [ "$1" -le 30 ] || [ $(($1 % two_every)) -eq 0 ]
}

# run N: one run with KIND:N (N = 0: none) into $FT/out.N, its exit status into $FT/st.N. One
# instance runs in the background (the caller waits: a run is mostly the loader's latency, so
# a few at once take little more than one); two instances in the foreground, one job at a time.
run() {
  local n=$1 spec="" out=$FT/out.$1
  [ "$n" -gt 0 ] && spec="$kind:$n"
  if [ "$where" = single ]; then
    local cmd=("$prog" 4 2) limit=60
    if under_vg "$n"; then
      cmd=("${vg[@]}" --log-file="$FT/vg.$n.%p" "$prog" 4 2)
      limit=300
    fi
    (
      st=0
      marked env GCL_TIMEOUT_S=20 GCL_FAULT_INJECT="$spec" timeout -k 5 $limit "${cmd[@]}" \
        >"$out" 2>&1 || st=$?
      echo $st >"$FT/st.$n"
    ) &
    return 0
  fi
  [ -n "$spec" ] && spec="$spec@1"
  local st=0
  marked env GCL_TIMEOUT_S=20 GCL_FAULT_INJECT="$spec" GCL_TRANSPORT="$transport" \
    timeout -k 5 90 "$poprun" --num-replicas 4 --ipus-per-replica 2 --num-instances 2 \
    "$prog" >"$out" 2>&1 || st=$?
  echo $st >"$FT/st.$n"
  wait_no_marked 10 || { cat "$out"; fail "${spec:-clean run}: processes of the job are left 10 s after poprun"; }
}

bad() {
  echo "--- output of the run:"
  cat "$FT/out.$n"
  fail "$1"
}

# The program's line of instance I (0 or 1; without poprun's prefix) in run N's output, or
# nothing. A gcl_init that failed does not know its instance ("instance ?"): under poprun the
# prefix tells.
line_of() {
  if [ "$where" = single ]; then
    [ "$1" = 0 ] && sed -n 's/^\(faults-inject: instance [0?][: ].*\)$/\1/p' "$FT/out.$2" | tail -1
    return 0
  fi
  sed -n "s/^\[instance $1\] \(faults-inject: instance [$1?][: ].*\)$/\1/p" "$FT/out.$2" | tail -1
}

# A failure line that names its failure with libgcl's own sentence.
named_failure() {
  [[ $1 =~ ^faults-inject:\ instance\ [0-9?]+:\ gcl_[a-z]+\ failed:\ GCL_ERR_[A-Z_]+:\ .+ ]] &&
    [[ $1 != *"the program returned"* ]] && [[ ! $1 =~ GCL_ERR_[A-Z_]+:\ *$ ]]
}

failed=0 absorbed=0 told=0 unaffected=0 ended=0 vg_runs=0 reached_end=0
declare -A statuses=()

# judge N: checks run N (see the top); sets reached_end when it did not reach its event.
judge() {
  n=$1
  local st spec="$kind:$1" summary l0 l1 mine s
  st=$(cat "$FT/st.$n")
  [ "$where" = single ] || spec="$spec@1"
  case $st in 124 | 137) bad "$spec: the run did not end within its timeout" ;; esac
  if under_vg "$n"; then
    vg_runs=$((vg_runs + 1))
    if [ "$st" -eq 99 ] || grep -q 'definitely lost: [1-9]\|Invalid \|uninitialised' "$FT"/vg.$n.* 2>/dev/null; then
      grep -h -B2 -A30 'definitely lost in loss record\|Invalid \|uninitialised' "$FT"/vg.$n.* | awk 'NR <= 80'
      bad "$spec: valgrind found a leak or a memory error"
    fi
  fi
  summary=$(grep -o "GCL_FAULT_INJECT=$spec: .*" "$FT/out.$n" | tail -1 || true)
  [ -n "$summary" ] || bad "$spec: no closing GCL_FAULT_INJECT line (exit $st)"
  l0=$(line_of 0 "$n")
  l1=$(line_of 1 "$n")
  mine=$l0
  [ "$where" = single ] || mine=$l1
  if [[ $summary == *"not reached"* ]]; then
    [ "$st" -eq 0 ] && [ "$l0" = "$clean0" ] && [ "$l1" = "$clean1" ] ||
      bad "$spec: not reached, but the run differs from the clean one (exit $st)"
    reached_end=1
    return 0
  fi
  [[ $summary == *"$kind:$n failed"* ]] || bad "$spec: the closing line says neither failed nor not reached"
  if [ "$st" -eq 0 ]; then
    [ "$l0" = "$clean0" ] && [ "$l1" = "$clean1" ] ||
      bad "$spec: the failure was absorbed (exit 0), but results or simulated times differ from the clean run"
    absorbed=$((absorbed + 1))
    return 0
  fi
  [ "$where" = single ] && [ "$st" -ne 1 ] && bad "$spec: exit $st (expected 0 or 1)"
  named_failure "$mine" || bad "$spec: exit $st without a line naming the failure"
  s=$(grep -o 'GCL_ERR_[A-Z_]*' <<<"$mine" | awk 'NR <= 1')
  statuses[$s]=$((${statuses[$s]:-0} + 1))
  failed=$((failed + 1))
  [ "$where" = single ] && return 0
  # poprun names the first instance it saw fail: instance 1, unless instance 0 failed too.
  local named=1
  named_failure "$l0" && named="[01]"
  grep -q "^poprun: instance $named (host [^)]*) exited with status 1" "$FT/out.$n" ||
    bad "$spec: poprun does not name the failed instance"
  if [ -z "$l0" ]; then
    ended=$((ended + 1))
  elif [ "$l0" = "$clean0" ]; then
    unaffected=$((unaffected + 1))
  elif named_failure "$l0"; then
    told=$((told + 1))
  else
    bad "$spec: instance 0 printed neither the clean line nor a named failure"
  fi
}

t0=$SECONDS

# The clean run: the reference every absorbed failure must match bitwise.
n=0
run 0
wait
[ "$(cat "$FT/st.0")" -eq 0 ] || bad "the run without injection failed (exit $(cat "$FT/st.0"))"
clean0=$(line_of 0 0)
clean1=$(line_of 1 0)
[[ $clean0 == *" ok: sim "* ]] || bad "the run without injection printed no ok line"
[ "$where" = single ] || [[ $clean1 == *" ok: sim "* ]] || bad "instance 1 printed no ok line"

next=1 batch=4
while [ "$reached_end" = 0 ]; do
  ns=()
  while [ ${#ns[@]} -lt $batch ] && [ $next -le "$max_n" ]; do
    sampled $next && ns+=("$next")
    next=$((next + 1))
  done
  [ ${#ns[@]} -gt 0 ] || fail "the walk did not end within $max_n events"
  for m in "${ns[@]}"; do run "$m"; done
  wait
  for m in "${ns[@]}"; do
    judge "$m"
    [ "$reached_end" = 1 ] && break
  done
done

left=$(leaks)
[ -z "$left" ] || fail "left behind: $left"
counts=""
for s in "${!statuses[@]}"; do counts+=" $s x${statuses[$s]}"; done
extra=""
[ "$where" = single ] && extra=", $vg_runs under valgrind"
[ "$where" = single ] || extra=", instance 0: failed too $told, done before $unaffected, ended by the teardown $ended"
pass "$kind: the walk ended at N=$n in $((SECONDS - t0)) s: $failed failed cleanly ($counts ), $absorbed absorbed$extra"
