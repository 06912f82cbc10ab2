/* trainer.c -- the epoch loop: train step, evaluation, metrics, checkpoints, outputs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io/fg_io.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "schemes/fg_scheme.h"
#include "schemes/fg_scheme3d.h"
#include "train/fg_membudget.h"
#include "train/fg_train.h"

fg_train_config fg_train_config_default(void) {
  fg_train_config c;
  memset(&c, 0, sizeof c);
  /* Kipf & Welling's Cora configuration */
  c.epochs = 200;
  c.layers = 2;
  c.hidden = 16;
  c.lr = 0.01;
  c.dropout = 0.5;
  c.weight_decay = 5e-4;
  c.weight_decay_layers = FG_WD_FIRST;
  c.agg_order = FG_AGG_AUTO;
  c.agg_blocks = 1;
  c.verbose = 1;
  return c;
}

static fg_status validate(const fg_train_config *c) {
  fg_status st = FG_OK;
  FG_REQUIRE(c->epochs >= 0, FG_ERR_INVALID_ARG, "--epochs must be >= 0, got %d", c->epochs);
  FG_REQUIRE(c->layers >= 1 && c->layers <= 64, FG_ERR_INVALID_ARG,
             "--layers must be in [1, 64], got %d", c->layers);
  FG_REQUIRE(c->widths || c->hidden >= 1, FG_ERR_INVALID_ARG,
             "--hidden must be >= 1, got %d", c->hidden);
  FG_REQUIRE(isfinite(c->lr) && c->lr > 0, FG_ERR_INVALID_ARG, "--lr must be > 0, got %g",
             c->lr);
  FG_REQUIRE(c->dropout >= 0 && c->dropout < 1, FG_ERR_INVALID_ARG,
             "--dropout must be in [0, 1), got %g", c->dropout);
  FG_REQUIRE(isfinite(c->weight_decay) && c->weight_decay >= 0, FG_ERR_INVALID_ARG,
             "--weight-decay must be >= 0, got %g", c->weight_decay);
  FG_REQUIRE(c->checkpoint_every >= 0, FG_ERR_INVALID_ARG,
             "--checkpoint-every must be >= 0, got %d", c->checkpoint_every);
  FG_REQUIRE(!c->embeddings_path || c->layers >= 2, FG_ERR_INVALID_ARG,
             "--save-embeddings needs a hidden layer (--layers >= 2)");
  FG_REQUIRE(c->agg_blocks >= 1, FG_ERR_INVALID_ARG, "--agg-blocks must be >= 1, got %d",
             c->agg_blocks);
  FG_REQUIRE(c->ranks_per_node >= 0, FG_ERR_INVALID_ARG, "--ranks-per-node must be >= 0, got %d",
             c->ranks_per_node);
  FG_REQUIRE(!c->learn_features || (!c->checkpoint_path && !c->resume_path), FG_ERR_UNSUPPORTED,
             "--learn-features: checkpoints hold the weights only, not learned features; "
             "drop --checkpoint/--resume");
cleanup:
  return st;
}

/* Per-epoch statistics, reduced over ranks. */
enum { N_COMM_PHASES = 4, N_COMM_STATS = 4 }; /* forward, backward, grads, metrics x 4 counts */
static const char *const comm_phase_names[N_COMM_PHASES] = {"forward", "backward", "grads",
                                                            "metrics"};
static const char *const comm_stat_names[N_COMM_STATS] = {"bytes_sent", "bytes_recv",
                                                          "msgs_sent", "msgs_recv"};

typedef struct epoch_stats {
  double loss;
  double acc[3];       /* train, valid, test (eval mode) */
  double valid_loss;
  double seconds, seconds_spmm, seconds_gemm, seconds_comm, seconds_wait, seconds_other;
  double bytes_sent_max, bytes_sent_mean;
  double comm_max[N_COMM_PHASES][N_COMM_STATS], comm_mean[N_COMM_PHASES][N_COMM_STATS];
  double spmm_bytes;   /* summed over ranks */
  double peak_rss;     /* maximum over ranks */
} epoch_stats;

/* This rank's counts since `before`, per phase (FG_PHASE_FORWARD ...) and kind. */
static void comm_delta(const fg_comm_counters *now, const fg_comm_counters *before,
                       double out[N_COMM_PHASES][N_COMM_STATS]) {
  for (int k = 0; k < N_COMM_PHASES; k++) {
    const int ph = FG_PHASE_FORWARD + k;
    out[k][0] = (double)(now->bytes_sent[ph] - before->bytes_sent[ph]);
    out[k][1] = (double)(now->bytes_recv[ph] - before->bytes_recv[ph]);
    out[k][2] = (double)(now->msgs_sent[ph] - before->msgs_sent[ph]);
    out[k][3] = (double)(now->msgs_recv[ph] - before->msgs_recv[ph]);
  }
}

static void write_metrics_epoch(FILE *f, int epoch, const epoch_stats *e) {
  fprintf(f,
          "{\"epoch\": %d, \"loss\": %.9g, \"train_acc\": %.6f, \"valid_acc\": %.6f, "
          "\"test_acc\": %.6f, \"valid_loss\": %.9g, \"seconds\": %.6f, "
          "\"seconds_spmm\": %.6f, \"seconds_gemm\": %.6f, \"seconds_comm\": %.6f, "
          "\"seconds_wait\": %.6f, \"seconds_other\": %.6f, \"bytes_sent_max\": %.0f, "
          "\"bytes_sent_mean\": %.1f, \"spmm_bytes\": %.0f, \"peak_rss_bytes\": %.0f, \"comm\": {",
          epoch, e->loss, e->acc[0], e->acc[1], e->acc[2], e->valid_loss, e->seconds,
          e->seconds_spmm, e->seconds_gemm, e->seconds_comm, e->seconds_wait, e->seconds_other,
          e->bytes_sent_max, e->bytes_sent_mean, e->spmm_bytes, e->peak_rss);
  for (int k = 0; k < N_COMM_PHASES; k++) {
    fprintf(f, "%s\"%s\": {", k ? ", " : "", comm_phase_names[k]);
    for (int q = 0; q < N_COMM_STATS; q++)
      fprintf(f, "%s\"%s_max\": %.0f, \"%s_mean\": %.1f", q ? ", " : "", comm_stat_names[q],
              e->comm_max[k][q], comm_stat_names[q], e->comm_mean[k][q]);
    fputc('}', f);
  }
  fprintf(f, "}}\n");
  fflush(f);
}

static void progress_line(int epoch, int epochs, const epoch_stats *e, double eta) {
  int width = 24, done = epochs > 0 ? (int)((int64_t)width * epoch / epochs) : width;
  char bar[32];
  for (int i = 0; i < width; i++) bar[i] = i < done ? '#' : '.';
  bar[width] = '\0';
  fprintf(stderr, "\r\033[K[%s] %d/%d loss %.4f valid %.4f eta %.0fs", bar, epoch, epochs,
          e->loss, e->acc[1], eta);
  fflush(stderr);
}

/* Sum of -log p over selected rows; counts; for each split. */
static fg_status evaluate(fg_gcn *m, fg_scheme *s, fg_dist *d, double *acc, double *valid_loss) {
  fg_status st = FG_OK;
  const int L = m->layers;
  const int64_t C = m->widths[L];
  uint8_t *sel = NULL;
  double sums[8] = {0};
  FG_ALLOC(sel, s->n_local > 0 ? s->n_local : 1);
  for (int k = 0; k < 3; k++) {
    int64_t count = 0, correct = 0;
    double l;
    for (int64_t i = 0; i < s->n_local; i++) sel[i] = s->split[i] == k;
    l = fg_softmax_xent(m->H[L], s->n_local, C, s->labels, sel, 1.0f, NULL, &count, &correct);
    sums[2 * k] = (double)correct;
    sums[2 * k + 1] = (double)count;
    if (k == FG_SPLIT_VALID) sums[6] = l;
  }
  FG_CHECK(fg_dist_allreduce_f64(d, sums, 7));
  for (int k = 0; k < 3; k++) acc[k] = sums[2 * k + 1] > 0 ? sums[2 * k] / sums[2 * k + 1] : 0.0;
  *valid_loss = sums[3] > 0 ? sums[6] / sums[3] : 0.0;
cleanup:
  free(sel);
  return st;
}

/* ---- the 1D trainer: serial, 1d, 1d-sa (a scheme and the model of gcn.c) ---------------------- */

typedef struct tr1d {
  fg_scheme *s;
  fg_gcn *m;
  uint8_t *train_sel;
  float *dlogits;
} tr1d;

static fg_status tr1d_train_step(fg_trainer *tr, const fg_train_config *cfg, int epoch,
                                 int64_t adam_t, double *loss_sum) {
  fg_status st = FG_OK;
  tr1d *im = tr->impl;
  fg_dist *d = tr->dist;
  fg_gcn *m = im->m;
  fg_scheme *s = im->s;
  const int L = tr->layers;
  const float p = (float)cfg->dropout;
  const fg_adam_params adam = {(float)cfg->lr, 0.9f, 0.999f, 1e-8f};
  int64_t cnt = 0, cor = 0;
  d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_gcn_forward(m, s, 1, p, cfg->seed, (uint64_t)epoch));
  *loss_sum = fg_softmax_xent(m->H[L], s->n_local, tr->widths[L], s->labels, im->train_sel,
                              1.0f / (float)tr->counts[0], im->dlogits, &cnt, &cor);
  d->phase = FG_PHASE_BACKWARD;
  FG_CHECK(fg_gcn_backward(m, s, im->dlogits, p, cfg->seed, (uint64_t)epoch));
  d->phase = FG_PHASE_GRADS;
  FG_CHECK(fg_dist_allreduce_f32(d, m->grads, m->n_params));
  for (int l = 0; l < L; l++) {
    int decay = cfg->weight_decay_layers == FG_WD_ALL || l == 0;
    float wd = decay ? (float)cfg->weight_decay : 0.0f;
    fg_adam_step(m->W[l], m->dW[l], m->adam_m + (m->W[l] - m->params),
                 m->adam_v + (m->W[l] - m->params), tr->widths[l] * tr->widths[l + 1], adam, wd,
                 adam_t);
    fg_adam_step(m->b[l], m->db[l], m->adam_m + (m->b[l] - m->params),
                 m->adam_v + (m->b[l] - m->params), tr->widths[l + 1], adam, 0.0f, adam_t);
  }
  d->phase = FG_PHASE_METRICS;
  FG_CHECK(fg_dist_allreduce_f64(d, loss_sum, 1));
cleanup:
  return st;
}

static fg_status tr1d_evaluate(fg_trainer *tr, const fg_train_config *cfg, int epoch,
                               double acc[3], double *valid_loss) {
  fg_status st = FG_OK;
  tr1d *im = tr->impl;
  tr->dist->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_gcn_forward(im->m, im->s, 0, 0.0f, cfg->seed, (uint64_t)epoch));
  tr->dist->phase = FG_PHASE_METRICS;
  FG_CHECK(evaluate(im->m, im->s, tr->dist, acc, valid_loss));
cleanup:
  return st;
}

static fg_status tr1d_export(fg_trainer *tr) {
  (void)tr; /* the model's buffers are the serial layout, the same on every rank */
  return FG_OK;
}

static fg_status tr1d_import(fg_trainer *tr) {
  fg_status st = FG_OK;
  fg_gcn *m = ((tr1d *)tr->impl)->m;
  FG_CHECK(fg_dist_bcast(tr->dist, m->params, m->n_params * 4, 0));
  FG_CHECK(fg_dist_bcast(tr->dist, m->adam_m, m->n_params * 4, 0));
  FG_CHECK(fg_dist_bcast(tr->dist, m->adam_v, m->n_params * 4, 0));
cleanup:
  return st;
}

static fg_status tr1d_gather_output(fg_trainer *tr, int which, float *out) {
  tr1d *im = tr->impl;
  const int L = tr->layers;
  const int64_t w = tr->widths[which == 0 ? L : L - 1];
  return fg_dist_gather_rows(tr->dist, im->m->H[which == 0 ? L : L - 1], im->s->global_ids,
                             im->s->n_local, w, im->s->n_global, 0, out);
}

static void tr1d_timers(const fg_trainer *tr, double *spmm, double *gemm, double *spmm_bytes) {
  const tr1d *im = tr->impl;
  *spmm = im->s->seconds_spmm;
  *gemm = im->m->seconds[FG_TIME_GEMM];
  *spmm_bytes = im->s->spmm_bytes;
}

static void tr1d_destroy(fg_trainer *tr) {
  tr1d *im = tr->impl;
  if (im) {
    free(im->train_sel);
    free(im->dlogits);
    fg_gcn_destroy(&im->m);
    fg_scheme_destroy(&im->s);
    free(im);
  }
  tr->state = NULL; /* it was the model */
  fg_trainer_free_common(tr);
}

static const fg_trainer_ops tr1d_ops = {tr1d_train_step, tr1d_evaluate, tr1d_export,
                                        tr1d_import,     tr1d_gather_output, tr1d_timers,
                                        tr1d_destroy};

void fg_trainer_free_common(fg_trainer *tr) {
  if (!tr) return;
  free(tr->widths);
  if (tr->state) {
    fg_free_aligned(tr->state->params);
    fg_free_aligned(tr->state->adam_m);
    fg_free_aligned(tr->state->adam_v);
    free(tr->state->widths);
    free(tr->state);
  }
  free(tr);
}

static fg_status trainer_1d_create(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                                   fg_trainer **out) {
  fg_status st = FG_OK;
  fg_trainer *tr = NULL;
  tr1d *im = NULL;
  fg_scheme_config scfg;
  fg_scheme *s;
  *out = NULL;
  memset(&scfg, 0, sizeof scfg);
  scfg.name = cfg->scheme;
  scfg.order = cfg->order;
  scfg.overlap = cfg->overlap;
  scfg.seed = cfg->seed;
  scfg.normalize_features = cfg->normalize_features;
  scfg.verbose = cfg->verbose;
  scfg.reorder = cfg->reorder;
  scfg.reorder_width = fg_train_hidden_width(cfg, ds ? ds->num_classes : 1);
  tr = fg_calloc_array(1, sizeof *tr);
  im = fg_calloc_array(1, sizeof *im);
  if (!tr || !im) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  tr->ops = &tr1d_ops;
  tr->dist = d;
  tr->impl = im; /* from here on tr1d_destroy frees im */
  /* one process: refuse a run that would not fit before allocating for it (membudget.c) */
  st = d->size == 1 ? fg_train_memory_check(ds, cfg) : FG_OK;
  if (st == FG_OK) st = fg_scheme_create(d, ds, &scfg, &im->s);
  FG_CHECK(fg_dist_agree(d, st));
  s = im->s;
  tr->description = s->note[0] ? s->note : NULL;
  tr->reorder = s->reorder_used;
  tr->layers = cfg->layers;
  tr->n_nodes = s->n_global;
  /* widths: input, hidden..., classes */
  st = FG_OK;
  tr->widths = fg_malloc_array((size_t)cfg->layers + 1, sizeof *tr->widths);
  if (!tr->widths) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == FG_OK) {
    fg_gcn_config mc = {cfg->layers, tr->widths, (int)cfg->agg_order, cfg->seed};
    tr->widths[0] = s->num_features;
    for (int l = 1; l < cfg->layers; l++)
      tr->widths[l] = cfg->widths ? cfg->widths[l - 1] : cfg->hidden;
    tr->widths[cfg->layers] = s->num_classes;
    st = fg_gcn_create(&mc, s, &im->m);
  }
  if (st == FG_OK) {
    im->train_sel = fg_malloc_array((size_t)FG_MAX(s->n_local, 1), 1);
    /* the backward pass's first SpMM gathers its rows at random: huge pages, as activations */
    im->dlogits = fg_malloc_huge((size_t)FG_MAX(s->n_local * tr->widths[cfg->layers], 1) * 4);
    if (!im->train_sel || !im->dlogits)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for the loss buffers");
  }
  FG_CHECK(fg_dist_agree(d, st));
  tr->state = im->m;
  tr->n_params = im->m->n_params;
  for (int64_t i = 0; i < s->n_local; i++) {
    im->train_sel[i] = s->split[i] == FG_SPLIT_TRAIN;
    if (s->split[i] >= 0 && s->split[i] < 3) tr->counts[s->split[i]]++;
  }
  FG_CHECK(fg_dist_allreduce_i64(d, tr->counts, 3));
  *out = tr;
  tr = NULL;
  im = NULL;
cleanup:
  if (tr && tr->impl) {
    tr1d_destroy(tr);
  } else {
    free(im);
    free(tr);
  }
  return st;
}

/* ---- choosing the scheme ------------------------------------------------------------------- */

/* Collective: the scheme and grid this run uses. "3d" with grid auto and "auto" ask the
 * performance model (on rank 0, which has the dataset) for the best configuration that fits. */
static fg_status choose_scheme(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                               int *is3d, int grid[3], char *name1d, size_t len) {
  fg_status st = FG_OK;
  const char *name = cfg->scheme ? cfg->scheme : (d->size == 1 ? "serial" : "1d-sa");
  const int want3d = strcmp(name, "3d") == 0, want_auto = strcmp(name, "auto") == 0;
  *is3d = 0;
  snprintf(name1d, len, "%s", name);
  if (want3d && cfg->grid && strcmp(cfg->grid, "auto") != 0) {
    FG_CHECK(fg_grid_parse(cfg->grid, d->size, grid));
    *is3d = 1;
  } else if (want3d || want_auto) {
    char pick[16] = "";
    int choice[4] = {0, 1, 1, 1}; /* is3d, grid */
    st = FG_OK;
    if (d->rank == 0) {
      st = fg_plan_pick(ds, cfg, d->size, want3d, pick, sizeof pick, choice + 1);
      choice[0] = strcmp(pick, "3d") == 0;
      if (st == FG_OK && cfg->verbose) {
        if (choice[0])
          printf("performance model: 3d grid %dx%dx%d\n", choice[1], choice[2], choice[3]);
        else
          printf("performance model: %s\n", pick);
      }
    }
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_bcast(d, choice, sizeof choice, 0));
    FG_CHECK(fg_dist_bcast(d, pick, sizeof pick, 0));
    *is3d = choice[0];
    memcpy(grid, choice + 1, 3 * sizeof(int));
    snprintf(name1d, len, "%s", pick);
  } else {
    FG_REQUIRE(!cfg->grid, FG_ERR_INVALID_ARG, "--grid needs --scheme 3d (this run uses %s)",
               name);
  }
  FG_REQUIRE(*is3d || !cfg->learn_features, FG_ERR_INVALID_ARG,
             "--learn-features needs --scheme 3d (this run uses %s)", name1d);
  FG_REQUIRE(*is3d || !cfg->double_perm, FG_ERR_INVALID_ARG,
             "--double-perm needs --scheme 3d (this run uses %s)", name1d);
  FG_REQUIRE(*is3d || cfg->agg_blocks <= 1, FG_ERR_INVALID_ARG,
             "--agg-blocks needs --scheme 3d (this run uses %s)", name1d);
cleanup:
  return st;
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* Collective: write a (n x w) output gathered in original node order (rank 0). */
static fg_status save_output(fg_trainer *tr, int which, const char *path) {
  fg_status st = FG_OK, st2;
  fg_dist *d = tr->dist;
  const int64_t w = tr->widths[which == 0 ? tr->layers : tr->layers - 1];
  float *all = NULL;
  if (d->rank == 0) {
    all = fg_malloc_array((size_t)FG_MAX(tr->n_nodes * w, 1), sizeof *all);
    if (!all) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for %s", path);
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(tr->ops->gather_output(tr, which, all));
  if (d->rank == 0) st = fg_npy_write_f32(path, all, tr->n_nodes, w);
cleanup:
  st2 = fg_dist_agree(d, st);
  free(all);
  return st2;
}

fg_status fg_train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *cfg,
                   fg_train_result *result) {
  fg_status st = FG_OK;
  fg_dist *d = NULL;
  fg_trainer *tr = NULL;
  FILE *metrics = NULL;
  FILE *log = cfg->log ? cfg->log : stdout;
  fg_ckpt_meta meta;
  char name[16];
  int is3d = 0, grid[3] = {1, 1, 1};
  double secs_total = 0.0;
  int secs_n = 0, start_epoch = 0, show_progress;

  memset(&meta, 0, sizeof meta);
  memset(result, 0, sizeof *result);
  FG_CHECK(fg_dist_create(comm, &d));
  st = validate(cfg);
  if (st == FG_OK && d->rank == 0 && !ds)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "fg_train: no dataset on rank 0");
  if (st == FG_OK && d->rank == 0 && ds && ds->num_classes < 2)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: %lld label class(es); classification needs at least 2",
                      ds->source ? ds->source : "dataset", (long long)ds->num_classes);
  FG_CHECK(fg_dist_agree(d, st));
  show_progress = cfg->progress && d->rank == 0 && isatty(fileno(stderr));

  d->phase = FG_PHASE_SETUP;
  st = choose_scheme(d, ds, cfg, &is3d, grid, name, sizeof name);
  if (st == FG_OK && is3d && cfg->reorder && strcmp(cfg->reorder, "none") != 0 &&
      strcmp(cfg->reorder, "auto") != 0)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--reorder %s applies to --scheme serial (one process); this run uses 3d "
                      "(use --double-perm for its layout)", cfg->reorder);
  FG_CHECK(fg_dist_agree(d, st));
  /* several processes: refuse a run whose busiest rank would not fit (membudget.c) */
  FG_CHECK(fg_train_memory_check_ranks(d, ds, cfg, name, is3d, grid));
  if (is3d)
    FG_CHECK(fg_trainer_3d_create(d, ds, cfg, grid, &tr));
  else if (cfg->scheme && strcmp(cfg->scheme, name) != 0) {
    fg_train_config c1 = *cfg;
    c1.scheme = name;
    FG_CHECK(trainer_1d_create(d, ds, &c1, &tr));
  } else {
    FG_CHECK(trainer_1d_create(d, ds, cfg, &tr));
  }
  FG_REQUIRE(tr->counts[0] > 0, FG_ERR_INVALID_ARG, "the training split is empty");

  /* resume: rank 0 reads, everyone receives */
  meta.seed = cfg->seed;
  if (cfg->resume_path) {
    st = FG_OK;
    if (d->rank == 0) {
      st = fg_checkpoint_read(cfg->resume_path, tr->state, &meta);
      if (st == FG_OK && meta.seed != cfg->seed)
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "%s: checkpoint was made with --seed %llu, this run has --seed %llu",
                          cfg->resume_path, (unsigned long long)meta.seed,
                          (unsigned long long)cfg->seed);
    }
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_bcast(d, &meta, sizeof meta, 0));
    FG_CHECK(tr->ops->import_state(tr));
    start_epoch = (int)meta.epoch;
    if (d->rank == 0 && cfg->verbose)
      fprintf(log, "resumed from %s at epoch %d\n", cfg->resume_path, start_epoch);
  }
  if (d->rank == 0 && cfg->metrics_path) {
    metrics = fopen(cfg->metrics_path, start_epoch > 0 ? "a" : "w");
    st = metrics ? FG_OK
                 : fg_error_set(FG_ERR_IO, __FILE__, __LINE__, "%s: cannot open: %s",
                                cfg->metrics_path, strerror(errno));
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (d->rank == 0 && cfg->verbose) {
    fprintf(log, "GCN");
    for (int l = 0; l <= cfg->layers; l++)
      fprintf(log, "%s%lld", l ? " -> " : " ", (long long)tr->widths[l]);
    fprintf(log, ", %lld parameters; %d rank(s) x %d thread(s); train/valid/test %lld/%lld/%lld\n",
            (long long)tr->n_params, d->size, fg_max_threads(), (long long)tr->counts[0],
            (long long)tr->counts[1], (long long)tr->counts[2]);
    if (tr->description) fprintf(log, "%s\n", tr->description);
  }

  for (int epoch = start_epoch + 1; epoch <= cfg->epochs; epoch++) {
    epoch_stats e;
    double t0 = fg_now(), spmm0, gemm0, sbytes0, spmm1, gemm1, sbytes1;
    const fg_comm_counters c0 = d->counters;
    double sent = 0.0;
    double loss_sum = 0.0;
    memset(&e, 0, sizeof e);
    tr->ops->timers(tr, &spmm0, &gemm0, &sbytes0);

    /* train step, then evaluation (no dropout) */
    meta.adam_t++;
    FG_CHECK(tr->ops->train_step(tr, cfg, epoch, meta.adam_t, &loss_sum));
    e.loss = loss_sum / (double)tr->counts[0];
    FG_REQUIRE(isfinite(e.loss), FG_ERR_NUMERIC,
               "epoch %d: the training loss is %g; lower --lr or check the input features",
               epoch, e.loss);
    FG_CHECK(tr->ops->evaluate(tr, cfg, epoch, e.acc, &e.valid_loss));

    e.seconds = fg_now() - t0;
    tr->ops->timers(tr, &spmm1, &gemm1, &sbytes1);
    e.seconds_spmm = spmm1 - spmm0;
    e.seconds_gemm = gemm1 - gemm0;
    e.seconds_comm = d->counters.seconds_comm - c0.seconds_comm;
    e.seconds_wait = d->counters.seconds_wait - c0.seconds_wait;
    e.seconds_other = e.seconds - e.seconds_spmm - e.seconds_gemm - e.seconds_comm;
    if (e.seconds_other < 0) e.seconds_other = 0;
    comm_delta(&d->counters, &c0, e.comm_max);
    memcpy(e.comm_mean, e.comm_max, sizeof e.comm_mean);
    for (int ph = 0; ph < FG_PHASE_COUNT; ph++)
      sent += (double)(d->counters.bytes_sent[ph] - c0.bytes_sent[ph]);
    {
      /* maxima and sums over ranks; these reductions fall outside every epoch's counts */
      double mx[8] = {e.seconds, e.seconds_spmm, e.seconds_gemm, e.seconds_comm,
                      e.seconds_other, sent, (double)fg_peak_rss_bytes(), e.seconds_wait};
      double sum[2] = {sent, sbytes1 - sbytes0};
      const int64_t ncomm = N_COMM_PHASES * N_COMM_STATS;
      FG_CHECK(fg_dist_max_f64(d, mx, 8));
      FG_CHECK(fg_dist_max_f64(d, &e.comm_max[0][0], ncomm));
      FG_CHECK(fg_dist_allreduce_f64(d, sum, 2));
      FG_CHECK(fg_dist_allreduce_f64(d, &e.comm_mean[0][0], ncomm));
      for (int k = 0; k < N_COMM_PHASES; k++)
        for (int q = 0; q < N_COMM_STATS; q++) e.comm_mean[k][q] /= d->size;
      e.peak_rss = mx[6];
      e.spmm_bytes = sum[1];
      e.seconds = mx[0];
      e.seconds_spmm = mx[1];
      e.seconds_gemm = mx[2];
      e.seconds_comm = mx[3];
      e.seconds_other = mx[4];
      e.seconds_wait = mx[7];
      e.bytes_sent_max = mx[5];
      e.bytes_sent_mean = sum[0] / d->size;
    }

    if (meta.best_epoch == 0 || e.acc[1] > meta.best_valid_acc ||
        (e.acc[1] == meta.best_valid_acc && e.valid_loss < meta.best_valid_loss)) {
      meta.best_epoch = epoch;
      meta.best_valid_acc = e.acc[1];
      meta.best_valid_loss = e.valid_loss;
      meta.best_test_acc = e.acc[2];
    }
    meta.epoch = epoch;
    if (cfg->loss_history) cfg->loss_history[epoch - 1] = e.loss;
    if (epoch > start_epoch + 2 || cfg->epochs - start_epoch <= 2) {
      secs_total += e.seconds;
      secs_n++;
    }
    result->final_loss = e.loss;
    result->final_train_acc = e.acc[0];
    result->final_valid_acc = e.acc[1];
    result->final_test_acc = e.acc[2];

    if (d->rank == 0) {
      if (show_progress) fprintf(stderr, "\r\033[K");
      if (cfg->verbose)
        fprintf(log, "epoch %4d  loss %.4f  train %.4f  valid %.4f  test %.4f  %.3fs\n", epoch,
                e.loss, e.acc[0], e.acc[1], e.acc[2], e.seconds);
      fflush(log);
      if (metrics) write_metrics_epoch(metrics, epoch, &e);
      if (show_progress)
        progress_line(epoch, cfg->epochs, &e, e.seconds * (cfg->epochs - epoch));
    }
    if (cfg->checkpoint_path &&
        ((cfg->checkpoint_every > 0 && epoch % cfg->checkpoint_every == 0) ||
         epoch == cfg->epochs)) {
      FG_CHECK(tr->ops->export_state(tr));
      st = d->rank == 0 ? fg_checkpoint_write(cfg->checkpoint_path, tr->state, &meta) : FG_OK;
      FG_CHECK(fg_dist_agree(d, st));
    }
  }
  if (show_progress) fprintf(stderr, "\r\033[K");

  result->epochs_run = cfg->epochs - start_epoch;
  result->best_epoch = (int)meta.best_epoch;
  result->best_valid_acc = meta.best_valid_acc;
  result->test_acc = meta.best_test_acc;
  result->mean_epoch_seconds = secs_n ? secs_total / secs_n : 0.0;

  if (cfg->predictions_path || cfg->embeddings_path) {
    /* outputs come from the final model in evaluation mode */
    double acc[3], vl;
    FG_CHECK(tr->ops->evaluate(tr, cfg, cfg->epochs, acc, &vl));
    d->phase = FG_PHASE_METRICS;
    if (cfg->predictions_path) FG_CHECK(save_output(tr, 0, cfg->predictions_path));
    if (cfg->embeddings_path) FG_CHECK(save_output(tr, 1, cfg->embeddings_path));
  }
  if (d->rank == 0) {
    if (metrics) {
      fprintf(metrics,
              "{\"final\": true, \"epochs\": %d, \"best_epoch\": %d, \"valid_acc\": %.6f, "
              "\"test_acc\": %.6f, \"mean_epoch_seconds\": %.6f, \"ranks\": %d, "
              "\"threads\": %d, \"reorder\": \"%s\"}\n",
              cfg->epochs, result->best_epoch, result->best_valid_acc, result->test_acc,
              result->mean_epoch_seconds, d->size, fg_max_threads(),
              tr->reorder ? tr->reorder : "none");
    }
    if (cfg->verbose)
      fprintf(log, "best epoch %d: valid %.4f  test %.4f  (%.4f s/epoch)\n", result->best_epoch,
              result->best_valid_acc, result->test_acc, result->mean_epoch_seconds);
  }
cleanup:
  if (metrics) fclose(metrics);
  if (tr) tr->ops->destroy(tr);
  fg_dist_destroy(&d);
  return st;
}
