/* train3d.c -- the 3D (Plexus) trainer behind fg_train's epoch loop: layout (scheme_3d.c) and
 * model (gcn3d.c). */
#include <stdio.h>
#include <string.h>

#include "model/fg_model3d.h"
#include "schemes/fg_scheme3d.h"
#include "train/fg_train.h"

typedef struct tr3d {
  fg_layout3d *t;
  fg_gcn3d *m;
  float *wd;       /* (layers) weight decay of each layer's weights */
  char desc[512];
} tr3d;

static fg_status tr3d_train_step(fg_trainer *tr, const fg_train_config *cfg, int epoch,
                                 int64_t adam_t, double *loss_sum) {
  fg_status st = FG_OK;
  tr3d *im = tr->impl;
  fg_dist *d = tr->dist;
  const float p = (float)cfg->dropout;
  const fg_adam_params adam = {(float)cfg->lr, 0.9f, 0.999f, 1e-8f};
  int64_t cnt = 0, cor = 0;
  d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_gcn3d_forward(im->m, im->t, 1, p, cfg->seed, (uint64_t)epoch));
  d->phase = FG_PHASE_METRICS; /* the softmax's row reductions and the loss sum */
  FG_CHECK(fg_gcn3d_loss(im->m, im->t, 1.0f / (float)tr->counts[0], loss_sum, &cnt, &cor));
  d->phase = FG_PHASE_BACKWARD; /* includes the gradients' reduce-scatters */
  FG_CHECK(fg_gcn3d_backward(im->m, im->t, p, cfg->seed, (uint64_t)epoch));
  fg_gcn3d_adam(im->m, adam, im->wd, adam_t);
cleanup:
  return st;
}

static fg_status tr3d_evaluate(fg_trainer *tr, const fg_train_config *cfg, int epoch,
                               double acc[3], double *valid_loss) {
  fg_status st = FG_OK;
  tr3d *im = tr->impl;
  double sums[7];
  tr->dist->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_gcn3d_forward(im->m, im->t, 0, 0.0f, cfg->seed, (uint64_t)epoch));
  tr->dist->phase = FG_PHASE_METRICS;
  FG_CHECK(fg_gcn3d_eval_sums(im->m, im->t, sums));
  for (int k = 0; k < 3; k++) acc[k] = sums[2 * k + 1] > 0 ? sums[2 * k] / sums[2 * k + 1] : 0.0;
  *valid_loss = sums[3] > 0 ? sums[6] / sums[3] : 0.0;
cleanup:
  return st;
}

static fg_status tr3d_export(fg_trainer *tr) {
  tr3d *im = tr->impl;
  fg_gcn *s = tr->state;
  return fg_gcn3d_gather_state(im->m, im->t, s ? s->params : NULL, s ? s->adam_m : NULL,
                               s ? s->adam_v : NULL);
}

static fg_status tr3d_import(fg_trainer *tr) {
  tr3d *im = tr->impl;
  fg_gcn *s = tr->state;
  return fg_gcn3d_scatter_state(im->m, im->t, s ? s->params : NULL, s ? s->adam_m : NULL,
                                s ? s->adam_v : NULL);
}

static fg_status tr3d_gather_output(fg_trainer *tr, int which, float *out) {
  tr3d *im = tr->impl;
  return fg_gcn3d_gather_output(im->m, im->t, which, out);
}

static void tr3d_timers(const fg_trainer *tr, double *spmm, double *gemm, double *spmm_bytes) {
  const tr3d *im = tr->impl;
  *spmm = im->t->seconds_spmm;
  *gemm = im->m->seconds[FG_TIME_GEMM];
  *spmm_bytes = im->t->spmm_bytes;
}

static void tr3d_destroy(fg_trainer *tr) {
  tr3d *im = tr->impl;
  if (im) {
    fg_gcn3d_destroy(&im->m);
    fg_layout3d_destroy(&im->t);
    free(im->wd);
    free(im);
  }
  fg_trainer_free_common(tr);
}

static const fg_trainer_ops tr3d_ops = {tr3d_train_step, tr3d_evaluate, tr3d_export,
                                        tr3d_import,     tr3d_gather_output, tr3d_timers,
                                        tr3d_destroy};

/* Rank 0: a model shell in the serial layout for checkpoints. */
static fg_status state_shell(fg_trainer *tr) {
  fg_status st = FG_OK;
  fg_gcn *s = NULL;
  FG_CALLOC(s, 1);
  tr->state = s;
  s->layers = tr->layers;
  s->n_params = tr->n_params;
  FG_ALLOC(s->widths, tr->layers + 1);
  memcpy(s->widths, tr->widths, (size_t)(tr->layers + 1) * sizeof *s->widths);
  s->params = fg_malloc_aligned((size_t)FG_MAX(tr->n_params, 1) * sizeof(float));
  s->adam_m = fg_malloc_aligned((size_t)FG_MAX(tr->n_params, 1) * sizeof(float));
  s->adam_v = fg_malloc_aligned((size_t)FG_MAX(tr->n_params, 1) * sizeof(float));
  FG_REQUIRE(s->params && s->adam_m && s->adam_v, FG_ERR_NOMEM,
             "out of memory for a copy of %lld parameters", (long long)tr->n_params);
cleanup:
  return st;
}

fg_status fg_trainer_3d_create(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                               const int g[3], fg_trainer **out) {
  fg_status st = FG_OK;
  fg_trainer *tr = NULL;
  tr3d *im = NULL;
  fg_layout3d_config lc;
  const int L = cfg->layers;
  *out = NULL;
  memset(&lc, 0, sizeof lc);
  memcpy(lc.grid, g, sizeof lc.grid);
  lc.layers = L;
  lc.seed = cfg->seed;
  lc.normalize_features = cfg->normalize_features;
  lc.learn_features = cfg->learn_features;
  lc.verbose = cfg->verbose;
  st = fg_perm_kind_from(cfg->order, cfg->double_perm, &lc.perm);
  if (st == FG_OK && cfg->agg_order == FG_AGG_LAST)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--scheme 3d aggregates first in every layer (Plexus' order); "
                      "--agg-order last is not available");
  if (st == FG_OK && cfg->overlap)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--overlap is for the 1d schemes; --scheme 3d overlaps with --agg-blocks");
  if (st == FG_OK) {
    tr = fg_calloc_array(1, sizeof *tr);
    im = fg_calloc_array(1, sizeof *im);
    if (!tr || !im) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  FG_CHECK(fg_dist_agree(d, st));
  tr->ops = &tr3d_ops;
  tr->dist = d;
  tr->impl = im; /* from here on tr3d_destroy frees im */
  tr->layers = L;
  FG_CHECK(fg_layout3d_create(d, ds, &lc, &im->t));
  tr->n_nodes = im->t->n_global;
  st = FG_OK;
  tr->widths = fg_malloc_array((size_t)L + 1, sizeof *tr->widths);
  im->wd = fg_malloc_array((size_t)L, sizeof *im->wd);
  if (!tr->widths || !im->wd) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  tr->widths[0] = im->t->num_features;
  for (int l = 1; l < L; l++) tr->widths[l] = cfg->widths ? cfg->widths[l - 1] : cfg->hidden;
  tr->widths[L] = im->t->num_classes;
  for (int l = 0; l < L; l++)
    im->wd[l] = (cfg->weight_decay_layers == FG_WD_ALL || l == 0) ? (float)cfg->weight_decay
                                                                  : 0.0f;
  {
    const char *env = getenv("FULLGRAPH_DW_ORDER"); /* benchmarks: force a dW form */
    fg_gcn3d_config mc = {L, tr->widths, cfg->seed, cfg->agg_blocks, 0};
    if (env && (env[0] == '1' || env[0] == '2') && env[1] == '\0') mc.dw_order = env[0] - '0';
    FG_CHECK(fg_gcn3d_create(&mc, im->t, &im->m));
  }
  tr->n_params = im->m->n_params_global;
  st = d->rank == 0 ? state_shell(tr) : FG_OK;
  FG_CHECK(fg_dist_agree(d, st));
  {
    /* each logit row lives on every rank of its c block: count it on one */
    const fg_layer3d_geom *gl = &im->m->geom[L - 1];
    if (im->t->q[gl->a] == 0 && im->t->q[gl->b] == 0)
      for (int64_t i = 0; i < im->t->out_rows; i++)
        if (im->t->split[i] >= 0 && im->t->split[i] < 3) tr->counts[im->t->split[i]]++;
    FG_CHECK(fg_dist_allreduce_i64(d, tr->counts, 3));
  }
  {
    int k = snprintf(im->desc, sizeof im->desc,
                     "3d: grid %dx%dx%d, %s permutation, %d adjacency shard(s) per rank, "
                     "agg-blocks %d%s; dW as",
                     g[0], g[1], g[2], fg_perm_kind_name(lc.perm), im->t->nkeys, cfg->agg_blocks,
                     cfg->learn_features ? ", learned features" : "");
    for (int l = 0; l < L && k > 0 && (size_t)k < sizeof im->desc; l++)
      k += snprintf(im->desc + k, sizeof im->desc - (size_t)k, " %s",
                    im->m->dw_reversed[l] ? "(dQᵀH)ᵀ" : "HᵀdQ");
    tr->description = im->desc;
  }
  *out = tr;
  tr = NULL;
  im = NULL;
cleanup:
  if (tr && tr->impl) {
    tr3d_destroy(tr);
  } else {
    free(im);
    free(tr);
  }
  return st;
}
