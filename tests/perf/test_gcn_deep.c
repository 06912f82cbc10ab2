/* test_gcn_deep.c -- the model's shared activation buffers on deeper networks: a 4-layer GCN
 * whose layers mix both aggregation orders (a hidden layer aggregating first keeps its own
 * Â·D; the others keep D in place of H), with and without dropout, directed and undirected:
 * gradients against double-precision central differences of an independent forward; the
 * evaluation forward's hidden layer and logits against the double forward; and a second
 * training step after an evaluation gives the same gradients (no stale buffer is read). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "schemes/fg_scheme.h"
#include "testutil.h"

enum { N = 17, L = 4, MAXW = 8 };
static const int64_t kWidths[L + 1] = {5, 4, 8, 6, 3};
static const uint64_t SEED = 11, EPOCH = 2;

/* Double forward: fills hidden (N x w[L-1]) and logits (N x w[L]) when not NULL, returns the
 * mean cross-entropy over training rows. */
static double ref_forward(const fg_scheme *s, const fg_csr *A, const double *params, float p,
                          double *hidden, double *logits) {
  double h[N * MAXW], d[N * MAXW], t[N * MAXW], z[N * MAXW], loss = 0.0;
  const double *pp = params;
  int ntrain = 0;
  for (int i = 0; i < N * kWidths[0]; i++) h[i] = s->features[i];
  for (int l = 0; l < L; l++) {
    const int64_t wi = kWidths[l], wo = kWidths[l + 1];
    const double *W = pp, *b = pp + wi * wo;
    pp += wi * wo + wo;
    for (int r = 0; r < N; r++)
      for (int c = 0; c < wi; c++) {
        const int keep =
            p == 0.0f || fg_dropout_keep(fg_dropout_row_key(SEED, EPOCH, (uint64_t)l,
                                                            (uint64_t)s->global_ids[r]),
                                         (uint64_t)c, fg_dropout_threshold(p));
        d[r * wi + c] = keep ? h[r * wi + c] / (1.0 - p) : 0.0;
      }
    for (int r = 0; r < N; r++)
      for (int c = 0; c < wi; c++) {
        double acc = 0.0;
        for (int64_t e = A->rowptr[r]; e < A->rowptr[r + 1]; e++)
          acc += (double)A->val[e] * d[A->col[e] * wi + c];
        t[r * wi + c] = acc;
      }
    for (int r = 0; r < N; r++)
      for (int c = 0; c < wo; c++) {
        double acc = b[c];
        for (int k = 0; k < wi; k++) acc += t[r * wi + k] * W[k * wo + c];
        z[r * wo + c] = (l + 1 < L && acc < 0) ? 0.0 : acc;
      }
    if (l == L - 2 && hidden) memcpy(hidden, z, sizeof(double) * N * wo);
    memcpy(h, z, sizeof(double) * N * wo);
  }
  if (logits) memcpy(logits, h, sizeof(double) * N * kWidths[L]);
  for (int r = 0; r < N; r++) {
    const int64_t C = kWidths[L];
    double mx = -INFINITY, se = 0.0;
    if (s->split[r] != FG_SPLIT_TRAIN) continue;
    for (int c = 0; c < C; c++) mx = fmax(mx, h[r * C + c]);
    for (int c = 0; c < C; c++) se += exp(h[r * C + c] - mx);
    loss += log(se) + mx - h[r * C + s->labels[r]];
    ntrain++;
  }
  return loss / ntrain;
}

static void run_case(int directed, int agg_order, float p) {
  fg_dataset ds;
  fg_dist *dist = NULL;
  fg_scheme *s = NULL;
  fg_gcn *m = NULL;
  fg_csr A;
  int64_t src[60], dst[60];
  int ne = 0, ntrain = 0;
  fg_scheme_config sc;
  const int64_t C = kWidths[L];
  memset(&ds, 0, sizeof ds);
  memset(&A, 0, sizeof A);
  memset(&sc, 0, sizeof sc);
  for (int i = 0; i < N; i++) { /* a ring, chords, and a hub */
    src[ne] = i;
    dst[ne++] = (i + 1) % N;
    if (i % 3 == 1) {
      src[ne] = i;
      dst[ne++] = (i * 7 + 4) % N;
    }
    if (i % 2 == 0 && i != 5) {
      src[ne] = 5;
      dst[ne++] = i;
    }
  }
  ds.num_nodes = N;
  EXPECT_OK(fg_csr_from_edges(N, src, dst, ne, !directed, 1, 1, &ds.adj));
  ds.symmetric = fg_csr_is_symmetric(&ds.adj);
  ds.num_features = kWidths[0];
  ds.num_classes = C;
  ds.features = malloc(sizeof(float) * N * kWidths[0]);
  ds.labels = malloc(sizeof(int32_t) * N);
  ds.split = malloc(N);
  fg_test_fill(ds.features, N * kWidths[0], 21, -1.0f, 1.0f);
  for (int i = 0; i < N; i++) {
    ds.labels[i] = (i * 5) % (int)C;
    ds.split[i] = (i % 5 == 4) ? FG_SPLIT_VALID : FG_SPLIT_TRAIN;
    ntrain += ds.split[i] == FG_SPLIT_TRAIN;
  }
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &dist));
  EXPECT_OK(fg_scheme_serial_create(dist, &ds, &sc, &s));
  {
    fg_gcn_config mc = {L, kWidths, agg_order, 9};
    EXPECT_OK(fg_gcn_create(&mc, s, &m));
  }
  EXPECT_OK(fg_csr_from_edges(N, src, dst, ne, !directed, 1, 1, &A));
  EXPECT_OK(fg_gcn_normalize(&A));
  if (!m) goto done;
  for (int l = 0; l < L; l++)
    for (int c = 0; c < kWidths[l + 1]; c++) m->b[l][c] = 0.07f * (float)(c + 1) - 0.12f;
  {
    uint8_t sel[N];
    float dlogits[N * 3];
    int64_t cnt, cor;
    double worst = 0.0, hid[N * MAXW], lg[N * MAXW];
    double *pd = malloc(sizeof(double) * (size_t)m->n_params);
    float *g1 = malloc(sizeof(float) * (size_t)m->n_params);
    for (int i = 0; i < N; i++) sel[i] = ds.split[i] == FG_SPLIT_TRAIN;
    EXPECT_OK(fg_gcn_forward(m, s, 1, p, SEED, EPOCH));
    const double loss_f =
        fg_softmax_xent(m->H[L], N, C, s->labels, sel, 1.0f / ntrain, dlogits, &cnt, &cor) /
        ntrain;
    EXPECT_OK(fg_gcn_backward(m, s, dlogits, p, SEED, EPOCH));
    memcpy(g1, m->grads, sizeof(float) * (size_t)m->n_params);
    for (int64_t i = 0; i < m->n_params; i++) pd[i] = m->params[i];
    const double loss_d = ref_forward(s, &A, pd, p, NULL, NULL);
    EXPECT_MSG(fabs(loss_f - loss_d) < 1e-5 * fabs(loss_d) + 1e-6,
               "float loss %.9g vs double %.9g", loss_f, loss_d);
    for (int64_t i = 0; i < m->n_params; i++) {
      const double eps = 1e-6, keep = pd[i];
      double num, diff;
      pd[i] = keep + eps;
      num = ref_forward(s, &A, pd, p, NULL, NULL);
      pd[i] = keep - eps;
      num -= ref_forward(s, &A, pd, p, NULL, NULL);
      pd[i] = keep;
      num /= 2 * eps;
      diff = fabs(num - m->grads[i]) / fmax(1e-2, fabs(num));
      if (diff > worst) worst = diff;
      EXPECT_MSG(diff < 2e-3, "param %lld: analytic %.7g numeric %.7g (directed %d, order %d, "
                 "p %g)", (long long)i, m->grads[i], num, directed, agg_order, (double)p);
    }
    /* evaluation forward: the last hidden layer and the logits, without dropout */
    EXPECT_OK(fg_gcn_forward(m, s, 0, 0.0f, SEED, EPOCH));
    ref_forward(s, &A, pd, 0.0f, hid, lg);
    {
      double dh = 0.0, dl = 0.0;
      for (int i = 0; i < N * kWidths[L - 1]; i++)
        dh = fmax(dh, fabs(hid[i] - m->H[L - 1][i]) / fmax(1.0, fabs(hid[i])));
      for (int i = 0; i < N * C; i++) dl = fmax(dl, fabs(lg[i] - m->H[L][i]) / fmax(1.0, fabs(lg[i])));
      EXPECT_MSG(dh < 1e-5 && dl < 1e-5, "evaluation forward: hidden off by %.3g, logits by %.3g",
                 dh, dl);
    }
    /* the same training step again, after the evaluation: the same gradients, bit for bit */
    EXPECT_OK(fg_gcn_forward(m, s, 1, p, SEED, EPOCH));
    fg_softmax_xent(m->H[L], N, C, s->labels, sel, 1.0f / ntrain, dlogits, &cnt, &cor);
    EXPECT_OK(fg_gcn_backward(m, s, dlogits, p, SEED, EPOCH));
    EXPECT(memcmp(g1, m->grads, sizeof(float) * (size_t)m->n_params) == 0);
    printf("directed %d agg_order %d p %.1f: agg_first", directed, agg_order, (double)p);
    for (int l = 0; l < L; l++) printf(" %d", m->agg_first[l]);
    printf("; loss %.6f, max relative gradient error %.2e\n", loss_f, worst);
    free(pd);
    free(g1);
  }
done:
  fg_csr_free(&A);
  fg_gcn_destroy(&m);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&dist);
  fg_csr_free(&ds.adj);
  free(ds.features);
  free(ds.labels);
  free(ds.split);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  for (int directed = 0; directed < 2; directed++)
    for (int order = FG_AGG_AUTO; order <= FG_AGG_LAST; order++) {
      run_case(directed, order, 0.3f);
      run_case(directed, order, 0.0f);
    }
  MPI_Finalize();
  return fg_test_finish("test_gcn_deep");
}
