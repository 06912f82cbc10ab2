/* model_ref.c -- see model_ref.h. */
#include "model/fg_model.h"
#include "model_ref.h"
#include "testutil.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernels.h"

/* Ã's value of entry (i, j), or 0 where it has none. */
static double adj_value(const fg_dataset *ds, fg_test_model mdl, const int64_t *rowc,
                        const int64_t *colc, int64_t i, int64_t j) {
  if (mdl.norm == FG_ADJ_SUM) return 1.0;
  if (mdl.norm == FG_ADJ_MEAN) return 1.0 / (double)rowc[i];
  return 1.0 / sqrt((double)rowc[i] * (double)colc[j]);
}

double fg_test_model_gradcheck(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                               double *params, const float *grads, int64_t n, float p,
                               uint64_t seed, uint64_t epoch, double tol, int64_t *bad) {
  double worst = 0.0;
  *bad = -1;
  for (int64_t i = 0; i < n; i++) {
    const double eps = 1e-6, keep = params[i];
    double num, diff;
    params[i] = keep + eps;
    num = fg_test_model_ref(ds, mdl, L, w, params, p, seed, epoch, NULL, NULL);
    params[i] = keep - eps;
    num -= fg_test_model_ref(ds, mdl, L, w, params, p, seed, epoch, NULL, NULL);
    params[i] = keep;
    num /= 2 * eps;
    diff = fabs(num - grads[i]) / fmax(1e-2, fabs(num));
    worst = fmax(worst, diff);
    if (diff > tol && *bad < 0) *bad = i;
  }
  return worst;
}

/* The forward and loss; updated (when not NULL) gets BatchNorm's running statistics moved. */
static double forward(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                      const double *params, float p, uint64_t seed, uint64_t epoch,
                      double *hidden, double *logits, double *updated) {
  const int64_t n = ds->num_nodes, C = w[L];
  const fg_csr *A = &ds->adj;
  int64_t wmax = 1, ntrain = 0;
  for (int l = 0; l <= L; l++) wmax = w[l] > wmax ? w[l] : wmax;
  double *h = malloc(sizeof(double) * (size_t)(n * wmax));
  double *d = malloc(sizeof(double) * (size_t)(n * wmax));
  double *t = malloc(sizeof(double) * (size_t)(n * wmax));
  double *hres = malloc(sizeof(double) * (size_t)(n * wmax));
  const double *P = NULL; /* the open residual block's projection (NULL: identity) */
  const int S = mdl.gin ? 2 : 1;
  int64_t *rowc = calloc((size_t)n, sizeof *rowc), *colc = calloc((size_t)n, sizeof *colc);
  double loss = 0.0;
  const double *pp = params;
  if (!h || !d || !t || !hres || !rowc || !colc) abort();
  for (int64_t v = 0; v < n; v++)
    for (int64_t e = A->rowptr[v]; e < A->rowptr[v + 1]; e++)
      if (!mdl.no_self_loops || A->col[e] != v) {
        rowc[v]++;
        colc[A->col[e]]++;
      }
  for (int64_t i = 0; i < n * w[0]; i++) h[i] = ds->features[i];
  for (int64_t v = 0; mdl.label_prop > 0.0f && v < n; v++)
    if (fg_label_prop_node(mdl.lp_seed, mdl.label_prop, v, ds->split[v]))
      for (int64_t j = 0; j < w[0]; j++) h[v * w[0] + j] += params[mdl.lp_off + ds->labels[v] * w[0] + j];
  for (int l = 0; l < L; l++) {
    const int64_t wi = w[l], wo = w[l + 1];
    const int source = mdl.residual && l % S == 0 && l + S < L;
    const int end = mdl.residual && (l + 1) % S == 0 && l + 1 < L;
    const int proj = source && w[l] != w[l + S];
    const double *Wn = pp, *Ws = pp + wi * wo, *b = pp + (1 + mdl.sage + proj) * wi * wo;
    const int norm = mdl.layer_norm && l + 1 < L, bn = mdl.batch_norm && l + 1 < L;
    const int linear = mdl.gin && l % 2 == 1, learn = mdl.gin && mdl.eps_learn && !linear;
    const double *gamma = b + wo, *beta = b + 2 * wo, *rmean = b + 3 * wo, *rvar = b + 4 * wo;
    const double eps = learn ? b[(bn ? 5 : norm ? 3 : 1) * wo] : (double)mdl.gin_eps;
    int64_t wsrc = 0;
    if (source) { /* the block's input before dropout, and its projection */
      memcpy(hres, h, sizeof(double) * (size_t)(n * wi));
      P = proj ? pp + (1 + mdl.sage) * wi * wo : NULL;
    }
    if (end) wsrc = w[l + 1 - S]; /* (a GIN's first stack layer has no block start behind it) */
    pp += (1 + mdl.sage + proj) * wi * wo + (bn ? 5 : norm ? 3 : 1) * wo + learn;
    for (int64_t v = 0; v < n; v++) /* d = dropout(h) */
      for (int64_t c = 0; c < wi; c++) {
        const int keep = p == 0.0f || linear ||
                         fg_dropout_keep(fg_dropout_row_key(seed, epoch, (uint64_t)l, (uint64_t)v),
                                         (uint64_t)c, fg_dropout_threshold(p));
        d[v * wi + c] = keep ? h[v * wi + c] / (linear ? 1.0 : 1.0 - p) : 0.0;
      }
    for (int64_t v = 0; v < n; v++) /* t = Ã d */
      for (int64_t c = 0; c < wi; c++) {
        double acc = 0.0;
        for (int64_t e = A->rowptr[v]; e < A->rowptr[v + 1]; e++) {
          const int64_t j = A->col[e];
          if (!mdl.no_self_loops || j != v)
            acc += adj_value(ds, mdl, rowc, colc, v, j) * d[j * wi + c];
        }
        if (mdl.gin) acc += (1.0 + eps) * d[v * wi + c];
        t[v * wi + c] = linear ? d[v * wi + c] : acc;
      }
    for (int64_t v = 0; v < n; v++) { /* h = act(norm(t W_n (+ d W_s) + b)) */
      double mean = 0.0, var = 0.0;
      for (int64_t c = 0; c < wo; c++) {
        double acc = b[c];
        for (int64_t k = 0; k < wi; k++) {
          acc += t[v * wi + k] * Wn[k * wo + c];
          if (mdl.sage) acc += d[v * wi + k] * Ws[k * wo + c];
        }
        h[v * wo + c] = acc;
        mean += acc / (double)wo;
      }
      for (int64_t c = 0; norm && c < wo; c++) var += (h[v * wo + c] - mean) * (h[v * wo + c] - mean);
      for (int64_t c = 0; c < wo; c++) {
        double z = h[v * wo + c];
        if (norm) z = gamma[c] * (z - mean) / sqrt(var / (double)wo + 1e-5) + beta[c];
        h[v * wo + c] = (l + 1 < L && !bn && z < 0) ? 0.0 : z;
      }
    }
    for (int64_t c = 0; bn && c < wo; c++) { /* BatchNorm over the column's n nodes, then ReLU */
      double mean = 0.0, var = 0.0;
      for (int64_t v = 0; v < n; v++) mean += h[v * wo + c] / (double)n;
      for (int64_t v = 0; v < n; v++) var += (h[v * wo + c] - mean) * (h[v * wo + c] - mean);
      var /= (double)n;
      if (updated) {
        double *u = updated + (b - params);
        u[3 * wo + c] = 0.9 * rmean[c] + 0.1 * mean;
        u[4 * wo + c] = 0.9 * rvar[c] + 0.1 * var * (double)n / (double)(n - 1);
      }
      if (mdl.running) {
        mean = rmean[c];
        var = rvar[c];
      }
      for (int64_t v = 0; v < n; v++) {
        const double z = gamma[c] * (h[v * wo + c] - mean) / sqrt(var + 1e-5) + beta[c];
        h[v * wo + c] = z < 0 ? 0.0 : z;
      }
    }
    for (int64_t v = 0; end && v < n; v++) /* + H_l0, or H_l0 P, after the ReLU */
      for (int64_t c = 0; c < wo; c++) {
        double r = 0.0;
        if (!P) r = hres[v * wsrc + c];
        for (int64_t k = 0; P && k < wsrc; k++) r += hres[v * wsrc + k] * P[k * wo + c];
        h[v * wo + c] += r;
      }
    if (l == L - 2 && hidden) memcpy(hidden, h, sizeof(double) * (size_t)(n * wo));
  }
  if (logits) memcpy(logits, h, sizeof(double) * (size_t)(n * C));
  for (int64_t v = 0; v < n; v++) {
    double mx = -INFINITY, se = 0.0;
    if (ds->split[v] != FG_SPLIT_TRAIN ||
        fg_label_prop_node(mdl.lp_seed, mdl.label_prop, v, ds->split[v]))
      continue;
    for (int64_t c = 0; c < C; c++) mx = fmax(mx, h[v * C + c]);
    for (int64_t c = 0; c < C; c++) se += exp(h[v * C + c] - mx);
    loss += log(se) + mx - h[v * C + ds->labels[v]];
    ntrain++;
  }
  free(h);
  free(d);
  free(t);
  free(hres);
  free(rowc);
  free(colc);
  return loss / (double)ntrain;
}

double fg_test_model_ref(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                         const double *params, float p, uint64_t seed, uint64_t epoch,
                         double *hidden, double *logits) {
  return forward(ds, mdl, L, w, params, p, seed, epoch, hidden, logits, NULL);
}

void fg_test_model_ref_running(const fg_dataset *ds, fg_test_model mdl, int L, const int64_t *w,
                               const double *params, int64_t n, float p, uint64_t seed,
                               uint64_t epoch, double *updated) {
  memcpy(updated, params, sizeof(double) * (size_t)n);
  mdl.running = 0;
  forward(ds, mdl, L, w, params, p, seed, epoch, NULL, NULL, updated);
}

int fg_test_model_norm(fg_test_model mdl) {
  return mdl.batch_norm ? FG_NORM_BATCH : mdl.layer_norm ? FG_NORM_LAYER : FG_NORM_NONE;
}

fg_status fg_test_small_dataset(fg_dataset *ds, int64_t n, const int64_t *src, const int64_t *dst,
                                int64_t ne, int undirected, int64_t F, int64_t C, uint64_t seed) {
  fg_status st;
  memset(ds, 0, sizeof *ds);
  st = fg_csr_from_edges(n, src, dst, ne, undirected, 1, 1, &ds->adj);
  if (st != FG_OK) return st;
  ds->num_nodes = n;
  ds->symmetric = fg_csr_is_symmetric(&ds->adj);
  ds->num_features = F;
  ds->num_classes = C;
  ds->features = malloc(sizeof(float) * (size_t)(n * F));
  ds->labels = malloc(sizeof(int32_t) * (size_t)n);
  ds->split = malloc((size_t)n);
  if (!ds->features || !ds->labels || !ds->split) return FG_ERR_NOMEM;
  fg_test_fill(ds->features, n * F, seed, -1.0f, 1.0f);
  return FG_OK;
}

void fg_test_small_dataset_free(fg_dataset *ds) {
  fg_csr_free(&ds->adj);
  free(ds->features);
  free(ds->labels);
  free(ds->split);
  memset(ds, 0, sizeof *ds);
}
