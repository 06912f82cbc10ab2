#!/bin/sh
# bench_single.sh -- issue 5's benchmark, in one go on this machine: R-MAT scale 18 and 20 (edge
# factor 16) and the largest SNAP graph in ../shared/data/snap/, each with 128 random features
# and 32 degree-quantile classes; a 3-layer GCN of hidden width 128, 10 epochs, the mean of the
# last 8. For each: epoch time split into SpMM, GEMM and the rest, peak resident memory, the
# SpMM's effective bandwidth beside a STREAM triad measured in the same run, and the same model
# in PyTorch (Debian's python3-torch, CPU, same graph, widths and thread count, its faster
# sparse format) with the ratio. Takes about 35 minutes on 2 cores (PyTorch about 20 of them).
#
# usage: bench/bench_single.sh [OUTDIR] [more single_process.py options, e.g. --reorder degree]
# environment: FULLGRAPH (default build/release/fullgraph), THREADS (default: all CPUs)
# Writes OUTDIR/single_process.md and .json (default OUTDIR bench/out/single).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out/single}
[ $# -gt 0 ] && shift
case " $* " in
  *" --no-peer "*) "$here/../scripts/install-deps.sh" ;;
  *) "$here/../scripts/install-deps.sh" --bench ;;
esac
exec /usr/bin/python3 "$here/single_process.py" --out "$out" \
  --threads "${THREADS:-$(getconf _NPROCESSORS_ONLN)}" "$@"
