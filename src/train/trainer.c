/* trainer.c -- the epoch loop: train step, evaluation, metrics, checkpoints, outputs. */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_io.h"
#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"
#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "plan/fg_registry.h"
#include "schemes/fg_grid3d.h"
#include "schemes/fg_halo.h"
#include "schemes/fg_scheme.h"
#include "train/fg_checkpoint.h"
#include "train/fg_membudget.h"
#include "train/fg_metric.h"
#include "train/fg_provenance.h"

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

/* A --checkpoint path that asks for a sharded checkpoint: one ending in '/' (an existing
 * directory named without it is refused by fg_check_paths, never taken for one). */
static int sharded_output(const char *path) {
  return path && path[0] && path[strlen(path) - 1] == '/';
}

/* Every option on its own and in combination, before anything is read (fg_train_config_check
 * adds what depends on the ranks and the paths). */
static fg_status validate(const fg_train_config *c) {
  fg_status st = FG_OK;
  FG_REQUIRE(c->epochs >= 1, FG_ERR_INVALID_ARG, "--epochs must be >= 1, got %d", c->epochs);
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
  FG_REQUIRE(c->checkpoint_every == 0 || c->checkpoint_path, FG_ERR_INVALID_ARG,
             "--checkpoint-every %d needs --checkpoint FILE to write to", c->checkpoint_every);
  FG_REQUIRE(!c->embeddings_path || c->layers >= 2, FG_ERR_INVALID_ARG,
             "--save-embeddings needs a hidden layer (--layers >= 2)");
  FG_REQUIRE(!c->embeddings_out || c->layers >= 2, FG_ERR_INVALID_ARG,
             "embeddings need a hidden layer (--layers >= 2)");
  FG_REQUIRE(c->agg_blocks >= 1, FG_ERR_INVALID_ARG, "--agg-blocks must be >= 1, got %d",
             c->agg_blocks);
  FG_REQUIRE(c->ranks_per_node >= 0, FG_ERR_INVALID_ARG, "--ranks-per-node must be >= 0, got %d",
             c->ranks_per_node);
  FG_REQUIRE(!isnan(c->mem_limit), FG_ERR_INVALID_ARG, "--mem-limit is not a number");
  FG_CHECK(fg_model_choose(c->model, c->norm, c->adj_norm, c->gin_eps, &(fg_model_choice){0}));
  FG_CHECK(fg_halo_rule_parse(c->aggregation, &(fg_halo_rule){FG_HALO_HYBRID}));
  FG_CHECK(fg_halo_quant_parse(c->quantize, &(int){0}));
  FG_CHECK(fg_precision_parse(c->precision, &(int){0}));
  if (c->bf16_path) FG_CHECK(fg_bf16_path_parse(c->bf16_path, &(fg_bf16_path){FG_BF16_NATIVE}));
  FG_REQUIRE(c->label_prop == 0 || (c->label_prop > 0 && c->label_prop < 1), FG_ERR_INVALID_ARG,
             "--label-prop must be in (0, 1), got %g", c->label_prop);
  /* a single file holds the weights only; a sharded checkpoint the learned features too */
  FG_REQUIRE(!c->learn_features || !c->checkpoint_path || sharded_output(c->checkpoint_path),
             FG_ERR_UNSUPPORTED,
             "--learn-features: a single-file checkpoint holds the weights only; name a "
             "directory ending in '/' (--checkpoint %s/) for a sharded checkpoint, which holds "
             "the learned features too", c->checkpoint_path);
  FG_REQUIRE(!c->learn_features || !c->resume_path || fg_ckpt_path_sharded(c->resume_path),
             FG_ERR_UNSUPPORTED,
             "--learn-features: --resume %s is a single-file checkpoint, which holds no learned "
             "features; resume from a sharded checkpoint's directory", c->resume_path);
  if (c->reorder) FG_CHECK(fg_reorder_parse(c->reorder, &(fg_reorder_kind){FG_REORDER_NONE}));
  FG_CHECK(fg_task_parse(c->task, &(int){0}));
  FG_CHECK(fg_metric_parse(c->metric, &(int){0}));
cleanup:
  return st;
}

fg_status fg_train_task_check(const fg_dataset *ds, const fg_train_config *cfg,
                              const char **task, const char **metric) {
  fg_status st = FG_OK;
  int t = 0, m = 0;
  FG_REQUIRE(ds && cfg, FG_ERR_INVALID_ARG, "fg_train_task_check: NULL argument");
  FG_CHECK(fg_task_resolve(cfg->task, cfg->metric, cfg->label_prop, ds, &t, &m));
  if (task) *task = fg_task_name(t);
  if (metric) *metric = fg_metric_name(m);
cleanup:
  return st;
}

/* NAME.json, the sidecar fg_write_sidecar writes beside output NAME, in buf; NULL for no output
 * and for one written to a device, which gets none. */
static const char *sidecar_name(const char *path, char *buf, size_t cap) {
  struct stat sb;
  if (!path || !path[0] || (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode))) return NULL;
  snprintf(buf, cap, "%s.json", path);
  return buf;
}

fg_status fg_train_config_check(const fg_train_config *cfg, int ranks) {
  fg_status st = FG_OK;
  const fg_scheme_info *info = NULL;
  uint32_t cand = 0;
  int grid[3];
  fg_ckpt_info ck;
  char side[2][4096];
  const fg_path_use paths[] = {
      {"--metrics", cfg->metrics_path, FG_PATH_OUTPUT},
      {"--checkpoint", cfg->checkpoint_path, FG_PATH_CHECKPOINT},
      {"--resume", cfg->resume_path, FG_PATH_RESUME},
      {"--save-predictions", cfg->predictions_path, FG_PATH_OUTPUT},
      {"--save-embeddings", cfg->embeddings_path, FG_PATH_OUTPUT},
      {"--calibration", cfg->calibration_path, FG_PATH_INPUT_FILE},
      {"--save-predictions's sidecar",
       sidecar_name(cfg->predictions_path, side[0], sizeof side[0]), FG_PATH_OUTPUT},
      {"--save-embeddings's sidecar", sidecar_name(cfg->embeddings_path, side[1], sizeof side[1]),
       FG_PATH_OUTPUT},
  };
  memset(&ck, 0, sizeof ck);
  FG_REQUIRE(ranks >= 1, FG_ERR_INVALID_ARG, "ranks must be >= 1, got %d", ranks);
  FG_CHECK(validate(cfg));
  FG_CHECK(fg_scheme_resolve(cfg->scheme, fg_scheme_options_of(cfg), ranks, &info, &cand));
  if (cfg->grid && strcmp(cfg->grid, "auto") != 0) FG_CHECK(fg_grid_parse(cfg->grid, ranks, grid));
  if (cfg->replicate != 0) FG_CHECK(fg_replicate_check(cfg->replicate, ranks));
  if (cfg->order) FG_CHECK(fg_order_parse(cfg->order, &(fg_order_kind){FG_ORDER_NATURAL}));
  FG_CHECK(fg_check_paths(paths, (int)(sizeof paths / sizeof paths[0])));
  if (cfg->resume_path) { /* the checkpoint is whole and sound, before any data is read */
    FG_CHECK(fg_checkpoint_inspect(cfg->resume_path, &ck));
    FG_REQUIRE(ck.meta.epoch <= cfg->epochs, FG_ERR_INVALID_ARG,
               "%s: the checkpoint is at epoch %lld, past --epochs %d; give --epochs of at "
               "least %lld", cfg->resume_path, (long long)ck.meta.epoch, cfg->epochs,
               (long long)ck.meta.epoch);
  }
cleanup:
  fg_ckpt_info_free(&ck);
  return st;
}

/* Per-epoch statistics, reduced over ranks. */
enum { N_COMM_PHASES = 4, N_COMM_STATS = 6 }; /* forward, backward, grads, metrics x 6 counts */
static const char *const comm_phase_names[N_COMM_PHASES] = {"forward", "backward", "grads",
                                                            "metrics"};
/* param_bytes: the part of the bytes that is quantized rows' scale and zero point (halo
 * --quantize); the rest is data */
static const char *const comm_stat_names[N_COMM_STATS] = {
    "bytes_sent", "bytes_recv", "msgs_sent", "msgs_recv", "param_bytes_sent", "param_bytes_recv"};

typedef struct epoch_stats {
  double loss;
  double acc[3];       /* train, valid, test (eval mode) */
  double valid_loss;
  double seconds, seconds_spmm, seconds_gemm, seconds_comm, seconds_wait, seconds_other;
  double bytes_sent_max, bytes_sent_mean;
  double comm_max[N_COMM_PHASES][N_COMM_STATS], comm_mean[N_COMM_PHASES][N_COMM_STATS];
  double spmm_bytes;   /* summed over ranks */
  double gemm_flops;   /* summed over ranks: 2 M N K of every GEMM the epoch ran */
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
    out[k][4] = (double)(now->param_bytes_sent[ph] - before->param_bytes_sent[ph]);
    out[k][5] = (double)(now->param_bytes_recv[ph] - before->param_bytes_recv[ph]);
  }
}

static void write_metrics_epoch(FILE *f, int epoch, const epoch_stats *e) {
  fprintf(f,
          "{\"epoch\": %d, \"loss\": %.9g, \"train_acc\": %.6f, \"valid_acc\": %.6f, "
          "\"test_acc\": %.6f, \"valid_loss\": %.9g, \"seconds\": %.6f, "
          "\"seconds_spmm\": %.6f, \"seconds_gemm\": %.6f, \"seconds_comm\": %.6f, "
          "\"seconds_wait\": %.6f, \"seconds_other\": %.6f, \"bytes_sent_max\": %.0f, "
          "\"bytes_sent_mean\": %.1f, \"spmm_bytes\": %.0f, \"gemm_flops\": %.0f, \"peak_rss_bytes\": %.0f, "
          "\"comm\": {",
          epoch, e->loss, e->acc[0], e->acc[1], e->acc[2], e->valid_loss, e->seconds,
          e->seconds_spmm, e->seconds_gemm, e->seconds_comm, e->seconds_wait, e->seconds_other,
          e->bytes_sent_max, e->bytes_sent_mean, e->spmm_bytes, e->gemm_flops, e->peak_rss);
  for (int k = 0; k < N_COMM_PHASES; k++) {
    fprintf(f, "%s\"%s\": {", k ? ", " : "", comm_phase_names[k]);
    for (int q = 0; q < N_COMM_STATS; q++)
      fprintf(f, "%s\"%s_max\": %.0f, \"%s_mean\": %.1f", q ? ", " : "", comm_stat_names[q],
              e->comm_max[k][q], comm_stat_names[q], e->comm_mean[k][q]);
    fputc('}', f);
  }
  fprintf(f, "}}\n");
}

/* A write, flush or close of the metrics stream that failed (a full disk): an error naming the
 * file, never a run that reports success with a file cut mid-line. */
static fg_status metrics_check(FILE *f, const char *path) {
  fg_status st = FG_OK;
  errno = 0;
  FG_REQUIRE(fflush(f) == 0 && !ferror(f), FG_ERR_IO, "--metrics %s: write failed: %s", path,
             errno ? strerror(errno) : "I/O error");
cleanup:
  return st;
}

/* Open the metrics file: new (truncated) for a fresh run; for a run resumed after epoch
 * `start`, the existing file cut before its first record of a later epoch, its final record or
 * a run record of a run that started at or after `start` (what a run stopped after its last
 * checkpoint wrote: the resumed run writes those epochs again, after its own run record), then
 * appended to. The run records of the runs that made epochs 1..start stay. A device or pipe is
 * written as it is. */
static fg_status metrics_open(const char *path, int start, FILE **out) {
  fg_status st = FG_OK;
  FILE *f = NULL;
  char *line = NULL;
  size_t cap = 0;
  struct stat sb;
  *out = NULL;
  if (start > 0 && stat(path, &sb) == 0 && S_ISREG(sb.st_mode)) {
    long cut = -1, at = 0;
    ssize_t len;
    f = fopen(path, "r+");
    FG_REQUIRE(f, FG_ERR_IO, "--metrics %s: cannot open: %s", path, strerror(errno));
    while (cut < 0 && (len = getline(&line, &cap, f)) > 0) {
      int epoch;
      if ((sscanf(line, "{\"epoch\": %d", &epoch) == 1 && epoch > start) ||
          (sscanf(line, "{\"run\": {\"start_epoch\": %d", &epoch) == 1 && epoch >= start) ||
          strncmp(line, "{\"final\": true", 14) == 0)
        cut = at;
      at += (long)len;
    }
    FG_REQUIRE(!ferror(f), FG_ERR_IO, "--metrics %s: cannot read: %s", path, strerror(errno));
    if (cut >= 0)
      FG_REQUIRE(fflush(f) == 0 && ftruncate(fileno(f), (off_t)cut) == 0, FG_ERR_IO,
                 "--metrics %s: cannot cut after epoch %d: %s", path, start, strerror(errno));
    FG_REQUIRE(fseek(f, 0, SEEK_END) == 0, FG_ERR_IO, "--metrics %s: %s", path, strerror(errno));
  } else {
    f = fopen(path, start > 0 ? "a" : "w");
    FG_REQUIRE(f, FG_ERR_IO, "--metrics %s: cannot open: %s", path, strerror(errno));
  }
  *out = f;
  f = NULL;
cleanup:
  if (f) fclose(f);
  free(line);
  return st;
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

/* ---- a run: the scheme, the model and the loss buffers --------------------------------------- */

typedef struct run {
  fg_dist *d;
  fg_model_choice mdl;    /* the model the options name (kind, norm, operator) */
  const fg_scheme_info *info;
  int grid[3];
  int replicate;          /* 1.5d's c (0: not 1.5d) */
  fg_scheme *s;
  fg_model *m;
  int64_t *widths;        /* (layers + 1) */
  float *wd;              /* (layers) weight decay of each layer's weights */
  uint8_t *train_sel;     /* (n_local) training rows */
  uint8_t *sel;           /* (n_local) scratch for the evaluation's splits */
  uint8_t *eval_sel;      /* (n_local) rows of any split: those the evaluation measures */
  float *dlogits;         /* (n_local x the logits' columns) */
  int64_t counts[3];      /* nodes of the train, valid, test splits (all ranks; multi-label:
                             those with a target) */
  int task, metric;       /* fg_task_kind, fg_metric_kind (fg_metric.h) */
  int64_t pairs[3];       /* multi-label: the splits' (node, task) pairs with a target */
  double loss_den;        /* what the training loss is the mean over: counts[0] or pairs[0] */
  fg_layouts lay;         /* rank 0: the layouts planned, checked and distributed (once) */
  double mem_bytes;       /* rank 0: the busiest rank's bytes the planner predicted (< 0: none) */
  int predicted;          /* rank 0: 1 when the performance model chose the configuration */
  fg_plan_entry pick;     /* rank 0: ... its entry (the run record's "predicted") */
  int64_t n_idx;          /* this rank's W and b elements (fg_model_param_index) */
  int64_t *idx;           /* (n_idx) the one-process index of each */
  int64_t n_owned;        /* those whose copy on this rank checkpoints keep */
  int64_t *own_idx;       /* (n_owned) their one-process index */
  int64_t *own_pos;       /* (n_owned) their position in the model's buffer */
  float *own_val;         /* (n_owned) scratch */
  double setup_seconds;   /* fg_train's entry to run_create's end, max over ranks */
  int64_t *setup_rss;     /* rank 0: (ranks) each rank's peak resident bytes then */
} run;

static void run_free(run *r) {
  fg_layouts_free(&r->lay);
  fg_model_destroy(&r->m);
  fg_scheme_destroy(&r->s);
  free(r->widths);
  free(r->wd);
  free(r->train_sel);
  free(r->sel);
  free(r->eval_sel);
  free(r->dlogits);
  free(r->idx);
  free(r->own_idx);
  free(r->own_pos);
  free(r->own_val);
  free(r->setup_rss);
}

/* Collective: the scheme (and grid, or replication) of this run. --scheme auto, a grid scheme
 * without an explicit grid and 1.5d without --replicate ask the performance model on rank 0
 * (which has the dataset) for the fastest configuration that fits among those the registry
 * allows. */
static fg_status choose_scheme(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                               FILE *log, run *r) {
  fg_status st = FG_OK;
  uint32_t cand = 0;
  int choice[5] = {-1, 1, 1, 1, 0}; /* registry row, grid, replication */
  int given;                         /* the named scheme needs no choice of grid or c */
  st = fg_scheme_resolve(cfg->scheme, fg_scheme_options_of(cfg), d->size, &r->info, &cand);
  if (st == FG_OK && r->info && r->info->grid && cfg->grid && strcmp(cfg->grid, "auto") != 0)
    st = fg_grid_parse(cfg->grid, d->size, r->grid);
  if (st == FG_OK && cfg->replicate != 0) st = fg_replicate_check(cfg->replicate, d->size);
  FG_CHECK(fg_dist_agree(d, st));
  if (r->info && r->info->replicate) /* c = 1 (1d-sa's layout) where it is the only one */
    r->replicate = cfg->replicate > 0                ? cfg->replicate
                   : fg_replicate_valid(d->size, NULL, 0) == 1 ? 1
                                                    : 0;
  given = r->info && (r->info->grid ? cfg->grid && strcmp(cfg->grid, "auto") != 0
                                    : !r->info->replicate || r->replicate > 0);
  if (given) return FG_OK;
  if (r->info) cand = fg_scheme_bit(r->info); /* grid auto, or c auto: that scheme's only */
  if (d->rank == 0) {
    const fg_scheme_info *pick = NULL;
    st = fg_plan_pick(ds, cfg, d->size, cand, &r->lay, &pick, choice + 1, choice + 4,
                      &r->mem_bytes, &r->pick);
    r->predicted = st == FG_OK;
    for (int i = 0; st == FG_OK && i < fg_scheme_registry_size(); i++)
      if (fg_scheme_bit(pick) == 1u << i) choice[0] = i;
    if (st == FG_OK && cfg->verbose) {
      if (pick->grid)
        fprintf(log, "performance model: %s grid %dx%dx%d\n", pick->name, choice[1], choice[2],
                choice[3]);
      else if (pick->replicate)
        fprintf(log, "performance model: %s, --replicate %d\n", pick->name, choice[4]);
      else
        fprintf(log, "performance model: %s\n", pick->name);
    }
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(fg_dist_bcast(d, choice, sizeof choice, 0));
  r->info = fg_scheme_registry_at(choice[0]);
  memcpy(r->grid, choice + 1, sizeof r->grid);
  r->replicate = choice[4];
cleanup:
  return st;
}

/* Collective: lay out, build the model and the loss buffers. */
static fg_status run_create(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                            FILE *log, run *r) {
  fg_status st = FG_OK;
  fg_scheme_config sc;
  int L = cfg->layers; /* the model's; the stack's once the model is chosen */
  uint8_t *own = NULL;
  memset(&sc, 0, sizeof sc);
  r->d = d;
  r->mem_bytes = -1.0;
  if (cfg->bf16_path) { /* before the memory models: a bf16 product's row blocks follow the
                           path. Where native is missing every rank says so (a uniform cluster) */
    st = fg_set_bf16_path(cfg->bf16_path);
    FG_CHECK(fg_dist_agree(d, st));
  }
  FG_CHECK(choose_scheme(d, ds, cfg, log, r));
  fg_layouts_keep(&r->lay, !r->info->grid, r->info->grid); /* what the chosen scheme needs */
  /* refuse a run that would not fit before allocating for it (membudget.c): one process from
   * the dataset's sizes, several from the performance model's busiest rank */
  if (d->size == 1) {
    st = r->info->grid ? FG_OK : fg_train_memory_check(ds, cfg);
    FG_CHECK(fg_dist_agree(d, st));
  }
  FG_CHECK(fg_train_memory_check_ranks(d, ds, cfg, r->info, r->grid, r->replicate, &r->lay,
                                       r->mem_bytes));
  sc.name = r->info->name;
  sc.order = fg_scheme_order(r->info, cfg->order);
  sc.order_default = !cfg->order && sc.order;
  sc.overlap = cfg->overlap;
  sc.seed = cfg->seed;
  sc.normalize_features = cfg->normalize_features;
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, cfg->gin_eps, &r->mdl));
  L = fg_model_stack_layers(r->mdl.kind, cfg->layers);
  sc.adj = r->mdl.adj;
  sc.verbose = cfg->verbose;
  sc.log = log;
  sc.reorder = cfg->reorder;
  sc.reorder_width = fg_train_hidden_width(cfg, ds ? ds->num_classes : 1);
  sc.layers = L;
  memcpy(sc.grid, r->grid, sizeof sc.grid);
  sc.replicate = r->replicate;
  sc.double_perm = cfg->double_perm;
  sc.agg_blocks = cfg->agg_blocks;
  sc.learn_features = cfg->learn_features;
  sc.input_grad = cfg->label_prop > 0;
  FG_CHECK(fg_precision_parse(cfg->precision, &sc.bf16)); /* validated: agreed */
  /* bf16 features: laid out as bf16 by the schemes that pack them (fg_scheme_config) */
  sc.features16 = fg_model_features16(sc.bf16, cfg->residual, cfg->learn_features);
  {
    fg_halo_rule rule = FG_HALO_HYBRID;
    st = fg_halo_rule_parse(cfg->aggregation, &rule);
    if (st == FG_OK) st = fg_halo_quant_parse(cfg->quantize, &sc.quantize_bits);
    sc.aggregation = (int)rule;
    FG_CHECK(fg_dist_agree(d, st));
  }
  sc.layouts = d->rank == 0 ? &r->lay : NULL;
  FG_CHECK(r->info->create(d, ds, &sc, &r->s));
  r->s->bf16 = sc.bf16;
  fg_layouts_free(&r->lay); /* distributed: rank 0 keeps no copy */
  if (r->task == FG_TASK_MULTILABEL) FG_CHECK(fg_scheme_scatter_targets(r->s, ds));
  /* the model: widths input, hidden..., classes */
  r->widths = fg_malloc_array((size_t)L + 1, sizeof *r->widths);
  r->wd = fg_malloc_array((size_t)L, sizeof *r->wd);
  st = r->widths && r->wd ? fg_model_widths(r->mdl.kind, cfg->layers, cfg->hidden, cfg->widths,
                                            r->s->num_features, r->s->num_classes, r->widths)
                          : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == FG_OK) {
    const fg_model_config mc = {.layers = L,
                                .widths = r->widths,
                                .agg_order = (int)cfg->agg_order,
                                .seed = cfg->seed,
                                .kind = r->mdl.kind,
                                .norm = r->mdl.norm,
                                .gin_eps = r->mdl.gin_eps,
                                .gin_eps_learn = r->mdl.gin_eps_learn,
                                .residual = cfg->residual,
                                .label_prop = (float)cfg->label_prop,
                                .bf16 = sc.bf16};
    st = fg_model_create(&mc, r->s, &r->m);
  }
  if (st == FG_OK) {
    const fg_layer_shape *sh = &r->m->shape[L - 1];
    const int64_t nl = r->s->n_local;
    r->train_sel = fg_malloc_array((size_t)FG_MAX(nl, 1), 1);
    r->sel = fg_malloc_array((size_t)FG_MAX(nl, 1), 1);
    r->eval_sel = fg_malloc_array((size_t)FG_MAX(nl, 1), 1);
    /* the backward pass's first SpMM gathers its rows at random: huge pages, as activations */
    r->dlogits = fg_malloc_huge((size_t)FG_MAX(nl * sh->w_out, 1) * sizeof(float));
    r->n_idx = fg_model_param_index(r->m, NULL, NULL);
    r->idx = fg_malloc_array((size_t)FG_MAX(r->n_idx, 1), sizeof *r->idx);
    own = fg_malloc_array((size_t)FG_MAX(r->n_idx, 1), sizeof *own);
    if (!r->train_sel || !r->sel || !r->eval_sel || !r->dlogits || !r->idx || !own)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for the loss buffers");
  }
  FG_CHECK(fg_dist_agree(d, st));
  for (int l = 0; l < L; l++) /* FG_WD_FIRST: the first model layer's stack layers */
    r->wd[l] = (cfg->weight_decay_layers == FG_WD_ALL || l < r->mdl.kind->stages)
                   ? (float)cfg->weight_decay
                   : 0.0f;
  /* the parameters checkpoints take from this rank: the primary copy of each */
  fg_model_param_index(r->m, r->idx, own);
  for (int64_t k = 0; k < r->n_idx; k++) r->n_owned += own[k];
  r->own_idx = fg_malloc_array((size_t)FG_MAX(r->n_owned, 1), sizeof *r->own_idx);
  r->own_pos = fg_malloc_array((size_t)FG_MAX(r->n_owned, 1), sizeof *r->own_pos);
  r->own_val = fg_malloc_array((size_t)FG_MAX(r->n_owned, 1), sizeof *r->own_val);
  st = r->own_idx && r->own_pos && r->own_val
           ? FG_OK
           : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  for (int64_t k = 0, j = 0; k < r->n_idx; k++)
    if (own[k]) {
      r->own_idx[j] = r->idx[k];
      r->own_pos[j++] = k;
    }
  {
    /* a logit row lives on every rank of its row block: count it on the one that holds its
     * first columns and the primary copy */
    const fg_layer_shape *sh = &r->m->shape[L - 1];
    const int counts_here = sh->out_primary && sh->col0_out == 0;
    /* label propagation's label nodes see their labels: they leave the loss and the training
     * accuracy to the other training nodes */
    const int64_t T = r->s->num_tasks;
    int64_t cp[6] = {0, 0, 0, 0, 0, 0}; /* counts, then pairs */
    for (int64_t i = 0; i < r->s->n_local; i++) {
      const int k = r->s->split[i];
      r->train_sel[i] = k == FG_SPLIT_TRAIN &&
                        !fg_label_prop_node(cfg->seed, (float)cfg->label_prop,
                                            r->s->global_ids[i], k);
      r->eval_sel[i] = k >= 0 && k < 3;
      if (!counts_here || !(k == FG_SPLIT_TRAIN ? r->train_sel[i] : k >= 0 && k < 3)) continue;
      if (r->s->targets) { /* whole rows here: a node counts when it has a target */
        int64_t have = 0;
        for (int64_t t = 0; t < T; t++) have += r->s->targets[i * T + t] >= 0;
        cp[k] += have > 0;
        cp[3 + k] += have;
      } else {
        cp[k]++;
      }
    }
    FG_CHECK(fg_dist_allreduce_i64(d, cp, 6));
    memcpy(r->counts, cp, sizeof r->counts);
    memcpy(r->pairs, cp + 3, sizeof r->pairs);
    r->loss_den = (double)(r->s->targets ? r->pairs[0] : r->counts[0]);
  }
cleanup:
  free(own);
  return st;
}

/* Collective. One training step of epoch `epoch`: forward with dropout, loss, backward,
 * gradient reduction, Adam step t. *loss_sum: the training loss summed over the training nodes
 * of all ranks. */
static fg_status train_step(run *r, const fg_train_config *cfg, int epoch, int64_t t,
                            double *loss_sum) {
  fg_status st = FG_OK;
  fg_dist *d = r->d;
  const float p = (float)cfg->dropout;
  const fg_adam_params adam = {(float)cfg->lr, 0.9f, 0.999f, 1e-8f};
  int64_t cnt = 0, cor = 0;
  d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_model_forward(r->m, r->s, 1, p, cfg->seed, (uint64_t)epoch));
  d->phase = FG_PHASE_METRICS; /* the softmax's row reductions over a column split */
  if (r->task == FG_TASK_MULTILABEL) { /* per (node, task) pair: no row statistics */
    *loss_sum = fg_model_bce(r->m, r->s, r->train_sel, (float)(1.0 / r->loss_den), r->dlogits,
                             NULL);
  } else {
    FG_CHECK(fg_model_softmax_stats(r->m, r->s, r->train_sel));
    *loss_sum = fg_model_xent(r->m, r->s, r->train_sel, 1.0f / (float)r->counts[0], r->dlogits,
                              &cnt, &cor);
  }
  d->phase = FG_PHASE_BACKWARD;
  FG_CHECK(fg_model_backward(r->m, r->s, r->dlogits, p, cfg->seed, (uint64_t)epoch));
  d->phase = FG_PHASE_GRADS;
  FG_CHECK(fg_model_reduce_grads(r->m, r->s));
  fg_model_adam(r->m, adam, r->wd, t);
  d->phase = FG_PHASE_METRICS;
  FG_CHECK(fg_dist_allreduce_f64(d, loss_sum, 1));
cleanup:
  return st;
}

/* Whether row i of this rank is in split k as the evaluation measures it (the training split:
 * the rows the loss takes). */
static int in_split(const run *r, int64_t i, int k) {
  return k == FG_SPLIT_TRAIN ? r->train_sel[i] != 0 : r->s->split[i] == k;
}

/* Collective, after an evaluation forward (and, multiclass, its softmax statistics): the
 * ROC-AUC of each split. Every pair a rank scores goes to rank 0 (fg_rocauc_gather): multi-label
 * the logit of each (node, task) with a target, on the primary copy of the rows and the rank
 * holding the task's column; multiclass (2 classes) log softmax(z)_1 of each labelled node, on
 * the rank holding column 1. */
static fg_status split_rocauc(run *r, double auc[3]) {
  fg_status st = FG_OK;
  const fg_model *m = r->m;
  const fg_layer_shape *sh = &m->shape[m->layers - 1];
  const int multi = r->task == FG_TASK_MULTILABEL;
  const int64_t T = multi ? r->s->num_tasks : 1, w = sh->w_out, c0 = sh->col0_out;
  const int64_t j0 = multi ? 0 : 1 - c0, j1 = multi ? w : j0 + 1; /* the block's columns */
  const int here = sh->out_primary && (multi || (c0 <= 1 && 1 < c0 + w));
  const float *z = m->H[m->layers]; /* (n_out x w) */
  int64_t *count = NULL, total = 0;
  fg_scored *pairs = NULL;
  count = fg_calloc_array((size_t)(3 * T), sizeof *count);
  st = count ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int pass = 0; st == FG_OK && here && pass < 2; pass++) { /* count, then fill */
    int64_t at = 0;
    for (int k = 0; k < 3; k++)
      for (int64_t j = j0; j < j1; j++)
        for (int64_t i = 0; i < sh->n_out; i++) {
          if (!in_split(r, i, k)) continue;
          const int y = multi ? r->s->targets[i * T + c0 + j] : r->s->labels[i];
          if (y < 0) continue;
          if (pass == 0) {
            count[k * T + (multi ? c0 + j : 0)]++;
            continue;
          }
          pairs[at++] =
              (fg_scored){multi ? z[i * w + j]
                                : (float)((double)z[i * w + j] - (double)m->row_max[i].val -
                                          log(m->row_sum[i])),
                          (int8_t)y};
        }
    if (pass == 0) {
      for (int64_t k = 0; k < 3 * T; k++) total += count[k];
      pairs = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *pairs);
      if (!pairs)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                          "out of memory for %lld scored pairs", (long long)total);
    }
  }
  FG_CHECK(fg_dist_agree(r->d, st));
  FG_CHECK(fg_rocauc_gather(r->d, T, count, pairs ? pairs : &(fg_scored){0, 0}, auc));
cleanup:
  free(count);
  free(pairs);
  return st;
}

/* Collective. Multi-label evaluation (after the forward): each split's metric and the mean
 * validation loss over the validation pairs. */
static fg_status evaluate_multilabel(run *r, double acc[3], double *valid_loss) {
  fg_status st = FG_OK;
  double sums[16] = {0}; /* per split: pairs, correct, tp, fp, fn; then the validation loss */
  for (int k = 0; k < 3; k++) {
    fg_bce_counts c;
    for (int64_t i = 0; i < r->s->n_local; i++) r->sel[i] = (uint8_t)in_split(r, i, k);
    const double l = fg_model_bce(r->m, r->s, r->sel, 1.0f, NULL, &c);
    sums[5 * k] = (double)c.pairs;
    sums[5 * k + 1] = (double)c.correct;
    sums[5 * k + 2] = (double)c.tp;
    sums[5 * k + 3] = (double)c.fp;
    sums[5 * k + 4] = (double)c.fn;
    if (k == FG_SPLIT_VALID) sums[15] = l;
  }
  FG_CHECK(fg_dist_allreduce_f64(r->d, sums, 16));
  for (int k = 0; k < 3; k++) {
    const double *q = sums + 5 * k;
    acc[k] = r->metric == FG_METRIC_F1_MICRO
                 ? fg_f1_micro((int64_t)q[2], (int64_t)q[3], (int64_t)q[4])
                 : q[0] > 0 ? q[1] / q[0] : 0.0;
  }
  *valid_loss = sums[5] > 0 ? sums[15] / sums[5] : 0.0;
  if (r->metric == FG_METRIC_ROCAUC) FG_CHECK(split_rocauc(r, acc));
cleanup:
  return st;
}

/* Collective. Evaluation forward (no dropout); the metric of each split (accuracy, or what
 * --metric names) and the mean validation loss, reduced over ranks. */
static fg_status evaluate(run *r, const fg_train_config *cfg, int epoch, double acc[3],
                          double *valid_loss) {
  fg_status st = FG_OK;
  double sums[7] = {0};
  r->d->phase = FG_PHASE_FORWARD;
  FG_CHECK(fg_model_forward(r->m, r->s, 0, 0.0f, cfg->seed, (uint64_t)epoch));
  r->d->phase = FG_PHASE_METRICS;
  if (r->task == FG_TASK_MULTILABEL) return evaluate_multilabel(r, acc, valid_loss);
  FG_CHECK(fg_model_softmax_stats(r->m, r->s, r->eval_sel));
  for (int k = 0; k < 3; k++) {
    int64_t count = 0, correct = 0;
    double l;
    for (int64_t i = 0; i < r->s->n_local; i++)
      r->sel[i] = k == FG_SPLIT_TRAIN ? r->train_sel[i] : r->s->split[i] == k;
    l = fg_model_xent(r->m, r->s, r->sel, 1.0f, NULL, &count, &correct);
    sums[2 * k] = (double)correct;
    sums[2 * k + 1] = (double)count;
    if (k == FG_SPLIT_VALID) sums[6] = l;
  }
  FG_CHECK(fg_dist_allreduce_f64(r->d, sums, 7));
  /* (f1-micro of one class a node is the accuracy) */
  for (int k = 0; k < 3; k++) acc[k] = sums[2 * k + 1] > 0 ? sums[2 * k] / sums[2 * k + 1] : 0.0;
  *valid_loss = sums[3] > 0 ? sums[6] / sums[3] : 0.0;
  if (r->metric == FG_METRIC_ROCAUC) FG_CHECK(split_rocauc(r, acc));
cleanup:
  return st;
}

/* Collective: the parameters and Adam moments in the one-process layout into rank 0's state. */
static fg_status export_state(run *r, const fg_ckpt_state *state) {
  fg_status st = FG_OK;
  const float *const src[3] = {r->m->params, r->m->adam_m, r->m->adam_v};
  float *const dst[3] = {state ? state->params : NULL, state ? state->adam_m : NULL,
                         state ? state->adam_v : NULL};
  for (int a = 0; a < 3; a++) {
    for (int64_t j = 0; j < r->n_owned; j++) r->own_val[j] = src[a][r->own_pos[j]];
    FG_CHECK(fg_scheme_gather_params(r->s, r->own_val, r->own_idx, r->n_owned,
                                     r->m->n_params_global, dst[a]));
  }
cleanup:
  return st;
}

/* Collective: every rank's pieces from rank 0's state (its arrays are overwritten elsewhere). */
static fg_status import_state(run *r, fg_ckpt_state *state) {
  fg_status st = FG_OK;
  float *const src[3] = {state->params, state->adam_m, state->adam_v};
  float *const dst[3] = {r->m->params, r->m->adam_m, r->m->adam_v};
  for (int a = 0; a < 3; a++) {
    FG_CHECK(fg_dist_bcast(r->d, src[a], r->m->n_params_global * 4, 0));
    for (int64_t k = 0; k < r->n_idx; k++) dst[a][k] = src[a][r->idx[k]];
  }
cleanup:
  return st;
}

/* The runs of this rank's learned-feature piece: row i (input row feat_row0 + i, node ids_in[.])
 * holds indices node F + [col0_in, col0_in + w_in) of the N x F features, at positions feat_off
 * + i w_in of the model's buffers. */
static fg_status feature_runs(const run *r, fg_ckpt_runs *out) {
  fg_status st = FG_OK;
  const fg_layer_shape *sh = &r->m->shape[0];
  const int64_t rows = r->s->feat_rows, F = r->s->num_features, w = sh->w_in;
  int64_t *idx = NULL, *pos = NULL;
  FG_ALLOC(idx, FG_MAX(rows, 1));
  FG_ALLOC(pos, FG_MAX(rows, 1));
  for (int64_t i = 0; i < rows; i++) {
    idx[i] = sh->ids_in[r->s->feat_row0 + i] * F + sh->col0_in;
    pos[i] = r->m->feat_off + i * w;
  }
  FG_CHECK(fg_ckpt_runs_build(rows, idx, pos, w, out));
cleanup:
  free(idx);
  free(pos);
  return st;
}

/* dir/name into buf, or an error naming dir. */
static fg_status dir_file(char *buf, size_t cap, const char *dir, const char *name) {
  fg_status st = FG_OK;
  const size_t n = strlen(dir);
  FG_REQUIRE((size_t)snprintf(buf, cap, "%s%s%s", dir, n && dir[n - 1] == '/' ? "" : "/", name) <
                 cap, FG_ERR_INVALID_ARG, "--checkpoint %s: the name is too long", dir);
cleanup:
  return st;
}

/* Collective: a sharded checkpoint in directory cfg->checkpoint_path (fg_checkpoint.h). Every
 * rank writes the elements it owns (the primary copies of its weights, its learned-feature
 * piece) with their Adam moments into files of a new generation; once every rank has, rank 0
 * writes the manifest listing them (renamed into place last: the commit) and removes the
 * files of other generations. state: rank 0's model description (no arrays needed). */
static fg_status sharded_save(run *r, const fg_train_config *cfg, const fg_ckpt_state *state,
                              const fg_ckpt_meta *meta) {
  fg_status st = FG_OK;
  fg_dist *d = r->d;
  const char *dir = cfg->checkpoint_path;
  const int fams = r->s->learn_features ? 2 : 1;
  const int64_t space[2] = {r->m->n_params_global, r->s->n_global * r->s->num_features};
  const float *const arrays[3] = {r->m->params, r->m->adam_m, r->m->adam_v};
  uint64_t gen = 0;
  fg_ckpt_runs runs[2];
  fg_ckpt_shard_entry mine[2], *all = NULL;
  fg_ckpt_manifest mf;
  char path[4200];
  memset(runs, 0, sizeof runs);
  memset(mine, 0, sizeof mine);
  memset(&mf, 0, sizeof mf);
  /* rank 0 makes the directory and picks a generation no file there has, so no file the
   * current manifest names is written over */
  if (d->rank == 0) {
    if (mkdir(dir, 0777) != 0 && errno != EEXIST)
      st = fg_error_set(FG_ERR_IO, __FILE__, __LINE__, "--checkpoint %s: cannot make the "
                        "directory: %s", dir, strerror(errno));
    if (st == FG_OK) st = fg_ckpt_next_generation(dir, &gen);
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(fg_dist_bcast(d, &gen, sizeof gen, 0));
  st = fg_ckpt_runs_build(r->n_owned, r->own_idx, r->own_pos, 1, &runs[0]);
  if (st == FG_OK && fams == 2) st = feature_runs(r, &runs[1]);
  for (int f = 0; st == FG_OK && f < fams; f++) {
    fg_ckpt_shard_name(mine[f].name, sizeof mine[f].name, (uint32_t)f, (uint32_t)d->rank,
                       (uint32_t)d->size, gen);
    st = dir_file(path, sizeof path, dir, mine[f].name);
    if (st == FG_OK)
      st = fg_ckpt_shard_write(path, (uint32_t)d->rank, (uint32_t)d->size, (uint32_t)f, gen,
                               space[f], &runs[f], arrays, &mine[f]);
  }
  FG_CHECK(fg_dist_agree(d, st)); /* every shard is on disk, synced, before the manifest */
  if (d->rank == 0 && !(all = fg_malloc_array((size_t)d->size * 2, sizeof *all)))
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK_MPI(MPI_Gather(mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
                          d->comm));
  if (d->rank == 0) {
    /* the manifest lists the weights' files by rank, then the features' */
    mf.ranks = (uint32_t)d->size;
    mf.generation = gen;
    mf.feat_rows = fams == 2 ? r->s->n_global : 0;
    mf.feat_cols = fams == 2 ? r->s->num_features : 0;
    snprintf(mf.scheme, sizeof mf.scheme, "%s", r->info->name);
    mf.n_shards = (uint32_t)(fams * d->size);
    mf.shards = fg_malloc_array(mf.n_shards, sizeof *mf.shards);
    st = mf.shards ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    for (int f = 0; st == FG_OK && f < fams; f++)
      for (int p = 0; p < d->size; p++) mf.shards[f * d->size + p] = all[2 * p + f];
    if (st == FG_OK) st = fg_ckpt_manifest_write(dir, state, meta, &mf);
    if (st == FG_OK) fg_ckpt_prune(dir, gen); /* committed: the older files can go */
  }
  FG_CHECK(fg_dist_agree(d, st));
cleanup:
  for (int f = 0; f < 2; f++) fg_ckpt_runs_free(&runs[f]);
  fg_ckpt_manifest_free(&mf);
  free(all);
  return st;
}

/* Collective: resume from the sharded checkpoint in directory cfg->resume_path. Every rank
 * reads the manifest and checks it against the run (state: the model, widths, options; the
 * dataset on rank 0), then the values of every weight element it holds a copy of and of its
 * learned-feature piece from the shard files (its own rank's first; fg_ckpt_shards_load).
 * files: the most shard files a rank read, of weights and of features. */
static fg_status sharded_load(run *r, const fg_train_config *cfg, const fg_ckpt_state *state,
                              fg_ckpt_meta *meta, int files[2]) {
  fg_status st = FG_OK;
  fg_dist *d = r->d;
  const char *dir = cfg->resume_path;
  const int learn = r->s->learn_features;
  float *const dst[3] = {r->m->params, r->m->adam_m, r->m->adam_v};
  fg_ckpt_manifest mf;
  fg_ckpt_runs need;
  int64_t *pos = NULL;
  int n_read[2] = {0, 0};
  double most[2];
  memset(&mf, 0, sizeof mf);
  memset(&need, 0, sizeof need);
  st = fg_ckpt_manifest_read(dir, state, meta, &mf);
  if (st == FG_OK && meta->seed != cfg->seed)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: checkpoint was made with --seed %llu, this run has --seed %llu", dir,
                      (unsigned long long)meta->seed, (unsigned long long)cfg->seed);
  if (st == FG_OK && meta->epoch > cfg->epochs)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: the checkpoint is at epoch %lld, past --epochs %d; give --epochs of at "
                      "least %lld", dir, (long long)meta->epoch, cfg->epochs,
                      (long long)meta->epoch);
  if (st == FG_OK && mf.feat_rows > 0 && !learn)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: the checkpoint holds learned features (%lld x %lld); this run does "
                      "not learn them: add --learn-features", dir, (long long)mf.feat_rows,
                      (long long)mf.feat_cols);
  if (st == FG_OK && mf.feat_rows == 0 && learn)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: this run learns its features (--learn-features), the checkpoint "
                      "holds none", dir);
  if (st == FG_OK && learn &&
      (mf.feat_rows != r->s->n_global || mf.feat_cols != r->s->num_features))
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "%s: the checkpoint's learned features are %lld x %lld, this run's %lld x "
                      "%lld", dir, (long long)mf.feat_rows, (long long)mf.feat_cols,
                      (long long)r->s->n_global, (long long)r->s->num_features);
  FG_CHECK(fg_dist_agree(d, st));
  /* the weights: every copy this rank holds (element k of its buffers is index idx[k]) */
  pos = fg_malloc_array((size_t)FG_MAX(r->n_idx, 1), sizeof *pos);
  st = pos ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  for (int64_t k = 0; st == FG_OK && k < r->n_idx; k++) pos[k] = k;
  if (st == FG_OK) st = fg_ckpt_runs_build(r->n_idx, r->idx, pos, 1, &need);
  if (st == FG_OK)
    st = fg_ckpt_shards_load(dir, &mf, FG_CKPT_WEIGHTS, (uint32_t)d->rank,
                             r->m->n_params_global, &need, dst, &n_read[0]);
  fg_ckpt_runs_free(&need);
  if (st == FG_OK && learn) st = feature_runs(r, &need);
  if (st == FG_OK && learn)
    st = fg_ckpt_shards_load(dir, &mf, FG_CKPT_FEATURES, (uint32_t)d->rank,
                             r->s->n_global * r->s->num_features, &need, dst, &n_read[1]);
  FG_CHECK(fg_dist_agree(d, st));
  most[0] = n_read[0];
  most[1] = n_read[1];
  FG_CHECK(fg_dist_max_f64(d, most, 2));
  files[0] = (int)most[0];
  files[1] = (int)most[1];
cleanup:
  fg_ckpt_runs_free(&need);
  fg_ckpt_manifest_free(&mf);
  free(pos);
  return st;
}

/* Collective: write the logits (which = 0) or the last hidden layer (which = 1: the input of
 * the model's last layer, the first of its stack layers) of the last forward, gathered in
 * original node order on rank 0, to path (when not NULL) and into buf on every rank (when not
 * NULL; fg_train has checked that every rank gives one or none does). */
static fg_status save_output(run *r, int which, const char *path, float *buf) {
  fg_status st = FG_OK, st2;
  fg_dist *d = r->d;
  const int L = r->m->layers, lh = L - r->m->kind->stages;
  const fg_layer_shape *sh = &r->m->shape[which == 0 ? L - 1 : lh];
  const int64_t w = r->widths[which == 0 ? L : lh], n = r->s->n_global;
  float *all = NULL;
  if (d->rank == 0) {
    all = fg_malloc_array((size_t)FG_MAX(n * w, 1), sizeof *all);
    if (!all) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for %s", path);
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (which == 0)
    FG_CHECK(fg_scheme_gather_rows(r->s, r->m->H[L], sh->ids_out, sh->out_primary ? sh->n_out : 0,
                                   sh->col0_out, sh->w_out, w, all));
  else
    FG_CHECK(fg_scheme_gather_rows(r->s, fg_model_in32(r->m, lh, r->m->H[lh]), sh->ids_in,
                                   sh->in_primary ? sh->n_in : 0, sh->col0_in, sh->w_in, w, all));
  if (d->rank == 0 && path) st = fg_npy_write_f32(path, all, n, w);
  if (buf) {
    if (d->rank == 0) memcpy(buf, all, (size_t)(n * w) * sizeof *buf);
    FG_CHECK(fg_dist_bcast(d, buf, n * w * (int64_t)sizeof *buf, 0));
  }
cleanup:
  st2 = fg_dist_agree(d, st);
  free(all);
  return st2;
}

/* Collective: the run record (provenance.c) of this run, made on rank 0 (which has the dataset
 * and the performance model's pick) and copied to every rank, where it becomes
 * fg_last_run_record(). */
static fg_status make_record(run *r, const fg_dataset *ds, const fg_train_config *cfg,
                             int start_epoch, time_t started) {
  fg_status st = FG_OK;
  fg_dist *d = r->d;
  char **hosts = NULL, *record = NULL;
  int n_hosts = 0;
  int64_t len = 0;
  FG_CHECK(fg_run_hosts(d->comm, &hosts, &n_hosts));
  if (d->rank == 0) {
    const fg_run_facts f = {.ranks = d->size,
                            .threads = fg_max_threads(),
                            .hosts = (const char *const *)hosts,
                            .n_hosts = n_hosts,
                            .scheme = r->info->name,
                            .grid = r->info->grid ? r->grid : NULL,
                            .replicate = r->info->replicate ? r->replicate : 0,
                            /* read per rank: the directory's order is the layout */
                            .order = ds && ds->prep_dir ? ds->prep_order
                                                        : fg_scheme_order(r->info, cfg->order),
                            .reorder = r->s->reorder_used,
                            .model = r->mdl.kind->name,
                            .adj_norm = fg_adj_norm_name(r->mdl.adj.norm),
                            .norm = fg_norm_name(r->mdl.norm),
                            .gin_eps_learn = r->mdl.gin_eps_learn,
                            .gin_eps = r->mdl.gin_eps,
                            .layers = r->m->layers,
                            .widths = r->widths,
                            .start_epoch = start_epoch,
                            .started = started,
                            .load_seconds = cfg->load_seconds,
                            .setup_seconds = r->setup_seconds,
                            .setup_peak_rss = r->setup_rss,
                            .predicted = r->predicted ? &r->pick : NULL,
                            .task = fg_task_name(r->task),
                            .metric = fg_metric_name(r->metric)};
    st = fg_run_record_format(cfg, ds, &f, &record);
    len = record ? (int64_t)strlen(record) + 1 : 0;
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(fg_dist_bcast(d, &len, sizeof len, 0));
  if (d->rank != 0) {
    record = malloc((size_t)len);
    st = record ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK(fg_dist_bcast(d, record, len, 0));
  fg_run_record_keep(record);
  record = NULL;
cleanup:
  free(record);
  fg_run_hosts_free(hosts, n_hosts);
  return st;
}

/* ---- the loop ------------------------------------------------------------------------------- */

/* Collective: each rank's peak resident bytes so far into *out on rank 0 (ranks entries,
 * allocated here; NULL elsewhere). */
static fg_status gather_peak_rss(fg_dist *d, int64_t **out) {
  fg_status st = FG_OK;
  const int64_t mine = fg_peak_rss_bytes();
  if (d->rank == 0 && !(*out = fg_malloc_array((size_t)d->size, sizeof **out)))
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK_MPI(MPI_Gather(&mine, 1, MPI_INT64_T, *out, 1, MPI_INT64_T, 0, d->comm));
cleanup:
  return st;
}

fg_status fg_train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *cfg,
                   fg_train_result *result) {
  fg_status st = FG_OK;
  fg_dist *d = NULL;
  run r;
  FILE *metrics = NULL;
  FILE *log = cfg->log ? cfg->log : stdout;
  fg_ckpt_meta meta;
  fg_ckpt_state state;
  fg_ckpt_options ckpt_options;
  fg_ds_fingerprint fingerprint;
  double secs_total = 0.0;
  int secs_n = 0, start_epoch = 0, show_progress, stop = 0;
  int ckpt_sharded = 0, resume_sharded = 0; /* a directory of shards: sharded_output, and
                                               fg_ckpt_path_sharded for reading */
  const time_t started = time(NULL);
  const double t_entry = fg_now();
  const char *record = NULL;   /* the run record, on every rank (make_record) */
  /* this rank's bytes sent and received per phase, summed over the epochs this call runs (the
   * final record's rank_bytes); all_bytes: rank 0's gather of every rank's */
  double my_bytes[N_COMM_PHASES][2], *all_bytes = NULL;
  int64_t *all_rss = NULL; /* rank 0: every rank's peak RSS at the end */

  memset(&r, 0, sizeof r);
  memset(&meta, 0, sizeof meta);
  memset(&state, 0, sizeof state);
  memset(result, 0, sizeof *result);
  memset(my_bytes, 0, sizeof my_bytes);
  fg_run_record_keep(NULL); /* no stale record of an earlier call */
  FG_CHECK(fg_dist_create(comm, &d));
  st = d->rank == 0 ? fg_train_config_check(cfg, d->size) : FG_OK; /* rank 0 does the I/O */
  if (st == FG_OK && d->rank == 0 && !ds)
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "fg_train: no dataset on rank 0");
  {
    /* the task and metric, decided by rank 0 from the data (fg_metric.h) */
    int tm[2] = {FG_TASK_MULTICLASS, FG_METRIC_ACCURACY};
    if (st == FG_OK && d->rank == 0 && ds)
      st = fg_task_resolve(cfg->task, cfg->metric, cfg->label_prop, ds, &tm[0], &tm[1]);
    if (st == FG_OK && d->rank == 0 && ds && tm[0] == FG_TASK_MULTICLASS && ds->num_classes < 2)
      st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                        "%s: %lld label class(es); classification needs at least 2",
                        ds->source ? ds->source : "dataset", (long long)ds->num_classes);
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_bcast(d, tm, sizeof tm, 0));
    r.task = tm[0];
    r.metric = tm[1];
  }
  {
    /* the caller's output buffers are filled on every rank, so every rank gives each or none
     * does: max(x) == -max(-x) */
    double given[6] = {cfg->history != NULL, cfg->predictions_out != NULL,
                       cfg->embeddings_out != NULL};
    for (int k = 0; k < 3; k++) given[k + 3] = -given[k];
    FG_CHECK(fg_dist_max_f64(d, given, 6));
    FG_REQUIRE(given[0] == -given[3] && given[1] == -given[4] && given[2] == -given[5],
               FG_ERR_INVALID_ARG, "fg_train: history, predictions_out and embeddings_out must "
               "be given on every rank or on none");
  }
  show_progress = cfg->progress && d->rank == 0 && isatty(fileno(stderr));

  d->phase = FG_PHASE_SETUP;
  FG_CHECK(run_create(d, ds, cfg, log, &r));
  {
    /* the setup's cost for the run record: its time, and every rank's peak memory so far (the
     * load's, before any epoch allocates) */
    r.setup_seconds = fg_now() - t_entry;
    FG_CHECK(gather_peak_rss(d, &r.setup_rss));
    FG_CHECK(fg_dist_max_f64(d, &r.setup_seconds, 1));
  }
  FG_REQUIRE(r.counts[0] > 0, FG_ERR_INVALID_ARG, "the training split is empty");

  /* the one-process layout of the parameters, which checkpoints hold: on rank 0 for writing,
   * on every rank while resuming */
  state.model = (fg_ckpt_model){.kind = r.mdl.kind->name,
                                .mats = r.mdl.kind->stage[0]->mats,
                                .adj_norm = (int)r.mdl.adj.norm,
                                .no_self_loops = r.mdl.adj.no_self_loops,
                                .norm = r.mdl.norm,
                                .stages = r.mdl.kind->stages,
                                .eps_learn = r.mdl.gin_eps_learn,
                                .eps = r.mdl.gin_eps,
                                .residual = cfg->residual,
                                .label_embed = cfg->label_prop > 0};
  state.layers = r.m->layers;
  state.widths = r.widths;
  state.n_params = r.m->n_params_global;
  /* what a checkpoint records of its run, and a resume must repeat (fg_checkpoint.h): the
   * options, and on rank 0, which reads and writes, the dataset's fingerprint */
  ckpt_options = (fg_ckpt_options){.lr = cfg->lr,
                                   .dropout = cfg->dropout,
                                   .weight_decay = cfg->weight_decay,
                                   .label_prop = cfg->label_prop,
                                   .weight_decay_layers = (int)cfg->weight_decay_layers,
                                   .normalize_features = cfg->normalize_features != 0,
                                   .task = r.task,
                                   .metric = r.metric};
  state.options = &ckpt_options;
  if (d->rank == 0 && (cfg->checkpoint_path || cfg->resume_path)) {
    fg_dataset_fingerprint(ds, &fingerprint);
    state.dataset = &fingerprint;
  }
  /* the one-process copy only where a single file is written (rank 0) or read (every rank):
   * a sharded checkpoint never holds the whole model on one rank */
  ckpt_sharded = sharded_output(cfg->checkpoint_path);
  resume_sharded = cfg->resume_path && fg_ckpt_path_sharded(cfg->resume_path);
  if ((d->rank == 0 && cfg->checkpoint_path && !ckpt_sharded) ||
      (cfg->resume_path && !resume_sharded)) {
    const size_t bytes = (size_t)FG_MAX(state.n_params, 1) * sizeof(float);
    state.params = fg_malloc_aligned(bytes);
    state.adam_m = fg_malloc_aligned(bytes);
    state.adam_v = fg_malloc_aligned(bytes);
    st = state.params && state.adam_m && state.adam_v
             ? FG_OK
             : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                            "out of memory for a copy of %lld parameters",
                            (long long)state.n_params);
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* resume: rank 0 reads, everyone takes its pieces; or, sharded, every rank reads its own */
  meta.seed = cfg->seed;
  if (resume_sharded) {
    int files[2] = {0, 0};
    FG_CHECK(sharded_load(&r, cfg, &state, &meta, files));
    start_epoch = (int)meta.epoch;
    if (d->rank == 0 && cfg->verbose)
      fprintf(log, "resumed from %s at epoch %d (sharded: each rank read at most %d weight "
              "and %d feature shard file(s))\n", cfg->resume_path, start_epoch, files[0],
              files[1]);
  } else if (cfg->resume_path) {
    st = FG_OK;
    if (d->rank == 0) {
      st = fg_checkpoint_read(cfg->resume_path, &state, &meta);
      if (st == FG_OK && meta.seed != cfg->seed)
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "%s: checkpoint was made with --seed %llu, this run has --seed %llu",
                          cfg->resume_path, (unsigned long long)meta.seed,
                          (unsigned long long)cfg->seed);
      if (st == FG_OK && meta.epoch > cfg->epochs)
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "%s: the checkpoint is at epoch %lld, past --epochs %d; give --epochs "
                          "of at least %lld", cfg->resume_path, (long long)meta.epoch,
                          cfg->epochs, (long long)meta.epoch);
    }
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_bcast(d, &meta, sizeof meta, 0));
    FG_CHECK(import_state(&r, &state));
    start_epoch = (int)meta.epoch;
    if (d->rank == 0 && cfg->verbose)
      fprintf(log, "resumed from %s at epoch %d\n", cfg->resume_path, start_epoch);
  }
  FG_CHECK(make_record(&r, ds, cfg, start_epoch, started));
  record = fg_last_run_record();
  state.run_record = record;
  if (d->rank == 0 && cfg->metrics_path) st = metrics_open(cfg->metrics_path, start_epoch, &metrics);
  /* the run record heads this run's epochs: a fresh file's first line, a resumed run's first
   * line after the epochs it keeps */
  if (st == FG_OK && metrics) {
    fprintf(metrics, "%s\n", record);
    st = metrics_check(metrics, cfg->metrics_path);
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (d->rank == 0 && cfg->verbose) {
    const fg_adj_spec adj = r.mdl.adj;
    fprintf(log, "%s", r.mdl.kind->name);
    for (int l = 0; l <= r.m->layers; l++)
      fprintf(log, "%s%lld", l ? " -> " : " ", (long long)r.widths[l]);
    fprintf(log, ", %lld parameters, adjacency %s%s%s; %d rank(s) x %d thread(s); "
            "train/valid/test %lld/%lld/%lld\n",
            (long long)r.m->n_params_global, fg_adj_norm_name(adj.norm),
            adj.no_self_loops ? " without self loops" : "",
            r.m->norm == FG_NORM_BATCH ? ", BatchNorm" : r.m->norm ? ", LayerNorm" : "",
            d->size, fg_max_threads(),
            (long long)r.counts[0], (long long)r.counts[1], (long long)r.counts[2]);
    fprintf(log, "scheme %s%s%s\n", r.info->name, r.s->note[0] ? ": " : "", r.s->note);
    if (r.task != FG_TASK_MULTICLASS || r.metric != FG_METRIC_ACCURACY) {
      if (r.task == FG_TASK_MULTILABEL)
        fprintf(log, "task multilabel: %lld tasks, sigmoid binary cross-entropy over %lld/%lld/%lld "
                "(node, task) pairs; ", (long long)r.s->num_tasks, (long long)r.pairs[0],
                (long long)r.pairs[1], (long long)r.pairs[2]);
      else
        fprintf(log, "task multiclass; ");
      fprintf(log, "metric %s (the train/valid/test columns below)\n", fg_metric_name(r.metric));
    }
  }

  for (int epoch = start_epoch + 1; epoch <= cfg->epochs; epoch++) {
    epoch_stats e;
    double t0 = fg_now(), spmm0, gemm0, sbytes0, flops0;
    const fg_comm_counters c0 = d->counters;
    double sent = 0.0;
    double loss_sum = 0.0;
    memset(&e, 0, sizeof e);
    spmm0 = r.s->seconds_spmm;
    gemm0 = r.m->seconds[FG_TIME_GEMM];
    sbytes0 = r.s->spmm_bytes;
    flops0 = r.m->gemm_flops;

    /* train step, then evaluation (no dropout) */
    meta.adam_t++;
    FG_CHECK(train_step(&r, cfg, epoch, meta.adam_t, &loss_sum));
    e.loss = loss_sum / r.loss_den;
    FG_REQUIRE(isfinite(e.loss), FG_ERR_NUMERIC,
               "epoch %d: the training loss is %g; lower --lr or check the input features",
               epoch, e.loss);
    FG_CHECK(evaluate(&r, cfg, epoch, e.acc, &e.valid_loss));

    e.seconds = fg_now() - t0;
    e.seconds_spmm = r.s->seconds_spmm - spmm0;
    e.seconds_gemm = r.m->seconds[FG_TIME_GEMM] - gemm0;
    e.seconds_comm = d->counters.seconds_comm - c0.seconds_comm;
    e.seconds_wait = d->counters.seconds_wait - c0.seconds_wait;
    e.seconds_other = e.seconds - e.seconds_spmm - e.seconds_gemm - e.seconds_comm;
    if (e.seconds_other < 0) e.seconds_other = 0;
    comm_delta(&d->counters, &c0, e.comm_max);
    for (int k = 0; k < N_COMM_PHASES; k++) {
      my_bytes[k][0] += e.comm_max[k][0];
      my_bytes[k][1] += e.comm_max[k][1];
    }
    memcpy(e.comm_mean, e.comm_max, sizeof e.comm_mean);
    for (int ph = 0; ph < FG_PHASE_COUNT; ph++)
      sent += (double)(d->counters.bytes_sent[ph] - c0.bytes_sent[ph]);
    {
      /* maxima and sums over ranks; these reductions fall outside every epoch's counts */
      double mx[9] = {e.seconds, e.seconds_spmm, e.seconds_gemm, e.seconds_comm,
                      e.seconds_other, sent, (double)fg_peak_rss_bytes(), e.seconds_wait,
                      (double)fg_stop_requested()};
      double sum[3] = {sent, r.s->spmm_bytes - sbytes0, r.m->gemm_flops - flops0};
      const int64_t ncomm = N_COMM_PHASES * N_COMM_STATS;
      FG_CHECK(fg_dist_max_f64(d, mx, 9));
      FG_CHECK(fg_dist_max_f64(d, &e.comm_max[0][0], ncomm));
      FG_CHECK(fg_dist_allreduce_f64(d, sum, 3));
      FG_CHECK(fg_dist_allreduce_f64(d, &e.comm_mean[0][0], ncomm));
      for (int k = 0; k < N_COMM_PHASES; k++)
        for (int q = 0; q < N_COMM_STATS; q++) e.comm_mean[k][q] /= d->size;
      e.peak_rss = mx[6];
      e.spmm_bytes = sum[1];
      e.gemm_flops = sum[2];
      e.seconds = mx[0];
      e.seconds_spmm = mx[1];
      e.seconds_gemm = mx[2];
      e.seconds_comm = mx[3];
      e.seconds_other = mx[4];
      e.seconds_wait = mx[7];
      e.bytes_sent_max = mx[5];
      e.bytes_sent_mean = sum[0] / d->size;
      stop = mx[8] > 0 && epoch < cfg->epochs; /* some rank was asked to stop */
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
    if (cfg->history) /* the values every rank holds after the reductions above */
      cfg->history[epoch - 1] = (fg_epoch_record){.loss = e.loss,
                                                  .train_acc = e.acc[0],
                                                  .valid_acc = e.acc[1],
                                                  .test_acc = e.acc[2],
                                                  .valid_loss = e.valid_loss,
                                                  .seconds = e.seconds};
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
    st = metrics ? metrics_check(metrics, cfg->metrics_path) : FG_OK;
    FG_CHECK(fg_dist_agree(d, st));
    if (cfg->checkpoint_path &&
        ((cfg->checkpoint_every > 0 && epoch % cfg->checkpoint_every == 0) ||
         epoch == cfg->epochs || stop)) {
      if (ckpt_sharded) {
        FG_CHECK(sharded_save(&r, cfg, &state, &meta));
      } else {
        FG_CHECK(export_state(&r, d->rank == 0 ? &state : NULL));
        st = d->rank == 0 ? fg_checkpoint_write(cfg->checkpoint_path, &state, &meta) : FG_OK;
        FG_CHECK(fg_dist_agree(d, st));
      }
    }
    if (stop) {
      if (show_progress) fprintf(stderr, "\r\033[K");
      if (d->rank == 0 && cfg->verbose) {
        if (cfg->checkpoint_path)
          fprintf(log, "stopped on request after epoch %d of %d; resume with --resume %s\n",
                  epoch, cfg->epochs, cfg->checkpoint_path);
        else
          fprintf(log, "stopped on request after epoch %d of %d; no --checkpoint, so the "
                  "trained state is not kept\n", epoch, cfg->epochs);
        fflush(log);
      }
      result->epochs_run = epoch - start_epoch;
      result->best_epoch = (int)meta.best_epoch;
      result->best_valid_acc = meta.best_valid_acc;
      result->test_acc = meta.best_test_acc;
      fg_stop_clear(); /* acted on: a later fg_train in this process runs to its end */
      st = FG_STOPPED;
      goto cleanup;
    }
  }
  if (show_progress) fprintf(stderr, "\r\033[K");

  result->epochs_run = cfg->epochs - start_epoch;
  result->best_epoch = (int)meta.best_epoch;
  result->best_valid_acc = meta.best_valid_acc;
  result->test_acc = meta.best_test_acc;
  result->mean_epoch_seconds = secs_n ? secs_total / secs_n : 0.0;

  if (cfg->predictions_path || cfg->embeddings_path || cfg->predictions_out ||
      cfg->embeddings_out) {
    /* outputs come from the final model in evaluation mode */
    double acc[3], vl;
    FG_CHECK(evaluate(&r, cfg, cfg->epochs, acc, &vl));
    d->phase = FG_PHASE_METRICS;
    if (cfg->predictions_path || cfg->predictions_out)
      FG_CHECK(save_output(&r, 0, cfg->predictions_path, cfg->predictions_out));
    if (cfg->embeddings_path || cfg->embeddings_out)
      FG_CHECK(save_output(&r, 1, cfg->embeddings_path, cfg->embeddings_out));
    /* each beside its run record (not beside a device) */
    st = FG_OK;
    if (d->rank == 0 && cfg->predictions_path) st = fg_write_sidecar(cfg->predictions_path, record);
    if (st == FG_OK && d->rank == 0 && cfg->embeddings_path)
      st = fg_write_sidecar(cfg->embeddings_path, record);
    FG_CHECK(fg_dist_agree(d, st));
  }
  /* every rank's traffic, averaged over the epochs this call ran, to rank 0 */
  st = FG_OK;
  if (d->rank == 0 && !(all_bytes = fg_malloc_array((size_t)d->size * 2 * N_COMM_PHASES,
                                                    sizeof *all_bytes)))
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  for (int k = 0; k < N_COMM_PHASES; k++) {
    my_bytes[k][0] /= FG_MAX(result->epochs_run, 1);
    my_bytes[k][1] /= FG_MAX(result->epochs_run, 1);
  }
  FG_CHECK_MPI(MPI_Gather(my_bytes, 2 * N_COMM_PHASES, MPI_DOUBLE, all_bytes,
                          2 * N_COMM_PHASES, MPI_DOUBLE, 0, d->comm));
  /* and every rank's peak memory over the whole run (the epochs' figure is the maximum) */
  FG_CHECK(gather_peak_rss(d, &all_rss));
  if (d->rank == 0) {
    const int plain = r.task == FG_TASK_MULTICLASS && r.metric == FG_METRIC_ACCURACY;
    if (metrics) {
      fprintf(metrics,
              "{\"final\": true, \"epochs\": %d, \"best_epoch\": %d, \"valid_acc\": %.6f, "
              "\"test_acc\": %.6f, %s%s%s%s%s\"mean_epoch_seconds\": %.6f, \"ranks\": %d, "
              "\"threads\": %d, \"scheme\": \"%s\", \"reorder\": \"%s\", \"rank_bytes\": {",
              cfg->epochs, result->best_epoch, result->best_valid_acc, result->test_acc,
              /* the metric's name where it is not multiclass accuracy (whose record stays as it
               * was): train_acc, valid_acc, test_acc above and in the epochs hold that metric */
              plain ? "" : "\"task\": \"", plain ? "" : fg_task_name(r.task),
              plain ? "" : "\", \"metric\": \"", plain ? "" : fg_metric_name(r.metric),
              plain ? "" : "\", ", result->mean_epoch_seconds, d->size, fg_max_threads(), r.info->name,
              r.s->reorder_used ? r.s->reorder_used : "none");
      /* rank_bytes[phase][sent|recv][rank] */
      for (int k = 0; k < N_COMM_PHASES; k++) {
        fprintf(metrics, "%s\"%s\": {", k ? ", " : "", comm_phase_names[k]);
        for (int q = 0; q < 2; q++) {
          fprintf(metrics, "%s\"%s\": [", q ? ", " : "", q ? "recv" : "sent");
          for (int p = 0; p < d->size; p++)
            fprintf(metrics, "%s%.17g", p ? ", " : "",
                    all_bytes[(size_t)p * 2 * N_COMM_PHASES + 2 * (size_t)k + (size_t)q]);
          fputc(']', metrics);
        }
        fputc('}', metrics);
      }
      fprintf(metrics, "}, \"peak_rss_bytes\": [");
      for (int p = 0; p < d->size; p++)
        fprintf(metrics, "%s%lld", p ? ", " : "", (long long)all_rss[p]);
      fprintf(metrics, "]}\n");
    }
    st = metrics ? metrics_check(metrics, cfg->metrics_path) : FG_OK;
    if (cfg->verbose)
      fprintf(log, "best epoch %d: valid %s%s%.4f  test %s%s%.4f  (%.4f s/epoch)\n",
              result->best_epoch, plain ? "" : fg_metric_name(r.metric), plain ? "" : " ",
              result->best_valid_acc, plain ? "" : fg_metric_name(r.metric), plain ? "" : " ",
              result->test_acc, result->mean_epoch_seconds);
  }
  FG_CHECK(fg_dist_agree(d, st));
cleanup:
  if (metrics && fclose(metrics) != 0 && st == FG_OK)
    st = fg_error_set(FG_ERR_IO, __FILE__, __LINE__, "--metrics %s: write failed: %s",
                      cfg->metrics_path, strerror(errno));
  free(all_bytes);
  free(all_rss);
  fg_free_aligned(state.params);
  fg_free_aligned(state.adam_m);
  fg_free_aligned(state.adam_v);
  run_free(&r);
  fg_dist_destroy(&d);
  return st;
}
