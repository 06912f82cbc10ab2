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
 *     values need both endpoints' degrees: sym 1 / sqrt(d_i d_j), mean 1 / d_i).
 * Nothing else: rank 0 reads no more than any other rank. The values are computed by the very
 * expressions of fg_adj_normalize on the same integers, so they are the bits the direct path
 * gets from normalizing the whole pattern and permuting it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fg_prepared.h"
#include "schemes/fg_partition.h"

typedef struct deg_cache { /* (B) per row block, NULL until read: its rows' degrees */
  int64_t **in_b, **out_b;
  int32_t **loops;
} deg_cache;

/* The degrees of row block j, read once. */
static fg_status deg_block(const char *dir, const fg_prep_manifest *m, deg_cache *c, int64_t j,
                           uint64_t *bytes) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  const int64_t nr = m->offs[j + 1] - m->offs[j];
  if (c->in_b[j]) return FG_OK;
  FG_CHECK(fg_prep_file_read(dir, m, m->B + j, &buf));
  *bytes += m->files[m->B + j].size;
  FG_ALLOC(c->in_b[j], FG_MAX(nr, 1));
  FG_ALLOC(c->out_b[j], FG_MAX(nr, 1));
  FG_ALLOC(c->loops[j], FG_MAX(nr, 1));
  memcpy(c->in_b[j], buf, (size_t)(8 * nr));
  memcpy(c->out_b[j], buf + 8 * nr, (size_t)(8 * nr));
  memcpy(c->loops[j], buf + 16 * nr, (size_t)(4 * nr));
  for (int64_t r = 0; r < nr; r++) {
    char name[FG_PREP_NAME_BYTES];
    fg_prep_deg_name(j, name);
    FG_REQUIRE(c->in_b[j][r] >= c->loops[j][r] && c->out_b[j][r] >= c->loops[j][r] &&
                   c->loops[j][r] >= 0,
               FG_ERR_FORMAT, "%s/%s: row %lld: degrees %lld in, %lld out with %d self loops",
               dir, name, (long long)r, (long long)c->in_b[j][r], (long long)c->out_b[j][r],
               c->loops[j][r]);
  }
cleanup:
  free(buf);
  return st;
}

/* One block file (i, j), whole and checked: its row offsets and block-local columns. */
static fg_status read_block(const char *dir, const fg_prep_manifest *m, int64_t k, int64_t i,
                            int64_t j, unsigned char **buf, uint64_t *bytes) {
  fg_status st = FG_OK;
  const int64_t nr = m->offs[i + 1] - m->offs[i], w = m->offs[j + 1] - m->offs[j];
  const int64_t e = m->block_nnz[i * m->B + j];
  FG_CHECK(fg_prep_file_read(dir, m, k, buf));
  *bytes += m->files[k].size;
  const int64_t *rp = (const int64_t *)(void *)*buf;
  const int32_t *cl = (const int32_t *)(void *)(*buf + 8 * (nr + 1));
  FG_REQUIRE(rp[0] == 0 && rp[nr] == e, FG_ERR_FORMAT,
             "%s/%s: row offsets run from %lld to %lld, not 0 to %lld", dir, m->files[k].name,
             (long long)rp[0], (long long)rp[nr], (long long)e);
  for (int64_t u = 0; u < nr; u++) {
    FG_REQUIRE(rp[u] <= rp[u + 1], FG_ERR_FORMAT, "%s/%s: row %lld ends before it starts", dir,
               m->files[k].name, (long long)u);
    for (int64_t q = rp[u]; q < rp[u + 1]; q++)
      FG_REQUIRE(cl[q] >= 0 && cl[q] < w && (q == rp[u] || cl[q] >= cl[q - 1]), FG_ERR_FORMAT,
                 "%s/%s: row %lld: column %d is outside the block or out of order", dir,
                 m->files[k].name, (long long)u, cl[q]);
  }
cleanup:
  return st;
}

/* Index in m->files of every block, -1 for an empty one: (B x B). */
static fg_status block_files(const fg_prep_manifest *m, int64_t **out) {
  fg_status st = FG_OK;
  int64_t *f = NULL, k = 2 * m->B;
  FG_ALLOC(f, m->B * m->B);
  for (int64_t b = 0; b < m->B * m->B; b++) f[b] = m->block_nnz[b] > 0 ? k++ : -1;
  *out = f;
cleanup:
  return st;
}

/* An operator entry's value, as fg_adj_normalize computes it: rdeg entries in its row, ccount in
 * its column (self loops already taken out when the operator drops them). */
static float op_value(fg_adj_norm norm, int64_t rdeg, int64_t ccount) {
  const double r = (double)rdeg;
  return norm == FG_ADJ_SUM    ? 1.0f
         : norm == FG_ADJ_MEAN ? (float)(1.0 / r)
                               : (float)(1.0 / sqrt(r * (double)ccount));
}

/* Rows [b0, b1) of the directory's row blocks (or of its column blocks, transposed), as a CSR of
 * global positions with the operator's values. transposed: row u of the result is column u of
 * the pattern, and entry (u, v) gets the value of Â(v, u). */
static fg_status build_rows(const char *dir, const fg_prep_manifest *m, const int64_t *files,
                            int64_t b0, int64_t b1, int transposed, fg_adj_spec adj,
                            deg_cache *dc, fg_csr *A, uint64_t *bytes) {
  fg_status st = FG_OK;
  const int64_t B = m->B, r0 = m->offs[b0], nl = m->offs[b1] - r0;
  unsigned char **blk = NULL; /* the blocks of one row (or column) block */
  int64_t *fill = NULL;
  int64_t nnz = 0;
  memset(A, 0, sizeof *A);
  FG_CALLOC(blk, B);
  FG_CALLOC(fill, (b1 > b0 ? m->offs[b1] - m->offs[b0] : 0) + 1);
  /* the entries before self loops are dropped: the manifest's counts */
  for (int64_t x = b0; x < b1; x++)
    for (int64_t y = 0; y < B; y++) {
      const int64_t i = transposed ? y : x, j = transposed ? x : y;
      if (files[i * B + j] >= 0) nnz += m->block_nnz[i * B + j];
    }
  FG_CHECK(fg_scheme_alloc_csr(A, nl, m->n, nnz));
  /* one row (column) block x at a time, each of its blocks read once and whole: its rows'
   * counts, their offsets after the rows before, then the columns */
  for (int64_t x = b0; x < b1; x++) {
    const int64_t xr0 = m->offs[x] - r0, xn = m->offs[x + 1] - m->offs[x];
    for (int64_t y = 0; y < B; y++) {
      const int64_t i = transposed ? y : x, j = transposed ? x : y;
      if (files[i * B + j] >= 0)
        FG_CHECK(read_block(dir, m, files[i * B + j], i, j, &blk[y], bytes));
    }
    for (int64_t u = 0; u <= xn; u++) fill[u] = 0;
    for (int64_t y = 0; y < B; y++) {
      if (!blk[y]) continue;
      const int64_t in = transposed ? m->offs[y + 1] - m->offs[y] : xn;
      const int64_t *rp = (const int64_t *)(void *)blk[y];
      const int32_t *cl = (const int32_t *)(void *)(blk[y] + 8 * (in + 1));
      if (!transposed)
        for (int64_t u = 0; u < xn; u++) fill[u + 1] += rp[u + 1] - rp[u];
      else /* column c of block (y, x) is row c of the result */
        for (int64_t q = 0; q < rp[in]; q++) fill[cl[q] + 1]++;
    }
    fill[0] = A->rowptr[xr0];
    for (int64_t u = 0; u < xn; u++) fill[u + 1] += fill[u];
    memcpy(A->rowptr + xr0, fill, (size_t)(xn + 1) * sizeof *fill);
    for (int64_t y = 0; y < B; y++) { /* increasing y: sorted columns in every row */
      if (!blk[y]) continue;
      const int64_t in = transposed ? m->offs[y + 1] - m->offs[y] : xn;
      const int64_t *rp = (const int64_t *)(void *)blk[y];
      const int32_t *cl = (const int32_t *)(void *)(blk[y] + 8 * (in + 1));
      if (!transposed) {
        for (int64_t u = 0; u < xn; u++)
          for (int64_t q = rp[u]; q < rp[u + 1]; q++)
            A->col[fill[u]++] = (int32_t)(cl[q] + m->offs[y]);
      } else {
        for (int64_t v = 0; v < in; v++)
          for (int64_t q = rp[v]; q < rp[v + 1]; q++)
            A->col[fill[cl[q]]++] = (int32_t)(m->offs[y] + v);
      }
      free(blk[y]);
      blk[y] = NULL;
    }
  }
  /* self loops out (the operator's spec), then the values from both endpoints' degrees */
  {
    int64_t w = 0, start = 0;
    for (int64_t u = 0; u < nl; u++) {
      const int64_t end = A->rowptr[u + 1];
      for (int64_t q = start; q < end; q++)
        if (!adj.no_self_loops || A->col[q] != r0 + u) A->col[w++] = A->col[q];
      start = end;
      A->rowptr[u + 1] = w;
    }
    A->nnz = w;
  }
  for (int64_t u = 0; u < nl; u++) {
    for (int64_t q = A->rowptr[u]; q < A->rowptr[u + 1]; q++) {
      /* the pattern's entry (row, col): for the transpose, (A->col[q], r0 + u) */
      const int64_t prow = transposed ? A->col[q] : r0 + u, pcol = transposed ? r0 + u : A->col[q];
      const int64_t br = fg_block_owner(m->offs, (int)B, prow), bc = fg_block_owner(m->offs, (int)B, pcol);
      FG_CHECK(deg_block(dir, m, dc, br, bytes));
      FG_CHECK(deg_block(dir, m, dc, bc, bytes));
      const int64_t lr = prow - m->offs[br], lc = pcol - m->offs[bc];
      const int drop = adj.no_self_loops != 0;
      const int64_t rdeg = dc->in_b[br][lr] - (drop ? dc->loops[br][lr] : 0);
      const int64_t ccount = dc->out_b[bc][lc] - (drop ? dc->loops[bc][lc] : 0);
      A->val[q] = op_value(adj.norm, rdeg, ccount);
    }
  }
cleanup:
  if (blk)
    for (int64_t y = 0; y < B; y++) free(blk[y]);
  free(blk);
  free(fill);
  if (st != FG_OK) fg_csr_free(A);
  return st;
}

/* This rank's rows (no collective call: errors come back for the caller to agree on). */
static fg_status read_local(const char *dir, const fg_prep_manifest *m, const fg_scheme_config *cfg,
                            int64_t b0, int64_t b1, fg_scheme *s, fg_part_local *p, deg_cache *dc,
                            int64_t **files, uint64_t *bytes) {
  fg_status st = FG_OK;
  unsigned char *buf = NULL;
  const int64_t B = m->B, F = m->F, T = m->T, nl = p->n_local;
  FG_CHECK(block_files(m, files));
  FG_CALLOC(dc->in_b, B);
  FG_CALLOC(dc->out_b, B);
  FG_CALLOC(dc->loops, B);
  s->n_global = m->n;
  s->n_local = nl;
  s->num_features = F;
  s->num_classes = m->C;
  s->global_ids = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->global_ids);
  s->features = fg_malloc_huge((size_t)FG_MAX(nl * F, 1) * sizeof *s->features);
  s->labels = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->labels);
  s->split = fg_malloc_array((size_t)FG_MAX(nl, 1), sizeof *s->split);
  FG_REQUIRE(s->global_ids && s->features && s->labels && s->split, FG_ERR_NOMEM,
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
    fg_prep_node_sections(m, nr, sec);
    FG_CHECK(fg_prep_file_read(dir, m, i, &buf));
    *bytes += m->files[i].size;
    if (F > 0) memcpy(s->features + at * F, buf + sec[FG_PREP_SEC_FEAT], (size_t)(4 * nr * F));
    memcpy(s->global_ids + at, buf + sec[FG_PREP_SEC_INDEX], (size_t)(8 * nr));
    memcpy(s->split + at, buf + sec[FG_PREP_SEC_SPLIT], (size_t)nr);
    if (T > 0) {
      memcpy(s->targets + at * T, buf + sec[FG_PREP_SEC_LABELS], (size_t)(nr * T));
      for (int64_t r = 0; r < nr; r++) s->labels[at + r] = -1;
    } else {
      memcpy(s->labels + at, buf + sec[FG_PREP_SEC_LABELS], (size_t)(4 * nr));
    }
    for (int64_t r = 0; r < nr; r++) {
      const int64_t v = s->global_ids[at + r];
      const int32_t lab = s->labels[at + r];
      const int8_t sp = s->split[at + r];
      FG_REQUIRE(v >= 0 && v < m->n && lab >= -1 && lab < m->C && sp >= FG_SPLIT_NONE &&
                     sp <= FG_SPLIT_TEST,
                 FG_ERR_FORMAT, "%s/%s: row %lld: node %lld, label %d or split %d out of range",
                 dir, m->files[i].name, (long long)r, (long long)v, lab, sp);
      for (int64_t t = 0; t < T; t++)
        FG_REQUIRE(s->targets[(at + r) * T + t] >= -1 && s->targets[(at + r) * T + t] <= 1,
                   FG_ERR_FORMAT, "%s/%s: row %lld task %lld is %d", dir, m->files[i].name,
                   (long long)r, (long long)t, s->targets[(at + r) * T + t]);
    }
    free(buf);
    buf = NULL;
  }
  /* the operator's rows */
  FG_CHECK(build_rows(dir, m, *files, b0, b1, 0, cfg->adj, dc, &p->A, bytes));
cleanup:
  free(buf);
  return st;
}

/* 1 when this rank's rows allow a symmetric operator (the direct path's fg_csr_is_symmetric on
 * the permuted operator): a symmetric pattern, and equal values at (u, v) and (v, u) -- always
 * for sym and sum; for mean, 1 / d_u == 1 / d_v on every entry. */
static fg_status rows_symmetric(const char *dir, const fg_prep_manifest *m, fg_adj_spec adj,
                                const fg_csr *A, deg_cache *dc, uint64_t *bytes, int *out) {
  fg_status st = FG_OK;
  *out = (m->flags & FG_PREP_SYMMETRIC) != 0;
  if (!*out || adj.norm != FG_ADJ_MEAN) return FG_OK;
  for (int64_t u = 0; *out && u < A->nrows; u++)
    for (int64_t q = A->rowptr[u]; *out && q < A->rowptr[u + 1]; q++) {
      const int64_t c = A->col[q], bc = fg_block_owner(m->offs, (int)m->B, c);
      FG_CHECK(deg_block(dir, m, dc, bc, bytes));
      const int64_t lc = c - m->offs[bc];
      const int64_t dcol = dc->in_b[bc][lc] - (adj.no_self_loops ? dc->loops[bc][lc] : 0);
      *out = A->val[q] == op_value(FG_ADJ_MEAN, dcol, 0);
    }
cleanup:
  return st;
}

fg_status fg_part_read_prepared(fg_dist *d, const char *dir, const fg_scheme_config *cfg, int rep,
                                fg_scheme *s, fg_part_local *out) {
  fg_status st = FG_OK;
  fg_prep_manifest m;
  fg_part_local p;
  deg_cache dc;
  int64_t *files = NULL;
  uint64_t bytes = 0;
  int64_t B = 0, K = 1, g = 1, mb = 0;
  const int P = d->size, me = d->rank;
  memset(&m, 0, sizeof m);
  memset(&p, 0, sizeof p);
  memset(&dc, 0, sizeof dc);
  memset(out, 0, sizeof *out);

  /* 1. every rank reads the manifest itself; the checks give every rank the same answer */
  st = fg_prep_manifest_read(dir, &m);
  FG_CHECK(fg_dist_agree(d, st));
  B = m.B;
  K = P / rep;
  {
    st = fg_prep_check_layout(&m, dir, P, rep, cfg->name);
    /* a given order must be the directory's; a scheme's default order (halo's metis) gives
     * way to it: the prepared order is the layout */
    if (st == FG_OK && cfg->order && !cfg->order_default) {
      fg_order_kind want = FG_ORDER_NATURAL, have = FG_ORDER_NATURAL;
      st = fg_order_parse(cfg->order, &want);
      if (st == FG_OK && (fg_order_parse(m.order, &have) != FG_OK || have != want))
        st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "%s was prepared in order %s; --order %s needs it prepared again (or "
                          "drop --order: the prepared order is the layout)",
                          dir, m.order, cfg->order);
    }
  }
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
    st = read_local(dir, &m, cfg, mb * g, mb * g + g, s, &p, &dc, &files, &bytes);
  } else {
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory for %lld offsets",
                      (long long)K);
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 2. Âᵀ's rows unless the operator is symmetric on every rank */
  {
    int sym = 0;
    double notsym;
    st = rows_symmetric(dir, &m, cfg->adj, &p.A, &dc, &bytes, &sym);
    FG_CHECK(fg_dist_agree(d, st));
    notsym = sym ? 0.0 : 1.0;
    FG_CHECK(fg_dist_max_f64(d, &notsym, 1));
    p.symmetric = notsym == 0.0;
  }
  if (!p.symmetric) st = build_rows(dir, &m, files, mb * g, mb * g + g, 1, cfg->adj, &dc, &p.At, &bytes);
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
  if (cfg->normalize_features) fg_row_normalize(s->features, s->n_local, s->num_features);
  s->local_nnz = p.A.nnz;
  p.bytes_read = (int64_t)bytes;
  snprintf(p.prep_order, sizeof p.prep_order, "%s", m.order);
  if (cfg->verbose && cfg->log) {
    /* what each rank read and its peak so far: the per-rank read, measured (tests/cli) */
    int64_t mine[2] = {p.bytes_read, fg_peak_rss_bytes()}, *all = NULL, total = 0;
    if (me == 0) all = fg_malloc_array((size_t)P * 2, sizeof *all);
    FG_CHECK_MPI(MPI_Gather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, 0, d->comm));
    if (me == 0 && all) {
      for (int64_t k = 0; k < m.nfiles; k++) total += (int64_t)m.files[k].size;
      fprintf(cfg->log, "prepared %s: %lld x %lld blocks, %lld a rank; its files hold %lld bytes\n",
              dir, (long long)B, (long long)B, (long long)g, (long long)total);
      for (int r = 0; r < P; r++)
        fprintf(cfg->log, "  rank %d read %lld bytes, peak resident %lld bytes\n", r,
                (long long)all[2 * r], (long long)all[2 * r + 1]);
      fflush(cfg->log);
    }
    free(all);
  }
  *out = p;
  memset(&p, 0, sizeof p);
cleanup:
  if (dc.in_b)
    for (int64_t j = 0; j < B; j++) {
      free(dc.in_b[j]);
      free(dc.out_b[j]);
      free(dc.loops[j]);
    }
  free(dc.in_b);
  free(dc.out_b);
  free(dc.loops);
  free(files);
  fg_part_local_free(&p);
  fg_prep_manifest_free(&m);
  return st;
}
