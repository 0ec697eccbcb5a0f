#!/usr/bin/env bash
# bad_input.sh MODE POPRUN GCL_BENCH TRAIN GCL_INFO DATA_DIR SIM_STEP ALLREDUCE_CHECK NCCL_BIN_DIR
#
# Every entry point fed bad input: every option of gcl-bench and train, and every GCL_* variable
# of `gcl-info`, with invalid values (empty, not a number, negative, zero, huge, unknown names,
# missing values, misspelled flags), train on broken data files and checkpoints, and rows for
# sim-step, allreduce-check and the nccl-tests tools. poprun's own options are covered by
# tests/unit/poprun/cli.sh and every flag of the nccl-tests tools by
# tests/multiproc/nccl_tests.sh; the rows here add what they lack (a malformed topology file,
# poprun passing a bad GCL_* variable through to every instance, a misspelled flag, each tool).
# A row's PATTERN names the bad value and, where the program can say it, what is accepted.
#
# Each row of the table below: STATUS | PATTERN | COMMAND. Asserted for every row:
#   - the exit status is STATUS (2: a usage error; 1: a runtime input error such as a corrupt
#     data file; 1/2: either), never 0, never a signal, never a hang (30 s);
#   - a line on stderr matches PATTERN (it names the bad option, variable or file).
# MODE "strict" also asserts that stderr holds exactly that one line. Under poprun, every
# instance refuses on its own and poprun closes with a line naming the first that failed
# ("poprun: instance 0 (host h) exited with status 2"): there the closing line is not counted,
# and the same line from several instances (another "[instance N]" and host:pid prefix) counts
# once. MODE "safe" does not count lines.
#
# COMMAND words: BENCH, TRAIN, POPRUN, SIMSTEP, CHECK, DATA and NCCL stand for the programs,
# DATA_DIR and the nccl-tests tools' directory (NCCL/all_reduce_perf); FT is the test's
# temporary directory; words of the form NAME=VALUE before the program are put in its
# environment; {x80} is 80 x's.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"

[ $# -eq 9 ] || {
  echo "usage: $0 safe|strict POPRUN GCL_BENCH TRAIN GCL_INFO DATA_DIR SIM_STEP ALLREDUCE_CHECK" \
    "NCCL_BIN_DIR" >&2
  exit 2
}
mode=$1
# Absolute paths: the commands run in the temporary directory.
poprun=$(readlink -f "$2") bench=$(readlink -f "$3") train=$(readlink -f "$4")
info=$(readlink -f "$5") data=$(readlink -f "$6") simstep=$(readlink -f "$7")
check=$(readlink -f "$8") nccl=$(readlink -f "$9")
faults_init "bad-input-$mode"
mnist=${TRAIN_TEST_DATA:-/usr/share/datasets/fashion-mnist}

# Training data with one broken file each (links to the real files otherwise).
make_data() { # make_data NAME FILE CONTENT-FILE
  local d=$FT/data-$1
  mkdir -p "$d"
  local f
  for f in train-images-idx3-ubyte train-labels-idx1-ubyte t10k-images-idx3-ubyte \
           t10k-labels-idx1-ubyte; do
    [ -e "$mnist/$f.gz" ] && ln -s "$mnist/$f.gz" "$d/$f.gz"
  done
  rm -f "$d/$2.gz"
  cp "$3" "$d/$2.gz"
}
if [ -e "$mnist/train-labels-idx1-ubyte.gz" ]; then
  make_data trunc train-labels-idx1-ubyte "$data/idx/labels-truncated.gz"
  make_data corrupt t10k-labels-idx1-ubyte "$data/idx/labels-corrupt.gz"
  make_data magic train-images-idx3-ubyte "$data/idx/labels-ok.idx"
  have_mnist=1
else
  have_mnist=0
fi
# A checkpoint directory holding only a corrupt checkpoint, and one holding the overflowing one.
mkdir -p "$FT/ckpt-corrupt" "$FT/ckpt-overflow"
cp "$data/ckpt-flipped-bit.gclt" "$FT/ckpt-corrupt/ckpt-0000000005.gclt"
cp "$data/ckpt-size-overflow.gclt" "$FT/ckpt-overflow/ckpt-0000000005.gclt"
echo "not a directory" >"$FT/plainfile"
chmod 0600 "$FT/ckpt-corrupt"/* "$FT/ckpt-overflow"/*

table=$(cat <<'EOF'
# ---- gcl-bench: the collective and every option
2 | name a collective | BENCH
2 | collective 'foo' | BENCH foo
2 | collective '' | BENCH ''
2 | -b needs a value | BENCH all_reduce -b
2 | -b 'x' | BENCH all_reduce -b x
2 | -b '-1' | BENCH all_reduce -b -1
2 | -b '99999999999G' | BENCH all_reduce -b 99999999999G
2 | -b '' | BENCH all_reduce -b ''
2 | -e 'ten' | BENCH all_reduce -e ten
2 | --minbytes '4Q' | BENCH all_reduce --minbytes 4Q
2 | --maxbytes '-5' | BENCH all_reduce --maxbytes -5
2 | -f '1' | BENCH all_reduce -f 1
2 | -f '0' | BENCH all_reduce -f 0
2 | --stepfactor 'x' | BENCH all_reduce --stepfactor x
2 | -n '0' | BENCH all_reduce -n 0
2 | -n '-3' | BENCH all_reduce -n -3
2 | --iters '1e99' | BENCH all_reduce --iters 1e99
2 | -n '99999999999999999999': expected auto or an integer from 1 to 1000000 | BENCH all_reduce -n 99999999999999999999
2 | -n '2000000': expected auto or an integer from 1 to 1000000 | BENCH all_reduce -n 2000000
2 | -w '-1' | BENCH all_reduce -w -1
2 | --warmup 'x' | BENCH all_reduce --warmup x
2 | -t 'f99' | BENCH all_reduce -t f99
2 | --type '' | BENCH all_reduce --type ''
2 | -o 'avg' | BENCH all_reduce -o avg
2 | --op '' | BENCH all_reduce --op ''
2 | -g 'some' | BENCH all_reduce -g some
2 | --group 'consecutive:x' | BENCH all_reduce --group consecutive:x
2 | -g 'orthogonal:0' | BENCH all_reduce -g orthogonal:0
2 | -r 'x' | BENCH broadcast -r x
2 | --root '-1' | BENCH broadcast --root -1
2 | --compare 'foo' | BENCH all_reduce --compare foo
2 | --replicas '0' | BENCH all_reduce --replicas 0
2 | --replicas '100000' | BENCH all_reduce --replicas 100000
2 | --json needs a value | BENCH all_reduce --json
2 | --topology needs a value | BENCH all_reduce --topology
2 | unknown option '--bogus' | BENCH all_reduce --bogus
2 | unknown option '--checkk' | BENCH all_reduce --checkk
2 | unknown option '--checkk' | BENCH all_reduce --checkk 1
2 | --sizes '8,,1K': item 2 \(''\) is not a size; expected sizes like | BENCH all_reduce --sizes 8,,1K
2 | --sizes '8,1K,': item 3 | BENCH all_reduce --sizes 8,1K,
2 | --sizes '4,x': item 2 \('x'\) | BENCH all_reduce --sizes 4,x
2 | -z | BENCH all_reduce -z
2 | -b '1M': the smallest size is larger than the largest \(-e '1K'\); expected at most 1024 bytes | BENCH all_reduce -b 1M -e 1K
2 | --check with --phantom | BENCH all_reduce --check --phantom
2 | --latency with --phantom | BENCH all_reduce --latency --phantom
# An algorithm the collective lacks, an operator its type does not take: refused before
# anything runs, as the library judges them. A root outside the group: refused once the
# replica count is known (after gcl_init), before anything runs; so are a group that does not
# divide the replicas and a --json or --csv file that cannot be written.
2 | -g 'consecutive:3': a group of 3 does not divide the 4 replicas; expected all, or | BENCH all_reduce -g consecutive:3 -e 4K
2 | -g 'orthogonal:8': a group of 8 does not divide the 4 replicas | BENCH all_reduce -g orthogonal:8 -e 4K
2 | -g 'consecutive:3': a group of 3 does not divide the 4 replicas | POPRUN --num-replicas 4 --num-instances 2 BENCH all_reduce -g consecutive:3 -e 4K
2 | -r '7': expected a rank of the group, 0 to 3 | BENCH broadcast -r 7 -e 4K
2 | -r '3': expected a rank of the group, 0 to 1 | BENCH broadcast -g consecutive:2 -r 3 -e 4K
2 | -a 'nope': all_reduce has no such algorithm; expected auto, | BENCH all_reduce -a nope -e 4K
2 | -a 'ring2': barrier has no such algorithm | BENCH barrier -a ring2
2 | -o 'logical_and': not defined on f32 | BENCH all_reduce -o logical_and -e 4K
2 | -o 'mean': not defined on i32 | BENCH all_reduce -t i32 -o mean -e 4K
2 | -t 'bool': the default operator \(-o sum\) is not defined | BENCH reduce_scatter -t bool
2 | POD9 | BENCH all_reduce --topology POD9
2 | bad-decimal.topo:2: | BENCH all_reduce --topology DATA/topo/bad-decimal.topo
2 | POD16 | BENCH all_reduce --replicas 512 --topology POD16
2 | --json '/nonexistent/x.json': cannot write it \(No such file or directory\); expected | BENCH all_reduce --json /nonexistent/x.json -e 4K -n 1 -w 0
2 | --csv '/nonexistent/x.csv': cannot write it | BENCH all_reduce --csv /nonexistent/x.csv -e 4K -n 1 -w 0
# ---- train: every option
2 | --data needs a value | TRAIN --data
2 | --train-samples '0' | TRAIN --train-samples 0
2 | --test-samples 'x' | TRAIN --test-samples x
2 | --hidden '' | TRAIN --hidden ''
2 | --hidden '64,,32' | TRAIN --hidden 64,,32
2 | --hidden '0' | TRAIN --hidden 0
2 | --hidden '99999999999' | TRAIN --hidden 99999999999
2 | --hidden '1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16' | TRAIN --hidden 1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16
2 | --epochs '0' | TRAIN --epochs 0
2 | --epochs needs a value | TRAIN --epochs
2 | --max-steps '-1' | TRAIN --max-steps -1
2 | --batch-size 'x' | TRAIN --batch-size x
2 | --batch-size '0' | TRAIN --batch-size 0
2 | --gradient-accumulation '0' | TRAIN --gradient-accumulation 0
2 | --optimizer 'rmsprop' | TRAIN --optimizer rmsprop
2 | --lr '-1' | TRAIN --lr -1
2 | --lr 'nan' | TRAIN --lr nan
2 | --lr '1e999' | TRAIN --lr 1e999
2 | --lr-schedule 'step' | TRAIN --lr-schedule step
2 | --warmup-steps 'x' | TRAIN --warmup-steps x
2 | --momentum '2' | TRAIN --momentum 2
2 | --weight-decay '-0.1' | TRAIN --weight-decay -0.1
2 | --seed '-3' | TRAIN --seed -3
2 | --grad-dtype 'i32' | TRAIN --grad-dtype i32
2 | --grad-scale '0' | TRAIN --grad-scale 0
2 | --replicas '0' | TRAIN --replicas 0
2 | --ipus-per-replica '0' | TRAIN --ipus-per-replica 0
2 | --pipeline-schedule 'zigzag' | TRAIN --pipeline-schedule zigzag
2 | --checkpoint needs a value | TRAIN --checkpoint
2 | --checkpoint-every '0' | TRAIN --checkpoint-every 0
2 | --keep-checkpoints '0' | TRAIN --keep-checkpoints 0
2 | --resume | TRAIN --resume
2 | --json needs a value | TRAIN --json
2 | --save-weights needs a value | TRAIN --save-weights
2 | --log-every 'x' | TRAIN --log-every x
2 | --progress 'loud' | TRAIN --progress loud
2 | --fault 'boom:1' | TRAIN --fault boom:1
2 | --fault 'kill-after-step:x' | TRAIN --fault kill-after-step:x
2 | --frobnicate | TRAIN --frobnicate 1
2 | unknown option '--checkk' | TRAIN --checkk
2 | 4 pipeline stages \(--ipus-per-replica\) but the model has only 3 layers to split; expected at most 3 stages | TRAIN --ipus-per-replica 4
# ---- sim-step: the model, the stage count, options
2 | needed: resnet50, bert-large or a model file | SIMSTEP
2 | --model: cannot open model file 'foo': No such file or directory; expected resnet50, bert-large or a model file | SIMSTEP --model foo
2 | --model: cannot open model file 'FT': Is a directory; expected resnet50, bert-large or a model file | SIMSTEP --model FT
1/2 | --stages 8: out of simulated IPU memory: stage 1 .*; stage counts that fit: 1-3, 6, 13, 14, 18-25, 164-175$ | SIMSTEP --model resnet50 --stages 8
2 | --stages '0': expected an integer from 1 to 256 | SIMSTEP --model resnet50 --stages 0
2 | --micro-batch 'x': expected an integer from 1 to | SIMSTEP --model resnet50 --micro-batch x
2 | --sequence-length '300': expected 128 or 512 | SIMSTEP --model bert-large --sequence-length 300
2 | --schedule 'zigzag': expected popart, gpipe or 1f1b | SIMSTEP --model resnet50 --schedule zigzag
2 | --optimizer 'rmsprop': expected sgd, momentum, lars, lamb or adam | SIMSTEP --model resnet50 --optimizer rmsprop
2 | --grad-type 'f64': expected f16 or f32 | SIMSTEP --model resnet50 --grad-type f64
2 | --replicas '0': expected an integer from 1 to 4096 | SIMSTEP --model resnet50 --replicas 0
2 | 'foo' is not a layer of resnet50 | SIMSTEP --model resnet50 --stages 2 --pipeline-splits foo
2 | cannot open topology file 'FT': Is a directory | SIMSTEP --model resnet50 --topology FT
2 | unknown option '--checkk' | SIMSTEP --model resnet50 --checkk
# ---- allreduce-check
2 | unknown option '--checkk' | CHECK --checkk
2 | unknown option '--checkk' | CHECK --checkk 1
2 | --sizes needs a value | CHECK --sizes
2 | --sizes '8,,1K': item 2 \(''\) is not valid; expected sizes like 0,4,1K,64M | CHECK --sizes 8,,1K
2 | --sizes 'x': item 1 \('x'\) is not valid; expected sizes like | CHECK --sizes x
2 | --groups 'consecutive:3': a group of 3 does not divide the 4 replicas; expected all, or | CHECK --groups consecutive:3
2 | --groups 'all,,all': item 2 | CHECK --groups all,,all
2 | --types 'f64': item 1 \('f64'\) is not valid; expected f32 and f16 | CHECK --types f64
2 | --ops 'prod': item 1 \('prod'\) is not valid; expected sum, mean, max and min | CHECK --ops prod
2 | --iterations '0': expected an integer from 1 to 1073741824 | CHECK --iterations 0
2 | unexpected argument 'extra' | CHECK extra
# ---- the nccl-tests tools (every flag of all_reduce_perf: tests/multiproc/nccl_tests.sh)
2 | invalid sizes for 'minbytes' and 'maxbytes': 1048576 > 1024; expected -b at most -e | NCCL/all_reduce_perf -b 1M -e 1K
2 | unknown option '--checkk' | NCCL/all_reduce_perf --checkk
2 | -b 'x': expected a size such as 8, 64K or 128M | NCCL/reduce_scatter_perf -b x
2 | -d 'f64': expected int32, uint32, int64, uint64, half, float, bfloat16 or all | NCCL/all_gather_perf -d f64
2 | -r 9: expected a rank from 0 to 0, or all | NCCL/broadcast_perf -r 9 -b 8 -e 8
2 | -g '0': expected an integer from 1 to 1024 | NCCL/alltoall_perf -g 0
2 | missing value for '-e' | NCCL/alltoall_perf -e
# ---- train: data files and checkpoints (exit 1: the input, not the command line, is wrong)
1 | /nonexistent | TRAIN --data /nonexistent
1 | train-labels-idx1-ubyte.gz: .*unexpected end of file | MNIST TRAIN --data FT/data-trunc --epochs 1
1 | t10k-labels-idx1-ubyte.gz.*corrupt | MNIST TRAIN --data FT/data-corrupt --epochs 1
1 | train-images-idx3-ubyte.gz.*not an IDX file | MNIST TRAIN --data FT/data-magic --epochs 1
1 | FT/plainfile | TRAIN --checkpoint FT/plainfile
# ---- every GCL_* variable of gcl-info, with a value it refuses
2 | GCL_LOG_LEVEL | GCL_LOG_LEVEL=loud BENCH all_reduce -e 4K
2 | GCL_LOG_LEVEL | GCL_LOG_LEVEL= BENCH all_reduce -e 4K
2 | GCL_LOG_SUBSYS | GCL_LOG_SUBSYS=coll,foo BENCH all_reduce -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=abc BENCH all_reduce -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=0 BENCH all_reduce -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=-1 BENCH all_reduce -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=1e10 BENCH all_reduce -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=nan BENCH all_reduce -e 4K
2 | GCL_STALL_WARN_S | GCL_STALL_WARN_S=soon BENCH all_reduce -e 4K
2 | GCL_STALL_WARN_S | GCL_STALL_WARN_S= BENCH all_reduce -e 4K
2 | GCL_SPIN_COUNT | GCL_SPIN_COUNT=-2 BENCH all_reduce -e 4K
2 | GCL_SPIN_COUNT | GCL_SPIN_COUNT=1.5 BENCH all_reduce -e 4K
2 | GCL_SHM_CHUNK_BYTES | GCL_SHM_CHUNK_BYTES=100 BENCH all_reduce -e 4K
2 | GCL_SHM_CHUNK_BYTES | GCL_SHM_CHUNK_BYTES=99999999999999999999 BENCH all_reduce -e 4K
2 | GCL_SHM_CHUNKS | GCL_SHM_CHUNKS=0 BENCH all_reduce -e 4K
2 | GCL_SHM_CHUNKS | GCL_SHM_CHUNKS=65 BENCH all_reduce -e 4K
2 | GCL_SHM_SLOTS | GCL_SHM_SLOTS=x BENCH all_reduce -e 4K
2 | GCL_SHM_DIRECT_BYTES | GCL_SHM_DIRECT_BYTES=1K BENCH all_reduce -e 4K
2 | GCL_SHM_CMA | GCL_SHM_CMA=2 BENCH all_reduce -e 4K
2 | GCL_LOG_TIME | GCL_LOG_TIME=yes BENCH all_reduce -e 4K
2 | GCL_DIRECT_MIN_BYTES | GCL_DIRECT_MIN_BYTES=-1 BENCH all_reduce -e 4K
2 | GCL_EAGER_MAX_BYTES | GCL_EAGER_MAX_BYTES=2000000 BENCH all_reduce -e 4K
2 | GCL_MPI_CHUNK_BYTES | GCL_MPI_CHUNK_BYTES=0 BENCH all_reduce -e 4K
2 | GCL_TRANSPORT | GCL_TRANSPORT=carrier-pigeon BENCH all_reduce -e 4K
2 | GCL_OFI_PROVIDER | GCL_OFI_PROVIDER={x80} BENCH all_reduce -e 4K
2 | GCL_OFI_IFACE | GCL_OFI_IFACE={x80} BENCH all_reduce -e 4K
2 | GCL_OFI_CHUNK_BYTES | GCL_OFI_CHUNK_BYTES=4095 BENCH all_reduce -e 4K
2 | GCL_TCP_IFACE | GCL_TCP_IFACE={x80} BENCH all_reduce -e 4K
2 | GCL_TCP_CHUNK_BYTES | GCL_TCP_CHUNK_BYTES=4095 BENCH all_reduce -e 4K
2 | GCL_HEAP_KEEP_BYTES | GCL_HEAP_KEEP_BYTES=-1 BENCH all_reduce -e 4K
2 | GCL_HEAP_KEEP_BYTES | GCL_HEAP_KEEP_BYTES=64M BENCH all_reduce -e 4K
2 | GCL_SIM_PHANTOM | GCL_SIM_PHANTOM=2 BENCH all_reduce -e 4K
2 | GCL_SIM_PHANTOM | GCL_SIM_PHANTOM=yes BENCH all_reduce -e 4K
2 | POD9 | GCL_TOPOLOGY=POD9 BENCH all_reduce -e 4K
2 | unknown-key.topo:2: | GCL_TOPOLOGY=DATA/topo/unknown-key.topo BENCH all_reduce -e 4K
2 | GCL_SIM_REPORT | GCL_SIM_REPORT={x80}{x80}{x80}{x80} BENCH all_reduce -e 4K
2 | GCL_SIM_TRACE | GCL_SIM_TRACE={x80}{x80}{x80}{x80} BENCH all_reduce -e 4K
2 | GCL_SIM_TRACE_EVENTS | GCL_SIM_TRACE_EVENTS=0 BENCH all_reduce -e 4K
2 | GCL_OPTIONS | GCL_OPTIONS={"method":"fastest"} BENCH all_reduce -e 4K
2 | GCL_OPTIONS | GCL_OPTIONS=method=ring BENCH all_reduce -e 4K
2 | GCL_OPTIONS | GCL_OPTIONS={"method":"ring" BENCH all_reduce -e 4K
2 | GCL_ALLREDUCE_ALGO | GCL_ALLREDUCE_ALGO=nope BENCH all_reduce -e 4K
2 | GCL_REDUCE_SCATTER_ALGO | GCL_REDUCE_SCATTER_ALGO=ring2 BENCH reduce_scatter -e 4K
2 | GCL_ALLGATHER_ALGO | GCL_ALLGATHER_ALGO= BENCH all_gather -e 4K
2 | GCL_BROADCAST_ALGO | GCL_BROADCAST_ALGO=tree BENCH broadcast -e 4K
2 | GCL_ALLTOALL_ALGO | GCL_ALLTOALL_ALGO=x BENCH all_to_all -e 4K
2 | GCL_BARRIER_ALGO | GCL_BARRIER_ALGO=butterfly BENCH barrier -e 4K
2 | GCL_TIMEOUT_S | GCL_TIMEOUT_S=abc TRAIN --epochs 1
2 | GCL_FAULT_INJECT | GCL_FAULT_INJECT=bad:1 BENCH all_reduce -e 4K
2 | GCL_FAULT_INJECT | GCL_FAULT_INJECT=alloc:0 BENCH all_reduce -e 4K
2 | GCL_FAULT_INJECT | GCL_FAULT_INJECT=alloc:3,alloc:4 BENCH all_reduce -e 4K
2 | GCL_FAULT_INJECT | GCL_FAULT_INJECT=post:1@ BENCH all_reduce -e 4K
2 | GCL_NUM_LOCAL_REPLICAS | GCL_NUM_LOCAL_REPLICAS=0 BENCH all_reduce -e 4K
2 | GCL_IPUS_PER_REPLICA | GCL_IPUS_PER_REPLICA=abc BENCH all_reduce -e 4K
2 | GCL_HEARTBEAT_S | GCL_HEARTBEAT_S=-1 BENCH all_reduce -e 4K
2 | GCL_PEER_TIMEOUT_S | GCL_PEER_TIMEOUT_S=1e10 BENCH all_reduce -e 4K
# ---- poprun: what tests/unit/poprun/cli.sh lacks
2 | unknown-key.topo:2: | POPRUN --topology DATA/topo/unknown-key.topo BENCH all_reduce
2 | binary.topo:1: | POPRUN --topology DATA/topo/binary.topo BENCH all_reduce
2 | GCL_SHM_SLOTS | GCL_SHM_SLOTS=0 POPRUN --num-replicas 4 --num-instances 2 BENCH all_reduce -e 4K
2 | unknown option '--checkk' | POPRUN --checkk BENCH all_reduce
2 | --num-replicas must be a positive integer, not '0' | POPRUN --num-replicas 0 BENCH all_reduce
EOF
)

# Every variable that gcl-info lists has a row above.
for v in $("$info" | grep -o '^GCL_[A-Z0-9_]*'); do
  grep -q "| $v=" <<<"$table" || fail "no row for $v (gcl-info lists it)"
done

# count_lines PROGRAM STATUS FILE: the lines of FILE as strict mode counts them (see the top).
count_lines() {
  if [ "$1" != "$poprun" ]; then
    wc -l <"$3"
    return
  fi
  { grep -Ev "^poprun: instance [0-9]+ \(host [^)]*\) exited with status $2\$" "$3" || true; } |
    sed -E 's/^\[instance [0-9]+\] //; s/^[^ :]+:[0-9]+:[0-9-]+\/[0-9-]+ GCL /GCL /' |
    sort -u | wc -l
}

failures=() multi=()
rows=0
while IFS= read -r row; do
  case $row in '#'* | '') continue ;; esac
  want=$(sed 's/ *|.*//' <<<"$row")
  pattern=$(sed 's/^[^|]*| //; s/ | .*//' <<<"$row")
  cmd=$(sed 's/^[^|]*|[^|]*| //' <<<"$row")
  cmd=${cmd//\{x80\}/$(printf 'x%.0s' {1..80})}
  pattern=${pattern//FT/$FT}
  pattern=${pattern//DATA/$data}
  [[ $cmd == MNIST* ]] && { [ "$have_mnist" -eq 1 ] || continue; cmd=${cmd#MNIST }; }
  # The words, with the placeholders filled in ('' is an empty word).
  words=() envs=()
  for w in $cmd; do
    case $w in
      BENCH) w=$bench ;; TRAIN) w=$train ;; POPRUN) w=$poprun ;;
      SIMSTEP) w=$simstep ;; CHECK) w=$check ;; NCCL/*) w=$nccl/${w#NCCL/} ;;
      "''") w= ;;
    esac
    w=${w//FT/$FT}
    w=${w//DATA/$data}
    if [ ${#words[@]} -eq 0 ] && [[ $w == GCL_*=* ]]; then envs+=("$w"); else words+=("$w"); fi
  done
  rows=$((rows + 1))
  status=0
  (cd "$FT" && marked env "${envs[@]}" timeout -k 5 30 "${words[@]}" >"$FT/out" 2>"$FT/err" </dev/null) ||
    status=$?
  problem=
  if [ "$status" -ge 124 ]; then
    problem="exit status $status (a signal or a hang)"
  elif [ "$status" -ne "${want%/*}" ] && [ "$status" -ne "${want#*/}" ]; then
    problem="exit status $status, expected $want"
  elif ! grep -Eq -- "$pattern" "$FT/err"; then
    problem="no line on stderr matches /$pattern/"
  fi
  if [ -n "$problem" ]; then
    failures+=("$cmd: $problem")
    echo "FAIL  $cmd: $problem"
    sed 's/^/      stderr: /' "$FT/err" | awk 'NR <= 5'
    continue
  fi
  lines=$(count_lines "${words[0]}" "$status" "$FT/err")
  if [ "$lines" -ne 1 ]; then
    multi+=("$cmd ($lines lines)")
    echo "ok    $cmd: status $status; $lines lines on stderr:"
    sed 's/^/      /' "$FT/err" | awk 'NR <= 4'
  else
    echo "ok    $cmd: status $status: $(tr '\n' ' ' <"$FT/err")"
  fi
done <<<"$table"
wait_no_marked 10 || fail "processes are left"
[ "$rows" -gt 100 ] || fail "only $rows rows ran"
[ ${#failures[@]} -eq 0 ] || fail "${#failures[@]} of $rows rows failed: $(printf '%s; ' "${failures[@]}")"
if [ "$mode" = strict ] && [ ${#multi[@]} -gt 0 ]; then
  fail "$rows rows refused with the right status and message, but ${#multi[@]} print more than" \
    "one line on stderr: $(printf '%s; ' "${multi[@]}")"
fi
pass "$rows rows: each refused with the right status and a line naming the problem" \
  "(${#multi[@]} with more than one line)"
