#!/usr/bin/env bash
# valgrind.sh POPRUN ALLREDUCE_CHECK FAULTS_MISMATCH
#
# valgrind memcheck (--leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1):
#   canary        a 3-line program that leaks 64 bytes must be caught with these very options
#                 and suppressions (so the check can fail, and the suppressions hide no leak of
#                 a program's own);
#   single        allreduce-check, 4 replicas in one instance (no MPI);
#   mismatch      faults-mismatch all_reduce count, 4 replicas in one instance: the error paths
#                 (GCL_ERR_MISMATCH, the poisoning of the group) free what they made;
#   poprun        poprun --num-instances 2 running allreduce-check under valgrind on every
#                 instance (the PROGRAM is a wrapper script that execs valgrind): libgcl over
#                 the MPI bootstrap and the shm transport. OpenMPI's own leaks in MPI_Init and
#                 MPI_Finalize are suppressed by valgrind.supp (each entry explained there).
# Exit 77 (skip) without valgrind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 3 ] || { echo "usage: $0 POPRUN ALLREDUCE_CHECK FAULTS_MISMATCH" >&2; exit 2; }
poprun=$(readlink -f "$1") check=$(readlink -f "$2") mismatch=$(readlink -f "$3")
faults_init valgrind
command -v valgrind >/dev/null || skip "valgrind is not installed (Debian: valgrind)"
vg=(valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1
    --suppressions="$here/valgrind.supp" --num-callers=30)

failed=()
verdict() { # verdict NAME STATUS LOG...
  local name=$1 st=$2
  shift 2
  if [ "$st" -eq 0 ]; then
    echo "ok    $name: $(grep -h 'definitely lost:\|ERROR SUMMARY' "$@" | sed 's/==[0-9]*== *//' | paste -sd' ')"
  else
    echo "FAIL  $name (exit $st):"
    grep -h -B2 -A30 'definitely lost in loss record\|Invalid \|uninitialised\|Syscall param' "$@" |
      head -120 || tail -40 "$@"
    failed+=("$name")
  fi
}

cc=${CC:-cc}
printf '#include <stdlib.h>\nint main(void) { void *volatile p = malloc(64); p = 0; return p != 0; }\n' \
  >"$FT/leak.c"
if "$cc" -g -O0 "$FT/leak.c" -o "$FT/leak" 2>/dev/null; then
  st=0
  "${vg[@]}" "$FT/leak" >"$FT/canary.log" 2>&1 || st=$?
  if [ "$st" -eq 1 ] && grep -q 'definitely lost: 64 bytes' "$FT/canary.log"; then
    echo "ok    canary: a 64-byte leak is caught (exit 1)"
  else
    cat "$FT/canary.log"
    failed+=("canary (exit $st: the leak was not reported)")
  fi
else
  echo "skip  canary: no C compiler"
fi

st=0
"${vg[@]}" "$check" --replicas 4 --sizes 0,4,1K,100K --types f32 --ops sum,max \
  >"$FT/single.log" 2>&1 || st=$?
verdict single "$st" "$FT/single.log"

st=0
env GCL_TIMEOUT_S=10 "${vg[@]}" "$mismatch" all_reduce count >"$FT/mismatch.log" 2>&1 || st=$?
verdict mismatch "$st" "$FT/mismatch.log"

cat >"$FT/vgwrap" <<EOF
#!/bin/sh
exec valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=1 \
  --suppressions="$here/valgrind.supp" --num-callers=30 --log-file="$FT/poprun-%p.log" "\$@"
EOF
chmod +x "$FT/vgwrap"
st=0
marked env GCL_TIMEOUT_S=120 "$poprun" --num-replicas 4 --num-instances 2 "$FT/vgwrap" "$check" \
  --sizes 0,4,1K,100K --types f32 --ops sum,max >"$FT/poprun.log" 2>&1 || st=$?
logs=("$FT"/poprun-*.log)
if [ "$st" -eq 0 ] && [ "${#logs[@]}" -ne 2 ]; then
  st=99
  echo "expected 2 valgrind logs, found ${#logs[@]}"
fi
[ "$st" -eq 0 ] || cat "$FT/poprun.log"
verdict poprun "$st" "${logs[@]}"
wait_no_marked 10 || fail "processes of the job are left"

[ ${#failed[@]} -eq 0 ] || fail "under valgrind: ${failed[*]}"
pass "no definite leak and no memory error"
