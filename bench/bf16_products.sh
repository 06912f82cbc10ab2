#!/usr/bin/env bash
# One layer's bf16 products, as the model calls them, against fp32 sgemm (docs/benchmarks.md,
# "bf16 products"): compiles bench/bf16_products.c against BUILD/libfullgraph.a (default
# build/release; the library's private headers) and runs it with OMP_NUM_THREADS threads
# (default 2) on N x K activations and K x M weights (default 131072 128 128).
# usage: bench/bf16_products.sh [BUILD] [N [K [M]]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$root/bench/lib.sh"
lib_program bf16_products "${1:-$root/build/release}"
shift || true
"$lib_out/bf16_products" "$@"
