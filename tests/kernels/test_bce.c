/* test_bce.c -- masked sigmoid binary cross-entropy (multi-label): a hand-computed case, large
 * logits, the tuned kernel against the frozen reference, the gradient w.r.t. the logits
 * against a double-precision objective and its central differences, the tasks cut into column
 * blocks as a grid scheme holds them against the whole rows, and determinism. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

/* scale * sum over selected rows and present targets of -y log s(z) - (1 - y) log(1 - s(z)),
 * written the naive way in double (fine for the |z| <= 4 of the gradient check). */
static double bce_objective(const double *z, int64_t rows, int64_t T, const int8_t *y,
                            const uint8_t *select, double scale) {
  double L = 0.0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t t = 0; t < T; t++) {
      if ((select && !select[r]) || y[r * T + t] < 0) continue;
      const double s = 1.0 / (1.0 + exp(-z[r * T + t]));
      L += scale * (y[r * T + t] ? -log(s) : -log(1.0 - s));
    }
  return L;
}

static void make_problem(int64_t rows, int64_t T, uint64_t seed, float *z, int8_t *y,
                         uint8_t *select) {
  fg_test_fill(z, rows * T, seed, -4.0f, 4.0f);
  for (int64_t i = 0; i < rows * T; i++) {
    const double u = kt_u(seed, (uint64_t)i, 1);
    y[i] = (int8_t)(u < 0.1 ? -1 : u < 0.45 ? 1 : 0); /* a tenth missing */
  }
  for (int64_t r = 0; r < rows; r++) select[r] = kt_u(seed, (uint64_t)r, 2) < 0.7;
}

static void test_hand(void) {
  /* row 0: z = (0, ln 3), y = (1, 0): losses ln 2 and ln 4 (s(ln 3) = 3/4); predictions
   * (0: z = 0 is not > 0, so negative: a false negative; 1: positive, a false positive)
   * row 1: z = (2, -1), y = (-1, 0): the first missing; -1 -> negative, right
   * row 2: not selected */
  const float z[6] = {0.0f, (float)log(3.0), 2.0f, -1.0f, 7.0f, 7.0f};
  const int8_t y[6] = {1, 0, -1, 0, 1, 1};
  const uint8_t select[3] = {1, 1, 0};
  float dz[6];
  fg_bce_counts c;
  const double loss = fg_sigmoid_bce(z, 3, 2, 0, y, 2, select, 0.5f, dz, 1, &c);
  const double want = log(2.0) + log(4.0) + log1p(exp(-1.0));
  EXPECT_MSG(fabs(loss - want) < 1e-6, "loss %.9f, expected %.9f", loss, want);
  EXPECT(c.pairs == 3 && c.correct == 1 && c.tp == 0 && c.fp == 1 && c.fn == 1);
  EXPECT(fabsf(dz[0] - 0.5f * (0.5f - 1.0f)) < 1e-6f && fabsf(dz[1] - 0.5f * 0.75f) < 1e-6f);
  EXPECT(dz[2] == 0.0f); /* missing */
  EXPECT(fabsf(dz[3] - 0.5f * (float)(1.0 / (1.0 + exp(1.0)))) < 1e-6f);
  EXPECT(dz[4] == 0.0f && dz[5] == 0.0f); /* not selected */
  /* count_pairs 0: the gradient only */
  fg_bce_counts c0;
  EXPECT(fg_sigmoid_bce(z, 3, 2, 0, y, 2, select, 0.5f, NULL, 0, &c0) == 0.0 && c0.pairs == 0);
  /* large logits: no overflow, the right asymptotes */
  const float big[4] = {1000.0f, -1000.0f, 1000.0f, -1000.0f};
  const int8_t yb[4] = {1, 0, 0, 1};
  float db[4];
  const double lb = fg_sigmoid_bce(big, 1, 4, 0, yb, 4, NULL, 1.0f, db, 1, &c);
  EXPECT_MSG(isfinite(lb) && fabs(lb - 2000.0) < 1e-9, "loss of saturated logits %.9g", lb);
  EXPECT(db[0] == 0.0f && db[1] == 0.0f && db[2] == 1.0f && db[3] == -1.0f);
  const double lbr = fg_sigmoid_bce_ref(big, 1, 4, 0, yb, 4, NULL, 1.0f, db, 1, &c);
  EXPECT(lbr == lb && c.correct == 2 && c.tp == 1 && c.fp == 1 && c.fn == 1);
}

static void test_vs_ref_and_determinism(void) {
  const int64_t rows = 4099, T = 9;
  float *z = kt_alloc_f(rows * T), *dt = kt_alloc_f(rows * T), *dr = kt_alloc_f(rows * T);
  float *d2 = kt_alloc_f(rows * T);
  int8_t *y = malloc((size_t)(rows * T));
  uint8_t *select = malloc((size_t)rows);
  if (!y || !select) exit(2);
  make_problem(rows, T, 31, z, y, select);
  for (int64_t i = 0; i < rows * T; i++) dt[i] = dr[i] = 99.0f; /* must be overwritten */
  fg_bce_counts ct, cr, c2;
  const int was = kt_max_threads();
  for (int threads = 1; threads <= 4; threads *= 2) {
    kt_set_threads(threads);
    const double lt = fg_sigmoid_bce(z, rows, T, 0, y, T, select, 0.01f, dt, 1, &ct);
    const double lr = fg_sigmoid_bce_ref(z, rows, T, 0, y, T, select, 0.01f, dr, 1, &cr);
    printf("  sigmoid_bce %d thread(s): loss tuned %.12g ref %.12g, %lld pairs\n", threads, lt,
           lr, (long long)ct.pairs);
    EXPECT(memcmp(&ct, &cr, sizeof ct) == 0 && ct.pairs > 0 && ct.tp > 0 && ct.fp > 0);
    EXPECT(fabs(lt - lr) <= 1e-12 * fabs(lr));
    EXPECT(memcmp(dt, dr, (size_t)(rows * T) * sizeof *dt) == 0); /* the same per-pair math */
    const double l2 = fg_sigmoid_bce(z, rows, T, 0, y, T, select, 0.01f, d2, 1, &c2);
    EXPECT(memcmp(&l2, &lt, sizeof l2) == 0 && memcmp(d2, dt, (size_t)(rows * T) * 4) == 0);
  }
  kt_set_threads(was);
  free(z);
  free(dt);
  free(dr);
  free(d2);
  free(y);
  free(select);
}

static void test_gradient(void) {
  const int64_t rows = 7, T = 6;
  const float scale = 1.0f / 5.0f;
  float *zf = kt_alloc_f(rows * T), *dz = kt_alloc_f(rows * T), *dzr = kt_alloc_f(rows * T);
  int8_t y[42];
  uint8_t select[7];
  make_problem(rows, T, 55, zf, y, select);
  select[0] = 1;
  const double loss = fg_sigmoid_bce(zf, rows, T, 0, y, T, select, scale, dz, 1, NULL);
  fg_sigmoid_bce_ref(zf, rows, T, 0, y, T, select, scale, dzr, 1, NULL);
  double *z = kt_alloc_d(rows * T), *num = kt_alloc_d(rows * T);
  for (int64_t i = 0; i < rows * T; i++) z[i] = (double)zf[i];
  EXPECT(fabs(loss * scale - bce_objective(z, rows, T, y, select, scale)) < 1e-9);
  const double h = 1e-5;
  for (int64_t i = 0; i < rows * T; i++) {
    const double z0 = z[i];
    z[i] = z0 + h;
    const double lp = bce_objective(z, rows, T, y, select, scale);
    z[i] = z0 - h;
    const double lm = bce_objective(z, rows, T, y, select, scale);
    z[i] = z0;
    num[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("sigmoid bce dlogits", dz, num, rows * T);
  kt_expect_grad("sigmoid bce dlogits (ref)", dzr, num, rows * T);
  free(zf);
  free(dz);
  free(dzr);
  free(z);
  free(num);
}

/* The tasks cut into column blocks: each block's loss, counts and gradient columns together
 * are the whole rows'. */
static void test_column_blocks(void) {
  const int64_t rows = 203, T = 11;
  const int64_t cuts[][4] = {{0, 4, 7, 11}, {0, 0, 10, 11}};
  float *z = kt_alloc_f(rows * T), *dr = kt_alloc_f(rows * T), *dz = kt_alloc_f(rows * T);
  float *blk = kt_alloc_f(rows * T), *dblk = kt_alloc_f(rows * T);
  int8_t *y = malloc((size_t)(rows * T));
  uint8_t *select = malloc((size_t)rows);
  if (!y || !select) exit(2);
  make_problem(rows, T, 9, z, y, select);
  fg_bce_counts cr;
  const double lr = fg_sigmoid_bce_ref(z, rows, T, 0, y, T, select, 0.5f, dr, 1, &cr);
  for (size_t ci = 0; ci < sizeof cuts / sizeof cuts[0]; ci++) {
    double loss = 0.0;
    fg_bce_counts all = {0, 0, 0, 0, 0}, c;
    for (int b = 0; b < 3; b++) {
      const int64_t c0 = cuts[ci][b], w = cuts[ci][b + 1] - c0;
      for (int64_t r = 0; r < rows; r++)
        memcpy(blk + r * w, z + r * T + c0, (size_t)w * sizeof *z);
      loss += fg_sigmoid_bce(blk, rows, w, c0, y, T, select, 0.5f, dblk, 1, &c);
      all.pairs += c.pairs;
      all.correct += c.correct;
      all.tp += c.tp;
      all.fp += c.fp;
      all.fn += c.fn;
      for (int64_t r = 0; r < rows; r++)
        memcpy(dz + r * T + c0, dblk + r * w, (size_t)w * sizeof *dz);
    }
    EXPECT(memcmp(&all, &cr, sizeof all) == 0);
    EXPECT(fabs(loss - lr) <= 1e-12 * fabs(lr));
    EXPECT(memcmp(dz, dr, (size_t)(rows * T) * sizeof *dz) == 0);
  }
  free(z);
  free(dr);
  free(dz);
  free(blk);
  free(dblk);
  free(y);
  free(select);
}

int main(void) {
  test_hand();
  test_vs_ref_and_determinism();
  test_gradient();
  test_column_blocks();
  return fg_test_finish("kernels_bce");
}
