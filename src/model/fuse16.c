/* fuse16.c -- the bf16 model's fused epilogues (fg_model.fuse): a layer's products hand their
 * fp32 results to the elementwise pass that follows a block of rows at a time, and only the
 * pass's bf16 result is stored.
 *
 * Without them, under --precision bf16 every layer still wrote its fp32 output Z (n x w) into a
 * scratch buffer for the bias, ReLU and dropout sweep to round into H16[l + 1], and backward
 * wrote every dD (n x w) in fp32 for the mask pass to round into dZ: two fp32 scratch buffers
 * of the widest layer beside the bf16 activations (GCN 3 x 128: 3.75 buffers of n x 128 floats
 * against fp32's 5.25). Here the producers -- the bf16 GEMM a block of rows at a time
 * (fg_bf16_gemm_tall_rows) and the scheme's aggregation a block of complete rows at a time
 * (aggregate16_rows: a scheme that completes rows in one pass, serial) -- call the pass on each
 * block while it is in cache, in the same blocks and row order as before, so every bit is the
 * unfused layout's: the GEMM's row blocks are the ones fg_bf16_gemm_tall uses, a row's SpMM sum
 * is one thread's in nonzero order whatever block holds it, the elementwise passes are per
 * element (dropout's masks keyed by node id and column), and the bias gradient's row blocks are
 * summed in fg_bias_backward's order across the calls (fg_masked_scale_bias_bf16_rows). What is
 * left is one scratch buffer of bf16 products (T = D W, dT, dZ Wᵀ) and, at the last layer, the
 * fp32 Âᵀ dlogits (as wide as the classes). A layer whose output adds a second product of its
 * own rows (SAGE's self term D W_s; backward's dZ W_sᵀ) has it added to each block before the
 * pass, in the row blocks that product takes when it runs whole, so its bits are kept too.
 */
#include <string.h>

#include "model/fg_model.h"

/* Forward: Z's rows [r0, r0 + rows) (plus D_l's rows times W2 where it is set: a self term,
 * added as the whole product's fg_bf16_gemm_tall adds it, the blocks being its row blocks)
 * through bias, ReLU and dropout into H16[l + 1] */
typedef struct out_sink {
  fg_model *m;
  int l;
  const float *W2;
  double secs;
} out_sink;

static void out_rows(void *ctx, int64_t r0, int64_t rows, float *blk) {
  out_sink *a = ctx;
  fg_model *m = a->m;
  const int l = a->l, L = m->layers;
  const fg_layer_shape *sh = &m->shape[l];
  const float pl = l + 1 < L && (l + 1) % m->kind->stages == 0 ? m->in_p : 0.0f;
  double t0 = fg_now();
  if (a->W2) {
    const fg_status st = fg_bf16_gemm_tall(rows, sh->w_in, sh->w_out, m->H16[l] + r0 * sh->w_in,
                                           sh->w_in, a->W2, sh->w_out, blk, sh->w_out, 1);
    fg_model_gemm_done(m, t0, st, rows, sh->w_out, sh->w_in);
    t0 = fg_now();
  }
  fg_bias_relu_dropout_bf16(m->H16[l + 1] + r0 * sh->w_out, blk, m->b[l], rows, sh->w_out,
                            l + 1 < L, pl, m->in_seed, m->in_epoch, (uint64_t)(l + 1),
                            sh->ids_out ? sh->ids_out + r0 : NULL, sh->col0_out);
  a->secs += fg_now() - t0;
}

/* Rows of a result rounded into a packed bf16 matrix of f columns */
typedef struct round_sink {
  fg_bf16 *out;
  int64_t f;
  double secs;
} round_sink;

static void round_rows(void *ctx, int64_t r0, int64_t rows, float *blk) {
  round_sink *a = ctx;
  const double t0 = fg_now();
  fg_bf16_from_f32(a->out + r0 * a->f, blk, rows * a->f);
  a->secs += fg_now() - t0;
}

/* Backward: dD_l's rows (plus dZ's rows times W2ᵀ, transposed in wt2, where it is set: a self
 * term's gradient, made in m->stage on the product's own row blocks and added as the unfused
 * fp32 sum adds it) through the mask pass into dZ_{l-1} over H16[l], the bias gradient's row
 * blocks summed into part */
typedef struct mask_sink {
  fg_model *m;
  int l;
  float scale;
  double *part;
  const float *wt2;    /* (w_out x w_in) */
  const fg_bf16 *dz16; /* dZ (n_out x w_out): bf16, or */
  const float *dz;     /* fp32 */
  double secs;
} mask_sink;

static void mask_rows(void *ctx, int64_t r0, int64_t rows, float *blk) {
  mask_sink *a = ctx;
  fg_model *m = a->m;
  const fg_layer_shape *sh = &m->shape[a->l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  double t0 = fg_now();
  if (a->wt2) {
    float *y = m->stage;
    const fg_status st =
        a->dz16 ? fg_bf16_gemm_tall(rows, wo, wi, a->dz16 + r0 * wo, wo, a->wt2, wi, y, wi, 0)
                : fg_bf16_gemm_tall_f32(rows, wo, wi, a->dz + r0 * wo, wo, a->wt2, wi, y, wi, 0);
    fg_model_gemm_done(m, t0, st, rows, wi, wo);
    t0 = fg_now();
    fg_axpy(blk, 1.0f, y, rows * wi); /* (the unfused sum's own pass) */
  }
  fg_masked_scale_bias_bf16_rows(m->H16[a->l], blk, m->H16[a->l], r0, rows, sh->w_in, a->scale,
                                 a->part);
  a->secs += fg_now() - t0;
}

int fg_model_fuse16(int bf16, int rows16, const fg_model_kind *kind, int norm, int residual,
                    int learn) {
  if (!bf16 || !rows16 || norm != FG_NORM_NONE || residual || learn || !kind) return 0;
  for (int k = 0; k < kind->stages; k++)
    if (!kind->stage[k]->fuse) return 0;
  return 1;
}

static fg_status fused_s(fg_model *m, fg_scheme *s, int l) {
  const fg_layer_shape *sh = &m->shape[l];
  round_sink a = {m->S16[l], sh->w_in, 0.0};
  fg_status st;
  if (!m->S16[l]) return s->ops->aggregate16(s, l, m->H16[l], m->S[l], sh->w_in);
  st = s->ops->aggregate16_rows(s, l, 0, m->H16[l], sh->w_in, 0, round_rows, &a);
  m->seconds[FG_TIME_OTHER] += a.secs;
  return st;
}

static void out_gemm(fg_model *m, int l, const fg_bf16 *a16, const float *a, const float *W2) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const double t0 = fg_now();
  fg_status st;
  out_sink o = {m, l, NULL, 0.0};
  m->zout = NULL;       /* (the forward walk's sweep is done here) */
  if (!m->H16[l + 1]) { /* the logits, fp32 */
    float *z = m->H[l + 1];
    if (a16)
      fg_model_gemm_h(m, 0, 0, sh->n_out, wo, wi, a16, wi, m->W[l], wo, z, wo, 0);
    else
      fg_model_gemm(m, 0, 0, sh->n_out, wo, wi, a, wi, m->W[l], wo, z, wo);
    if (W2) fg_model_gemm_h(m, 0, 0, sh->n_out, wo, wi, m->H16[l], wi, W2, wo, z, wo, 1);
    return;
  }
  st = W2 ? fg_bf16_gemm_tall_rows2(sh->n_out, wi, wo, a16, a16 ? NULL : a, wi, m->W[l], wo,
                                    m->H16[l], NULL, wi, W2, wo, out_rows, &o)
          : fg_bf16_gemm_tall_rows(sh->n_out, wi, wo, a16, a16 ? NULL : a, wi, m->W[l], wo,
                                   out_rows, &o);
  fg_model_gemm_done(m, t0 + o.secs, st, sh->n_out, wo, wi);
  m->seconds[FG_TIME_OTHER] += o.secs;
}

static fg_status out_agg(fg_model *m, fg_scheme *s, int l, const fg_bf16 *t16, const float *W2) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  out_sink o = {m, l, W2, 0.0};
  fg_status st;
  m->zout = NULL;
  if (!m->H16[l + 1]) { /* the logits, fp32 */
    st = s->ops->aggregate16(s, l, t16, m->H[l + 1], wo);
    if (st == FG_OK && W2)
      fg_model_gemm_h(m, 0, 0, sh->n_out, wo, wi, m->H16[l], wi, W2, wo, m->H[l + 1], wo, 1);
    return st;
  }
  /* (with a self term, in the blocks its product takes: the whole product's bits) */
  st = s->ops->aggregate16_rows(s, l, 0, t16, wo,
                                W2 ? fg_bf16_gemm_block_rows(sh->n_out, wi, wo) : 0, out_rows, &o);
  m->seconds[FG_TIME_OTHER] += o.secs;
  return st;
}

static fg_status agg_t16(fg_model *m, fg_scheme *s, int l, const fg_bf16 *in16, int64_t f,
                         fg_bf16 *out16) {
  round_sink a = {out16, f, 0.0};
  const fg_status st = s->ops->aggregate16_rows(s, l, 1, in16, f, 0, round_rows, &a);
  m->seconds[FG_TIME_OTHER] += a.secs;
  return st;
}

/* The mask sink of layer l's input gradient at dropout rate p, with its bias blocks' sums in
 * m->bias_part (allocated with the model: no failure inside a pass) */
static void mask_begin(fg_model *m, int l, float p, mask_sink *a) {
  memset(a, 0, sizeof *a);
  a->m = m;
  a->l = l;
  a->scale = p > 0.0f && l % m->kind->stages == 0 ? 1.0f / (1.0f - p) : 1.0f;
  a->part = m->bias_part;
}

/* db[l - 1] from the sums, dZ_{l-1} handed on */
static void mask_end(mask_sink *a, fg_status st) {
  fg_model *m = a->m;
  const fg_layer_shape *sh = &m->shape[a->l];
  const double t0 = fg_now();
  if (st == FG_OK) {
    fg_bias_from_parts(m->db[a->l - 1], a->part, sh->n_in, sh->w_in);
    m->dz16_next = m->H16[a->l];
  }
  m->seconds[FG_TIME_OTHER] += a->secs + (fg_now() - t0);
}

static fg_status dd_gemm(fg_model *m, int l, const fg_bf16 *a16, const float *a, float p,
                         const float *dz, const float *W2) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const double t0 = fg_now();
  fg_status gst;
  mask_sink k;
  mask_begin(m, l, p, &k);
  /* W (wi x wo) transposed, as the fp32 product's nt case does (W2 beside it) */
  gst = fg_model_transpose_weight(m, wi, wo, m->W[l], wo);
  if (gst == FG_OK && W2) gst = fg_model_transpose_weight_at(m, wi * wo, wi, wo, W2, wo);
  if (gst == FG_OK && W2)
    gst = fg_bf16_gemm_tall_rows2(sh->n_in, wo, wi, a16, a16 ? NULL : a, wo, m->wt, wi, m->dz16,
                                  m->dz16 ? NULL : dz, wo, m->wt + wi * wo, wi, mask_rows, &k);
  else if (gst == FG_OK)
    gst =
        fg_bf16_gemm_tall_rows(sh->n_in, wo, wi, a16, a16 ? NULL : a, wo, m->wt, wi, mask_rows, &k);
  fg_model_gemm_done(m, t0 + k.secs, gst, sh->n_in, wi, wo);
  mask_end(&k, gst);
  return FG_OK; /* (a product's failure is the pass's: gemm_status) */
}

static fg_status dd_agg(fg_model *m, fg_scheme *s, int l, const fg_bf16 *u16, float p,
                        const float *dz, const float *W2) {
  const fg_layer_shape *sh = &m->shape[l];
  fg_status st = FG_OK;
  mask_sink k;
  mask_begin(m, l, p, &k);
  if (W2) { /* dZ W2ᵀ a block at a time, in the blocks its product takes */
    const double t0 = fg_now();
    st = fg_model_transpose_weight(m, sh->w_in, sh->w_out, W2, sh->w_out);
    if (st != FG_OK) /* (the pass fails; every rank still aggregates) */
      fg_model_gemm_done(m, t0, st, sh->n_out, sh->w_in, sh->w_out);
    k.wt2 = st == FG_OK ? m->wt : NULL;
    k.dz16 = m->dz16;
    k.dz = dz;
  }
  st = s->ops->aggregate16_rows(s, l, 1, u16, sh->w_in,
                                W2 ? fg_bf16_gemm_block_rows(sh->n_out, sh->w_out, sh->w_in) : 0,
                                mask_rows, &k);
  mask_end(&k, st);
  return st;
}

static void wgrad_t(fg_model *m, int l, const fg_bf16 *t16, const float *t32) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const double t0 = fg_now();
  const fg_status st =
      t16 ? fg_bf16_gemm_wgrad(sh->n_in, wi, wo, m->H16[l], wi, t16, wo, m->dW[l], wo, 0)
          : fg_bf16_gemm_wgrad_hf(sh->n_in, wi, wo, m->H16[l], wi, t32, wo, m->dW[l], wo, 0);
  fg_model_gemm_done(m, t0, st, wi, wo, sh->n_in);
}

fg_status fg_model_fused_forward(fg_model *m, fg_scheme *s, int l, const float *W2) {
  const fg_layer_shape *sh = &m->shape[l];
  fg_bf16 *t16 = (fg_bf16 *)(void *)m->work_a; /* T = D W (n_in x w_out) */
  m->Sv[l] = m->Mv[l] = NULL;                  /* (D_l is H16[l]) */
  if (m->agg_first[l]) {
    const fg_status st = fused_s(m, s, l); /* S = Â D */
    if (st == FG_OK) out_gemm(m, l, m->S16[l], m->S[l], W2);
    return st;
  }
  fg_model_tall16(m, sh->n_in, sh->w_in, sh->w_out, NULL, m->H16[l], m->W[l], t16);
  return out_agg(m, s, l, t16, W2);
}

fg_status fg_model_fused_backward(fg_model *m, fg_scheme *s, int l, float *dz, float p,
                                  const float *W2, float *dW2) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  fg_bf16 *u16 = (fg_bf16 *)(void *)m->work_a;
  fg_model_bias_grad(m, l, dz); /* (taken by the mask pass where dZ is bf16) */
  if (m->agg_first[l]) {
    /* dW = Sᵀ dZ (dW2 = Dᵀ dZ); dD = Âᵀ (dZ Wᵀ) (+ dZ W2ᵀ) */
    fg_model_wgrad_s(m, l, dz, m->dW[l]);
    if (W2) fg_model_wgrad_in(m, l, NULL, dz, dW2);
    if (l == 0) return FG_OK;
    st = fg_model_transpose_weight(m, wi, wo, m->W[l], wo);
    if (st == FG_OK)
      fg_model_tall16(m, sh->n_out, wo, wi, dz, m->dz16, m->wt, u16);
    else
      fg_model_gemm_done(m, fg_now(), st, sh->n_out, wi, wo);
    return dd_agg(m, s, l, u16, p, dz, W2);
  }
  /* dT = Âᵀ dZ (bf16; fp32 from the logits' gradient); dW = Dᵀ dT (dW2 = Dᵀ dZ); dD = dT Wᵀ
   * (+ dZ W2ᵀ) */
  if (m->dz16) {
    FG_CHECK(agg_t16(m, s, l, m->dz16, wo, u16));
    wgrad_t(m, l, u16, NULL);
  } else {
    FG_CHECK(s->ops->aggregate_t(s, l, dz, m->work_a, wo));
    wgrad_t(m, l, NULL, m->work_a);
  }
  if (W2) fg_model_wgrad_in(m, l, NULL, dz, dW2);
  if (l > 0) FG_CHECK(dd_gemm(m, l, m->dz16 ? u16 : NULL, m->dz16 ? NULL : m->work_a, p, dz, W2));
cleanup:
  return st;
}
