#!/usr/bin/env bash
# CLI tests of the 3D scheme's commands and flags: info --shards, plan, bench --calibrate,
# train --scheme 3d / --grid; exit codes and messages.
# usage: cli3d_test.sh FULLGRAPH DEMO_DATA MPIEXEC
set -u
FG=$1 DEMO=$2 MPIEXEC=${3:-mpiexec}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0 fail=0

. "$(dirname "$0")/../expect.sh"

expect 0 "double permutation +[0-9.]+" "$FG" info "$DEMO" --shards 8x8
expect 0 "adjacency shards 4 x 4" "$FG" info "$DEMO" --shards 4
expect 2 "--shards expects RxC" "$FG" info "$DEMO" --shards 0x8
expect 2 "--shards expects RxC" "$FG" info "$DEMO" --shards 8y8
expect 0 "usage: fullgraph plan DATA" "$FG" plan --help
expect 0 "best: --scheme" "$FG" plan "$DEMO" --ranks 4 --mem-per-rank -1
expect 0 " 3d +2x1x2 " "$FG" plan "$DEMO" --ranks 4 --schemes 3d --double-perm
expect 0 "nothing fits" "$FG" plan "$DEMO" --ranks 2 --mem-per-rank 0.001
expect 1 "cannot open calibration" "$FG" plan "$DEMO" --ranks 4 --calibration "$T/none.txt"
expect 1 "unknown scheme 'nope'" "$FG" plan "$DEMO" --ranks 4 --schemes 1d,nope
expect 1 "no scheme to rank on 4 rank" "$FG" plan "$DEMO" --ranks 4 --schemes 1d --double-perm
expect 0 "wrote $T/cal.txt" "$FG" bench --calibrate --output "$T/cal.txt"
expect 0 "^spmm_nnz_f " cat "$T/cal.txt"
expect 0 "^gemm_flops_bf16 [0-9.e+]+$" cat "$T/cal.txt"
expect 0 "coefficients: $T/cal.txt" "$FG" plan "$DEMO" --ranks 8 --calibration "$T/cal.txt"
echo "spmm_nnz banana" >> "$T/cal.txt"
expect 1 "line [0-9]+: spmm_nnz: 'banana' is not a number" "$FG" plan "$DEMO" --ranks 2 --calibration "$T/cal.txt"
expect 2 "missing benchmark" "$FG" bench
expect 0 "3d: grid 1x2x1, double permutation" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme 3d --grid 1x2x1 --double-perm \
  --epochs 2 --hidden 4 --no-progress
expect 0 "performance model: 3d grid [0-9]x[0-9]x[0-9]" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme 3d --epochs 1 --hidden 4 --no-progress
expect 2 "--grid 2x2x1 has 4 ranks, but the job has 2" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme 3d --grid 2x2x1 --epochs 1
expect 2 "--scheme serial does not take --grid \(it is an option of: 3d\)" "$FG" train "$DEMO" --grid 1x1x1 --epochs 1
expect 2 "--scheme serial does not take --agg-blocks \(it is an option of: 3d\)" "$FG" train "$DEMO" --agg-blocks 2 --epochs 1
expect 2 "a single-file checkpoint holds the weights only; name a directory ending in '/'" \
  "$FG" train "$DEMO" --scheme 3d --grid 1x1x1 --learn-features --checkpoint "$T/c" --epochs 1
# learned features checkpoint into a sharded directory, each rank its piece, and resume on
# another grid
expect 0 "best epoch 2" "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme 3d \
  --grid 1x1x2 --learn-features --epochs 2 --hidden 4 --no-progress --checkpoint "$T/lf/"
expect 0 "resumed from .*lf/ at epoch 2 \(sharded: each rank read at most [0-9]+ weight and [0-9]+ feature" \
  "$MPIEXEC" -n 2 --oversubscribe "$FG" train "$DEMO" --scheme 3d --grid 2x1x1 \
  --learn-features --epochs 3 --hidden 4 --no-progress --resume "$T/lf/"
expect 1 "the checkpoint holds learned features \(2708 x 1433\); this run does not learn them" \
  "$FG" train "$DEMO" --epochs 3 --hidden 4 --resume "$T/lf/"
expect 2 "--scheme 3d does not take --order metis\|hypergraph\|volume \(it is an option of: 1d, 1d-sa, 1.5d, halo\)" \
  "$FG" train "$DEMO" --scheme 3d --grid 1x1x1 --order metis --epochs 1

echo "cli3d: $pass passed, $fail failed"
[ "$fail" = 0 ]
