/* spmm.c -- Y = A X for a CSR matrix A and a dense row-major X: the propagation step of a GCN.
 *
 * The tuned kernel gives every row to exactly one thread and sums a row's products in the
 * order of its nonzeros, exactly as the reference does, so its result does not depend on the
 * thread count. Rows are cut into per-thread ranges of equal cost (nonzeros + rows) by a
 * binary search on rowptr; feature columns go in tiles of up to 64 floats whose accumulators
 * stay in vector registers while the row's nonzeros stream by.
 */
#include <string.h>

#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

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

#if defined(__GNUC__)
/* GNU C vector extension (gcc, clang): eight floats, kept in registers by the compiler. The
 * accumulators of a tile are an array indexed by constants after inlining, which the
 * compiler turns into registers; a plain float array would live on the stack. */
typedef float fg_v8 __attribute__((vector_size(32)));
#define FG_V8 8

static inline fg_v8 v8_load(const float *p) {
  fg_v8 v;
  memcpy(&v, p, sizeof v); /* an unaligned load */
  return v;
}

static inline void v8_store(float *p, fg_v8 v) { memcpy(p, &v, sizeof v); }

/* y[0, 8 nv) = (or +=) row r of A times columns [0, 8 nv) of X, for nv in 1..8; X already
 * offset to the tile's first column. Products are added in nonzero order, as in the
 * reference. */
static inline void spmm_vtile(const fg_csr *A, const float *X, int64_t ldx, int64_t r, float *y,
                              int accumulate, const int nv) {
  const int64_t k0 = A->rowptr[r], k1 = A->rowptr[r + 1];
  const int32_t *col = A->col;
  const float *val = A->val;
  fg_v8 acc[8];
  for (int i = 0; i < nv; i++) acc[i] = (fg_v8){0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f};
  if (val) {
    for (int64_t k = k0; k < k1; k++) {
      const float *x = X + (int64_t)col[k] * ldx;
      const float s = val[k];
      const fg_v8 a = {s, s, s, s, s, s, s, s};
      for (int i = 0; i < nv; i++) acc[i] += a * v8_load(x + FG_V8 * i);
    }
  } else {
    for (int64_t k = k0; k < k1; k++) {
      const float *x = X + (int64_t)col[k] * ldx;
      for (int i = 0; i < nv; i++) acc[i] += v8_load(x + FG_V8 * i);
    }
  }
  for (int i = 0; i < nv; i++) {
    if (accumulate) acc[i] += v8_load(y + FG_V8 * i);
    v8_store(y + FG_V8 * i, acc[i]);
  }
}
#endif

/* y[0, w) = (or +=) row r of A times columns [0, w) of X (X offset to the first column), one
 * column at a time with a scalar accumulator: the narrow tail of a row. */
static inline void spmm_scalar_cols(const fg_csr *A, const float *X, int64_t ldx, int64_t r,
                                    float *y, int accumulate, int64_t w) {
  const int64_t k0 = A->rowptr[r], k1 = A->rowptr[r + 1];
  const int32_t *col = A->col;
  const float *val = A->val;
  for (int64_t j = 0; j < w; j++) {
    float acc = 0.0f;
    if (val) {
      for (int64_t k = k0; k < k1; k++) acc += val[k] * X[(int64_t)col[k] * ldx + j];
    } else {
      for (int64_t k = k0; k < k1; k++) acc += X[(int64_t)col[k] * ldx + j];
    }
    y[j] = accumulate ? y[j] + acc : acc;
  }
}

/* Rows [r0, r1) of Y = A X (accumulate == 0) or Y += A X (accumulate != 0): columns in tiles
 * of 64, then one tile each of 32, 16 and 8 as they fit, then single columns. */
static void spmm_rows(const fg_csr *A, const float *X, int64_t ldx, float *Y, int64_t ldy,
                      int64_t f, int64_t r0, int64_t r1, int accumulate) {
  for (int64_t r = r0; r < r1; r++) {
    float *y = Y + r * ldy; // (f)
    int64_t j0 = 0;
#if defined(__GNUC__)
    for (; j0 + 8 * FG_V8 <= f; j0 += 8 * FG_V8)
      spmm_vtile(A, X + j0, ldx, r, y + j0, accumulate, 8);
    if (f - j0 >= 4 * FG_V8) {
      spmm_vtile(A, X + j0, ldx, r, y + j0, accumulate, 4);
      j0 += 4 * FG_V8;
    }
    if (f - j0 >= 2 * FG_V8) {
      spmm_vtile(A, X + j0, ldx, r, y + j0, accumulate, 2);
      j0 += 2 * FG_V8;
    }
    if (f - j0 >= FG_V8) {
      spmm_vtile(A, X + j0, ldx, r, y + j0, accumulate, 1);
      j0 += FG_V8;
    }
#endif
    spmm_scalar_cols(A, X + j0, ldx, r, y + j0, accumulate, f - j0);
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
