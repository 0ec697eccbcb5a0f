#!/usr/bin/env bash
# disk_full.sh POPRUN TRAIN   (root: a tmpfs of its own)
#
# train's checkpoints on a full disk, and a checkpoint directory that cannot be resumed. The
# checkpoint directory is a tmpfs with room for one checkpoint and a half: the first checkpoint
# is written, and every later one fails for want of space (its temporary file would be the
# second file). Asserts, for the gcl backend under poprun and the MPI baseline under mpirun:
#   - the run goes on to the end, exit 0, with weights bitwise identical to a run with room;
#   - each failed checkpoint is one warning naming itself, ENOSPC and the checkpoint that stays
#     the newest; nothing but that checkpoint is left in the directory (no temporary file);
#   - a run resumed from the directory ends bitwise as the uninterrupted one;
#   - SIGTERM with the disk full: exit 143 and one line saying the step's checkpoint could not
#     be written and which one --resume continues from;
#   - --save-weights to the full disk is still an error (exit 1): only periodic checkpoints are
#     skipped;
#   - a directory holding only corrupt checkpoints: --resume refuses with one line and exit 2,
#     and under poprun --max-restarts 3 the job is not restarted.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../faults/lib.sh"

[ $# -eq 2 ] || { echo "usage: $0 POPRUN TRAIN" >&2; exit 2; }
poprun=$1 train=$2
faults_init chaos-disk-full
[ "$(id -u)" -eq 0 ] || skip "needs root to mount a tmpfs"
fs=$FT/fs
mkdir "$fs"
mount -t tmpfs -o size=2900k,mode=0700 chaos-test "$fs" || skip "cannot mount a tmpfs here"
trap 'st=$?; umount "$fs" 2>/dev/null || true; set +e; (exit $st); faults_cleanup' EXIT
args=(--train-samples 4096 --test-samples 256 --epochs 3 --checkpoint-every 8 --progress none)
gcl() { marked "$poprun" --num-replicas 4 --num-instances 2 "$train" "${args[@]}" "$@"; }
mpi() { marked "$here/../mpirun-private" --allow-run-as-root --oversubscribe --bind-to none -np 4 "$train" \
          --backend mpi "${args[@]}" "$@"; }
expect() { grep -q -- "$2" "$FT/$1.out" || { cat "$FT/$1.out"; fail "$1: no line matching '$2'"; }; }
run() { # NAME WANT CMD...: runs CMD (output in $FT/NAME.out) and checks its exit status
  local name=$1 want=$2 st=0
  shift 2
  "$@" >"$FT/$name.out" 2>&1 || st=$?
  [ "$st" -eq "$want" ] || { cat "$FT/$name.out"; fail "$name: exit $st, want $want"; }
}
same() { cmp -s "$1" "$2" || fail "$(basename "$2") differs from $(basename "$1")"; }

for backend in gcl mpi; do
  ck=$fs/ck
  rm -rf "$ck" "$FT/room"
  run "$backend-room" 0 $backend --checkpoint "$FT/room" --save-weights "$FT/$backend-room.w"
  run "$backend-full" 0 $backend --checkpoint "$ck" --save-weights "$FT/$backend-full.w"
  same "$FT/$backend-room.w" "$FT/$backend-full.w"
  expect "$backend-full" "warning: the checkpoint of step 16 was not written: cannot write checkpoint $ck/ckpt-0000000016.gclt (write: No space left on device); training goes on, and $ck/ckpt-0000000008.gclt stays the newest"
  n=$(grep -c 'was not written' "$FT/$backend-full.out")
  [ "$n" -eq 11 ] || fail "$backend: $n warnings, want 11 (steps 16 to 96)"
  [ "$(ls -A "$ck")" = "ckpt-0000000008.gclt" ] || fail "$backend: left in the directory: $(ls -A "$ck")"
  run "$backend-resumed" 0 $backend --checkpoint "$ck" --resume --save-weights "$FT/$backend-res.w"
  expect "$backend-resumed" "resuming from $ck/ckpt-0000000008.gclt"
  same "$FT/$backend-room.w" "$FT/$backend-res.w"
  echo "$backend: $n checkpoints skipped on the full disk, the run and its resume bitwise as with room"
done

# SIGTERM with the disk full: the stop's own checkpoint cannot be written either.
rm -rf "$fs/ck"
env GCL_FAULTS_MARK="$MARK" "$poprun" --num-replicas 4 --num-instances 2 "$train" "${args[@]}" \
  --epochs 200 --checkpoint "$fs/ck" >"$FT/term.out" 2>&1 &
job=$!
FAULTS_BG+=("$job")
for _ in $(seq 600); do
  grep -q 'was not written' "$FT/term.out" && break
  kill -0 "$job" 2>/dev/null || { cat "$FT/term.out"; fail "term: the run ended early"; }
  sleep 0.1
done
kill -TERM "$job"
st=0
wait "$job" || st=$?
[ "$st" -eq 143 ] || { cat "$FT/term.out"; fail "term: exit $st, want 143"; }
expect term "train: SIGTERM: stopped after step [0-9]* of [0-9]*; its checkpoint could not be written: --resume continues from $fs/ck/ckpt-0000000008.gclt"
echo "SIGTERM on the full disk: $(grep -o 'stopped after.*' "$FT/term.out")"

# The final weights on the full disk: an error, not a warning.
run save 1 "$train" "${args[@]}" --max-steps 4 --save-weights "$fs/final.w"
expect save "cannot write checkpoint $fs/final.w (write: No space left on device)"

# Only corrupt checkpoints: no start from the beginning, and no restart that would repeat it.
umount "$fs"
bad=$FT/bad
mkdir "$bad"
cp "$FT/room/ckpt-0000000096.gclt" "$FT/room/ckpt-0000000088.gclt" "$bad/"
truncate -s 1000 "$bad/ckpt-0000000096.gclt"
printf '\x5a' | dd of="$bad/ckpt-0000000088.gclt" bs=1 seek=3000 conv=notrunc status=none
run refused 2 "$train" "${args[@]}" --checkpoint "$bad" --resume
expect refused "train: cannot resume: none of the 2 checkpoints in $bad verifies (each is named above), and starting over would lose their work; remove them to start from the beginning"
run norestart 2 marked "$poprun" --max-restarts 3 --num-replicas 4 --num-instances 2 "$train" \
  "${args[@]}" --checkpoint "$bad" --resume
! grep -q 'restarting the job' "$FT/norestart.out" || { cat "$FT/norestart.out"; fail "poprun restarted a job that cannot resume"; }
expect norestart "poprun: instance 0 (host [^)]*) exited with status 2"
wait_no_marked 30 || fail "processes are left: $(marked_pids)"
pass "full disk: periodic checkpoints skipped with a warning, training bitwise unchanged; a directory that cannot be resumed refused once"
