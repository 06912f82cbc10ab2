/* gcn.c -- GCN forward and backward over a scheme. See fg_model.h for the math. */
#include <string.h>

#include "kernels/fg_kernels.h"
#include "model/fg_model.h"

static void free_list(float **p, int n) {
  if (!p) return;
  for (int i = 0; i < n; i++) fg_free_aligned(p[i]);
  free(p);
}

void fg_gcn_destroy(fg_gcn **mp) {
  fg_gcn *m;
  if (!mp || !*mp) return;
  m = *mp;
  free(m->widths);
  free(m->agg_first);
  fg_free_aligned(m->params);
  fg_free_aligned(m->grads);
  fg_free_aligned(m->adam_m);
  fg_free_aligned(m->adam_v);
  free(m->W);
  free(m->b);
  free(m->dW);
  free(m->db);
  if (m->H) {
    for (int l = 1; l <= m->layers; l++) fg_free_aligned(m->H[l]);
    free(m->H);
  }
  free_list(m->S, m->layers);
  free(m->Sv);
  fg_free_aligned(m->work_a);
  fg_free_aligned(m->work_b);
  free(m);
  *mp = NULL;
}

static float *alloc_floats(int64_t n) {
  return fg_malloc_aligned((size_t)(n > 0 ? n : 1) * sizeof(float));
}

#define FG_ALLOC_F(ptr, n)                                                             \
  do {                                                                                 \
    (ptr) = alloc_floats(n);                                                           \
    if (!(ptr)) FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld floats", (long long)(n)); \
  } while (0)

fg_status fg_gcn_create(const fg_gcn_config *cfg, const fg_scheme *s, fg_gcn **out) {
  fg_status st = FG_OK;
  fg_gcn *m = NULL;
  const int L = cfg->layers;
  int64_t off = 0, maxw = 0;
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
  for (int l = 0; l <= L; l++) {
    m->widths[l] = cfg->widths[l];
    maxw = FG_MAX(maxw, cfg->widths[l]);
  }
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
    /* Aggregating first costs an SpMM at width wi forward and (except layer 0, whose input
     * gradient is not needed) one backward; aggregating last costs SpMMs at width wo both
     * ways. */
    if (cfg->agg_order == FG_AGG_FIRST)
      m->agg_first[l] = 1;
    else if (cfg->agg_order == FG_AGG_LAST)
      m->agg_first[l] = 0;
    else
      m->agg_first[l] = (l == 0) ? (wi < 2 * wo) : (wi < wo);
    FG_ALLOC_F(m->H[l + 1], m->n * wo);
    FG_ALLOC_F(m->S[l], m->n * wi);
  }
  m->H[0] = s->features;
  FG_ALLOC_F(m->work_a, m->n * maxw);
  FG_ALLOC_F(m->work_b, m->n * maxw);
  *out = m;
  m = NULL;
cleanup:
  fg_gcn_destroy(&m);
  return st;
}

static void timed_gemm(fg_gcn *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                       float *C, int64_t ldc) {
  double t0 = fg_now();
  fg_gemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
  m->seconds[FG_TIME_GEMM] += fg_now() - t0;
}

fg_status fg_gcn_forward(fg_gcn *m, fg_scheme *s, int training, float p, uint64_t seed,
                         uint64_t epoch) {
  fg_status st = FG_OK;
  const int64_t n = m->n;
  const int drop = training && p > 0.0f;
  for (int l = 0; l < m->layers; l++) {
    const int64_t wi = m->widths[l], wo = m->widths[l + 1];
    const float *in = m->H[l];                 /* (n, wi) */
    float *out = m->H[l + 1];                  /* (n, wo) */
    double t0 = fg_now();
    if (m->agg_first[l]) {
      /* S = Â D (n, wi); out = S W */
      const float *d = in;
      if (drop) {
        fg_dropout_forward(m->work_a, in, n, wi, p, seed, epoch, (uint64_t)l, s->global_ids);
        d = m->work_a;
      }
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      m->Sv[l] = m->S[l];
      FG_CHECK(s->ops->aggregate(s, d, m->S[l], wi));
      timed_gemm(m, 0, 0, n, wo, wi, m->S[l], wi, m->W[l], wo, 0.0f, out, wo);
    } else {
      /* S = D (n, wi); T = S W (n, wo); out = Â T */
      m->Sv[l] = m->S[l];
      if (drop)
        fg_dropout_forward(m->S[l], in, n, wi, p, seed, epoch, (uint64_t)l, s->global_ids);
      else if (l == 0)
        m->Sv[l] = in; /* backward never writes the layer-0 view: no copy */
      else
        memcpy(m->S[l], in, (size_t)(n * wi) * sizeof(float));
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      timed_gemm(m, 0, 0, n, wo, wi, m->Sv[l], wi, m->W[l], wo, 0.0f, m->work_a, wo);
      FG_CHECK(s->ops->aggregate(s, m->work_a, out, wo));
    }
    t0 = fg_now();
    fg_bias_add(out, m->b[l], n, wo);
    if (l + 1 < m->layers) fg_relu_forward(out, out, n * wo);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  }
cleanup:
  return st;
}

fg_status fg_gcn_backward(fg_gcn *m, fg_scheme *s, float *dlogits, float p, uint64_t seed,
                          uint64_t epoch) {
  fg_status st = FG_OK;
  const int64_t n = m->n;
  float *cur = dlogits; /* dZ_l (n, wo) */
  for (int l = m->layers - 1; l >= 0; l--) {
    const int64_t wi = m->widths[l], wo = m->widths[l + 1];
    float *spare = (cur == m->work_a) ? m->work_b : m->work_a;
    double t0 = fg_now();
    fg_bias_backward(m->db[l], cur, n, wo);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (m->agg_first[l]) {
      /* Z = S W with S = Â D:  dW = Sᵀ dZ;  dS = dZ Wᵀ;  dD = Âᵀ dS */
      timed_gemm(m, 1, 0, wi, wo, n, m->Sv[l], wi, cur, wo, 0.0f, m->dW[l], wo);
      if (l == 0) break; /* the input features are not learned: no dX */
      timed_gemm(m, 0, 1, n, wi, wo, cur, wo, m->W[l], wo, 0.0f, m->S[l], wi);
      FG_CHECK(s->ops->aggregate_t(s, m->S[l], spare, wi));
      cur = spare;
    } else {
      /* Z = Â T with T = D W:  dT = Âᵀ dZ;  dW = Dᵀ dT;  dD = dT Wᵀ */
      FG_CHECK(s->ops->aggregate_t(s, cur, spare, wo));
      timed_gemm(m, 1, 0, wi, wo, n, m->Sv[l], wi, spare, wo, 0.0f, m->dW[l], wo);
      if (l == 0) break;
      timed_gemm(m, 0, 1, n, wi, wo, spare, wo, m->W[l], wo, 0.0f, m->S[l], wi);
      cur = m->S[l];
    }
    /* cur = dD_l (n, wi) -> dH_l -> dZ_{l-1} */
    t0 = fg_now();
    if (p > 0.0f)
      fg_dropout_backward(cur, cur, n, wi, p, seed, epoch, (uint64_t)l, s->global_ids);
    fg_relu_backward(cur, cur, m->H[l], n * wi);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  }
cleanup:
  return st;
}
