/* test_model_deep.c -- the model's shared activation buffers on deeper networks: a 4-layer GCN
 * or GraphSAGE, under each adjacency normalization, whose layers mix both aggregation orders (a hidden layer aggregating first keeps its own
 * Â·D; the others keep D in place of H), with and without dropout, directed and undirected:
 * gradients against double-precision central differences of an independent forward; the
 * evaluation forward's hidden layer and logits against the double forward (with BatchNorm,
 * normalized by the running statistics the training forward left, which must be the
 * reference's update of them); and a second training step after an evaluation gives the same
 * gradients (no stale buffer is read). LayerNorm and BatchNorm stack on the three hidden
 * layers.
 * Each case also runs on a reordered scheme (--reorder rcm, degree), whose rows are a
 * permutation of the nodes and whose layer-0 input is gathered from the dataset's features
 * through a row map: same gradients against the reference in the dataset's numbering. Every
 * case also trains one step under --precision bf16 with S[l] stored as bf16 (S16) and with it
 * kept in fp32: the same bits (bf16_storage). The features stored as bf16 against fp32
 * features rounded as read (bf16_features). */
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

enum { N = 17, L = 4, MAXW = 8 };
static const int64_t kWidths[L + 1] = {5, 4, 8, 6, 3};
static const uint64_t SEED = 11, EPOCH = 2;

/* The relative 2-norm distance of a from b (n elements). */
static double rel_dist(const float *a, const float *b, int64_t n) {
  double num = 0.0, den = 0.0;
  for (int64_t i = 0; i < n; i++) {
    num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
    den += (double)b[i] * b[i];
  }
  return den > 0.0 ? sqrt(num / den) : sqrt(num);
}

/* --precision bf16's storage of S[l] (S16), hidden H[l] (H16) and the gradient dZ Wᵀ that a
 * layer aggregating first multiplies by Âᵀ (g16) as bf16 against keeping them in fp32: the
 * gradients and the evaluation forward's logits bit for bit (GEMMs, the mask and
 * the SpMM's rounded rows are their only readers, and they round anyway), with S16 in use
 * wherever fg_model_s16 says (here layer 1, 4 -> 8, when it aggregates first; a GIN's 4 -> 8
 * aggregation) and H16 wherever fg_model_h16 does (not with residual connections). A GIN
 * layer's self term adds its input: read from H16 it is rounded once more, so there the
 * gradients and logits are checked against the fp32 model's (m[2]): H16's relative 2-norm
 * distance from them at most 3 times the fp32-H layout's plus 5e-3. (bf16 alone moves this
 * tiny 8-stack-layer GIN's gradients by 0.5-20 %; H16 adds a rounding of the same size.) */
static void bf16_storage(fg_scheme *s, const fg_model_kind *kind, fg_test_model mdl,
                         int agg_order, float p) {
  fg_model *m[3] = {NULL, NULL, NULL};
  const int stages = kind->stages, Ls = L * stages;
  int64_t w[2 * L + 1];
  int n16 = 0, h16 = 0, exact = 1, s16[2 * L], nm = 2;
  double d16 = 0.0, d32 = 0.0;
  uint8_t sel[N];
  EXPECT_OK(fg_model_widths(kind, L, 0, (const int[]){4, 8, 6}, kWidths[0], kWidths[L], w));
  for (int i = 0; i < N; i++) sel[i] = s->split[i] == FG_SPLIT_TRAIN;
  s->bf16 = 1;
  for (int k = 0; k < 3; k++) {
    fg_model_config mc = {.layers = Ls, .widths = w, .agg_order = agg_order, .seed = 9,
                          .kind = kind,
                          .norm = fg_test_model_norm(mdl),
                          .gin_eps = mdl.gin_eps, .gin_eps_learn = mdl.eps_learn,
                          .residual = mdl.residual, .bf16 = k < 2, .bf16_s32 = k};
    if (k == 2 && !mdl.gin) break; /* the fp32 model: only where the bits may differ */
    EXPECT_OK(fg_model_create(&mc, s, &m[k]));
  }
  nm = m[2] ? 3 : 2;
  if (!m[0] || !m[1] || (mdl.gin && !m[2])) goto done;
  for (int l = 0; l < Ls; l++) {
    const int want = fg_model_s16(1, m[0]->agg_first[l], l, Ls, w[l], w[l + 1]);
    EXPECT(!m[1]->S16[l] && (m[0]->S16[l] != NULL) == want && (!want || !m[0]->S[l]));
    n16 += want;
  }
  EXPECT(agg_order == FG_AGG_LAST ? n16 == (stages > 1) : n16 >= 1);
  for (int l = 0; l < Ls; l++) s16[l] = m[0]->S16[l] != NULL;
  for (int l = 0; l <= Ls; l++) {
    /* (fused epilogues keep every hidden H and D_0 as bf16: fuse16.c) */
    const int want = m[0]->fuse ? l < Ls
                                : fg_model_h16(1, 0, mdl.residual, mdl.eps_learn, m[0]->kinds,
                                               m[0]->agg_first, s16, Ls, l);
    EXPECT(!m[1]->H16[l] && (m[0]->H16[l] != NULL) == want &&
           (!want || l == 0 || !m[0]->H[l])); /* (H16[0] is D_0, H[0] the features) */
    h16 += want;
    if (want && l < Ls && m[0]->kinds[l]->eps) exact = 0; /* a GIN aggregation reads it */
  }
  EXPECT(mdl.residual ? h16 == 0 : h16 >= 1);
  /* a GCN or SAGE without a norm or residual connections fuses its epilogues on the serial
   * scheme */
  EXPECT(m[0]->fuse == (strcmp(kind->name, "gin") != 0 && !mdl.residual &&
                        fg_test_model_norm(mdl) == FG_NORM_NONE) && !m[1]->fuse);
  EXPECT(exact || nm == 3);
  /* the gradient a layer aggregating first multiplies by Âᵀ, stored as bf16 (g16) */
  EXPECT(m[0]->g16 && !m[1]->g16);
  for (int k = 0; k < nm; k++) {
    float dl[N * 3];
    s->bf16 = k < 2;
    int64_t cnt, cor;
    EXPECT_OK(fg_model_forward(m[k], s, 1, p, SEED, EPOCH));
    fg_softmax_xent(m[k]->H[Ls], N, kWidths[L], s->labels, sel, 0.1f, dl, &cnt, &cor);
    EXPECT_OK(fg_model_backward(m[k], s, dl, p, SEED, EPOCH));
  }
  s->bf16 = 1;
  if (nm == 3) {
    d16 = rel_dist(m[0]->grads, m[2]->grads, m[0]->n_params);
    d32 = rel_dist(m[1]->grads, m[2]->grads, m[0]->n_params);
  }
  if (exact)
    EXPECT_MSG(memcmp(m[0]->grads, m[1]->grads, sizeof(float) * (size_t)m[0]->n_params) == 0,
               "bf16 %s order %d p %.1f: gradients with S16/H16 differ from fp32 S, H",
               kind->name, agg_order, (double)p);
  else
    EXPECT_MSG(d16 <= 3.0 * d32 + 5e-3,
               "bf16 %s order %d p %.1f: gradients with H16 %.3g from fp32's, with fp32 H %.3g",
               kind->name, agg_order, (double)p, d16, d32);
  for (int k = 0; k < nm; k++) {
    s->bf16 = k < 2;
    EXPECT_OK(fg_model_forward(m[k], s, 0, 0.0f, SEED, EPOCH));
  }
  if (exact) {
    EXPECT_MSG(memcmp(m[0]->H[Ls], m[1]->H[Ls], sizeof(float) * N * kWidths[L]) == 0,
               "bf16 %s order %d: evaluation logits with S16/H16 differ from fp32 S, H",
               kind->name, agg_order);
  } else {
    const double e16 = rel_dist(m[0]->H[Ls], m[2]->H[Ls], N * kWidths[L]);
    const double e32 = rel_dist(m[1]->H[Ls], m[2]->H[Ls], N * kWidths[L]);
    EXPECT_MSG(e16 <= 3.0 * e32 + 5e-3,
               "bf16 %s order %d: evaluation logits with H16 %.3g from fp32's, with fp32 H %.3g",
               kind->name, agg_order, e16, e32);
  }
  if (exact)
    printf("  bf16 %s order %d p %.1f: S16 on %d layers, H16 on %d (bit for bit)\n", kind->name,
           agg_order, (double)p, n16, h16);
  else
    printf("  bf16 %s order %d p %.1f: S16 on %d layers, H16 on %d (gradients %.2g from fp32's, "
           "with fp32 H %.2g)\n", kind->name, agg_order, (double)p, n16, h16, d16, d32);
done:
  s->bf16 = 0;
  for (int k = 0; k < 3; k++) fg_model_destroy(&m[k]);
}

/* D_0 kept as bf16 where the scratch buffers are narrower than one input row: 17 nodes of 96
 * features into 2 classes (GCN and SAGE, 1 and 2 layers, aggregating last at layer 0; GCN,
 * SAGE and GIN aggregating first, D_0 aggregated as bf16 and GIN's (1 + eps) D_0 made again
 * from the features), so every other intermediate is at most 17 x 4 floats (D_0 once went
 * through a scratch buffer that size: a heap overflow, which the sanitizer builds caught), and
 * the training step's gradients and the evaluation logits equal those with D_0 in fp32
 * (bf16_s32) bit for bit, at a dropout of 0.4 (a scale that rounds). */
static void bf16_wide_input(void) {
  enum { F = 96, C = 2 };
  fg_dataset ds;
  fg_dist *dist = NULL;
  fg_scheme *s = NULL;
  fg_scheme_config sc;
  int64_t src[N], dst[N];
  uint8_t sel[N];
  memset(&ds, 0, sizeof ds);
  memset(&sc, 0, sizeof sc);
  for (int i = 0; i < N; i++) {
    src[i] = i;
    dst[i] = (i * 5 + 3) % N;
    sel[i] = i % 4 != 3;
  }
  EXPECT_OK(fg_test_small_dataset(&ds, N, src, dst, N, 1, F, C, 31));
  for (int i = 0; i < N; i++) {
    ds.labels[i] = i % C;
    ds.split[i] = FG_SPLIT_TRAIN;
  }
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &dist));
  EXPECT_OK(fg_scheme_serial_create(dist, &ds, &sc, &s));
  if (s) s->bf16 = 1;
  for (int c = 0; s && c < 9; c++) {
    /* 0-3: GCN and SAGE aggregating last at layer 0; 4-8: GCN, SAGE and a one-layer GIN (fixed
     * eps; a deeper one's hidden GIN layers add their rounded D, bf16_storage) aggregating
     * first, whose D_0 is aggregated as bf16 and GIN's self term made again */
    const int layers = 1 + c % 2, first = c >= 4;
    const fg_model_kind *kind =
        fg_model_kind_find(c < 2 ? "gcn" : c < 4 ? "sage" : c < 6 ? "gcn" : c < 8 ? "sage" : "gin");
    int64_t w[5];
    fg_model *m[2] = {NULL, NULL};
    EXPECT_OK(fg_model_widths(kind, layers, 4, NULL, F, C, w));
    for (int k = 0; k < 2; k++) {
      fg_model_config mc = {.layers = fg_model_stack_layers(kind, layers), .widths = w,
                            .agg_order = first ? FG_AGG_FIRST : FG_AGG_AUTO, .seed = 5,
                            .kind = kind, .gin_eps = 0.25f, .bf16 = 1, .bf16_s32 = k};
      EXPECT_OK(fg_model_create(&mc, s, &m[k]));
    }
    if (m[0] && m[1]) {
      const int Ls = m[0]->layers;
      float dl[N * C], lg[N * C];
      int64_t cnt, cor;
      EXPECT_MSG(m[0]->H16[0] && !m[1]->H16[0] && m[0]->agg_first[0] == first,
                 "wide input, case %d: H16[0] %p, aggregating first %d", c,
                 (void *)m[0]->H16[0], m[0]->agg_first[0]);
      for (int k = 0; k < 2; k++) {
        EXPECT_OK(fg_model_forward(m[k], s, 1, 0.4f, SEED, EPOCH));
        fg_softmax_xent(m[k]->H[Ls], N, C, s->labels, sel, 0.1f, dl, &cnt, &cor);
        EXPECT_OK(fg_model_backward(m[k], s, dl, 0.4f, SEED, EPOCH));
      }
      EXPECT_MSG(memcmp(m[0]->grads, m[1]->grads, sizeof(float) * (size_t)m[0]->n_params) == 0,
                 "wide input, case %d: gradients with D_0 as bf16 differ", c);
      EXPECT_OK(fg_model_forward(m[0], s, 0, 0.0f, SEED, EPOCH));
      memcpy(lg, m[0]->H[Ls], sizeof lg);
      EXPECT_OK(fg_model_forward(m[1], s, 0, 0.0f, SEED, EPOCH));
      EXPECT_MSG(memcmp(lg, m[1]->H[Ls], sizeof lg) == 0,
                 "wide input, case %d: evaluation logits with D_0 as bf16 differ", c);
    }
    fg_model_destroy(&m[0]);
    fg_model_destroy(&m[1]);
  }
  printf("  bf16 D_0 of 96 features, scratch of 4 columns: 9 cases\n");
  fg_scheme_destroy(&s);
  fg_dist_destroy(&dist);
  fg_test_small_dataset_free(&ds);
}

/* The features as bf16 (fg_model_x16): a scheme that lays its own features out as bf16
 * (fg_scheme_config.features16: no fp32 array, each element the rounding of the fp32 one) and
 * one that keeps them in fp32, rounded as the input pass reads them, give bf16 models the same
 * gradients and evaluation logits bit for bit: GCN in both aggregation orders, SAGE, and GIN
 * learning eps (whose backward redoes D_0 for its eps term), at p = 0.3 (a scale that rounds)
 * and 0, in the dataset's order and reordered (rcm). A residual model, which adds the features
 * as they are, is refused on the bf16 scheme and reads fp32 on the other. */
static void bf16_features(void) {
  enum { NF = 23, F = 6, C = 3 };
  int64_t src[NF], dst[NF];
  fg_dataset ds;
  fg_dist *dist = NULL;
  int cases = 0;
  uint8_t sel[NF];
  for (int i = 0; i < NF; i++) {
    src[i] = i;
    dst[i] = (i * 7 + 2) % NF;
  }
  EXPECT_OK(fg_test_small_dataset(&ds, NF, src, dst, NF, 1, F, C, 41));
  for (int i = 0; i < NF; i++) {
    ds.labels[i] = i % C;
    ds.split[i] = i % 3 ? FG_SPLIT_TRAIN : FG_SPLIT_VALID;
  }
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &dist));
  for (int ro = 0; ro < 2 && dist; ro++) {
    fg_scheme *s[2] = {NULL, NULL};
    fg_scheme_config sc;
    memset(&sc, 0, sizeof sc);
    sc.normalize_features = 1; /* the scheme's own copy */
    sc.reorder = ro ? "rcm" : NULL;
    for (int k = 0; k < 2; k++) {
      sc.features16 = k == 0; /* s[0]: laid out as bf16; s[1]: fp32 */
      EXPECT_OK(fg_scheme_serial_create(dist, &ds, &sc, &s[k]));
      if (s[k]) s[k]->bf16 = 1;
    }
    if (!s[0] || !s[1]) break;
    for (int i = 0; i < NF; i++) sel[i] = s[0]->split[i] == FG_SPLIT_TRAIN;
    EXPECT(s[0]->features == NULL && s[0]->features16 != NULL && s[1]->features16 == NULL);
    for (int64_t i = 0; s[0]->features16 && i < NF * F; i++)
      if (s[0]->features16[i] != fg_bf16_from_float(s[1]->features[i])) {
        EXPECT_MSG(0, "bf16 feature %lld is not the fp32 one rounded", (long long)i);
        break;
      }
    for (int c = 0; c < 5; c++) {
      const char *kn = c < 2 ? "gcn" : c < 4 ? "sage" : "gin";
      const fg_model_kind *kind = fg_model_kind_find(kn);
      int64_t w[5];
      EXPECT_OK(fg_model_widths(kind, 2, 5, NULL, F, C, w));
      for (int pi = 0; pi < 2; pi++) {
        const float p = pi ? 0.0f : 0.3f;
        fg_model *m[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
          fg_model_config mc = {.layers = fg_model_stack_layers(kind, 2), .widths = w,
                                .agg_order = c == 0 ? FG_AGG_FIRST : c == 1 ? FG_AGG_LAST
                                                                            : FG_AGG_AUTO,
                                .seed = 5, .kind = kind, .gin_eps = 0.25f,
                                .gin_eps_learn = c == 4, .bf16 = 1};
          EXPECT_OK(fg_model_create(&mc, s[k], &m[k]));
        }
        if (m[0] && m[1]) {
          const int Ls = m[0]->layers;
          float dl[NF * C];
          int64_t cnt, cor;
          EXPECT(m[0]->x16 && m[1]->x16);
          for (int k = 0; k < 2; k++) {
            EXPECT_OK(fg_model_forward(m[k], s[k], 1, p, SEED, EPOCH));
            fg_softmax_xent(m[k]->H[Ls], NF, C, s[k]->labels, sel, 0.1f, dl, &cnt, &cor);
            EXPECT_OK(fg_model_backward(m[k], s[k], dl, p, SEED, EPOCH));
          }
          EXPECT_MSG(memcmp(m[0]->grads, m[1]->grads,
                            sizeof(float) * (size_t)m[0]->n_params) == 0,
                     "bf16 features, %s case %d p %.1f reorder %d: gradients differ", kn, c,
                     (double)p, ro);
          for (int k = 0; k < 2; k++) EXPECT_OK(fg_model_forward(m[k], s[k], 0, 0.0f, SEED, 0));
          EXPECT_MSG(memcmp(m[0]->H[Ls], m[1]->H[Ls], sizeof(float) * NF * C) == 0,
                     "bf16 features, %s case %d reorder %d: logits differ", kn, c, ro);
          cases++;
        }
        fg_model_destroy(&m[0]);
        fg_model_destroy(&m[1]);
      }
    }
    {
      int64_t w[3];
      fg_model *m = NULL;
      EXPECT_OK(fg_model_widths(fg_model_kind_find("gcn"), 2, 5, NULL, F, C, w));
      fg_model_config mc = {.layers = 2, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 5,
                            .kind = fg_model_kind_find("gcn"), .residual = 1, .bf16 = 1};
      EXPECT(fg_model_create(&mc, s[0], &m) == FG_ERR_INVALID_ARG && m == NULL);
      fg_model_destroy(&m);
      EXPECT_OK(fg_model_create(&mc, s[1], &m));
      EXPECT(m && !m->x16 && m->H[0] == s[1]->features);
      fg_model_destroy(&m);
    }
    fg_scheme_destroy(&s[0]);
    fg_scheme_destroy(&s[1]);
  }
  printf("  bf16 features, laid out as bf16 against rounded as read: %d cases\n", cases);
  fg_dist_destroy(&dist);
  fg_test_small_dataset_free(&ds);
}

static void run_case(fg_test_model mdl, int directed, int agg_order, float p,
                     const char *reorder) {
  fg_dataset ds;
  fg_dist *dist = NULL;
  fg_scheme *s = NULL;
  fg_model *m = NULL;
  int64_t src[60], dst[60];
  int ne = 0, ntrain = 0;
  fg_scheme_config sc;
  const int64_t C = kWidths[L];
  memset(&ds, 0, sizeof ds);
  const fg_model_kind *kind = fg_model_kind_find(mdl.gin ? "gin" : mdl.sage ? "sage" : "gcn");
  memset(&sc, 0, sizeof sc);
  sc.reorder = reorder;
  sc.adj.norm = mdl.norm;
  sc.adj.no_self_loops = mdl.no_self_loops;
  for (int i = 0; i < N; i++) { /* a ring, chords, and a hub; node N - 1 only points out */
    if ((i + 1) % N != N - 1) {
      src[ne] = i;
      dst[ne++] = (i + 1) % N;
    }
    if (i % 3 == 1) {
      src[ne] = i;
      dst[ne++] = (i * 7 + 4) % N;
    }
    if (i % 2 == 0 && i != 5 && i != N - 1) {
      src[ne] = 5;
      dst[ne++] = i;
    }
  }
  EXPECT_OK(fg_test_small_dataset(&ds, N, src, dst, ne, !directed, kWidths[0], C, 21));
  for (int i = 0; i < N; i++) {
    ds.labels[i] = (i * 5) % (int)C;
    ds.split[i] = (i % 5 == 4) ? FG_SPLIT_VALID : FG_SPLIT_TRAIN;
    ntrain += ds.split[i] == FG_SPLIT_TRAIN;
  }
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &dist));
  EXPECT_OK(fg_scheme_serial_create(dist, &ds, &sc, &s));
  {
    fg_model_config mc = {.layers = L, .widths = kWidths, .agg_order = agg_order, .seed = 9,
                          .kind = kind,
                          .norm = fg_test_model_norm(mdl),
                          .gin_eps = mdl.gin_eps, .gin_eps_learn = mdl.eps_learn,
                          .residual = mdl.residual};
    EXPECT_OK(fg_model_create(&mc, s, &m));
  }
  if (!m) goto done;
  for (int l = 0; l < L; l++)
    for (int c = 0; c < kWidths[l + 1]; c++) {
      m->b[l][c] = 0.07f * (float)(c + 1) - 0.12f;
      if (m->vecs[l] > 1) { /* a norm's scale and shift away from 1 and 0 */
        m->b[l][kWidths[l + 1] + c] = 0.8f + 0.1f * (float)(c % 4);
        m->b[l][2 * kWidths[l + 1] + c] = 0.03f * (float)c - 0.05f;
      }
      if (m->vecs[l] > 3) { /* BatchNorm's running statistics as after some steps */
        m->b[l][3 * kWidths[l + 1] + c] = 0.2f - 0.05f * (float)c;
        m->b[l][4 * kWidths[l + 1] + c] = 0.7f + 0.1f * (float)(c % 3);
      }
      if (m->scal[l]) m->b[l][m->vecs[l] * kWidths[l + 1]] = 0.2f * (float)l - 0.1f; /* eps */
    }
  {
    uint8_t sel[N];
    float dlogits[N * 3];
    int64_t cnt, cor;
    double worst = 0.0, hid[N * MAXW], lg[N * MAXW];
    double *pd = malloc(sizeof(double) * (size_t)m->n_params);
    float *g1 = malloc(sizeof(float) * (size_t)m->n_params);
    double *p0 = malloc(sizeof(double) * (size_t)m->n_params);
    for (int i = 0; i < N; i++) sel[i] = s->split[i] == FG_SPLIT_TRAIN; /* local order */
    for (int64_t i = 0; i < m->n_params; i++) p0[i] = m->params[i];
    EXPECT_OK(fg_model_forward(m, s, 1, p, SEED, EPOCH));
    const double loss_f =
        fg_softmax_xent(m->H[L], N, C, s->labels, sel, 1.0f / ntrain, dlogits, &cnt, &cor) /
        ntrain;
    EXPECT_OK(fg_model_backward(m, s, dlogits, p, SEED, EPOCH));
    memcpy(g1, m->grads, sizeof(float) * (size_t)m->n_params);
    /* the training forward moved BatchNorm's running statistics as the reference does */
    fg_test_model_ref_running(&ds, mdl, L, kWidths, p0, m->n_params, p, SEED, EPOCH, pd);
    {
      double off = 0.0;
      for (int64_t i = 0; i < m->n_params; i++)
        off = fmax(off, fabs(m->params[i] - pd[i]) / fmax(1.0, fabs(pd[i])));
      EXPECT_MSG(off < 1e-6, "running statistics off by %.3g", off);
    }
    for (int64_t i = 0; i < m->n_params; i++) pd[i] = m->params[i];
    const double loss_d = fg_test_model_ref(&ds, mdl, L, kWidths, pd, p, SEED, EPOCH, NULL, NULL);
    EXPECT_MSG(fabs(loss_f - loss_d) < 1e-5 * fabs(loss_d) + 1e-6,
               "float loss %.9g vs double %.9g", loss_f, loss_d);
    {
      int64_t bad;
      worst = fg_test_model_gradcheck(&ds, mdl, L, kWidths, pd, m->grads, m->n_params, p, SEED,
                                      EPOCH, 2e-3, &bad);
      EXPECT_MSG(bad < 0, "param %lld: analytic and numeric gradients differ by %.3g (%s, %s, "
                 "directed %d, order %d, p %g)", (long long)bad, worst, kind->name,
                 fg_adj_norm_name(mdl.norm), directed, agg_order, (double)p);
    }
    /* evaluation forward: the last hidden layer and the logits, without dropout, BatchNorm with
     * the running statistics (which it leaves as they are) */
    EXPECT_OK(fg_model_forward(m, s, 0, 0.0f, SEED, EPOCH));
    {
      fg_test_model ev = mdl;
      ev.running = 1;
      fg_test_model_ref(&ds, ev, L, kWidths, pd, 0.0f, SEED, EPOCH, hid, lg);
      for (int64_t i = 0; i < m->n_params; i++) EXPECT(m->params[i] == (float)pd[i]);
    }
    {
      double dh = 0.0, dl = 0.0;
      const int64_t wh = kWidths[L - 1];
      for (int k = 0; k < N; k++) { /* local row k is node global_ids[k] */
        const int64_t v = s->global_ids[k];
        for (int c = 0; c < wh; c++)
          dh = fmax(dh, fabs(hid[v * wh + c] - m->H[L - 1][k * wh + c]) /
                            fmax(1.0, fabs(hid[v * wh + c])));
        for (int c = 0; c < C; c++)
          dl = fmax(dl, fabs(lg[v * C + c] - m->H[L][k * C + c]) / fmax(1.0, fabs(lg[v * C + c])));
      }
      EXPECT_MSG(dh < 1e-5 && dl < 1e-5, "evaluation forward: hidden off by %.3g, logits by %.3g",
                 dh, dl);
    }
    /* the same training step again, after the evaluation: the same gradients, bit for bit */
    EXPECT_OK(fg_model_forward(m, s, 1, p, SEED, EPOCH));
    fg_softmax_xent(m->H[L], N, C, s->labels, sel, 1.0f / ntrain, dlogits, &cnt, &cor);
    EXPECT_OK(fg_model_backward(m, s, dlogits, p, SEED, EPOCH));
    EXPECT(memcmp(g1, m->grads, sizeof(float) * (size_t)m->n_params) == 0);
    if (reorder) { /* the scheme really runs in another order, reading features via a map */
      int64_t moved = 0;
      for (int k = 0; k < N; k++) moved += s->global_ids[k] != k;
      EXPECT(moved > 0 && s->feature_rows == s->global_ids);
    }
    printf("%s %s%s directed %d agg_order %d p %.1f reorder %s: agg_first", kind->name,
           fg_adj_norm_name(mdl.norm),
           mdl.batch_norm ? " batchnorm" : mdl.layer_norm ? " layernorm" : "", directed, agg_order,
           (double)p, reorder ? reorder : "none");
    for (int l = 0; l < L; l++) printf(" %d", m->agg_first[l]);
    printf("; loss %.6f, max relative gradient error %.2e\n", loss_f, worst);
    free(pd);
    free(g1);
    free(p0);
  }
done:
  fg_model_destroy(&m);
  bf16_storage(s, kind, mdl, agg_order, p);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&dist);
  fg_test_small_dataset_free(&ds);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  /* GCN and SAGE with their own operators, and each with another normalization */
  /* and GIN (two layers of two stack layers) with a fixed and a learned eps */
  const fg_test_model models[] = {
      {.norm = FG_ADJ_SYM},
      {.norm = FG_ADJ_MEAN},
      {.sage = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1},
      {.sage = 1, .norm = FG_ADJ_SUM, .no_self_loops = 1},
      {.sage = 1, .norm = FG_ADJ_SYM, .no_self_loops = 1},
      {.norm = FG_ADJ_SYM, .layer_norm = 1},
      {.sage = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1, .layer_norm = 1},
      {.gin = 1, .norm = FG_ADJ_SUM, .no_self_loops = 1, .gin_eps = 0.5f},
      {.gin = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1, .eps_learn = 1, .layer_norm = 1},
      {.gin = 1, .norm = FG_ADJ_SUM, .no_self_loops = 1, .eps_learn = 1},
      /* residual connections: projections between every width (5 -> 4 -> 8 -> 6) */
      {.norm = FG_ADJ_SYM, .residual = 1},
      {.sage = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1, .layer_norm = 1, .residual = 1},
      /* BatchNorm on every hidden (stack) layer, stacked: GCN, SAGE, GIN (its MLP's inner layer
       * too) learning eps, and with residual connections */
      {.norm = FG_ADJ_SYM, .batch_norm = 1},
      {.sage = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1, .batch_norm = 1},
      {.gin = 1, .norm = FG_ADJ_SUM, .no_self_loops = 1, .eps_learn = 1, .batch_norm = 1},
      {.sage = 1, .norm = FG_ADJ_MEAN, .no_self_loops = 1, .batch_norm = 1, .residual = 1}};
  bf16_wide_input();
  bf16_features();
  for (size_t k = 0; k < sizeof models / sizeof models[0]; k++)
    for (int directed = 0; directed < 2; directed++)
      for (int order = FG_AGG_AUTO; order <= FG_AGG_LAST; order++) {
        run_case(models[k], directed, order, 0.3f, NULL);
        run_case(models[k], directed, order, 0.0f, NULL);
#ifdef FG_TEST_SANITIZED
        /* under the sanitizers a model's reordered cases take one aggregation order of three,
         * in turn (the row map is the same at every order; the other builds run them all) */
        if ((order - FG_AGG_AUTO) % 3 != (int)(k + (size_t)directed) % 3) continue;
#endif
        run_case(models[k], directed, order, 0.3f, "rcm");
        run_case(models[k], directed, order, 0.0f, "degree");
      }
  MPI_Finalize();
  return fg_test_finish("test_model_deep");
}
