#!/usr/bin/env bash
# before_after.sh -- two builds of fullgraph interleaved in one session (the machine is shared
# and noisy: ratios only mean something measured side by side) on R-MAT scale 18: one process
# (3 layers, hidden 128, 2 threads), the 1D schemes at P = 2 and 4 (Kipf's 2-layer GCN, one
# thread a rank) and 3d grids of 4 ranks (3 layers, hidden 32). Prints one line per run: the
# means over epochs 2.. of the metrics' epoch, SpMM, GEMM, communication and other seconds, and
# the peak RSS (the largest rank's). FG_ARGS (environment) adds options to every train command,
# e.g. FG_ARGS="--precision bf16 --agg-order first".
# usage: bench/before_after.sh FULLGRAPH_A FULLGRAPH_B RMAT18_FILE [OUTDIR]
set -u
cd "$(dirname "$0")/.."
. scripts/env.sh
A=$1
B=$2
D=$3
O=${4:-bench/out/before_after}
mkdir -p "$O"
mean() { # metrics file, key: mean over epochs >= 2
  awk -v key="$2" 'index($0, "{\"epoch\":") == 1 { i = index($0, "\"" key "\": "); v = substr($0, i + length(key) + 4); sub(/[,}].*/, "", v); n++; if (n >= 2) { s += v; m++ } } END { printf "%.4f", m ? s / m : -1 }' "$1"
}
run() { # label build args...
  local label=$1 b=$2; shift 2
  local tag=$([ "$b" = "$A" ] && echo before || echo after)
  local f=$O/$label.$tag.$RANDOM.json
  # shellcheck disable=SC2086 # FG_ARGS is a list of options
  "$@" ${FG_ARGS:-} --metrics "$f" --quiet --no-progress > /dev/null 2>&1 || echo "FAILED $label $tag"
  echo "$label $tag epoch $(mean $f seconds) spmm $(mean $f seconds_spmm) gemm $(mean $f seconds_gemm) comm $(mean $f seconds_comm) other $(mean $f seconds_other) rss $(mean $f peak_rss_bytes)"
}
for r in 1 2 3; do
  for b in $A $B; do
    run single $b $b train $D --layers 3 --hidden 128 --epochs 6 --threads 2
  done
done
for r in 1 2; do
  for P in 2 4; do for s in 1d 1d-sa; do for b in $A $B; do
    OMP_NUM_THREADS=1 run p$P-$s $b mpiexec -n $P --oversubscribe $b train $D --scheme $s --epochs 5 --threads 1
  done; done; done
  for g in 2x2x1 1x2x2 4x1x1 1x1x4; do for b in $A $B; do
    OMP_NUM_THREADS=1 run p4-3d-$g $b mpiexec -n 4 --oversubscribe $b train $D --scheme 3d --grid $g --layers 3 --hidden 32 --epochs 5 --threads 1
  done; done
done
echo done
