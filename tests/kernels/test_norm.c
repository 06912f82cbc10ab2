/* test_norm.c -- LayerNorm's phased kernels (fg_ln_*), as a scheme runs them on column blocks of
 * the rows with the per-row partials summed between phases, against the whole-row double
 * reference fg_layernorm_ref: the output, the input gradient and the scale's and shift's
 * gradients, for one block (a whole row) and for rows cut into two and three column blocks; and
 * the same bits at 1 and 2 threads. */
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
  return fg_test_finish("kernels_norm");
}
