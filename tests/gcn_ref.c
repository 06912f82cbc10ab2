/* gcn_ref.c -- see gcn_ref.h. */
#include "gcn_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernels.h"

double fg_test_gcn_ref(const fg_dataset *ds, const fg_csr *A, int L, const int64_t *w,
                       const double *params, float p, uint64_t seed, uint64_t epoch,
                       double *hidden, double *logits) {
  const int64_t n = ds->num_nodes, C = w[L];
  int64_t wmax = 1, ntrain = 0;
  for (int l = 0; l <= L; l++) wmax = w[l] > wmax ? w[l] : wmax;
  double *h = malloc(sizeof(double) * (size_t)(n * wmax));
  double *d = malloc(sizeof(double) * (size_t)(n * wmax));
  double *t = malloc(sizeof(double) * (size_t)(n * wmax));
  double loss = 0.0;
  const double *pp = params;
  if (!h || !d || !t) abort();
  for (int64_t i = 0; i < n * w[0]; i++) h[i] = ds->features[i];
  for (int l = 0; l < L; l++) {
    const int64_t wi = w[l], wo = w[l + 1];
    const double *W = pp, *b = pp + wi * wo;
    pp += wi * wo + wo;
    for (int64_t v = 0; v < n; v++) /* d = dropout(h) */
      for (int64_t c = 0; c < wi; c++) {
        const int keep = p == 0.0f ||
                         fg_dropout_keep(fg_dropout_row_key(seed, epoch, (uint64_t)l, (uint64_t)v),
                                         (uint64_t)c, fg_dropout_threshold(p));
        d[v * wi + c] = keep ? h[v * wi + c] / (1.0 - p) : 0.0;
      }
    for (int64_t v = 0; v < n; v++) /* t = Â d */
      for (int64_t c = 0; c < wi; c++) {
        double acc = 0.0;
        for (int64_t e = A->rowptr[v]; e < A->rowptr[v + 1]; e++)
          acc += (double)A->val[e] * d[(int64_t)A->col[e] * wi + c];
        t[v * wi + c] = acc;
      }
    for (int64_t v = 0; v < n; v++) /* h = act(t W + b) */
      for (int64_t c = 0; c < wo; c++) {
        double acc = b[c];
        for (int64_t k = 0; k < wi; k++) acc += t[v * wi + k] * W[k * wo + c];
        h[v * wo + c] = (l + 1 < L && acc < 0) ? 0.0 : acc;
      }
    if (l == L - 2 && hidden) memcpy(hidden, h, sizeof(double) * (size_t)(n * wo));
  }
  if (logits) memcpy(logits, h, sizeof(double) * (size_t)(n * C));
  for (int64_t v = 0; v < n; v++) {
    double mx = -INFINITY, se = 0.0;
    if (ds->split[v] != FG_SPLIT_TRAIN) continue;
    for (int64_t c = 0; c < C; c++) mx = fmax(mx, h[v * C + c]);
    for (int64_t c = 0; c < C; c++) se += exp(h[v * C + c] - mx);
    loss += log(se) + mx - h[v * C + ds->labels[v]];
    ntrain++;
  }
  free(h);
  free(d);
  free(t);
  return loss / (double)ntrain;
}
