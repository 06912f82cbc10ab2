/* test_membudget.c -- the memory budget: the estimate adds up and counts what the model really
 * allocates (L + 2 activation buffers of n x hidden for a model whose hidden layers aggregate
 * last, so at most MG-GCN's L + 3 with the loss gradient); a tiny --mem-limit is refused before
 * anything is allocated, with a message naming the bytes needed, the limit and the options that
 * shrink the run; no limit and the default limit (available memory) let Cora train. */
#include <stdlib.h>
#include <string.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "model/fg_model.h"
#include "schemes/fg_scheme.h"
#include "train/fg_membudget.h"
#include "testutil.h"

static void test_estimate(const fg_dataset *ds) {
  fg_train_config c = fg_train_config_default();
  fg_memory_estimate e, e2;
  const int64_t n = fg_dataset_num_nodes(ds), F = fg_dataset_num_features(ds);
  const int64_t C = fg_dataset_num_classes(ds);
  c.layers = 3;
  c.hidden = 64;
  EXPECT_OK(fg_train_memory(ds, &c, &e));
  EXPECT(e.total == FG_MEM_RUNTIME_BYTES + e.dataset + e.graph + e.inputs +
                        FG_MAX(e.setup, e.activations + e.params + e.loss));
  EXPECT(e.hidden_width == 64);
  /* Cora: F = 1433 > 64, so layer 0 aggregates last and work_a holds dropout(X) (n x F);
   * H1, H2 (n x 64), H3 (n x C), work_b (n x 64) */
  EXPECT(e.activations == 4 * (n * F + 3 * n * 64 + n * C));
  EXPECT(e.params == 16 * (F * 64 + 64 + 64 * 64 + 64 + 64 * C + C));
  EXPECT(e.graph == 8 * (n + 1) + 8 * fg_dataset_num_edges(ds));
  /* more layers or width cost more; a reorder costs setup memory */
  c.hidden = 128;
  EXPECT_OK(fg_train_memory(ds, &c, &e2));
  EXPECT(e2.activations > e.activations && e2.total > e.total);
  /* bf16 on one process (serial: fused epilogues, fuse16.c): H3 (n x C) in fp32; D_0, H1, H2
   * as bf16 (2 n (F + 256) bytes); one scratch buffer of the bf16 products T, dT (n x 128 bf16:
   * 64 n floats; the last layer's fp32 dT of n x C is narrower); the scheme's bf16 copy of the
   * last layer's Âᵀ dlogits (2 n C), weights of F x 128 transposed, and the staging: the
   * widest product's row blocks and the aggregation's block the scheme keeps (each layer
   * aggregates last: at its output's width). On a graph this small the fixed staging (about
   * 10 MB) is more than bf16 saves. */
  c.precision = "bf16";
  {
    fg_memory_estimate e3;
    const int64_t w[4] = {F, 128, 128, C};
    int64_t blocks = 0, rows_blk = 0;
    for (int l = 0; l < 3; l++) {
      blocks = FG_MAX(blocks, fg_bf16_gemm_scratch_bytes(n, w[l], w[l + 1]));
      rows_blk = FG_MAX(rows_blk, 4 * fg_scheme_rows_block(n, w[l + 1]) * w[l + 1]);
    }
    EXPECT_OK(fg_train_memory(ds, &c, &e3));
    EXPECT_MSG(e3.activations == 4 * n * C + 2 * n * (F + 256) + 4 * ((n * 128 + 1) / 2) +
                                     2 * n * C + 4 * F * 128 + blocks + rows_blk,
               "bf16 activations %lld", (long long)e3.activations);
    printf("  cora 3 layers hidden 128: activations fp32 %lld, bf16 %lld bytes\n",
           (long long)e2.activations, (long long)e3.activations);
  }
  c.precision = NULL;
  c.reorder = "rcm";
  EXPECT_OK(fg_train_memory(ds, &c, &e2));
  EXPECT(e2.setup > e.setup);
  c.reorder = "bogus";
  EXPECT(fg_train_memory(ds, &c, &e2) == FG_ERR_INVALID_ARG);
  printf("  cora 3 layers hidden 64: total %lld bytes, activations %lld (%.2f buffers of n x 64)\n",
         (long long)e.total, (long long)e.activations, e.activation_buffers);
}

/* The model allocates what fg_model_memory says; the benchmark's model has L + 2 buffers. */
static void test_model_buffers(const fg_dataset *ds) {
  fg_dist *d = NULL;
  fg_scheme *s = NULL;
  fg_scheme_config sc;
  memset(&sc, 0, sizeof sc);
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &d));
  EXPECT_OK(fg_scheme_serial_create(d, ds, &sc, &s));
  if (!s) return;
  {
    /* widths as the benchmark: F -> 128 -> 128 -> C with F = 128 stands in as 128 here */
    const int64_t n = s->n_local;
    int64_t w[4] = {128, 128, 128, 32}, act = 0, par = 0;
    double bufs = 0.0;
    fg_model_config mc = {.layers = 3, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 1};
    fg_model_memory(&mc, n, &act, &par, &bufs);
    /* S0 (layer 0 aggregates first), H1, H2, work_a, work_b of n x 128 and H3 of n x 32 */
    EXPECT(act == 4 * n * (5 * 128 + 32));
    EXPECT(fabs(bufs - 5.25) < 1e-9);
    printf("  GCN 128 -> 128 -> 128 -> 32: %.2f activation buffers of n x 128 (L + 3 = 6)\n",
           bufs);
    EXPECT(bufs <= 3 + 3);
  }
  {
    /* what fg_model_create allocates for Cora's widths equals fg_model_memory's account */
    int64_t w[4] = {s->num_features, 32, 48, s->num_classes}, act = 0, par = 0, got = 0;
    fg_model *m = NULL;
    for (int k = 0; k < 6; k++) { /* every aggregation order, GCN and SAGE */
      const int order = k % 3;
      fg_model_config mc = {.layers = 3, .widths = w, .agg_order = order, .seed = 1,
                            .kind = fg_model_kind_find(k < 3 ? "gcn" : "sage")};
      fg_model_memory(&mc, s->n_local, &act, &par, NULL);
      EXPECT_OK(fg_model_create(&mc, s, &m));
      if (!m) continue;
      got = 0;
      for (int l = 0; l < 3; l++) {
        got += s->n_local * w[l + 1]; /* H[l+1] */
        if (m->S[l]) got += s->n_local * w[l];
        EXPECT((m->S[l] != NULL) == (m->agg_first[l] != 0));
      }
      got += s->n_local * (s->num_features > 48 ? s->num_features : 48) + s->n_local * 48;
      EXPECT(4 * got == act); /* SAGE's buffers are the GCN's on a 1D scheme */
      EXPECT(par == 16 * m->n_params);
      EXPECT(m->n_params == (k < 3 ? 1 : 2) * (w[0] * w[1] + w[1] * w[2] + w[2] * w[3]) +
                                w[1] + w[2] + w[3]);
      fg_model_destroy(&m);
    }
    /* bf16: the transposed weights fg_model_create allocates, the bf16 copy of an SpMM's input
     * (at most n x the widest) the scheme grows, and the row blocks the widest product takes;
     * less half of each S[l] stored as bf16 (S16: a layer aggregating first into no wider than
     * its output, not the last -- here layer 1, 32 -> 48, under every model and order that
     * aggregates it first) and of each hidden H[l] stored as bf16 (H16: H[1] where layer 0
     * aggregates first, which only --agg-order first does at 1433 -> 32; H[2] where layer 1
     * is a GCN or aggregates last: a SAGE layer aggregating first with S16 keeps its
     * backward's scratch in H[2]) */
    for (int k = 0; k < 6; k++) {
      fg_model_config mc = {.layers = 3, .widths = w, .agg_order = k % 3, .seed = 1,
                            .kind = fg_model_kind_find(k < 3 ? "gcn" : "sage")};
      int64_t act32 = 0, act16 = 0;
      fg_model_memory(&mc, s->n_local, &act32, &par, NULL);
      mc.bf16 = 1;
      fg_model_memory(&mc, s->n_local, &act16, &par, NULL);
      EXPECT_OK(fg_model_create(&mc, s, &m));
      if (m) {
        int64_t blocks = 0, halved = 0;
        for (int l = 0; l < 3; l++) {
          blocks = FG_MAX(blocks, fg_bf16_gemm_scratch_bytes(s->n_local, w[l], w[l + 1]));
          const int want16 = m->agg_first[l] && l < 2 && w[l] <= w[l + 1];
          EXPECT_MSG((m->S16[l] != NULL) == want16 && (m->S[l] != NULL) == (m->agg_first[l] && !want16),
                     "bf16 model %d, layer %d: S16 %p, S %p", k, l, (void *)m->S16[l],
                     (void *)m->S[l]);
          if (m->S16[l]) halved += 2 * s->n_local * w[l];
        }
        EXPECT(k % 3 == FG_AGG_LAST || halved == 2 * s->n_local * 32);
        {
          const int want1 = k % 3 == FG_AGG_FIRST, want2 = k < 3 || k % 3 == FG_AGG_LAST;
          /* D_0 as bf16 where layer 0 aggregates last, and where it aggregates first too: the
           * 1433 features are wider than anything else the scratch holds (fg_model_h16) */
          const int want0 = 1;
          EXPECT_MSG((m->H16[0] != NULL) == want0 && !m->H16[3] &&
                         (m->H16[1] != NULL) == want1 && (m->H16[2] != NULL) == want2 &&
                         (m->H[1] == NULL) == want1 && (m->H[2] == NULL) == want2,
                     "bf16 model %d: H16 %d %d %d, want %d %d %d", k, m->H16[0] != NULL,
                     m->H16[1] != NULL, m->H16[2] != NULL, want0, want1, want2);
          halved += 2 * s->n_local * (want1 * w[1] + want2 * w[2]);
          /* D_0: 2 n F bytes of bf16, and work_a shrinks from n x F to the widest other
           * intermediate, n x 48 floats */
          if (want0) halved += 4 * (s->n_local * w[0] - s->n_local * 48) - 2 * s->n_local * w[0];
        }
        /* the widest SpMM input rounded into the scheme's copy: layer 2's 48 where it
         * aggregates first, else layer 1's 32 (auto: it aggregates first) or 48 (last: its
         * output); layer 0 aggregating first reads D_0 as bf16 already (aggregate16) */
        const int64_t aggw = k % 3 == FG_AGG_AUTO ? 32 : 48;
        const int64_t extra = 4 * m->wt_cap + 2 * s->n_local * aggw + blocks - halved;
        EXPECT_MSG(act16 - act32 == extra, "bf16: %lld more activation bytes, allocated %lld",
                   (long long)(act16 - act32), (long long)extra);
        fg_model_destroy(&m);
      }
    }
    /* a norm: X[l] (n x w) of each hidden layer, its statistics (LayerNorm: rstd and three
     * shared doubles a row; BatchNorm: the same a column), two (four) more vectors a layer */
    for (int norm = FG_NORM_LAYER; norm <= FG_NORM_BATCH; norm++) {
      fg_model_config mc = {.layers = 3, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 1,
                            .norm = norm};
      const int64_t n = s->n_local, stats = norm == FG_NORM_LAYER ? 8 * n * (2 + 3)
                                                                  : 8 * (32 + 48 + 3 * 48);
      fg_model_memory(&mc, n, &act, &par, NULL);
      EXPECT_OK(fg_model_create(&mc, s, &m));
      if (!m) continue;
      got = n * (w[1] + w[2] + w[3]) + n * (w[1] + w[2]) +
            n * (s->num_features > 48 ? s->num_features : 48) + n * 48;
      for (int l = 0; l < 3; l++) got += m->S[l] ? n * w[l] : 0;
      EXPECT_MSG(4 * got + stats == act, "%s: %lld activation bytes, fg_model_memory %lld",
                 fg_norm_name(norm), (long long)(4 * got + stats), (long long)act);
      EXPECT(par == 16 * m->n_params);
      EXPECT(m->n_params == w[0] * w[1] + w[1] * w[2] + w[2] * w[3] + w[3] +
                                (norm == FG_NORM_LAYER ? 3 : 5) * (w[1] + w[2]));
      fg_model_destroy(&m);
    }
  }
  {
    /* GIN learning epsilon: two layers of two stack layers F -> 32 -> 32 -> C -> C, each
     * aggregating first (S of n x F and n x 32); scratch as wide as the features, since layer
     * 0 forms dY for epsilon's gradient */
    const int64_t n = s->n_local, F = s->num_features, C = s->num_classes;
    int64_t w[5] = {F, 32, 32, C, C}, act = 0, par = 0;
    fg_model *m = NULL;
    fg_model_config mc = {.layers = 4, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 1,
                          .kind = fg_model_kind_find("gin"), .gin_eps_learn = 1};
    fg_model_memory(&mc, n, &act, &par, NULL);
    EXPECT_OK(fg_model_create(&mc, s, &m));
    if (m) {
      EXPECT(m->S[0] && !m->S[1] && m->S[2] && !m->S[3] && m->scal[0] == 1 && m->scal[2] == 1);
      EXPECT(m->n_params == F * 32 + 32 + 1 + 32 * 32 + 32 + 32 * C + C + 1 + C * C + C);
      EXPECT(par == 16 * m->n_params);
      EXPECT(act == 4 * n * ((32 + 32 + C + C) + (F + 32) + 2 * F));
      fg_model_destroy(&m);
    }
  }
  {
    /* --residual on F -> 32 -> 32 -> C: H_1 kept before dropout, both blocks' ReLU outputs
     * kept (three n x 32 buffers on one process), and layer 0's projection (F x 32) */
    const int64_t n = s->n_local, F = s->num_features, C = s->num_classes;
    int64_t w[4] = {F, 32, 32, C}, act0 = 0, act = 0, par = 0;
    fg_model *m = NULL;
    fg_model_config mc = {.layers = 3, .widths = w, .agg_order = FG_AGG_AUTO, .seed = 1};
    fg_model_memory(&mc, n, &act0, &par, NULL);
    mc.residual = 1;
    fg_model_memory(&mc, n, &act, &par, NULL);
    EXPECT(act - act0 == 4 * n * 3 * 32);
    EXPECT_OK(fg_model_create(&mc, s, &m));
    if (m) {
      EXPECT(m->mats[0] == 2 && m->mats[1] == 1 && m->mats[2] == 1);
      EXPECT(m->Hres[1] && !m->Hres[0] && !m->Hres[2] && m->Ares[0] && m->Ares[1] && !m->Ares[2]);
      EXPECT(m->n_params == 2 * F * 32 + 32 + 32 * 32 + 32 + 32 * C + C);
      EXPECT(par == 16 * m->n_params);
      fg_model_destroy(&m);
    }
  }
  fg_scheme_destroy(&s);
  fg_dist_destroy(&d);
}

/* A reordered serial run holds no second copy of the features: the scheme borrows the
 * dataset's matrix and reads it through its ids; the estimate counts the features once, as
 * for --reorder none. Normalized features are the scheme's own copy, rows in its order. */
static void test_reorder_borrows(const fg_dataset *ds) {
  static const char *const orders[] = {"none", "degree", "rcm"};
  fg_dist *d = NULL;
  fg_train_config c = fg_train_config_default();
  fg_memory_estimate e0, e;
  const int64_t n = fg_dataset_num_nodes(ds), F = fg_dataset_num_features(ds);
  EXPECT_OK(fg_dist_create(MPI_COMM_SELF, &d));
  EXPECT_OK(fg_train_memory(ds, &c, &e0));
  for (int o = 0; o < 3; o++) {
    fg_scheme *s = NULL;
    fg_scheme_config sc;
    memset(&sc, 0, sizeof sc);
    sc.reorder = orders[o];
    EXPECT_OK(fg_scheme_serial_create(d, ds, &sc, &s));
    if (!s) continue;
    EXPECT(s->features_borrowed && s->features == ds->features);
    if (o == 0) {
      EXPECT(s->feature_rows == NULL);
    } else {
      int64_t moved = 0;
      EXPECT(s->feature_rows == s->global_ids);
      for (int64_t i = 0; i < n; i++) moved += s->global_ids[i] != i;
      EXPECT(moved > n / 2); /* the order really moved rows */
    }
    fg_scheme_destroy(&s);
    c.reorder = orders[o];
    EXPECT_OK(fg_train_memory(ds, &c, &e));
    EXPECT(e.inputs == e0.inputs && e.graph == e0.graph);
    /* normalized: an owned copy whose row i is dataset row global_ids[i], normalized */
    sc.normalize_features = 1;
    EXPECT_OK(fg_scheme_serial_create(d, ds, &sc, &s));
    if (!s) continue;
    EXPECT(!s->features_borrowed && s->feature_rows == NULL && s->features != ds->features);
    {
      const int64_t i = n / 3, g = s->global_ids[i];
      double want = 0.0, err = 0.0;
      for (int64_t j = 0; j < F; j++) want += ds->features[g * F + j];
      for (int64_t j = 0; j < F && want != 0.0; j++)
        err = fmax(err, fabs(s->features[i * F + j] - ds->features[g * F + j] / want));
      EXPECT(want != 0.0 && err < 1e-7);
    }
    fg_scheme_destroy(&s);
    c.normalize_features = 1;
    EXPECT_OK(fg_train_memory(ds, &c, &e));
    EXPECT(e.inputs == e0.inputs + 4 * n * F);
    /* bf16: the owned copy stored as bf16, 2 bytes a feature; not with residual connections,
     * which add the features as they are */
    c.precision = "bf16";
    EXPECT_OK(fg_train_memory(ds, &c, &e));
    EXPECT(e.inputs == e0.inputs + 2 * n * F);
    c.residual = 1;
    EXPECT_OK(fg_train_memory(ds, &c, &e));
    EXPECT(e.inputs == e0.inputs + 4 * n * F);
    c.residual = 0;
    c.normalize_features = 0;
    EXPECT_OK(fg_train_memory(ds, &c, &e)); /* borrowed: nothing of the scheme's either way */
    EXPECT(e.inputs == e0.inputs);
    c.precision = NULL;
  }
  fg_dist_destroy(&d);
}

static void test_limit(const fg_dataset *ds) {
  fg_train_config c = fg_train_config_default();
  fg_train_result r;
  fg_memory_estimate e;
  char needle[64];
  c.verbose = 0;
  c.epochs = 2;
  c.mem_limit = 1e6; /* 1 MB */
  EXPECT_OK(fg_train_memory(ds, &c, &e));
  EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r) == FG_ERR_MEMLIMIT);
  snprintf(needle, sizeof needle, "needs %lld bytes", (long long)e.total);
  EXPECT(fg_test_error_contains(needle));
  EXPECT(fg_test_error_contains("--mem-limit is 1000000"));
  EXPECT(fg_test_error_contains("--hidden"));
  EXPECT(fg_test_error_contains("--layers"));
  EXPECT(r.epochs_run == 0);
  /* just enough passes, one byte less is refused */
  c.mem_limit = (double)e.total;
  EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
  c.mem_limit = (double)e.total - 1;
  EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r) == FG_ERR_MEMLIMIT);
  /* no check, and the default: this machine's available memory */
  c.mem_limit = -1;
  EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
  c.mem_limit = 0;
  if (fg_available_memory() > e.total)
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
  EXPECT(fg_available_memory() != 0);
  /* a model far too wide for any machine is refused by the default limit with the same advice */
  c.hidden = 1 << 24;
  if (fg_available_memory() > 0) {
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r) == FG_ERR_MEMLIMIT);
    EXPECT(fg_test_error_contains("is available"));
  }
}

int main(int argc, char **argv) {
  fg_dataset *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  MPI_Init(&argc, &argv);
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  if (ds) {
    test_estimate(ds);
    test_model_buffers(ds);
    test_reorder_borrows(ds);
    test_limit(ds);
  }
  fg_dataset_destroy(&ds);
  MPI_Finalize();
  return fg_test_finish("test_membudget");
}
