#!/usr/bin/env bash
# The measurement behind fg_gemm's library rule (src/kernels/dense.c, docs/benchmarks.md "fp32
# GEMM: OpenBLAS or oneDNN"): `fullgraph bench gemm` (best of REPS calls after an untimed one)
# of the three products training runs, each shape once with FULLGRAPH_GEMM=openblas and once
# with FULLGRAPH_GEMM=onednn, alternating which goes first, ROUNDS rounds, for n rows and layer
# widths k -> m:
#   nn  n x m = (n x k)(k x m)       the layer product
#   tn  k x m = (n x k)^T (n x m)    the weight gradient
#   nt  n x k = (n x m)(k x m)^T     the input gradient G W^T
# Prints one line a shape: both libraries' best time (us) and GFLOP/s over the rounds, and the
# speedup openblas time / onednn time.
# usage: bench/fp32_gemm_rule.sh [BUILD_DIR] [ROUNDS] [REPS]   (OMP_NUM_THREADS, default 2)
# NS and WIDTHS in the environment override the row counts and widths swept.
set -euo pipefail
build=${1:-build/release}
rounds=${2:-2}
reps=${3:-3}
fg=$build/fullgraph
ns=${NS:-"16 200 2708 20000 100000"}
widths=${WIDTHS:-"3 7 16 32 128"}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
shapes=""
for n in $ns; do
  for k in $widths; do
    for m in $widths; do
      shapes+="nn:${n}x${m}x${k},tn:${k}x${m}x${n},nt:${n}x${k}x${m},"
    done
  done
done
shapes=${shapes%,}
echo "# $(date -u +%FT%TZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs, $OMP_NUM_THREADS threads, load $(cut -d' ' -f1-3 /proc/loadavg)"
for r in $(seq 1 "$rounds"); do
  if [ $((r % 2)) -eq 1 ]; then order="openblas onednn"; else order="onednn openblas"; fi
  for lib in $order; do
    FULLGRAPH_GEMM=$lib "$fg" bench gemm --shapes "$shapes" --reps "$reps" >>"$out/$lib"
  done
done
echo "# done $(date -u +%FT%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
# "gemm nn 16x3x3: 1.2e-06 s, 0.08 GFLOP/s" -> each library's best time per shape (seconds,
# not the printed GFLOP/s: two decimals of GFLOP/s are too coarse for the tiny shapes)
awk '
  FNR == 1 { lib = (FILENAME ~ /onednn$/) ? "d" : "b" }
  /^gemm / { key = $2 " " $3; sub(/:$/, "", key); t = $4 + 0
             if (!(key in seen)) { seen[key] = 1; order[++nk] = key }
             if (t > 0 && (!((lib, key) in best) || t < best[lib, key])) best[lib, key] = t }
  END { printf "%-4s %-18s %12s %12s %9s %9s %7s\n", "tt", "MxNxK", "openblas us", "onednn us",
               "GF/s blas", "GF/s dnnl", "speedup"
        for (i = 1; i <= nk; i++) { key = order[i]; split(key, f, " "); split(f[2], d, "x")
          fl = 2e-9 * d[1] * d[2] * d[3]; tb = best["b", key]; td = best["d", key]
          printf "%-4s %-18s %12.2f %12.2f %9.2f %9.2f %7.2f\n", f[1], f[2], tb * 1e6, td * 1e6,
                 fl / tb, fl / td, tb / td } }' \
  "$out/openblas" "$out/onednn"
