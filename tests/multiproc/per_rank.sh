#!/usr/bin/env bash
# per_rank.sh ARGS_OF_RANK_0 ARGS_OF_RANK_1 ... -- PROGRAM: runs PROGRAM under mpirun with the
# arguments of this rank (OMPI_COMM_WORLD_RANK), split into words.
set -euo pipefail
args=()
while [ "$1" != "--" ]; do
  args+=("$1")
  shift
done
shift
# shellcheck disable=SC2086 # the arguments are words
exec "$@" ${args[$OMPI_COMM_WORLD_RANK]}
