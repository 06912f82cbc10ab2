/* comm_plan.c -- fg_comm_plan: the aggregation traffic of every rank, computed from the layout
 * alone (the same layout code as the schemes; not collective). It makes no MPI call itself, but
 * --order hypergraph runs Zoltan on MPI_COMM_SELF, so for that order the caller must have
 * initialised MPI (fg_order_hypergraph_parts refuses otherwise). tests/mpi checks that it
 * equals what the schemes count while training. */
#include <string.h>

#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "plan/fg_registry.h"
#include "kernels/fg_kernels.h"
#include "schemes/fg_halo.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_sa.h"

/* The halo scheme's traffic: rows per rank pair under the run's rule (the cover of each cut);
 * backward sends what forward received, for a directed graph too. */
static fg_status cover_volume(const fg_csr *B, const int64_t *offs, int P, fg_halo_rule rule,
                              fg_comm_rank_plan *pr) {
  fg_status st = FG_OK;
  fg_halo_volume *vol = NULL;
  FG_ALLOC(vol, (int64_t)P * P);
  FG_CHECK(fg_halo_volumes(B, offs, P, vol));
  for (int i = 0; i < P; i++) {
    fg_comm_rank_plan *r = &pr[i];
    for (int j = 0; j < P; j++) {
      const fg_halo_volume *out = &vol[(int64_t)i * P + j], *in = &vol[(int64_t)j * P + i];
      const int64_t so = fg_halo_volume_rows(out, rule), ri = fg_halo_volume_rows(in, rule);
      for (int k = 0; k < 3; k++) {
        r->rule_rows_sent[k] += fg_halo_volume_rows(out, (fg_halo_rule)k);
        r->rule_rows_recv[k] += fg_halo_volume_rows(in, (fg_halo_rule)k);
      }
      r->agg_rows_sent += so;
      r->agg_msgs_sent += so > 0;
      r->agg_rows_recv += ri;
      r->agg_msgs_recv += ri > 0;
    }
    r->aggt_rows_sent = r->agg_rows_recv;
    r->aggt_msgs_sent = r->agg_msgs_recv;
    r->aggt_rows_recv = r->agg_rows_sent;
    r->aggt_msgs_recv = r->agg_msgs_sent;
  }
cleanup:
  free(vol);
  return st;
}

fg_status fg_comm_plan_describe(const fg_comm_plan_config *cfg, fg_comm_plan_layout *out) {
  fg_status st = FG_OK;
  const fg_scheme_info *e = NULL;
  uint32_t any = 0;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(cfg, FG_ERR_INVALID_ARG, "fg_comm_plan_describe: NULL argument");
  FG_CHECK(fg_scheme_resolve(cfg->scheme, 0, cfg->ranks, &e, &any));
  FG_REQUIRE(e, FG_ERR_INVALID_ARG, "--scheme auto: name the scheme whose volumes to count");
  out->scheme = e->name;
  out->order = fg_scheme_order(e, cfg->order);
  out->halo = e->volume == FG_VOLUME_COVER;
cleanup:
  return st;
}

fg_comm_plan_config fg_comm_plan_config_default(void) {
  return (fg_comm_plan_config){.ranks = 1, .layers = 2, .hidden = 16, .agg_order = FG_AGG_AUTO};
}

/* Per-aggregation traffic of one operator (Â or Âᵀ, pattern B over `parts` blocks) for every
 * rank, with each block on rep replicas (1.5d; 1 otherwise): rank (i, j) = i rep + j receives the
 * rows NnzCols(i, k) of the blocks k != i of its share of the block columns from replica
 * k rep + (i mod rep) of block k (fg_sa.h). Not sparsity-aware (1d): a broadcast of every
 * nonempty block to the P-1 others. */
static fg_status operator_volume(const fg_csr *B, const int64_t *offs, int parts, int rep, int sa,
                                 fg_comm_rank_plan *pr, int transposed) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL; /* (parts x parts) |NnzCols(i, k)| */
  int64_t *rs = NULL;  /* (4 P) rows sent, received, messages sent, received */
  const int P = parts * rep;
  FG_CALLOC(rs, 4 * (int64_t)P);
  if (sa && parts > 1) {
    FG_ALLOC(cnt, (int64_t)parts * parts);
    FG_CHECK(fg_layout_halo_counts(B, offs, parts, cnt));
  }
  for (int r = 0; r < P; r++) {
    const int i = r / rep, j = r % rep;
    const int b0 = (int)fg_block_start(parts, rep, j), b1 = (int)fg_block_start(parts, rep, j + 1);
    for (int k = b0; k < b1; k++) { /* the blocks of replica j's share (all when rep = 1) */
      const int from = k * rep + i % rep;
      const int64_t rows = k == i ? 0 : sa ? cnt[(int64_t)i * parts + k] : offs[k + 1] - offs[k];
      rs[4 * r + 1] += rows;
      rs[4 * r + 3] += rows > 0;
      rs[4 * from] += rows;
      rs[4 * from + 2] += rows > 0;
    }
  }
  for (int r = 0; r < P; r++) {
    fg_comm_rank_plan *o = &pr[r];
    const int64_t *v = rs + 4 * r;
    if (transposed) {
      o->aggt_rows_sent = v[0];
      o->aggt_rows_recv = v[1];
      o->aggt_msgs_sent = v[2];
      o->aggt_msgs_recv = v[3];
    } else {
      o->agg_rows_sent = v[0];
      o->agg_rows_recv = v[1];
      o->agg_msgs_sent = v[2];
      o->agg_msgs_recv = v[3];
    }
  }
cleanup:
  free(cnt);
  free(rs);
  return st;
}

/* Bytes each way of 1.5d's all-reduce of n float elements over c replicas, as fg_group counts
 * a ring: 2 n 4 (c-1)/c (none for c = 1). */
static int64_t replica_sum_bytes(int64_t n, int c) { return 2 * n * 4 * (c - 1) / c; }

/* Nonzeros rank (i, j) multiplies (fg_sa.h): block row i's entries in replica j's slice of
 * block i's columns and in the other blocks of its share. */
static fg_status share_nnz(const fg_csr *B, const int64_t *offs, int parts, int rep,
                           fg_comm_rank_plan *pr) {
  fg_status st = FG_OK;
  int64_t *cuts = NULL, *nnz = NULL;
  FG_ALLOC(cuts, rep + 1);
  FG_ALLOC(nnz, rep);
  for (int i = 0; i < parts; i++) {
    FG_CHECK(fg_sa_diag_cuts(B, offs[i], offs[i + 1], offs, parts, i, rep, cuts, nnz));
    for (int j = 0; j < rep; j++) pr[i * rep + j].nnz = nnz[j];
  }
cleanup:
  free(cuts);
  free(nnz);
  return st;
}

fg_status fg_comm_plan(const fg_dataset *ds, const fg_comm_plan_config *cfg,
                       fg_comm_rank_plan *per_rank, int64_t *cut_entries) {
  fg_layouts lay;
  fg_status st;
  memset(&lay, 0, sizeof lay);
  st = fg_comm_plan_on(ds, cfg, &lay, per_rank, cut_entries);
  fg_layouts_free(&lay);
  return st;
}

fg_status fg_comm_plan_on(const fg_dataset *ds, const fg_comm_plan_config *cfg, fg_layouts *lay,
                          fg_comm_rank_plan *per_rank, int64_t *cut_entries) {
  fg_model_choice mdl;
  fg_status st = FG_OK;
  const fg_layout *gl = NULL;
  fg_order_kind kind;
  int64_t *w = NULL, *fw = NULL, *bw = NULL;
  int *agg = NULL, L;
  int fwd_n = 0, bwd_n = 0, sa = 0, bits = 0, c = 1, K;
  fg_halo_rule rule = FG_HALO_HYBRID;
  const int P = cfg ? cfg->ranks : 0;
  const fg_scheme_info *scheme = NULL;
  uint32_t any = 0;
  FG_REQUIRE(ds && cfg && per_rank, FG_ERR_INVALID_ARG, "fg_comm_plan: NULL argument");
  FG_REQUIRE(P >= 1, FG_ERR_INVALID_ARG, "--ranks must be >= 1, got %d", P);
  FG_REQUIRE(cfg->layers >= 1 && cfg->layers <= 64, FG_ERR_INVALID_ARG,
             "--layers must be in [1, 64], got %d", cfg->layers);
  FG_REQUIRE(!cfg->scheme || strcmp(cfg->scheme, "auto") != 0, FG_ERR_INVALID_ARG,
             "--scheme auto: name the scheme whose volumes to count");
  FG_CHECK(fg_scheme_resolve(cfg->scheme, 0, P, &scheme, &any));
  FG_REQUIRE(scheme->grid == 0, FG_ERR_UNSUPPORTED,
             "--scheme %s: volumes are counted for the 1D layouts (`fullgraph plan` models the "
             "grid's collectives)", scheme->name);
  sa = scheme->volume == FG_VOLUME_HALO;
  if (scheme->replicate && cfg->replicate > 0) c = cfg->replicate;
  FG_CHECK(fg_replicate_check(c, P));
  K = P / c;
  FG_CHECK(fg_order_parse(fg_scheme_order(scheme, cfg->order), &kind));
  FG_CHECK(fg_halo_rule_parse(cfg->aggregation, &rule));
  FG_CHECK(fg_halo_quant_parse(cfg->quantize, &bits));
  FG_CHECK(fg_model_choose(cfg->model, NULL, cfg->adj_norm, NULL, &mdl));

  L = fg_model_stack_layers(mdl.kind, cfg->layers);
  FG_ALLOC(w, L + 1);
  FG_ALLOC(agg, L);
  FG_ALLOC(fw, L);
  FG_ALLOC(bw, L);
  FG_CHECK(fg_model_widths(mdl.kind, cfg->layers, cfg->hidden, cfg->widths, ds->num_features,
                           ds->num_classes, w));
  fg_model_agg_plan(mdl.kind, L, w, (int)cfg->agg_order, agg);
  fg_epoch_agg_list(L, w, agg, cfg->label_prop > 0, fw, &fwd_n, bw, &bwd_n);

  memset(per_rank, 0, (size_t)P * sizeof *per_rank);
  /* the serial scheme holds everything in natural order: no layout to compute */
  FG_CHECK(fg_layouts_1d(lay, ds, K, scheme->volume == FG_VOLUME_NONE ? FG_ORDER_NATURAL : kind,
                         cfg->seed, mdl.adj, &gl));
  if (scheme->volume == FG_VOLUME_COVER) {
    FG_CHECK(cover_volume(&gl->B, gl->offs, P, rule, per_rank));
  } else {
    FG_CHECK(operator_volume(&gl->B, gl->offs, K, c, sa, per_rank, 0));
    FG_CHECK(operator_volume(gl->symmetric ? &gl->B : &gl->Bt, gl->offs, K, c, sa, per_rank, 1));
  }
  FG_CHECK(share_nnz(&gl->B, gl->offs, K, c, per_rank));
  if (cfg->partition) {
    FG_CHECK(fg_partition_stats_of(&gl->B, gl->offs, K, cfg->partition));
    cfg->partition->order_seconds = gl->order_seconds;
  }
  if (scheme->volume != FG_VOLUME_COVER) bits = 0; /* only the halo exchange quantizes */
  for (int i = 0; i < P; i++) {
    fg_comm_rank_plan *r = &per_rank[i];
    const int b = i / c;
    r->rows = gl->offs[b + 1] - gl->offs[b];
    r->replicas = c;
    /* a row of width f: 4 f bytes, or its packed codes and 8 bytes of scale and zero point;
     * forward phase: the training forward and the evaluation forward */
    for (int k = 0; k < fwd_n; k++) {
      const int64_t rb = bits ? fg_quant_row_bytes(fw[k], bits) + 8 : 4 * fw[k];
      r->bytes_sent[0] += 2 * r->agg_rows_sent * rb;
      r->bytes_recv[0] += 2 * r->agg_rows_recv * rb;
      r->param_bytes_sent[0] += bits ? 2 * r->agg_rows_sent * 8 : 0;
      r->param_bytes_recv[0] += bits ? 2 * r->agg_rows_recv * 8 : 0;
      r->replica_bytes[0] += 2 * replica_sum_bytes(r->rows * fw[k], c);
    }
    for (int k = 0; k < bwd_n; k++) {
      const int64_t rb = bits ? fg_quant_row_bytes(bw[k], bits) + 8 : 4 * bw[k];
      r->bytes_sent[1] += r->aggt_rows_sent * rb;
      r->bytes_recv[1] += r->aggt_rows_recv * rb;
      r->param_bytes_sent[1] += bits ? r->aggt_rows_sent * 8 : 0;
      r->param_bytes_recv[1] += bits ? r->aggt_rows_recv * 8 : 0;
      r->replica_bytes[1] += replica_sum_bytes(r->rows * bw[k], c);
    }
    for (int ph = 0; ph < 2; ph++) {
      r->bytes_sent[ph] += r->replica_bytes[ph];
      r->bytes_recv[ph] += r->replica_bytes[ph];
    }
    r->msgs_sent[0] = 2 * (r->agg_msgs_sent + (c > 1)) * fwd_n;
    r->msgs_recv[0] = 2 * (r->agg_msgs_recv + (c > 1)) * fwd_n;
    r->msgs_sent[1] = (r->aggt_msgs_sent + (c > 1)) * bwd_n;
    r->msgs_recv[1] = (r->aggt_msgs_recv + (c > 1)) * bwd_n;
  }
  if (cut_entries) *cut_entries = gl->cut;
cleanup:
  free(w);
  free(agg);
  free(fw);
  free(bw);
  return st;
}

int fg_order_is_available(const char *name) {
  for (int k = 0; k < FG_ORDER_COUNT; k++)
    if (name && strcmp(name, fg_order_name((fg_order_kind)k)) == 0)
      return fg_order_available((fg_order_kind)k);
  return 0;
}

fg_status fg_partition_summarize(const fg_dataset *ds, int ranks, const char *order,
                                 uint64_t seed, fg_partition_stats *out) {
  fg_status st = FG_OK;
  fg_layout g;
  fg_order_kind kind;
  memset(&g, 0, sizeof g);
  FG_REQUIRE(ds && out, FG_ERR_INVALID_ARG, "fg_partition_summarize: NULL argument");
  FG_REQUIRE(ranks >= 1, FG_ERR_INVALID_ARG, "--ranks must be >= 1, got %d", ranks);
  FG_CHECK(fg_order_parse(order, &kind));
  /* GCN's Â (the default operator): its pattern is A's, the diagonal aside, which no net's
   * cut depends on */
  FG_CHECK(fg_layout_build(ds, ranks, kind, seed, (fg_adj_spec){0}, &g));
  FG_CHECK(fg_partition_stats_of(&g.B, g.offs, ranks, out));
  out->order_seconds = g.order_seconds;
cleanup:
  fg_layout_free(&g);
  return st;
}
