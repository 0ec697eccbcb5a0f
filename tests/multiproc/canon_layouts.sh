#!/usr/bin/env bash
# canon_layouts.sh WHAT POPRUN PROGRAM NETNS_CLUSTER [WEIGHTS_CMP]
#
# The same job on every layout gives bitwise the same results: 16 replicas on 1, 4 and 16
# instances of this host, and on 2 and 4 hosts made of network namespaces (skipped, with a
# note, when namespaces cannot be made here). WHAT is
#   collectives  PROGRAM is canon-check: every digest of every case and replica is the same on
#                every layout, and a blocking call's digest is its non-blocking twin's
#   train        PROGRAM is train: 40 steps end with bitwise the same saved weights everywhere
# CANON_LAYOUTS: the layouts to compare (default "i1 i4 i16 h2 h4"; the default tier's
# "i1 i4 h2": one process, several, and two hosts).
set -uo pipefail
what=$1 poprun=$2 program=$3 cluster=$4 cmp=${5:-}
data=${TRAIN_TEST_DATA:-/usr/share/datasets/fashion-mnist}
work=$(mktemp -d "${TMPDIR:-/tmp}/canon-layouts-XXXXXX")
trap 'rm -rf "$work"' EXIT

fail() {
  echo "canon_layouts.sh $what: FAILED: $*" >&2
  exit 1
}

# run NAME COMMAND...: COMMAND must succeed; its output is kept in $work/NAME.out.
run() {
  local name=$1
  shift
  if ! "$@" >"$work/$name.out" 2>&1; then
    echo "---- $name failed: $* ----" >&2
    tail -40 "$work/$name.out" >&2
    fail "$name"
  fi
}

# Whether this machine can make network-namespace hosts (root, iproute2).
netns=1
"$cluster" 1 -- true >/dev/null 2>"$work/skip" || netns=0

# layout NAME: the command prefix that runs 16 replicas that way.
layout() {
  case $1 in
    i1) echo "$poprun --num-replicas 16 --num-instances 1" ;;
    i4) echo "$poprun --num-replicas 16 --num-instances 4" ;;
    i16) echo "$poprun --num-replicas 16 --num-instances 16" ;;
    h2) echo "$cluster 2 -- $poprun -H h1,h2 --num-replicas 16 --num-instances 4" ;;
    h4) echo "$cluster 4 -- $poprun -H h1,h2,h3,h4 --num-replicas 16 --num-instances 8" ;;
  esac
}
layouts=()
for l in ${CANON_LAYOUTS:-i1 i4 i16 h2 h4}; do
  case $l in
    i1 | i4 | i16) layouts+=("$l") ;;
    h2 | h4) [ $netns -eq 1 ] && layouts+=("$l") ;;
    *) echo "canon_layouts.sh: CANON_LAYOUTS: unknown layout $l" >&2; exit 2 ;;
  esac
done
[ $netns -eq 1 ] || echo "canon_layouts.sh: no namespace hosts here ($(cat "$work/skip")): one host only"

collectives() {
  for l in "${layouts[@]}"; do
    # shellcheck disable=SC2046 # the layout is words
    run "$l" $(layout "$l") "$program"
    grep -q "canon-check: instance 0 of .*: PASSED" "$work/$l.out" || fail "$l did not pass"
    sed -n 's/^\[instance [0-9]*\] DIGEST //p' "$work/$l.out" | sort >"$work/$l.digests"
    local n
    n=$(wc -l <"$work/$l.digests")
    [ "$n" -gt 1000 ] || fail "$l printed only $n digests"
    # Blocking and non-blocking twins hold the same bits.
    sed -E 's#/(blocking|nonblocking) # #' "$work/$l.digests" | sort | uniq -c |
      awk '$1 != 2 {bad = 1} END {exit bad}' ||
      fail "$l: a blocking call and its non-blocking twin differ"
    if [ "$l" != i1 ]; then
      cmp -s "$work/i1.digests" "$work/$l.digests" ||
        fail "$l differs from one instance: $(diff "$work/i1.digests" "$work/$l.digests" | awk 'NR <= 4')"
    fi
    echo "canon_layouts.sh: $l: $n digests, the same as on one instance"
  done
}

train() {
  local args=(--data "$data" --max-steps 40 --progress plain --log-every 20)
  for l in "${layouts[@]}"; do
    # shellcheck disable=SC2046
    run "$l" $(layout "$l") "$program" "${args[@]}" --save-weights "$work/$l.w"
    if [ "$l" != i1 ]; then
      "$cmp" --exact "$work/i1.w" "$work/$l.w" || fail "$l's weights differ from one instance's"
    fi
    echo "canon_layouts.sh: $l: weights bitwise the same as on one instance"
  done
}

case $what in
  collectives) collectives ;;
  train) train ;;
  *) fail "unknown case $what" ;;
esac
echo "canon_layouts.sh $what: PASSED on ${layouts[*]}"
