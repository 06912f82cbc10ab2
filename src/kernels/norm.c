/* norm.c -- LayerNorm over rows whose columns a scheme may split across ranks (fg_kernels.h):
 * each function works on this rank's w columns of rows W wide; the per-row partial sums it
 * returns are summed over the split by the caller between the phases. Sums in double, rows in
 * parallel (each row's sum in one thread, in column order: the same bits at any thread count). */
#include <math.h>

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
