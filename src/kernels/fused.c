/* fused.c -- elementwise passes fused so that the model sweeps an activation once instead of
 * two or three times: bias + ReLU + dropout after a layer's product, and the backward mask that
 * stands for dropout and ReLU together. Each equals a composition of the reference kernels bit
 * for bit (tests/kernels/test_fused.c). */
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_bf16.h"
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

/* columns a row is processed in at a time; a multiple of 4 (one draw serves four columns) */
#define FG_FUSED_CHUNK 256
/* Rows read through a row map (the input pass gathering the features in the dataset's order)
 * are prefetched this many bytes of rows ahead: each row is a jump the hardware prefetcher
 * cannot follow, and a row's work (the dropout draws, rounding, three short loops) is too long
 * for the next row's loads to start on their own. */
#ifndef FG_FUSED_PREFETCH_BYTES
#define FG_FUSED_PREFETCH_BYTES 4096
#endif

/* The cache lines of `bytes` bytes at p, for reading */
static inline void prefetch_row(const void *p, int64_t bytes) {
  const char *c = p;
  for (int64_t off = 0; off < bytes; off += 64) __builtin_prefetch(c + off, 0, 3);
}

/* The 16-bit dropout fields of global columns [g0, g0 + w) of the row with key `key`, at
 * m16[0..w): field j is bits 16 (j % 4) .. 16 (j % 4) + 15 of draw j / 4, as fg_dropout_keep
 * reads them. On a little-endian machine those are simply the uint16 halves of the draws in
 * memory order, so the draws are stored whole (a loop of independent 64-bit mixes that
 * vectorizes) and the fields read from an offset of g0 % 4. m16 has room for w + 4 fields. */
static inline const uint16_t *dropout_fields(uint16_t *m16, uint64_t key, int64_t g0,
                                             int64_t w) {
  const int64_t q0 = g0 / 4, shift = g0 % 4, nq = (shift + w + 3) / 4;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t h[FG_FUSED_CHUNK / 4 + 1];
  FG_OMP_SIMD
  for (int64_t q = 0; q < nq; q++) h[q] = fg_rng_last(key, (uint64_t)(q0 + q));
  memcpy(m16, h, (size_t)nq * sizeof h[0]);
#else
  for (int64_t q = 0; q < nq; q++) {
    const uint64_t h = fg_rng_last(key, (uint64_t)(q0 + q));
    for (int k = 0; k < 4; k++) m16[4 * q + k] = (uint16_t)(h >> (16 * k));
  }
#endif
  return m16 + shift;
}

/* v where keep, else +0: the bits of v and-ed with a mask. A float select GCC 12 leaves as a
 * branch (on a 16-bit compare, or beside a multiply that -ftrapping-math keeps on one side)
 * would hold the loops below scalar, branching on random bits. */
static inline float keep_or_zero(float v, int keep) {
  uint32_t bits;
  memcpy(&bits, &v, sizeof bits);
  bits &= -(uint32_t)(keep != 0);
  memcpy(&v, &bits, sizeof v);
  return v;
}

/* One chunk of a row; the flags are constants after inlining, so each combination is its own
 * branch-free loop. */
static inline void fused_chunk(float *o, const float *x, const float *b, const uint16_t *m16,
                               int64_t w, uint32_t thr, float scale, const int has_bias,
                               const int relu, const int drop) {
  FG_OMP_SIMD
  for (int64_t c = 0; c < w; c++) {
    float v = x[c];
    if (has_bias) v = v + b[c];
    if (relu) v = v < 0.0f ? 0.0f : v; /* as fg_relu_forward: a NaN passes */
    if (drop) v = keep_or_zero(v * scale, (uint32_t)m16[c] >= thr);
    o[c] = v;
  }
}

/* The pass behind fg_bias_relu_dropout, fg_dropout_rows and their bf16 forms: output row r
 * reads input row in_rows[r] (r when in_rows is NULL); local column c is global column
 * col0 + c. The output is fp32 (out), or bf16 (out16, out NULL): each chunk rounded from a
 * stack buffer, so the fp32 values are never stored and the rows take one parallel pass. */
static void fused_rows(float *out, uint16_t *out16, float *acc, float alpha, const float *in,
                       const uint16_t *in16, int round_in, const int64_t *in_rows,
                       const float *bias, int64_t rows, int64_t cols, int relu, float p,
                       uint64_t seed, uint64_t epoch, uint64_t layer, const int64_t *global_ids,
                       int64_t col0) {
  assert(p >= 0.0f && p < 1.0f);
  if (rows <= 0 || cols <= 0) return;
  const int drop = p > 0.0f;
  const float scale = drop ? 1.0f / (1.0f - p) : 1.0f;
  const uint32_t thr = fg_dropout_threshold(p);
  const int64_t row_bytes = cols * (in16 ? 2 : 4);
  const int64_t ahead = FG_MAX(FG_FUSED_PREFETCH_BYTES / row_bytes, 1);
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    const int64_t src = (in_rows ? in_rows[r] : r) * cols;
    /* (a row past this thread's range is prefetched in vain, harmlessly) */
    if (FG_FUSED_PREFETCH_BYTES > 0 && in_rows && r + ahead < rows) {
      const int64_t next = in_rows[r + ahead] * cols;
      if (in16) prefetch_row(in16 + next, row_bytes);
      else prefetch_row(in + next, row_bytes);
    }
    const uint64_t gid = global_ids ? (uint64_t)global_ids[r] : (uint64_t)r;
    const uint64_t key = drop ? fg_dropout_row_key(seed, epoch, layer, gid) : 0;
    uint16_t fields[FG_FUSED_CHUNK + 4];
    float chunk[FG_FUSED_CHUNK]; /* a chunk's fp32 values before rounding (out16) */
    float xin[FG_FUSED_CHUNK];   /* a chunk of a bf16 input, widened (in16 or round_in) */
    for (int64_t c0 = 0; c0 < cols; c0 += FG_FUSED_CHUNK) {
      const int64_t w = FG_MIN(cols - c0, (int64_t)FG_FUSED_CHUNK);
      const float *b = bias ? bias + c0 : NULL;
      float *o = out16 || acc ? chunk : out + r * cols + c0; // (w)
      const float *x = xin; // (w)
      if (in16) {
        const uint16_t *x16 = in16 + src + c0;
        FG_OMP_SIMD
        for (int64_t c = 0; c < w; c++) xin[c] = fg_bf16_to_float(x16[c]);
      } else if (round_in) {
        const float *x32 = in + src + c0;
        FG_OMP_SIMD
        for (int64_t c = 0; c < w; c++) xin[c] = fg_bf16_to_float(fg_bf16_from_float(x32[c]));
      } else {
        x = in + src + c0;
      }
      if (drop) {
        const uint16_t *m16 = dropout_fields(fields, key, col0 + c0, w);
        if (bias && relu) fused_chunk(o, x, b, m16, w, thr, scale, 1, 1, 1);
        else if (bias) fused_chunk(o, x, b, m16, w, thr, scale, 1, 0, 1);
        else if (relu) fused_chunk(o, x, b, m16, w, thr, scale, 0, 1, 1);
        else fused_chunk(o, x, b, m16, w, thr, scale, 0, 0, 1);
      } else {
        if (bias && relu) fused_chunk(o, x, b, NULL, w, thr, scale, 1, 1, 0);
        else if (bias) fused_chunk(o, x, b, NULL, w, thr, scale, 1, 0, 0);
        else if (relu) fused_chunk(o, x, b, NULL, w, thr, scale, 0, 1, 0);
        else fused_chunk(o, x, b, NULL, w, thr, scale, 0, 0, 0);
      }
      if (out16) {
        uint16_t *o16 = out16 + r * cols + c0; // (w)
        FG_OMP_SIMD
        for (int64_t c = 0; c < w; c++) o16[c] = fg_bf16_from_float(chunk[c]);
      } else if (acc) { /* as fg_axpy on the stored values */
        float *y = acc + r * cols + c0; // (w)
        FG_OMP_SIMD
        for (int64_t c = 0; c < w; c++) y[c] += alpha * chunk[c];
      }
    }
  }
}

void fg_bias_relu_dropout(float *out, const float *in, const float *bias, int64_t rows,
                          int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                          uint64_t layer, const int64_t *global_ids, int64_t col0) {
  fused_rows(out, NULL, NULL, 0.0f, in, NULL, 0, NULL, bias, rows, cols, relu, p, seed, epoch,
             layer, global_ids, col0);
}

void fg_bias_relu_dropout_bf16(uint16_t *out, const float *in, const float *bias, int64_t rows,
                               int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                               uint64_t layer, const int64_t *global_ids, int64_t col0) {
  fused_rows(NULL, out, NULL, 0.0f, in, NULL, 0, NULL, bias, rows, cols, relu, p, seed, epoch,
             layer, global_ids, col0);
}

void fg_dropout_rows(float *out, const float *in, const int64_t *in_rows, int64_t rows,
                     int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                     const int64_t *global_ids, int64_t col0) {
  fused_rows(out, NULL, NULL, 0.0f, in, NULL, 0, in_rows, NULL, rows, cols, 0, p, seed, epoch,
             layer, global_ids, col0);
}

void fg_dropout_rows_bf16(uint16_t *out, const float *in, const int64_t *in_rows, int64_t rows,
                          int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                          const int64_t *global_ids, int64_t col0) {
  fused_rows(NULL, out, NULL, 0.0f, in, NULL, 0, in_rows, NULL, rows, cols, 0, p, seed, epoch,
             layer, global_ids, col0);
}

void fg_dropout_rows_x16(float *out, uint16_t *out16, const float *in, const uint16_t *in16,
                         const int64_t *in_rows, int64_t rows, int64_t cols, float p, uint64_t seed,
                         uint64_t epoch, uint64_t layer, const int64_t *global_ids, int64_t col0) {
  assert((out != NULL) != (out16 != NULL) && (in != NULL || in16 != NULL));
  fused_rows(out, out16, NULL, 0.0f, in, in16, in16 == NULL, in_rows, NULL, rows, cols, 0, p,
             seed, epoch, layer, global_ids, col0);
}

void fg_dropout_rows_x16_axpy(float *y, float alpha, const float *in, const uint16_t *in16,
                              const int64_t *in_rows, int64_t rows, int64_t cols, float p,
                              uint64_t seed, uint64_t epoch, uint64_t layer,
                              const int64_t *global_ids, int64_t col0) {
  assert(y != NULL && (in != NULL || in16 != NULL));
  fused_rows(NULL, NULL, y, alpha, in, in16, in16 == NULL, in_rows, NULL, rows, cols, 0, p,
             seed, epoch, layer, global_ids, col0);
}

void fg_dropout_rows_ref(float *out, const float *in, const int64_t *in_rows, int64_t rows,
                         int64_t cols, float p, uint64_t seed, uint64_t epoch, uint64_t layer,
                         const int64_t *global_ids, int64_t col0) {
  for (int64_t r = 0; r < rows; r++) {
    const int64_t src = in_rows ? in_rows[r] : r;
    for (int64_t c = 0; c < cols; c++) out[r * cols + c] = in[src * cols + c];
  }
  if (p > 0.0f)
    fg_dropout_cols_ref(out, out, rows, cols, p, seed, epoch, layer, global_ids, col0);
}

void fg_bias_relu_dropout_ref(float *out, const float *in, const float *bias, int64_t rows,
                              int64_t cols, int relu, float p, uint64_t seed, uint64_t epoch,
                              uint64_t layer, const int64_t *global_ids, int64_t col0) {
  for (int64_t i = 0; i < rows * cols; i++) out[i] = in[i];
  if (bias)
    for (int64_t r = 0; r < rows; r++)
      for (int64_t c = 0; c < cols; c++) out[r * cols + c] += bias[c];
  if (relu)
    for (int64_t i = 0; i < rows * cols; i++) out[i] = out[i] < 0.0f ? 0.0f : out[i];
  if (p > 0.0f)
    fg_dropout_cols_ref(out, out, rows, cols, p, seed, epoch, layer, global_ids, col0);
}

void fg_masked_scale(float *g, const float *d, int64_t n, float scale) {
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) g[i] = keep_or_zero(g[i] * scale, d[i] > 0.0f);
}

/* A bf16 value's d > 0: sign clear and not zero, and not a NaN (0x7f81..0x7fff). */
static inline int bf16_positive(uint16_t d) { return d != 0 && d <= 0x7f80u; }

void fg_masked_scale_bf16(float *g, const uint16_t *d, int64_t n, float scale) {
  FG_OMP_FOR_SIMD(n)
  for (int64_t i = 0; i < n; i++) g[i] = keep_or_zero(g[i] * scale, bf16_positive(d[i]));
}

void fg_masked_scale_bias_bf16_rows(fg_bf16 *g16, const float *g, const uint16_t *d, int64_t r0,
                                    int64_t rows, int64_t cols, float scale, double *part) {
  /* the bias blocks [b0, b1) that rows [r0, r0 + rows) meet, each taken by one thread */
  const int64_t b0 = r0 / FG_BIAS_BLOCK_ROWS;
  const int64_t b1 = rows > 0 ? (r0 + rows - 1) / FG_BIAS_BLOCK_ROWS + 1 : b0;
  if (cols <= 0 || rows <= 0) return;
  FG_OMP_FOR(rows * cols)
  for (int64_t b = b0; b < b1; b++) {
    double *p = part ? part + b * cols : NULL; // (cols)
    const int64_t lo = FG_MAX(r0, b * FG_BIAS_BLOCK_ROWS);
    const int64_t hi = FG_MIN(r0 + rows, (b + 1) * FG_BIAS_BLOCK_ROWS);
    if (p && lo == b * FG_BIAS_BLOCK_ROWS)
      for (int64_t c = 0; c < cols; c++) p[c] = 0.0;
    for (int64_t r = lo; r < hi; r++) {
      const float *gr = g + (r - r0) * cols; // (cols)
      const uint16_t *dr = d + r * cols;     // (cols), may be g16's row: read before it is written
      fg_bf16 *o = g16 + r * cols;           // (cols)
      if (p) {
        FG_OMP_SIMD
        for (int64_t c = 0; c < cols; c++) {
          const float v = keep_or_zero(gr[c] * scale, bf16_positive(dr[c]));
          p[c] += (double)v;
          o[c] = fg_bf16_from_float(v);
        }
      } else {
        FG_OMP_SIMD
        for (int64_t c = 0; c < cols; c++)
          o[c] = fg_bf16_from_float(keep_or_zero(gr[c] * scale, bf16_positive(dr[c])));
      }
    }
  }
}

int64_t fg_bias_part_len(int64_t rows, int64_t cols) { return fg_bias_blocks(rows) * cols; }

void fg_bias_from_parts(float *dbias, const double *part, int64_t rows, int64_t cols) {
  fg_bias_sum_blocks(dbias, part, fg_bias_blocks(rows), cols);
}

void fg_masked_scale_bias_bf16(fg_bf16 *g16, const float *g, const uint16_t *d, int64_t rows,
                               int64_t cols, float scale, float *dbias) {
  const int64_t nblocks = fg_bias_blocks(rows);
  double *part = NULL; /* (nblocks x cols) each block's column sums, as fg_bias_backward's */
  if (cols <= 0) return;
  if (dbias) part = fg_malloc_array((size_t)FG_MAX(nblocks * cols, 1), sizeof *part);
  if (dbias && !part) { /* no memory for the blocks' sums: fg_bias_backward's column order */
    for (int64_t c = 0; c < cols; c++) {
      double s = 0.0;
      for (int64_t b = 0; b < nblocks; b++) {
        const int64_t r1 = FG_MIN(rows, (b + 1) * FG_BIAS_BLOCK_ROWS);
        double bs = 0.0;
        for (int64_t r = b * FG_BIAS_BLOCK_ROWS; r < r1; r++)
          bs += (double)keep_or_zero(g[r * cols + c] * scale, bf16_positive(d[r * cols + c]));
        s += bs;
      }
      dbias[c] = (float)s;
    }
  }
  fg_masked_scale_bias_bf16_rows(g16, g, d, 0, rows, cols, scale, part);
  if (part) {
    fg_bias_sum_blocks(dbias, part, nblocks, cols);
    free(part);
  }
}
