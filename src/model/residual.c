/* residual.c -- residual connections (--residual): every model layer but the last adds its
 * input to its output,
 *   H_{k+1} = relu(norm(layer(D_k))) + R_k,  R_k = H_k, or H_k P_k where the widths differ
 * (P_k learned, no bias: the layer's b already shifts the sum), before the next layer's
 * dropout. A model layer is stack layers l0..l1 (l1 = l0 + stages - 1); P_k is one more matrix
 * of stack layer l0, of its (w_l0 x w_{l0+1}) shape, so the scheme gathers and reduces it with
 * W. The model (model.c) keeps each source's H_l0 before dropout (Hres[l0]; the features for
 * l0 = 0) and each block end's ReLU output (Ares[l1], whose sign is the ReLU's mask once the
 * sum is taken); this file moves R from the source's layout to the block end's.
 *
 * On a 1D scheme rows stay where they are: R = H P (one GEMM added into the output) or H.
 * Under 3d each stack layer of the block is a hop, as a Linear is: M = move_rows(in) (the
 * identity's shard), then the column blocks regrouped from the input's split to the output's
 * -- M P for the projection, a copy of the overlapping columns for the identity -- summed along
 * b by reduce_product. Backward runs the hops in reverse: dP = Mᵀ dT, dM = dT Pᵀ (or the
 * copy's transpose) summed along a by reduce_input_grad, and move_rows_t back to the hop's
 * input layout. The source's gradient is left in Hres[l0] (it is dead by then), which
 * fg_model_backward adds to the gradient of H_l0 from the layer's own path.
 */
#include <string.h>

#include "model/fg_model.h"

/* Every model layer but the last is a block: stack layers l0 = k S .. l1 = k S + S - 1. */
int fg_residual_starts(int residual, int S, int L, int l) {
  return residual && l % S == 0 && l + S < L;
}

int fg_residual_ends(int residual, int S, int L, int l) {
  return residual && (l + 1) % S == 0 && l + 1 < L;
}

int fg_residual_hop(int residual, int S, int L, int l) { return residual && l < L - S; }

int fg_residual_end(const fg_model *m, int l) {
  return fg_residual_ends(m->residual, m->kind->stages, m->layers, l);
}

int fg_residual_source(const fg_model *m, int l) {
  return fg_residual_starts(m->residual, m->kind->stages, m->layers, l);
}

float *fg_residual_proj(const fg_model *m, int l0, float **blocks) {
  const fg_layer_shape *sh = &m->shape[l0];
  if (m->mats[l0] == m->kinds[l0]->mats) return NULL;
  return blocks[l0] + m->kinds[l0]->mats * sh->w_in * sh->w_out;
}

/* The source's H_l0 before dropout: kept in Hres, or for l0 = 0 the features themselves. */
static const float *source_rows(const fg_model *m, const fg_scheme *s, int l0) {
  return m->Hres[l0] ? m->Hres[l0] : s->features;
}

/* out (n_out x w_out) = the columns of in (n_out x w_in) that are also the output's, 0 in the
 * others (the identity from the input's column block to the output's); with transpose, the
 * other way round: in (n_out x w_in) from out's. */
static void regroup(const fg_layer_shape *sh, float *in, float *out, int transpose) {
  const int64_t lo = FG_MAX(sh->col0_in, sh->col0_out);
  const int64_t hi = FG_MIN(sh->col0_in + sh->w_in, sh->col0_out + sh->w_out);
  for (int64_t i = 0; i < sh->n_out; i++) {
    float *a = in + i * sh->w_in, *b = out + i * sh->w_out;
    if (transpose) memset(a, 0, (size_t)sh->w_in * sizeof(float));
    else memset(b, 0, (size_t)sh->w_out * sizeof(float));
    for (int64_t c = lo; c < hi; c++) {
      if (transpose) a[c - sh->col0_in] = b[c - sh->col0_out];
      else b[c - sh->col0_out] = a[c - sh->col0_in];
    }
  }
}

fg_status fg_residual_forward(fg_model *m, fg_scheme *s, int l1) {
  fg_status st = FG_OK;
  const int l0 = l1 - m->kind->stages + 1;
  const fg_layer_shape *sh1 = &m->shape[l1];
  const float *P = fg_residual_proj(m, l0, m->W), *in = source_rows(m, s, l0);
  float *out = m->H[l1 + 1];
  double t0;
  if (!s->ops->move_rows) { /* 1D: the rows are the output's, the columns whole */
    const fg_layer_shape *sh0 = &m->shape[l0];
    if (P) {
      fg_model_gemm_add(m, 0, 0, sh0->n_in, sh1->w_out, sh0->w_in, in, sh0->w_in, P,
                        sh0->w_out, out, sh1->w_out);
    } else {
      t0 = fg_now();
      fg_axpy(out, 1.0f, in, sh1->n_out * sh1->w_out);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    }
    return FG_OK;
  }
  for (int l = l0; l <= l1; l++) {
    const fg_layer_shape *sh = &m->shape[l];
    if (l == l0 && P) /* read only by GEMMs (M P, dP = Mᵀ dT): bf16 on the wire under bf16 */
      FG_CHECK(fg_scheme_move_rows_bf16(s, l, sh, in, m->RM[l], sh->w_in));
    else /* added to the output in fp32: exact */
      FG_CHECK(s->ops->move_rows(s, l, in, m->RM[l], sh->w_in));
    t0 = fg_now();
    if (l == l0 && P)
      fg_model_gemm(m, 0, 0, sh->n_out, sh->w_out, sh->w_in, m->RM[l], sh->w_in, P, sh->w_out,
                    m->RT[l], sh->w_out);
    else
      regroup(sh, m->RM[l], m->RT[l], 0);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    FG_CHECK(fg_scheme_reduce_product(s, l, m->RT[l], sh->n_out * sh->w_out));
    in = m->RT[l];
  }
  t0 = fg_now();
  fg_axpy(out, 1.0f, m->RT[l1], sh1->n_out * sh1->w_out);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
cleanup:
  return st;
}

fg_status fg_residual_backward(fg_model *m, fg_scheme *s, int l1, const float *dh) {
  fg_status st = FG_OK;
  const int l0 = l1 - m->kind->stages + 1;
  const fg_layer_shape *sh0 = &m->shape[l0], *sh1 = &m->shape[l1];
  const float *P = fg_residual_proj(m, l0, m->W);
  float *dP = fg_residual_proj(m, l0, m->dW);
  double t0;
  if (!s->ops->move_rows) { /* 1D: dP = Hᵀ dH; the source's gradient dH Pᵀ, or dH */
    if (P) fg_model_gemm(m, 1, 0, sh0->w_in, sh1->w_out, sh0->n_in, source_rows(m, s, l0),
                         sh0->w_in, dh, sh1->w_out, dP, sh1->w_out);
    if (l0 == 0) return FG_OK;
    if (P) {
      fg_model_gemm(m, 0, 1, sh0->n_in, sh0->w_in, sh1->w_out, dh, sh1->w_out, P, sh0->w_out,
                    m->Hres[l0], sh0->w_in);
    } else {
      t0 = fg_now();
      memcpy(m->Hres[l0], dh, (size_t)(sh1->n_out * sh1->w_out) * sizeof(float));
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    }
    return FG_OK;
  }
  memcpy(m->RT[l1], dh, (size_t)(sh1->n_out * sh1->w_out) * sizeof(float));
  for (int l = l1; l >= l0; l--) {
    const fg_layer_shape *sh = &m->shape[l];
    if (l == l0 && P) { /* M still holds the moved source rows */
      fg_model_gemm(m, 1, 0, sh->w_in, sh->w_out, sh->n_out, m->RM[l], sh->w_in, m->RT[l],
                    sh->w_out, dP, sh->w_out);
      if (l0 == 0) return FG_OK;
      fg_model_gemm(m, 0, 1, sh->n_out, sh->w_in, sh->w_out, m->RT[l], sh->w_out, P, sh->w_out,
                    m->RM[l], sh->w_in);
    } else {
      if (l == 0) return FG_OK;
      t0 = fg_now();
      regroup(sh, m->RM[l], m->RT[l], 1);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    }
    FG_CHECK(fg_scheme_reduce_input_grad(s, l, m->RM[l], sh->n_out * sh->w_in));
    FG_CHECK(s->ops->move_rows_t(s, l, m->RM[l], l == l0 ? m->Hres[l0] : m->RT[l - 1],
                                 sh->w_in));
  }
cleanup:
  return st;
}
