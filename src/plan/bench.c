/* bench.c -- machine measurements: the STREAM triad that benchmarks and the calibration
 * compare against, and the time of one sgemm of a given shape, which bench/single_process.py
 * turns into an epoch's lower bound (fg_bench_stream_triad and fg_bench_gemm in the public
 * header). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fg_graph.h"
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

/* ---- bench spmm: the aggregation kernel alone, fp32 against bf16 ---------------------------- */

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

fg_status fg_bench_spmm(const fg_dataset *ds, int64_t f, const int *threads, int nthreads,
                        int reps, int gemm_between, FILE *out) {
  fg_status st = FG_OK;
  fg_csr A;
  const int64_t n = ds->num_nodes;
  float *X = NULL, *Y = NULL, *W = NULL, *Z = NULL;
  fg_bf16 *X16 = NULL;
  double *t32 = NULL, *t16 = NULL;
  const fg_adj_spec gcn = {FG_ADJ_SYM, 0};
  memset(&A, 0, sizeof A);
  const int current = fg_max_threads();
  FG_REQUIRE(f >= 1 && reps >= 1 && nthreads >= 0, FG_ERR_INVALID_ARG,
             "bench spmm: width and repetitions must be positive, thread counts not negative");
  for (int i = 0; i < nthreads; i++)
    FG_REQUIRE(threads[i] >= 1, FG_ERR_INVALID_ARG, "bench spmm: thread count %d is not positive",
               threads[i]);
  if (nthreads == 0) { /* one row at the current thread count */
    threads = &current;
    nthreads = 1;
  }
  FG_CHECK(fg_adj_operator(&ds->adj, gcn, &A));
  X = fg_malloc_aligned((size_t)(n * f) * sizeof(float));
  Y = fg_malloc_aligned((size_t)(n * f) * sizeof(float));
  X16 = fg_malloc_aligned((size_t)(n * f) * sizeof(fg_bf16));
  if (gemm_between) {
    W = fg_malloc_aligned((size_t)(f * f) * sizeof(float));
    Z = fg_malloc_aligned((size_t)(n * f) * sizeof(float));
  }
  t32 = malloc((size_t)reps * sizeof(double));
  t16 = malloc((size_t)reps * sizeof(double));
  FG_REQUIRE(X && Y && X16 && t32 && t16 && (!gemm_between || (W && Z)), FG_ERR_NOMEM,
             "bench spmm: out of memory for %lld x %lld rows", (long long)n, (long long)f);
  /* small values of both signs (no denormals), the same rows in both precisions */
  for (int64_t i = 0; i < n * f; i++) X[i] = (float)((i * 7 + 3) % 17 - 8) * 0.0625f;
  for (int64_t i = 0; gemm_between && i < f * f; i++) W[i] = (float)((i * 5 + 1) % 13 - 6) / 64.0f;
  fg_bf16_from_f32(X16, X, n * f);
  fprintf(out, "spmm %s: %lld nodes, %lld entries of GCN's A-hat, width %lld, %d reps "
               "(interleaved fp32, bf16)%s; bf16 path %s\n",
          ds->source ? ds->source : "(dataset)", (long long)n, (long long)A.nnz, (long long)f,
          reps, gemm_between ? ", each after a GEMM of its precision (n x f x f, untimed)" : "",
          fg_bf16_path_current());
  fprintf(out, "%7s %12s %12s %9s %12s %12s %9s %10s\n", "threads", "fp32 best s",
          "fp32 median", "fp32 GB/s", "bf16 best s", "bf16 median", "bf16 GB/s", "bf16/fp32");
  for (int ti = 0; ti < nthreads; ti++) {
    fg_set_threads(threads[ti]);
    for (int r = -1; r < reps; r++) { /* r == -1: untimed, pages and threads warm */
      double t0;
      if (gemm_between) fg_gemm(0, 0, n, f, f, 1.0f, X, f, W, f, 0.0f, Z, f);
      t0 = fg_now();
      fg_spmm(&A, X, f, Y, f, f);
      if (r >= 0) t32[r] = fg_now() - t0;
      if (gemm_between) FG_CHECK(fg_bf16_gemm_tall(n, f, f, X16, f, W, f, Z, f, 0));
      t0 = fg_now();
      fg_spmm_bf16(&A, X16, f, Y, f, f, 0);
      if (r >= 0) t16[r] = fg_now() - t0;
    }
    qsort(t32, (size_t)reps, sizeof(double), cmp_double);
    qsort(t16, (size_t)reps, sizeof(double), cmp_double);
    const double m32 = t32[reps / 2], m16 = t16[reps / 2];
    /* (the count in force: a build without OpenMP runs one thread whatever was asked) */
    fprintf(out, "%7d %12.4e %12.4e %9.1f %12.4e %12.4e %9.1f %10.2f\n", fg_max_threads(), t32[0],
            m32, fg_spmm_min_bytes(&A, f, 4.0, 4.0) / m32 / 1e9, t16[0], m16,
            fg_spmm_min_bytes(&A, f, 2.0, 4.0) / m16 / 1e9, m16 / m32);
    fflush(out);
  }
cleanup:
  fg_set_threads(current);
  fg_csr_free(&A);
  fg_free_aligned(X);
  fg_free_aligned(Y);
  fg_free_aligned(X16);
  fg_free_aligned(W);
  fg_free_aligned(Z);
  free(t32);
  free(t16);
  return st;
}
