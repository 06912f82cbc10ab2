#!/usr/bin/env bash
# Rank 0's setup (load, plan, memory check, lay out, distribute) of a multi-rank run: its wall
# time and peak RSS, for two builds interleaved in one session (the machine is shared and noisy).
# usage: bench/setup_rank0.sh FULLGRAPH_A FULLGRAPH_B DATA [REPEATS] [train options...]
#   e.g. bench/setup_rank0.sh /tmp/before/build/release/fullgraph build/release/fullgraph \
#          rmat18.txt 3 --scheme auto --hidden 128 --layers 3
# Runs `mpiexec -n ${RANKS:-4} fullgraph train DATA --epochs 0 ...` (setup only) and prints one
# line per run: build, seconds and peak RSS of rank 0, and the scheme the run took.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/env.sh
a=$1 b=$2 data=$3 reps=${4:-3}
shift 4 || shift $#
ranks=${RANKS:-4}
wrap='if [ "${OMPI_COMM_WORLD_RANK:-0}" = 0 ]; then exec /usr/bin/time -f "rank0 %e s %M kB" "$@"; else exec "$@"; fi'
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "command: mpiexec -n $ranks fullgraph train $data --epochs 0 --no-progress $*"
for r in $(seq 1 "$reps"); do
  for build in "$a" "$b"; do
    out=$(OMP_NUM_THREADS=1 mpiexec -n "$ranks" --oversubscribe sh -c "$wrap" sh \
          "$build" train "$data" --epochs 0 --no-progress "$@" 2>&1)
    took=$(grep -o 'performance model: .*\|scheme [^:;]*' <<<"$out" | head -1)
    printf '%s  %s  %s\n' "$build" "$(grep -o 'rank0 .*' <<<"$out")" "$took"
  done
done
