/* bench.c -- machine measurements: the STREAM triad that benchmarks and the calibration
 * compare against, and the time of one sgemm of a given shape, which bench/single_process.py
 * turns into an epoch's lower bound (fg_bench_stream_triad and fg_bench_gemm in the public
 * header). */
#include <string.h>

#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"

double fg_bench_stream_triad(int64_t n, int reps) {
  float *a = fg_malloc_aligned((size_t)n * sizeof(float));
  float *b = fg_malloc_aligned((size_t)n * sizeof(float));
  float *c = fg_malloc_aligned((size_t)n * sizeof(float));
  double best = -1.0;
  if (a && b && c) {
    memset(a, 0, (size_t)n * sizeof(float));
    memset(b, 0, (size_t)n * sizeof(float));
    memset(c, 0, (size_t)n * sizeof(float));
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
      double t0 = fg_now(), bytes = fg_stream_triad(a, b, c, 3.0f, n), t = fg_now() - t0;
      if (t > 0 && bytes / t > best) best = bytes / t;
    }
  }
  fg_free_aligned(a);
  fg_free_aligned(b);
  fg_free_aligned(c);
  return best;
}

double fg_bench_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int reps) {
  /* op(A) is m x k, op(B) k x n, C m x n, all packed: the layout the model's products use */
  const int64_t na = m * k, nb = k * n, nc = m * n;
  float *a, *b, *c;
  double best = -1.0;
  if (m <= 0 || n <= 0 || k <= 0) return -1.0;
  a = fg_malloc_aligned((size_t)na * sizeof(float));
  b = fg_malloc_aligned((size_t)nb * sizeof(float));
  c = fg_malloc_aligned((size_t)nc * sizeof(float));
  if (a && b && c) {
    /* small values of both signs: no denormals or infinities to slow a run down */
    for (int64_t i = 0; i < na; i++) a[i] = (float)((i * 7 + 3) % 17 - 8) * 0.0625f;
    for (int64_t i = 0; i < nb; i++) b[i] = (float)((i * 5 + 1) % 13 - 6) * 0.0625f;
    memset(c, 0, (size_t)nc * sizeof(float));
    /* one untimed call first: OpenBLAS's buffers and threads, and C's pages */
    fg_gemm(trans_a, trans_b, m, n, k, 1.0f, a, trans_a ? m : k, b, trans_b ? k : n, 0.0f, c, n);
    for (int r = 0; r < (reps > 0 ? reps : 1); r++) {
      const double t0 = fg_now();
      fg_gemm(trans_a, trans_b, m, n, k, 1.0f, a, trans_a ? m : k, b, trans_b ? k : n, 0.0f, c,
              n);
      const double t = fg_now() - t0;
      if (t > 0 && (best < 0 || t < best)) best = t;
    }
  }
  fg_free_aligned(a);
  fg_free_aligned(b);
  fg_free_aligned(c);
  return best;
}

double fg_bench_gemm_bf16(int trans_a, int64_t m, int64_t n, int64_t k, int reps) {
  /* the layer product: A (m x k) bf16, W (k x n) fp32; the weight gradient: A (k x m), G
   * (k x n) bf16, the reduction over the k rows */
  const int64_t na = m * k, nb = k * n, nc = m * n;
  fg_bf16 *a, *g;
  float *w, *c;
  double best = -1.0;
  if (m <= 0 || n <= 0 || k <= 0) return -1.0;
  a = fg_malloc_aligned((size_t)na * sizeof(fg_bf16));
  g = fg_malloc_aligned((size_t)nb * sizeof(fg_bf16));
  w = fg_malloc_aligned((size_t)nb * sizeof(float));
  c = fg_malloc_aligned((size_t)nc * sizeof(float));
  if (a && g && w && c) {
    for (int64_t i = 0; i < na; i++)
      a[i] = fg_bf16_from_float((float)((i * 7 + 3) % 17 - 8) * 0.0625f);
    for (int64_t i = 0; i < nb; i++) w[i] = (float)((i * 5 + 1) % 13 - 6) * 0.0625f;
    fg_bf16_from_f32(g, w, nb);
    memset(c, 0, (size_t)nc * sizeof(float));
    for (int r = -1; r < (reps > 0 ? reps : 1); r++) { /* r == -1: the untimed call */
      const double t0 = fg_now();
      const fg_status st = trans_a ? fg_bf16_gemm_wgrad(k, m, n, a, m, g, n, c, n, 0)
                                   : fg_bf16_gemm_tall(m, k, n, a, k, w, n, c, n, 0);
      const double t = fg_now() - t0;
      if (st != FG_OK) {
        best = -1.0;
        break;
      }
      if (r >= 0 && t > 0 && (best < 0 || t < best)) best = t;
    }
  }
  fg_free_aligned(a);
  fg_free_aligned(g);
  fg_free_aligned(w);
  fg_free_aligned(c);
  return best;
}
