/* kernel_testlib.h -- helpers shared by the kernel tests: random CSR matrices, double
 * precision gradient comparison, thread-count control. Header-only (static inline). */
#ifndef FG_KERNEL_TESTLIB_H
#define FG_KERNEL_TESTLIB_H

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/fg_rng.h"
#include "kernels/fg_kernels.h"
#include "testutil.h"

#define KT_PURPOSE 77 /* rng purpose for test data, distinct from the library's */

static inline double kt_u(uint64_t seed, uint64_t a, uint64_t b) {
  return fg_rng_uniform_d(seed, KT_PURPOSE, a, b, 0, 0);
}

/* Random nrows x ncols CSR with sorted distinct columns: row nrows / 2 nearly full, every 7th
 * other row (r % 7 == 3) empty, the rest with ~`avg` nonzeros. Values in [-1, 1) unless
 * with_val == 0 (val = NULL). Exits the test on allocation failure. */
static inline void kt_random_csr(fg_csr *A, int64_t nrows, int64_t ncols, double avg,
                                 uint64_t seed, int with_val) {
  memset(A, 0, sizeof *A);
  A->nrows = nrows;
  A->ncols = ncols;
  A->rowptr = calloc((size_t)nrows + 1, sizeof *A->rowptr);
  if (!A->rowptr) exit(2);
  for (int pass = 0; pass < 2; pass++) {
    int64_t nz = 0;
    for (int64_t r = 0; r < nrows; r++) {
      double dens = r == nrows / 2 ? 0.9 : (r % 7 == 3 ? 0.0 : avg / (double)ncols);
      for (int64_t c = 0; c < ncols; c++) {
        if (kt_u(seed, (uint64_t)r, (uint64_t)c) >= dens) continue;
        if (pass == 1) {
          A->col[nz] = (int32_t)c;
          if (A->val) A->val[nz] = (float)(2.0 * kt_u(seed + 1, (uint64_t)r, (uint64_t)c) - 1.0);
        }
        nz++;
      }
      if (pass == 0) A->rowptr[r + 1] = nz;
    }
    if (pass == 0) {
      A->nnz = nz;
      A->col = malloc((size_t)(nz > 0 ? nz : 1) * sizeof *A->col);
      A->val = with_val ? malloc((size_t)(nz > 0 ? nz : 1) * sizeof *A->val) : NULL;
      if (!A->col || (with_val && !A->val)) exit(2);
    }
  }
}

/* Dense copy (nrows x ncols, double) of a CSR matrix. */
static inline double *kt_csr_dense(const fg_csr *A) {
  double *D = calloc((size_t)(A->nrows * A->ncols) + 1, sizeof *D);
  if (!D) exit(2);
  for (int64_t r = 0; r < A->nrows; r++)
    for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++)
      D[r * A->ncols + A->col[k]] += A->val ? (double)A->val[k] : 1.0;
  return D;
}

static inline float *kt_alloc_f(int64_t n) {
  float *p = malloc((size_t)(n > 0 ? n : 1) * sizeof *p);
  if (!p) exit(2);
  return p;
}

static inline double *kt_alloc_d(int64_t n) {
  double *p = calloc((size_t)(n > 0 ? n : 1), sizeof *p);
  if (!p) exit(2);
  return p;
}

/* Gradient comparison: worst |analytic - numeric| / (atol + rtol |numeric|) over n entries
 * (NaN counts as infinitely bad). A gradient passes when this is <= 1. */
static inline double kt_grad_ratio(const float *analytic, const double *numeric, int64_t n,
                                   double atol, double rtol) {
  double worst = 0.0;
  for (int64_t i = 0; i < n; i++) {
    const double d = fabs((double)analytic[i] - numeric[i]) / (atol + rtol * fabs(numeric[i]));
    if (d != d) return INFINITY;
    if (d > worst) worst = d;
  }
  return worst;
}

#define KT_ATOL 1e-5
#define KT_RTOL 1e-4

/* Check a gradient and, as a control that the check has teeth, that the same gradient with
 * one entry's sign flipped (the largest one) and the whole gradient negated are rejected. */
static inline void kt_expect_grad(const char *what, const float *analytic, const double *numeric,
                                  int64_t n) {
  const double ratio = kt_grad_ratio(analytic, numeric, n, KT_ATOL, KT_RTOL);
  printf("  grad %-28s n=%-5lld worst err/tol %.3g\n", what, (long long)n, ratio);
  EXPECT_MSG(ratio <= 1.0, "%s: analytic gradient differs from central differences (%.3g)",
             what, ratio);
  if (ratio > 1.0) return; /* the controls below only make sense for a passing gradient */
  float *bad = kt_alloc_f(n);
  int64_t big = 0;
  for (int64_t i = 0; i < n; i++)
    if (fabs(numeric[i]) > fabs(numeric[big])) big = i;
  memcpy(bad, analytic, (size_t)n * sizeof *bad);
  bad[big] = -bad[big];
  EXPECT_MSG(n == 0 || fabs(numeric[big]) < 1e-3 ||
                 kt_grad_ratio(bad, numeric, n, KT_ATOL, KT_RTOL) > 1.0,
             "%s: the check does not notice a flipped sign", what);
  for (int64_t i = 0; i < n; i++) bad[i] = -analytic[i];
  EXPECT_MSG(n == 0 || fabs(numeric[big]) < 1e-3 ||
                 kt_grad_ratio(bad, numeric, n, KT_ATOL, KT_RTOL) > 1.0,
             "%s: the check does not notice a negated gradient", what);
  free(bad);
}

static inline void kt_set_threads(int n) {
#ifdef _OPENMP
  omp_set_num_threads(n);
#else
  (void)n;
#endif
}

static inline int kt_max_threads(void) {
#ifdef _OPENMP
  return omp_get_max_threads();
#else
  return 1;
#endif
}

#endif /* FG_KERNEL_TESTLIB_H */
