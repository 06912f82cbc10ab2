/* layer_gcn.c -- the GCN layer: Z = Â D W (+ b, which the model's fused pass adds), aggregating
 * before or after the weight product, whichever is cheaper for the widths (fg_agg_first).
 *
 * Forward: (Â D) W or Â (D W). Backward: SpMM with Âᵀ and GEMMs; layer 0 never multiplies by Âᵀ
 * when it aggregates first and the features are not learned (MG-GCN §4.4). On a scheme that
 * splits columns the two partial sums of the layer -- H W over the input's columns, dQ Wᵀ over
 * the output's -- are completed by the scheme (reduce_product, reduce_input_grad).
 */
#include "model/fg_model.h"

static fg_status gcn_forward(fg_model *m, fg_scheme *s, int l, const float *d) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  float *out; /* (n_out, wo) */
  if (m->fuse) return fg_model_fused_forward(m, s, l, NULL); /* (fuse16.c) */
  if (m->agg_first[l]) {
    /* S = Â D (n_out, wi); out = S W */
    FG_CHECK(fg_model_aggregate(m, s, l, d, fg_model_s_buf(m, l)));
    fg_model_s_store(m, l);
    out = fg_model_out(m, l, m->work_a);
    fg_model_gemm_s(m, l, 0, sh->n_out, wo, wi, m->W[l], wo, out, wo);
    FG_CHECK(fg_scheme_reduce_product(s, l, out, sh->n_out * wo));
  } else {
    /* T = D W (n_in, wo; as bf16 under g16); out = Â T */
    float *t = fg_model_other_work(m, d); /* (work_a when d is NULL) */
    m->Sv[l] = d == m->work_a ? NULL : d; /* layer 0's D_0 in work_a: recomputed in backward */
    FG_CHECK(fg_model_product_aggregate(m, s, l, d, m->W[l], t, &out));
  }
cleanup:
  return st;
}

static fg_status gcn_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                              uint64_t seed, uint64_t epoch, float **dd) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const int learn0 = l == 0 && m->input != NULL;
  *dd = NULL;
  if (m->fuse) return fg_model_fused_backward(m, s, l, dz, p, NULL, NULL);
  fg_model_bias_grad(m, l, dz); /* (dZ as bf16, m->dz16: taken by the mask pass) */
  if (m->agg_first[l]) {
    /* Z = S W with S = Â D:  dW = Sᵀ dZ;  dS = dZ Wᵀ;  dD = Âᵀ dS */
    float *u, *v;
    fg_model_wgrad_s(m, l, dz, m->dW[l]);
    if (l == 0 && !learn0 && !m->dx0) return FG_OK; /* no dX wanted */
    u = fg_model_other_work(m, dz);
    v = fg_model_other_work(m, u);
    if (learn0) {
      fg_model_gemm(m, 0, 1, sh->n_out, wi, wo, dz, wo, m->W[l], wo, u, wi);
      FG_CHECK(fg_scheme_reduce_input_grad(s, l, u, sh->n_out * wi));
      FG_CHECK(s->ops->input_grad(s, u, v, m->grads + m->feat_off));
      return FG_OK;
    }
    FG_CHECK(fg_model_grad_aggregate_t(m, s, l, dz, m->W[l], u, v)); /* (dS as bf16: g16) */
    *dd = v;
  } else {
    /* Z = Â T with T = D W:  dT = Âᵀ dZ;  dW = Dᵀ dT;  dD = dT Wᵀ. Layer 0 puts dT in H[1]
     * (n x w_1, dead once dZ_0 exists), leaving work_a, the one scratch buffer wide enough,
     * for D_0 */
    float *t = l == 0 ? m->H[1] : fg_model_other_work(m, dz);
    const float *d = m->Sv[l];
    FG_CHECK(fg_model_aggregate_t_dz(m, s, l, dz, t));
    if (!d && !m->H16[l]) { /* layer 0 with dropout or a row map: D_0 again (counter-based
                               masks) */
      fg_model_redo_input(m, s, p, seed, epoch, m->work_a);
      d = m->work_a;
    }
    fg_model_gemm_in(m, l, d, 1, wi, wo, sh->n_in, t, wo, m->dW[l], wo, 0);
    if (l == 0 && !m->dx0) return FG_OK;
    *dd = fg_model_other_work(m, t);
    fg_model_gemm(m, 0, 1, sh->n_in, wi, wo, t, wo, m->W[l], wo, *dd, wi);
    FG_CHECK(fg_scheme_reduce_input_grad(s, l, *dd, sh->n_in * wi));
  }
cleanup:
  return st;
}

const fg_layer_kind fg_layer_gcn = {
    .name = "gcn",
    .mats = 1,
    .aggregates = 1,
    .dz16 = 1,
    .fuse = 1,
    .self_term = 0,
    .learn_features_ok = 1,
    .agg_last_ok = 1,
    .forward = gcn_forward,
    .backward = gcn_backward,
};
