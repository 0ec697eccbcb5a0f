#!/usr/bin/env bash
# slurm.sh CASE SOURCE_DIR BUILD_DIR
#
# The main job on a real Slurm cluster of two namespace hosts (scripts/slurm-cluster), as its
# users run it. Each CASE starts a cluster of its own, runs its checks on the login node h0, and
# after the cluster is gone checks that nothing of it is left (processes, namespaces, state
# directory, cgroup directories).
#   quick      srun -N 2 -n 4 --mpi=pmix: one job of 4 instances, 2 on each node (default tier)
#   sbatch     sbatch --wait job.sh (#SBATCH -N 2 --ntasks-per-node 2), poprun without -H: the
#              instances on the allocated nodes (--print-topology), weights bitwise those of
#              poprun on one host
#   srun       srun -N 2 -n 4 --mpi=pmix train: weights bitwise those of poprun on one host;
#              srun --mpi=pmi2 and --mpi=none refused in one line
#   scancel    scancel of a batch job running poprun and of an srun job: checkpoint, exit 143
#   timelimit  sbatch --time=1 --signal=TERM@60: the same, before the limit
#   requeue    sbatch --requeue, scontrol requeue, train --resume: weights bitwise those of an
#              uninterrupted run
#   lostnode   node h2 dies (every process of it killed, slurmd too) under a batch job running
#              poprun and under an srun job: each fails fast, naming h2
# Exit 77 (skip) without root, network namespaces or Slurm.
set -uo pipefail
if [ "$1" = --inside ]; then # --inside CASE WORKDIR BUILD_DIR (on h0, from run_cluster below)
  case_name=$2 W=$3 build=$4
else
  case_name=$1 src=$2 build=$3
fi
poprun=$build/bin/poprun train=$build/bin/train

fail() {
  echo "FAIL ($case_name): $*" >&2
  exit 1
}
ok() { echo "ok ($case_name): $*"; }

# Waits up to $2 s (tenths) for a file in directory $1.
wait_file() {
  local i
  for ((i = 0; i < $2 * 10; i++)); do
    [ -n "$(ls "$1" 2>/dev/null)" ] && return 0
    sleep 0.1
  done
  return 1
}

# Waits up to $2 s for job $1 to leave the queue.
wait_job() {
  local i
  for ((i = 0; i < $2 * 5; i++)); do
    [ -z "$(squeue -h -j "$1" -o %T 2>/dev/null)" ] && return 0
    sleep 0.2
  done
  return 1
}

job_field() { scontrol show job "$1" | tr ' ' '\n' | sed -n "s/^$2=//p" | awk 'NR == 1'; }

train_args=(--progress plain --log-every 50 --train-samples 16384 --test-samples 1000)

# ---- The cases, on h0 inside the cluster. ----

inside_quick() {
  local out=$W/quick.out
  [ "$(sinfo -h -t idle -o %D)" = 2 ] || fail "sinfo does not show 2 idle nodes: $(sinfo)"
  srun -N 2 -n 4 --mpi=pmix "$train" --max-steps 10 "${train_args[@]}" --json "$W/quick.json" \
    >"$out" 2>&1 || fail "srun train failed: $(tail -5 "$out")"
  grep -q '"instances": 4' "$W/quick.json" || fail "not one job of 4 instances: $(head -c 300 "$W/quick.json")"
  [ "$(grep -c '^train: test accuracy' "$out")" = 1 ] || fail "not one job: $(grep -c '^train: test accuracy' "$out") reports"
  [ "$(srun -N 2 -n 4 hostname | sort | tr '\n' ' ')" = "h1 h1 h2 h2 " ] ||
    fail "srun -N 2 -n 4 does not put 2 tasks on each of h1 and h2"
  ok "sinfo shows 2 idle nodes; srun -N 2 -n 4 --mpi=pmix train is one job of 4 instances on h1 and h2"
}

# The reference: poprun on this host alone (outside the cluster), same replicas and instances.
reference() { # REPLICAS INSTANCES WEIGHTS ARGS...
  local r=$1 i=$2 w=$3
  shift 3
  env -u SLURM_JOB_ID "$poprun" --num-replicas "$r" --num-instances "$i" "$train" \
    "${train_args[@]}" --save-weights "$w" "$@" >"$w.out" 2>&1 ||
    fail "the reference run failed: $(tail -5 "$w.out")"
}

inside_sbatch() {
  cat >"$W/job.sh" <<EOF
#!/bin/sh
#SBATCH -N 2 --ntasks-per-node 2
exec "$poprun" --print-topology --num-replicas 8 --num-instances 4 "$train" ${train_args[*]} --max-steps 40 --save-weights "$W/sbatch.w"
EOF
  chmod +x "$W/job.sh"
  sbatch --wait -o "$W/sbatch.out" "$W/job.sh" >/dev/null ||
    fail "sbatch --wait failed: $(tail -5 "$W/sbatch.out")"
  grep -q "^Slurm allocation [0-9]*: nodes h\[1-2\] (SLURM_JOB_NODELIST), tasks 2(x2) (SLURM_TASKS_PER_NODE)$" "$W/sbatch.out" ||
    fail "no allocation line: $(head -5 "$W/sbatch.out")"
  [ "$(awk '$1 ~ /^h[12]$/ && NF == 5 {printf "%s:%s ", $1, $3}' "$W/sbatch.out")" = "h1:0 h1:1 h2:2 h2:3 " ] ||
    fail "instances not on h1, h1, h2, h2: $(cat "$W/sbatch.out")"
  grep -q "^poprun: instances are not bound to cores: hosts h1, h2 are network namespaces of this machine" "$W/sbatch.out" ||
    fail "no word about binding on namespace hosts"
  reference 8 4 "$W/ref.w" --max-steps 40
  cmp -s "$W/sbatch.w" "$W/ref.w" || fail "the weights differ from poprun's on one host"
  ok "sbatch -N 2 --ntasks-per-node 2 with poprun (no -H): instances 0-1 on h1, 2-3 on h2; weights bitwise those of poprun on one host"
}

inside_srun() {
  srun -N 2 -n 4 --mpi=pmix "$train" "${train_args[@]}" --max-steps 40 --save-weights "$W/srun.w" \
    --json "$W/srun.json" >"$W/srun.out" 2>&1 || fail "srun train failed: $(tail -5 "$W/srun.out")"
  grep -q '"instances": 4' "$W/srun.json" || fail "not one job of 4 instances"
  reference 4 4 "$W/ref.w" --max-steps 40
  cmp -s "$W/srun.w" "$W/ref.w" || fail "the weights differ from poprun's on one host"
  ok "srun -N 2 -n 4 --mpi=pmix train: one job of 4 instances, weights bitwise those of poprun --num-instances 4"
  local mpi
  for mpi in pmi2 none; do
    srun -N 2 -n 2 --mpi=$mpi "$train" --max-steps 2 >"$W/$mpi.out" 2>&1 && fail "srun --mpi=$mpi succeeded"
    grep -q "srun started 2 tasks without PMIx (SLURM_MPI_TYPE=$mpi), and OpenMPI finds its ranks under srun only through PMIx: run srun --mpi=pmix" "$W/$mpi.out" ||
      fail "srun --mpi=$mpi: no one-line reason: $(cat "$W/$mpi.out")"
  done
  ok "srun --mpi=pmi2 and --mpi=none: one line naming srun --mpi=pmix"
}

# A batch job of poprun training until it is stopped, with checkpoints in $W/NAME.ckpt.
submit_long() { # NAME SBATCH-OPTIONS...
  local name=$1
  shift
  cat >"$W/$name.sh" <<EOF
#!/bin/sh
exec "$poprun" --num-replicas 4 --num-instances 4 "$train" ${train_args[*]} --epochs 1000 --checkpoint "$W/$name.ckpt" --checkpoint-every 50
EOF
  chmod +x "$W/$name.sh"
  sbatch --parsable -N 2 --ntasks-per-node 2 -o "$W/$name.out" "$@" "$W/$name.sh"
}

# The checks of a stopped run: train's line of the step it stopped after, its checkpoint there.
stopped_with_checkpoint() { # OUTPUT CKPT-DIR
  local line step
  line=$(grep -o "train: SIGTERM: stopped after step [0-9]* of [0-9]*; checkpoint [^ ]*" "$1") ||
    fail "train did not stop on SIGTERM with a checkpoint: $(tail -5 "$1")"
  step=$(echo "$line" | sed 's/.*step \([0-9]*\) of.*/\1/')
  [ -f "$(printf '%s/ckpt-%010d.gclt' "$2" "$step")" ] || fail "no checkpoint of step $step in $2"
  echo "$step"
}

inside_scancel() {
  local jid step
  jid=$(submit_long scancel) || fail "sbatch failed"
  wait_file "$W/scancel.ckpt" 120 || fail "no checkpoint within 120 s: $(tail -3 "$W/scancel.out")"
  scancel "$jid"
  wait_job "$jid" 60 || fail "job $jid still there 60 s after scancel"
  step=$(stopped_with_checkpoint "$W/scancel.out" "$W/scancel.ckpt") || exit 1
  grep -q "^poprun: interrupted by SIGTERM" "$W/scancel.out" || fail "poprun did not say it was interrupted: $(tail -3 "$W/scancel.out")"
  [ "$(job_field "$jid" ExitCode)" = "143:0" ] || fail "job exit code $(job_field "$jid" ExitCode), not 143:0"
  ok "scancel of sbatch + poprun: checkpoint of step $step, job exit code 143"
  srun -N 2 -n 4 --mpi=pmix "$train" "${train_args[@]}" --epochs 1000 --checkpoint "$W/srun.ckpt" \
    --checkpoint-every 50 >"$W/srun-cancel.out" 2>&1 &
  local sp=$!
  wait_file "$W/srun.ckpt" 120 || fail "no srun checkpoint within 120 s"
  scancel "$(squeue -h -o %i -n train | awk 'NR == 1')"
  wait "$sp"
  local rc=$?
  [ $rc = 143 ] || fail "srun exited $rc after scancel, not 143: $(tail -3 "$W/srun-cancel.out")"
  step=$(stopped_with_checkpoint "$W/srun-cancel.out" "$W/srun.ckpt") || exit 1
  ok "scancel of srun train: checkpoint of step $step, srun exits 143"
}

inside_timelimit() {
  local jid step t0=$SECONDS
  jid=$(submit_long limit --time=1 --signal=TERM@60) || fail "sbatch failed"
  wait_job "$jid" 120 || fail "job $jid still there after 120 s (its limit is 60 s)"
  step=$(stopped_with_checkpoint "$W/limit.out" "$W/limit.ckpt") || exit 1
  grep -q "^poprun: interrupted by SIGTERM, which instance [0-9] (host h[12]) got from outside poprun; every instance was ended$" "$W/limit.out" ||
    fail "poprun's line: $(tail -2 "$W/limit.out")"
  [ "$(job_field "$jid" ExitCode)" = "143:0" ] || fail "job exit code $(job_field "$jid" ExitCode), not 143:0"
  [ "$(job_field "$jid" JobState)" != TIMEOUT ] || fail "the job reached its time limit"
  ok "--time=1 --signal=TERM@60: stopped after $((SECONDS - t0)) s, checkpoint of step $step, exit code 143"
}

inside_requeue() {
  local steps=300
  cat >"$W/requeue.sh" <<EOF
#!/bin/sh
echo "run \${SLURM_RESTART_COUNT:-0}"
exec "$poprun" --num-replicas 4 --num-instances 4 "$train" ${train_args[*]} --max-steps $steps --checkpoint "$W/requeue.ckpt" --checkpoint-every 50 --resume --save-weights "$W/requeue.w"
EOF
  chmod +x "$W/requeue.sh"
  local jid
  jid=$(sbatch --parsable --requeue --open-mode=append -N 2 --ntasks-per-node 2 -o "$W/requeue.out" "$W/requeue.sh") ||
    fail "sbatch failed"
  wait_file "$W/requeue.ckpt" 120 || fail "no checkpoint within 120 s"
  scontrol requeue "$jid" || fail "scontrol requeue failed"
  local i
  for ((i = 0; i < 900; i++)); do
    [ "$(job_field "$jid" JobState)" = COMPLETED ] && break
    sleep 0.2
  done
  [ "$(job_field "$jid" Restarts)" = 1 ] || fail "Restarts=$(job_field "$jid" Restarts), not 1"
  [ "$(job_field "$jid" JobState)" = COMPLETED ] ||
    fail "the requeued job is $(job_field "$jid" JobState): $(tail -5 "$W/requeue.out")"
  grep -q "^\[instance 0\] train: resuming from .*ckpt-0*\([1-9][0-9]*\).gclt (step [1-9][0-9]*)" "$W/requeue.out" ||
    fail "the second run did not resume: $(grep -v epoch "$W/requeue.out" | tail -5)"
  reference 4 4 "$W/ref.w" --max-steps $steps
  cmp -s "$W/requeue.w" "$W/ref.w" || fail "the requeued run's weights differ from an uninterrupted run's"
  ok "sbatch --requeue, scontrol requeue: resumed from $(grep -o 'resuming from [^ ]*' "$W/requeue.out" | awk 'NR == 1' | sed 's/.*\///'), weights bitwise those of an uninterrupted run"
}

# Node h2 dies: every process of its namespace is killed, its slurmd with them.
kill_h2() { ip netns pids "$NETNS_CLUSTER_ID-h2" | xargs -r kill -KILL; }

inside_lostnode() {
  local jid t0
  jid=$(submit_long lost) || fail "sbatch failed"
  wait_file "$W/lost.ckpt" 120 || fail "no checkpoint within 120 s"
  t0=$(date +%s%N)
  kill_h2
  for ((i = 0; i < 300; i++)); do grep -q "^poprun: host" "$W/lost.out" && break; sleep 0.1; done
  local ms=$((($(date +%s%N) - t0) / 1000000))
  grep -q "^poprun: host h2 is lost: mpirun lost contact with its daemon (instances 2, 3 ran there)$" "$W/lost.out" ||
    fail "poprun's line: $(grep -v epoch "$W/lost.out" | tail -3)"
  [ $ms -lt 10000 ] || fail "poprun named the lost host $ms ms after the kill (more than 10 s)"
  ok "node h2 killed under sbatch + poprun: 'host h2 is lost' after $ms ms"
}

# The srun half of a lost node needs a cluster whose h2 is alive: a second cluster.
inside_lostnode_srun() {
  srun -N 2 -n 4 --mpi=pmix "$train" "${train_args[@]}" --epochs 1000 --checkpoint "$W/ls.ckpt" \
    --checkpoint-every 50 >"$W/ls.out" 2>&1 &
  local sp=$! t0
  wait_file "$W/ls.ckpt" 120 || fail "no checkpoint within 120 s"
  t0=$(date +%s%N)
  kill_h2
  for ((i = 0; i < 300; i++)); do grep -q "is gone" "$W/ls.out" && break; sleep 0.1; done
  local ms=$((($(date +%s%N) - t0) / 1000000))
  grep -q "replica [23] (instance [23] on host h2, pid [0-9]*) is gone" "$W/ls.out" ||
    fail "no line naming h2 in $ms ms: $(cat "$W/ls.out"; ps -eo pid,stat,args | grep -F "$W/ls.ckpt" | grep -v grep)"
  [ $ms -lt 10000 ] || fail "h2 named $ms ms after the kill (more than 10 s)"
  kill "$sp" 2>/dev/null
  wait "$sp" 2>/dev/null
  ok "node h2 killed under srun train: the instances on h1 name h2 after $ms ms"
}

if [ "$1" = --inside ]; then
  echo "$NETNS_CLUSTER_ID $SLURM_CLUSTER_DIR" >"$W/cluster.$case_name"
  "inside_$case_name"
  exit $?
fi

# ---- Outside: the cluster, then what it left. ----
if [ "$case_name" = quick ]; then
  # Bad input, one line and status 2: no Slurm installed (a PATH without it), a bad N.
  empty=$(mktemp -d)
  msg=$(PATH=$empty /bin/bash "$src/scripts/slurm-cluster" 2 -- true 2>&1)
  rc=$?
  rmdir "$empty"
  [ $rc = 2 ] && [ "$msg" = "slurm-cluster: slurmctld is not installed (scripts/setup installs slurm-wlm and munge)" ] ||
    fail "without Slurm: exit $rc and: $msg"
  msg=$("$src/scripts/slurm-cluster" 0 -- true 2>&1)
  rc=$?
  [ $rc = 2 ] && [ "$msg" = "usage: slurm-cluster N -- COMMAND [ARGS...]   (1 <= N <= 64)" ] ||
    fail "slurm-cluster 0: exit $rc and: $msg"
  ok "without Slurm installed, or with a bad N: one line, exit 2"
fi
[ "$(id -u)" -eq 0 ] || { echo "skip: needs root"; exit 77; }
command -v slurmctld >/dev/null && command -v munged >/dev/null || { echo "skip: Slurm is not installed (scripts/setup)"; exit 77; }
W=$(mktemp -d /tmp/gcl-slurm-test.XXXXXX)
chmod 755 "$W"
trap 'rm -rf "$W"' EXIT
run_cluster() { # CASE
  "$src/scripts/slurm-cluster" 2 -- bash "$src/tests/multiproc/slurm.sh" --inside "$1" "$W" \
    "$build" >"$W/$1.log" 2>&1
  local rc=$?
  cat "$W/$1.log"
  [ $rc = 77 ] && exit 77
  [ $rc = 0 ] || exit 1
  read -r id dir <"$W/cluster.$1"
  # What is left: a zombie waits for init to reap it; anything else is a leak.
  local left
  left=$(ps -eo stat=,args= | grep -F -e "$dir" -e "$id-" | grep -v '^Z' | grep -v grep)
  [ -z "$left" ] || fail "processes left: $left"
  ! ip netns list | grep "^$id-" >/dev/null || fail "namespaces left: $(ip netns list | grep "^$id-")"
  [ ! -e "$dir" ] || fail "state directory $dir left"
  [ -z "$(find /sys/fs/cgroup -maxdepth 2 -name 'slurm_h[0-9]*' 2>/dev/null)" ] ||
    fail "cgroup directories left: $(find /sys/fs/cgroup -maxdepth 2 -name 'slurm_h[0-9]*')"
}
case $case_name in
  lostnode)
    run_cluster lostnode
    run_cluster lostnode_srun
    ;;
  lostnode_srun) run_cluster lostnode_srun ;;
  *) run_cluster "$case_name" ;;
esac
echo "ok ($case_name): nothing of the cluster is left (processes, namespaces, state, cgroups)"
