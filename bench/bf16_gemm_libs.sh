#!/usr/bin/env bash
# Reproduce docs/benchmarks.md's "bf16 GEMM: which library" table: compiles
# bench/bf16_gemm_libs.c against OpenBLAS (OpenMP flavour), oneDNN and LIBXSMM and runs it with
# OMP_NUM_THREADS threads (default 2). Needs libdnnl-dev and libxsmm-dev, which fullgraph itself
# does not link (the measurement is why): apt-get install libdnnl-dev libxsmm-dev.
# usage: bench/bf16_gemm_libs.sh [--quick]    (--quick: n = 10^4 only)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
arch=$(gcc -print-multiarch)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
gcc -O3 -march=native -fopenmp -I"/usr/include/$arch/openblas-openmp" "$here/bf16_gemm_libs.c" \
  -o "$out/bf16_gemm_libs" "/usr/lib/$arch/openblas-openmp/libopenblas.so" -ldnnl \
  /usr/lib/libxsmm.a /usr/lib/libxsmmnoblas.a -lpthread -ldl -lrt -lm
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} OMP_PROC_BIND=${OMP_PROC_BIND:-true}
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)"
"$out/bf16_gemm_libs" "$@"
