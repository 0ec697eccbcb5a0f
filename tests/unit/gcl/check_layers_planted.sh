#!/usr/bin/env bash
# check-layers catches what it is there to catch: in a copy of the source tree, each violation
# below is planted alone, and check-layers --sources-only must fail naming it; the copy as it
# is must pass. (The real tree, with its objects' symbols, is checked by ctest check_layers.)
set -euo pipefail
src=$(cd "$(dirname "$0")/../../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/gcl-layers.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0

fresh() {
  rm -rf "$work/tree"
  mkdir -p "$work/tree/scripts"
  cp "$src/scripts/check-layers" "$work/tree/scripts/"
  for d in gcl sim collectives choice poprun examples; do cp -r "$src/$d" "$work/tree/$d"; done
}

# expect NAME PATTERN: check-layers fails, and one of its lines matches PATTERN.
expect() {
  local out rc=0
  out=$(python3 "$work/tree/scripts/check-layers" --root "$work/tree" --sources-only 2>&1) || rc=$?
  if [ "$rc" -ne 1 ] || ! grep -qE "$2" <<<"$out"; then
    echo "FAILED: $1: exit $rc, expected 1 and a line matching /$2/; got:"
    echo "$out" | awk 'NR <= 5'
    fails=$((fails + 1))
  else
    echo "ok: $1: $(grep -E "$2" <<<"$out" | awk 'NR <= 1')"
  fi
}

fresh
if ! python3 "$work/tree/scripts/check-layers" --root "$work/tree" --sources-only; then
  echo "FAILED: the copy as it is does not pass"
  fails=$((fails + 1))
fi

fresh # a header of the lowest room includes one of the engine's
sed -i '0,/#include "base\/param.h"/s//#include "base\/param.h"\n#include "engine\/exec.h"/' \
  "$work/tree/gcl/src/base/wait.h"
expect "upward include in a header" 'upward arrow in gcl/src from base to engine: gcl/src/base/wait.h includes engine/exec.h'

fresh # a transport that knows a communicator
printf '\nstruct gcl_comm;\nint gcl_planted(struct gcl_comm *c);\n' >>"$work/tree/gcl/src/transport/wire.h"
expect "a transport knowing a communicator" 'transport/wire.h:[0-9]+: the transport knows struct gcl_comm'

fresh # a circle inside a room: the job's layout includes the diagnostics, which include it
sed -i '0,/#include "base\/err.h"/s//#include "base\/err.h"\n#include "job\/diag.h"/' \
  "$work/tree/gcl/src/job/job.h"
expect "a circle of files" 'circle of files in gcl/src: .*job/diag->job/job.*job/job->job/diag|circle of files in gcl/src: .*job/job->job/diag'

fresh # a circle in sim/: a header of one module including another that includes it back
sed -i '0,/#include "sim\/base\/time.h"/s//#include "sim\/base\/time.h"\n#include "sim\/report\/report.h"/' \
  "$work/tree/sim/include/sim/report/trace.h"
expect "a circle of files in sim/" 'circle of files in sim/: .*report/report->report/trace'

fresh # sim/'s rooms: the device room's memory accounting reaching up to the schedule
sed -i '0,/#include "sim\/device\/memory.h"/s//#include "sim\/device\/memory.h"\n#include "sim\/schedule\/pipeline.h"/' \
  "$work/tree/sim/src/device/memory.c"
expect "an upward arrow in sim/" 'upward arrow in sim from device to schedule: sim/src/device/memory.c includes sim/schedule/pipeline.h'

fresh # sim/: a folder that is no room
mkdir -p "$work/tree/sim/src/misc"
printf '#include "sim/base/time.h"\n' >"$work/tree/sim/src/misc/x.c"
expect "a sim/ file outside the rooms" 'sim/misc/x: misc/ is not a room of sim'

fresh # poprun's sibling rooms: the launcher reaching into the wrapper
sed -i '0,/#include "common\/hidden.h"/s//#include "common\/hidden.h"\n#include "wrapper\/orted_agent.h"/' \
  "$work/tree/poprun/src/launcher/mpirun_cmd.c"
expect "an arrow between poprun's sibling rooms" 'arrow in poprun/src between sibling rooms launcher and wrapper: poprun/src/launcher/mpirun_cmd.c includes wrapper/orted_agent.h'

fresh # poprun: the plan reaching up to the launcher
sed -i '0,/#include "plan\/print.h"/s//#include "plan\/print.h"\n#include "launcher\/job.h"/' "$work/tree/poprun/src/plan/print.c"
expect "an upward arrow in poprun/" 'upward arrow in poprun/src from plan to launcher: poprun/src/plan/print.c includes launcher/job.h'

fresh # a folder of more than 16 source files
for i in $(seq 1 17); do printf '/* planted */\n' >"$work/tree/examples/train/model/planted$i.h"; done
expect "a crowded folder" 'examples/train/model: 29 source files \(at most 16 a folder\)'

fresh # a circle of Python files in one folder (an import inside a function counts)
printf 'import planted_b\n' >"$work/tree/examples/planted_a.py"
printf 'def f():\n    import planted_a\n' >"$work/tree/examples/planted_b.py"
expect "a circle of Python imports" 'circle of files in examples/ \(Python\): examples/planted_a.py->examples/planted_b.py'

fresh # a circle inside one program of examples/
sed -i '0,/#include/s//#include "bench_main.h"\n#include/' "$work/tree/examples/bench/bench.h"
printf '#include "bench.h"\n' >"$work/tree/examples/bench/bench_main.h"
expect "a circle in an example" 'circle of files in examples/bench'

fresh # a .c of its own with no header and no word of where its calls are declared
printf '/* A planted file. */\nint gcl_planted(void);\nint gcl_planted(void)\n{\n    return 0;\n}\n' \
  >"$work/tree/gcl/src/engine/planted.c"
expect "a .c without a header" 'engine/planted.c: no header of its own'

fresh # an include of a room that does not exist
mkdir -p "$work/tree/gcl/src/misc"
printf '/* Declared in gcl/gcl.h */\n#include "base/err.h"\n' >"$work/tree/gcl/src/misc/x.c"
expect "a file outside the rooms" 'misc/ is not a room'

fresh # collectives/ reaching up into libgcl
sed -i '0,/#include/s//#include "engine\/exec.h"\n#include/' "$work/tree/collectives/src/group.c"
expect "collectives/ including libgcl" 'collectives/src/group.c: includes engine/exec.h from gcl/'

fresh # a network backend reaching up to the transport it serves (a room inside a room)
sed -i '0,/#include "job\/job.h"/s//#include "job\/job.h"\n#include "transport\/wire.h"/' \
  "$work/tree/gcl/src/transport/net/tcp_mesh.h"
expect "an upward arrow from transport/net/" 'upward arrow in gcl/src from transport/net to transport: gcl/src/transport/net/tcp_mesh.h includes transport/wire.h'

fresh # the vocabulary below base/ reaching up to it
sed -i '0,/#include "coll\/types.h"/s//#include "coll\/types.h"\n#include "base\/log.h"/' \
  "$work/tree/gcl/src/base/vocab/vocab.h"
expect "an upward arrow from base/vocab/" 'upward arrow in gcl/src from base/vocab to base: gcl/src/base/vocab/vocab.h includes base/log.h'

fresh # a loose file at the top of gcl/src, outside the API's room
printf '/* Declared in gcl/gcl.h */\n#include "base/err.h"\n' >"$work/tree/gcl/src/loose.c"
expect "a file at the top of gcl/src" 'gcl/src/loose: the top of gcl/src is not a room'

fresh # one name for two concepts: a header of libgcl's pod named as sim's and train's models are
printf '/* A planted header. */\n' >"$work/tree/gcl/src/pod/model.h"
expect "a basename shared across rooms" 'examples/train/model/model.h, gcl/src/pod/model.h, sim/include/sim/model/model.h share the name model.h'

fresh # a third file joining a listed pair of one concept at two layers
printf '/* A planted header. */\n' >"$work/tree/gcl/src/engine/preempt.h"
expect "a basename beyond its listed pair" 'gcl/src/engine/preempt.h.* share the name preempt.h'

fresh # a moved file whose listing stayed behind
rm "$work/tree/gcl/src/job/popdist.h"
expect "a stale listing of one concept" 'SAME_CONCEPT lists gcl/src/job/popdist.h, which is not in the tree'

if [ "$fails" -ne 0 ]; then
  echo "check_layers_planted: $fails of the checks above failed"
  exit 1
fi
echo "check_layers_planted: PASSED"
