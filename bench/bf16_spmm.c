/* bf16_spmm.c -- fg_spmm on fp32 rows against fg_spmm_bf16 on the same rows in bf16: n rows of 16
 * uniformly random columns each (values 1/16), widths 16..256, best of 5 calls each. Built and
 * run by bench/bf16_spmm.sh against a build's libfullgraph.a (docs/benchmarks.md, "bf16 SpMM"). */
#include <stdio.h>
#include <stdlib.h>
#include "kernels/fg_bf16.h"
int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 262144, deg = 16;
  const int64_t fs[] = {16, 32, 64, 128, 256};
  fg_csr A = {n, n, n * deg, malloc(sizeof(int64_t) * (n + 1)), malloc(sizeof(int32_t) * n * deg), malloc(sizeof(float) * n * deg)};
  uint64_t s = 88172645463325252ull;
  for (int64_t r = 0; r <= n; r++) A.rowptr[r] = r * deg;
  for (int64_t e = 0; e < n * deg; e++) {
    s ^= s << 13; s ^= s >> 7; s ^= s << 17;
    A.col[e] = (int32_t)(s % (uint64_t)n); A.val[e] = 0.0625f;
  }
  for (int64_t r = 0; r < n; r++) /* sort each row's columns (insertion sort, deg small) */
    for (int64_t i = r * deg + 1; i < (r + 1) * deg; i++)
      for (int64_t j = i; j > r * deg && A.col[j - 1] > A.col[j]; j--) { int32_t t = A.col[j]; A.col[j] = A.col[j - 1]; A.col[j - 1] = t; }
  for (size_t fi = 0; fi < sizeof fs / sizeof fs[0]; fi++) {
    const int64_t f = fs[fi];
    float *X = fg_malloc_huge(sizeof(float) * n * f), *Y = fg_malloc_huge(sizeof(float) * n * f);
    fg_bf16 *Xb = fg_malloc_huge(sizeof(fg_bf16) * n * f);
    for (int64_t i = 0; i < n * f; i++) X[i] = (float)(i % 13) * 0.25f;
    fg_bf16_from_f32(Xb, X, n * f);
    double b32 = 1e9, b16 = 1e9;
    for (int rep = 0; rep < 5; rep++) {
      double t0 = fg_now(); fg_spmm(&A, X, f, Y, f, f); double t = fg_now() - t0; if (t < b32) b32 = t;
      t0 = fg_now(); fg_spmm_bf16(&A, Xb, f, Y, f, f, 0); t = fg_now() - t0; if (t < b16) b16 = t;
    }
    printf("spmm n=%lld nnz=%lld f=%lld: fp32 rows %.2f ms, bf16 rows %.2f ms, speedup %.2fx\n", (long long)n, (long long)A.nnz, (long long)f, 1e3 * b32, 1e3 * b16, b32 / b16);
    free(X); free(Y); free(Xb);
  }
  return 0;
}
