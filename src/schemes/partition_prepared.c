/* partition_prepared.c -- the 1D layout's other source: every rank reads its own block rows of a
 * prepared directory (`fullgraph prepare`, graph/graph_prepared.c) instead of receiving them
 * from rank 0. What it fills is what fg_part_distribute's delivery fills -- the local rows of Â
 * (and Âᵀ), the features, labels, split, ids, the offsets -- so everything after it is one code
 * path. See fg_partition.h.
 *
 * Rank r of P (K = P / rep blocks of the layout, B / K row blocks of the directory each) reads:
 *   - its row blocks' node files (features, node index, labels or targets, split) and adjacency
 *     blocks (i, j) for every column block j, whole, each checked against its size and CRC-32;
 *   - for a directed pattern or an operator that is not symmetric, the blocks (i, j) of its
 *     column blocks j for every i, the rows of Âᵀ it owns;
 *   - the degree files of the row blocks whose nodes its entries reference (the operator's
 *     values need both endpoints' degrees: sym 1 / sqrt(d_i d_j), mean 1 / d_i): its own row
 *     blocks' held, every other one read, used and freed in turn, once for Â and again for Âᵀ
 *     (fg_prep_operator), so it holds its rows' degrees and one block's, never every node's.
 * Nothing else: rank 0 reads no more than any other rank. The values are computed by the very
 * expressions of fg_adj_normalize on the same integers, so they are the bits the direct path
 * gets from normalizing the whole pattern and permuting it. The reads, checks and values are
 * fg_prep_blocks.h's, which the 3D grid's per-rank read (scheme_3d.c) shares. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fg_prepared.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_prep_blocks.h"

/* This rank's rows (no collective call: errors come back for the caller to agree on); *sym 1
 * when they allow a symmetric operator (the direct path's fg_csr_is_symmetric on the permuted
 * operator): a symmetric pattern, and equal values at (u, v) and (v, u) -- always for sym and
 * sum; for mean, 1 / d_u == 1 / d_v on every entry, checked while the values are computed. */
static fg_status read_local(fg_prep_src *src, const fg_scheme_config *cfg, int64_t b0, int64_t b1,
                            fg_scheme *s, fg_part_local *p, int *sym) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  const fg_prep_manifest *m = src->m;
  const int64_t F = m->F, T = m->T, nl = p->n_local;
  s->n_global = m->n;
  s->n_local = nl;
  s->num_features = F;
  s->num_classes = m->C;
  s->global_ids = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->global_ids);
  if (cfg->features16) /* read as bf16 (fg_scheme_config.features16) */
    s->features16 = fg_malloc_huge((size_t)FG_MAX(nl * F, 1) * sizeof *s->features16);
  else
    s->features = fg_malloc_huge((size_t)FG_MAX(nl * F, 1) * sizeof *s->features);
  s->labels = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->labels);
  s->split = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->split);
  FG_REQUIRE(s->global_ids && (s->features || s->features16) && s->labels && s->split,
             FG_ERR_NOMEM,
             "out of memory for a block of %lld nodes x %lld features", (long long)nl,
             (long long)F);
  if (T > 0) {
    s->num_tasks = T;
    s->targets = fg_malloc_array((size_t)FG_MAX(nl * T, 1), 1);
    FG_REQUIRE(s->targets, FG_ERR_NOMEM, "out of memory for %lld x %lld targets", (long long)nl,
               (long long)T);
  }
  /* the node files of its row blocks */
  for (int64_t i = b0; i < b1; i++) {
    const int64_t at = m->offs[i] - p->row0, nr = m->offs[i + 1] - m->offs[i];
    int64_t sec[6];
    FG_CHECK(fg_prep_node_read(src, i, &buf, sec));
    if (F > 0 && s->features16) /* each row normalized (when asked) and rounded as read */
      for (int64_t r = 0; r < nr; r++)
        fg_scheme_feature_row((const float *)(void *)(buf + sec[FG_PREP_SEC_FEAT]) + r * F, F,
                              cfg->normalize_features, 0, F, NULL,
                              s->features16 + (at + r) * F);
    else if (F > 0)
      memcpy(s->features + at * F, buf + sec[FG_PREP_SEC_FEAT], (size_t)(4 * nr * F));
    memcpy(s->global_ids + at, buf + sec[FG_PREP_SEC_INDEX], (size_t)(8 * nr));
    memcpy(s->split + at, buf + sec[FG_PREP_SEC_SPLIT], (size_t)nr);
    if (T > 0) {
      memcpy(s->targets + at * T, buf + sec[FG_PREP_SEC_LABELS], (size_t)(nr * T));
      for (int64_t r = 0; r < nr; r++) s->labels[at + r] = -1;
    } else {
      memcpy(s->labels + at, buf + sec[FG_PREP_SEC_LABELS], (size_t)(4 * nr));
    }
    free(buf);
    buf = NULL;
  }
  /* the operator's rows, every column */
  *sym = (m->flags & FG_PREP_SYMMETRIC) != 0;
  {
    int mean_sym = 1;
    const int check = *sym && cfg->adj.norm == FG_ADJ_MEAN;
    FG_CHECK(fg_prep_operator_sym(src, m->offs[b0], m->offs[b1], 0, m->n, 0, cfg->adj, &p->A,
                                  check ? &mean_sym : NULL));
    *sym = *sym && mean_sym;
  }
cleanup:
  free(buf);
  return st;
}

fg_status fg_part_read_prepared(fg_dist *d, const char *dir, const fg_scheme_config *cfg, int rep,
                                fg_scheme *s, fg_part_local *out) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  fg_part_local p;
  fg_prep_src src;
  int64_t B = 0, K = 1, g = 1, mb = 0;
  int sym = 0;
  const int P = d->size, me = d->rank;
  memset(&m, 0, sizeof m);
  memset(&p, 0, sizeof p);
  memset(&src, 0, sizeof src);
  memset(out, 0, sizeof *out);

  /* 1. every rank reads the manifest itself; the checks give every rank the same answer */
  st = fg_prep_manifest_read(dir, &m);
  FG_CHECK(fg_dist_agree(d, st));
  B = m.B;
  K = P / rep;
  st = fg_prep_check_layout(&m, dir, P, rep, cfg->name);
  /* a given order must be the directory's; a scheme's default order (halo's metis) gives way
   * to it: the prepared order is the layout */
  if (st == FG_OK && !cfg->order_default) st = fg_prep_check_order(&m, dir, cfg->order);
  if (st == FG_OK) st = fg_prep_src_open(&src, dir, &m);
  FG_CHECK(fg_dist_agree(d, st));
  g = B / K;
  mb = me / rep;
  p.parts = (int)K;
  p.rep = rep;
  p.n_global = m.n;
  p.offs = fg_malloc_array((size_t)K + 1, sizeof *p.offs);
  if (p.offs) {
    for (int64_t r = 0; r <= K; r++) p.offs[r] = m.offs[r * g];
    p.row0 = p.offs[mb];
    p.n_local = p.offs[mb + 1] - p.offs[mb];
    st = read_local(&src, cfg, mb * g, mb * g + g, s, &p, &sym);
  } else {
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for %lld offsets",
                      (long long)K);
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 2. Âᵀ's rows unless the operator is symmetric on every rank */
  {
    double notsym = sym ? 0.0 : 1.0;
    FG_CHECK(fg_dist_max_f64(d, &notsym, 1));
    p.symmetric = notsym == 0.0;
  }
  if (!p.symmetric)
    st = fg_prep_operator(&src, m.offs[mb * g], m.offs[mb * g + g], 0, m.n, 1, cfg->adj, &p.At);
  FG_CHECK(fg_dist_agree(d, st));
  {
    /* the layout's cut: entries of the operator outside the diagonal blocks, summed once a
     * block */
    int64_t cut = 0;
    const int64_t c0 = p.offs[mb], c1 = p.offs[mb + 1];
    if (me % rep == 0)
      for (int64_t q = 0; q < p.A.nnz; q++) cut += p.A.col[q] < c0 || p.A.col[q] >= c1;
    FG_CHECK(fg_dist_allreduce_i64(d, &cut, 1));
    p.cut = cut;
  }
  if (cfg->normalize_features && s->features)
    fg_row_normalize(s->features, s->n_local, s->num_features);
  s->local_nnz = p.A.nnz;
  p.bytes_read = (int64_t)src.bytes;
  snprintf(p.prep_order, sizeof p.prep_order, "%s", m.order);
  {
    /* what each rank read and its peak so far: the per-rank read, measured (tests/cli) */
    char what[96];
    snprintf(what, sizeof what, "%lld x %lld blocks, %lld a rank", (long long)B, (long long)B,
             (long long)g);
    FG_CHECK(fg_prep_report(d, cfg->verbose ? cfg->log : NULL, dir, &m, what, src.bytes,
                            src.deg_peak));
  }
  *out = p;
  memset(&p, 0, sizeof p);
cleanup:
  fg_prep_src_close(&src);
  fg_part_local_free(&p);
  fg_prep_manifest_free(&m);
  return st;
}
