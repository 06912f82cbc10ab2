/* layer_gin.c -- the Graph Isomorphism Network (Xu et al., ICLR 2019):
 *   H' = MLP((1 + eps) D + Ã D),  MLP = Linear, ReLU, Linear
 * with Ã the run's operator, by default the plain sum A without self loops, and eps fixed (0
 * unless --gin-eps names another) or learned (--gin-eps learn). A GIN layer is two layers of
 * the stack (the model table's "gin" row): this file's `gin` kind, the aggregation with the
 * MLP's first Linear, and its `linear` kind, the second Linear; the model puts the norm and
 * the ReLU between them, as after every stack layer but the last.
 *
 * gin:     S = Ã D;  M = move_rows(D);  Y = S + (1 + eps) M (in S);  Z = Y W
 *   backward:  dW = Yᵀ dZ;  dY = dZ Wᵀ;  deps = sum(dY ⊙ M);  dD = Ãᵀ dY + (1 + eps) move_rows_t(dY)
 * It always aggregates first, as GIN's definition does: the sum is taken over the input's
 * features, and deps needs Y's two terms apart.
 * linear:  M = move_rows(D);  Z = M W
 *   backward:  dW = Mᵀ dZ;  dD = move_rows_t(dZ Wᵀ)
 * On a 1D scheme move_rows is no move: M is D itself. On 3d it is the identity's shard
 * (Â's pattern replaced by I), so a Linear cycles the grid like any layer. deps is summed
 * over the distinct elements of dY ⊙ M: the ranks holding the primary copy of an aggregated
 * block (fg_layer_shape's agg_primary), then over every rank by reduce_weight_grads or
 * reduce_grads.
 */
#include <string.h>

#include "model/fg_model.h"

/* eps of layer l: its learned scalar (after its vectors in the gathered block), or the fixed
 * value. */
static float gin_eps(const fg_model *m, int l) {
  return m->scal[l] ? m->b[l][m->vecs[l] * m->shape[l].w_out] : m->gin_eps;
}

static fg_status gin_forward(fg_model *m, fg_scheme *s, int l, const float *d) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  float *sb = fg_model_s_buf(m, l); /* S, or its fp32 stand-in when stored as bf16 */
  float *out;
  double t0;
  if (!d && !s->ops->move_rows && s->ops->aggregate16) {
    /* D_l stored as bf16, its rows the output's (1D): aggregated as they are, the self term
     * added from them (the bits of widening them first, without the copy in work_a) */
    FG_CHECK(s->ops->aggregate16(s, l, m->H16[l], sb, wi));
    m->Mv[l] = NULL;
    if (l == 0) { /* D_0's rows made again, exact (storage16 keeps D_0 as bf16 for a fixed
                     eps only) */
      fg_model_input_axpy(m, s, 1.0f + gin_eps(m, l), sb);
    } else {
      t0 = fg_now();
      fg_axpy_bf16(sb, 1.0f + gin_eps(m, l), m->H16[l], sh->n_out * wi);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    }
  } else {
    const float *d32 = fg_model_in32(m, l, d); /* D_l stored as bf16: widened into work_a */
    const float *self = d32;
    FG_CHECK(s->ops->aggregate(s, l, d32, sb, wi));
    if (m->M[l]) {
      FG_CHECK(fg_scheme_move_rows(s, l, sh, d32, m->M[l], wi));
      self = m->M[l];
    }
    /* D_0 in work_a or D_l stored as bf16: again from there later */
    m->Mv[l] = m->M[l] ? m->M[l] : d == m->work_a ? NULL : d;
    t0 = fg_now();
    fg_axpy(sb, 1.0f + gin_eps(m, l), self, sh->n_out * wi);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  }
  fg_model_s_store(m, l);
  out = fg_model_out(m, l, m->work_a);
  fg_model_gemm_s(m, l, 0, sh->n_out, wo, wi, m->W[l], wo, out, wo);
  FG_CHECK(fg_scheme_reduce_product(s, l, out, sh->n_out * wo));
cleanup:
  return st;
}

static fg_status gin_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                              uint64_t seed, uint64_t epoch, float **dd) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const float eps = gin_eps(m, l);
  float *u, *y, *sb = fg_model_s_buf(m, l); /* S's fp32 buffer: scratch after dW */
  double t0;
  *dd = NULL;
  fg_model_bias_grad(m, l, dz); /* (dZ as bf16, m->dz16: taken by the mask pass) */
  fg_model_wgrad_s(m, l, dz, m->dW[l]);
  if (l == 0 && !m->scal[l] && !m->dx0) return FG_OK; /* no dX wanted */
  u = fg_model_other_work(m, dz); /* dY (n_out, wi), fp32: the self term adds it */
  fg_model_gemm_dz_wt(m, l, dz, m->W[l], u, 0);
  FG_CHECK(fg_scheme_reduce_input_grad(s, l, u, sh->n_out * wi));
  if (m->scal[l]) {
    const float *mv = m->Mv[l];
    if (!mv && m->H16[l]) { /* D_l widened into S's buffer: dead now (fg_model_h16) */
      fg_model_widen(m, l, sb);
      mv = sb;
    } else if (!mv) { /* D_0 again, into S[0]'s buffer: dead now, and n_in = n_out on a 1D
                         scheme */
      fg_model_redo_input(m, s, p, seed, epoch, sb);
      mv = sb;
    }
    t0 = fg_now();
    m->db[l][m->vecs[l] * wo] = sh->agg_primary ? (float)fg_dot(u, mv, sh->n_out * wi) : 0.0f;
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  }
  if (l == 0 && !m->dx0) return FG_OK;
  y = fg_model_other_work(m, u); /* dZ is dead: y may take its buffer */
  FG_CHECK(s->ops->aggregate_t(s, l, u, y, wi));
  if (s->ops->move_rows_t) { /* dY's rows back in the input's layout: through S's buffer */
    memcpy(sb, u, (size_t)(sh->n_out * wi) * sizeof(float));
    FG_CHECK(s->ops->move_rows_t(s, l, sb, u, wi));
  }
  t0 = fg_now();
  fg_axpy(y, 1.0f + eps, u, sh->n_in * wi);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  *dd = y;
cleanup:
  return st;
}

static fg_status linear_forward(fg_model *m, fg_scheme *s, int l, const float *d) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  float *out = fg_model_out(m, l, d);
  m->Mv[l] = m->M[l] ? m->M[l] : d == m->work_a ? NULL : d;
  if (m->M16[l]) { /* GEMM operand only: moved and kept as bf16 (from work_a, widened, when
                      D_l is stored as bf16) */
    FG_CHECK(fg_scheme_move_rows16(s, l, fg_model_in32(m, l, d), m->M16[l], wi));
    fg_model_gemm_h(m, 0, 0, sh->n_out, wo, wi, m->M16[l], wi, m->W[l], wo, out, wo, 0);
  } else if (m->M[l]) {
    FG_CHECK(fg_scheme_move_rows_bf16(s, l, sh, fg_model_in32(m, l, d), m->M[l], wi));
    fg_model_gemm(m, 0, 0, sh->n_out, wo, wi, m->M[l], wi, m->W[l], wo, out, wo);
  } else { /* the rows are the output's (1D): D itself, fp32 or stored as bf16 */
    fg_model_gemm_in(m, l, d, 0, sh->n_out, wo, wi, m->W[l], wo, out, wo, 0);
  }
  FG_CHECK(fg_scheme_reduce_product(s, l, out, sh->n_out * wo));
cleanup:
  return st;
}

static fg_status linear_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                                 uint64_t seed, uint64_t epoch, float **dd) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const float *mv = m->Mv[l];
  float *u;
  *dd = NULL;
  fg_model_bias_grad(m, l, dz); /* (dZ as bf16, m->dz16: taken by the mask pass) */
  if (m->M16[l]) { /* (3d: dZ is never bf16 there) */
    fg_model_gemm_h(m, 1, 0, wi, wo, sh->n_out, m->M16[l], wi, dz, wo, m->dW[l], wo, 0);
  } else {
    if (!mv && !m->H16[l]) { /* layer 0's D_0 again into work_a, moving dZ to work_b first if
                                it is there */
      if (dz == m->work_a) {
        memcpy(m->work_b, dz, (size_t)(sh->n_out * wo) * sizeof(float));
        dz = m->work_b;
      }
      fg_model_redo_input(m, s, p, seed, epoch, m->work_a);
      mv = m->work_a;
    }
    fg_model_wgrad_in(m, l, mv, dz, m->dW[l]);
  }
  if (l == 0 && !m->dx0) return FG_OK;
  u = fg_model_other_work(m, dz);
  fg_model_gemm_dz_wt(m, l, dz, m->W[l], u, 0);
  FG_CHECK(fg_scheme_reduce_input_grad(s, l, u, sh->n_out * wi));
  *dd = u;
  if (s->ops->move_rows_t) {
    *dd = fg_model_other_work(m, u);
    FG_CHECK(s->ops->move_rows_t(s, l, u, *dd, wi));
  }
cleanup:
  return st;
}

const fg_layer_kind fg_layer_gin = {
    .name = "gin",
    .mats = 1,
    .aggregates = 1,
    .self_term = 1,
    .self_gemm = 0, /* (1 + eps) M is added to S in fp32 */
    .learn_features_ok = 0,
    .agg_last_ok = 0,
    .eps = 1,
    .dz16 = 1,
    .s_scratch = 2, /* D_l again for the learned epsilon's gradient */
    .forward = gin_forward,
    .backward = gin_backward,
};

const fg_layer_kind fg_layer_linear = {
    .name = "linear",
    .mats = 1,
    .aggregates = 0,
    .self_term = 1,
    .self_gemm = 1, /* M W, and dW = Mᵀ dZ */
    .dz16 = 1,
    .learn_features_ok = 0,
    .agg_last_ok = 0,
    .forward = linear_forward,
    .backward = linear_backward,
};
