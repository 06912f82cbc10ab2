/* layer_sage.c -- GraphSAGE with the mean aggregator (Hamilton et al. 2017; SuperGCN §4):
 *   Z = D W_self + (Ã D) W_neigh + b
 * with Ã the run's operator, by default D^-1 A without self loops (the neighbours' mean; a node
 * without neighbours gets 0). Matrix 0 of the layer's weights is W_neigh, matrix 1 W_self. The
 * self term reads D's rows in the output's layout: the scheme's move_rows (on a 1D scheme the
 * same rows, no copy).
 *
 * Aggregating first:  S = Ã D;  M = move_rows(D);  Z = S W_n + M W_s
 *   backward:  dW_n = Sᵀ dZ;  dW_s = Mᵀ dZ;  dD = Ãᵀ (dZ W_nᵀ) + move_rows_t(dZ W_sᵀ)
 * Aggregating last (1D schemes only):  T = D W_n;  Z = Ã T + D W_s
 *   backward:  dT = Ãᵀ dZ;  dW_n = Dᵀ dT;  dW_s = Dᵀ dZ;  dD = dT W_nᵀ + dZ W_sᵀ
 * Two GEMMs where the GCN has one, and the same SpMMs.
 */
#include <string.h>

#include "model/fg_model.h"

static fg_status sage_forward(fg_model *m, fg_scheme *s, int l, const float *d) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const float *Wn = m->W[l], *Ws = m->W[l] + wi * wo;
  float *out; /* (n_out, wo) */
  /* D_0 in work_a: recomputed in backward; D_l stored as bf16 (d NULL): read there */
  const float *keep = d == m->work_a ? NULL : d;
  if (m->fuse) return fg_model_fused_forward(m, s, l, Ws); /* (fuse16.c: a 1D scheme) */
  if (m->agg_first[l]) {
    /* D_l stored as bf16 (d NULL): widened into work_a for 3d's moved rows; else aggregated
     * as it is where the scheme can (fg_model_aggregate) */
    const float *d32 = m->M16[l] || m->M[l] ? fg_model_in32(m, l, d) : d;
    FG_CHECK(fg_model_aggregate(m, s, l, d32, fg_model_s_buf(m, l)));
    fg_model_s_store(m, l);
    out = fg_model_out(m, l, m->work_a);
    fg_model_gemm_s(m, l, 0, sh->n_out, wo, wi, Wn, wo, out, wo);
    m->Mv[l] = m->M[l] ? m->M[l] : keep;
    if (m->M16[l]) { /* GEMM operand only: moved and kept as bf16 */
      FG_CHECK(fg_scheme_move_rows16(s, l, d32, m->M16[l], wi));
      fg_model_gemm_h(m, 0, 0, sh->n_out, wo, wi, m->M16[l], wi, Ws, wo, out, wo, 1);
    } else if (m->M[l]) {
      FG_CHECK(fg_scheme_move_rows_bf16(s, l, sh, d32, m->M[l], wi)); /* GEMM operand only */
      fg_model_gemm_add(m, 0, 0, sh->n_out, wo, wi, m->M[l], wi, Ws, wo, out, wo);
    } else { /* the rows are the output's (1D): D itself */
      fg_model_gemm_in(m, l, d, 0, sh->n_out, wo, wi, Ws, wo, out, wo, 1);
    }
    FG_CHECK(fg_scheme_reduce_product(s, l, out, sh->n_out * wo));
  } else {
    /* a 1D scheme: D's rows are the output's, and no product is partial */
    float *t = fg_model_other_work(m, d); /* (work_a when d is NULL) */
    m->Sv[l] = m->Mv[l] = keep;
    FG_CHECK(fg_model_product_aggregate(m, s, l, d, Wn, t, &out)); /* (T as bf16 under g16) */
    fg_model_gemm_in(m, l, d, 0, sh->n_out, wo, wi, Ws, wo, out, wo, 1);
  }
cleanup:
  return st;
}

static fg_status sage_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                               uint64_t seed, uint64_t epoch, float **dd) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out, nw = wi * wo;
  const float *Wn = m->W[l], *Ws = m->W[l] + nw;
  float *dWn = m->dW[l], *dWs = m->dW[l] + nw, *y;
  double t0;
  *dd = NULL;
  if (m->fuse) return fg_model_fused_backward(m, s, l, dz, p, Ws, dWs);
  fg_model_bias_grad(m, l, dz); /* (dZ as bf16, m->dz16: taken by the mask pass) */
  if (m->agg_first[l]) {
    float *sb = fg_model_s_buf(m, l); /* S[l]'s fp32 buffer: scratch from here on */
    const float *mv = m->Mv[l], *self = sb;
    float *u;
    fg_model_wgrad_s(m, l, dz, dWn);
    if (m->M16[l]) { /* (3d: dZ is never bf16 there) */
      fg_model_gemm_h(m, 1, 0, wi, wo, sh->n_out, m->M16[l], wi, dz, wo, dWs, wo, 0);
    } else {
      if (!mv && !m->H16[l]) { /* D_0 again, into S[0]'s buffer: dead now, and n_in = n_out
                                  on a 1D scheme */
        fg_model_redo_input(m, s, p, seed, epoch, sb);
        mv = sb;
      }
      fg_model_wgrad_in(m, l, mv, dz, dWs);
    }
    if (l == 0 && !m->dx0) return FG_OK; /* no dX wanted (label propagation's) */
    /* sb takes dZ W_sᵀ, u dZ W_nᵀ; y = Ãᵀ u + move_rows_t(sb) */
    fg_model_gemm_dz_wt(m, l, dz, Ws, sb, 0);
    FG_CHECK(fg_scheme_reduce_input_grad(s, l, sb, sh->n_out * wi));
    u = fg_model_other_work(m, dz);
    y = fg_model_other_work(m, u);
    FG_CHECK(fg_model_grad_aggregate_t(m, s, l, dz, Wn, u, y)); /* (dZ W_nᵀ as bf16: g16) */
    if (s->ops->move_rows_t) { /* (a 1D scheme's rows are already the input's: no copy) */
      FG_CHECK(s->ops->move_rows_t(s, l, sb, u, wi));
      self = u;
    }
    t0 = fg_now();
    fg_axpy(y, 1.0f, self, sh->n_in * wi);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  } else {
    /* layer 0 puts dT in H[1] (n x w_1, dead once dZ_0 exists), as the GCN does */
    float *t = l == 0 ? m->H[1] : fg_model_other_work(m, dz);
    const float *d = m->Sv[l];
    const fg_bf16 *dz16 = m->dz16;
    FG_CHECK(fg_model_aggregate_t_dz(m, s, l, dz, t));
    if (!d && !m->H16[l]) { /* D_0 again into work_a, moving dZ to work_b first if it is there */
      if (dz == m->work_a) {
        memcpy(m->work_b, dz, (size_t)(sh->n_out * wo) * sizeof(float));
        dz = m->work_b;
      }
      fg_model_redo_input(m, s, p, seed, epoch, m->work_a);
      d = m->work_a;
    }
    fg_model_gemm_in(m, l, d, 1, wi, wo, sh->n_in, t, wo, dWn, wo, 0);
    fg_model_wgrad_in(m, l, d, dz, dWs);
    if (l == 0 && !m->dx0) return FG_OK;
    y = fg_model_other_work(m, t);
    if (y == dz && !dz16) { /* dZ is still needed: H[l + 1] (D_{l+1}) is dead by now and its
                               size; where it is stored as bf16, dZ goes there rounded, as the
                               product reads it */
      const double t1 = fg_now();
      if (m->H16[l + 1]) {
        dz16 = m->H16[l + 1];
        fg_bf16_from_f32(m->H16[l + 1], dz, sh->n_out * wo);
      } else {
        memcpy(m->H[l + 1], dz, (size_t)(sh->n_out * wo) * sizeof(float));
        dz = m->H[l + 1];
      }
      m->seconds[FG_TIME_OTHER] += fg_now() - t1;
    }
    fg_model_gemm(m, 0, 1, sh->n_in, wi, wo, t, wo, Wn, wo, y, wi);
    if (dz16)
      fg_model_gemm_h(m, 0, 1, sh->n_out, wi, wo, dz16, wo, Ws, wo, y, wi, 1);
    else
      fg_model_gemm_add(m, 0, 1, sh->n_out, wi, wo, dz, wo, Ws, wo, y, wi);
  }
  *dd = y;
cleanup:
  return st;
}

const fg_layer_kind fg_layer_sage = {
    .name = "sage",
    .mats = 2,
    .aggregates = 1,
    .self_term = 1,
    .self_gemm = 1, /* M W_s, and dW_s = Mᵀ dZ */
    .dz16 = 1,
    .fuse = 1,
    .s_scratch = 1, /* dZ W_sᵀ, or D_0 again */
    .learn_features_ok = 0,
    .agg_last_ok = 1,
    .forward = sage_forward,
    .backward = sage_backward,
};
