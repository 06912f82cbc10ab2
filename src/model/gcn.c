/* gcn.c -- GCN forward and backward over a scheme. See fg_model.h for the math and the
 * buffers.
 *
 * Per layer, forward: (dropout of the input) -> SpMM and GEMM in the cheaper order -> one fused
 * pass of bias + ReLU + the next layer's dropout over the output (fg_bias_relu_dropout).
 * Backward: bias gradient -> SpMM (Âᵀ) and GEMMs -> one pass that applies the dropout and ReLU
 * masks together (fg_masked_scale, reading the stored D_l). Layer 0 never multiplies by Âᵀ when
 * it aggregates first (MG-GCN §4.4: the input features are not learned).
 */
#include <string.h>

#include "kernels/fg_kernels.h"
#include "model/fg_model.h"

/* Activation buffers come from fg_malloc_huge: the SpMM gathers their rows at random. */
static float *act_alloc(int64_t nfloats) {
  return fg_malloc_huge((size_t)(nfloats > 0 ? nfloats : 1) * sizeof(float));
}

#define FG_ALLOC_ACT(ptr, n)                                                           \
  do {                                                                                 \
    (ptr) = act_alloc(n);                                                              \
    if (!(ptr))                                                                        \
      FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld floats of activations",    \
              (long long)(n));                                                         \
  } while (0)

void fg_gcn_destroy(fg_gcn **mp) {
  fg_gcn *m;
  if (!mp || !*mp) return;
  m = *mp;
  fg_free_aligned(m->params);
  fg_free_aligned(m->grads);
  fg_free_aligned(m->adam_m);
  fg_free_aligned(m->adam_v);
  free(m->W);
  free(m->b);
  free(m->dW);
  free(m->db);
  if (m->H) {
    for (int l = 1; l <= m->layers; l++) free(m->H[l]);
    free(m->H);
  }
  if (m->S) {
    for (int l = 0; l < m->layers; l++) free(m->S[l]);
    free(m->S);
  }
  free(m->Sv);
  free(m->work_a);
  free(m->work_b);
  free(m->widths);
  free(m->agg_first);
  free(m);
  *mp = NULL;
}

/* Floats of each activation buffer for n rows; the layout fg_gcn_create allocates. */
static void gcn_sizes(const fg_gcn_config *cfg, int64_t n, int64_t *h_total, int64_t *s_total,
                      int64_t *work_a, int64_t *work_b) {
  int64_t wh = 0;
  *h_total = *s_total = 0;
  for (int l = 1; l <= cfg->layers; l++) wh = FG_MAX(wh, cfg->widths[l]);
  for (int l = 0; l < cfg->layers; l++) {
    const int64_t wi = cfg->widths[l], wo = cfg->widths[l + 1];
    *h_total += n * wo;
    if (fg_agg_first(cfg->agg_order, l, wi, wo)) *s_total += n * wi;
  }
  /* work_a also takes dropout(H_0) (n x w_0); everything else in either is at most n x wh */
  *work_a = n * FG_MAX(wh, cfg->widths[0]);
  *work_b = n * wh;
}

void fg_gcn_memory(const fg_gcn_config *cfg, int64_t n, int64_t *activation_bytes,
                   int64_t *param_bytes, double *buffers) {
  int64_t h, sz, wa, wb, np = 0, wref = 1;
  gcn_sizes(cfg, n, &h, &sz, &wa, &wb);
  for (int l = 0; l < cfg->layers; l++)
    np += cfg->widths[l] * cfg->widths[l + 1] + cfg->widths[l + 1];
  for (int l = 1; l <= cfg->layers; l++)
    if (l < cfg->layers || cfg->layers == 1) wref = FG_MAX(wref, cfg->widths[l]);
  if (activation_bytes) *activation_bytes = 4 * (h + sz + wa + wb);
  if (param_bytes) *param_bytes = 4 * 4 * np; /* parameters, gradients, two Adam moments */
  if (buffers) *buffers = n > 0 ? (double)(h + sz + wa + wb) / ((double)n * (double)wref) : 0.0;
}

#define FG_ALLOC_F(ptr, n)                                                             \
  do {                                                                                 \
    (ptr) = fg_malloc_aligned((size_t)((n) > 0 ? (n) : 1) * sizeof(float));            \
    if (!(ptr)) FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld floats", (long long)(n)); \
  } while (0)

fg_status fg_gcn_create(const fg_gcn_config *cfg, const fg_scheme *s, fg_gcn **out) {
  fg_status st = FG_OK;
  fg_gcn *m = NULL;
  const int L = cfg->layers;
  int64_t off = 0;
  FG_REQUIRE(L >= 1, FG_ERR_INVALID_ARG, "a GCN needs at least one layer, got %d", L);
  for (int l = 0; l <= L; l++)
    FG_REQUIRE(cfg->widths[l] >= 1, FG_ERR_INVALID_ARG, "layer width %d is %lld; must be >= 1",
               l, (long long)cfg->widths[l]);
  FG_CALLOC(m, 1);
  m->layers = L;
  m->n = s->n_local;
  FG_ALLOC(m->widths, L + 1);
  FG_ALLOC(m->agg_first, L);
  FG_CALLOC(m->W, L);
  FG_CALLOC(m->b, L);
  FG_CALLOC(m->dW, L);
  FG_CALLOC(m->db, L);
  FG_CALLOC(m->H, L + 1);
  FG_CALLOC(m->S, L);
  FG_CALLOC(m->Sv, L);
  for (int l = 0; l <= L; l++) m->widths[l] = cfg->widths[l];
  for (int l = 0; l < L; l++) m->n_params += m->widths[l] * m->widths[l + 1] + m->widths[l + 1];
  FG_ALLOC_F(m->params, m->n_params);
  FG_ALLOC_F(m->grads, m->n_params);
  FG_ALLOC_F(m->adam_m, m->n_params);
  FG_ALLOC_F(m->adam_v, m->n_params);
  memset(m->grads, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_m, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_v, 0, (size_t)m->n_params * sizeof(float));
  for (int l = 0; l < L; l++) {
    const int64_t wi = m->widths[l], wo = m->widths[l + 1];
    m->W[l] = m->params + off;
    m->dW[l] = m->grads + off;
    off += wi * wo;
    m->b[l] = m->params + off;
    m->db[l] = m->grads + off;
    off += wo;
    fg_glorot_init(m->W[l], wi, wo, cfg->seed, (uint64_t)l);
    memset(m->b[l], 0, (size_t)wo * sizeof(float));
    m->agg_first[l] = fg_agg_first(cfg->agg_order, l, wi, wo);
    FG_ALLOC_ACT(m->H[l + 1], m->n * wo);
    if (m->agg_first[l]) FG_ALLOC_ACT(m->S[l], m->n * wi);
  }
  m->H[0] = s->features;
  {
    int64_t h, sz, wa, wb;
    gcn_sizes(cfg, m->n, &h, &sz, &wa, &wb);
    FG_ALLOC_ACT(m->work_a, wa);
    FG_ALLOC_ACT(m->work_b, wb);
  }
  *out = m;
  m = NULL;
cleanup:
  fg_gcn_destroy(&m);
  return st;
}

static void timed_gemm(fg_gcn *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc) {
  double t0 = fg_now();
  fg_gemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  m->seconds[FG_TIME_GEMM] += fg_now() - t0;
}

/* The scratch buffer that is not x (work_a when x is neither). */
static float *other_work(const fg_gcn *m, const float *x) {
  return x == m->work_a ? m->work_b : m->work_a;
}

fg_status fg_gcn_forward(fg_gcn *m, fg_scheme *s, int training, float p, uint64_t seed,
                         uint64_t epoch) {
  fg_status st = FG_OK;
  const int64_t n = m->n;
  const int L = m->layers;
  const int drop = training && p > 0.0f;
  const float pp = drop ? p : 0.0f;
  double t0 = fg_now();
  for (int l = 0; l < L; l++) {
    const int64_t wi = m->widths[l], wo = m->widths[l + 1];
    const float *d = m->H[l]; /* D_l (n, wi): for l > 0 already dropped out in place */
    float *out = m->H[l + 1]; /* (n, wo) */
    if (l == 0 && (drop || s->feature_rows)) {
      /* D_0 = dropout(X), its rows gathered in the scheme's order when they are stored in
       * another (--reorder borrows the dataset's features instead of permuting a copy) */
      fg_dropout_rows(m->work_a, m->H[0], s->feature_rows, n, wi, pp, seed, epoch, 0,
                      s->global_ids);
      d = m->work_a;
    }
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (m->agg_first[l]) {
      /* S = Â D (n, wi); out = S W */
      FG_CHECK(s->ops->aggregate(s, d, m->S[l], wi));
      m->Sv[l] = m->S[l];
      timed_gemm(m, 0, 0, n, wo, wi, m->S[l], wi, m->W[l], wo, out, wo);
    } else {
      /* T = D W (n, wo); out = Â T */
      float *t = other_work(m, d);
      m->Sv[l] = d == m->work_a ? NULL : d; /* layer 0's D_0 in work_a: recomputed in backward */
      timed_gemm(m, 0, 0, n, wo, wi, d, wi, m->W[l], wo, t, wo);
      FG_CHECK(s->ops->aggregate(s, t, out, wo));
    }
    /* out = dropout_{l+1}(relu(out + b)) in one sweep; the last layer only adds the bias */
    t0 = fg_now();
    fg_bias_relu_dropout(out, out, m->b[l], n, wo, l + 1 < L, l + 1 < L ? pp : 0.0f, seed, epoch,
                         (uint64_t)(l + 1), s->global_ids);
  }
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
cleanup:
  return st;
}

fg_status fg_gcn_backward(fg_gcn *m, fg_scheme *s, float *dlogits, float p, uint64_t seed,
                          uint64_t epoch) {
  fg_status st = FG_OK;
  const int64_t n = m->n;
  const float scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
  float *cur = dlogits; /* dZ_l (n, wo) */
  for (int l = m->layers - 1; l >= 0; l--) {
    const int64_t wi = m->widths[l], wo = m->widths[l + 1];
    float *v; /* receives dD_l (n, wi) */
    double t0 = fg_now();
    fg_bias_backward(m->db[l], cur, n, wo);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (m->agg_first[l]) {
      /* Z = S W with S = Â D:  dW = Sᵀ dZ;  dS = dZ Wᵀ;  dD = Âᵀ dS */
      timed_gemm(m, 1, 0, wi, wo, n, m->Sv[l], wi, cur, wo, m->dW[l], wo);
      if (l == 0) break; /* the input features are not learned: no dX */
      float *u = other_work(m, cur);
      timed_gemm(m, 0, 1, n, wi, wo, cur, wo, m->W[l], wo, u, wi);
      v = other_work(m, u);
      FG_CHECK(s->ops->aggregate_t(s, u, v, wi));
    } else {
      /* Z = Â T with T = D W:  dT = Âᵀ dZ;  dW = Dᵀ dT;  dD = dT Wᵀ */
      /* layer 0 puts dT in H[1] (n x w_1, dead once dZ_0 exists), leaving work_a, the one
       * scratch buffer wide enough, for D_0 */
      float *t = l == 0 ? m->H[1] : other_work(m, cur);
      const float *d = m->Sv[l];
      FG_CHECK(s->ops->aggregate_t(s, cur, t, wo));
      if (!d) { /* layer 0 with dropout or a row map: D_0 again (counter-based masks) */
        t0 = fg_now();
        fg_dropout_rows(m->work_a, m->H[0], s->feature_rows, n, wi, p, seed, epoch, 0,
                        s->global_ids);
        m->seconds[FG_TIME_OTHER] += fg_now() - t0;
        d = m->work_a;
      }
      timed_gemm(m, 1, 0, wi, wo, n, d, wi, t, wo, m->dW[l], wo);
      if (l == 0) break;
      v = other_work(m, t);
      timed_gemm(m, 0, 1, n, wi, wo, t, wo, m->W[l], wo, v, wi);
    }
    /* dZ_{l-1} = dD_l where D_l > 0 (kept by dropout and positive after ReLU), times 1/(1-p) */
    t0 = fg_now();
    fg_masked_scale(v, m->H[l], n * wi, scale);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    cur = v;
  }
cleanup:
  return st;
}
