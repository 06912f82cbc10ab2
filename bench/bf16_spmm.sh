#!/usr/bin/env bash
# The SpMM on bf16 rows against the fp32 one (docs/benchmarks.md, "bf16 SpMM"): compiles
# bench/bf16_spmm.c against BUILD/libfullgraph.a (default build/release; the library's private
# headers) and runs it with OMP_NUM_THREADS threads (default 2) on N rows (default 262144).
# usage: bench/bf16_spmm.sh [BUILD] [N]
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
  "$root/bench/bf16_spmm.c" -o "$out/bf16_spmm" "$build/libfullgraph.a" "${libs[@]}" \
  $(mpicc --showme:link)
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-true}
echo "# $(date -u +%FT%TZ) $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/bf16_spmm" "${2:-262144}"
