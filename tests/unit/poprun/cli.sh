#!/usr/bin/env bash
# poprun's command line end to end, without running any job: every usage error (exit 2 and its
# exact one-line message), --help, --version, --dry-run, --export-config/--import-config.
#
#   cli.sh POPRUN PROBE
set -euo pipefail
POPRUN=$1
PROBE=$2
source "$(dirname "$0")/lib.sh"

# --- usage errors: one clear line, exit 2 ---------------------------------------------------
expect_usage_error "not divisible" "10 replicas cannot be divided evenly among 4 instances" \
  --num-replicas 10 --num-instances 4 "$PROBE"
expect_usage_error "zero replicas" "--num-replicas must be a positive integer, not '0'" \
  --num-replicas 0 "$PROBE"
expect_usage_error "negative instances" "--num-instances must be a positive integer, not '-2'" \
  --num-instances -2 "$PROBE"
expect_usage_error "not a number" "--ipus-per-replica must be a positive integer, not 'two'" \
  --ipus-per-replica two "$PROBE"
expect_usage_error "missing program" \
  "no program to run (usage: poprun [options] PROGRAM [ARGS...])" --num-replicas 2
expect_usage_error "program not found" "/nonexistent/prog: not found or not executable" \
  /nonexistent/prog
printf 'data\n' >"$tmp/data.txt"
chmod 644 "$tmp/data.txt"
expect_usage_error "program not executable" "$tmp/data.txt: not found or not executable" \
  "$tmp/data.txt"
expect_usage_error "program not in PATH" "no-such-prog-xyz: not found in PATH or not executable" \
  no-such-prog-xyz
expect_usage_error "hosts" "3 instances cannot be divided evenly among 2 hosts" \
  --num-instances 3 --num-replicas 3 -H h1,h2 "$PROBE"
expect_usage_error "too many IPUs" \
  "512 IPUs (512 replicas x 1 IPU per replica) exceed the 256 IPUs of topology POD256" \
  --num-replicas 512 --topology POD256 "$PROBE"
expect_usage_error "too many IPUs, no topology" \
  "512 IPUs (256 replicas x 2 IPUs per replica) exceed the largest preset topology, POD256 (256 IPUs); describe a larger pod with --topology FILE" \
  --num-replicas 256 --ipus-per-replica 2 --num-instances 2 "$PROBE"
expect_usage_error "empty ILD" \
  "IPU-Link domain 1 would hold no instance (1 instance over 2 IPU-Link domains; each needs at least one)" \
  --num-replicas 128 "$PROBE"
expect_usage_error "ILDs beyond topology" \
  "--num-ilds 4 exceeds the 2 IPU-Link domains of topology POD128" \
  --num-replicas 8 --num-instances 4 --num-ilds 4 --topology POD128 "$PROBE"
expect_usage_error "unknown option" "unknown option '--num-replica' (see poprun --help)" \
  --num-replica 4 "$PROBE"
expect_usage_error "unknown short option" "unknown option '-n' (see poprun --help)" -n 4 "$PROBE"
expect_usage_error "malformed host list" "malformed host list 'h[1-': missing ']'" \
  -H 'h[1-' "$PROBE"
expect_usage_error "host list letters" "malformed host list 'h[a-c]': unexpected 'a'" \
  --host 'h[a-c]' "$PROBE"

# Inside a Slurm allocation: the variables as sbatch -N 2 --ntasks-per-node 2 sets them, and an
# srun on PATH (a stand-in: mpirun would start its daemons with it; nothing runs here).
mkdir -p "$tmp/slurm-bin" "$tmp/no-srun"
printf '#!/bin/sh\nexit 1\n' >"$tmp/slurm-bin/srun"
chmod 755 "$tmp/slurm-bin/srun"
saved_path=$PATH
export PATH="$tmp/slurm-bin:$PATH" SLURM_JOB_ID=12 SLURM_JOB_NODELIST='h[1-2]' SLURM_TASKS_PER_NODE='2(x2)'
expect_usage_error "allocation too small" \
  "8 instances exceed the 4 tasks of Slurm allocation 12 (SLURM_TASKS_PER_NODE=2(x2) on h[1-2]): ask Slurm for more tasks (sbatch -n, --ntasks-per-node) or start fewer instances" \
  --num-replicas 8 --num-instances 8 "$PROBE"
expect_usage_error "host not allocated" "host h3 (-H) is not a node of Slurm allocation 12 (h[1-2])" \
  -H h1,h3 --num-replicas 2 --num-instances 2 "$PROBE"
expect_usage_error "uneven allocation" \
  "3 instances cannot go to the nodes of Slurm allocation 12 the same number on each (SLURM_TASKS_PER_NODE=2(x2) on h[1-2]); name the hosts with -H, or ask for tasks that divide them" \
  --num-replicas 3 --num-instances 3 "$PROBE"
SLURM_JOB_NODELIST='h[1-' expect_usage_error "node list unparseable" \
  "Slurm allocation 12: SLURM_JOB_NODELIST: malformed host list 'h[1-': missing ']'" "$PROBE"
SLURM_TASKS_PER_NODE='2(x' expect_usage_error "tasks unparseable" \
  "Slurm allocation 12: SLURM_TASKS_PER_NODE=2(x is not understood (expected counts such as 2 or 2(x3), separated by commas)" \
  "$PROBE"
printf '#!/bin/sh\nPATH=%s exec %s "$@"\n' "$tmp/no-srun" "$POPRUN" >"$tmp/poprun-no-srun"
chmod 755 "$tmp/poprun-no-srun"
POPRUN=$tmp/poprun-no-srun expect_usage_error "no srun" \
  "SLURM_JOB_ID is set (Slurm allocation 12) but srun is not on PATH: mpirun starts its daemons on the nodes with srun (is Slurm installed?)" \
  "$PROBE"
# --dry-run shows the mapping: the allocation's line, then the instances on its nodes.
run timeout 20 "$POPRUN" --dry-run --num-replicas 8 --num-instances 4 "$PROBE"
if [ "$rc" -eq 0 ] &&
  [ "$(head -1 "$tmp/out")" = "Slurm allocation 12: nodes h[1-2] (SLURM_JOB_NODELIST), tasks 2(x2) (SLURM_TASKS_PER_NODE)" ] &&
  [ "$(awk '$1 ~ /^h[12]$/ && NF == 5 {printf "%s:%s ", $1, $3}' "$tmp/out")" = "h1:0 h1:1 h2:2 h2:3 " ] &&
  grep -q -- "--host h1:2,h2:2 .*--mca orte_launch_agent '$POPRUN --_orted' " "$tmp/out"; then
  ok "dry-run in an allocation"
else
  bad "dry-run in an allocation" "$(cat "$tmp/out" "$tmp/err")"
fi
export PATH=$saved_path
unset SLURM_JOB_ID SLURM_JOB_NODELIST SLURM_TASKS_PER_NODE
expect_usage_error "host and hostfile" "--host and --hostfile cannot be used together" \
  -H h1 --hostfile /dev/null "$PROBE"
expect_usage_error "only-output range" "--only-output-from-instance 4 is out of range (4 instances)" \
  --num-instances 4 --num-replicas 4 --only-output-from-instance 4 "$PROBE"
expect_usage_error "unknown topology" \
  "--topology POD32: not a preset (M2000, POD16, POD64, POD128, POD256) and not a file" \
  --topology POD32 "$PROBE"
expect_usage_error "missing value" "--num-replicas needs a value" --num-replicas
expect_usage_error "bad graceful timeout" \
  "--graceful-timeout must be a non-negative integer, not '1.5'" --graceful-timeout 1.5 "$PROBE"
expect_usage_error "bad max restarts" "--max-restarts must be a non-negative integer, not '-1'" \
  --max-restarts -1 "$PROBE"
expect_usage_error "elastic without min" \
  "--elastic needs --min-replicas M: the fewest replicas the job may go on with (1 to --num-replicas 8)" \
  --elastic --num-replicas 8 --num-instances 4 "$PROBE"
expect_usage_error "min above the job" \
  "--min-replicas 9 is more than the job's --num-replicas 8 (1 to 8 are accepted)" \
  --elastic --min-replicas 9 --num-replicas 8 --num-instances 4 "$PROBE"
expect_usage_error "min without elastic" \
  "--min-replicas 2 is only for an elastic job: add --elastic" \
  --min-replicas 2 --num-replicas 8 --num-instances 4 "$PROBE"
expect_usage_error "min zero" "--min-replicas must be a positive integer, not '0'" \
  --elastic --min-replicas 0 "$PROBE"
expect_usage_error "bad quoting" "--mpi-global-args: unterminated double quote" \
  --mpi-global-args '--mca "x' "$PROBE"
printf 'num-replicas = 4\nnum-instances = three\n' >"$tmp/bad.conf"
expect_usage_error "bad config" \
  "$tmp/bad.conf:2: --num-instances must be a positive integer, not 'three'" \
  --import-config "$tmp/bad.conf" "$PROBE"

# --- a malformed value of every option: one line, exit 2 -------------------------------------
expect_usage_error "bad --num-ilds" "--num-ilds must be a positive integer, not 'x'" \
  --num-ilds x "$PROBE"
expect_usage_error "bad --only-output-from-instance" \
  "--only-output-from-instance must be a non-negative integer, not 'one'" \
  --only-output-from-instance one "$PROBE"
expect_usage_error "bad --host" "malformed host list 'h[2-1]': range 2-1 runs backwards" \
  --host 'h[2-1]' "$PROBE"
expect_usage_error "bad --hostfile" "cannot read hostfile /nonexistent/hosts: No such file or directory" \
  --hostfile /nonexistent/hosts "$PROBE"
expect_usage_error "bad --mpi-local-args" "--mpi-local-args: ends with a lone backslash" \
  --mpi-local-args 'a\' "$PROBE"
expect_usage_error "bad -x" \
  "-x takes NAME or NAME=VALUE (NAME of letters, digits and '_'), not '=v'" -x =v "$PROBE"
expect_usage_error "-x without value" "-x needs a value" -x
for b in numa-aware print-topology offline-mode allow-run-as-root update-partition \
  reset-partition remove-partition synchronise-python-venv synchronise-poplar-sdk \
  distribute-ssh-key dry-run vv help version; do
  expect_usage_error "bad --$b" \
    "--$b takes a boolean (1/0, yes/no, on/off, true/false), not 'maybe'" "--$b=maybe" "$PROBE"
done
# A boolean's value as the next word is checked unless that word is an option or a program.
for b in print-topology numa-aware offline-mode dry-run; do
  expect_usage_error "bad --$b maybe" \
    "--$b takes a boolean (1/0, yes/no, on/off, true/false), not 'maybe' (and 'maybe' is no program: no such file on PATH)" \
    "--$b" maybe "$PROBE"
done
run "$POPRUN" --dry-run --print-topology "$PROBE"
if [ "$rc" -eq 0 ] && grep -q -- "-- $PROBE\$" "$tmp/out"; then
  ok "--print-topology PROGRAM: the program, not a value"
else
  bad "--print-topology PROGRAM" "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
fi
run "$POPRUN" --dry-run --print-topology sh -c true
if [ "$rc" -eq 0 ] && grep -q -- "-- sh -c true\$" "$tmp/out"; then
  ok "--print-topology sh (a program on PATH): the program"
else
  bad "--print-topology sh" "exit $rc" "$(cat "$tmp/out" "$tmp/err")"
fi
expect_usage_error "bad --process-placement" \
  "--process-placement takes one of spreadnuma,spreadcores,disabled, not 'roundrobin'" \
  --process-placement roundrobin "$PROBE"
expect_usage_error "bad --version-format" "--version-format takes one of text,json, not 'yaml'" \
  --version-format=yaml --version
expect_usage_error "bad --vipu-server-host" \
  "--vipu-server-host must be a host name or an IP address, not 'a b'" \
  --vipu-server-host 'a b' "$PROBE"
expect_usage_error "bad --vipu-server-port" \
  "--vipu-server-port must be a port from 1 to 65535, not '80a'" --vipu-server-port 80a "$PROBE"
expect_usage_error "bad --vipu-server-timeout" \
  "--vipu-server-timeout must be a positive number of seconds, not '0'" \
  --vipu-server-timeout=0 "$PROBE"
for v in vipu-partition vipu-cluster vipu-allocation; do
  expect_usage_error "bad --$v" \
    "--$v must be a name of letters, digits, '.', '_' and '-', not 'p/64'" "--$v=p/64" "$PROBE"
done
expect_usage_error "bad --host-subnet" \
  "--host-subnet must be a subnet such as 10.5.0.0/16 or an interface name, not '10.5.0/16'" \
  --host-subnet 10.5.0/16 "$PROBE"
expect_usage_error "empty --executable-cache-path" \
  "--executable-cache-path needs a non-empty path" --executable-cache-path= "$PROBE"
expect_usage_error "--executable-cache-path on a file" \
  "--executable-cache-path $tmp/data.txt is not a directory" \
  --executable-cache-path "$tmp/data.txt" "$PROBE"
expect_usage_error "bad --verbose" "--verbose takes a level from 0 to 9, not 'lots'" \
  --verbose=lots "$PROBE"
expect_usage_error "bad --export-config" "--export-config needs a non-empty path" \
  --export-config= "$PROBE"
expect_usage_error "bad --import-config" \
  "cannot read config /nonexistent.conf: No such file or directory" \
  --import-config /nonexistent.conf "$PROBE"
if [ "$(id -u)" -eq 0 ]; then
  expect_usage_error "root with --allow-run-as-root=no" \
    "refusing to run as root: --allow-run-as-root is off (leave it out, or say --allow-run-as-root=yes)" \
    --allow-run-as-root=no "$PROBE"
fi

# --- --help, the README's table, --version ---------------------------------------------------
run "$POPRUN" --_help-markdown
cp "$tmp/out" "$tmp/table"
missing=""
run "$POPRUN" --help
while IFS= read -r opt; do
  grep -q -- "^  .*$opt\( \|\$\)" "$tmp/out" || missing="$missing $opt"
done < <(grep '^| `-' "$tmp/table" | cut -d'|' -f2 | grep -o -- '--[a-z][a-z-]*')
rows=$(grep -c '^| `-' "$tmp/table")
if [ "$rc" -eq 0 ] && grep -q '^Usage: poprun \[options\] PROGRAM' "$tmp/out" &&
  [ -z "$missing" ] && [ "$(grep -c -- '^  -' "$tmp/out")" -eq "$rows" ] && [ "$rows" -ge 38 ]; then
  ok "--help lists every option ($rows), each with PopRun's meaning and ours"
else
  bad "--help" "exit $rc, missing:$missing, rows $rows" "$(head -20 "$tmp/out")"
fi
for readme in poprun/README.md docs/poprun.md; do
  path="$(dirname "$0")/../../../$readme"
  if python3 -c 'import sys; sys.exit(open(sys.argv[2]).read().find(open(sys.argv[1]).read()) < 0)' \
    "$tmp/table" "$path"; then
    ok "$readme holds the option table of poprun --_help-markdown"
  else
    bad "$readme option table" "regenerate it with: poprun --_help-markdown"
  fi
done
run "$POPRUN" --version --version-format json
if [ "$rc" -eq 0 ] && grep -Eq '^\{"name": "poprun", "version": "[0-9]+\.[0-9]+\.[0-9]+",' "$tmp/out"; then
  ok "--version-format json"
else
  bad "--version-format json" "$(cat "$tmp/out")"
fi
run "$POPRUN" --version
if [ "$rc" -eq 0 ] && grep -Eq '^poprun [0-9]+\.[0-9]+\.[0-9]+ ' "$tmp/out"; then
  ok "--version"
else
  bad "--version" "$(cat "$tmp/out")"
fi

# --- --dry-run: the plan and the exact mpirun command; nothing runs ---------------------------
root_flag=""
[ "$(id -u)" -eq 0 ] && root_flag="--allow-run-as-root "
probe_abs=$PROBE
run "$POPRUN" --dry-run -H 'h[1-2]' --num-instances 4 --num-replicas 16 \
  --mpi-global-args "--mca btl tcp,self -x 'A=a b'" --only-output-from-instance 1 "$PROBE" --sleep 1
sed -E 's/--_instance [0-9a-f]{16}/--_instance TOKEN/; s/-x POPRUN_JOB_ID=job-[0-9a-f]{16} //; s|/dev/shm/poprun-job-[0-9a-f]{16} |JOBDIR |' "$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<WANT
topology POD16: 16 IPUs in 1 IPU-Link domain
job: 16 replicas x 1 IPU = 16 IPUs; 4 instances on 2 hosts; 1 IPU-Link domain
host  ild  instance  replicas   ipus
h1    0    0         0-3        0-3
h1    0    1         4-7        4-7
h2    0    2         8-11       8-11
h2    0    3         12-15      12-15
mpirun command:
mpirun ${root_flag}--oversubscribe --bind-to none --host h1:2,h2:2 --map-by slot --mca oob_tcp_keepalive_time 2 --mca oob_tcp_keepalive_intvl 1 --mca oob_tcp_keepalive_probes 3 --mca btl tcp,self -x 'A=a b' -np 4 $POPRUN --_instance TOKEN --num-replicas 16 --num-instances 4 --ipus-per-replica 1 --num-ilds 1 --topology POD16 --host h1,h2 --process-placement=spreadcores --only-output-from-instance 1 -- $probe_abs --sleep 1
WANT
expect_rc "dry-run" 0
expect_same "dry-run output" "$tmp/want" "$tmp/got"

run "$POPRUN" --dry-run --num-instances 4 --num-replicas 8 --ipus-per-replica 16 "$PROBE"
sed -n 1,7p "$tmp/out" >"$tmp/got"
cat >"$tmp/want" <<'WANT'
topology POD128: 128 IPUs in 2 IPU-Link domains
job: 8 replicas x 16 IPUs = 128 IPUs; 4 instances on 1 host; 2 IPU-Link domains
host       ild  instance  replicas   ipus
localhost  0    0         0-1        0-31
localhost  0    1         2-3        32-63
localhost  1    2         4-5        64-95
localhost  1    3         6-7        96-127
WANT
expect_same "dry-run over two IPU-Link domains" "$tmp/want" "$tmp/got"

# --max-restarts: mpirun passes the restart count on to every host.
run "$POPRUN" --dry-run --max-restarts 2 --num-instances 2 --num-replicas 2 "$PROBE"
if grep -q -E -- "^mpirun ${root_flag}--oversubscribe --bind-to none --mca orte_tmpdir_base /dev/shm/poprun-job-[0-9a-f]{16} -x POPDIST_RESTART_COUNT -np 2 " "$tmp/out"; then
  ok "--max-restarts: -x POPDIST_RESTART_COUNT"
else
  bad "--max-restarts" "$(cat "$tmp/out" "$tmp/err")"
fi

# --elastic: mpirun goes on when an instance dies, and every host learns where the store is.
run "$POPRUN" --dry-run --elastic --min-replicas 2 --num-instances 2 --num-replicas 2 "$PROBE"
if grep -q -E -- " --enable-recovery -x GCL_ELASTIC_STORE -x GCL_ELASTIC_TOKEN -x GCL_ELASTIC_MIN_REPLICAS -np 2 " "$tmp/out"; then
  ok "--elastic: --enable-recovery and the store's variables"
else
  bad "--elastic" "$(cat "$tmp/out" "$tmp/err")"
fi

printf '# our cluster\nnode1 slots=2\nnode2\n' >"$tmp/hosts"
run "$POPRUN" --dry-run --hostfile "$tmp/hosts" --num-instances 2 --num-replicas 2 "$PROBE"
if grep -q -- '--host node1:1,node2:1 --map-by slot' "$tmp/out"; then
  ok "--hostfile"
else
  bad "--hostfile" "$(cat "$tmp/out" "$tmp/err")"
fi

# --- --export-config / --import-config round trip -------------------------------------------
run "$POPRUN" --dry-run --export-config "$tmp/job.conf" -H 'h[1-2]' --num-instances 4 \
  --num-replicas 16 --mpi-local-args "-x 'B=c d'" --offline-mode --topology POD64 "$PROBE" --sleep 1
sed -E 's/--_instance [0-9a-f]{16}/--_instance TOKEN/; s/-x POPRUN_JOB_ID=job-[0-9a-f]{16} //; s|/dev/shm/poprun-job-[0-9a-f]{16} |JOBDIR |' "$tmp/out" >"$tmp/direct"
run "$POPRUN" --dry-run --import-config "$tmp/job.conf"
sed -E 's/--_instance [0-9a-f]{16}/--_instance TOKEN/; s/-x POPRUN_JOB_ID=job-[0-9a-f]{16} //; s|/dev/shm/poprun-job-[0-9a-f]{16} |JOBDIR |' "$tmp/out" >"$tmp/imported"
expect_rc "import-config" 0
expect_same "config round trip gives the same plan and command" "$tmp/direct" "$tmp/imported"
run "$POPRUN" --dry-run --import-config "$tmp/job.conf" --num-replicas 8 --offline-mode=false
if grep -q 'job: 8 replicas' "$tmp/out" && ! grep -q -- '--offline-mode' "$tmp/out" &&
  grep -q -- "-- $probe_abs --sleep 1\$" "$tmp/out"; then
  ok "command line overrides the config file"
else
  bad "command line overrides the config file" "$(cat "$tmp/out" "$tmp/err")"
fi

# --- options that do something here, and those that are only reported --------------------------
run "$POPRUN" --dry-run --host-subnet 10.77.0.0/24 -x A=1 --mpi-local-args "-x B" \
  --mpi-local-args=-x\ C --process-placement spreadnuma --executable-cache-path "$tmp/cache" \
  --vipu-partition p64 --vipu-partition p65 --update-partition=no --vipu-server-timeout 300 \
  --num-replicas 4 --num-instances 2 "$PROBE"
cat >"$tmp/want" <<'WANT'
poprun: --vipu-server-timeout has no effect on simulated IPUs
poprun: --vipu-partition has no effect on simulated IPUs
poprun: --update-partition has no effect on simulated IPUs
WANT
expect_same "V-IPU options are reported once each" "$tmp/want" "$tmp/err"
if grep -q -- "--mca btl_tcp_if_include 10.77.0.0/24 --mca oob_tcp_if_include 10.77.0.0/24 -np 2 -x POPRUN_JOB_ID=job-[0-9a-f]* -x A=1 -x B -x C " "$tmp/out" &&
  grep -q -- "--process-placement=spreadnuma --host-subnet 10.77.0.0/24 --executable-cache-path $tmp/cache -- " "$tmp/out" &&
  [ ! -e "$tmp/cache" ]; then
  ok "--host-subnet, -x, repeated --mpi-local-args, placement and cache path reach mpirun"
else
  bad "options reach mpirun" "$(cat "$tmp/out")"
fi

finish
