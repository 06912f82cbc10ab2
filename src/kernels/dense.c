/* dense.c -- dense matrix kernels: GEMM (through CBLAS), Glorot init, row normalization and
 * the STREAM triad used to measure memory bandwidth. */
#include <cblas.h>
#include <limits.h>
#include <math.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

const char *fg_blas_corename(void) {
  const char *name = openblas_get_corename();
  return name ? name : "unknown";
}

/* ---- GEMM ------------------------------------------------------------------------ */

void fg_gemm_ref(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
                 const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
                 int64_t ldc) {
  for (int64_t i = 0; i < m; i++) {
    for (int64_t j = 0; j < n; j++) {
      double s = 0.0;
      for (int64_t p = 0; p < k; p++) {
        const float a = trans_a ? A[p * lda + i] : A[i * lda + p]; // op(A)[i][p]
        const float b = trans_b ? B[j * ldb + p] : B[p * ldb + j]; // op(B)[p][j]
        s += (double)a * (double)b;
      }
      const double old = beta == 0.0f ? 0.0 : (double)beta * (double)C[i * ldc + j];
      C[i * ldc + j] = (float)((double)alpha * s + old);
    }
  }
}

void fg_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, float alpha,
             const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
             int64_t ldc) {
  if (m <= 0 || n <= 0) return;
  if (k <= 0) {
    /* op(A) op(B) is zero: C = beta C, and beta == 0 clears C even where it held NaN */
    for (int64_t i = 0; i < m; i++) {
      float *c = C + i * ldc; // (n)
      for (int64_t j = 0; j < n; j++) c[j] = beta == 0.0f ? 0.0f : c[j] * beta;
    }
    return;
  }
  assert(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX);
  assert(lda <= INT_MAX && ldb <= INT_MAX && ldc <= INT_MAX);
  assert(ldc >= n);
  assert(lda >= (trans_a ? m : k) && ldb >= (trans_b ? k : n));
  cblas_sgemm(CblasRowMajor, trans_a ? CblasTrans : CblasNoTrans,
              trans_b ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k, alpha, A, (int)lda, B,
              (int)ldb, beta, C, (int)ldc);
}

/* ---- initialization and normalization -------------------------------------------- */

void fg_glorot_init_piece(float *out, int64_t fan_in, int64_t fan_out, int64_t row0,
                          int64_t col0, int64_t cols, int64_t e0, int64_t len, uint64_t seed,
                          uint64_t layer) {
  const double a = sqrt(6.0 / (double)(fan_in + fan_out));
  if (len <= 0 || cols <= 0) return;
  FG_OMP_FOR(len)
  for (int64_t k = 0; k < len; k++) {
    const int64_t e = e0 + k, i = row0 + e / cols, j = col0 + e % cols;
    const double u = fg_rng_uniform_d(seed, FG_RNG_INIT, layer, (uint64_t)i, (uint64_t)j, 0);
    out[k] = (float)((2.0 * u - 1.0) * a);
  }
}

void fg_glorot_init(float *W, int64_t fan_in, int64_t fan_out, uint64_t seed, uint64_t layer) {
  fg_glorot_init_piece(W, fan_in, fan_out, 0, 0, fan_out, 0, fan_in * fan_out, seed, layer);
}

void fg_row_normalize(float *x, int64_t rows, int64_t cols) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    float *row = x + r * cols; // (cols)
    double s = 0.0;
    for (int64_t j = 0; j < cols; j++) s += (double)row[j];
    if (s == 0.0) continue;
    for (int64_t j = 0; j < cols; j++) row[j] = (float)((double)row[j] / s);
  }
}

/* ---- bandwidth probe ---------------------------------------------------------------- */

double fg_stream_triad(float *a, const float *b, const float *c, float s, int64_t n) {
  FG_PRAGMA(omp parallel for schedule(static))
  for (int64_t i = 0; i < n; i++) a[i] = b[i] + s * c[i];
  return 3.0 * (double)sizeof(float) * (double)(n > 0 ? n : 0);
}
