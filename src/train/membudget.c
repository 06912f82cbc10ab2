/* membudget.c -- what a one-process run holds at its peak, from the dataset's sizes and the
 * configuration alone (the model's share from fg_model_memory, which mirrors fg_model_create), and
 * the --mem-limit check made before the scheme and the model allocate. */
#include <stdio.h>
#include <string.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "train/fg_membudget.h"

int64_t fg_train_hidden_width(const fg_train_config *cfg, int64_t num_classes) {
  int64_t w = cfg->layers > 1 ? 0 : num_classes;
  for (int l = 1; l < cfg->layers; l++)
    w = FG_MAX(w, cfg->widths ? cfg->widths[l - 1] : cfg->hidden);
  return w;
}

fg_status fg_train_memory(const fg_dataset *ds, const fg_train_config *cfg,
                          fg_memory_estimate *out) {
  fg_status st = FG_OK;
  int64_t *widths = NULL;
  fg_reorder_kind reorder = FG_REORDER_NONE;
  const int L = cfg->layers;
  const fg_scheme_info *scheme = NULL;
  uint32_t any = 0;
  int borrows, bf16 = 0;
  fg_model_choice mdl;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(ds != NULL, FG_ERR_INVALID_ARG, "fg_train_memory: no dataset");
  /* the scheme of a one-process run (auto: counted as the default's). The options are checked
   * against a named scheme only: with none named, the default at P ranks is not serial, and
   * serial refusing the run's --order or --overlap says nothing about that run. */
  FG_CHECK(fg_scheme_resolve(cfg->scheme, cfg->scheme ? fg_scheme_options_of(cfg) : 0, 1, &scheme,
                             &any));
  if (!scheme) FG_CHECK(fg_scheme_resolve(NULL, 0, 1, &scheme, &any));
  borrows = scheme->borrows_features;
  FG_REQUIRE(L >= 1 && L <= 64, FG_ERR_INVALID_ARG, "--layers must be in [1, 64], got %d", L);
  FG_CHECK(fg_model_choose(cfg->model, cfg->norm, cfg->adj_norm, cfg->gin_eps, &mdl));
  FG_CHECK(fg_reorder_parse(cfg->reorder, &reorder));
  FG_CHECK(fg_precision_parse(cfg->precision, &bf16));
  {
    const int64_t n = ds->num_nodes, nnz = ds->adj.nnz, F = ds->num_features;
    const int64_t C = ds->num_classes;
    int64_t act = 0, par = 0;
    const int SL = fg_model_stack_layers(mdl.kind, L);
    FG_ALLOC(widths, SL + 1);
    FG_CHECK(fg_model_widths(mdl.kind, L, cfg->hidden, cfg->widths, F, C, widths));
    {
      const fg_model_config mc = {.layers = SL,
                                  .widths = widths,
                                  .agg_order = (int)cfg->agg_order,
                                  .seed = cfg->seed,
                                  .kind = mdl.kind,
                                  .norm = mdl.norm,
                                  .gin_eps = mdl.gin_eps,
                                  .gin_eps_learn = mdl.gin_eps_learn,
                                  .residual = cfg->residual,
                                  .label_prop = (float)cfg->label_prop,
                                  .bf16 = bf16,
                                  .rows16 = scheme->rows16 && !cfg->learn_features};
      fg_model_memory(&mc, n, &act, &par, &out->activation_buffers);
    }
    out->hidden_width = fg_train_hidden_width(cfg, C);
    /* the dataset: pattern (values only if a reader gave some), features, labels, split */
    /* (multi-label: T bytes a node of targets in place of the 4 of a label; C = T logits) */
    const int64_t T = ds->num_tasks, lab = T > 0 ? n * T : 4 * n;
    out->dataset = 8 * (n + 1) + 4 * nnz + (ds->adj.val ? 4 * nnz : 0) + 4 * n * F + lab + n;
    /* the scheme: Â with values, Âᵀ too unless its values are symmetric (a symmetric pattern
     * normalized sym or sum); at most nnz entries (without self loops, fewer) */
    out->graph =
        (8 * (n + 1) + 8 * nnz) * (ds->symmetric && mdl.adj.norm != FG_ADJ_MEAN ? 1 : 2);
    /* labels, split, ids; the features too unless the serial scheme borrows the dataset's
     * (not normalized, read through a row map when reordered: fg_scheme_fill_local) */
    out->inputs = 4 * n + n + 8 * n + n * T; /* (and the scheme's copy of the targets) */
    if (cfg->normalize_features || !borrows) /* (bf16: stored so, fg_model_features16) */
      out->inputs += (fg_model_features16(bf16, cfg->residual, cfg->learn_features) ? 2 : 4) *
                     n * F;
    out->activations = act;
    out->params = par;
    /* the loss gradient, three row masks, the logits' row statistics (maximum and column, sum) */
    out->loss = 4 * n * C + 3 * n + 16 * n;
    /* normalization's degrees; with --reorder the order and its inverse, and the order's
     * own work arrays (rcm: visited flags, two n-arrays, a key per nonzero). The permuted
     * pattern is the scheme's Â itself (counted in graph). --reorder auto, when X does not fit
     * in the cache, holds a second order and the simulation's inverse order and cache tags. */
    out->setup = 16 * n;
    if (reorder == FG_REORDER_AUTO &&
        !fg_reorder_auto_simulates(n, 4 * out->hidden_width, fg_cache_bytes()))
      reorder = FG_REORDER_NONE;
    if (reorder != FG_REORDER_NONE) out->setup += 8 * n + 8 * n + n + 16 * n + 8 * (nnz + 1);
    if (reorder == FG_REORDER_AUTO)
      out->setup += 8 * n + 4 * n + fg_cache_bytes() / (4 * out->hidden_width) * 4 + 32;
    out->total = FG_MEM_RUNTIME_BYTES + out->dataset + out->graph + out->inputs +
                 FG_MAX(out->setup, out->activations + out->params + out->loss);
  }
cleanup:
  free(widths);
  return st;
}

fg_status fg_train_memory_check(const fg_dataset *ds, const fg_train_config *cfg) {
  fg_status st = FG_OK;
  fg_memory_estimate e;
  char head[256], need[32], lim[32], b[6][32];
  double limit = cfg->mem_limit, counted;
  if (cfg->mem_limit < 0) return FG_OK;
  FG_CHECK(fg_train_memory(ds, cfg, &e));
  counted = (double)e.total;
  if (limit == 0) {
    const int64_t avail = fg_available_memory();
    if (avail < 0) return FG_OK; /* unknown: nothing to check against */
    limit = (double)avail;
    counted -= (double)e.dataset; /* loaded already: not part of what must still be found */
    snprintf(head, sizeof head,
             "this run needs %.0f bytes (%s) beyond the loaded dataset but %s is available "
             "(MemAvailable; --mem-limit sets another limit)",
             counted, fg_format_bytes(counted, need, sizeof need),
             fg_format_bytes(limit, lim, sizeof lim));
  } else {
    snprintf(head, sizeof head, "this run needs %.0f bytes (%s) but --mem-limit is %.0f (%s)",
             counted, fg_format_bytes(counted, need, sizeof need), limit,
             fg_format_bytes(limit, lim, sizeof lim));
  }
  FG_REQUIRE(counted <= limit, FG_ERR_MEMLIMIT,
             "%s: dataset %s, graph %s, features and labels %s, activations %s (%.1f buffers of "
             "%lld x %lld floats), parameters and Adam state %s, loss %s, program %s. Options "
             "that shrink it: a smaller --hidden or --widths, fewer --layers, fewer "
             "--gen-features (generated inputs), --reorder none, or more processes (mpirun -n P "
             "... --scheme 1d-sa)",
             head, fg_format_bytes((double)e.dataset, b[0], sizeof b[0]),
             fg_format_bytes((double)e.graph, b[1], sizeof b[1]),
             fg_format_bytes((double)e.inputs, b[2], sizeof b[2]),
             fg_format_bytes((double)e.activations, b[3], sizeof b[3]), e.activation_buffers,
             (long long)ds->num_nodes, (long long)e.hidden_width,
             fg_format_bytes((double)e.params, b[4], sizeof b[4]),
             fg_format_bytes((double)e.loss, b[5], sizeof b[5]),
             fg_format_bytes((double)FG_MEM_RUNTIME_BYTES, need, sizeof need));
cleanup:
  return st;
}

/* Rank 0's half of fg_train_memory_check_ranks: on_node ranks share rank 0's node. */
static fg_status check_ranks(const fg_dataset *ds, const fg_train_config *cfg, int ranks,
                             int on_node, const fg_scheme_info *scheme, const int grid[3],
                             int replicate, fg_layouts *lay, double known_bytes) {
  fg_status st = FG_OK;
  fg_calibration cal = fg_calibration_default();
  fg_plan_config pc = fg_plan_config_default();
  fg_plan_entry *e = NULL;
  fg_memory_estimate one;
  int n = 0;
  const fg_plan_entry *hit = NULL;
  char need[32], lim[32], dsb[32], share[32], prog[32], what[48], head[400];
  double limit = cfg->mem_limit, rank_bytes, rank0_bytes;
  FG_CHECK(fg_train_memory(ds, cfg, &one));
  if (ds->prep_dir) {
    /* a prepared directory read per rank: no pattern here to lay out, so each rank's share of
     * the one-process estimate (the graph, inputs, activations and loss cut P ways; the
     * parameters whole), and rank 0 holds no dataset beside it */
    rank_bytes = (double)(one.graph + one.inputs + one.activations + one.loss) / ranks +
                 (double)one.params;
  } else if (known_bytes >= 0) {
    rank_bytes = known_bytes; /* the planner's prediction for this very configuration */
  } else {
    if (!scheme->predict) goto cleanup; /* a scheme the model does not cover: nothing to check */
    pc = fg_plan_config_of(cfg, ranks);
    pc.mem_per_rank = -1.0;
    pc.only_grid = scheme->grid ? grid : NULL;
    pc.replicate = scheme->replicate ? replicate : 0;
    /* on the run's layouts: the one built here is the one the scheme distributes */
    FG_CHECK(fg_plan_layouts(ds, &pc, &cal, fg_scheme_bit(scheme), lay, &e, &n));
    for (int i = 0; i < n; i++)
      if (e[i].scheme == scheme->name) hit = &e[i];
    if (!hit) goto cleanup;
    rank_bytes = hit->mem_bytes;
  }
  if (scheme->grid)
    snprintf(what, sizeof what, "%s grid %dx%dx%d", scheme->name, grid[0], grid[1], grid[2]);
  else if (scheme->replicate && replicate > 0)
    snprintf(what, sizeof what, "%s --replicate %d", scheme->name, replicate);
  else
    snprintf(what, sizeof what, "%s", scheme->name);
  if (limit == 0) {
    const int64_t avail = fg_available_memory();
    if (avail < 0) goto cleanup; /* unknown: nothing to check against */
    /* the dataset is loaded and the processes run already: what must still be found is each
     * rank's share, for every rank on this node */
    limit = (double)avail / on_node;
    rank0_bytes = rank_bytes;
    snprintf(head, sizeof head,
             "this run needs about %s per process (%s, the busiest rank) but %s is available "
             "per process (MemAvailable %s over the %d ranks on rank 0's node; --mem-limit sets "
             "another limit)",
             fg_format_bytes(rank_bytes, need, sizeof need), what,
             fg_format_bytes(limit, lim, sizeof lim),
             fg_format_bytes((double)avail, dsb, sizeof dsb), on_node);
  } else {
    rank0_bytes = rank_bytes + (ds->prep_dir ? 0.0 : (double)one.dataset) +
                  (double)FG_MEM_RUNTIME_BYTES;
    snprintf(head, sizeof head,
             "this run needs about %s on rank 0 (%s: the busiest rank's share %s, plus the "
             "dataset %s that rank 0 read and the program %s) but --mem-limit is %s per process",
             fg_format_bytes(rank0_bytes, need, sizeof need), what,
             fg_format_bytes(rank_bytes, share, sizeof share),
             fg_format_bytes((double)one.dataset, dsb, sizeof dsb),
             fg_format_bytes((double)FG_MEM_RUNTIME_BYTES, prog, sizeof prog),
             fg_format_bytes(limit, lim, sizeof lim));
  }
  FG_REQUIRE(rank0_bytes <= limit, FG_ERR_MEMLIMIT,
             "%s. Options that shrink it: more processes (or fewer on a node), another scheme or "
             "grid (`fullgraph plan DATA --ranks %d` lists each one's memory), a smaller --hidden "
             "or --widths, fewer --layers, fewer --gen-features (generated inputs)",
             head, ranks);
cleanup:
  free(e);
  return st;
}

fg_status fg_train_memory_check_ranks(fg_dist *d, const fg_dataset *ds,
                                      const fg_train_config *cfg, const fg_scheme_info *scheme,
                                      const int grid[3], int replicate, fg_layouts *lay,
                                      double known_bytes) {
  fg_status st = FG_OK;
  int on_node = 1;
  if (cfg->mem_limit < 0 || d->size == 1) return FG_OK; /* the same on every rank */
  FG_CHECK(fg_dist_ranks_on_node(d, &on_node));
  if (d->rank == 0)
    st = check_ranks(ds, cfg, d->size, on_node, scheme, grid, replicate, lay, known_bytes);
  st = fg_dist_agree(d, st);
cleanup:
  return st;
}
