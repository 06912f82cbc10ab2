/* norm.c -- LayerNorm over rows whose columns a scheme may split across ranks, and BatchNorm
 * over columns whose rows the ranks share out (fg_kernels.h): each function works on this
 * rank's block; the partial sums it returns are summed over the split by the caller between the
 * phases. Sums in double. LayerNorm's rows in parallel (each row's sum in one thread, in column
 * order); BatchNorm's column sums over fixed row blocks added in block order: the same bits at
 * any thread count. */
#include <math.h>
#include <stdlib.h>

#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

void fg_ln_row_sums(const float *z, int64_t n, int64_t w, const double *center, double *s) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++) {
    const float *r = z + i * w;
    const double c = center ? center[i] : 0.0;
    double acc = 0.0;
    for (int64_t j = 0; j < w; j++) acc += center ? ((double)r[j] - c) * ((double)r[j] - c) : r[j];
    s[i] = acc;
  }
}

void fg_ln_forward(float *z, float *xhat, int64_t n, int64_t w, const double *mean,
                   const double *rstd, const float *gamma, const float *beta) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < w; j++) {
      const float x = (float)(((double)z[i * w + j] - mean[i]) * rstd[i]);
      xhat[i * w + j] = x;
      z[i * w + j] = gamma[j] * x + beta[j];
    }
}

void fg_ln_backward_sums(const float *dy, const float *xhat, const float *gamma, int64_t n,
                         int64_t w, double *a) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++) {
    double s0 = 0.0, s1 = 0.0;
    for (int64_t j = 0; j < w; j++) {
      const double g = (double)dy[i * w + j] * gamma[j];
      s0 += g;
      s1 += g * xhat[i * w + j];
    }
    a[2 * i] = s0;
    a[2 * i + 1] = s1;
  }
}

void fg_ln_backward(float *dy, const float *xhat, const float *gamma, const double *a,
                    const double *rstd, int64_t n, int64_t w, int64_t W) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++) {
    const double m0 = a[2 * i] / (double)W, m1 = a[2 * i + 1] / (double)W;
    for (int64_t j = 0; j < w; j++) {
      const double g = (double)dy[i * w + j] * gamma[j];
      dy[i * w + j] = (float)(rstd[i] * (g - m0 - xhat[i * w + j] * m1));
    }
  }
}

void fg_ln_param_grads(const float *dy, const float *xhat, int64_t n, int64_t w, float *scratch,
                       float *dgamma, float *dbeta) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n * w; i++) scratch[i] = dy[i] * xhat[i];
  fg_bias_backward(dgamma, scratch, n, w);
  fg_bias_backward(dbeta, dy, n, w);
}

void fg_ln_stats(const double *s, int64_t n, int64_t W, int second, double *mean, double *rstd) {
  for (int64_t i = 0; i < n; i++) {
    if (!second) mean[i] = s[i] / (double)W;
    else rstd[i] = 1.0 / sqrt(s[i] / (double)W + FG_LN_EPS);
  }
}

void fg_layernorm_ref(const float *z, int64_t n, int64_t W, const float *gamma,
                      const float *beta, const float *dy, float *y, float *dz, float *dgamma,
                      float *dbeta) {
  for (int64_t j = 0; j < W; j++) dgamma[j] = dbeta[j] = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    const float *r = z + i * W;
    double mean = 0.0, var = 0.0, rstd, s0 = 0.0, s1 = 0.0;
    for (int64_t j = 0; j < W; j++) mean += r[j];
    mean /= (double)W;
    for (int64_t j = 0; j < W; j++) var += (r[j] - mean) * (r[j] - mean);
    rstd = 1.0 / sqrt(var / (double)W + FG_LN_EPS);
    for (int64_t j = 0; j < W; j++) {
      const double x = (r[j] - mean) * rstd, g = (double)dy[i * W + j] * gamma[j];
      y[i * W + j] = (float)(gamma[j] * x + beta[j]);
      s0 += g;
      s1 += g * x;
      dgamma[j] += (float)(dy[i * W + j] * x);
      dbeta[j] += dy[i * W + j];
    }
    for (int64_t j = 0; j < W; j++) {
      const double x = (r[j] - mean) * rstd, g = (double)dy[i * W + j] * gamma[j];
      dz[i * W + j] = (float)(rstd * (g - s0 / (double)W - x * s1 / (double)W));
    }
  }
}

/* ---- BatchNorm ---------------------------------------------------------------------------- */

#define FG_BN_BLOCK_ROWS 512

enum { BN_SUM, BN_SQDEV, BN_GRAD }; /* what bn_sums adds up */

/* Row r, column c's terms: z, (z - center)^2, or dy and dy xhat (two outputs, w apart). */
static inline void bn_terms(int what, const float *x, const float *y, const double *center,
                            int64_t r, int64_t w, int64_t c, double *t0, double *t1) {
  const double v = x[r * w + c];
  if (what == BN_SUM) *t0 = v;
  else if (what == BN_SQDEV) *t0 = (v - center[c]) * (v - center[c]);
  else {
    *t0 = v;
    *t1 = v * (double)y[r * w + c];
  }
}

/* out (w, or 2w for BN_GRAD) = sum over blocks b (in order) of the double sum of block b's rows
 * (in order). The blocks are fixed, so the result is the same at any thread count; the partials
 * need nblocks * 2w doubles, and without that memory the same order is followed one column at a
 * time. */
static void bn_sums(int what, const float *x, const float *y, const double *center, int64_t n,
                    int64_t w, double *out) {
  const int k = what == BN_GRAD ? 2 : 1;
  const int64_t nblocks = n > 0 ? (n + FG_BN_BLOCK_ROWS - 1) / FG_BN_BLOCK_ROWS : 0;
  double *part = nblocks > 1 && w > 0 ? malloc((size_t)(nblocks * k * w) * sizeof *part) : NULL;
  if (!part) {
    for (int64_t c = 0; c < w; c++) {
      double s0 = 0.0, s1 = 0.0;
      for (int64_t b = 0; b < nblocks; b++) {
        const int64_t r1 = FG_MIN(n, (b + 1) * FG_BN_BLOCK_ROWS);
        double b0 = 0.0, b1 = 0.0, t0, t1 = 0.0;
        for (int64_t r = b * FG_BN_BLOCK_ROWS; r < r1; r++) {
          bn_terms(what, x, y, center, r, w, c, &t0, &t1);
          b0 += t0;
          b1 += t1;
        }
        s0 += b0;
        s1 += b1;
      }
      out[c] = s0;
      if (k == 2) out[w + c] = s1;
    }
    return;
  }
  FG_OMP_FOR(n * w)
  for (int64_t b = 0; b < nblocks; b++) {
    double *p = part + b * k * w; /* (k w) */
    const int64_t r1 = FG_MIN(n, (b + 1) * FG_BN_BLOCK_ROWS);
    for (int64_t c = 0; c < k * w; c++) p[c] = 0.0;
    for (int64_t r = b * FG_BN_BLOCK_ROWS; r < r1; r++)
      for (int64_t c = 0; c < w; c++) {
        double t0, t1 = 0.0;
        bn_terms(what, x, y, center, r, w, c, &t0, &t1);
        p[c] += t0;
        if (k == 2) p[w + c] += t1;
      }
  }
  for (int64_t c = 0; c < k * w; c++) {
    double s = 0.0;
    for (int64_t b = 0; b < nblocks; b++) s += part[b * k * w + c];
    out[c] = s;
  }
  free(part);
}

void fg_bn_col_sums(const float *z, int64_t n, int64_t w, const double *center, double *s) {
  bn_sums(center ? BN_SQDEV : BN_SUM, z, NULL, center, n, w, s);
}

void fg_bn_stats(const double *s, int64_t w, int64_t N, int second, double *mean, double *rstd) {
  for (int64_t j = 0; j < w; j++) {
    if (!second) mean[j] = s[j] / (double)N;
    else rstd[j] = 1.0 / sqrt(s[j] / (double)N + FG_BN_EPS);
  }
}

void fg_bn_running(const double *mean, const double *sq, int64_t w, int64_t N, float *run_mean,
                   float *run_var) {
  /* PyTorch's update: the unbiased variance (a batch of one row has none: its 0 is taken) */
  const double m = FG_BN_MOMENTUM, dof = N > 1 ? (double)(N - 1) : 1.0;
  for (int64_t j = 0; j < w; j++) {
    run_mean[j] = (float)((1.0 - m) * run_mean[j] + m * mean[j]);
    run_var[j] = (float)((1.0 - m) * run_var[j] + m * sq[j] / dof);
  }
}

void fg_bn_eval_stats(const float *run_mean, const float *run_var, int64_t w, double *mean,
                      double *rstd) {
  for (int64_t j = 0; j < w; j++) {
    mean[j] = run_mean[j];
    rstd[j] = 1.0 / sqrt((double)run_var[j] + FG_BN_EPS);
  }
}

void fg_bn_forward(float *z, float *xhat, int64_t n, int64_t w, const double *mean,
                   const double *rstd, const float *gamma, const float *beta) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < w; j++) {
      const float x = (float)(((double)z[i * w + j] - mean[j]) * rstd[j]);
      if (xhat) xhat[i * w + j] = x;
      z[i * w + j] = gamma[j] * x + beta[j];
    }
}

void fg_bn_backward_sums(const float *dy, const float *xhat, int64_t n, int64_t w, double *a) {
  bn_sums(BN_GRAD, dy, xhat, NULL, n, w, a);
}

void fg_bn_backward(float *dy, const float *xhat, const float *gamma, const double *a,
                    const double *rstd, int64_t n, int64_t w, int64_t N) {
  FG_OMP_FOR(n * w)
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < w; j++) {
      const double m0 = a[j] / (double)N, m1 = a[w + j] / (double)N;
      dy[i * w + j] = (float)((double)gamma[j] * rstd[j] *
                              ((double)dy[i * w + j] - m0 - xhat[i * w + j] * m1));
    }
}

void fg_batchnorm_ref(const float *z, int64_t N, int64_t w, int training, const float *gamma,
                      const float *beta, float *run_mean, float *run_var, const float *dy,
                      float *y, float *dz, float *dgamma, float *dbeta) {
  for (int64_t j = 0; j < w; j++) {
    double mean = 0.0, var = 0.0, rstd, s0 = 0.0, s1 = 0.0;
    if (!training) {
      rstd = 1.0 / sqrt((double)run_var[j] + FG_BN_EPS);
      for (int64_t i = 0; i < N; i++)
        y[i * w + j] = (float)(gamma[j] * ((z[i * w + j] - (double)run_mean[j]) * rstd) + beta[j]);
      continue;
    }
    for (int64_t i = 0; i < N; i++) mean += z[i * w + j];
    mean /= (double)N;
    for (int64_t i = 0; i < N; i++) var += (z[i * w + j] - mean) * (z[i * w + j] - mean);
    var /= (double)N;
    rstd = 1.0 / sqrt(var + FG_BN_EPS);
    for (int64_t i = 0; i < N; i++) {
      const double x = (z[i * w + j] - mean) * rstd;
      y[i * w + j] = (float)(gamma[j] * x + beta[j]);
      s0 += dy[i * w + j];
      s1 += dy[i * w + j] * x;
    }
    for (int64_t i = 0; i < N; i++) {
      const double x = (z[i * w + j] - mean) * rstd;
      dz[i * w + j] =
          (float)(gamma[j] * rstd * (dy[i * w + j] - s0 / (double)N - x * s1 / (double)N));
    }
    dgamma[j] = (float)s1;
    dbeta[j] = (float)s0;
    run_mean[j] = (float)(0.9 * run_mean[j] + 0.1 * mean);
    run_var[j] =
        (float)(0.9 * run_var[j] + 0.1 * (N > 1 ? var * (double)N / (double)(N - 1) : 0.0));
  }
}
