/* fg_kernel_util.h -- private helpers shared by the kernel files (not part of the kernel API):
 * the OpenMP pragmas (no-ops without OpenMP) and how many tasks a loop is worth. */
#ifndef FG_KERNEL_UTIL_H
#define FG_KERNEL_UTIL_H

#include <stdint.h>

#include "core/fg_core.h"

#ifdef _OPENMP
#define FG_PRAGMA(text) _Pragma(#text)
#else
#define FG_PRAGMA(text)
#endif
#define FG_OMP_SIMD FG_PRAGMA(omp simd)

/* Elementwise loops shorter than this run on one thread (a fork costs more than the work). */
#define FG_PAR_MIN_ELEMS 32768
/* Rows a bias gradient sums in a block (fg_bias_backward, fg_masked_scale_bias_bf16): fixed, so
 * that its bits do not depend on the thread count. */
#define FG_BIAS_BLOCK_ROWS 1024
/* A static parallel loop (FG_OMP_FOR_SIMD: vectorized too) over n elements, on one thread when
 * n is at most FG_PAR_MIN_ELEMS. */
#define FG_OMP_FOR(n) FG_PRAGMA(omp parallel for schedule(static) if ((n) > FG_PAR_MIN_ELEMS))
#define FG_OMP_FOR_SIMD(n) \
  FG_PRAGMA(omp parallel for simd schedule(static) if ((n) > FG_PAR_MIN_ELEMS))
/* A loop over ntasks tasks, one a thread. */
#define FG_OMP_TASKS(ntasks) \
  FG_PRAGMA(omp parallel for schedule(static, 1) num_threads(ntasks) if ((ntasks) > 1))

/* Number of tasks for `work` units when one task should get at least `min_work` units:
 * min(threads, max(1, work / min_work)). Always >= 1. */
static inline int fg_kernel_tasks(int64_t work, int64_t min_work) {
  const int64_t threads = fg_max_threads(), by_work = min_work > 0 ? work / min_work : work;
  return (int)FG_MAX(1, FG_MIN(threads, by_work));
}

/* Start of task t's share when [0, n) is cut into ntasks near-equal contiguous ranges. */
static inline int64_t fg_task_start(int64_t n, int t, int ntasks) {
  /* floor(n * t / ntasks) without overflow, writing n = q * ntasks + rem */
  const int64_t q = n / ntasks, rem = n % ntasks;
  return q * t + rem * t / ntasks;
}

/* A CSR's rows cut by cost for the SpMMs (spmm.c, bf16.c): rows [0, r) cost their nonzeros plus
 * one per row, so that runs of empty rows count too; strictly increasing in r. */
static inline int64_t fg_spmm_row_cost(const int64_t *rowptr, int64_t r) {
  return rowptr[r] - rowptr[0] + r;
}

/* The first row r in [0, nrows] with fg_spmm_row_cost(r) >= target. */
static inline int64_t fg_spmm_find_row(const int64_t *rowptr, int64_t nrows, int64_t target) {
  int64_t lo = 0, hi = nrows;
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (fg_spmm_row_cost(rowptr, mid) < target)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* The chunked SpMMs' loop (fg_spmm_chunked, fg_spmm_bf16_chunked): A's rows in chunks of at
 * least `step` cost units, each handed to run(arg, rows, r0) as a CSR of its own (rows r0..,
 * rowptr offset, col and val indexed as in A), and between(ctx) called after every chunk but
 * the last until it returns nonzero; the rest then runs as one chunk (NULL between: one). */
struct fg_csr;
void fg_spmm_in_chunks(const struct fg_csr *A, int64_t step,
                       void (*run)(void *arg, const struct fg_csr *rows, int64_t r0), void *arg,
                       int (*between)(void *ctx), void *ctx);

/* The bias gradient's fixed row blocks (fg_bias_backward, fg_masked_scale_bias_bf16): their
 * count, and the columns' sums of the blocks' partial sums part[b * cols + c], in block order. */
static inline int64_t fg_bias_blocks(int64_t rows) {
  return rows > 0 ? (rows + FG_BIAS_BLOCK_ROWS - 1) / FG_BIAS_BLOCK_ROWS : 0;
}
static inline void fg_bias_sum_blocks(float *dbias, const double *part, int64_t nblocks,
                                      int64_t cols) {
  for (int64_t c = 0; c < cols; c++) {
    double s = 0.0;
    for (int64_t b = 0; b < nblocks; b++) s += part[b * cols + c];
    dbias[c] = (float)s;
  }
}

#endif /* FG_KERNEL_UTIL_H */
