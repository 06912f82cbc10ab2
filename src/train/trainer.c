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
#include "schemes/fg_scheme.h"
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
cleanup:
  return st;
}

/* Per-epoch statistics, reduced over ranks. */
typedef struct epoch_stats {
  double loss;
  double acc[3];       /* train, valid, test (eval mode) */
  double valid_loss;
  double seconds, seconds_spmm, seconds_gemm, seconds_comm, seconds_other;
  double bytes_sent_max, bytes_sent_mean;
  double spmm_bytes;   /* summed over ranks */
  double peak_rss;     /* maximum over ranks */
} epoch_stats;

static void write_metrics_epoch(FILE *f, int epoch, const epoch_stats *e) {
  fprintf(f,
          "{\"epoch\": %d, \"loss\": %.9g, \"train_acc\": %.6f, \"valid_acc\": %.6f, "
          "\"test_acc\": %.6f, \"valid_loss\": %.9g, \"seconds\": %.6f, "
          "\"seconds_spmm\": %.6f, \"seconds_gemm\": %.6f, \"seconds_comm\": %.6f, "
          "\"seconds_other\": %.6f, \"bytes_sent_max\": %.0f, \"bytes_sent_mean\": %.1f, "
          "\"spmm_bytes\": %.0f, \"peak_rss_bytes\": %.0f}\n",
          epoch, e->loss, e->acc[0], e->acc[1], e->acc[2], e->valid_loss, e->seconds,
          e->seconds_spmm, e->seconds_gemm, e->seconds_comm, e->seconds_other,
          e->bytes_sent_max, e->bytes_sent_mean, e->spmm_bytes, e->peak_rss);
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

/* Collective: gather a (n_local x w) activation in original node order and write it (rank 0). */
static fg_status save_rows(fg_dist *d, fg_scheme *s, const float *rows, int64_t w,
                           const char *path) {
  fg_status st = FG_OK, st2;
  float *all = NULL;
  if (d->rank == 0) FG_ALLOC(all, s->n_global * w);
  FG_CHECK(fg_dist_gather_rows(d, rows, s->global_ids, s->n_local, w, s->n_global, 0, all));
  if (d->rank == 0) st = fg_npy_write_f32(path, all, s->n_global, w);
cleanup:
  st2 = fg_dist_agree(d, st);
  free(all);
  return st2;
}

fg_status fg_train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *cfg,
                   fg_train_result *result) {
  fg_status st = FG_OK;
  fg_dist *d = NULL;
  fg_scheme *s = NULL;
  fg_gcn *m = NULL;
  int64_t *widths = NULL;
  uint8_t *train_sel = NULL;
  float *dlogits = NULL;
  FILE *metrics = NULL;
  FILE *log = cfg->log ? cfg->log : stdout;
  fg_ckpt_meta meta;
  fg_scheme_config scfg;
  int64_t counts[3] = {0, 0, 0};
  double secs_total = 0.0;
  int secs_n = 0, start_epoch = 0, show_progress;
  const float p = (float)cfg->dropout;
  const fg_adam_params adam = {(float)cfg->lr, 0.9f, 0.999f, 1e-8f};

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

  memset(&scfg, 0, sizeof scfg);
  scfg.name = cfg->scheme;
  scfg.order = cfg->order;
  scfg.overlap = cfg->overlap;
  scfg.seed = cfg->seed;
  scfg.normalize_features = cfg->normalize_features;
  scfg.verbose = cfg->verbose;
  d->phase = FG_PHASE_SETUP;
  st = fg_scheme_create(d, ds, &scfg, &s);
  FG_CHECK(fg_dist_agree(d, st));

  /* widths: input, hidden..., classes */
  FG_ALLOC(widths, cfg->layers + 1);
  widths[0] = s->num_features;
  for (int l = 1; l < cfg->layers; l++) widths[l] = cfg->widths ? cfg->widths[l - 1] : cfg->hidden;
  widths[cfg->layers] = s->num_classes;
  {
    fg_gcn_config mc = {cfg->layers, widths, (int)cfg->agg_order, cfg->seed};
    st = fg_gcn_create(&mc, s, &m);
  }
  if (st == FG_OK) {
    train_sel = fg_malloc_array((size_t)FG_MAX(s->n_local, 1), 1);
    dlogits = fg_malloc_aligned((size_t)FG_MAX(s->n_local * widths[cfg->layers], 1) * 4);
    if (!train_sel || !dlogits)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for the loss buffers");
  }
  FG_CHECK(fg_dist_agree(d, st));
  for (int64_t i = 0; i < s->n_local; i++) {
    train_sel[i] = s->split[i] == FG_SPLIT_TRAIN;
    if (s->split[i] >= 0 && s->split[i] < 3) counts[s->split[i]]++;
  }
  FG_CHECK(fg_dist_allreduce_i64(d, counts, 3));
  FG_REQUIRE(counts[0] > 0, FG_ERR_INVALID_ARG, "the training split is empty");

  /* resume: rank 0 reads, everyone receives */
  meta.seed = cfg->seed;
  if (cfg->resume_path) {
    st = FG_OK;
    if (d->rank == 0) {
      st = fg_checkpoint_read(cfg->resume_path, m, &meta);
      if (st == FG_OK && meta.seed != cfg->seed)
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "%s: checkpoint was made with --seed %llu, this run has --seed %llu",
                          cfg->resume_path, (unsigned long long)meta.seed,
                          (unsigned long long)cfg->seed);
    }
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_bcast(d, &meta, sizeof meta, 0));
    FG_CHECK(fg_dist_bcast(d, m->params, m->n_params * 4, 0));
    FG_CHECK(fg_dist_bcast(d, m->adam_m, m->n_params * 4, 0));
    FG_CHECK(fg_dist_bcast(d, m->adam_v, m->n_params * 4, 0));
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
    for (int l = 0; l <= cfg->layers; l++) fprintf(log, "%s%lld", l ? " -> " : " ", (long long)widths[l]);
    fprintf(log, ", %lld parameters; %d rank(s) x %d thread(s); train/valid/test %lld/%lld/%lld\n",
            (long long)m->n_params, d->size, fg_max_threads(), (long long)counts[0],
            (long long)counts[1], (long long)counts[2]);
  }

  for (int epoch = start_epoch + 1; epoch <= cfg->epochs; epoch++) {
    epoch_stats e;
    double t0 = fg_now(), spmm0 = s->seconds_spmm, gemm0 = m->seconds[FG_TIME_GEMM];
    double sbytes0 = s->spmm_bytes;
    double comm0 = d->counters.seconds_comm, sent0 = 0.0, sent;
    int64_t cnt = 0, cor = 0;
    double loss_sum;
    memset(&e, 0, sizeof e);
    for (int ph = 0; ph < FG_PHASE_COUNT; ph++) sent0 += (double)d->counters.bytes_sent[ph];

    /* train step */
    d->phase = FG_PHASE_FORWARD;
    FG_CHECK(fg_gcn_forward(m, s, 1, p, cfg->seed, (uint64_t)epoch));
    loss_sum = fg_softmax_xent(m->H[cfg->layers], s->n_local, widths[cfg->layers], s->labels,
                               train_sel, 1.0f / (float)counts[0], dlogits, &cnt, &cor);
    d->phase = FG_PHASE_BACKWARD;
    FG_CHECK(fg_gcn_backward(m, s, dlogits, p, cfg->seed, (uint64_t)epoch));
    d->phase = FG_PHASE_GRADS;
    FG_CHECK(fg_dist_allreduce_f32(d, m->grads, m->n_params));
    meta.adam_t++;
    for (int l = 0; l < cfg->layers; l++) {
      int decay = cfg->weight_decay_layers == FG_WD_ALL || l == 0;
      float wd = decay ? (float)cfg->weight_decay : 0.0f;
      fg_adam_step(m->W[l], m->dW[l], m->adam_m + (m->W[l] - m->params),
                   m->adam_v + (m->W[l] - m->params), widths[l] * widths[l + 1], adam, wd,
                   meta.adam_t);
      fg_adam_step(m->b[l], m->db[l], m->adam_m + (m->b[l] - m->params),
                   m->adam_v + (m->b[l] - m->params), widths[l + 1], adam, 0.0f, meta.adam_t);
    }
    /* evaluation (no dropout) */
    d->phase = FG_PHASE_METRICS;
    FG_CHECK(fg_dist_allreduce_f64(d, &loss_sum, 1));
    e.loss = loss_sum / (double)counts[0];
    FG_REQUIRE(isfinite(e.loss), FG_ERR_NUMERIC,
               "epoch %d: the training loss is %g; lower --lr or check the input features",
               epoch, e.loss);
    d->phase = FG_PHASE_FORWARD;
    FG_CHECK(fg_gcn_forward(m, s, 0, 0.0f, cfg->seed, (uint64_t)epoch));
    d->phase = FG_PHASE_METRICS;
    FG_CHECK(evaluate(m, s, d, e.acc, &e.valid_loss));

    e.seconds = fg_now() - t0;
    e.seconds_spmm = s->seconds_spmm - spmm0;
    e.seconds_gemm = m->seconds[FG_TIME_GEMM] - gemm0;
    e.seconds_comm = d->counters.seconds_comm - comm0;
    e.seconds_other = e.seconds - e.seconds_spmm - e.seconds_gemm - e.seconds_comm;
    if (e.seconds_other < 0) e.seconds_other = 0;
    sent = -sent0;
    for (int ph = 0; ph < FG_PHASE_COUNT; ph++) sent += (double)d->counters.bytes_sent[ph];
    {
      double mx[7] = {e.seconds, e.seconds_spmm, e.seconds_gemm, e.seconds_comm,
                      e.seconds_other, sent, (double)fg_peak_rss_bytes()};
      double sum[2] = {sent, s->spmm_bytes - sbytes0};
      FG_CHECK(fg_dist_max_f64(d, mx, 7));
      FG_CHECK(fg_dist_allreduce_f64(d, sum, 2));
      e.peak_rss = mx[6];
      e.spmm_bytes = sum[1];
      e.seconds = mx[0];
      e.seconds_spmm = mx[1];
      e.seconds_gemm = mx[2];
      e.seconds_comm = mx[3];
      e.seconds_other = mx[4];
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
      st = d->rank == 0 ? fg_checkpoint_write(cfg->checkpoint_path, m, &meta) : FG_OK;
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
    d->phase = FG_PHASE_FORWARD;
    FG_CHECK(fg_gcn_forward(m, s, 0, 0.0f, cfg->seed, (uint64_t)cfg->epochs));
    if (cfg->predictions_path)
      FG_CHECK(save_rows(d, s, m->H[cfg->layers], widths[cfg->layers], cfg->predictions_path));
    if (cfg->embeddings_path)
      FG_CHECK(save_rows(d, s, m->H[cfg->layers - 1], widths[cfg->layers - 1],
                         cfg->embeddings_path));
  }
  if (d->rank == 0) {
    if (metrics) {
      fprintf(metrics,
              "{\"final\": true, \"epochs\": %d, \"best_epoch\": %d, \"valid_acc\": %.6f, "
              "\"test_acc\": %.6f, \"mean_epoch_seconds\": %.6f, \"ranks\": %d, "
              "\"threads\": %d}\n",
              cfg->epochs, result->best_epoch, result->best_valid_acc, result->test_acc,
              result->mean_epoch_seconds, d->size, fg_max_threads());
    }
    if (cfg->verbose)
      fprintf(log, "best epoch %d: valid %.4f  test %.4f  (%.4f s/epoch)\n", result->best_epoch,
              result->best_valid_acc, result->test_acc, result->mean_epoch_seconds);
  }
cleanup:
  if (metrics) fclose(metrics);
  free(widths);
  free(train_sel);
  fg_free_aligned(dlogits);
  fg_gcn_destroy(&m);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&d);
  return st;
}
