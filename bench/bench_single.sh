#!/bin/sh
# bench_single.sh -- issue 5's benchmark, in one go on this machine: R-MAT scale 18 and 20 (edge
# factor 16) and the largest SNAP graph in ../shared/data/snap/, each with 128 random features
# and 32 degree-quantile classes; a 3-layer GCN of hidden width 128, 10 epochs, the mean of the
# last 8. For each: epoch time split into SpMM, GEMM and the rest, peak resident memory, the
# SpMM's effective bandwidth beside a STREAM triad measured in the same run, and the same model
# in PyTorch (Debian's python3-torch, CPU, same graph, widths and thread count, its faster
# sparse format) with the ratio; and each GCN epoch against its lower bound on this machine
# (bench/epoch_bound.py: its GEMMs at the sgemm time of their shapes, timed beside the run with
# `fullgraph bench gemm`, plus its SpMM and elementwise bytes at the triad; --omp-wait
# default,passive runs both OpenMP wait policies). PyTorch now runs in each of the 3 repeats, right after
# fullgraph: about 35 minutes on 2 cores when it ran once (PyTorch about 20 of them), so expect
# about 75 (an estimate, not yet measured).
#
# --model gcn|sage|gin|gcn,sage,gin picks the layer kinds (default gcn): GraphSAGE with the
# mean aggregator is `fullgraph train --model sage` against bench/torch_gcn.py --model sage, GIN
# (sum without self loops, eps 0) `--model gin` against torch_gcn.py --model gin. With several,
# every repeat runs each model in turn (fullgraph, then PyTorch) and a second table gives each
# model's epoch over the GCN epoch of the same widths, fullgraph's and PyTorch's, and the SpMM
# and GEMM shares of fullgraph's epoch for both; about twice the time with two models, three
# times or more with three.
#
# --peer-precision fp32,bf16-autocast runs the peer in fp32 and with torch.autocast("cpu",
# dtype=torch.bfloat16) (bench/torch_gcn.py --precision), both after fullgraph in every repeat,
# and adds the peer's best and fullgraph's speedup over it, per repeat too (default fp32 only).
# het:NAME in --graphs is ../shared/data/heterophilous/NAME.npz's graph (e.g. het:minesweeper).
#
# usage: bench/bench_single.sh [OUTDIR] [more single_process.py options, e.g. --reorder degree
#                                         --model gcn,sage,gin --graphs rmat16]
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
