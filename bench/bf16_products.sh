#!/usr/bin/env bash
# One layer's bf16 products, as the model calls them, against fp32 sgemm (docs/benchmarks.md,
# "bf16 products"): compiles bench/bf16_products.c against BUILD/libfullgraph.a (default
# build/release; the library's private headers) and runs it with OMP_NUM_THREADS threads
# (default 2) on N x K activations and K x M weights (default 131072 128 128).
# usage: bench/bf16_products.sh [BUILD] [N [K [M]]]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build/release}
arch=$(gcc -print-multiarch)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
libs=("/usr/lib/$arch/openblas-openmp/libopenblas.so" -lmetis -ltrilinos_zoltan -lz -lm)
for l in dnnl ptscotch scotch ptscotcherr; do
  if [ -e "/usr/lib/$arch/lib$l.so" ]; then libs+=("-l$l"); fi
done
gcc -O2 -march=native -fopenmp -std=c11 -I"$root/src" -I"$root/include" $(mpicc --showme:compile) \
  "$root/bench/bf16_products.c" -o "$out/bf16_products" "$build/libfullgraph.a" "${libs[@]}" \
  $(mpicc --showme:link)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-true}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
shift || true
"$out/bf16_products" "$@"
