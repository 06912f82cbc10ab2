#!/bin/sh
# bench_epoch.sh -- the foundation benchmark: one process, R-MAT scale 18 (edge factor 16) with
# 128 random features and 32 degree-quantile classes, a 3-layer GCN of hidden width 128, 10
# epochs; the mean of the last 8 epochs split into SpMM, GEMM and the rest, peak memory, and the
# SpMM's effective bandwidth beside a STREAM triad measured in the same run.
#
# usage: bench/bench_epoch.sh [OUTDIR] [more single_process.py options]
# environment: FULLGRAPH (default build/release/fullgraph), THREADS (default: all CPUs)
# Writes OUTDIR/epoch.md and OUTDIR/epoch.json (default OUTDIR bench/out/single).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out/single}
[ $# -gt 0 ] && shift
exec /usr/bin/python3 "$here/single_process.py" --out "$out" --graphs rmat18 --no-peer \
  --name epoch --threads "${THREADS:-$(getconf _NPROCESSORS_ONLN)}" "$@"
