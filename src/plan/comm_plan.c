/* comm_plan.c -- fg_comm_plan: the aggregation traffic of every rank, computed from the layout
 * alone (the same layout code as the schemes; not collective). It makes no MPI call itself, but
 * --order hypergraph runs Zoltan on MPI_COMM_SELF, so for that order the caller must have
 * initialised MPI (fg_order_hypergraph_parts refuses otherwise). tests/mpi checks that it
 * equals what the schemes count while training. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/fg_model.h"
#include "plan/fg_plan.h"
#include "plan/fg_registry.h"
#include "io/fg_prepared.h"
#include "kernels/fg_bf16.h"
#include "kernels/fg_kernels.h"
#include "schemes/fg_halo.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_sa.h"

/* The halo scheme's traffic from vol (P x P, vol[s * P + r]: rows s sends r per aggregation
 * under each rule): rows per rank pair under the run's rule; backward sends what forward
 * received, for a directed graph too. */
static void cover_traffic(const fg_halo_volume *vol, int P, fg_halo_rule rule,
                          fg_comm_rank_plan *pr) {
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
}

/* The halo scheme's traffic on the layout: the cover of each cut (fg_halo_volumes). */
static fg_status cover_volume(const fg_csr *B, const int64_t *offs, int P, fg_halo_rule rule,
                              fg_comm_rank_plan *pr) {
  fg_status st = FG_OK;
  fg_halo_volume *vol = NULL;
  FG_ALLOC(vol, (int64_t)P * P);
  FG_CHECK(fg_halo_volumes(B, offs, P, vol));
  cover_traffic(vol, P, rule, pr);
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

/* Per-aggregation traffic of one operator (Â or Âᵀ) over `parts` blocks offs for every rank,
 * with each block on rep replicas (1.5d; 1 otherwise): rank (i, j) = i rep + j receives the rows
 * cnt[i parts + k] = |NnzCols(i, k)| of the blocks k != i of its share of the block columns from
 * replica k rep + (i mod rep) of block k (fg_sa.h). cnt NULL, not sparsity-aware (1d): a
 * broadcast of every nonempty block to the P-1 others. */
static fg_status operator_traffic(const int64_t *cnt, const int64_t *offs, int parts, int rep,
                                  fg_comm_rank_plan *pr, int transposed) {
  fg_status st = FG_OK;
  int64_t *rs = NULL; /* (4 P) rows sent, received, messages sent, received */
  const int P = parts * rep;
  FG_CALLOC(rs, 4 * (int64_t)P);
  for (int r = 0; r < P; r++) {
    const int i = r / rep, j = r % rep;
    const int b0 = (int)fg_block_start(parts, rep, j), b1 = (int)fg_block_start(parts, rep, j + 1);
    for (int k = b0; k < b1; k++) { /* the blocks of replica j's share (all when rep = 1) */
      const int from = k * rep + i % rep;
      const int64_t rows = k == i ? 0 : cnt ? cnt[(int64_t)i * parts + k] : offs[k + 1] - offs[k];
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
  free(rs);
  return st;
}

/* operator_traffic on the layout: the halo counts of pattern B (sa), or 1d's whole blocks. */
static fg_status operator_volume(const fg_csr *B, const int64_t *offs, int parts, int rep, int sa,
                                 fg_comm_rank_plan *pr, int transposed) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL; /* (parts x parts) |NnzCols(i, k)| */
  if (sa && parts > 1) {
    FG_ALLOC(cnt, (int64_t)parts * parts);
    FG_CHECK(fg_layout_halo_counts(B, offs, parts, cnt));
  }
  FG_CHECK(operator_traffic(cnt, offs, parts, rep, pr, transposed));
cleanup:
  free(cnt);
  return st;
}

/* Bytes each way of 1.5d's all-reduce of n float elements over c replicas, as fg_group counts
 * a ring: 2 n 4 (c-1)/c (none for c = 1). fp32 under bf16 too: the partial sums are a
 * reduction (scheme_1p5d.c says why). */
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

/* ---- a prepared directory opened per rank: the plan from its manifest -------------------- */

/* The expected number of distinct columns that e entries hit when each falls on one of w columns
 * evenly at random: w (1 - (1 - 1/w)^e) (at most min(e, w); 1 for w = 1). */
static double distinct_of(double e, double w) {
  if (e <= 0 || w <= 0) return 0.0;
  if (w <= 1) return 1.0;
  return -w * expm1(e * log1p(-1.0 / w));
}

/* est[r K + s] for the K groups of g = B / K row blocks: the estimated distinct columns of
 * block (r, s) of the pattern -- the rows group r receives from group s -- summed over the
 * directory's column blocks t of group s, each from the entries e of group r's rows in t over
 * t's width (distinct_of). transposed: of the transpose's block (r, s), i.e. the distinct rows
 * of block (s, r), from the entries of each row block t of group s in group r's columns. The
 * diagonal is 0, as fg_layout_halo_counts has it. */
static void prep_distinct(const fg_prep_manifest *m, int K, int transposed, int64_t *est) {
  const int64_t B = m->B, g = B / K;
  for (int64_t r = 0; r < K; r++)
    for (int64_t s = 0; s < K; s++) {
      double d = 0.0;
      for (int64_t t = s * g; t < (s + 1) * g && r != s; t++) {
        int64_t e = 0;
        for (int64_t u = r * g; u < (r + 1) * g; u++)
          e += transposed ? m->block_nnz[t * B + u] : m->block_nnz[u * B + t];
        d += distinct_of((double)e, (double)(m->offs[t + 1] - m->offs[t]));
      }
      est[r * K + s] = (int64_t)llround(d);
    }
}

/* 1.5d's replicas of a block row of `total` entries (diagonal block `diag`): replica j holds its
 * share's other blocks, share[j] entries, and a slice of the diagonal block cut to even the
 * replicas out (fg_sa_diag_cuts). Continuously: the diagonal's entries fill the replicas below a
 * level L up to it (sum over j of max(0, L - share[j]) = diag), nnz[j] = max(share[j], L). */
static void water_fill(const int64_t *share, int64_t diag, int c, int64_t *nnz) {
  double L = 0.0;
  int *low = malloc((size_t)c * sizeof *low);
  if (!low) { /* without the level: the diagonal's even share each */
    for (int j = 0; j < c; j++) nnz[j] = share[j] + diag / c;
    return;
  }
  for (int j = 0; j < c; j++) low[j] = 1;
  for (int changed = 1; changed;) {
    double sum = (double)diag;
    int nlow = 0;
    changed = 0;
    for (int j = 0; j < c; j++)
      if (low[j]) {
        sum += (double)share[j];
        nlow++;
      }
    L = nlow ? sum / nlow : 0.0;
    for (int j = 0; j < c; j++)
      if (low[j] && (double)share[j] > L) {
        low[j] = 0;
        changed = 1;
      }
  }
  for (int j = 0; j < c; j++) nnz[j] = low[j] ? (int64_t)llround(L) : share[j];
  free(low);
}

fg_status fg_comm_plan_prepared(const fg_prep_manifest *m, int K, int c, fg_volume_kind volume,
                                int drop_loops, int rule, fg_comm_rank_plan *pr,
                                int64_t *cut_entries) {
  fg_status st = FG_OK;
  int64_t *tot = NULL, *est = NULL, *estt = NULL, *goffs = NULL, *share = NULL, *nnz = NULL;
  fg_halo_volume *vol = NULL;
  const int64_t B = m ? m->B : 0;
  int64_t cut = 0;
  FG_REQUIRE(m && pr, FG_ERR_INVALID_ARG, "fg_comm_plan_prepared: NULL argument");
  FG_REQUIRE(K >= 1 && c >= 1 && B % K == 0, FG_ERR_INVALID_ARG,
             "a prepared directory of %lld row blocks cannot form %d blocks of a 1D layout",
             (long long)B, K);
  const int64_t g = B / K;
  const int P = K * c;
  memset(pr, 0, (size_t)P * sizeof *pr);
  FG_ALLOC(tot, (int64_t)K * K);
  FG_ALLOC(goffs, K + 1);
  FG_ALLOC(est, (int64_t)K * K);
  FG_ALLOC(estt, (int64_t)K * K);
  FG_ALLOC(share, c);
  FG_ALLOC(nnz, c);
  /* exact: each group's rows and the entries of every group block */
  for (int64_t r = 0; r <= K; r++) goffs[r] = m->offs[r * g];
  for (int64_t r = 0; r < K; r++)
    for (int64_t s = 0; s < K; s++) {
      int64_t e = 0;
      for (int64_t i = r * g; i < (r + 1) * g; i++)
        for (int64_t j = s * g; j < (s + 1) * g; j++) e += m->block_nnz[i * B + j];
      tot[r * K + s] = e;
      if (r != s) cut += e;
    }
  prep_distinct(m, K, 0, est);
  prep_distinct(m, K, 1, estt);
  if (volume == FG_VOLUME_COVER) {
    /* s -> r: post sends the distinct sources (columns of block (r, s)), pre the distinct
     * destinations (its rows), hybrid a minimum vertex cover of the cut, never more than
     * either: estimated as the smaller, which a sparse cut's cover comes close to (its edges
     * mostly disjoint, a matching) */
    FG_REQUIRE(c == 1, FG_ERR_INVALID_ARG, "halo does not replicate block rows");
    FG_ALLOC(vol, (int64_t)K * K);
    for (int64_t s = 0; s < K; s++)
      for (int64_t r = 0; r < K; r++) {
        const int64_t post = est[r * K + s], pre = estt[s * K + r];
        vol[s * K + r] = (fg_halo_volume){.pre = pre, .post = post, .hybrid = FG_MIN(pre, post)};
      }
    cover_traffic(vol, K, (fg_halo_rule)rule, pr);
  } else {
    const int sa = volume == FG_VOLUME_HALO;
    FG_CHECK(operator_traffic(sa ? est : NULL, goffs, K, c, pr, 0));
    FG_CHECK(operator_traffic(sa ? estt : NULL, goffs, K, c, pr, 1));
  }
  for (int64_t i = 0; i < K; i++) {
    const int64_t rows = goffs[i + 1] - goffs[i];
    /* an operator without self loops (sage, gin) drops the diagonal's: one a node as a load
     * adds them (exact then), never more than the diagonal block holds */
    const int64_t loops = drop_loops ? FG_MIN(rows, tot[i * K + i]) : 0;
    for (int j = 0; j < c; j++) {
      share[j] = 0;
      for (int64_t k = fg_block_start(K, c, j); k < fg_block_start(K, c, j + 1); k++)
        if (k != i) share[j] += tot[i * K + k];
    }
    if (c == 1)
      nnz[0] = share[0] + tot[i * K + i] - loops;
    else
      water_fill(share, tot[i * K + i] - loops, c, nnz);
    for (int j = 0; j < c; j++) {
      pr[i * c + j].rows = rows;
      pr[i * c + j].nnz = nnz[j];
      pr[i * c + j].replicas = c;
    }
  }
  if (cut_entries) *cut_entries = cut;
cleanup:
  free(tot);
  free(est);
  free(estt);
  free(goffs);
  free(share);
  free(nnz);
  free(vol);
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
  int fwd_n = 0, bwd_n = 0, sa = 0, bits = 0, c = 1, K, bf16 = 0;
  int64_t esz = 4; /* bytes a row element takes on the wire */
  fg_halo_rule rule = FG_HALO_HYBRID;
  fg_prep_manifest pm;
  const int P = cfg ? cfg->ranks : 0;
  const fg_scheme_info *scheme = NULL;
  uint32_t any = 0;
  memset(&pm, 0, sizeof pm);
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
  FG_CHECK(fg_precision_parse(cfg->precision, &bf16));
  FG_CHECK(fg_model_choose(cfg->model, NULL, cfg->adj_norm, NULL, &mdl));
  /* --precision bf16: 1d's broadcast blocks, the sparsity-aware exchange's rows (1d-sa, 1.5d)
   * and halo's rows, pre and post (quantized rows keep their codes), travel as bf16; the
   * replicas' partial-sum all-reduces stay fp32 */
  if (bf16 && (scheme->volume == FG_VOLUME_BCAST || scheme->volume == FG_VOLUME_HALO ||
               scheme->volume == FG_VOLUME_COVER))
    esz = 2;

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
  if (ds->prep_dir) {
    /* a prepared directory opened per rank: no pattern here, the manifest's block counts (its
     * order is the layout; the CLI refuses another --order before it gets here) */
    FG_REQUIRE(!cfg->partition, FG_ERR_UNSUPPORTED,
               "%s was opened for per-rank reading: its partition statistics need the whole "
               "pattern (load it whole)", ds->prep_dir);
    FG_CHECK(fg_prep_manifest_read(ds->prep_dir, &pm));
    FG_REQUIRE(pm.B % K == 0, FG_ERR_INVALID_ARG,
               "%s has %lld row blocks: %s on %d ranks lays out %d blocks, which must divide them",
               ds->prep_dir, (long long)pm.B, scheme->name, P, K);
    FG_CHECK(fg_comm_plan_prepared(&pm, K, c, scheme->volume, mdl.adj.no_self_loops, (int)rule,
                                   per_rank, cut_entries));
  } else {
    /* the serial scheme holds everything in natural order: no layout to compute */
    FG_CHECK(fg_layouts_1d(lay, ds, K, scheme->volume == FG_VOLUME_NONE ? FG_ORDER_NATURAL : kind,
                           cfg->seed, mdl.adj, &gl));
    if (scheme->volume == FG_VOLUME_COVER) {
      FG_CHECK(cover_volume(&gl->B, gl->offs, P, rule, per_rank));
    } else {
      FG_CHECK(operator_volume(&gl->B, gl->offs, K, c, sa, per_rank, 0));
      FG_CHECK(
          operator_volume(gl->symmetric ? &gl->B : &gl->Bt, gl->offs, K, c, sa, per_rank, 1));
    }
    FG_CHECK(share_nnz(&gl->B, gl->offs, K, c, per_rank));
    if (cfg->partition) {
      FG_CHECK(fg_partition_stats_of(&gl->B, gl->offs, K, cfg->partition));
      cfg->partition->order_seconds = gl->order_seconds;
    }
    for (int i = 0; i < P; i++) {
      per_rank[i].rows = gl->offs[i / c + 1] - gl->offs[i / c];
      per_rank[i].replicas = c;
    }
    if (cut_entries) *cut_entries = gl->cut;
  }
  if (scheme->volume != FG_VOLUME_COVER) bits = 0; /* only the halo exchange quantizes */
  for (int i = 0; i < P; i++) {
    fg_comm_rank_plan *r = &per_rank[i];
    /* a row of width f: esz f bytes, or its packed codes and 8 bytes of scale and zero point;
     * forward phase: the training forward and the evaluation forward */
    for (int k = 0; k < fwd_n; k++) {
      const int64_t rb = bits ? fg_quant_row_bytes(fw[k], bits) + 8 : esz * fw[k];
      r->bytes_sent[0] += 2 * r->agg_rows_sent * rb;
      r->bytes_recv[0] += 2 * r->agg_rows_recv * rb;
      r->param_bytes_sent[0] += bits ? 2 * r->agg_rows_sent * 8 : 0;
      r->param_bytes_recv[0] += bits ? 2 * r->agg_rows_recv * 8 : 0;
      r->replica_bytes[0] += 2 * replica_sum_bytes(r->rows * fw[k], c);
    }
    for (int k = 0; k < bwd_n; k++) {
      const int64_t rb = bits ? fg_quant_row_bytes(bw[k], bits) + 8 : esz * bw[k];
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
cleanup:
  fg_prep_manifest_free(&pm);
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
