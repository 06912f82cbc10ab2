/* quant.c -- rows quantized to b-bit codes for messages (SuperGCN §2.4, §3.3.2): per row the
 * minimum (the zero point) and scale = (max - min) / (2^b - 1); each value's code is
 * floor((x - min) / scale + u), u uniform in [0, 1) from the counter-based RNG, so the
 * dequantized value min + scale q is x in expectation (stochastic rounding). Codes are packed
 * 8 / b a byte, the first column in the low bits. Each element's draw is keyed by the row's id
 * and its column, never by its position or the thread that handles it, so the codes are the
 * same whatever the thread count or the order rows are listed in. */
#include <math.h>
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

int64_t fg_quant_row_bytes(int64_t cols, int bits) { return (cols * bits + 7) / 8; }

/* The row's zero point and scale (0 for a constant row: every code 0, min exactly). */
static void row_range(const float *x, int64_t cols, int bits, float *zero, float *scale) {
  float lo = cols > 0 ? x[0] : 0.0f, hi = lo;
  for (int64_t c = 1; c < cols; c++) {
    lo = x[c] < lo ? x[c] : lo;
    hi = x[c] > hi ? x[c] : hi;
  }
  *zero = lo;
  *scale = (hi - lo) / (float)((1 << bits) - 1);
}

/* The code of x: floor(t + u) with t = (x - zero) / scale clamped to [0, levels]. */
static inline uint32_t code_of(float x, float zero, float scale, uint32_t levels, float u) {
  float t, q;
  if (scale == 0.0f) return 0;
  t = (x - zero) / scale;
  t = t < 0.0f ? 0.0f : t > (float)levels ? (float)levels : t;
  q = floorf(t + u);
  return q > (float)levels ? levels : (uint32_t)q;
}

static inline float draw(uint64_t prefix, int64_t col) {
  return (float)(fg_rng_last(prefix, (uint64_t)col) >> 40) * (1.0f / 16777216.0f);
}

void fg_quantize_rows(const float *x, int64_t rows, int64_t cols, int bits, uint64_t seed,
                      uint64_t key, const int64_t *row_ids, uint8_t *codes, float *scale,
                      float *zero) {
  const int64_t rb = fg_quant_row_bytes(cols, bits);
  const uint32_t levels = (1u << bits) - 1u, per = (uint32_t)(8 / bits);
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    const float *xr = x + r * cols;
    uint8_t *out = codes + r * rb;
    const uint64_t prefix = fg_rng_prefix(seed, FG_RNG_QUANTIZE, key,
                                          (uint64_t)(row_ids ? row_ids[r] : r), 0);
    row_range(xr, cols, bits, &zero[r], &scale[r]);
    memset(out, 0, (size_t)rb);
    for (int64_t c = 0; c < cols; c++) {
      const uint32_t q = code_of(xr[c], zero[r], scale[r], levels, draw(prefix, c));
      out[c / per] |= (uint8_t)(q << (bits * (int)(c % per)));
    }
  }
}

void fg_dequantize_rows(const uint8_t *codes, const float *scale, const float *zero,
                        int64_t rows, int64_t cols, int bits, float *out) {
  const int64_t rb = fg_quant_row_bytes(cols, bits);
  const uint32_t mask = (1u << bits) - 1u, per = (uint32_t)(8 / bits);
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    const uint8_t *in = codes + r * rb;
    float *o = out + r * cols;
    for (int64_t c = 0; c < cols; c++)
      o[c] = zero[r] + scale[r] * (float)((in[c / per] >> (bits * (int)(c % per))) & mask);
  }
}

/* ---- references: one element at a time, each draw from the whole key ---- */

void fg_quantize_rows_ref(const float *x, int64_t rows, int64_t cols, int bits, uint64_t seed,
                          uint64_t key, const int64_t *row_ids, uint8_t *codes, float *scale,
                          float *zero) {
  const int64_t rb = fg_quant_row_bytes(cols, bits);
  const uint32_t levels = (1u << bits) - 1u;
  memset(codes, 0, (size_t)(rows * rb));
  for (int64_t r = 0; r < rows; r++) {
    float lo = 0.0f, hi = 0.0f;
    for (int64_t c = 0; c < cols; c++) {
      const float v = x[r * cols + c];
      lo = c == 0 || v < lo ? v : lo;
      hi = c == 0 || v > hi ? v : hi;
    }
    zero[r] = lo;
    scale[r] = (hi - lo) / (float)levels;
    for (int64_t c = 0; c < cols; c++) {
      const uint64_t id = (uint64_t)(row_ids ? row_ids[r] : r);
      const float u = fg_rng_uniform(seed, FG_RNG_QUANTIZE, key, id, 0, (uint64_t)c);
      const int64_t bit = c * bits;
      uint32_t q = 0;
      if (scale[r] != 0.0f) {
        const float t = fminf(fmaxf((x[r * cols + c] - lo) / scale[r], 0.0f), (float)levels);
        q = (uint32_t)fminf(floorf(t + u), (float)levels);
      }
      codes[r * rb + bit / 8] |= (uint8_t)(q << (bit % 8));
    }
  }
}

void fg_dequantize_rows_ref(const uint8_t *codes, const float *scale, const float *zero,
                            int64_t rows, int64_t cols, int bits, float *out) {
  const int64_t rb = fg_quant_row_bytes(cols, bits);
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const int64_t bit = c * bits;
      const uint32_t q = ((uint32_t)codes[r * rb + bit / 8] >> (bit % 8)) & ((1u << bits) - 1u);
      out[r * cols + c] = zero[r] + scale[r] * (float)q;
    }
}
