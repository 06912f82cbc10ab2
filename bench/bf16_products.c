/* bf16_products.c -- one layer's products as the bf16 model calls them, against the fp32
 * sgemm they replace (docs/benchmarks.md, "bf16 products: weights rounded once a product"):
 * on N x K activations and K x M weights, the best of 7 calls of
 *   fp32 nn / tn         fg_gemm: the layer product and the weight gradient in fp32
 *   bf16 tall            fg_bf16_gemm_tall, A bf16, one call over all rows
 *   bf16 tall_rows       fg_bf16_gemm_tall_rows with a sink that does nothing: the fused
 *                        epilogue's product, a block of rows at a time
 *   bf16 tall_16         fg_bf16_gemm_tall_16: the product stored as bf16 (T = D W)
 *   bf16 tall_f32        A fp32, rounded a block at a time (the logits' gradient)
 *   bf16 wgrad hh / hf   the weight gradient on bf16 A and bf16 or fp32 G
 *   round W (blocks)     rounding W (K x M) once for each of the product's row blocks, as
 *                        every blocked product did before it rounded W once
 * usage: bf16_products [N [K [M]]] (default 131072 128 128); OMP_NUM_THREADS threads. */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"

static void nothing(void *ctx, int64_t r0, int64_t rows, float *blk) {
  (void)ctx;
  (void)r0;
  (void)rows;
  (void)blk;
}

#define TIME(label, stmt)                          \
  do {                                             \
    double best = 1e30;                            \
    for (int rep = 0; rep < 7; rep++) {            \
      const double t0 = fg_now();                  \
      stmt;                                        \
      const double t = fg_now() - t0;              \
      if (t < best) best = t;                      \
    }                                              \
    printf("%-22s %9.3f ms\n", label, best * 1e3); \
  } while (0)

int main(int argc, char **argv) {
  const int64_t n = argc > 1 ? atoll(argv[1]) : 131072, k = argc > 2 ? atoll(argv[2]) : 128,
                m = argc > 3 ? atoll(argv[3]) : 128;
  const int64_t blocks =
      (n + fg_bf16_gemm_block_rows(n, k, m) - 1) / fg_bf16_gemm_block_rows(n, k, m);
  float *A = malloc(sizeof(float) * (size_t)(n * k)), *G = malloc(sizeof(float) * (size_t)(n * m));
  float *W = malloc(sizeof(float) * (size_t)(k * m)), *C = malloc(sizeof(float) * (size_t)(n * m));
  float *dW = malloc(sizeof(float) * (size_t)(k * m));
  fg_bf16 *A16 = malloc(sizeof(fg_bf16) * (size_t)(n * k));
  fg_bf16 *G16 = malloc(sizeof(fg_bf16) * (size_t)(n * m));
  fg_bf16 *C16 = malloc(sizeof(fg_bf16) * (size_t)(n * m));
  if (!A || !G || !W || !C || !dW || !A16 || !G16 || !C16) return 2;
  for (int64_t i = 0; i < n * k; i++) A[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
  for (int64_t i = 0; i < n * m; i++) G[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
  for (int64_t i = 0; i < k * m; i++) W[i] = (float)((i * 31) % 100) / 100.0f - 0.5f;
  fg_bf16_from_f32(A16, A, n * k);
  fg_bf16_from_f32(G16, G, n * m);
  printf("# n %lld k %lld m %lld, %d threads, bf16 path %s, %lld row blocks\n", (long long)n,
         (long long)k, (long long)m, fg_max_threads(), fg_bf16_path_name(fg_bf16_get_path()),
         (long long)blocks);
  TIME("fp32 nn", fg_gemm(0, 0, n, m, k, 1.0f, A, k, W, m, 0.0f, C, m));
  TIME("fp32 tn (wgrad)", fg_gemm(1, 0, k, m, n, 1.0f, A, k, G, m, 0.0f, dW, m));
  TIME("bf16 tall", (void)fg_bf16_gemm_tall(n, k, m, A16, k, W, m, C, m, 0));
  TIME("bf16 tall_rows", (void)fg_bf16_gemm_tall_rows(n, k, m, A16, NULL, k, W, m, nothing, NULL));
  TIME("bf16 tall_16", (void)fg_bf16_gemm_tall_16(n, k, m, A16, k, W, m, C16, m));
  TIME("bf16 tall_f32", (void)fg_bf16_gemm_tall_f32(n, k, m, A, k, W, m, C, m, 0));
  TIME("bf16 wgrad hh", (void)fg_bf16_gemm_wgrad(n, k, m, A16, k, G16, m, dW, m, 0));
  TIME("bf16 wgrad hf", (void)fg_bf16_gemm_wgrad_hf(n, k, m, A16, k, G, m, dW, m, 0));
  TIME("round W row by row", for (int64_t b = 0; b < blocks; b++) for (int64_t p = 0; p < k; p++)
                                 fg_bf16_from_f32(C16 + p * m, W + p * m, m));
  TIME("round W (blocks)", for (int64_t b = 0; b < blocks; b++) fg_bf16_from_f32(C16, W, k * m));
  free(A);
  free(G);
  free(W);
  free(C);
  free(dW);
  free(A16);
  free(G16);
  free(C16);
  return 0;
}
