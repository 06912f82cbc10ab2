/* test_norm.c -- LayerNorm's phased kernels (fg_ln_*), as a scheme runs them on column blocks of
 * the rows with the per-row partials summed between phases, against the whole-row double
 * reference fg_layernorm_ref: the output, the input gradient and the scale's and shift's
 * gradients, for one block (a whole row) and for rows cut into two and three column blocks; and
 * the same bits at 1 and 2 threads. BatchNorm's (fg_bn_*) likewise on row blocks with the
 * per-column partials summed between phases, against fg_batchnorm_ref: training (output,
 * gradients, the running statistics' update) and evaluation (the running statistics), the
 * same bits at 1, 2 and 3 threads on a matrix of many row blocks. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernel_testlib.h"

/* Run the phases on the column blocks [cut[k], cut[k + 1]) of z (n x W), writing y, dz, dgamma
 * and dbeta in the whole matrices' layout. */
static void phased(const float *z, const float *dy, const float *gamma, const float *beta,
                   int64_t n, int64_t W, const int64_t *cut, int nb, float *y, float *dz,
                   float *dgamma, float *dbeta) {
  double *s = kt_alloc_d(2 * n), *part = kt_alloc_d(2 * n), *mean = kt_alloc_d(n);
  double *rstd = kt_alloc_d(n);
  float *zb[3], *xb[3], *gb[3], *tmp = kt_alloc_f(n * W);
  for (int k = 0; k < nb; k++) { /* each block as a rank holds it: n x w contiguous */
    const int64_t w = cut[k + 1] - cut[k];
    zb[k] = kt_alloc_f(n * w);
    xb[k] = kt_alloc_f(n * w);
    gb[k] = kt_alloc_f(n * w);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < w; j++) {
        zb[k][i * w + j] = z[i * W + cut[k] + j];
        gb[k][i * w + j] = dy[i * W + cut[k] + j];
      }
  }
  for (int phase = 0; phase < 2; phase++) {
    memset(s, 0, (size_t)n * sizeof *s);
    for (int k = 0; k < nb; k++) {
      fg_ln_row_sums(zb[k], n, cut[k + 1] - cut[k], phase ? mean : NULL, part);
      for (int64_t i = 0; i < n; i++) s[i] += part[i];
    }
    fg_ln_stats(s, n, W, phase, mean, rstd);
  }
  memset(s, 0, (size_t)(2 * n) * sizeof *s);
  for (int k = 0; k < nb; k++) {
    const int64_t w = cut[k + 1] - cut[k];
    fg_ln_forward(zb[k], xb[k], n, w, mean, rstd, gamma + cut[k], beta + cut[k]);
    fg_ln_backward_sums(gb[k], xb[k], gamma + cut[k], n, w, part);
    for (int64_t i = 0; i < 2 * n; i++) s[i] += part[i];
    fg_ln_param_grads(gb[k], xb[k], n, w, tmp, dgamma + cut[k], dbeta + cut[k]);
  }
  for (int k = 0; k < nb; k++) {
    const int64_t w = cut[k + 1] - cut[k];
    fg_ln_backward(gb[k], xb[k], gamma + cut[k], s, rstd, n, w, W);
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < w; j++) {
        y[i * W + cut[k] + j] = zb[k][i * w + j];
        dz[i * W + cut[k] + j] = gb[k][i * w + j];
      }
    free(zb[k]);
    free(xb[k]);
    free(gb[k]);
  }
  free(s);
  free(part);
  free(mean);
  free(rstd);
  free(tmp);
}

static double worst(const float *a, const float *b, int64_t n) {
  double w = 0.0;
  for (int64_t i = 0; i < n; i++) w = fmax(w, fabs((double)a[i] - b[i]) / fmax(1.0, fabs(b[i])));
  return w;
}

/* BatchNorm's phases on the row blocks [cut[k], cut[k + 1]) of z (N x w), as ranks holding those
 * rows run them: y, dz, dgamma, dbeta (summed over the blocks, as the gradient reduction does)
 * and the running statistics (each block's copy updated; all must agree) in the whole layout. */
static void bn_phased(const float *z, const float *dy, const float *gamma, const float *beta,
                      int64_t N, int64_t w, const int64_t *cut, int nb, int training,
                      float *rmean, float *rvar, float *y, float *dz, float *dgamma,
                      float *dbeta) {
  double *s = kt_alloc_d(2 * w), *part = kt_alloc_d(2 * w), *mean = kt_alloc_d(w);
  double *rstd = kt_alloc_d(w);
  float *xhat = kt_alloc_f(N * w), *rm0 = kt_alloc_f(w), *rv0 = kt_alloc_f(w);
  memcpy(y, z, (size_t)(N * w) * sizeof *y); /* the blocks are contiguous rows: in place */
  memcpy(dz, dy, (size_t)(N * w) * sizeof *dz);
  memcpy(rm0, rmean, (size_t)w * sizeof *rm0);
  memcpy(rv0, rvar, (size_t)w * sizeof *rv0);
  if (training) {
    for (int phase = 0; phase < 2; phase++) {
      memset(s, 0, (size_t)w * sizeof *s);
      for (int k = 0; k < nb; k++) {
        fg_bn_col_sums(y + cut[k] * w, cut[k + 1] - cut[k], w, phase ? mean : NULL, part);
        for (int64_t j = 0; j < w; j++) s[j] += part[j];
      }
      fg_bn_stats(s, w, N, phase, mean, rstd);
    }
    for (int k = 0; k < nb; k++) { /* every block's copy of the running statistics */
      float *m = kt_alloc_f(w), *v = kt_alloc_f(w);
      memcpy(m, rm0, (size_t)w * sizeof *m);
      memcpy(v, rv0, (size_t)w * sizeof *v);
      fg_bn_running(mean, s, w, N, m, v);
      if (k == 0) {
        memcpy(rmean, m, (size_t)w * sizeof *m);
        memcpy(rvar, v, (size_t)w * sizeof *v);
      }
      EXPECT(memcmp(m, rmean, (size_t)w * sizeof *m) == 0 &&
             memcmp(v, rvar, (size_t)w * sizeof *v) == 0);
      free(m);
      free(v);
    }
  } else {
    fg_bn_eval_stats(rmean, rvar, w, mean, rstd);
  }
  for (int k = 0; k < nb; k++)
    fg_bn_forward(y + cut[k] * w, training ? xhat + cut[k] * w : NULL, cut[k + 1] - cut[k], w,
                  mean, rstd, gamma, beta);
  if (training) {
    memset(s, 0, (size_t)(2 * w) * sizeof *s);
    for (int k = 0; k < nb; k++) {
      fg_bn_backward_sums(dz + cut[k] * w, xhat + cut[k] * w, cut[k + 1] - cut[k], w, part);
      for (int64_t j = 0; j < 2 * w; j++) s[j] += part[j];
    }
    for (int64_t j = 0; j < w; j++) {
      dbeta[j] = (float)s[j];
      dgamma[j] = (float)s[w + j];
    }
    for (int k = 0; k < nb; k++)
      fg_bn_backward(dz + cut[k] * w, xhat + cut[k] * w, gamma, s, rstd, cut[k + 1] - cut[k], w,
                     N);
  }
  free(s);
  free(part);
  free(mean);
  free(rstd);
  free(xhat);
  free(rm0);
  free(rv0);
}


static void check_batchnorm(void) {
  /* 2000 x 40: four row blocks of the sums and above the threshold of a parallel loop */
  static const int64_t shapes[][2] = {{1, 3}, {2, 5}, {37, 13}, {300, 7}, {2000, 40}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t N = shapes[si][0], w = shapes[si][1];
    float *z = kt_alloc_f(N * w), *dy = kt_alloc_f(N * w), *g = kt_alloc_f(w), *b = kt_alloc_f(w);
    float *y = kt_alloc_f(N * w), *dz = kt_alloc_f(N * w), *dg = kt_alloc_f(w), *db = kt_alloc_f(w);
    float *ry = kt_alloc_f(N * w), *rdz = kt_alloc_f(N * w), *rdg = kt_alloc_f(w);
    float *rdb = kt_alloc_f(w), *y1 = kt_alloc_f(N * w), *dz1 = kt_alloc_f(N * w);
    float *rm = kt_alloc_f(w), *rv = kt_alloc_f(w), *rrm = kt_alloc_f(w), *rrv = kt_alloc_f(w);
    float *m0 = kt_alloc_f(w), *v0 = kt_alloc_f(w), *rm1 = kt_alloc_f(w), *rv1 = kt_alloc_f(w);
    fg_test_fill(z, N * w, 50 + si, -3.0f, 5.0f);
    fg_test_fill(dy, N * w, 60 + si, -1.0f, 1.0f);
    fg_test_fill(g, w, 70 + si, 0.5f, 1.5f);
    fg_test_fill(b, w, 80 + si, -0.5f, 0.5f);
    fg_test_fill(m0, w, 90 + si, -0.5f, 0.5f); /* running statistics after some steps */
    fg_test_fill(v0, w, 95 + si, 0.5f, 2.0f);
    for (int training = 1; training >= 0; training--) {
      memcpy(rrm, m0, (size_t)w * sizeof *rrm);
      memcpy(rrv, v0, (size_t)w * sizeof *rrv);
      fg_batchnorm_ref(z, N, w, training, g, b, rrm, rrv, dy, ry, rdz, rdg, rdb);
      for (int nb = 1; nb <= 3; nb++) {
        int64_t cut[4];
        if (N < nb) continue;
        for (int k = 0; k <= nb; k++) cut[k] = N * k / nb;
        for (int threads = 1; threads <= 3; threads++) {
          kt_set_threads(threads);
          memcpy(rm, m0, (size_t)w * sizeof *rm);
          memcpy(rv, v0, (size_t)w * sizeof *rv);
          bn_phased(z, dy, g, b, N, w, cut, nb, training, rm, rv, y, dz, dg, db);
          EXPECT_MSG(worst(y, ry, N * w) < 1e-5 && worst(rm, rrm, w) < 1e-6 &&
                         worst(rv, rrv, w) < 1e-6,
                     "%s %lld x %lld in %d blocks: y %.2g, running mean %.2g, var %.2g off",
                     training ? "training" : "evaluation", (long long)N, (long long)w, nb,
                     worst(y, ry, N * w), worst(rm, rrm, w), worst(rv, rrv, w));
          if (training)
            EXPECT_MSG(worst(dz, rdz, N * w) < 1e-5 && worst(dg, rdg, w) < 1e-4 &&
                           worst(db, rdb, w) < 1e-4,
                       "%lld x %lld in %d blocks: dz %.2g, dgamma %.2g, dbeta %.2g off",
                       (long long)N, (long long)w, nb, worst(dz, rdz, N * w), worst(dg, rdg, w),
                       worst(db, rdb, w));
          else /* evaluation leaves the running statistics alone */
            EXPECT(memcmp(rm, m0, (size_t)w * sizeof *rm) == 0 &&
                   memcmp(rv, v0, (size_t)w * sizeof *rv) == 0);
          if (threads == 1) {
            memcpy(y1, y, (size_t)(N * w) * sizeof *y);
            memcpy(dz1, dz, (size_t)(N * w) * sizeof *dz);
            memcpy(rm1, rm, (size_t)w * sizeof *rm);
            memcpy(rv1, rv, (size_t)w * sizeof *rv);
          } else {
            EXPECT_MSG(memcmp(y1, y, (size_t)(N * w) * sizeof *y) == 0 &&
                           memcmp(dz1, dz, (size_t)(N * w) * sizeof *dz) == 0 &&
                           memcmp(rm1, rm, (size_t)w * sizeof *rm) == 0 &&
                           memcmp(rv1, rv, (size_t)w * sizeof *rv) == 0,
                       "%lld x %lld in %d blocks: %d threads change the bits", (long long)N,
                       (long long)w, nb, threads);
          }
        }
      }
    }
    kt_set_threads(1);
    printf("%lld x %lld: phased BatchNorm equals the reference\n", (long long)N, (long long)w);
    float *bufs[] = {z, dy, g, b, y, dz, dg, db, ry, rdz, rdg, rdb, y1, dz1,
                     rm, rv, rrm, rrv, m0, v0, rm1, rv1};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
  }
}

int main(void) {
  static const int64_t shapes[][2] = {{1, 2}, {37, 13}, {200, 64}, {3, 300}};
  for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
    const int64_t n = shapes[si][0], W = shapes[si][1];
    float *z = kt_alloc_f(n * W), *dy = kt_alloc_f(n * W), *g = kt_alloc_f(W), *b = kt_alloc_f(W);
    float *y = kt_alloc_f(n * W), *dz = kt_alloc_f(n * W), *dg = kt_alloc_f(W), *db = kt_alloc_f(W);
    float *ry = kt_alloc_f(n * W), *rdz = kt_alloc_f(n * W), *rdg = kt_alloc_f(W);
    float *rdb = kt_alloc_f(W), *y1 = kt_alloc_f(n * W), *dz1 = kt_alloc_f(n * W);
    fg_test_fill(z, n * W, 10 + si, -3.0f, 5.0f);
    fg_test_fill(dy, n * W, 20 + si, -1.0f, 1.0f);
    fg_test_fill(g, W, 30 + si, 0.5f, 1.5f);
    fg_test_fill(b, W, 40 + si, -0.5f, 0.5f);
    fg_layernorm_ref(z, n, W, g, b, dy, ry, rdz, rdg, rdb);
    for (int nb = 1; nb <= 3; nb++) {
      int64_t cut[4];
      if (W < nb) continue;
      for (int k = 0; k <= nb; k++) cut[k] = W * k / nb;
      for (int threads = 1; threads <= 2; threads++) {
        kt_set_threads(threads);
        phased(z, dy, g, b, n, W, cut, nb, y, dz, dg, db);
        EXPECT_MSG(worst(y, ry, n * W) < 1e-5 && worst(dz, rdz, n * W) < 1e-5 &&
                       worst(dg, rdg, W) < 1e-4 && worst(db, rdb, W) < 1e-4,
                   "%lld x %lld in %d blocks: y %.2g, dz %.2g, dgamma %.2g, dbeta %.2g off",
                   (long long)n, (long long)W, nb, worst(y, ry, n * W), worst(dz, rdz, n * W),
                   worst(dg, rdg, W), worst(db, rdb, W));
        if (threads == 1) {
          memcpy(y1, y, (size_t)(n * W) * sizeof *y);
          memcpy(dz1, dz, (size_t)(n * W) * sizeof *dz);
        } else {
          EXPECT(memcmp(y1, y, (size_t)(n * W) * sizeof *y) == 0 &&
                 memcmp(dz1, dz, (size_t)(n * W) * sizeof *dz) == 0);
        }
      }
    }
    printf("%lld x %lld: phased LayerNorm equals the reference\n", (long long)n, (long long)W);
    float *bufs[] = {z, dy, g, b, y, dz, dg, db, ry, rdz, rdg, rdb, y1, dz1};
    for (size_t k = 0; k < sizeof bufs / sizeof bufs[0]; k++) free(bufs[k]);
  }
  check_batchnorm();
  return fg_test_finish("kernels_norm");
}
