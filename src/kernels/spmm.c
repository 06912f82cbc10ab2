/* spmm.c -- Y = A X for a CSR matrix A and a dense row-major X: the propagation step of a GCN.
 *
 * The tuned kernel gives every row to exactly one thread and sums a row's products in the
 * order of its nonzeros, exactly as the reference does, so its result does not depend on the
 * thread count. Rows are cut into per-thread ranges of equal cost (nonzeros + rows) by a
 * binary search on rowptr; feature columns go in tiles of FG_SPMM_TILE floats accumulated in
 * a local array the compiler keeps in vector registers.
 */
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

#define FG_SPMM_TILE 64
/* multiply-adds below which another thread does not pay for itself */
#define FG_SPMM_MIN_TASK_WORK 16384

void fg_spmm_ref(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  for (int64_t r = 0; r < A->nrows; r++) {
    float *y = Y + r * ldy; // (f)
    for (int64_t j = 0; j < f; j++) y[j] = 0.0f;
    for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
      const float a = A->val ? A->val[k] : 1.0f;
      const float *x = X + (int64_t)A->col[k] * ldx; // (f)
      for (int64_t j = 0; j < f; j++) y[j] += a * x[j];
    }
  }
}

/* Cost of rows [0, r): their nonzeros plus one per row, so that runs of empty rows count too.
 * Strictly increasing in r. */
static inline int64_t spmm_row_cost(const int64_t *rowptr, int64_t r) {
  return rowptr[r] - rowptr[0] + r;
}

/* The first row r in [0, nrows] with spmm_row_cost(r) >= target. */
static int64_t spmm_find_row(const int64_t *rowptr, int64_t nrows, int64_t target) {
  int64_t lo = 0, hi = nrows;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (spmm_row_cost(rowptr, mid) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Columns [j0, j0 + FG_SPMM_TILE) of row r's product into acc (fixed width: fully vectorized). */
static inline void spmm_tile_full(const fg_csr *A, const float *X, int64_t ldx, int64_t r,
                                  int64_t j0, float *restrict acc) {
  const int64_t k0 = A->rowptr[r], k1 = A->rowptr[r + 1];
  const int32_t *col = A->col;
  const float *val = A->val;
  for (int j = 0; j < FG_SPMM_TILE; j++) acc[j] = 0.0f;
  if (val) {
    for (int64_t k = k0; k < k1; k++) {
      const float a = val[k];
      const float *restrict x = X + (int64_t)col[k] * ldx + j0;
      FG_OMP_SIMD
      for (int j = 0; j < FG_SPMM_TILE; j++) acc[j] += a * x[j];
    }
  } else {
    for (int64_t k = k0; k < k1; k++) {
      const float *restrict x = X + (int64_t)col[k] * ldx + j0;
      FG_OMP_SIMD
      for (int j = 0; j < FG_SPMM_TILE; j++) acc[j] += x[j];
    }
  }
}

/* The same for a last, narrower tile of w < FG_SPMM_TILE columns. */
static inline void spmm_tile_part(const fg_csr *A, const float *X, int64_t ldx, int64_t r,
                                  int64_t j0, int w, float *restrict acc) {
  const int64_t k0 = A->rowptr[r], k1 = A->rowptr[r + 1];
  const int32_t *col = A->col;
  const float *val = A->val;
  for (int j = 0; j < w; j++) acc[j] = 0.0f;
  if (val) {
    for (int64_t k = k0; k < k1; k++) {
      const float a = val[k];
      const float *restrict x = X + (int64_t)col[k] * ldx + j0;
      FG_OMP_SIMD
      for (int j = 0; j < w; j++) acc[j] += a * x[j];
    }
  } else {
    for (int64_t k = k0; k < k1; k++) {
      const float *restrict x = X + (int64_t)col[k] * ldx + j0;
      FG_OMP_SIMD
      for (int j = 0; j < w; j++) acc[j] += x[j];
    }
  }
}

/* Rows [r0, r1) of Y = A X (accumulate == 0) or Y += A X (accumulate != 0). */
static void spmm_rows(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                      int64_t f, int64_t r0, int64_t r1, int accumulate) {
  float acc[FG_SPMM_TILE];
  for (int64_t r = r0; r < r1; r++) {
    float *y = Y + r * ldy; // (f)
    int64_t j0 = 0;
    for (; j0 + FG_SPMM_TILE <= f; j0 += FG_SPMM_TILE) {
      spmm_tile_full(A, X, ldx, r, j0, acc);
      if (accumulate) {
        for (int j = 0; j < FG_SPMM_TILE; j++) y[j0 + j] += acc[j];
      } else {
        for (int j = 0; j < FG_SPMM_TILE; j++) y[j0 + j] = acc[j];
      }
    }
    if (j0 < f) {
      const int w = (int)(f - j0);
      spmm_tile_part(A, X, ldx, r, j0, w, acc);
      if (accumulate) {
        for (int j = 0; j < w; j++) y[j0 + j] += acc[j];
      } else {
        for (int j = 0; j < w; j++) y[j0 + j] = acc[j];
      }
    }
  }
}

static void spmm_driver(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                        int64_t f, int accumulate) {
  const int64_t nrows = A->nrows;
  if (nrows <= 0 || f <= 0) return;
  assert(ldx >= f && ldy >= f);
  assert(A->rowptr[nrows] >= A->rowptr[0]);
  const int64_t total = spmm_row_cost(A->rowptr, nrows);
  const int ntasks = fg_kernel_tasks(total * f, FG_SPMM_MIN_TASK_WORK);
#ifdef _OPENMP
#pragma omp parallel for schedule(static, 1) num_threads(ntasks) if (ntasks > 1)
#endif
  for (int t = 0; t < ntasks; t++) {
    const int64_t r0 = spmm_find_row(A->rowptr, nrows, fg_task_start(total, t, ntasks));
    const int64_t r1 = spmm_find_row(A->rowptr, nrows, fg_task_start(total, t + 1, ntasks));
    spmm_rows(A, X, ldx, Y, ldy, f, r0, r1, accumulate);
  }
}

void fg_spmm(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  spmm_driver(A, X, ldx, Y, ldy, f, 0);
}

void fg_spmm_acc(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy, int64_t f) {
  spmm_driver(A, X, ldx, Y, ldy, f, 1);
}
