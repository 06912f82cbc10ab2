/* test_model_grad.c -- the whole model's backward (GCN, GraphSAGE and GIN with a fixed and a
 * learned epsilon, each with every adjacency normalization, without a norm, with LayerNorm and
 * with BatchNorm, with and without residual connections) against double-precision central
 * differences of an independent double-precision forward (tests/model_ref.c), for both
 * aggregation orders, with dropout on, on a directed and on an undirected graph; the float
 * forward against the double one; and BatchNorm's running statistics after the training forward
 * against the reference's update. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "schemes/fg_scheme.h"
#include "model_ref.h"
#include "testutil.h"

enum { N = 14, F = 5, H = 4, C = 3, MAXL = 6 };
static const float P = 0.3f;
static const uint64_t SEED = 7, EPOCH = 3;

static void run_case(fg_test_model mdl, int directed, int agg_order) {
  fg_dataset ds;
  fg_dist *dist = NULL;
  fg_scheme *s = NULL;
  fg_model *m = NULL;
  int64_t src[40], dst[40], widths[MAXL + 1];
  int ne = 0, ntrain = 0;
  fg_scheme_config sc;
  memset(&ds, 0, sizeof ds);
  const fg_model_kind *kind = fg_model_kind_find(mdl.gin ? "gin" : mdl.sage ? "sage" : "gcn");
  /* two layers, three with a residual (its first block projects F to H, its second is the
   * identity); a GIN layer is two stack layers: [F, H, H, C, C], [F, H, H, H, H, C, C] */
  const int S = mdl.gin ? 2 : 1, LM = mdl.residual ? 3 : 2, L = LM * S;
  widths[0] = F;
  for (int k = 1; k <= LM; k++)
    for (int j = 0; j < S; j++) widths[(k - 1) * S + j + 1] = k < LM ? H : C;
  memset(&sc, 0, sizeof sc);
  sc.adj.norm = mdl.norm;
  sc.adj.no_self_loops = mdl.no_self_loops;
  for (int i = 0; i < N; i++) { /* a ring plus chords */
    src[ne] = i;
    dst[ne++] = (i + 1) % N;
    if (i % 3 == 0) {
      src[ne] = i;
      dst[ne++] = (i * 5 + 2) % N;
    }
  }
  EXPECT_OK(fg_test_small_dataset(&ds, N, src, dst, ne, !directed, F, C, 11));
  EXPECT(ds.symmetric == !directed);
  for (int i = 0; i < N; i++) {
    ds.labels[i] = i % C;
    ds.split[i] = (i % 4 == 3) ? FG_SPLIT_VALID : FG_SPLIT_TRAIN;
    ntrain += ds.split[i] == FG_SPLIT_TRAIN;
  }
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &dist));
  EXPECT_OK(fg_scheme_serial_create(dist, &ds, &sc, &s));
  {
    fg_model_config mc = {.layers = L, .widths = widths, .agg_order = agg_order, .seed = 5,
                          .kind = kind,
                          .norm = fg_test_model_norm(mdl),
                          .gin_eps = mdl.gin_eps, .gin_eps_learn = mdl.eps_learn,
                          .residual = mdl.residual, .label_prop = mdl.label_prop};
    EXPECT_OK(fg_model_create(&mc, s, &m));
    mdl.lp_seed = 5;
    mdl.lp_off = m->lp_off;
    /* the embedding away from 0, so that the forward uses it */
    for (int64_t k = 0; m->lp_off >= 0 && k < (int64_t)F * C; k++)
      m->params[m->lp_off + k] = 0.3f * sinf(1.7f * (float)k + 0.4f);
    if (mdl.label_prop > 0.0f) { /* the loss's nodes: the training nodes but the label nodes */
      ntrain = 0;
      for (int i = 0; i < N; i++)
        ntrain += ds.split[i] == FG_SPLIT_TRAIN &&
                  !fg_label_prop_node(5, mdl.label_prop, i, ds.split[i]);
    }
  }
  /* perturb biases away from zero so their gradients are exercised */
  for (int l = 0; l < L; l++)
    for (int c = 0; c < widths[l + 1]; c++) {
      m->b[l][c] = 0.1f * (float)(c + 1) - 0.15f;
      if (m->vecs[l] > 1) { /* a norm's scale and shift away from 1 and 0 */
        m->b[l][widths[l + 1] + c] = 0.9f + 0.1f * (float)c;
        m->b[l][2 * widths[l + 1] + c] = 0.05f * (float)c - 0.04f;
      }
      if (m->vecs[l] > 3) { /* BatchNorm's running statistics as after some steps */
        m->b[l][3 * widths[l + 1] + c] = 0.1f * (float)c - 0.2f;
        m->b[l][4 * widths[l + 1] + c] = 0.5f + 0.2f * (float)c;
      }
      if (m->scal[l]) m->b[l][m->vecs[l] * widths[l + 1]] = 0.3f - 0.5f * (float)l; /* eps */
    }

  {
    uint8_t sel[N];
    float dlogits[N * C];
    int64_t cnt, cor;
    double loss_f, loss_d, worst = 0.0;
    double *pd = malloc(sizeof(double) * (size_t)m->n_params);
    double *p0 = malloc(sizeof(double) * (size_t)m->n_params);
    for (int i = 0; i < N; i++) /* local order */
      sel[i] = s->split[i] == FG_SPLIT_TRAIN &&
               !fg_label_prop_node(5, mdl.label_prop, s->global_ids[i], s->split[i]);
    for (int64_t i = 0; i < m->n_params; i++) p0[i] = m->params[i];
    EXPECT_OK(fg_model_forward(m, s, 1, P, SEED, EPOCH));
    loss_f = fg_softmax_xent(m->H[L], N, C, s->labels, sel, 1.0f / ntrain, dlogits, &cnt, &cor) /
             ntrain;
    EXPECT_OK(fg_model_backward(m, s, dlogits, P, SEED, EPOCH));
    /* the forward moved BatchNorm's running statistics (and nothing else) as the reference
     * does */
    fg_test_model_ref_running(&ds, mdl, L, widths, p0, m->n_params, P, SEED, EPOCH, pd);
    {
      double moved = 0.0, off = 0.0;
      for (int64_t i = 0; i < m->n_params; i++) {
        moved = fmax(moved, fabs(pd[i] - p0[i]));
        off = fmax(off, fabs(m->params[i] - pd[i]) / fmax(1.0, fabs(pd[i])));
      }
      EXPECT_MSG(off < 1e-6 && (moved > 0.0) == (mdl.batch_norm != 0),
                 "running statistics off by %.3g (moved by %.3g)", off, moved);
    }
    for (int64_t i = 0; i < m->n_params; i++) pd[i] = m->params[i];
    loss_d = fg_test_model_ref(&ds, mdl, L, widths, pd, P, SEED, EPOCH, NULL, NULL);
    EXPECT_MSG(fabs(loss_f - loss_d) < 1e-5 * fabs(loss_d) + 1e-6,
               "float loss %.9g vs double %.9g", loss_f, loss_d);
    {
      int64_t bad;
      worst = fg_test_model_gradcheck(&ds, mdl, L, widths, pd, m->grads, m->n_params, P, SEED,
                                      EPOCH, 2e-3, &bad);
      EXPECT_MSG(bad < 0, "param %lld: analytic and numeric gradients differ by %.3g (%s %s, "
                 "directed %d, order %d)", (long long)bad, worst, kind->name,
                 fg_adj_norm_name(mdl.norm), directed, agg_order);
    }
    printf("%s %s%s%s%s directed %d agg_order %d: loss %.6f, max relative gradient error "
           "%.2e\n", kind->name, fg_adj_norm_name(mdl.norm),
           mdl.batch_norm ? " batchnorm" : mdl.layer_norm ? " layernorm" : "",
           mdl.residual ? " residual" : "", mdl.label_prop > 0.0f ? " label-prop" : "",
           directed, agg_order, loss_f, worst);
    free(pd);
    free(p0);
  }
  fg_model_destroy(&m);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&dist);
  fg_test_small_dataset_free(&ds);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* kind 0 GCN, 1 SAGE, 2 GIN with eps 0, 3 GIN with eps 0.25, 4 GIN learning eps; variant 0
   * plain, 1 residual connections, 2 label propagation (the embedding's gradient through layer
   * 0's input gradient; not with a residual, which refuses it) */
  for (int variant = 0; variant <= 2; variant++)
  for (int nk = FG_NORM_NONE; nk <= FG_NORM_BATCH; nk++)
    for (int kind = 0; kind <= 4; kind++)
      for (int norm = FG_ADJ_SYM; norm <= FG_ADJ_SUM; norm++)
        for (int directed = 0; directed <= 1; directed++)
          for (int order = FG_AGG_FIRST; order <= FG_AGG_LAST; order++) {
            const fg_test_model mdl = {.sage = kind == 1,
                                       .norm = (fg_adj_norm)norm,
                                       .no_self_loops = kind >= 1,
                                       .layer_norm = nk == FG_NORM_LAYER,
                                       .gin = kind >= 2,
                                       .gin_eps = kind == 3 ? 0.25f : 0.0f,
                                       .eps_learn = kind == 4,
                                       .residual = variant == 1,
                                       .batch_norm = nk == FG_NORM_BATCH,
                                       .label_prop = variant == 2 ? 0.5f : 0.0f};
            run_case(mdl, directed, order);
          }
  MPI_Finalize();
  return fg_test_finish("test_model_grad");
}
