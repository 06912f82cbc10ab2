/* test_elementwise.c -- ReLU, bias add and dropout: values, gradients against central
 * differences in double, dropout tuned vs reference and the dropout mask's independence from
 * row order and subset (global ids), bias gradient determinism; axpy and the dot product (GIN's
 * epsilon gradient) against plain loops, the dot's bits the same at every thread count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

/* ---- ReLU ---- */

static double relu_objective(const double *x, const float *G, int64_t n) {
  double L = 0.0;
  for (int64_t i = 0; i < n; i++) L += (double)G[i] * (x[i] > 0.0 ? x[i] : 0.0);
  return L;
}

static void test_relu(void) {
  const int64_t n = 200;
  float *x = kt_alloc_f(n), *y = kt_alloc_f(n), *G = kt_alloc_f(n), *dx = kt_alloc_f(n);
  fg_test_fill(x, n, 61, -1.0f, 1.0f);
  fg_test_fill(G, n, 62, -1.0f, 1.0f);
  for (int64_t i = 0; i < n; i++) /* keep away from the kink at 0 */
    if (fabsf(x[i]) < 0.1f) x[i] = x[i] < 0.0f ? -0.1f - x[i] : 0.1f + x[i];
  fg_relu_forward(y, x, n);
  int ok = 1;
  for (int64_t i = 0; i < n; i++) ok &= y[i] == (x[i] > 0.0f ? x[i] : 0.0f);
  EXPECT(ok);
  fg_relu_backward(dx, G, y, n);
  double *xd = kt_alloc_d(n), *num = kt_alloc_d(n);
  for (int64_t i = 0; i < n; i++) xd[i] = (double)x[i];
  const double h = 1e-3;
  for (int64_t i = 0; i < n; i++) {
    const double x0 = xd[i];
    xd[i] = x0 + h;
    const double lp = relu_objective(xd, G, n);
    xd[i] = x0 - h;
    const double lm = relu_objective(xd, G, n);
    xd[i] = x0;
    num[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("relu", dx, num, n);
  /* in place, and a NaN is not hidden */
  memcpy(y, x, (size_t)n * sizeof *y);
  y[5] = NAN;
  fg_relu_forward(y, y, n);
  EXPECT(y[5] != y[5]);
  EXPECT(y[6] == (x[6] > 0.0f ? x[6] : 0.0f));
  memcpy(dx, G, (size_t)n * sizeof *dx);
  fg_relu_forward(y, x, n);
  fg_relu_backward(dx, dx, y, n); /* din may == dout */
  ok = 1;
  for (int64_t i = 0; i < n; i++) ok &= dx[i] == (x[i] > 0.0f ? G[i] : 0.0f);
  EXPECT(ok);
  free(x);
  free(y);
  free(G);
  free(dx);
  free(xd);
  free(num);
}

/* ---- bias ---- */

static double bias_objective(const float *X, const double *b, const float *G, int64_t rows,
                             int64_t cols) {
  double L = 0.0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++)
      L += (double)G[r * cols + c] * ((double)X[r * cols + c] + b[c]);
  return L;
}

static void test_bias(void) {
  const int64_t rows = 9, cols = 6;
  float *X = kt_alloc_f(rows * cols), *Y = kt_alloc_f(rows * cols), *G = kt_alloc_f(rows * cols);
  float bias[6], db[6];
  fg_test_fill(X, rows * cols, 71, -1.0f, 1.0f);
  fg_test_fill(G, rows * cols, 72, -1.0f, 1.0f);
  fg_test_fill(bias, cols, 73, -1.0f, 1.0f);
  memcpy(Y, X, (size_t)(rows * cols) * sizeof *Y);
  fg_bias_add(Y, bias, rows, cols);
  int ok = 1;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) ok &= Y[r * cols + c] == X[r * cols + c] + bias[c];
  EXPECT(ok);
  fg_bias_backward(db, G, rows, cols);
  double b[6], num[6];
  for (int c = 0; c < cols; c++) b[c] = (double)bias[c];
  const double h = 1e-3;
  for (int c = 0; c < cols; c++) {
    const double b0 = b[c];
    b[c] = b0 + h;
    const double lp = bias_objective(X, b, G, rows, cols);
    b[c] = b0 - h;
    const double lm = bias_objective(X, b, G, rows, cols);
    b[c] = b0;
    num[c] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("bias add (dbias)", db, num, cols);
  free(X);
  free(Y);
  free(G);

  /* many rows (several blocks): close to a double sum, and bitwise the same for any thread
   * count */
  const int64_t R = 10007, C = 13;
  float *dy = kt_alloc_f(R * C), s1[13], s2[13];
  fg_test_fill(dy, R * C, 74, -1.0f, 1.0f);
  fg_bias_backward(s1, dy, R, C);
  double worst = 0.0;
  for (int64_t c = 0; c < C; c++) {
    double s = 0.0;
    for (int64_t r = 0; r < R; r++) s += dy[r * C + c];
    worst = fabs(s - s1[c]) > worst ? fabs(s - s1[c]) : worst;
  }
  EXPECT_MSG(worst < 1e-4, "bias backward off by %.3g", worst);
  const int saved = kt_max_threads();
  for (int t = 1; t <= 4; t++) {
    kt_set_threads(t);
    memset(s2, 0, sizeof s2);
    fg_bias_backward(s2, dy, R, C);
    EXPECT_MSG(memcmp(s1, s2, sizeof s1) == 0, "bias backward differs with %d threads", t);
  }
  kt_set_threads(saved);
  fg_bias_backward(s2, dy, 0, C); /* no rows: zeros */
  ok = 1;
  for (int c = 0; c < C; c++) ok &= s2[c] == 0.0f;
  EXPECT(ok);
  free(dy);
}

/* ---- dropout ---- */

static int mask_keep(float p, uint64_t seed, uint64_t epoch, uint64_t layer, uint64_t gid,
                     uint64_t c) {
  return fg_dropout_keep(fg_dropout_row_key(seed, epoch, layer, gid), c, fg_dropout_threshold(p));
}

static void test_dropout_values(void) {
  const int64_t rows = 300, cols = 37;
  const float p = 0.3f;
  float *X = kt_alloc_f(rows * cols), *Yt = kt_alloc_f(rows * cols), *Yr = kt_alloc_f(rows * cols);
  fg_test_fill(X, rows * cols, 81, -1.0f, 1.0f);
  fg_dropout_forward(Yt, X, rows, cols, p, 5, 2, 1, NULL);
  fg_dropout_forward_ref(Yr, X, rows, cols, p, 5, 2, 1, NULL);
  const double d = fg_test_max_rel_diff(Yt, Yr, rows * cols);
  printf("  dropout max rel diff tuned vs ref %.3g\n", d);
  EXPECT(memcmp(Yt, Yr, (size_t)(rows * cols) * sizeof *Yt) == 0);
  int64_t kept = 0;
  int ok = 1;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const int keep = mask_keep(p, 5, 2, 1, (uint64_t)r, (uint64_t)c);
      kept += keep;
      ok &= Yt[r * cols + c] == (keep ? X[r * cols + c] * (1.0f / (1.0f - p)) : 0.0f);
    }
  EXPECT(ok);
  const double frac = (double)kept / (double)(rows * cols);
  EXPECT_MSG(fabs(frac - 0.7) < 0.02, "kept fraction %.4f, expected 0.7", frac);
  /* another epoch or layer draws another mask */
  fg_dropout_forward(Yr, X, rows, cols, p, 5, 3, 1, NULL);
  EXPECT(memcmp(Yt, Yr, (size_t)(rows * cols) * sizeof *Yt) != 0);
  fg_dropout_forward(Yr, X, rows, cols, p, 5, 2, 0, NULL);
  EXPECT(memcmp(Yt, Yr, (size_t)(rows * cols) * sizeof *Yt) != 0);
  /* p == 0 is the identity, in place too */
  fg_dropout_forward(Yr, X, rows, cols, 0.0f, 5, 2, 1, NULL);
  EXPECT(memcmp(Yr, X, (size_t)(rows * cols) * sizeof *Yr) == 0);
  fg_dropout_forward(Yr, Yr, rows, cols, 0.0f, 5, 2, 1, NULL);
  EXPECT(memcmp(Yr, X, (size_t)(rows * cols) * sizeof *Yr) == 0);
  /* in place with p > 0 */
  memcpy(Yr, X, (size_t)(rows * cols) * sizeof *Yr);
  fg_dropout_forward(Yr, Yr, rows, cols, p, 5, 2, 1, NULL);
  EXPECT(memcmp(Yr, Yt, (size_t)(rows * cols) * sizeof *Yr) == 0);
  free(X);
  free(Yt);
  free(Yr);
}

/* Rows given in another order, as a subset, through global ids: each (global id, col) keeps
 * the mask it has in the full matrix. */
static void test_dropout_global_ids(void) {
  const int64_t N = 500, cols = 11, sub = 123;
  const float p = 0.5f;
  float *X = kt_alloc_f(N * cols), *Y = kt_alloc_f(N * cols);
  float *Xs = kt_alloc_f(sub * cols), *Ys = kt_alloc_f(sub * cols), *Yr = kt_alloc_f(sub * cols);
  int64_t gid[123];
  fg_test_fill(X, N * cols, 91, 0.5f, 1.0f); /* nonzero, so zeros in Y mark dropped entries */
  fg_dropout_forward(Y, X, N, cols, p, 17, 4, 2, NULL);
  for (int64_t i = 0; i < sub; i++) {
    gid[i] = (i * 389 + 77) % N; /* a scattered, reordered subset */
    memcpy(Xs + i * cols, X + gid[i] * cols, (size_t)cols * sizeof *Xs);
  }
  fg_dropout_forward(Ys, Xs, sub, cols, p, 17, 4, 2, gid);
  fg_dropout_forward_ref(Yr, Xs, sub, cols, p, 17, 4, 2, gid);
  int ok = 1;
  for (int64_t i = 0; i < sub; i++)
    ok &= memcmp(Ys + i * cols, Y + gid[i] * cols, (size_t)cols * sizeof *Ys) == 0;
  EXPECT_MSG(ok, "dropout mask depends on the row's position, not its global id");
  EXPECT(memcmp(Ys, Yr, (size_t)(sub * cols) * sizeof *Ys) == 0);
  /* without the ids the subset would get the masks of rows 0..sub-1: different */
  fg_dropout_forward(Yr, Xs, sub, cols, p, 17, 4, 2, NULL);
  EXPECT(memcmp(Ys, Yr, (size_t)(sub * cols) * sizeof *Ys) != 0);
  /* the backward uses the same mask */
  float *ones = kt_alloc_f(sub * cols), *dx = kt_alloc_f(sub * cols);
  for (int64_t i = 0; i < sub * cols; i++) ones[i] = 1.0f;
  fg_dropout_backward(dx, ones, sub, cols, p, 17, 4, 2, gid);
  ok = 1;
  for (int64_t i = 0; i < sub * cols; i++) ok &= (dx[i] != 0.0f) == (Ys[i] != 0.0f);
  EXPECT(ok);
  free(X);
  free(Y);
  free(Xs);
  free(Ys);
  free(Yr);
  free(ones);
  free(dx);
}

/* L = sum(G .* dropout(X)) with the mask fixed by (seed, epoch, layer), in double. */
static double dropout_objective(const double *X, const float *G, int64_t rows, int64_t cols,
                                float p, const int64_t *gid) {
  double L = 0.0;
  for (int64_t r = 0; r < rows; r++)
    for (int64_t c = 0; c < cols; c++) {
      const int keep = mask_keep(p, 3, 1, 0, (uint64_t)gid[r], (uint64_t)c);
      L += (double)G[r * cols + c] * (keep ? X[r * cols + c] / (1.0 - (double)p) : 0.0);
    }
  return L;
}

static void test_dropout_backward(void) {
  const int64_t rows = 12, cols = 7;
  const float p = 0.4f;
  int64_t gid[12];
  for (int64_t r = 0; r < rows; r++) gid[r] = 1000 - 7 * r;
  float *Xf = kt_alloc_f(rows * cols), *G = kt_alloc_f(rows * cols), *dX = kt_alloc_f(rows * cols);
  fg_test_fill(Xf, rows * cols, 95, -1.0f, 1.0f);
  fg_test_fill(G, rows * cols, 96, -1.0f, 1.0f);
  fg_dropout_backward(dX, G, rows, cols, p, 3, 1, 0, gid);
  double *X = kt_alloc_d(rows * cols), *num = kt_alloc_d(rows * cols);
  for (int64_t i = 0; i < rows * cols; i++) X[i] = (double)Xf[i];
  const double h = 1e-3;
  for (int64_t i = 0; i < rows * cols; i++) {
    const double x0 = X[i];
    X[i] = x0 + h;
    const double lp = dropout_objective(X, G, rows, cols, p, gid);
    X[i] = x0 - h;
    const double lm = dropout_objective(X, G, rows, cols, p, gid);
    X[i] = x0;
    num[i] = (lp - lm) / (2.0 * h);
  }
  kt_expect_grad("dropout (fixed mask)", dX, num, rows * cols);
  free(Xf);
  free(G);
  free(dX);
  free(X);
  free(num);
}

/* ---- axpy, dot ---- */

static void test_axpy_dot(void) {
  static const int64_t sizes[] = {0, 1, 63, 64, 65, 1000, 40000, 100003};
  for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
    const int64_t n = sizes[k];
    float *x = malloc((size_t)(n + 1) * sizeof *x), *y = malloc((size_t)(n + 1) * sizeof *y);
    float *z = malloc((size_t)(n + 1) * sizeof *z);
    double plain = 0.0, dots[3];
    int same = 1;
    if (!x || !y || !z) exit(2);
    for (int64_t i = 0; i < n; i++) {
      x[i] = (float)(2.0 * kt_u(31, (uint64_t)i, 0) - 1.0);
      y[i] = (float)(2.0 * kt_u(32, (uint64_t)i, 0) - 1.0);
      z[i] = y[i];
      plain += (double)x[i] * (double)y[i];
    }
    fg_axpy(z, -0.75f, x, n);
    for (int64_t i = 0; i < n; i++) same &= z[i] == y[i] + -0.75f * x[i];
    EXPECT_MSG(same, "axpy of %lld elements differs from y + a x", (long long)n);
    for (int t = 1; t <= 3; t++) {
      kt_set_threads(t);
      dots[t - 1] = fg_dot(x, y, n);
    }
    kt_set_threads(2);
    EXPECT_MSG(fabs(dots[0] - plain) <= 1e-12 * (1.0 + fabs(plain)) * (double)(n + 1),
               "dot of %lld elements: %.17g, plain loop %.17g", (long long)n, dots[0], plain);
    EXPECT_MSG(dots[0] == dots[1] && dots[1] == dots[2],
               "dot of %lld elements differs with the thread count", (long long)n);
    free(x);
    free(y);
    free(z);
  }
}

int main(void) {
  test_axpy_dot();
  test_relu();
  test_bias();
  test_dropout_values();
  test_dropout_global_ids();
  test_dropout_backward();
  return fg_test_finish("kernels_elementwise");
}
