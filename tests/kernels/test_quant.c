/* test_quant.c -- quantized messages (int2, int4, int8): the tuned kernels equal the references
 * bit for bit at 1 to 3 threads, including constant rows and widths that do not fill a byte;
 * a constant row round-trips exactly; every value comes back within one level; the codes of a
 * row depend on its id, not its position; and the mean of many dequantized draws converges to
 * the input (stochastic rounding is unbiased). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

enum { ROWS = 37, COLS = 13 };

static void fill(float *x, int64_t rows, int64_t cols, uint64_t seed) {
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      x[r * cols + c] = r % 5 == 2 ? -1.25f /* a constant row */
                                   : (float)(4.0 * kt_u(seed, (uint64_t)r, (uint64_t)c) - 1.5);
}

static void test_against_reference(int bits) {
  const int64_t rb = fg_quant_row_bytes(COLS, bits);
  float x[ROWS * COLS], s1[ROWS], z1[ROWS], s2[ROWS], z2[ROWS], y1[ROWS * COLS], y2[ROWS * COLS];
  uint8_t c1[ROWS * COLS], c2[ROWS * COLS];
  int64_t ids[ROWS];
  const float levels = (float)((1 << bits) - 1);
  fill(x, ROWS, COLS, 3);
  for (int r = 0; r < ROWS; r++) ids[r] = 1000 + 7 * r;
  fg_quantize_rows_ref(x, ROWS, COLS, bits, 9, 42, ids, c2, s2, z2);
  fg_dequantize_rows_ref(c2, s2, z2, ROWS, COLS, bits, y2);
  for (int t = 1; t <= 3; t++) {
    kt_set_threads(t);
    memset(c1, 0xa5, sizeof c1);
    fg_quantize_rows(x, ROWS, COLS, bits, 9, 42, ids, c1, s1, z1);
    fg_dequantize_rows(c1, s1, z1, ROWS, COLS, bits, y1);
    EXPECT_MSG(memcmp(c1, c2, (size_t)(ROWS * rb)) == 0 && memcmp(s1, s2, sizeof s1) == 0 &&
                   memcmp(z1, z2, sizeof z1) == 0 && memcmp(y1, y2, sizeof y1) == 0,
               "int%d at %d threads: the tuned kernels differ from the references", bits, t);
  }
  kt_set_threads(2);
  for (int r = 0; r < ROWS; r++)
    for (int c = 0; c < COLS; c++) {
      const float v = x[r * COLS + c], d = y1[r * COLS + c];
      if (r % 5 == 2) EXPECT_MSG(d == v, "int%d: a constant row does not round-trip", bits);
      else
        EXPECT_MSG(fabsf(d - v) <= s1[r] * (1.0f + 1e-5f) + 1e-6f,
                   "int%d: row %d column %d: %g came back as %g (scale %g)", bits, r, c, v, d,
                   s1[r]);
    }
  /* the last byte's unused bits stay 0; the range is the row's */
  for (int r = 0; r < ROWS; r++) {
    const int used = (COLS * bits) % 8;
    if (used) EXPECT((c1[r * rb + rb - 1] >> used) == 0);
    if (r % 5 != 2) EXPECT(s1[r] > 0.0f && z1[r] <= x[r * COLS] && z1[r] + levels * s1[r] >= x[r * COLS] - 1e-5f);
  }
  /* a row's codes are the same wherever it is listed: rows reversed, ids with them */
  {
    float xr[ROWS * COLS], s3[ROWS], z3[ROWS];
    uint8_t c3[ROWS * COLS];
    int64_t idr[ROWS];
    for (int r = 0; r < ROWS; r++) {
      memcpy(xr + r * COLS, x + (ROWS - 1 - r) * COLS, COLS * sizeof(float));
      idr[r] = ids[ROWS - 1 - r];
    }
    fg_quantize_rows(xr, ROWS, COLS, bits, 9, 42, idr, c3, s3, z3);
    int same = 1;
    for (int r = 0; r < ROWS; r++)
      same &= memcmp(c3 + r * rb, c1 + (ROWS - 1 - r) * rb, (size_t)rb) == 0;
    EXPECT_MSG(same, "int%d: a row's codes depend on where it is listed", bits);
  }
}

/* The mean over K keys of the dequantized row is the row, within 4 standard errors of one
 * draw's spread (at most scale / 2 an element). */
static void test_unbiased(int bits) {
  enum { K = 4000 };
  float x[COLS], s, z, y[COLS];
  uint8_t codes[COLS];
  double mean[COLS] = {0};
  int ok = 1;
  for (int c = 0; c < COLS; c++) x[c] = (float)(3.0 * kt_u(5, (uint64_t)c, 0) - 1.0);
  for (int k = 0; k < K; k++) {
    fg_quantize_rows(x, 1, COLS, bits, 11, (uint64_t)k, NULL, codes, &s, &z);
    fg_dequantize_rows(codes, &s, &z, 1, COLS, bits, y);
    for (int c = 0; c < COLS; c++) mean[c] += y[c] / (double)K;
  }
  fg_quantize_rows(x, 1, COLS, bits, 11, 0, NULL, codes, &s, &z);
  for (int c = 0; c < COLS; c++)
    ok &= fabs(mean[c] - x[c]) <= 4.0 * 0.5 * s / sqrt((double)K) + 1e-6;
  EXPECT_MSG(ok, "int%d: the mean of %d dequantized draws is not the input", bits, K);
  printf("int%d: %lld bytes a row of %d, tuned = reference, unbiased over %d draws\n", bits,
         (long long)fg_quant_row_bytes(COLS, bits), COLS, K);
}

int main(void) {
  for (int bits = 2; bits <= 8; bits *= 2) {
    test_against_reference(bits);
    test_unbiased(bits);
  }
  return fg_test_finish("kernels_quant");
}
