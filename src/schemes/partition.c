/* partition.c -- the 1D block-row layout: building it on rank 0, scattering every rank's
 * rows, splitting local rows by column block, and the layout report. See fg_partition.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fg_kernels.h"
#include "schemes/fg_deliver.h"
#include "schemes/fg_layouts.h"
#include "schemes/fg_partition.h"

#define FG_TAG_SCATTER 7101

/* ---- the global layout ------------------------------------------------------------------ */

void fg_layout_free(fg_layout *g) {
  if (!g) return;
  free(g->perm);
  free(g->offs);
  fg_csr_free(&g->B);
  fg_csr_free(&g->Bt);
  memset(g, 0, sizeof *g);
}

fg_status fg_layout_build(const fg_dataset *ds, int parts, fg_order_kind order, uint64_t seed,
                          fg_adj_spec adj, fg_layout *out) {
  fg_status st = FG_OK;
  fg_layout g;
  fg_csr N; /* Â in the original numbering */
  int64_t *inv = NULL;
  const int64_t n = ds->num_nodes;
  memset(&g, 0, sizeof g);
  memset(&N, 0, sizeof N);
  memset(out, 0, sizeof *out);
  FG_REQUIRE(parts >= 1, FG_ERR_INVALID_ARG, "a layout needs at least one rank, got %d", parts);
  FG_REQUIRE(ds->adj.nrows == n && ds->adj.ncols == n, FG_ERR_INVALID_ARG,
             "dataset: adjacency is %lld x %lld for %lld nodes", (long long)ds->adj.nrows,
             (long long)ds->adj.ncols, (long long)n);
  g.parts = parts;
  g.n = n;
  FG_ALLOC(g.perm, n > 0 ? n : 1);
  FG_ALLOC(g.offs, parts + 1);
  FG_ALLOC(inv, n > 0 ? n : 1);
  g.order_seconds = fg_now();
  FG_CHECK(fg_order_compute(&ds->adj, parts, order, seed, g.perm, g.offs));
  g.order_seconds = fg_now() - g.order_seconds;
  fg_order_invert(g.perm, n, inv);
  /* the serial scheme's operator, on the whole pattern, before any permutation */
  FG_CHECK(fg_adj_operator(&ds->adj, adj, &N));
  if (order == FG_ORDER_NATURAL) {
    g.B = N;
    memset(&N, 0, sizeof N);
  } else {
    FG_CHECK(fg_csr_permute(&N, g.perm, inv, &g.B));
  }
  fg_csr_free(&N);
  /* a symmetric permutation keeps a symmetric matrix symmetric */
  g.symmetric = ds->symmetric && fg_csr_is_symmetric(&g.B);
  if (!g.symmetric) FG_CHECK(fg_csr_transpose(&g.B, &g.Bt));
  g.cut = fg_block_cut(&g.B, g.offs, parts);
  *out = g;
  memset(&g, 0, sizeof g);
cleanup:
  free(inv);
  fg_csr_free(&N);
  fg_layout_free(&g);
  return st;
}

fg_status fg_layout_halo_counts(const fg_csr *B, const int64_t *offs, int parts, int64_t *cnt) {
  fg_status st = FG_OK;
  int32_t *mark = NULL; /* (n) last block whose rows referenced the column */
  const int64_t n = B->nrows;
  FG_ALLOC(mark, n > 0 ? n : 1);
  for (int64_t v = 0; v < n; v++) mark[v] = -1;
  memset(cnt, 0, (size_t)parts * (size_t)parts * sizeof *cnt);
  for (int i = 0; i < parts; i++) {
    for (int64_t u = offs[i]; u < offs[i + 1]; u++) {
      for (int64_t k = B->rowptr[u]; k < B->rowptr[u + 1]; k++) {
        const int64_t c = B->col[k];
        if ((c >= offs[i] && c < offs[i + 1]) || mark[c] == i) continue;
        mark[c] = i;
        cnt[(int64_t)i * parts + fg_block_owner(offs, parts, c)]++;
      }
    }
  }
cleanup:
  free(mark);
  return st;
}

fg_status fg_partition_stats_of(const fg_csr *B, const int64_t *offs, int parts,
                                fg_partition_stats *out) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL; /* (parts x parts) |NnzCols(i, j)|: rows i receives from j */
  double mean;
  memset(out, 0, sizeof *out);
  FG_REQUIRE(parts >= 1, FG_ERR_INVALID_ARG, "partition stats: %d parts", parts);
  FG_ALLOC(cnt, (int64_t)parts * parts);
  FG_CHECK(fg_layout_halo_counts(B, offs, parts, cnt));
  out->parts = parts;
  for (int p = 0; p < parts; p++) {
    int64_t sent = 0, recv = 0;
    for (int q = 0; q < parts; q++) {
      sent += cnt[(int64_t)q * parts + p];
      recv += cnt[(int64_t)p * parts + q];
    }
    out->total += sent;
    out->max_send = FG_MAX(out->max_send, sent);
    out->max_recv = FG_MAX(out->max_recv, recv);
    out->max_rows = FG_MAX(out->max_rows, offs[p + 1] - offs[p]);
    out->max_nnz = FG_MAX(out->max_nnz, B->rowptr[offs[p + 1]] - B->rowptr[offs[p]]);
  }
  mean = (double)out->total / parts;
  out->send_imbalance = out->total > 0 ? (double)out->max_send / mean : 1.0;
  out->recv_imbalance = out->total > 0 ? (double)out->max_recv / mean : 1.0;
  out->row_balance = B->nrows > 0 ? (double)out->max_rows * parts / (double)B->nrows : 1.0;
  out->nnz_balance = B->nnz > 0 ? (double)out->max_nnz * parts / (double)B->nnz : 1.0;
cleanup:
  free(cnt);
  return st;
}

/* ---- scattering ---------------------------------------------------------------------------- */

void fg_part_local_free(fg_part_local *p) {
  if (!p) return;
  free(p->offs);
  fg_csr_free(&p->A);
  fg_csr_free(&p->At);
  memset(p, 0, sizeof *p);
}


/* Rank 0: features, labels, split and original ids of block r, packed. The features as they
 * are, or with x16 normalized (when asked) and rounded to bf16 into feat's first half. */
static void pack_block(const fg_dataset *ds, const fg_layout *g, int r, int x16, int normalize,
                       float *feat, int32_t *labels, int8_t *split, int64_t *gids) {
  const int64_t F = ds->num_features;
  for (int64_t k = g->offs[r]; k < g->offs[r + 1]; k++) {
    const int64_t v = g->perm[k], i = k - g->offs[r];
    if (F > 0 && x16)
      fg_scheme_feature_row(ds->features + v * F, F, normalize, 0, F, NULL,
                            (fg_bf16 *)(void *)feat + i * F);
    else if (F > 0)
      memcpy(feat + i * F, ds->features + v * F, (size_t)F * sizeof *feat);
    labels[i] = ds->labels ? ds->labels[v] : -1;
    split[i] = ds->split ? ds->split[v] : (int8_t)FG_SPLIT_NONE;
    gids[i] = v;
  }
}

fg_status fg_part_distribute(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *cfg,
                             int rep, fg_scheme *s, fg_part_local *out) {
  fg_status st = FG_OK;
  fg_layouts own;
  const fg_layout *gl = NULL;
  fg_order_kind kind = FG_ORDER_NATURAL;
  fg_part_local p;
  int64_t hdr[6] = {0, 0, 0, 0, 0, 0}; /* n, F, C, symmetric, cut, max block */
  int64_t *nnz = NULL;                 /* (2 parts) nnz of Â rows, then of Âᵀ rows, per rank */
  float *pack_f = NULL;                /* rank 0: (max block x F) */
  int32_t *pack_l = NULL;
  int8_t *pack_s = NULL;
  int64_t *pack_g = NULL;
  const int P = d->size, me = d->rank, K = rep >= 1 && P % rep == 0 ? P / rep : P, mb = me / (P / K);
  memset(&own, 0, sizeof own);
  memset(&p, 0, sizeof p);
  memset(out, 0, sizeof *out);

  /* 0. a prepared directory opened per rank: every rank reads its own rows instead */
  {
    int64_t plen = me == 0 && ds && ds->prep_dir ? (int64_t)strlen(ds->prep_dir) + 1 : 0;
    char *dir = NULL;
    FG_CHECK(fg_dist_bcast(d, &plen, sizeof plen, 0));
    if (plen > 0) {
      dir = me == 0 ? ds->prep_dir : malloc((size_t)plen);
      st = dir ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
      st = fg_dist_agree(d, st);
      if (st == FG_OK) st = fg_dist_bcast(d, dir, plen, 0);
      if (st == FG_OK) st = fg_part_read_prepared(d, dir, cfg, rep, s, out);
      if (me != 0) free(dir);
      return st;
    }
  }

  /* 1. rank 0 computes the layout and everything that may fail before anything is sent */
  st = fg_order_parse(cfg->order, &kind);
  if (st == FG_OK && (rep < 1 || P % rep != 0))
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "a replication of %d does not divide the %d ranks", rep, P);
  if (st == FG_OK && me == 0) {
    if (!ds) {
      st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "scheme: no dataset on rank 0");
    } else {
      st = fg_layouts_1d(cfg->layouts ? cfg->layouts : &own, ds, K, kind, cfg->seed, cfg->adj,
                         &gl);
    }
    if (st == FG_OK) {
      const fg_layout g = *gl;
      int64_t mx = 0;
      for (int r = 0; r < K; r++) mx = FG_MAX(mx, g.offs[r + 1] - g.offs[r]);
      hdr[0] = g.n;
      hdr[1] = ds->num_features;
      hdr[2] = ds->num_classes;
      hdr[3] = g.symmetric;
      hdr[4] = g.cut;
      hdr[5] = mx;
      const int64_t fe = mx * ds->num_features; /* bf16 rows take half (features16) */
      pack_f = fg_malloc_array((size_t)FG_MAX(cfg->features16 ? (fe + 1) / 2 : fe, 1),
                               sizeof *pack_f);
      pack_l = fg_malloc_array((size_t)FG_MAX(mx, 1), sizeof *pack_l);
      pack_s = fg_malloc_array((size_t)FG_MAX(mx, 1), sizeof *pack_s);
      pack_g = fg_malloc_array((size_t)FG_MAX(mx, 1), sizeof *pack_g);
      if (!pack_f || !pack_l || !pack_s || !pack_g)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                          "rank 0: out of memory for a %lld x %lld feature block to send",
                          (long long)mx, (long long)ds->num_features);
    }
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 2. sizes and block offsets to everyone */
  FG_CHECK(fg_dist_bcast(d, hdr, sizeof hdr, 0));
  p.parts = K;
  p.rep = P / K;
  p.n_global = hdr[0];
  p.symmetric = (int)hdr[3];
  p.cut = hdr[4];
  p.offs = fg_malloc_array((size_t)K + 1, sizeof *p.offs);
  nnz = fg_malloc_array((size_t)K * 2, sizeof *nnz);
  st = (p.offs && nnz) ? FG_OK
                       : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                                      "out of memory for the block offsets of %d ranks", P);
  FG_CHECK(fg_dist_agree(d, st));
  if (me == 0) {
    const fg_layout g = *gl;
    memcpy(p.offs, g.offs, (size_t)(K + 1) * sizeof *p.offs);
    for (int r = 0; r < K; r++) {
      nnz[r] = g.B.rowptr[g.offs[r + 1]] - g.B.rowptr[g.offs[r]];
      nnz[K + r] = g.symmetric ? 0 : g.Bt.rowptr[g.offs[r + 1]] - g.Bt.rowptr[g.offs[r]];
    }
  }
  FG_CHECK(fg_dist_bcast(d, p.offs, (int64_t)(K + 1) * 8, 0));
  FG_CHECK(fg_dist_bcast(d, nnz, (int64_t)K * 2 * 8, 0));
  p.row0 = p.offs[mb];
  p.n_local = p.offs[mb + 1] - p.offs[mb];

  /* 3. every rank allocates its block */
  {
    const int64_t nl = p.n_local, F = hdr[1];
    st = fg_scheme_alloc_csr(&p.A, nl, p.n_global, nnz[mb]);
    if (st == FG_OK && !p.symmetric) st = fg_scheme_alloc_csr(&p.At, nl, p.n_global, nnz[K + mb]);
    if (st == FG_OK) {
      s->n_global = p.n_global;
      s->n_local = nl;
      s->num_features = F;
      s->num_classes = hdr[2];
      s->global_ids = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->global_ids);
      if (cfg->features16) /* (delivered as bf16: fg_scheme_config.features16) */
        s->features16 = fg_malloc_huge((size_t)FG_MAX(nl * F, 1) * sizeof *s->features16);
      else
        s->features = fg_malloc_huge((size_t)FG_MAX(nl * F, 1) * sizeof *s->features);
      s->labels = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->labels);
      s->split = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->split);
      if (!s->global_ids || !(s->features || s->features16) || !s->labels || !s->split)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                          "out of memory for a block of %lld nodes x %lld features", (long long)nl,
                          (long long)F);
    }
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 4. rank 0 gives each rank its block's rows, in rank order (its own by a copy; the replicas
   * of a block, consecutive ranks, from one packing); each other rank takes part in its own
   * delivery only */
  for (int r = 0; r < P && st == FG_OK; r++) {
    const int b = r / (P / K);
    const int64_t r0 = p.offs[b], r1 = p.offs[b + 1], nr = r1 - r0, F = hdr[1];
    if (me != 0 && me != r) continue;
    if (me == 0 && r % (P / K) == 0)
      pack_block(ds, gl, b, cfg->features16, cfg->normalize_features, pack_f, pack_l, pack_s,
                 pack_g);
    st = fg_deliver_rows(d, r, gl ? &gl->B : NULL, r0, r1, &p.A, FG_TAG_SCATTER);
    if (st == FG_OK && !p.symmetric)
      st = fg_deliver_rows(d, r, gl ? &gl->Bt : NULL, r0, r1, &p.At, FG_TAG_SCATTER);
    if (st == FG_OK)
      st = cfg->features16
               ? fg_deliver_bytes(d, r, pack_f, s->features16, nr * F * 2, FG_TAG_SCATTER)
               : fg_deliver_bytes(d, r, pack_f, s->features, nr * F * 4, FG_TAG_SCATTER);
    if (st == FG_OK) st = fg_deliver_bytes(d, r, pack_l, s->labels, nr * 4, FG_TAG_SCATTER);
    if (st == FG_OK) st = fg_deliver_bytes(d, r, pack_s, s->split, nr, FG_TAG_SCATTER);
    if (st == FG_OK) st = fg_deliver_bytes(d, r, pack_g, s->global_ids, nr * 8, FG_TAG_SCATTER);
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (cfg->normalize_features && s->features)
    fg_row_normalize(s->features, s->n_local, s->num_features);
  s->local_nnz = p.A.nnz;
  *out = p;
  memset(&p, 0, sizeof p);
cleanup:
  fg_layouts_free(&own);
  fg_part_local_free(&p);
  free(nnz);
  free(pack_f);
  free(pack_l);
  free(pack_s);
  free(pack_g);
  return st;
}

/* ---- splitting by column block ----------------------------------------------------------- */

fg_status fg_part_split_blocks(const fg_csr *A, const int64_t *offs, int parts, fg_csr *blk) {
  fg_status st = FG_OK;
  int64_t *fill = NULL; /* (parts) */
  const int64_t n = A->nrows;
  for (int j = 0; j < parts; j++) memset(&blk[j], 0, sizeof blk[j]);
  FG_CALLOC(fill, parts);
  for (int64_t k = 0; k < A->nnz; k++) fill[fg_block_owner(offs, parts, A->col[k])]++;
  for (int j = 0; j < parts; j++) {
    blk[j].nrows = n;
    blk[j].ncols = offs[j + 1] - offs[j];
    blk[j].nnz = fill[j];
    if (fill[j] == 0) continue;
    FG_CALLOC(blk[j].rowptr, n + 1);
    FG_ALLOC(blk[j].col, fill[j]);
    if (A->val) FG_ALLOC(blk[j].val, fill[j]);
    fill[j] = 0;
  }
  for (int64_t u = 0; u < n; u++) {
    for (int64_t k = A->rowptr[u]; k < A->rowptr[u + 1]; k++) {
      const int j = fg_block_owner(offs, parts, A->col[k]);
      fg_csr *b = &blk[j];
      b->col[fill[j]] = (int32_t)(A->col[k] - offs[j]);
      if (A->val) b->val[fill[j]] = A->val[k];
      fill[j]++;
    }
    for (int j = 0; j < parts; j++)
      if (blk[j].rowptr) blk[j].rowptr[u + 1] = fill[j];
  }
cleanup:
  if (st != FG_OK)
    for (int j = 0; j < parts; j++) fg_csr_free(&blk[j]);
  free(fill);
  return st;
}

/* ---- reports and the epoch's aggregations ------------------------------------------------ */

fg_status fg_part_report(fg_dist *d, const fg_scheme *s, const fg_part_local *p, const char *scheme,
                         const char *order, int64_t recv_rows, int64_t sent_rows, FILE *log) {
  fg_status st = FG_OK;
  int64_t mine[4] = {s->n_local, s->local_nnz, recv_rows, sent_rows};
  int64_t *all = NULL;
  if (!log) return FG_OK; /* the same on every rank: the configuration is */
  if (d->rank == 0) {
    all = fg_malloc_array((size_t)d->size * 4, sizeof *all);
    if (!all) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for a report");
  }
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK_MPI(MPI_Gather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, 0, d->comm));
  if (d->rank == 0) {
    int64_t nnz = 0;
    for (int r = 0; r < d->size; r++) nnz += all[4 * r + 1];
    fprintf(log, 
        "layout: scheme %s, order %s, %d rank(s); %lld of %lld nonzeros in off-diagonal "
        "blocks (%.1f%%)\n",
        scheme, p->prep_order[0] ? p->prep_order : order ? order : "natural", d->size, (long long)p->cut, (long long)nnz,
        nnz > 0 ? 100.0 * (double)p->cut / (double)nnz : 0.0);
    fprintf(log, "  rank       rows        nnz  recv rows/agg  sent rows/agg\n");
    for (int r = 0; r < d->size; r++)
      fprintf(log, "  %4d %10lld %10lld %14lld %14lld\n", r, (long long)all[4 * r],
             (long long)all[4 * r + 1], (long long)all[4 * r + 2], (long long)all[4 * r + 3]);
    fflush(log);
  }
cleanup:
  free(all);
  return st;
}

void fg_epoch_agg_list(int layers, const int64_t *w, const int *agg, int input_grad,
                       int64_t *fwd, int *nf, int64_t *bwd, int *nb) {
  *nf = *nb = 0;
  for (int l = 0; l < layers; l++) {
    const int64_t wi = w[l], wo = w[l + 1];
    const int agg_first = agg[l] == 1;
    if (agg[l] < 0) continue; /* a linear layer: its rows stay where they are */
    /* forward: Â D at width wi, or Â (D W) at width wo */
    fwd[(*nf)++] = agg_first ? wi : wo;
    /* backward (fg_model_backward): Âᵀ dS at wi except for layer 0 (unless its input
     * gradient is wanted), or Âᵀ dZ at wo */
    if (agg_first && l == 0 && !input_grad) continue;
    bwd[(*nb)++] = agg_first ? wi : wo;
  }
}

void fg_epoch_agg_widths(int layers, const int64_t *w, const int *agg, int input_grad,
                         int64_t *fwd_sum, int *fwd_count, int64_t *bwd_sum, int *bwd_count) {
  int64_t fwd[128], bwd[128]; /* a stack has at most FG_MAX_STACK = 128 layers */
  fg_epoch_agg_list(layers, w, agg, input_grad, fwd, fwd_count, bwd, bwd_count);
  *fwd_sum = *bwd_sum = 0;
  for (int k = 0; k < *fwd_count; k++) *fwd_sum += fwd[k];
  for (int k = 0; k < *bwd_count; k++) *bwd_sum += bwd[k];
}
