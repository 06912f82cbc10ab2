/* elementwise.c -- ReLU, bias and dropout. Every output element depends on a
 * fixed set of inputs in a fixed order, so these are repeatable whatever the thread count. */
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

/* ---- ReLU ------------------------------------------------------------------------- */

void fg_relu_forward(float *out, const float *in, int64_t n) {
  /* "x < 0 ? 0 : x" rather than "x > 0 ? x : 0" so a NaN passes through and is noticed */
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) out[i] = in[i] < 0.0f ? 0.0f : in[i];
}

void fg_relu_backward(float *din, const float *dout, const float *out, int64_t n) {
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) din[i] = out[i] > 0.0f ? dout[i] : 0.0f;
}

/* ---- sums of vectors ----------------------------------------------------------------- */

void fg_axpy(float *y, float a, const float *x, int64_t n) {
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) y[i] += a * x[i];
}

/* The sum of FG_DOT_CHUNKS fixed ranges' double sums, in order: the same whatever the
 * thread count. */
#define FG_DOT_CHUNKS 64
double fg_dot(const float *x, const float *y, int64_t n) {
  double part[FG_DOT_CHUNKS], s = 0.0;
  FG_PRAGMA(omp parallel for schedule(static) if (n > FG_PAR_MIN_ELEMS))
  for (int t = 0; t < FG_DOT_CHUNKS; t++) {
    const int64_t i1 = fg_task_start(n, t + 1, FG_DOT_CHUNKS);
    double acc = 0.0;
    for (int64_t i = fg_task_start(n, t, FG_DOT_CHUNKS); i < i1; i++)
      acc += (double)x[i] * (double)y[i];
    part[t] = acc;
  }
  for (int t = 0; t < FG_DOT_CHUNKS; t++) s += part[t];
  return s;
}

/* ---- bias ------------------------------------------------------------------------- */

void fg_bias_add(float *x, const float *bias, int64_t rows, int64_t cols) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    float *row = x + r * cols; // (cols)
    FG_OMP_SIMD
    for (int64_t c = 0; c < cols; c++) row[c] += bias[c];
  }
}

/* dbias[c] = sum over blocks b (in order) of the double sum of block b's rows (in order).
 * The blocks are fixed (FG_BIAS_BLOCK_ROWS rows), so the result is the same for every thread
 * count; the partial sums need nblocks * cols doubles, and without that memory the same
 * order is followed one column at a time. */
void fg_bias_backward(float *dbias, const float *dy, int64_t rows, int64_t cols) {
  if (cols <= 0) return;
  const int64_t nblocks = fg_bias_blocks(rows);
  double *part = nblocks > 1 ? fg_malloc_array((size_t)(nblocks * cols), sizeof *part) : NULL;
  if (!part) {
    for (int64_t c = 0; c < cols; c++) {
      double s = 0.0;
      for (int64_t b = 0; b < nblocks; b++) {
        const int64_t r1 = FG_MIN(rows, (b + 1) * FG_BIAS_BLOCK_ROWS);
        double bs = 0.0;
        for (int64_t r = b * FG_BIAS_BLOCK_ROWS; r < r1; r++) bs += (double)dy[r * cols + c];
        s += bs;
      }
      dbias[c] = (float)s;
    }
    return;
  }
  FG_OMP_FOR(rows * cols)
  for (int64_t b = 0; b < nblocks; b++) {
    double *p = part + b * cols; // (cols)
    const int64_t r1 = FG_MIN(rows, (b + 1) * FG_BIAS_BLOCK_ROWS);
    for (int64_t c = 0; c < cols; c++) p[c] = 0.0;
    for (int64_t r = b * FG_BIAS_BLOCK_ROWS; r < r1; r++) {
      const float *row = dy + r * cols;
      FG_OMP_SIMD
      for (int64_t c = 0; c < cols; c++) p[c] += (double)row[c];
    }
  }
  fg_bias_sum_blocks(dbias, part, nblocks, cols);
  free(part);
}

/* ---- dropout ---------------------------------------------------------------------- */

void fg_dropout_cols_ref(float *out, const float *in, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids, int64_t col0) {
  assert(p >= 0.0f && p < 1.0f);
  const float scale = 1.0f / (1.0f - p);
  const uint32_t thr = fg_dropout_threshold(p);
  for (int64_t r = 0; r < rows; r++) {
    const uint64_t gid = global_ids ? (uint64_t)global_ids[r] : (uint64_t)r;
    for (int64_t c = 0; c < cols; c++) {
      const uint64_t j = (uint64_t)(col0 + c);
      const int keep = fg_dropout_keep(fg_dropout_row_key(seed, epoch, layer, gid), j, thr);
      out[r * cols + c] = keep ? in[r * cols + c] * scale : 0.0f;
    }
  }
}

void fg_dropout_forward_ref(float *out, const float *in, int64_t rows, int64_t cols, float p,
                            uint64_t seed, uint64_t epoch, uint64_t layer,
                            const int64_t *global_ids) {
  fg_dropout_cols_ref(out, in, rows, cols, p, seed, epoch, layer, global_ids, 0);
}

void fg_dropout_forward(float *out, const float *in, int64_t rows, int64_t cols, float p,
                        uint64_t seed, uint64_t epoch, uint64_t layer, const int64_t *global_ids) {
  fg_bias_relu_dropout(out, in, NULL, rows, cols, 0, p, seed, epoch, layer, global_ids, 0);
}

void fg_dropout_backward(float *din, const float *dout, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids) {
  /* the same mask and scale as forward */
  fg_bias_relu_dropout(din, dout, NULL, rows, cols, 0, p, seed, epoch, layer, global_ids, 0);
}
