#!/usr/bin/env bash
# The SpMM on bf16 rows against the fp32 one (docs/benchmarks.md, "bf16 SpMM"): compiles
# bench/bf16_spmm.c against BUILD/libfullgraph.a (default build/release; the library's private
# headers) and runs it with OMP_NUM_THREADS threads (default 2) on N rows (default 262144).
# usage: bench/bf16_spmm.sh [BUILD] [N]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
lib_program bf16_spmm "${1:-$root/build/release}"
"$lib_out/bf16_spmm" "${2:-262144}"
