#!/usr/bin/env bash
# `fullgraph bench gemm --precision bf16 [--bf16-path]` and the bf16 line of --version: both
# paths run and say which ran, FULLGRAPH_BF16_PATH picks the default, bad values exit 2 with the
# problem named, native where this build or CPU lacks it exits 1 naming why. The fp32 GEMM
# library: --version's line follows FULLGRAPH_GEMM, a bad value there is named and ignored.
# `bench spmm DATA`: a row a thread count with both precisions' times, GB/s and their ratio;
# its flags' misuse exits 2 naming the problem.
# usage: bf16_bench_test.sh FULLGRAPH DATA
set -u
FG=$1
DATA=$2
pass=0 fail=0
. "$(dirname "$0")/../expect.sh"

expect 0 "^bf16 path: (native|convert) \(" "$FG" --version
shapes=nn:1000x32x17,tn:32x17x1000
rate='[0-9.]+e[-+][0-9]+ s, [0-9.]+ GFLOP/s'
expect 0 "^gemm bf16 nn 1000x32x17 \(convert\): $rate" "$FG" bench gemm --precision bf16 \
  --bf16-path convert --shapes $shapes --reps 1
expect 0 "^gemm bf16 tn 32x17x1000 \(convert\): $rate" "$FG" bench gemm --precision bf16 \
  --bf16-path convert --shapes $shapes --reps 1
expect 0 "^gemm bf16 nn 1000x32x17 \(convert\)" env FULLGRAPH_BF16_PATH=convert "$FG" bench gemm \
  --precision bf16 --shapes $shapes --reps 1
expect 0 "^gemm nn 1000x32x17: $rate" "$FG" bench gemm --precision fp32 --shapes $shapes --reps 1
if "$FG" --version | grep -q '^bf16 path: native'; then
  expect 0 "^gemm bf16 tn 32x17x1000 \(native\): $rate" "$FG" bench gemm --precision bf16 \
    --bf16-path native --shapes $shapes --reps 1
  expect 0 "^gemm bf16 nn 1000x32x17 \(native\)" "$FG" bench gemm --precision bf16 --shapes $shapes \
    --reps 1
else
  expect 1 "bf16 path native is unavailable: " "$FG" bench gemm --precision bf16 \
    --bf16-path native --shapes $shapes --reps 1
fi
expect 0 "FULLGRAPH_BF16_PATH=fast ignored" env FULLGRAPH_BF16_PATH=fast "$FG" bench gemm \
  --precision bf16 --shapes nn:10x10x10 --reps 1
expect 2 "unknown bf16 path 'fast' \(want native or convert\)" "$FG" bench gemm --precision bf16 \
  --bf16-path fast --shapes nn:10x10x10
expect 2 "--precision must be one of: fp32 bf16 \(got 'fp16'\)" "$FG" bench gemm --precision fp16 \
  --shapes nn:10x10x10
expect 2 "shapes nn \(the layer product\) and tn \(the weight gradient\) only, not 'nt'" "$FG" \
  bench gemm --precision bf16 --shapes nn:10x10x10,nt:10x10x10
expect 2 "--bf16-path needs --precision bf16" "$FG" bench gemm --bf16-path convert \
  --shapes nn:10x10x10
expect 2 "--precision and --bf16-path belong to bench gemm" "$FG" bench stream --precision bf16
expect 2 "--calibrate measures fp32 and bf16 GEMMs itself; --precision belongs to bench gemm" \
  "$FG" bench --calibrate --precision bf16
# fp32 is the option's default value, but given it is still not --calibrate's (nor stream's)
expect 2 "--calibrate measures fp32 and bf16 GEMMs itself; --precision belongs to bench gemm" \
  "$FG" bench --calibrate --precision fp32
expect 2 "--precision and --bf16-path belong to bench gemm" "$FG" bench stream --precision=fp32
expect 2 "--calibrate: --bf16-path: unknown bf16 path 'fast'" "$FG" bench --calibrate --bf16-path fast

expect 0 "^fp32 GEMM: auto \((oneDNN [0-9.]+ dnnl_sgemm or OpenBLAS [^ ]+, by shape|OpenBLAS [^;]+; this build has no oneDNN)\)$" \
  "$FG" --version
expect 0 "^fp32 GEMM: openblas \(OpenBLAS " env FULLGRAPH_GEMM=openblas "$FG" --version
expect 0 "FULLGRAPH_GEMM=mkl ignored \(want auto, openblas or onednn\)" env FULLGRAPH_GEMM=mkl \
  "$FG" bench gemm --shapes nn:10x10x10 --reps 1
if "$FG" --version | grep -q '^fp32 GEMM: auto (oneDNN'; then
  expect 0 "^fp32 GEMM: onednn \(oneDNN [0-9.]+ dnnl_sgemm, forced\)$" env FULLGRAPH_GEMM=onednn \
    "$FG" --version
  for lib in openblas onednn; do
    expect 0 "^gemm nt 1000x32x17: $rate" env FULLGRAPH_GEMM=$lib "$FG" bench gemm \
      --shapes nt:1000x32x17 --reps 1
  done
else
  expect 0 "FULLGRAPH_GEMM=onednn ignored: this build has no oneDNN" env FULLGRAPH_GEMM=onednn \
    "$FG" bench gemm --shapes nn:10x10x10 --reps 1
fi

sec='[0-9.]+e[-+][0-9]+'
row=" +$sec +$sec +[0-9.]+ +$sec +$sec +[0-9.]+ +[0-9.]+$"
expect 0 "^spmm .*: 2708 nodes, 13264 entries of GCN's A-hat, width 24, 2 reps" "$FG" bench spmm \
  "$DATA" --width 24 --reps 2 --thread-counts 1,2
expect 0 "^ +1$row" "$FG" bench spmm "$DATA" --width 24 --reps 2 --thread-counts 1,2
expect 0 "each after a GEMM of its precision.*bf16 path convert" "$FG" bench spmm "$DATA" \
  --width 8 --reps 1 --gemm-between --bf16-path convert
# a row names the threads that ran: 2 where the build has OpenMP, else 1
if "$FG" --version | grep -q 'openmp on'; then t2=2; else t2=1; fi
expect 0 "^ +$t2$row" "$FG" bench spmm "$DATA" --width 24 --reps 2 --thread-counts 1,2
expect 0 "^ +$t2$row" "$FG" bench spmm "$DATA" --width 8 --reps 1 --threads 2
expect 2 "bad --thread-counts at '0,2'" "$FG" bench spmm "$DATA" --thread-counts 1,0,2
expect 2 "bad --thread-counts at 'x'" "$FG" bench spmm "$DATA" --thread-counts 1,x
expect 2 "--width and --reps must be positive" "$FG" bench spmm "$DATA" --width 0
expect 2 "bench spmm needs a dataset" "$FG" bench spmm
expect 2 "only spmm takes a dataset" "$FG" bench stream "$DATA"
expect 2 "--width, --thread-counts and --gemm-between belong to bench spmm" "$FG" bench gemm \
  --shapes nn:10x10x10 --gemm-between
expect 2 "it times both precisions; --precision belongs to bench gemm" "$FG" bench spmm "$DATA" \
  --precision bf16
expect 1 "bench spmm: error: .*no-such-file" "$FG" bench spmm /no-such-file

echo "bf16_bench_test: $pass passed, $fail failed"
[ "$fail" = 0 ]
