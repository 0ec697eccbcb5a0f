#!/usr/bin/env bash
# Nothing outlives its launcher: however a job's launcher ends, every process of the job ends
# within 10 s, on every host, and the job's entries in /dev/shm and the temporary directory are
# gone. The program prints nothing, ignores SIGTERM and leaves a child of its own running
# (which its wrapper's guard must end: poprun/src/wrapper/guard.h). Cases:
#   poprun-kill   kill -9 of poprun (mpirun gets SIGTERM from the kernel; the janitor finishes)
#   term-kill     SIGTERM to poprun, then kill -9 of it half a second into the graceful stop
#   mpirun-kill   kill -9 of mpirun under a living poprun, which reports it (exit 137)
#   exit          the program exits 0 and leaves its child running: poprun exits 0, the child goes
#   plain-mpirun  kill -9 of a plain mpirun (no poprun) over an MPI program: its processes end
#                 (OpenMPI's own doing: a rank exits when it loses its daemon); OpenMPI's own
#                 files of the killed mpirun are not checked (nobody is left to remove them)
#
#   lifetime.sh POPRUN PROBE [CASE...]               on this host
#   lifetime.sh --netns CLUSTER POPRUN PROBE [CASE...]
#                                                    on two hosts h1, h2 (scripts/netns-cluster;
#                                                    root only, else exit 77)
# With no CASE, every case runs.
set -euo pipefail
if [ "${1:-}" = --netns ]; then
  # Runs this script again inside one cluster; the namespaces' processes are the job's daemons.
  CLUSTER=$2
  shift 2
  exec "$CLUSTER" 2 -- bash "$0" "$@"
fi
POPRUN=$1
PROBE=$2
shift 2
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(poprun-kill term-kill mpirun-kill exit plain-mpirun)
source "$(dirname "$0")/lib.sh"

LIMIT_MS=10000
hosts=()
where="one host"
if [ -n "${NETNS_CLUSTER_HOSTS:-}" ]; then
  hosts=(-H "$NETNS_CLUSTER_HOSTS")
  where="hosts $NETNS_CLUSTER_HOSTS"
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

# job_pids: every live process of the current job: those carrying its tag in their command line
# (poprun, its janitor, mpirun, the wrappers and their guards, the programs, their children),
# and on namespace hosts whatever runs there (OpenMPI's daemons).
job_pids() {
  {
    pgrep -f -- "$tag" || true
    if [ -n "${NETNS_CLUSTER_ID:-}" ]; then
      for h in ${NETNS_CLUSTER_HOSTS//,/ }; do ip netns pids "$NETNS_CLUSTER_ID-$h" || true; done
    fi
  } | sort -u | while read -r p; do
    # zombies have ended; only their parent's wait is left
    [ "$(awk '{print $3}' "/proc/$p/stat" 2>/dev/null)" = Z ] || [ ! -e "/proc/$p" ] || echo "$p"
  done
}

# job_files: what is left of the job's entries: its directory and libgcl's host boxes in
# /dev/shm, mpirun's and the daemons' session directories in the temporary directory.
job_files() {
  local t=${TMPDIR:-/tmp}
  [ -z "$jid" ] || ls -d "/dev/shm/poprun-$jid" /dev/shm/gcl-"$jid"-* 2>/dev/null || true
  [ -z "$mp" ] || ls -d "$t"/ompi.*/"pid.$mp" 2>/dev/null || true
  [ -z "$fam" ] || ls -d "$t"/ompi.*/"jf.$fam" 2>/dev/null || true
}

# up_children: every instance's program has started its child.
up_children() { [ "$(pgrep -f -c -- "child-$tag" || true)" -ge "$n" ]; }
# up_probes: every probe has said its line (on stderr, with --stderr TAG).
up_probes() { [ "$(grep -c -- "^$tag\$" "$tmp/err" || true)" -ge "$n" ]; }

# start UP CMD...: starts the job in a session of its own; waits until UP says it is up. Sets
# pid (the launcher), mp (mpirun), jid (the job's id), fam (OpenMPI's job family, for jobs
# across hosts: mpirun's session directory is then in the temporary directory).
start() {
  local up=$1 i
  shift
  setsid "$@" >"$tmp/out" 2>"$tmp/err" &
  pid=$!
  mp= jid= fam=
  for ((i = 0; i < 300; i++)); do
    "$up" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! "$up"; then
    bad "$name: the job did not start" "$(cat "$tmp/err")"
    kill -KILL "$pid" 2>/dev/null || true
    return 1
  fi
  mp=$( (pgrep -x mpirun -P "$pid" || true) | awk 'NR <= 1')
  [ -n "$mp" ] || mp=$pid
  jid=$(tr '\0' '\n' <"/proc/$mp/cmdline" | sed -n 's/^POPRUN_JOB_ID=//p')
  fam=$(sed -n 's/^\([0-9]*\)\..*/\1/p' "${TMPDIR:-/tmp}"/ompi.*/"pid.$mp/contact.txt" 2>/dev/null |
    awk 'NR <= 1')
  [ -z "$fam" ] || fam=$((fam >> 16))
}

# wait_gone: passes when no process of the job (and, unless NOFILES, none of its files) is left
# within LIMIT_MS of now.
wait_gone() {
  local t0 ms left files
  t0=$(date +%s%N)
  while :; do
    left=$(job_pids)
    files=$([ -n "${nofiles:-}" ] || job_files)
    ms=$((($(date +%s%N) - t0) / 1000000))
    [ -z "$left$files" ] && break
    [ "$ms" -lt $((LIMIT_MS + 2000)) ] || break
    sleep 0.1
  done
  if [ -z "$left$files" ] && [ "$ms" -le "$LIMIT_MS" ]; then
    ok "$name on $where: nothing of the job left after $ms ms"
  else
    bad "$name on $where: left after $ms ms" \
      "$( [ -z "$left" ] || ps -o pid,ppid,pgid,stat,comm,args -p "$(echo "$left" | paste -sd,)")" \
      "$files" "stderr: $(cat "$tmp/err")"
    [ -z "$left" ] || kill -KILL $left 2>/dev/null || true
    [ -z "$files" ] || rm -rf $files
  fi
}

# The silent program that ignores SIGTERM and starts a child of its own; with "exit", it exits 0
# at once instead.
prog() {
  local loop='while :; do sleep 0.2; done'
  [ "${1:-}" != exit ] || loop='exit 0'
  echo "trap '' TERM; (exec -a child-$tag sleep 1000) & $loop"
}

n=2
for name in "${cases[@]}"; do
  tag="poprun-lifetime-$$-$RANDOM"
  nofiles=
  case $name in
  poprun-kill | term-kill | mpirun-kill)
    start up_children "$POPRUN" "${hosts[@]}" --num-instances 2 --num-replicas 2 \
      bash -c "$(prog)" || continue
    # mpirun forwards a signal to the other hosts' daemons only once it has wired its routes to
    # them, which may be after the programs start: a SIGUSR1 (poprun's graceful stop) before
    # then ends the job at once (OpenMPI 4.1: "ORTE does not know how to route a message to the
    # specified daemon"). The job is given a second to be running in full.
    sleep 1
    case $name in
    poprun-kill) kill -KILL "$pid" ;;
    term-kill)
      kill -TERM "$pid"
      sleep 0.5
      kill -KILL "$pid" 2>/dev/null || true # gone already if the stop ended the job
      ;;
    mpirun-kill) kill -KILL "$mp" ;;
    esac
    wait_gone
    set +e
    wait "$pid" 2>/dev/null
    rc=$?
    set -e
    if [ "$name" = mpirun-kill ]; then
      expect_rc "$name: poprun's status" 137
      # (On namespace hosts poprun first says once that it binds nothing.)
      if [ "$(grep -v '^poprun: instances are not bound to cores: ' "$tmp/err")" = "poprun: mpirun was killed by signal 9 (SIGKILL)" ]; then
        ok "$name: one line says so"
      else
        bad "$name: message" "$(cat "$tmp/err")"
      fi
    fi
    ;;
  exit)
    run timeout 60 "$POPRUN" "${hosts[@]}" --num-instances 2 --num-replicas 2 bash -c "$(prog exit)"
    expect_rc "$name: poprun's status" 0
    mp= jid= fam=
    wait_gone
    ;;
  plain-mpirun)
    # OpenMPI's own files of a killed mpirun stay (its session directory, its shared-memory
    # segments): they go to a temporary directory of this test, removed with it.
    mkdir -p "$tmp/plain"
    nofiles=1
    TMPDIR=$tmp/plain start up_probes mpirun --oversubscribe --mca btl_vader_backing_directory \
      "$tmp/plain" "${hosts[@]}" -np 2 "$PROBE" \
      --sleep 300 --stderr "$tag" || continue
    kill -KILL "$pid"
    wait_gone
    wait "$pid" 2>/dev/null || true
    ;;
  *)
    bad "unknown case $name"
    ;;
  esac
done

finish
