#!/usr/bin/env bash
# How long poprun takes to end a job after SIGTERM: from the signal to poprun's exit, for three
# kinds of program, each 2 instances of 2 replicas (ignore: 2 instances):
#
#   train            handles SIGTERM: finishes its step, checkpoints, exits 143
#   all_reduce_perf  has no handler: dies of the SIGTERM its wrapper passes on
#   ignore           ignores SIGTERM: killed when --graceful-timeout (here 1 s) is over; the
#                    figure printed is the time past the timeout
#
#   poprun/bench/stop.sh [BINDIR] [RUNS] [LIMIT_S]
#
# Prints one line per program: the median and largest time over RUNS runs (default 5), and
# each exit status. With LIMIT_S, exits 1 if any run took longer (past the timeout, for
# ignore) or exited otherwise than 143, or left a process of the job behind.
set -euo pipefail
bin=${1:-build/bin}
runs=${2:-5}
limit=${3:-}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 GCL_TIMEOUT_S=60
tmp=$(mktemp -d "${TMPDIR:-/tmp}/poprun-stop.XXXXXX")
export POPRUN_STOP_BENCH=$tmp # every process of the jobs inherits it: how leftovers are found
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/ignore.sh" <<'EOF'
#!/usr/bin/env bash
trap '' TERM INT
echo ready
while :; do sleep 0.05; done
EOF
chmod +x "$tmp/ignore.sh"
status=0

# stop_once PATTERN GRACE CMD...: starts CMD, waits (up to 60 s) for PATTERN in its output,
# sends SIGTERM, prints "MS RC" (milliseconds from the signal to the exit, less GRACE s).
stop_once() {
  local pattern=$1 grace=$2
  shift 2
  "$@" >"$tmp/out" 2>&1 &
  local pid=$! waited=0
  until grep -qs -- "$pattern" "$tmp/out"; do
    sleep 0.05
    waited=$((waited + 1))
    if [ "$waited" -gt 1200 ] || ! kill -0 "$pid" 2>/dev/null; then
      echo "never saw '$pattern':" >&2
      cat "$tmp/out" >&2
      kill -KILL "$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
      echo "-1 -1"
      return
    fi
  done
  local t0 t1 rc
  t0=$(date +%s%N)
  kill -TERM "$pid"
  set +e
  wait "$pid"
  rc=$?
  set -e
  t1=$(date +%s%N)
  echo "$(((t1 - t0) / 1000000 - grace * 1000)) $rc"
}

# Whether no process carries this run's POPRUN_STOP_BENCH within 2 s.
no_leftovers() {
  for ((k = 0; k < 40; k++)); do
    grep -qs "POPRUN_STOP_BENCH=$tmp" /proc/[0-9]*/environ || return 0
    sleep 0.05
  done
  return 1
}

measure() { # NAME PATTERN GRACE CMD...
  local name=$1 pattern=$2 grace=$3 times=() codes=() worst=0
  shift 3
  for ((i = 0; i < runs; i++)); do
    rm -rf "$tmp/ck"
    read -r ms rc < <(stop_once "$pattern" "$grace" "$@")
    times+=("$ms")
    codes+=("$rc")
    [ "$ms" -gt "$worst" ] && worst=$ms
    if [ -n "$limit" ] && { [ "$rc" -ne 143 ] || [ "$ms" -lt 0 ] ||
      [ "$ms" -gt "$((limit * 1000))" ]; }; then
      status=1
      echo "$name: run $i took $ms ms, exit $rc:" >&2
      tail -n 5 "$tmp/out" >&2
    fi
    if [ -n "$limit" ] && ! no_leftovers; then
      status=1
      echo "$name: processes of the job left behind" >&2
    fi
  done
  local median
  median=$(printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')
  printf '%-16s median %5d ms, max %5d ms%s; exit %s\n' "$name" "$median" "$worst" \
    "$([ "$grace" -gt 0 ] && echo " past --graceful-timeout $grace s")" "${codes[*]}"
}

measure train "step " 0 "$bin/poprun" --num-replicas 4 --num-instances 2 "$bin/train" \
  --epochs 3 --train-samples 8192 --test-samples 1000 --progress plain --log-every 4 \
  --checkpoint "$tmp/ck"
measure all_reduce_perf "(elements)" 0 "$bin/poprun" --num-replicas 4 --num-instances 2 \
  "$bin/all_reduce_perf" -b 1M -e 1M -n 1000000 -w 1
measure ignore ready 1 "$bin/poprun" --num-replicas 2 --num-instances 2 --graceful-timeout 1 \
  "$tmp/ignore.sh"
exit "$status"
