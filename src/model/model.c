/* model.c -- the layer stack: buffers, parameter pieces, the forward and backward walks, the
 * loss and the optimizer step. The layer math itself is the layer kind's (layer_*.c, one file a
 * kind, one row in kKinds). See fg_model.h. */
#include <stdio.h>
#include <string.h>

#include "core/fg_rng.h"
#include "model/fg_model.h"

#include <math.h>
#include <stdlib.h>

/* The models --model names: one row each (a new model is its layer kinds' files and a row). */
static const fg_model_kind kModels[] = {
    {"gcn", {FG_ADJ_SYM, 0}, 1, {&fg_layer_gcn}},
    {"sage", {FG_ADJ_MEAN, 1}, 1, {&fg_layer_sage}},
    {"gin", {FG_ADJ_SUM, 1}, 2, {&fg_layer_gin, &fg_layer_linear}},
};
enum { N_MODELS = sizeof kModels / sizeof kModels[0] };

const fg_model_kind *fg_model_kind_find(const char *name) {
  if (!name) return &kModels[0];
  for (int k = 0; k < N_MODELS; k++)
    if (strcmp(name, kModels[k].name) == 0) return &kModels[k];
  return NULL;
}

const char *fg_model_kind_names(void) {
  static char names[128];
  if (!names[0])
    for (int k = 0; k < N_MODELS; k++)
      snprintf(names + strlen(names), sizeof names - strlen(names), "%s%s", k ? ", " : "",
               kModels[k].name);
  return names;
}

fg_status fg_model_choose(const char *model, const char *norm, const char *adj_norm,
                          const char *gin_eps, fg_model_choice *out) {
  fg_status st = FG_OK;
  memset(out, 0, sizeof *out);
  out->kind = fg_model_kind_find(model);
  FG_REQUIRE(out->kind, FG_ERR_INVALID_ARG, "--model: no model '%s' (models: %s)", model,
             fg_model_kind_names());
  out->norm = FG_NORM_NONE;
  for (int k = FG_NORM_NONE; norm && k <= FG_NORM_BATCH; k++)
    if (strcmp(norm, fg_norm_name(k)) == 0) out->norm = k;
  FG_REQUIRE(!norm || strcmp(norm, fg_norm_name(out->norm)) == 0, FG_ERR_INVALID_ARG,
             "--norm: no normalization '%s' (none, layer, batch)", norm);
  out->adj = out->kind->adj;
  FG_REQUIRE(!adj_norm || fg_adj_norm_parse(adj_norm, &out->adj.norm), FG_ERR_INVALID_ARG,
             "--adj-norm: no normalization '%s' (sym, mean, sum)", adj_norm);
  if (gin_eps) {
    char *end = NULL;
    FG_REQUIRE(out->kind->stage[0] == &fg_layer_gin, FG_ERR_INVALID_ARG,
               "--gin-eps applies to --model gin, not %s", out->kind->name);
    out->gin_eps_learn = strcmp(gin_eps, "learn") == 0;
    if (!out->gin_eps_learn) {
      out->gin_eps = strtof(gin_eps, &end);
      FG_REQUIRE(end != gin_eps && *end == '\0' && isfinite(out->gin_eps), FG_ERR_INVALID_ARG,
                 "--gin-eps: '%s' is neither a number nor 'learn'", gin_eps);
    }
  }
cleanup:
  return st;
}

int fg_model_stack_layers(const fg_model_kind *kind, int layers) {
  return layers * (kind ? kind->stages : 1);
}

const char *fg_norm_name(int norm) {
  static const char *const names[] = {"none", "layer", "batch"};
  return norm >= FG_NORM_NONE && norm <= FG_NORM_BATCH ? names[norm] : "?";
}

/* Vectors of layer l: b, and a hidden layer's norm scale and shift, and BatchNorm's running
 * mean and variance. */
static int layer_vecs(int norm, int l, int L) {
  if (!norm || l + 1 >= L) return 1;
  return norm == FG_NORM_BATCH ? 5 : 3;
}

int fg_model_layer_vecs(int norm, int l, int L) { return layer_vecs(norm, l, L); }


fg_status fg_model_widths(const fg_model_kind *kind, int layers, int hidden,
                          const int *hidden_widths, int64_t features, int64_t classes,
                          int64_t *out) {
  fg_status st = FG_OK;
  const int S = kind ? kind->stages : 1;
  FG_REQUIRE(layers >= 1 && layers <= 64 && layers * S <= FG_MAX_STACK, FG_ERR_INVALID_ARG,
             "--layers must be in [1, 64], got %d", layers);
  out[0] = features;
  for (int l = 1; l <= layers; l++) {
    const int64_t w = l == layers ? classes : hidden_widths ? hidden_widths[l - 1] : hidden;
    FG_REQUIRE(w >= 1, FG_ERR_INVALID_ARG, "hidden width %d is %lld; must be >= 1", l,
               (long long)w);
    for (int k = 0; k < S; k++) out[(l - 1) * S + k + 1] = w;
  }
cleanup:
  return st;
}

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

/* The same for an activation stored as bf16 (S16, M16). */
#define FG_ALLOC_ACT16(ptr, n)                                                         \
  do {                                                                                 \
    (ptr) = fg_malloc_huge((size_t)((n) > 0 ? (n) : 1) * sizeof(fg_bf16));             \
    if (!(ptr))                                                                        \
      FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld bf16 activations",         \
              (long long)(n));                                                         \
  } while (0)

#define FG_ALLOC_F(ptr, n)                                                             \
  do {                                                                                 \
    (ptr) = fg_malloc_aligned((size_t)((n) > 0 ? (n) : 1) * sizeof(float));            \
    if (!(ptr)) FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld floats", (long long)(n)); \
  } while (0)

/* *buf grown to at least n elements of `size` bytes (its capacity in *cap); 0 if out of memory
 * (the old buffer kept). */
static int grow(void **buf, int64_t *cap, int64_t n, size_t size) {
  void *p;
  if (n <= *cap) return 1;
  p = fg_malloc_huge((size_t)n * size);
  if (!p) return 0;
  free(*buf);
  *buf = p;
  *cap = n;
  return 1;
}

int fg_label_prop_node(uint64_t seed, float rate, int64_t id, int split) {
  return rate > 0.0f && split == FG_SPLIT_TRAIN &&
         fg_rng_uniform(seed, FG_RNG_LABEL_PROP, (uint64_t)id, 0, 0, 0) < rate;
}

void fg_model_destroy(fg_model **mp) {
  fg_model *m;
  if (!mp || !*mp) return;
  m = *mp;
  free(m->lp_label);
  free(m->wt);
  fg_free_aligned(m->params);
  fg_free_aligned(m->grads);
  fg_free_aligned(m->adam_m);
  fg_free_aligned(m->adam_v);
  fg_free_aligned(m->wblk);
  fg_free_aligned(m->gblk);
  free(m->W);
  free(m->b);
  free(m->dW);
  free(m->db);
  if (m->H) {
    for (int l = 1; l <= m->layers; l++) free(m->H[l]);
    free(m->H);
  }
  if (m->H16) {
    for (int l = 0; l <= m->layers; l++) free(m->H16[l]);
    free(m->H16);
  }
  if (m->Hres)
    for (int l = 0; l <= m->layers; l++) free(m->Hres[l]);
  for (int l = 0; l < m->layers; l++) {
    if (m->Ares) free(m->Ares[l]);
    if (m->RM) free(m->RM[l]);
    if (m->RT) free(m->RT[l]);
    if (m->S) free(m->S[l]);
    if (m->S16) free(m->S16[l]);
    if (m->M) free(m->M[l]);
    if (m->M16) free(m->M16[l]);
    if (m->X) free(m->X[l]);
    if (m->rstd) free(m->rstd[l]);
  }
  free(m->S);
  free(m->S16);
  free(m->M);
  free(m->M16);
  free(m->Mv);
  free(m->X);
  free(m->rstd);
  free(m->vecs);
  free(m->scal);
  free(m->mats);
  free(m->Hres);
  free(m->Ares);
  free(m->RM);
  free(m->RT);
  free(m->kinds);
  free(m->ln_mean);
  free(m->ln_part);
  free(m->input);
  free(m->Sv);
  free(m->work_a);
  free(m->work_b);
  free(m->bias_part);
  free(m->stage);
  free(m->row_max);
  free(m->row_sum);
  free(m->widths);
  free(m->agg_first);
  free(m->shape);
  free(m->poff);
  free(m);
  *mp = NULL;
}

/* Each stack layer's kind: the model's stages in turn. */
static const fg_layer_kind *stack_kind(const fg_model_kind *kind, int l) {
  return kind->stage[l % kind->stages];
}

int fg_model_layer_mats(const fg_model_kind *kind, int residual, int L, const int64_t *w, int l) {
  const int S = kind->stages;
  return stack_kind(kind, l)->mats +
         (fg_residual_starts(residual, S, L, l) && w[l] != w[l + S]);
}

/* Which hidden H[l] (h16, L + 1 entries) a model stores as bf16: fg_model_h16 over the stack,
 * given fg_model_s16's choices; D_0 (h16[0]) not where layer 0's backward computes its input's
 * gradient (learn: label propagation, learned features), whose scratch holds n x w_0 anyway. */
static void storage16(const fg_model_kind *kind, int L, const fg_layer_shape *sh,
                      const int *agg_first, int learn, int eps_learn, int residual, int move_ok,
                      int bf16, int fuse, int *h16) {
  const fg_layer_kind *kinds[FG_MAX_STACK];
  int s16[FG_MAX_STACK];
  if (fuse) { /* every hidden H[l] and D_0 as bf16: nothing keeps an fp32 one (fuse16.c) */
    for (int l = 0; l <= L; l++) h16[l] = l < L;
    return;
  }
  for (int l = 0; l < L; l++) {
    kinds[l] = stack_kind(kind, l);
    s16[l] = fg_model_s16(bf16, agg_first[l], l, L, sh[l].w_in, sh[l].w_out);
  }
  for (int l = 0; l <= L; l++)
    h16[l] = fg_model_h16(bf16, move_ok, residual, eps_learn, kinds, agg_first, s16, L, l);
  if (learn) h16[0] = 0;
  if (bf16 && !residual && !learn && !move_ok && agg_first[0] && kinds[0]->aggregates &&
      !(eps_learn && kinds[0]->eps)) {
    /* D_0 where layer 0 aggregates first, on a scheme that aggregates bf16 rows as they are
     * (aggregate16) and moves none (not 3d), where that saves memory: wider than every
     * buffer the scratch must hold anyway, so work_a need not hold it (its readers round it,
     * and GIN's self term makes its rows again, fg_model_input_axpy) */
    int widest = 1;
    for (int l = 0; l < L; l++)
      widest &= sh[l].n_out * sh[l].w_out < sh[0].n_in * sh[0].w_in &&
                (l == 0 || sh[l].n_in * sh[l].w_in < sh[0].n_in * sh[0].w_in);
    h16[0] = widest;
  }
}

/* Floats of each activation buffer for the layers' shapes: the layout fg_model_create
 * allocates (S[l], hidden H[l] and, with move16, M[l] stored as bf16 in s16_total, elements;
 * a self term's M[l] when the scheme moves rows, and a norm's X[l], counted with S;
 * the norm's row statistics are ln_bytes). Scratch buffers take every intermediate a layer
 * makes outside H and S: its output-sized products, the input-sized gradients of layers that
 * pass one back (l >= 1, or layer 0 with learned features or a learned GIN epsilon, whose
 * gradient needs dY), D W of a layer that aggregates last; work_a also the layer-0 input's
 * dropout. */
static void buffer_sizes(const fg_model_kind *kind, int L, const fg_layer_shape *sh,
                         const int *agg_first, int learn, int eps_learn, int residual,
                         int move_ok, int move16, int norm, int bf16, int fuse,
                         int64_t *h_total, int64_t *s_total, int64_t *s16_total,
                         int64_t *work_a, int64_t *work_b) {
  const int S = kind->stages;
  int64_t x = 0;
  int h16[FG_MAX_STACK + 1];
  storage16(kind, L, sh, agg_first, learn, eps_learn, residual, move_ok, bf16, fuse, h16);
  *h_total = *s_total = *s16_total = 0;
  for (int l = 0; l < L; l++) {
    /* residual: a source's H before dropout, a block end's ReLU output, 3d's hop buffers */
    if (l > 0 && fg_residual_starts(residual, S, L, l)) *s_total += sh[l].n_in * sh[l].w_in;
    if (fg_residual_ends(residual, S, L, l)) *s_total += sh[l].n_out * sh[l].w_out;
    if (move_ok && fg_residual_hop(residual, S, L, l))
      *s_total += sh[l].n_out * (sh[l].w_in + sh[l].w_out);
    if (h16[l + 1])
      *s16_total += sh[l].n_out * sh[l].w_out; /* H16[l + 1] */
    else
      *h_total += sh[l].n_out * sh[l].w_out;
    if (fg_model_s16(bf16, agg_first[l], l, L, sh[l].w_in, sh[l].w_out))
      *s16_total += sh[l].n_out * sh[l].w_in; /* S16[l] */
    else if (agg_first[l])
      *s_total += sh[l].n_out * sh[l].w_in;
    if (move16 && stack_kind(kind, l)->self_gemm)
      *s16_total += sh[l].n_out * sh[l].w_in; /* M16[l] */
    else if (move_ok && stack_kind(kind, l)->self_term)
      *s_total += sh[l].n_out * sh[l].w_in;
    if (layer_vecs(norm, l, L) > 1) *s_total += sh[l].n_out * sh[l].w_out; /* X[l] */
    x = FG_MAX(x, sh[l].n_out * sh[l].w_out);
    if (!agg_first[l]) x = FG_MAX(x, sh[l].n_in * sh[l].w_out);
    if (l > 0 || learn || (eps_learn && stack_kind(kind, l)->eps)) {
      x = FG_MAX(x, sh[l].n_in * sh[l].w_in);
      x = FG_MAX(x, sh[l].n_out * sh[l].w_in);
    }
  }
  if (h16[0]) /* D_0 kept as bf16 (else in work_a), rounded as the dropout pass writes it */
    *s16_total += sh[0].n_in * sh[0].w_in;
  *work_a = h16[0] ? x : FG_MAX(x, sh[0].n_in * sh[0].w_in);
  *work_b = x;
  if (fuse) {
    /* one scratch buffer (fuse16.c): the bf16 products T = D W and its gradient dT of a layer
     * aggregating last (the last layer's dT = Âᵀ dlogits in fp32), dZ Wᵀ of one aggregating
     * first that passes a gradient back; in floats, a bf16 count rounded up */
    int64_t e = 0;
    for (int l = 0; l < L; l++) {
      if (!agg_first[l])
        e = FG_MAX(e, (sh[l].n_in * sh[l].w_out + 1) / 2 * (l + 1 == L ? 2 : 1));
      else if (l > 0)
        e = FG_MAX(e, (sh[l].n_out * sh[l].w_in + 1) / 2);
    }
    *work_a = e;
    *work_b = 0;
  }
}

/* Whether stack layer l aggregates before its weight product (a layer that does not
 * aggregate: 0). */
static int layer_agg_first(const fg_layer_kind *k, int agg_last_ok, int agg_order, int l,
                           int64_t w_in, int64_t w_out) {
  if (!k->aggregates) return 0;
  return agg_last_ok && k->agg_last_ok ? fg_agg_first(agg_order, l, w_in, w_out) : 1;
}

/* A norm's statistics: LayerNorm's rstd of each normed layer, a mean and two partial sums a
 * row; BatchNorm's the same a column (of the widest hidden layer for the shared three). */
static int64_t ln_bytes(int norm, int L, const int64_t *w, int64_t n) {
  int64_t cols = 0, widest = 1;
  if (!norm || L < 2) return 0;
  if (norm == FG_NORM_LAYER) return 8 * FG_MAX(n, 1) * (L - 1 + 3);
  for (int l = 1; l < L; l++) {
    cols += w[l];
    widest = FG_MAX(widest, w[l]);
  }
  return 8 * (cols + 3 * widest);
}

/* The shapes of a 1D scheme of n rows (fg_model_memory's model of a run). */
static void rows_shapes(int L, const int64_t *w, int64_t n, fg_layer_shape *sh) {
  for (int l = 0; l < L; l++) {
    memset(&sh[l], 0, sizeof sh[l]);
    sh[l].n_in = sh[l].n_out = n;
    sh[l].w_in = w[l];
    sh[l].w_out = w[l + 1];
  }
}

void fg_model_memory(const fg_model_config *cfg, int64_t n, int64_t *activation_bytes,
                     int64_t *param_bytes, double *buffers) {
  const int L = cfg->layers;
  const fg_model_kind *kind = cfg->kind ? cfg->kind : fg_model_kind_find(NULL);
  fg_layer_shape sh[FG_MAX_STACK];
  int agg[FG_MAX_STACK];
  int64_t h, sz, s16, wa, wb, np = 0, wref = 1;
  const int fuse = fg_model_fuse16(cfg->bf16 && !cfg->bf16_s32 && !cfg->bf16_unfused,
                                   cfg->rows16, kind, cfg->norm, cfg->residual,
                                   cfg->label_prop > 0.0f);
  if (L < 1 || L > FG_MAX_STACK) {
    if (activation_bytes) *activation_bytes = 0;
    if (param_bytes) *param_bytes = 0;
    if (buffers) *buffers = 0.0;
    return;
  }
  rows_shapes(L, cfg->widths, n, sh);
  for (int l = 0; l < L; l++) {
    const fg_layer_kind *k = stack_kind(kind, l);
    agg[l] = layer_agg_first(k, 1, cfg->agg_order, l, cfg->widths[l], cfg->widths[l + 1]);
    np += (fg_model_layer_mats(kind, cfg->residual, L, cfg->widths, l) * cfg->widths[l] +
           layer_vecs(cfg->norm, l, L)) * cfg->widths[l + 1] +
          (cfg->gin_eps_learn && k->eps);
  }
  if (cfg->label_prop > 0.0f) np += cfg->widths[0] * cfg->widths[L]; /* the label embedding */
  buffer_sizes(kind, L, sh, agg, cfg->label_prop > 0.0f, cfg->gin_eps_learn, cfg->residual, 0, 0,
               cfg->norm, cfg->bf16 && !cfg->bf16_s32, fuse, &h, &sz, &s16, &wa, &wb);
  for (int l = 1; l <= L; l++)
    if (l < L || L == 1) wref = FG_MAX(wref, cfg->widths[l]);
  if (activation_bytes) {
    *activation_bytes = 4 * (h + sz + wa + wb) + 2 * s16 + ln_bytes(cfg->norm, L, cfg->widths, n);
    if (cfg->bf16) { /* the scheme's rows16 (its widest SpMM input: an aggregating layer's
                        input width where it aggregates first, else its output's, both ways),
                        fg_model_create's wt, a product's row blocks */
      int64_t wmax = 1, mats = 1, blocks = 0, rows_blk = 0, stage = 0;
      int h16[FG_MAX_STACK + 1];
      storage16(kind, L, sh, agg, cfg->label_prop > 0.0f, cfg->gin_eps_learn, cfg->residual, 0,
                cfg->bf16 && !cfg->bf16_s32, fuse, h16);
      for (int l = 0; l < L; l++) {
        /* (layer 0 aggregating D_0 kept as bf16 rounds nothing: aggregate16; fused, only the
         * last layer's Âᵀ dlogits is rounded, and each aggregation stages a block of rows) */
        if (stack_kind(kind, l)->aggregates && !(l == 0 && agg[0] && h16[0]) &&
            (!fuse || (l + 1 == L && !agg[l])))
          wmax = FG_MAX(wmax, agg[l] ? cfg->widths[l] : cfg->widths[l + 1]);
        if (fuse && stack_kind(kind, l)->aggregates) { /* (its aggregations' width) */
          const int64_t f = agg[l] ? cfg->widths[l] : cfg->widths[l + 1];
          rows_blk = FG_MAX(rows_blk, 4 * fg_scheme_rows_block(n, f) * f);
        }
        if (fuse && l > 0 && agg[l] && stack_kind(kind, l)->self_term) /* (fg_model.stage) */
          stage = FG_MAX(stage, 4 * fg_bf16_gemm_block_rows(n, cfg->widths[l + 1], cfg->widths[l]) *
                                    cfg->widths[l]);
        mats = FG_MAX(mats, cfg->widths[l] * cfg->widths[l + 1] *
                                (fuse && stack_kind(kind, l)->mats > 1 ? 2 : 1));
        blocks = FG_MAX(blocks, fg_bf16_gemm_scratch_bytes(n, cfg->widths[l], cfg->widths[l + 1]));
      }
      /* (fused: the aggregation's staging, kept by the scheme, and the self term's beside a
       * product's blocks) */
      *activation_bytes += 2 * n * wmax + 4 * mats + blocks + rows_blk + stage;
    }
  }
  if (param_bytes) *param_bytes = 4 * 4 * np; /* parameters, gradients, two Adam moments */
  if (buffers)
    *buffers = n > 0 ? ((double)(h + sz + wa + wb) + 0.5 * (double)s16) / ((double)n * (double)wref)
                     : 0.0;
}

void fg_model_agg_plan(const fg_model_kind *kind, int L, const int64_t *widths, int agg_order,
                       int *agg) {
  if (!kind) kind = fg_model_kind_find(NULL);
  for (int l = 0; l < L; l++) {
    const fg_layer_kind *k = stack_kind(kind, l);
    agg[l] = k->aggregates ? layer_agg_first(k, 1, agg_order, l, widths[l], widths[l + 1]) : -1;
  }
}

fg_status fg_model_create(const fg_model_config *cfg, const fg_scheme *s, fg_model **out) {
  fg_status st = FG_OK;
  fg_model *m = NULL;
  const int L = cfg->layers;
  const int split = s->ops->gather_weights != NULL;
  const fg_model_kind *kind = cfg->kind ? cfg->kind : fg_model_kind_find(NULL);
  const int move_ok = s->ops->move_rows != NULL;
  /* self terms of GEMM-only rows kept as bf16 where the scheme moves them so */
  const int move16 =
      move_ok && cfg->bf16 && s->bf16 && !cfg->bf16_s32 && s->ops->move_rows16 != NULL;
  int64_t off = 0, blk = 0;
  int h16[FG_MAX_STACK + 1];
  FG_REQUIRE(L >= 1 && L <= FG_MAX_STACK, FG_ERR_INVALID_ARG,
             "a model needs 1 to %d stack layers, got %d", FG_MAX_STACK, L);
  for (int l = 0; l <= L; l++)
    FG_REQUIRE(cfg->widths[l] >= 1, FG_ERR_INVALID_ARG, "layer width %d is %lld; must be >= 1",
               l, (long long)cfg->widths[l]);
  FG_REQUIRE(cfg->widths[0] == s->num_features && cfg->widths[L] == s->num_classes,
             FG_ERR_INTERNAL, "model widths %lld..%lld for %lld features and %lld classes",
             (long long)cfg->widths[0], (long long)cfg->widths[L], (long long)s->num_features,
             (long long)s->num_classes);
  FG_REQUIRE(cfg->agg_order != FG_AGG_LAST || s->ops->agg_last_ok, FG_ERR_INVALID_ARG,
             "--scheme %s aggregates first in every layer (its layout splits the columns); "
             "--agg-order last is not available", s->ops->name);
  FG_REQUIRE(L % kind->stages == 0, FG_ERR_INTERNAL, "%d stack layers for %s's %d stages", L,
             kind->name, kind->stages);
  FG_REQUIRE(!s->learn_features || !cfg->residual, FG_ERR_INVALID_ARG,
             "--learn-features with --residual: a learned input's residual gradient is not "
             "built; drop one of them");
  FG_REQUIRE(!s->learn_features || kind->stage[0]->learn_features_ok, FG_ERR_INVALID_ARG,
             "--learn-features: the %s model does not learn its input features (gcn does)",
             kind->name);
  FG_REQUIRE(cfg->norm >= FG_NORM_NONE && cfg->norm <= FG_NORM_BATCH, FG_ERR_INVALID_ARG,
             "model: unknown norm %d", cfg->norm);
  FG_CALLOC(m, 1);
  m->kind = kind;
  m->norm = cfg->norm;
  m->residual = cfg->residual;
  m->gin_eps = cfg->gin_eps;
  m->bf16 = cfg->bf16;
  m->x16 = fg_model_x16(cfg, s);
  m->g16 = cfg->bf16 && s->bf16 && !cfg->bf16_s32 && s->ops->aggregate16_t &&
           !s->ops->reduce_input_grad;
  FG_REQUIRE(m->x16 || s->features16 == NULL, FG_ERR_INVALID_ARG,
             "model: the scheme's features are stored as bf16; a %s model reads them in fp32",
             cfg->residual ? "residual" : "fp32");
  m->layers = L;
  m->n = s->n_local;
  m->feat_off = -1;
  m->lp_off = -1;
  FG_ALLOC(m->widths, L + 1);
  FG_ALLOC(m->agg_first, L);
  FG_CALLOC(m->shape, L);
  FG_CALLOC(m->poff, L);
  FG_CALLOC(m->W, L);
  FG_CALLOC(m->b, L);
  FG_CALLOC(m->dW, L);
  FG_CALLOC(m->db, L);
  FG_CALLOC(m->H, L + 1);
  FG_CALLOC(m->H16, L + 1);
  FG_CALLOC(m->S, L);
  FG_CALLOC(m->S16, L);
  FG_CALLOC(m->Sv, L);
  FG_CALLOC(m->M, L);
  FG_CALLOC(m->Mv, L);
  FG_CALLOC(m->M16, L);
  FG_CALLOC(m->X, L);
  FG_CALLOC(m->rstd, L);
  FG_CALLOC(m->vecs, L);
  FG_CALLOC(m->scal, L);
  FG_CALLOC(m->mats, L);
  FG_CALLOC(m->Hres, L + 1);
  FG_CALLOC(m->Ares, L);
  FG_CALLOC(m->RM, L);
  FG_CALLOC(m->RT, L);
  FG_CALLOC(m->kinds, L);
  for (int l = 0; l <= L; l++) m->widths[l] = cfg->widths[l];
  for (int l = 0; l < L; l++) {
    fg_layer_shape *sh = &m->shape[l];
    const fg_layer_kind *k = m->kinds[l] = stack_kind(kind, l);
    s->ops->shape(s, l, m->widths, sh);
    m->agg_first[l] = layer_agg_first(k, s->ops->agg_last_ok, cfg->agg_order, l, m->widths[l],
                                      m->widths[l + 1]);
    m->vecs[l] = layer_vecs(m->norm, l, L);
    m->scal[l] = cfg->gin_eps_learn && k->eps;
    m->mats[l] = fg_model_layer_mats(kind, cfg->residual, L, m->widths, l);
    /* a hop without a projection copies columns: its widths must agree */
    FG_REQUIRE(!fg_residual_hop(cfg->residual, kind->stages, L, l) || m->mats[l] > k->mats ||
                   m->widths[l] == m->widths[l + 1],
               FG_ERR_INVALID_ARG, "--residual: stack layer %d maps width %lld to %lld inside "
               "a block without a projection", l, (long long)m->widths[l],
               (long long)m->widths[l + 1]);
    m->poff[l] = m->n_params;
    m->n_params += m->mats[l] * sh->wp_len + m->vecs[l] * sh->bp_len + m->scal[l];
    m->n_params_global +=
        (m->mats[l] * m->widths[l] + m->vecs[l]) * m->widths[l + 1] + m->scal[l];
    blk += m->mats[l] * sh->w_in * sh->w_out + m->vecs[l] * sh->w_out + m->scal[l];
  }
  FG_REQUIRE(m->shape[L - 1].n_out == s->n_local, FG_ERR_INTERNAL,
             "the last layer has %lld output rows, the scheme %lld labelled rows",
             (long long)m->shape[L - 1].n_out, (long long)s->n_local);
  if (s->learn_features) {
    FG_REQUIRE(s->ops->gather_input && s->ops->input_grad, FG_ERR_INVALID_ARG,
               "--learn-features: the %s scheme does not learn features", s->ops->name);
    m->feat_off = m->n_params;
    m->n_params += s->feat_rows * m->shape[0].w_in;
  }
  if (cfg->label_prop > 0.0f) {
    /* the embedding is whole on every rank; each adds its columns to its input rows, whose
     * labels are the labelled rows' (1D) or were delivered (s->in_labels: 3d) */
    const fg_layer_shape *sh0 = &m->shape[0];
    const int32_t *lab = s->in_labels ? s->in_labels : s->labels;
    const int8_t *spl = s->in_split ? s->in_split : s->split;
    FG_REQUIRE(cfg->label_prop < 1.0f, FG_ERR_INVALID_ARG,
               "--label-prop must be in (0, 1), got %g", (double)cfg->label_prop);
    FG_REQUIRE(s->in_labels || (!s->ops->move_rows && sh0->n_in == s->n_local), FG_ERR_INTERNAL,
               "--label-prop: the %s scheme gave no labels of its layer-0 input rows",
               s->ops->name);
    FG_REQUIRE(!cfg->residual && !s->learn_features, FG_ERR_UNSUPPORTED,
               "--label-prop with --%s: the input's %s would carry the embedding's gradient "
               "too, which is not implemented; drop one of them",
               cfg->residual ? "residual" : "learn-features",
               cfg->residual ? "residual path" : "own gradient");
    m->lp_off = m->n_params;
    m->dx0 = 1;
    m->n_params += m->widths[0] * m->widths[L];
    m->n_params_global += m->widths[0] * m->widths[L];
    FG_ALLOC(m->lp_label, FG_MAX(sh0->n_in, 1));
    for (int64_t i = 0; i < sh0->n_in; i++)
      m->lp_label[i] = fg_label_prop_node(cfg->seed, cfg->label_prop, sh0->ids_in[i], spl[i]) &&
                               lab[i] >= 0 && lab[i] < m->widths[L]
                           ? lab[i]
                           : -1;
  }
  FG_ALLOC_F(m->params, m->n_params);
  FG_ALLOC_F(m->grads, m->n_params);
  FG_ALLOC_F(m->adam_m, m->n_params);
  FG_ALLOC_F(m->adam_v, m->n_params);
  memset(m->grads, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_m, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_v, 0, (size_t)m->n_params * sizeof(float));
  if (m->lp_off >= 0) /* the label embedding starts at 0: the plain model */
    memset(m->params + m->lp_off, 0,
           (size_t)(m->widths[0] * m->widths[L]) * sizeof(float));
  if (split) {
    FG_ALLOC_F(m->wblk, blk);
    FG_ALLOC_F(m->gblk, blk);
  }
  m->fuse = fg_model_fuse16(m->g16 && !cfg->bf16_unfused,
                            s->ops->aggregate16_rows && s->ops->aggregate16 &&
                                !s->ops->reduce_product && !move_ok,
                            kind, m->norm, cfg->residual, s->learn_features || m->lp_off >= 0);
  storage16(kind, L, m->shape, m->agg_first, s->learn_features || m->lp_off >= 0,
            cfg->gin_eps_learn, cfg->residual, move_ok,
            m->bf16 && !cfg->bf16_s32, m->fuse, h16);
  if (m->bf16) {
    /* the transposed weights' scratch at its largest now, so that running short of memory is
     * an error every rank agrees on here rather than one rank's failure inside a pass (the
     * products' own row blocks are fg_bf16_gemm_scratch_bytes a call: a few MB, up to 64 MiB
     * on the native path at many threads) */
    int64_t mats_in = 1;
    for (int l = 0; l < L; l++) mats_in = FG_MAX(mats_in, m->shape[l].w_in * m->shape[l].w_out);
    FG_REQUIRE(grow((void **)&m->wt, &m->wt_cap, mats_in, sizeof(float)), FG_ERR_NOMEM,
               "out of memory for the bf16 products' transposed weights (%lld floats)",
               (long long)mats_in);
  }
  for (int l = 0; l < L; l++) {
    const fg_layer_shape *sh = &m->shape[l];
    const int64_t wi = m->widths[l], wo = m->widths[l + 1], nw = sh->w_in * sh->w_out;
    const int mats = m->mats[l];
    float *piece = m->params + m->poff[l];
    if (split) {
      m->W[l] = m->wblk + off;
      m->dW[l] = m->gblk + off;
      off += mats * nw + m->vecs[l] * sh->w_out + m->scal[l];
    } else {
      FG_REQUIRE(sh->wp_len == nw && sh->bp_len == sh->w_out, FG_ERR_INTERNAL,
                 "layer %d: a weight piece that is not the block needs gather_weights", l);
      m->W[l] = piece;
      m->dW[l] = m->grads + m->poff[l];
    }
    m->b[l] = m->W[l] + mats * nw;
    m->db[l] = m->dW[l] + mats * nw;
    /* element (i, j) of matrix k of layer l is the one-process model's draw wherever it
     * lives (matrix 0 draws what a GCN's W_l draws) */
    for (int k = 0; k < mats; k++)
      fg_glorot_init_piece(piece + k * sh->wp_len, wi, wo, sh->col0_in, sh->col0_out, sh->w_out,
                           sh->wp0, sh->wp_len, cfg->seed, (uint64_t)l | (uint64_t)k << 32);
    /* b and a norm's shift 0, its scale 1; BatchNorm's running mean 0, variance 1 */
    memset(piece + mats * sh->wp_len, 0, (size_t)(m->vecs[l] * sh->bp_len) * sizeof(float));
    for (int64_t e = 0; m->vecs[l] > 1 && e < sh->bp_len; e++)
      piece[mats * sh->wp_len + sh->bp_len + e] = 1.0f;
    for (int64_t e = 0; m->vecs[l] > 3 && e < sh->bp_len; e++)
      piece[mats * sh->wp_len + 4 * sh->bp_len + e] = 1.0f;
    if (m->scal[l]) piece[mats * sh->wp_len + m->vecs[l] * sh->bp_len] = cfg->gin_eps;
    if (h16[l + 1])
      FG_ALLOC_ACT16(m->H16[l + 1], sh->n_out * sh->w_out);
    else
      FG_ALLOC_ACT(m->H[l + 1], sh->n_out * sh->w_out);
    if (m->vecs[l] > 1) {
      FG_ALLOC_ACT(m->X[l], sh->n_out * sh->w_out);
      FG_ALLOC(m->rstd[l], FG_MAX(m->norm == FG_NORM_BATCH ? sh->w_out : sh->n_out, 1));
    }
    if (fg_model_s16(m->bf16 && !cfg->bf16_s32, m->agg_first[l], l, L, sh->w_in, sh->w_out))
      FG_ALLOC_ACT16(m->S16[l], sh->n_out * sh->w_in);
    else if (m->agg_first[l])
      FG_ALLOC_ACT(m->S[l], sh->n_out * sh->w_in);
    if (move16 && m->kinds[l]->self_gemm)
      FG_ALLOC_ACT16(m->M16[l], sh->n_out * sh->w_in);
    else if (move_ok && m->kinds[l]->self_term)
      FG_ALLOC_ACT(m->M[l], sh->n_out * sh->w_in);
    if (l > 0 && fg_residual_source(m, l)) FG_ALLOC_ACT(m->Hres[l], sh->n_in * sh->w_in);
    if (fg_residual_end(m, l)) FG_ALLOC_ACT(m->Ares[l], sh->n_out * sh->w_out);
    if (move_ok && fg_residual_hop(m->residual, kind->stages, L, l)) {
      FG_ALLOC_ACT(m->RM[l], sh->n_out * sh->w_in);
      FG_ALLOC_ACT(m->RT[l], sh->n_out * sh->w_out);
    }
  }
  if (s->learn_features) {
    const int64_t w0 = m->shape[0].w_in;
    FG_ALLOC_ACT(m->input, m->shape[0].n_in * w0);
    if (s->feat_rows * w0 > 0)
      memcpy(m->params + m->feat_off, s->features, (size_t)(s->feat_rows * w0) * sizeof(float));
    m->H[0] = m->input;
  } else {
    m->H[0] = m->x16 ? NULL : s->features; /* x16: read by the input pass from the scheme */
  }
  if (fg_residual_source(m, 0) && s->feature_rows) {
    /* the source H_0 is the features, here read through a row map: gathered once */
    FG_ALLOC_ACT(m->Hres[0], m->shape[0].n_in * m->shape[0].w_in);
    fg_model_redo_input(m, s, 0.0f, 0, 0, m->Hres[0]);
  }
  {
    int64_t h, sz, s16, wa, wb;
    buffer_sizes(kind, L, m->shape, m->agg_first, s->learn_features || m->lp_off >= 0,
                 cfg->gin_eps_learn, cfg->residual, move_ok, move16, m->norm,
                 m->bf16 && !cfg->bf16_s32, m->fuse,
                 &h, &sz, &s16, &wa, &wb);
    FG_ALLOC_ACT(m->work_a, wa);
    FG_ALLOC_ACT(m->work_b, wb);
    if (h16[0]) FG_ALLOC_ACT16(m->H16[0], m->shape[0].n_in * m->shape[0].w_in);
  }
  if (m->fuse) {
    int64_t len = 1, stage = 1, mats_in = 1;
    for (int l = 1; l < L; l++)
      len = FG_MAX(len, fg_bias_part_len(m->shape[l].n_in, m->shape[l].w_in));
    FG_ALLOC(m->bias_part, len);
    for (int l = 0; l < L; l++) {
      const fg_layer_shape *sh = &m->shape[l];
      if (m->mats[l] > 1) mats_in = FG_MAX(mats_in, 2 * sh->w_in * sh->w_out);
      if (l > 0 && m->agg_first[l] && m->kinds[l]->self_term)
        stage = FG_MAX(stage, fg_bf16_gemm_block_rows(sh->n_out, sh->w_out, sh->w_in) * sh->w_in);
    }
    FG_ALLOC(m->stage, stage);
    /* a self term's weight transposed beside the product's (fuse16.c, dd_gemm) */
    FG_REQUIRE(grow((void **)&m->wt, &m->wt_cap, mats_in, sizeof(float)), FG_ERR_NOMEM,
               "out of memory for the bf16 products' transposed weights (%lld floats)",
               (long long)mats_in);
  }
  if (m->norm && L > 1) {
    int64_t rows = 1; /* LayerNorm's rows, BatchNorm's columns */
    for (int l = 0; l + 1 < L; l++)
      rows = FG_MAX(rows, m->norm == FG_NORM_BATCH ? m->shape[l].w_out : m->shape[l].n_out);
    FG_ALLOC(m->ln_mean, rows);
    FG_ALLOC(m->ln_part, 2 * rows);
  }
  FG_ALLOC(m->row_max, FG_MAX(m->n, 1));
  FG_ALLOC(m->row_sum, FG_MAX(m->n, 1));
  *out = m;
  m = NULL;
cleanup:
  fg_model_destroy(&m);
  return st;
}

/* B (N x K, row length ldb) transposed into m->wt (K x N). */
fg_status fg_model_transpose_weight_at(fg_model *m, int64_t at, int64_t N, int64_t K,
                                       const float *B, int64_t ldb) {
  fg_status st = FG_OK;
  FG_REQUIRE(grow((void **)&m->wt, &m->wt_cap, at + K * N, sizeof(float)), FG_ERR_NOMEM,
             "out of memory for a transposed weight (%lld x %lld)", (long long)K, (long long)N);
  for (int64_t i = 0; i < N; i++)
    for (int64_t j = 0; j < K; j++) m->wt[at + j * N + i] = B[i * ldb + j];
cleanup:
  return st;
}

fg_status fg_model_transpose_weight(fg_model *m, int64_t N, int64_t K, const float *B,
                                    int64_t ldb) {
  return fg_model_transpose_weight_at(m, 0, N, K, B, ldb);
}

/* C = op(A) op(B) (+ C with acc) on bf16-rounded operands, fp32 sums (fg_bf16.h: the
 * activations are rounded a block of rows at a time inside the kernel, no copy kept). The
 * model's products: an activation times a weight (nn: the tall product, which rounds W too),
 * an activation's transpose times a gradient (tn: the weight gradient), a gradient times a
 * weight's transpose (nt: W transposed into fp32 scratch, then the tall product). */
static fg_status bf16_gemm(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                           const float *A, int64_t lda, const float *B, int64_t ldb, int acc,
                           float *C, int64_t ldc) {
  fg_status st = FG_OK;
  FG_REQUIRE(!(ta && tb), FG_ERR_INTERNAL, "bf16 GEMM: no product of two transposes");
  if (!ta && !tb) {
    FG_CHECK(fg_bf16_gemm_tall_f32(M, K, N, A, lda, B, ldb, C, ldc, acc));
  } else if (ta) { /* A: K x M, B: K x N */
    FG_CHECK(fg_bf16_gemm_wgrad_f32(K, M, N, A, lda, B, ldb, C, ldc, acc));
  } else { /* A: M x K, B: N x K */
    FG_CHECK(fg_model_transpose_weight(m, N, K, B, ldb));
    FG_CHECK(fg_bf16_gemm_tall_f32(M, K, N, A, lda, m->wt, N, C, ldc, acc));
  }
cleanup:
  return st;
}

/* A product's accounting: its time since t0 and its flops, and the first failure of a pass. */
void fg_model_gemm_done(fg_model *m, double t0, fg_status st, int64_t M, int64_t N, int64_t K) {
  if (st != FG_OK && m->gemm_status == FG_OK) m->gemm_status = st;
  m->seconds[FG_TIME_GEMM] += fg_now() - t0;
  m->gemm_flops += 2.0 * (double)M * (double)N * (double)K;
}

static void timed_gemm(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                       float *C, int64_t ldc) {
  const double t0 = fg_now();
  fg_status st = FG_OK;
  if (!m->bf16)
    fg_gemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, beta, C, ldc);
  else
    st = bf16_gemm(m, ta, tb, M, N, K, A, lda, B, ldb, beta != 0.0f, C, ldc);
  fg_model_gemm_done(m, t0, st, M, N, K);
}

void fg_model_gemm(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K, const float *A,
                   int64_t lda, const float *B, int64_t ldb, float *C, int64_t ldc) {
  timed_gemm(m, ta, tb, M, N, K, A, lda, B, ldb, 0.0f, C, ldc);
}

void fg_model_gemm_add(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc) {
  timed_gemm(m, ta, tb, M, N, K, A, lda, B, ldb, 1.0f, C, ldc);
}

void fg_model_gemm_h(fg_model *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                     const fg_bf16 *A, int64_t lda, const float *B, int64_t ldb, float *C,
                     int64_t ldc, int add) {
  const double t0 = fg_now();
  fg_status st;
  if (ta) {
    st = fg_bf16_gemm_wgrad_hf(K, M, N, A, lda, B, ldb, C, ldc, add);
  } else if (!tb) {
    st = fg_bf16_gemm_tall(M, K, N, A, lda, B, ldb, C, ldc, add);
  } else {
    st = fg_model_transpose_weight(m, N, K, B, ldb);
    if (st == FG_OK) st = fg_bf16_gemm_tall(M, K, N, A, lda, m->wt, N, C, ldc, add);
  }
  fg_model_gemm_done(m, t0, st, M, N, K);
}

void fg_model_gemm_s(fg_model *m, int l, int ta, int64_t M, int64_t N, int64_t K,
                     const float *B, int64_t ldb, float *C, int64_t ldc) {
  const int64_t lds = ta ? M : K; /* S is n_out x w_in, packed */
  if (m->S16[l])
    fg_model_gemm_h(m, ta, 0, M, N, K, m->S16[l], lds, B, ldb, C, ldc, 0);
  else
    timed_gemm(m, ta, 0, M, N, K, m->S[l], lds, B, ldb, 0.0f, C, ldc);
}

void fg_model_gemm_in(fg_model *m, int l, const float *d, int ta, int64_t M, int64_t N,
                      int64_t K, const float *B, int64_t ldb, float *C, int64_t ldc, int add) {
  const int64_t ldd = m->shape[l].w_in; /* D is n_in x w_in, packed */
  if (!d)
    fg_model_gemm_h(m, ta, 0, M, N, K, m->H16[l], ldd, B, ldb, C, ldc, add);
  else
    timed_gemm(m, ta, 0, M, N, K, d, ldd, B, ldb, add ? 1.0f : 0.0f, C, ldc);
}

/* C16 (n x mm, packed) = A W stored as bf16, A fp32 (a) or bf16 (a16), lda k; timed as a
 * GEMM, a failure kept for the pass (gemm_status). */
void fg_model_tall16(fg_model *m, int64_t n, int64_t k, int64_t mm, const float *a,
                   const fg_bf16 *a16, const float *W, fg_bf16 *C16) {
  const double t0 = fg_now();
  const fg_status st = a16 ? fg_bf16_gemm_tall_16(n, k, mm, a16, k, W, mm, C16, mm)
                           : fg_bf16_gemm_tall_f32_16(n, k, mm, a, k, W, mm, C16, mm);
  fg_model_gemm_done(m, t0, st, n, mm, k);
}

/* dW = Aᵀ dZ (w_in x w_out) with dZ stored as bf16 (fg_model.dz16), A (n_out x w_in) stored as
 * bf16 (a16) or fp32 (a); timed as a GEMM. */
static void wgrad16(fg_model *m, int l, const float *a, const fg_bf16 *a16, float *dW) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  const double t0 = fg_now();
  const fg_status st =
      a16 ? fg_bf16_gemm_wgrad(sh->n_out, wi, wo, a16, wi, m->dz16, wo, dW, wo, 0)
          : fg_bf16_gemm_wgrad_fh(sh->n_out, wi, wo, a, wi, m->dz16, wo, dW, wo, 0);
  fg_model_gemm_done(m, t0, st, wi, wo, sh->n_out);
}

fg_status fg_model_grad_aggregate_t(fg_model *m, fg_scheme *s, int l, const float *dz,
                                    const float *W, float *u, float *out) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  if (m->g16) {
    fg_bf16 *u16 = (fg_bf16 *)(void *)u; /* the first half of u's buffer */
    /* W (wi x wo) transposed, as the fp32 product's nt case does; a failure is the pass's
     * (gemm_status), and every rank still takes part in the aggregation */
    st = fg_model_transpose_weight(m, wi, wo, W, wo);
    if (st == FG_OK)
      fg_model_tall16(m, sh->n_out, wo, wi, dz, m->dz16, m->wt, u16);
    else
      fg_model_gemm_done(m, fg_now(), st, sh->n_out, wi, wo);
    return s->ops->aggregate16_t(s, l, u16, out, wi);
  }
  fg_model_gemm(m, 0, 1, sh->n_out, wi, wo, dz, wo, W, wo, u, wi);
  FG_CHECK(fg_scheme_reduce_input_grad(s, l, u, sh->n_out * wi));
  FG_CHECK(s->ops->aggregate_t(s, l, u, out, wi));
cleanup:
  return st;
}

fg_status fg_model_product_aggregate(fg_model *m, fg_scheme *s, int l, const float *d,
                                     const float *W, float *t, float **out) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  if (m->g16 && s->ops->aggregate16) {
    fg_bf16 *t16 = (fg_bf16 *)(void *)t; /* the first half of t's buffer */
    fg_model_tall16(m, sh->n_in, wi, wo, d, d ? NULL : m->H16[l], W, t16);
    *out = fg_model_out(m, l, t);
    return s->ops->aggregate16(s, l, t16, *out, wo);
  }
  fg_model_gemm_in(m, l, d, 0, sh->n_in, wo, wi, W, wo, t, wo, 0);
  FG_CHECK(fg_scheme_reduce_product(s, l, t, sh->n_in * wo));
  *out = fg_model_out(m, l, t);
  FG_CHECK(s->ops->aggregate(s, l, t, *out, wo));
cleanup:
  return st;
}

void fg_model_bias_grad(fg_model *m, int l, const float *dz) {
  const double t0 = fg_now();
  if (!m->dz16) fg_bias_backward(m->db[l], dz, m->shape[l].n_out, m->shape[l].w_out);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

void fg_model_wgrad_s(fg_model *m, int l, const float *dz, float *dW) {
  const fg_layer_shape *sh = &m->shape[l];
  if (m->dz16)
    wgrad16(m, l, m->S[l], m->S16[l], dW);
  else
    fg_model_gemm_s(m, l, 1, sh->w_in, sh->w_out, sh->n_out, dz, sh->w_out, dW, sh->w_out);
}

void fg_model_wgrad_in(fg_model *m, int l, const float *d, const float *dz, float *dW) {
  const fg_layer_shape *sh = &m->shape[l];
  if (m->dz16)
    wgrad16(m, l, d, d ? NULL : m->H16[l], dW);
  else
    fg_model_gemm_in(m, l, d, 1, sh->w_in, sh->w_out, sh->n_out, dz, sh->w_out, dW, sh->w_out, 0);
}

void fg_model_gemm_dz_wt(fg_model *m, int l, const float *dz, const float *W, float *C, int add) {
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t wi = sh->w_in, wo = sh->w_out;
  if (m->dz16)
    fg_model_gemm_h(m, 0, 1, sh->n_out, wi, wo, m->dz16, wo, W, wo, C, wi, add);
  else
    timed_gemm(m, 0, 1, sh->n_out, wi, wo, dz, wo, W, wo, add ? 1.0f : 0.0f, C, wi);
}

fg_status fg_model_aggregate_t_dz(fg_model *m, fg_scheme *s, int l, const float *dz, float *out) {
  const int64_t wo = m->shape[l].w_out;
  if (m->dz16) return s->ops->aggregate16_t(s, l, m->dz16, out, wo);
  return s->ops->aggregate_t(s, l, dz, out, wo);
}

float *fg_model_out(fg_model *m, int l, const float *busy) {
  m->zout = !m->H16[l + 1] ? m->H[l + 1] : busy == m->work_b ? m->work_a : m->work_b;
  return m->zout;
}

void fg_model_widen(fg_model *m, int l, float *out) {
  const double t0 = fg_now();
  fg_bf16_to_f32(out, m->H16[l], m->shape[l].n_in * m->shape[l].w_in);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

const float *fg_model_in32(fg_model *m, int l, const float *d) {
  if (d) return d;
  fg_model_widen(m, l, m->work_a);
  return m->work_a;
}

fg_status fg_model_aggregate(fg_model *m, fg_scheme *s, int l, const float *d, float *out) {
  const int64_t w = m->shape[l].w_in;
  if (!d && s->ops->aggregate16) return s->ops->aggregate16(s, l, m->H16[l], out, w);
  return s->ops->aggregate(s, l, fg_model_in32(m, l, d), out, w);
}

int fg_model_h16(int bf16, int move_ok, int residual, int eps_learn,
                 const fg_layer_kind *const *kinds, const int *agg, const int *s16, int L,
                 int l) {
  const int k = l - 1; /* the layer that writes H[l] */
  const fg_layer_kind *p;
  if (!bf16 || residual || l < 0 || l >= L) return 0;
  if (l == 0) return kinds[0]->aggregates && !agg[0]; /* D_0, read by GEMMs only */
  p = kinds[k];
  if (p->aggregates && !agg[k] && k == 0) return 0; /* dT in H[1] */
  if (p->aggregates && agg[k] && s16[k] &&
      (p->s_scratch == 1 || (p->s_scratch == 2 && (eps_learn || move_ok))))
    return 0; /* S's fp32 stand-in in backward */
  return 1;
}

int fg_model_features16(int bf16, int residual, int learn_features) {
  return bf16 && !residual && !learn_features;
}

int fg_model_x16(const fg_model_config *cfg, const fg_scheme *s) {
  return fg_model_features16(cfg->bf16, cfg->residual, s->learn_features);
}

/* Rows [r0, r0 + rows) of dropout(X) (rows of X through the scheme's row map where it has one)
 * into out (fp32) or out16: of bf16(X) under fg_model.x16, read from the scheme's bf16 copy or
 * rounded from its fp32 features as they are read. */
static void x_rows(const fg_model *m, const fg_scheme *s, float p, uint64_t seed, uint64_t epoch,
                   int64_t r0, int64_t rows, float *out, fg_bf16 *out16) {
  const fg_layer_shape *sh = &m->shape[0];
  const int64_t w = sh->w_in, off = s->feature_rows ? 0 : r0 * w;
  const int64_t *map = s->feature_rows ? s->feature_rows + r0 : NULL;
  if (m->x16) {
    const float *x = s->features16 ? NULL : s->features + off;
    const fg_bf16 *x16 = s->features16 ? s->features16 + off : NULL;
    fg_dropout_rows_x16(out, out16, x, x16, map, rows, w, p, seed, epoch, 0, sh->ids_in + r0,
                        sh->col0_in);
  } else if (out16) {
    fg_dropout_rows_bf16(out16, m->H[0] + off, map, rows, w, p, seed, epoch, 0, sh->ids_in + r0,
                         sh->col0_in);
  } else {
    fg_dropout_rows(out, m->H[0] + off, map, rows, w, p, seed, epoch, 0, sh->ids_in + r0,
                    sh->col0_in);
  }
}

/* Rows [r0, r0 + rows) of the layer-0 input D_0 = dropout(X) (with label propagation's
 * embedding added first) into out (rows x w_in). */
static void input_rows(fg_model *m, const fg_scheme *s, float p, uint64_t seed, uint64_t epoch,
                       int64_t r0, int64_t rows, float *out) {
  const fg_layer_shape *sh = &m->shape[0];
  const int64_t w = sh->w_in;
  if (m->lp_off < 0) {
    x_rows(m, s, p, seed, epoch, r0, rows, out, NULL);
  } else {
    /* X + Y E (a label node's row gets its label's embedding), then dropout with the masks
     * fg_dropout_rows draws */
    const float *E = m->params + m->lp_off + sh->col0_in; /* this rank's columns of E */
    x_rows(m, s, 0.0f, seed, epoch, r0, rows, out, NULL);
    for (int64_t i = 0; i < rows; i++)
      if (m->lp_label[r0 + i] >= 0)
        fg_axpy(out + i * w, 1.0f, E + (int64_t)m->lp_label[r0 + i] * m->widths[0], w);
    if (p > 0.0f)
      fg_bias_relu_dropout(out, out, NULL, rows, w, 0, p, seed, epoch, 0, sh->ids_in + r0,
                           sh->col0_in);
  }
}

void fg_model_redo_input(fg_model *m, const fg_scheme *s, float p, uint64_t seed, uint64_t epoch,
                         float *out) {
  const double t0 = fg_now();
  input_rows(m, s, p, seed, epoch, 0, m->shape[0].n_in, out);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

/* D_0 into H16[0] (fg_model.H16): the dropout pass rounds each row as it writes it, one
 * parallel pass over the rows and no fp32 copy (layer 0's input is not label-propagated here:
 * fg_model_h16) */
static void input16(fg_model *m, const fg_scheme *s, float p, uint64_t seed, uint64_t epoch) {
  const fg_layer_shape *sh = &m->shape[0];
  const double t0 = fg_now();
  assert(m->lp_off < 0);
  x_rows(m, s, p, seed, epoch, 0, sh->n_in, NULL, m->H16[0]);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

void fg_model_input_axpy(fg_model *m, const fg_scheme *s, float alpha, float *y) {
  const fg_layer_shape *sh = &m->shape[0];
  const double t0 = fg_now();
  assert(m->x16 && m->lp_off < 0);
  fg_dropout_rows_x16_axpy(y, alpha, s->features16 ? NULL : s->features, s->features16,
                           s->feature_rows, sh->n_in, sh->w_in, m->in_p, m->in_seed,
                           m->in_epoch, 0, sh->ids_in, sh->col0_in);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

float *fg_model_other_work(const fg_model *m, const float *x) {
  return x == m->work_a ? m->work_b : m->work_a;
}

/* S[l] as bf16 where H[l + 1] can stand in for its fp32 uses: a layer that aggregates first
 * into no wider a buffer than its output (w_in <= w_out), not the last (whose output, the
 * logits, the trainer reads). */
int fg_model_s16(int bf16, int agg_first, int l, int L, int64_t w_in, int64_t w_out) {
  return bf16 && agg_first && l + 1 < L && w_in <= w_out;
}

float *fg_model_s_buf(const fg_model *m, int l) {
  if (!m->S16[l]) return m->S[l];
  return m->H16[l + 1] ? m->work_b : m->H[l + 1]; /* (fg_model_out's buffer beside work_a) */
}

void fg_model_s_store(fg_model *m, int l) {
  if (!m->S16[l]) return;
  const double t0 = fg_now();
  fg_bf16_from_f32(m->S16[l], fg_model_s_buf(m, l), m->shape[l].n_out * m->shape[l].w_in);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
}

/* z = LayerNorm of layer l's output z, in place, keeping X[l] and rstd[l]; the row
 * statistics over the output's column split (the scheme's row_sum of layer l). */
static fg_status layer_norm(fg_model *m, fg_scheme *s, int l, float *z) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t n = sh->n_out, w = sh->w_out, W = m->widths[l + 1];
  fg_ln_row_sums(z, n, w, NULL, m->ln_part);
  FG_CHECK(fg_scheme_row_sum(s, l, m->ln_part, n));
  fg_ln_stats(m->ln_part, n, W, 0, m->ln_mean, NULL);
  fg_ln_row_sums(z, n, w, m->ln_mean, m->ln_part);
  FG_CHECK(fg_scheme_row_sum(s, l, m->ln_part, n));
  fg_ln_stats(m->ln_part, n, W, 1, NULL, m->rstd[l]);
  fg_ln_forward(z, m->X[l], n, w, m->ln_mean, m->rstd[l], m->b[l] + w, m->b[l] + 2 * w);
cleanup:
  return st;
}

/* g (layer l's n_out x w_out) = the gradient of its norm's input from that of its output, in
 * place; the scale's and shift's gradients into db[l]'s vectors. */
static fg_status layer_norm_backward(fg_model *m, fg_scheme *s, int l, float *g) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t n = sh->n_out, w = sh->w_out;
  fg_ln_param_grads(g, m->X[l], n, w, fg_model_other_work(m, g), m->db[l] + w,
                    m->db[l] + 2 * w);
  fg_ln_backward_sums(g, m->X[l], m->b[l] + w, n, w, m->ln_part);
  FG_CHECK(fg_scheme_row_sum(s, l, m->ln_part, 2 * n));
  fg_ln_backward(g, m->X[l], m->b[l] + w, m->ln_part, m->rstd[l], n, w, m->widths[l + 1]);
cleanup:
  return st;
}

/* z = BatchNorm of layer l's output z, in place. Training: the columns' statistics over
 * the graph's distinct rows (the scheme's col_sum of layer l), keeping X[l] and rstd[l], and the
 * running statistics updated in the gathered block and in this rank's piece of it (the block
 * is gathered again from the pieces before every forward); evaluation: the running ones. */
static fg_status batch_norm(fg_model *m, fg_scheme *s, int l, int training, float *z) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t n = sh->n_out, w = sh->w_out, N = s->n_global;
  float *run = m->b[l] + 3 * w; /* running mean, then variance */
  if (!training) {
    fg_bn_eval_stats(run, run + w, w, m->ln_mean, m->ln_part);
    fg_bn_forward(z, NULL, n, w, m->ln_mean, m->ln_part, m->b[l] + w, m->b[l] + 2 * w);
    return FG_OK;
  }
  fg_bn_col_sums(z, n, w, NULL, m->ln_part);
  FG_CHECK(fg_scheme_col_sum(s, l, m->ln_part, w));
  fg_bn_stats(m->ln_part, w, N, 0, m->ln_mean, NULL);
  fg_bn_col_sums(z, n, w, m->ln_mean, m->ln_part);
  FG_CHECK(fg_scheme_col_sum(s, l, m->ln_part, w));
  fg_bn_stats(m->ln_part, w, N, 1, NULL, m->rstd[l]);
  fg_bn_forward(z, m->X[l], n, w, m->ln_mean, m->rstd[l], m->b[l] + w, m->b[l] + 2 * w);
  fg_bn_running(m->ln_mean, m->ln_part, w, N, run, run + w);
  if (m->wblk) { /* the piece: elements bp0.. of each of the two vectors */
    float *piece = m->params + m->poff[l] + m->mats[l] * sh->wp_len + 3 * sh->bp_len;
    memcpy(piece, run + sh->bp0, (size_t)sh->bp_len * sizeof(float));
    memcpy(piece + sh->bp_len, run + w + sh->bp0, (size_t)sh->bp_len * sizeof(float));
  }
cleanup:
  return st;
}

/* g (layer l's n_out x w_out) = the gradient of its BatchNorm's input from that of its output,
 * in place: through the batch's statistics, whose column sums of g and g xhat are summed over
 * the distinct rows; the scale's and shift's gradients (this rank's rows: the gradient
 * reduction sums them) into db[l]'s vectors, and 0 for the running statistics. */
static fg_status batch_norm_backward(fg_model *m, fg_scheme *s, int l, float *g) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[l];
  const int64_t n = sh->n_out, w = sh->w_out;
  float *db = m->db[l];
  fg_bn_backward_sums(g, m->X[l], n, w, m->ln_part);
  for (int64_t j = 0; j < w; j++) {
    db[w + j] = (float)m->ln_part[w + j];
    db[2 * w + j] = (float)m->ln_part[j];
  }
  memset(db + 3 * w, 0, (size_t)(2 * w) * sizeof(float));
  FG_CHECK(fg_scheme_col_sum(s, l, m->ln_part, 2 * w));
  fg_bn_backward(g, m->X[l], m->b[l] + w, m->ln_part, m->rstd[l], n, w, s->n_global);
cleanup:
  return st;
}

/* A pass's outcome: its own error, else the first GEMM failure during it (bf16 only), which is
 * then cleared. Every rank agrees on a pass's outcome in the trainer (fg_dist_agree). */
static fg_status gemm_outcome(fg_model *m, fg_status st) {
  const fg_status g = m->gemm_status;
  m->gemm_status = FG_OK;
  return st != FG_OK ? st : g;
}

fg_status fg_model_forward(fg_model *m, fg_scheme *s, int training, float p, uint64_t seed,
                           uint64_t epoch) {
  fg_status st = FG_OK;
  const int L = m->layers;
  const int drop = training && p > 0.0f;
  const float pp = drop ? p : 0.0f;
  double t0;
  s->epoch = epoch; /* keys the scheme's own random draws (quantized messages) */
  m->in_p = pp;
  m->in_seed = seed;
  m->in_epoch = epoch;
  for (int l = 0; l < L && m->wblk; l++)
    FG_CHECK(s->ops->gather_weights(s, l, &m->shape[l], m->mats[l], m->vecs[l],
                                    m->scal[l], m->params + m->poff[l], m->W[l]));
  if (m->input) FG_CHECK(s->ops->gather_input(s, m->params + m->feat_off, m->input));
  t0 = fg_now();
  for (int l = 0; l < L; l++) {
    const fg_layer_shape *sh = &m->shape[l];
    /* D_l (n_in, w_in): for l > 0 already dropped out in place; NULL: stored as bf16 */
    const float *d = m->H[l];
    float *out; /* (n_out, w_out): H[l + 1], or where the kind put it (H16[l + 1]) */
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (l == 0 && (drop || s->feature_rows || m->lp_off >= 0 || m->x16)) {
      /* D_0 = dropout(X), its rows gathered in the scheme's order when they are stored in
       * another (--reorder borrows the dataset's features instead of permuting a copy); kept
       * as bf16 where only GEMMs read it (H16[0]: backward reads it there, not redone) */
      if (m->H16[0]) {
        input16(m, s, pp, seed, epoch);
        d = NULL;
      } else {
        fg_model_redo_input(m, s, pp, seed, epoch, m->work_a);
        d = m->work_a;
      }
    }
    FG_CHECK(m->kinds[l]->forward(m, s, l, d));
    t0 = fg_now();
    if (m->fuse && m->H16[l + 1]) continue; /* the layer's products swept it (fuse16.c) */
    out = m->H16[l + 1] ? m->zout : m->H[l + 1];
    /* out = dropout_{l+1}(relu(norm(out + b))): without a norm in one sweep; the last layer
     * only adds the bias; the sweep writes H16[l + 1] rounded where it is stored so */
    if (m->vecs[l] > 1) {
      fg_bias_add(out, m->b[l], sh->n_out, sh->w_out);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      /* (its time: elementwise passes and row or column reductions) */
      if (m->norm == FG_NORM_BATCH)
        FG_CHECK(batch_norm(m, s, l, training, out));
      else
        FG_CHECK(layer_norm(m, s, l, out));
      t0 = fg_now();
    }
    if (fg_residual_end(m, l)) {
      /* A = relu(norm(out + b)) kept for its mask; H = A + R (kept when H is a source);
       * then the next layer's dropout in place */
      const int64_t n = sh->n_out * sh->w_out;
      fg_bias_relu_dropout(out, out, m->vecs[l] > 1 ? NULL : m->b[l], sh->n_out, sh->w_out, 1,
                           0.0f, seed, epoch, (uint64_t)(l + 1), sh->ids_out, sh->col0_out);
      memcpy(m->Ares[l], out, (size_t)n * sizeof(float));
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      FG_CHECK(fg_residual_forward(m, s, l));
      t0 = fg_now();
      if (fg_residual_source(m, l + 1)) memcpy(m->Hres[l + 1], out, (size_t)n * sizeof(float));
      fg_bias_relu_dropout(out, out, NULL, sh->n_out, sh->w_out, 0, pp, seed, epoch,
                           (uint64_t)(l + 1), sh->ids_out, sh->col0_out);
      continue;
    }
    {
      const float *b = m->vecs[l] > 1 ? NULL : m->b[l];
      const float pl = l + 1 < L && (l + 1) % m->kind->stages == 0 ? pp : 0.0f;
      if (m->H16[l + 1]) /* rounded as the sweep writes it (out stays the pre-activation) */
        fg_bias_relu_dropout_bf16(m->H16[l + 1], out, b, sh->n_out, sh->w_out, l + 1 < L, pl,
                                  seed, epoch, (uint64_t)(l + 1), sh->ids_out, sh->col0_out);
      else
        fg_bias_relu_dropout(out, out, b, sh->n_out, sh->w_out, l + 1 < L, pl, seed, epoch,
                             (uint64_t)(l + 1), sh->ids_out, sh->col0_out);
    }
  }
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
cleanup:
  return gemm_outcome(m, st);
}

/* Whether layer k's dZ is stored as bf16 (fg_model.dz16) by the backward's mask pass. */
static int dz16_ok(const fg_model *m, int k) {
  return m->g16 && m->kinds[k]->dz16 && m->H16[k + 1] && m->vecs[k] == 1 &&
         !fg_residual_end(m, k) && !(k == 0 && m->input); /* (input_grad takes fp32) */
}

fg_status fg_model_backward(fg_model *m, fg_scheme *s, float *dlogits, float p, uint64_t seed,
                            uint64_t epoch) {
  fg_status st = FG_OK;
  const float scale = p > 0.0f ? 1.0f / (1.0f - p) : 1.0f;
  float *cur = dlogits; /* dZ_l (n_out, w_out) */
  s->epoch = epoch;
  m->dz16 = m->dz16_next = NULL;
  for (int l = m->layers - 1; l >= 0; l--) {
    const fg_layer_shape *sh = &m->shape[l];
    float *v = NULL; /* dD_l (n_in, w_in) */
    double t0;
    st = m->kinds[l]->backward(m, s, l, cur, p, seed, epoch, &v);
    m->dz16 = NULL;
    FG_CHECK(st);
    if (m->norm == FG_NORM_BATCH && m->vecs[l] > 1) {
      /* BatchNorm subtracts each column's batch mean, so b does not change the training loss:
       * its gradient is exactly 0, and the column sums of dZ are only rounding noise, which
       * Adam's first steps (m / sqrt(v)) would turn into full steps of a different sign on
       * different thread and rank counts, moving what the evaluation forward computes */
      memset(m->db[l], 0, (size_t)sh->w_out * sizeof(float));
    }
    if (m->wblk)
      FG_CHECK(s->ops->reduce_weight_grads(s, l, sh, m->mats[l], m->vecs[l], m->scal[l],
                                           m->dW[l], m->grads + m->poff[l]));
    if (l == 0) {
      /* learned features: the layer left the piece's gradient of dD_0; dropout's mask on it */
      t0 = fg_now();
      if (m->lp_off >= 0) {
        /* label propagation: dX' = dropout's backward of dD_0; each label node's row adds to
         * its label's row of dE, on the primary copy of the rows (3d holds replicas along c),
         * then summed over every rank: by the gradient all-reduce of a 1D scheme, here for a
         * scheme that reduces its pieces itself */
        const int64_t w = sh->w_in, F = m->widths[0], nE = F * m->widths[m->layers];
        float *dE = m->grads + m->lp_off;
        memset(dE, 0, (size_t)nE * sizeof(float));
        if (p > 0.0f)
          fg_bias_relu_dropout(v, v, NULL, sh->n_in, w, 0, p, seed, epoch, 0, sh->ids_in,
                               sh->col0_in);
        for (int64_t i = 0; sh->in_primary && i < sh->n_in; i++)
          if (m->lp_label[i] >= 0)
            fg_axpy(dE + (int64_t)m->lp_label[i] * F + sh->col0_in, 1.0f, v + i * w, w);
        m->seconds[FG_TIME_OTHER] += fg_now() - t0;
        if (!s->ops->reduce_grads) FG_CHECK(fg_dist_allreduce_f32(s->dist, dE, nE));
        t0 = fg_now();
      }
      if (m->input && p > 0.0f) {
        float *g = m->grads + m->feat_off;
        fg_bias_relu_dropout(g, g, NULL, s->feat_rows, sh->w_in, 0, p, seed, epoch, 0,
                             sh->ids_in + s->feat_row0, sh->col0_in);
      }
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      break;
    }
    if (m->dz16_next) { /* the layer's producer made dZ_{l-1} through the mask (fuse16.c) */
      m->dz16 = m->dz16_next;
      m->dz16_next = NULL;
      cur = NULL;
      continue;
    }
    t0 = fg_now();
    if (fg_residual_end(m, l - 1)) {
      /* dH_l = dropout's backward of dD_l, plus what l's own block passed back when l is a
       * source; R's path takes dH_l, the ReLU's mask comes from the kept A */
      const int64_t n = sh->n_in * sh->w_in;
      fg_bias_relu_dropout(v, v, NULL, sh->n_in, sh->w_in, 0, p, seed, epoch, (uint64_t)l,
                           sh->ids_in, sh->col0_in);
      if (fg_residual_source(m, l)) fg_axpy(v, 1.0f, m->Hres[l], n);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      FG_CHECK(fg_residual_backward(m, s, l - 1, v));
      t0 = fg_now();
      fg_masked_scale(v, m->Ares[l - 1], n, 1.0f);
    } else {
      /* dZ_{l-1} = dD_l where D_l > 0 (kept by dropout and positive after ReLU), times
       * 1/(1-p) where dropout applied (a model layer's input) */
      const float sc = l % m->kind->stages == 0 ? scale : 1.0f;
      if (dz16_ok(m, l - 1)) { /* stored as bf16 over D_l (dead now), db taken on the way */
        fg_masked_scale_bias_bf16(m->H16[l], v, m->H16[l], sh->n_in, sh->w_in, sc,
                                  m->db[l - 1]);
        m->dz16 = m->H16[l];
      } else if (m->H16[l]) {
        fg_masked_scale_bf16(v, m->H16[l], sh->n_in * sh->w_in, sc);
      } else {
        fg_masked_scale(v, m->H[l], sh->n_in * sh->w_in, sc);
      }
    }
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (m->vecs[l - 1] > 1)
      FG_CHECK(m->norm == FG_NORM_BATCH ? batch_norm_backward(m, s, l - 1, v)
                                        : layer_norm_backward(m, s, l - 1, v));
    cur = v;
  }
cleanup:
  return gemm_outcome(m, st);
}

fg_status fg_model_reduce_grads(fg_model *m, fg_scheme *s) {
  return fg_scheme_reduce_grads(s, m->grads, m->n_params);
}

fg_status fg_model_softmax_stats(fg_model *m, fg_scheme *s, const uint8_t *select) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &m->shape[m->layers - 1];
  const float *z = m->H[m->layers];
  double t0 = fg_now();
  if (!s->ops->row_max) { /* whole rows: one sweep */
    fg_xent_row_stats(z, sh->n_out, sh->w_out, select, m->row_max, m->row_sum);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    return FG_OK;
  }
  fg_xent_block_max(z, sh->n_out, sh->w_out, sh->col0_out, select, m->row_max);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  FG_CHECK(fg_scheme_row_max(s, m->layers - 1, m->row_max, sh->n_out));
  t0 = fg_now();
  fg_xent_block_expsum(z, sh->n_out, sh->w_out, m->row_max, select, m->row_sum);
  m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  FG_CHECK(fg_scheme_row_sum(s, m->layers - 1, m->row_sum, sh->n_out));
cleanup:
  return st;
}

double fg_model_xent(const fg_model *m, const fg_scheme *s, const uint8_t *select, float scale,
                     float *dlogits, int64_t *count, int64_t *correct) {
  const fg_layer_shape *sh = &m->shape[m->layers - 1];
  return fg_xent_block_finish(m->H[m->layers], sh->n_out, sh->w_out, sh->col0_out, s->labels,
                              select, m->row_max, m->row_sum, scale, dlogits, sh->out_primary,
                              count, correct);
}

double fg_model_bce(const fg_model *m, const fg_scheme *s, const uint8_t *select, float scale,
                    float *dlogits, fg_bce_counts *counts) {
  const fg_layer_shape *sh = &m->shape[m->layers - 1];
  return fg_sigmoid_bce(m->H[m->layers], sh->n_out, sh->w_out, sh->col0_out, s->targets,
                        s->num_tasks, select, scale, dlogits, sh->out_primary, counts);
}

void fg_model_adam(fg_model *m, fg_adam_params adam, const float *wd, int64_t t) {
  for (int l = 0; l < m->layers; l++) {
    const fg_layer_shape *sh = &m->shape[l];
    const int64_t nw = m->mats[l] * sh->wp_len, o = m->poff[l], ob = o + nw;
    fg_adam_step(m->params + o, m->grads + o, m->adam_m + o, m->adam_v + o, nw, adam, wd[l], t);
    /* b and a norm's scale and shift, and the scalars: no decay; BatchNorm's running
     * statistics (the last two vectors) are state, not trained */
    const int trained =
        m->norm == FG_NORM_BATCH && m->vecs[l] > 1 ? m->vecs[l] - 2 : m->vecs[l];
    fg_adam_step(m->params + ob, m->grads + ob, m->adam_m + ob, m->adam_v + ob,
                 trained * sh->bp_len, adam, 0.0f, t);
    if (m->scal[l]) {
      const int64_t os = ob + m->vecs[l] * sh->bp_len;
      fg_adam_step(m->params + os, m->grads + os, m->adam_m + os, m->adam_v + os, m->scal[l],
                   adam, 0.0f, t);
    }
  }
  if (m->feat_off >= 0) {
    const int64_t o = m->feat_off;
    fg_adam_step(m->params + o, m->grads + o, m->adam_m + o, m->adam_v + o, m->n_params - o, adam,
                 0.0f, t);
  }
  if (m->lp_off >= 0) { /* the label embedding: no decay */
    const int64_t o = m->lp_off;
    fg_adam_step(m->params + o, m->grads + o, m->adam_m + o, m->adam_v + o,
                 m->widths[0] * m->widths[m->layers], adam, 0.0f, t);
  }
}

int64_t fg_model_param_index(const fg_model *m, int64_t *idx, uint8_t *own) {
  int64_t k = 0, off = 0;
  for (int l = 0; l < m->layers; l++) {
    const fg_layer_shape *sh = &m->shape[l];
    const int64_t dout = m->widths[l + 1], nw = m->widths[l] * dout;
    const int64_t boff = off + m->mats[l] * nw;
    for (int mat = 0; mat < m->mats[l]; mat++)
      for (int64_t e = sh->wp0; e < sh->wp0 + sh->wp_len; e++, k++) {
        if (idx)
          idx[k] = off + mat * nw + (sh->col0_in + e / sh->w_out) * dout + sh->col0_out +
                   e % sh->w_out;
        if (own) own[k] = (uint8_t)sh->w_primary;
      }
    for (int v = 0; v < m->vecs[l]; v++)
      for (int64_t e = sh->bp0; e < sh->bp0 + sh->bp_len; e++, k++) {
        if (idx) idx[k] = boff + v * dout + sh->col0_out + e;
        if (own) own[k] = (uint8_t)sh->b_primary;
      }
    /* a scalar is on every rank: kept from the one with the primary copy of b's first element */
    for (int j = 0; j < m->scal[l]; j++, k++) {
      if (idx) idx[k] = boff + m->vecs[l] * dout + j;
      if (own) own[k] = (uint8_t)(sh->b_primary && sh->bp0 == 0 && sh->col0_out == 0);
    }
    off = boff + m->vecs[l] * dout + m->scal[l];
  }
  /* the label embedding after the layers: whole on every rank, kept (as a scalar) from the
   * rank with the primary copy of layer 0's first b element */
  for (int64_t j = 0; m->lp_off >= 0 && j < m->widths[0] * m->widths[m->layers]; j++, k++) {
    const fg_layer_shape *sh = &m->shape[0];
    if (idx) idx[k] = off + j;
    if (own) own[k] = (uint8_t)(sh->b_primary && sh->bp0 == 0 && sh->col0_out == 0);
  }
  return k;
}
