/* scheme_3d.c -- Plexus' 3D tensor-parallel scheme (Ranjan et al., SC'25, §3) behind the scheme
 * interface: the layout (adjacency shards, feature block, ids, labels, distributed from rank 0)
 * and every exchange a layer needs on it. The geometry is fg_grid3d.h's.
 *
 * Layer l with roles (a, b, c) on rank q (fg_layer_shape): input rows node block q[a] in
 * pi[l % 2], columns width block q[b]; output rows block q[c] in pi[(l + 1) % 2], columns block
 * q[a]; W_l's (q[b], q[a]) block, cut into G_c pieces of its row-major elements (b_l's q[a]
 * block likewise, replicated along b). The operations:
 *   aggregate      H = Â_l D on the shard, all-reduced along a (in --agg-blocks row blocks,
 *                  each block's nonblocking all-reduce started as soon as it is computed)
 *   aggregate16    the same from a hidden stored as bf16 (under --precision bf16), its rows
 *                  gathered as they are rather than widened by the model and rounded back
 *   aggregate_t    dD = Â_lᵀ dH on the transposed shard, all-reduced along c (blocked too)
 *   move_rows      the identity's shard in place of Â_l's, all-reduced along a
 *   move_rows_bf16 the same for GEMM operands: under --precision bf16 the rows move as bf16
 *   move_rows_t    its transpose's, all-reduced along c
 *   gather_weights the W pieces (each matrix's) and b pieces all-gathered along c
 *   reduce_product Q = H W all-reduced along b
 *   reduce_input_grad     dH = dQ Wᵀ all-reduced along a
 *   reduce_weight_grads   dW, db blocks reduce-scattered along c into the pieces
 *   row_max, row_sum      a layer's row statistics (softmax, LayerNorm) over its a group
 *   col_sum        a layer's column statistics (BatchNorm) over its c group (its other rows)
 *   gather_input, input_grad   learned features: all-gather along Z; Â_0ᵀ dH reduce-scattered
 *                  along Z into the feature pieces
 * Under --precision bf16 (spmm_allreduce's modes say why): the only rows that cross ranks as
 * bf16 are move_rows_bf16's; every all-reduce of partial sums (aggregate, aggregate_t,
 * reduce_product, reduce_input_grad, input_grad's reduce-scatter) is a reduction and stays
 * fp32, the moves whose rows are added in fp32 (move_rows, move_rows_t) stay fp32 and exact,
 * and gather_input all-gathers parameters (the learned features' fp32 master pieces, which the
 * input dropout scales in fp32), as gather_weights does.
 * Dropout keys are the rows' original ids and global columns, Glorot element (i, j) the serial
 * draw, Â normalized on the whole pattern before permuting: every grid trains the one-process
 * model.
 *
 * Two sources fill the same fields: rank 0 lays the dataset out and sends every rank its pieces
 * (root_prepare, deliver_3d), or, on a prepared directory opened per rank (`fullgraph prepare`),
 * every rank reads its own (prep_read_3d): its shards from the adjacency blocks they overlap,
 * its feature, label and id rows from the node files they overlap. The prepared order is then
 * the permutation (pi[0] = pi[1] = the identity over prepared positions, a position's id its
 * stored source index), so `prepare --order random` is the single random permutation; the
 * double one (two orders) cannot be read from one directory and is refused.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dist/fg_group.h"
#include "graph/fg_order.h"
#include "schemes/fg_deliver.h"
#include "schemes/fg_grid3d.h"
#include "schemes/fg_layouts.h"
#include "schemes/fg_prep_blocks.h"
#include "schemes/fg_scheme.h"

#define FG_TAG_3D 7301

typedef struct impl3d {
  int g[3], q[3];
  fg_group grp[3];          /* the ranks that differ from this one in coordinate d only */
  int layers;
  fg_perm_kind perm;
  int nkeys;                /* distinct adjacency shards: min(3, L), or min(6, L) with double */
  int agg_blocks;
  int input_grad;           /* layer 0's input gradient is wanted: its transposed shard, and the
                               input rows' labels (label propagation) */
  fg_csr *A;                /* (nkeys) the shard of layer k (rows q[c], columns q[a]) */
  fg_csr *At;               /* (nkeys) its transpose; empty when no layer using it runs a
                               backward SpMM */
  fg_csr *I, *It;           /* (nkeys) the identity's shards (move_rows) and their transposes
                               (move_rows_t), built on first use */
  int64_t *gids[3][2];      /* original ids of node block q[d] in order pi[parity]; only the
                               slices some layer's input uses (NULL otherwise) */
  int64_t feat_cols;        /* the feature block's columns (width block q[Y]) */
  int64_t *len;             /* (P) scratch of piece_counts: piece lengths, */
  int *cnt, *dsp;           /* (P) and their MPI counts and displacements */
  uint16_t *wire16;         /* (wire16_cap) bf16 rows moved as bf16 (SPMM_MOVE_BF16) */
  int64_t wire16_cap;
} impl3d;

/* ---- the per-rank geometry -------------------------------------------------------------------- */

/* Which (dimension, parity) row slices some layer's input (l = 0..L) uses. */
static void needed_slices(int L, int need[3][2]) {
  memset(need, 0, 6 * sizeof(int));
  for (int l = 0; l <= L; l++) {
    int a, b, c;
    fg_layer_roles(l, &a, &b, &c);
    need[a][l % 2] = 1;
  }
}

static int nkeys_of(int L, fg_perm_kind perm) {
  return FG_MIN(L, perm == FG_PERM_DOUBLE ? 6 : 3);
}

/* Shard k (the one layer k uses) of rank q: rows [*r0, *r1) of M_{k%2}, columns [*c0, *c1). */
static void shard_range(int64_t n, const int g[3], const int q[3], int k, int64_t *r0,
                        int64_t *r1, int64_t *c0, int64_t *c1) {
  int a, b, c;
  fg_layer_roles(k, &a, &b, &c);
  *r0 = fg_block_start(n, g[c], q[c]);
  *r1 = fg_block_start(n, g[c], q[c] + 1);
  *c0 = fg_block_start(n, g[a], q[a]);
  *c1 = fg_block_start(n, g[a], q[a] + 1);
}

/* Rows of a feature piece: [*r0, *r1) positions of pi[0]; columns [*f0, *f1). */
static void feature_range(int64_t n, int64_t F, const int g[3], const int q[3], int learn,
                          int64_t *r0, int64_t *r1, int64_t *f0, int64_t *f1) {
  const int64_t b0 = fg_block_start(n, g[FG_DIM_X], q[FG_DIM_X]);
  const int64_t nb = fg_block_size(n, g[FG_DIM_X], q[FG_DIM_X]);
  if (learn) {
    *r0 = b0 + fg_block_start(nb, g[FG_DIM_Z], q[FG_DIM_Z]);
    *r1 = b0 + fg_block_start(nb, g[FG_DIM_Z], q[FG_DIM_Z] + 1);
  } else {
    *r0 = b0;
    *r1 = b0 + nb;
  }
  *f0 = fg_block_start(F, g[FG_DIM_Y], q[FG_DIM_Y]);
  *f1 = fg_block_start(F, g[FG_DIM_Y], q[FG_DIM_Y] + 1);
}

/* Count (out NULL) or copy block [r0, r1) x [c0, c1) of M into out (allocated large enough;
 * columns relative to c0, sizes set). Returns the nonzeros. */
static int64_t extract_block(const fg_csr *M, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                             fg_csr *out) {
  int64_t nnz = 0;
  if (out) out->rowptr[0] = 0;
  for (int64_t u = r0; u < r1; u++) {
    const int64_t k0 = fg_scheme_lower_bound(M->col, M->rowptr[u], M->rowptr[u + 1], c0);
    const int64_t k1 = fg_scheme_lower_bound(M->col, k0, M->rowptr[u + 1], c1);
    if (out) {
      for (int64_t k = k0; k < k1; k++) {
        out->col[nnz + k - k0] = (int32_t)(M->col[k] - c0);
        out->val[nnz + k - k0] = M->val[k];
      }
      out->rowptr[u - r0 + 1] = nnz + (k1 - k0);
    }
    nnz += k1 - k0;
  }
  if (out) {
    out->nrows = r1 - r0;
    out->ncols = c1 - c0;
    out->nnz = nnz;
  }
  return nnz;
}

/* Rank 0's prepared data: the layer matrices and permutations (from the run's layouts, or
 * built here), and buffers to pack pieces into. */
typedef struct root_data {
  fg_layouts *lay; /* lay->pi, lay->M */
  fg_layouts own;  /* when the configuration brings none */
  fg_csr pack;     /* a shard to send */
  float *featbuf;  /* a feature piece */
  int32_t *labbuf;
  int8_t *splitbuf;
  int32_t *inlabbuf; /* the layer-0 input rows' labels and split (input_grad) */
  int8_t *insplitbuf;
} root_data;

static void root_free(root_data *r) {
  fg_layouts_free(&r->own);
  fg_csr_free(&r->pack);
  free(r->featbuf);
  free(r->labbuf);
  free(r->splitbuf);
  free(r->inlabbuf);
  free(r->insplitbuf);
  memset(r, 0, sizeof *r);
}

static const fg_csr *root_matrix(const root_data *r, fg_perm_kind perm, int k) {
  return perm == FG_PERM_DOUBLE ? &r->lay->M[k % 2] : &r->lay->M[0];
}

/* Rank 0: everything that can fail, before anything is sent; every rank's shard nonzeros into
 * nnz (P x nkeys). */
static fg_status root_prepare(const fg_dataset *ds, const fg_scheme_config *cfg,
                              fg_perm_kind perm, int P, int nkeys, int64_t *nnz, root_data *r) {
  fg_status st = FG_OK;
  const int64_t n = ds->num_nodes, F = ds->num_features;
  int64_t max_rows = 0, max_nnz = 0, max_feat = 0, max_out = 0, max_in = 0;
  r->lay = cfg->layouts ? cfg->layouts : &r->own;
  FG_CHECK(fg_layouts_3d(r->lay, ds, perm, cfg->seed, cfg->adj));
  /* every rank's shard sizes, and the largest pieces to pack */
  for (int rk = 0; rk < P; rk++) {
    int q[3];
    int64_t r0, r1, c0, c1, f0, f1;
    int a, b, c;
    fg_grid_coords(cfg->grid, rk, q);
    for (int k = 0; k < nkeys; k++) {
      shard_range(n, cfg->grid, q, k, &r0, &r1, &c0, &c1);
      nnz[(int64_t)rk * nkeys + k] =
          extract_block(root_matrix(r, perm, k), r0, r1, c0, c1, NULL);
      max_rows = FG_MAX(max_rows, r1 - r0);
      max_nnz = FG_MAX(max_nnz, nnz[(int64_t)rk * nkeys + k]);
    }
    feature_range(n, F, cfg->grid, q, cfg->learn_features, &r0, &r1, &f0, &f1);
    max_feat = FG_MAX(max_feat, (r1 - r0) * (f1 - f0));
    fg_layer_roles(cfg->layers, &a, &b, &c);
    max_out = FG_MAX(max_out, fg_block_size(n, cfg->grid[a], q[a]));
    max_in = FG_MAX(max_in, fg_block_size(n, cfg->grid[FG_DIM_X], q[FG_DIM_X]));
  }
  if (cfg->input_grad) {
    FG_ALLOC(r->inlabbuf, FG_MAX(max_in, 1));
    FG_ALLOC(r->insplitbuf, FG_MAX(max_in, 1));
  }
  FG_CHECK(fg_scheme_alloc_csr(&r->pack, max_rows, n, max_nnz));
  if (cfg->features16 && !cfg->learn_features) max_feat = (max_feat + 1) / 2; /* bf16 rows */
  FG_ALLOC(r->featbuf, max_feat > 0 ? max_feat : 1);
  FG_ALLOC(r->labbuf, max_out > 0 ? max_out : 1);
  FG_ALLOC(r->splitbuf, max_out > 0 ? max_out : 1);
cleanup:
  return st;
}

/* Rank 0: the feature piece [r0, r1) x [f0, f1) into featbuf (x16: rounded to bf16 into its
 * first half). */
static void pack_features(const fg_dataset *ds, const root_data *r, int normalize, int x16,
                          int64_t r0, int64_t r1, int64_t f0, int64_t f1) {
  const int64_t F = ds->num_features, w = f1 - f0;
  for (int64_t k = r0; k < r1; k++)
    fg_scheme_feature_row(ds->features + r->lay->pi[0][k] * F, F, normalize, f0, f1,
                          x16 ? NULL : r->featbuf + (k - r0) * w,
                          x16 ? (fg_bf16 *)(void *)r->featbuf + (k - r0) * w : NULL);
}

/* Rank 0: labels and split of the logit rows [s0, s0 + len) of pi[L % 2]. */
static void pack_labels(const fg_dataset *ds, const root_data *r, int L, int64_t s0,
                        int64_t len) {
  for (int64_t i = 0; i < len; i++) {
    const int64_t v = r->lay->pi[L % 2][s0 + i];
    r->labbuf[i] = ds->labels ? ds->labels[v] : -1;
    r->splitbuf[i] = ds->split ? ds->split[v] : (int8_t)FG_SPLIT_NONE;
  }
}

/* Allocate what rank q receives (sizes from the geometry and its row of the nnz table; with
 * no table the shards are left to the per-rank read, which sizes them itself). */
static fg_status local_alloc(fg_scheme *s, impl3d *t, const int64_t *nnz_row, int features16) {
  fg_status st = FG_OK;
  int need[3][2];
  int64_t r0, r1, c0, c1, f0, f1;
  int a, b, c;
  FG_CALLOC(t->A, t->nkeys);
  FG_CALLOC(t->At, t->nkeys);
  FG_ALLOC(t->len, s->dist->size);
  FG_ALLOC(t->cnt, s->dist->size);
  FG_ALLOC(t->dsp, s->dist->size);
  for (int k = 0; k < t->nkeys && nnz_row; k++) {
    shard_range(s->n_global, t->g, t->q, k, &r0, &r1, &c0, &c1);
    FG_CHECK(fg_scheme_alloc_csr(&t->A[k], r1 - r0, c1 - c0, nnz_row[k]));
    s->local_nnz += nnz_row[k];
  }
  needed_slices(t->layers, need);
  for (int d = 0; d < 3; d++) {
    for (int p = 0; p < 2; p++) {
      if (need[d][p])
        FG_ALLOC(t->gids[d][p], FG_MAX(fg_block_size(s->n_global, t->g[d], t->q[d]), 1));
    }
  }
  feature_range(s->n_global, s->num_features, t->g, t->q, s->learn_features, &r0, &r1, &f0,
                &f1);
  s->feat_row0 = r0 - fg_block_start(s->n_global, t->g[FG_DIM_X], t->q[FG_DIM_X]);
  s->feat_rows = r1 - r0;
  t->feat_cols = f1 - f0;
  if (features16 && !s->learn_features) /* delivered as bf16 (fg_scheme_config) */
    FG_ALLOC(s->features16, FG_MAX(s->feat_rows * t->feat_cols, 1));
  else
    FG_ALLOC(s->features, FG_MAX(s->feat_rows * t->feat_cols, 1));
  fg_layer_roles(t->layers, &a, &b, &c);
  s->n_local = fg_block_size(s->n_global, t->g[a], t->q[a]);
  FG_ALLOC(s->labels, s->n_local > 0 ? s->n_local : 1);
  FG_ALLOC(s->split, s->n_local > 0 ? s->n_local : 1);
  if (t->input_grad) { /* layer 0's input rows: node block q[X] of pi[0] */
    const int64_t nin = fg_block_size(s->n_global, t->g[FG_DIM_X], t->q[FG_DIM_X]);
    FG_ALLOC(s->in_labels, FG_MAX(nin, 1));
    FG_ALLOC(s->in_split, FG_MAX(nin, 1));
  }
cleanup:
  return st;
}

/* Rank 0 gives rank rk its pieces (copies them into s and t when rk is 0); rank rk takes them,
 * in the same order. Sizes from the geometry, which both know; r is read on rank 0 only. */
static fg_status deliver_3d(fg_dist *d, const fg_dataset *ds, root_data *r,
                            const fg_scheme_config *cfg, int rk, fg_scheme *s, impl3d *t) {
  fg_status st = FG_OK;
  const int root = d->rank == 0;
  const int64_t n = s->n_global;
  int q[3], need[3][2], a, b, c;
  int64_t r0, r1, c0, c1, f0, f1;
  fg_grid_coords(t->g, rk, q);
  for (int k = 0; k < t->nkeys; k++) {
    if (root) {
      shard_range(n, t->g, q, k, &r0, &r1, &c0, &c1);
      extract_block(root_matrix(r, t->perm, k), r0, r1, c0, c1, &r->pack);
    }
    FG_CHECK(fg_deliver_rows(d, rk, &r->pack, 0, r->pack.nrows, &t->A[k], FG_TAG_3D));
  }
  needed_slices(t->layers, need);
  for (int dd = 0; dd < 3; dd++) {
    for (int p = 0; p < 2; p++) {
      if (!need[dd][p]) continue;
      r0 = fg_block_start(n, t->g[dd], q[dd]);
      FG_CHECK(fg_deliver_bytes(d, rk, root ? r->lay->pi[p] + r0 : NULL, t->gids[dd][p],
                                fg_block_size(n, t->g[dd], q[dd]) * 8, FG_TAG_3D));
    }
  }
  feature_range(n, s->num_features, t->g, q, s->learn_features, &r0, &r1, &f0, &f1);
  if (root) pack_features(ds, r, cfg->normalize_features, s->features16 != NULL, r0, r1, f0, f1);
  if (s->features16)
    FG_CHECK(fg_deliver_bytes(d, rk, r->featbuf, s->features16, (r1 - r0) * (f1 - f0) * 2,
                              FG_TAG_3D));
  else
    FG_CHECK(fg_deliver_bytes(d, rk, r->featbuf, s->features, (r1 - r0) * (f1 - f0) * 4,
                              FG_TAG_3D));
  fg_layer_roles(t->layers, &a, &b, &c);
  r0 = fg_block_start(n, t->g[a], q[a]);
  r1 = r0 + fg_block_size(n, t->g[a], q[a]);
  if (root) pack_labels(ds, r, t->layers, r0, r1 - r0);
  FG_CHECK(fg_deliver_bytes(d, rk, r->labbuf, s->labels, (r1 - r0) * 4, FG_TAG_3D));
  FG_CHECK(fg_deliver_bytes(d, rk, r->splitbuf, s->split, r1 - r0, FG_TAG_3D));
  if (t->input_grad) { /* the layer-0 input rows' labels and split (label propagation) */
    r0 = fg_block_start(n, t->g[FG_DIM_X], q[FG_DIM_X]);
    r1 = r0 + fg_block_size(n, t->g[FG_DIM_X], q[FG_DIM_X]);
    for (int64_t i = 0; root && i < r1 - r0; i++) {
      const int64_t v = r->lay->pi[0][r0 + i];
      r->inlabbuf[i] = ds->labels ? ds->labels[v] : -1;
      r->insplitbuf[i] = ds->split ? ds->split[v] : (int8_t)FG_SPLIT_NONE;
    }
    FG_CHECK(fg_deliver_bytes(d, rk, r->inlabbuf, s->in_labels, (r1 - r0) * 4, FG_TAG_3D));
    FG_CHECK(fg_deliver_bytes(d, rk, r->insplitbuf, s->in_split, r1 - r0, FG_TAG_3D));
  }
cleanup:
  return st;
}

/* Rows [lo, hi) of position range [a0, a1) intersected with node file [ib, ie) (empty: lo >= hi). */
static void overlap(int64_t a0, int64_t a1, int64_t ib, int64_t ie, int64_t *lo, int64_t *hi) {
  *lo = FG_MAX(a0, ib);
  *hi = FG_MIN(a1, ie);
}

/* The per-rank read of a prepared directory: this rank's shards (nnz_row gets their nonzeros;
 * each adjacency block read once, kept while the shards are cut from it), then every node file
 * that overlaps one of its row ranges: read whole (its CRC-32 checked) where its feature rows
 * are (the width block of columns taken), else only the rows of the sections it needs -- the
 * ids of the slices its layers use, the logit rows' labels and split (or targets), the layer-0
 * input rows' labels and split. The same fields deliver_3d fills, the same bits: the operator's
 * values are fg_prep_operator's (those of fg_adj_normalize), the features feature_row's. Not
 * collective. */
static fg_status prep_read_3d(fg_prep_src *src, const fg_scheme_config *cfg, fg_scheme *s,
                              impl3d *t, int64_t *nnz_row) {
  fg_status st = FG_OK;
  const fg_prep_manifest *m = src->m;
  const int64_t n = s->n_global, F = s->num_features, T = m->T, lw = T > 0 ? T : 4;
  unsigned char *buf = NULL, *ids = NULL, *lab = NULL, *spl = NULL; /* one file's rows */
  int need[3][2], a, b, c;
  int64_t r0, r1, c0, c1, maxrows = 0;
  /* row ranges of the prepared order to fill: the slices, the features, the labels */
  int64_t slo[3], shi[3], flo, fhi, f0, f1, llo, lhi, ilo = 0, ihi = 0;
  FG_CHECK(fg_prep_src_keep_blocks(src));
  for (int k = 0; k < t->nkeys; k++) {
    shard_range(n, t->g, t->q, k, &r0, &r1, &c0, &c1);
    FG_CHECK(fg_prep_operator(src, r0, r1, c0, c1, 0, cfg->adj, &t->A[k]));
    nnz_row[k] = t->A[k].nnz;
    s->local_nnz += t->A[k].nnz;
  }
  for (int64_t j = 0; j < m->B; j++) fg_prep_src_drop_degrees(src, j); /* the last shard's */
  needed_slices(t->layers, need);
  for (int d = 0; d < 3; d++) {
    slo[d] = fg_block_start(n, t->g[d], t->q[d]);
    shi[d] = need[d][0] || need[d][1] ? fg_block_start(n, t->g[d], t->q[d] + 1) : slo[d];
  }
  feature_range(n, F, t->g, t->q, s->learn_features, &flo, &fhi, &f0, &f1);
  if (F == 0 || f1 == f0) fhi = flo; /* no feature column here: no file read whole for them */
  fg_layer_roles(t->layers, &a, &b, &c);
  llo = fg_block_start(n, t->g[a], t->q[a]);
  lhi = llo + s->n_local;
  if (t->input_grad) {
    ilo = fg_block_start(n, t->g[FG_DIM_X], t->q[FG_DIM_X]);
    ihi = fg_block_start(n, t->g[FG_DIM_X], t->q[FG_DIM_X] + 1);
  }
  if (T > 0) {
    s->num_tasks = T;
    s->targets = fg_malloc_array((size_t)FG_MAX(s->n_local * T, 1), 1);
    FG_REQUIRE(s->targets, FG_ERR_NOMEM, "out of memory for %lld x %lld targets",
               (long long)s->n_local, (long long)T);
  }
  for (int64_t i = 0; i < m->B; i++) maxrows = FG_MAX(maxrows, m->offs[i + 1] - m->offs[i]);
  FG_ALLOC(ids, FG_MAX(8 * maxrows, 1));
  FG_ALLOC(lab, FG_MAX(lw * maxrows, 1));
  FG_ALLOC(spl, FG_MAX(maxrows, 1));
  for (int64_t i = 0; i < m->B; i++) {
    const int64_t ib = m->offs[i], ie = m->offs[i + 1];
    int64_t sec[6], lo, hi, l2, h2;
    /* the file's rows each section is needed for: [xlo, xhi) ids, [ylo, yhi) labels, split */
    int64_t xlo = ie, xhi = ib, ylo = ie, yhi = ib;
    const unsigned char *pid, *plab, *pspl; /* row k of a section at p + (k - xb or yb) * w */
    int64_t xb = ib, yb = ib;
    for (int d = 0; d < 3; d++) {
      overlap(slo[d], shi[d], ib, ie, &lo, &hi);
      if (lo < hi) xlo = FG_MIN(xlo, lo), xhi = FG_MAX(xhi, hi);
    }
    overlap(llo, lhi, ib, ie, &lo, &hi);
    overlap(ilo, ihi, ib, ie, &l2, &h2);
    if (lo < hi) ylo = FG_MIN(ylo, lo), yhi = FG_MAX(yhi, hi);
    if (l2 < h2) ylo = FG_MIN(ylo, l2), yhi = FG_MAX(yhi, h2);
    overlap(flo, fhi, ib, ie, &lo, &hi);
    if (lo < hi) { /* its feature rows: the file whole */
      FG_CHECK(fg_prep_node_read(src, i, &buf, sec));
      for (int64_t k = lo; k < hi; k++)
        fg_scheme_feature_row(
            (const float *)(void *)(buf + sec[FG_PREP_SEC_FEAT]) + (k - ib) * F, F,
            cfg->normalize_features, f0, f1,
            s->features ? s->features + (k - flo) * (f1 - f0) : NULL,
            s->features16 ? s->features16 + (k - flo) * (f1 - f0) : NULL);
      pid = buf + sec[FG_PREP_SEC_INDEX];
      plab = buf + sec[FG_PREP_SEC_LABELS];
      pspl = buf + sec[FG_PREP_SEC_SPLIT];
    } else if (xlo < xhi || ylo < yhi) { /* only the rows of the sections it needs */
      FG_CHECK(fg_prep_node_section(src, i, FG_PREP_SEC_INDEX, xlo - ib, xhi - ib, ids));
      FG_CHECK(fg_prep_node_section(src, i, FG_PREP_SEC_LABELS, ylo - ib, yhi - ib, lab));
      FG_CHECK(fg_prep_node_section(src, i, FG_PREP_SEC_SPLIT, ylo - ib, yhi - ib, spl));
      pid = ids;
      plab = lab;
      pspl = spl;
      xb = xlo;
      yb = ylo;
    } else {
      continue;
    }
    for (int d = 0; d < 3; d++) { /* the ids: stored source indices, one order for both parities */
      overlap(slo[d], shi[d], ib, ie, &lo, &hi);
      for (int p = 0; p < 2 && lo < hi; p++)
        if (need[d][p])
          memcpy(t->gids[d][p] + (lo - slo[d]), pid + 8 * (lo - xb), (size_t)(8 * (hi - lo)));
    }
    overlap(llo, lhi, ib, ie, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
      s->split[k - llo] = (int8_t)pspl[k - yb];
      if (T > 0) {
        s->labels[k - llo] = -1;
        memcpy(s->targets + (k - llo) * T, plab + (k - yb) * T, (size_t)T);
      } else {
        memcpy(&s->labels[k - llo], plab + 4 * (k - yb), 4);
      }
    }
    overlap(ilo, ihi, ib, ie, &lo, &hi);
    for (int64_t k = lo; k < hi; k++) {
      s->in_split[k - ilo] = (int8_t)pspl[k - yb];
      s->in_labels[k - ilo] = -1;
      if (T == 0) memcpy(&s->in_labels[k - ilo], plab + 4 * (k - yb), 4);
    }
    free(buf);
    buf = NULL;
  }
cleanup:
  free(buf);
  free(ids);
  free(lab);
  free(spl);
  return st;
}

/* Transposes of the shards some layer multiplies backward (layers >= 1, and layer 0 when the
 * features are learned). */
static fg_status local_transposes(const fg_scheme *s, impl3d *t) {
  fg_status st = FG_OK;
  for (int k = 0; k < t->nkeys; k++) {
    int used = 0;
    for (int l = 0; l < t->layers && !used; l++)
      used = l % t->nkeys == k && (l > 0 || s->learn_features || t->input_grad);
    if (used) FG_CHECK(fg_csr_transpose(&t->A[k], &t->At[k]));
  }
cleanup:
  return st;
}

/* ---- the operations ------------------------------------------------------------------------ */

static void shape_3d(const fg_scheme *s, int l, const int64_t *widths, fg_layer_shape *o) {
  const impl3d *t = s->impl;
  const int64_t n = s->n_global;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  memset(o, 0, sizeof *o);
  o->n_in = fg_block_size(n, t->g[a], t->q[a]);
  o->n_out = fg_block_size(n, t->g[c], t->q[c]);
  o->w_in = fg_block_size(widths[l], t->g[b], t->q[b]);
  o->col0_in = fg_block_start(widths[l], t->g[b], t->q[b]);
  o->w_out = fg_block_size(widths[l + 1], t->g[a], t->q[a]);
  o->col0_out = fg_block_start(widths[l + 1], t->g[a], t->q[a]);
  o->ids_in = t->gids[a][l % 2];
  o->ids_out = t->gids[c][(l + 1) % 2];
  /* the input is replicated along c (the previous layer's b), the output along b */
  o->in_primary = t->q[c] == 0;
  o->out_primary = t->q[b] == 0;
  o->agg_primary = t->q[a] == 0; /* Â F is summed along a, and held by every rank of it */
  o->wp0 = fg_block_start(o->w_in * o->w_out, t->g[c], t->q[c]);
  o->wp_len = fg_block_size(o->w_in * o->w_out, t->g[c], t->q[c]);
  o->bp0 = fg_block_start(o->w_out, t->g[c], t->q[c]);
  o->bp_len = fg_block_size(o->w_out, t->g[c], t->q[c]);
  o->w_primary = 1;
  o->b_primary = t->q[b] == 0;
}

/* What spmm_allreduce multiplies and sends under --precision bf16 (at fp32 all three are one
 * fp32 SpMM and an fp32 all-reduce):
 *   AGG         an aggregation: the SpMM gathers the input rounded to bf16 (converted once per
 *               call, not once per block), and the partial sums are all-reduced in fp32 -- a
 *               reduction: rounding each rank's partial to bf16 before the sum would round twice
 *               where one process rounds once (at the next GEMM), and by how many partials
 *               there are, i.e. by the grid;
 *   MOVE_EXACT  an identity shard (rows moved, not summed) for a consumer that adds the rows in
 *               fp32 or runs an elementwise pass on them (GIN's (1 + eps) D, a residual, every
 *               backward move): fp32 SpMM and fp32 all-reduce, the rows bit for bit;
 *   MOVE_BF16   an identity shard for GEMM operands, which the GEMM rounds to bf16 anyway: the
 *               rows rounded once, moved as bf16 (2 bytes an element, fg_group_allmerge_u16:
 *               each row is nonzero on one rank of the group) and widened back -- the values the
 *               GEMM would read after an fp32 move. */
typedef enum { SPMM_AGG = 0, SPMM_MOVE_EXACT = 1, SPMM_MOVE_BF16 = 2 } spmm_mode;

/* t->wire16 grown to n elements. */
static fg_status wire16_reserve(impl3d *t, int64_t n) {
  fg_status st = FG_OK;
  if (n > t->wire16_cap) {
    uint16_t *grown = fg_malloc_huge((size_t)n * sizeof *grown);
    FG_REQUIRE(grown, FG_ERR_NOMEM, "3d: out of memory for %lld bf16 row elements",
               (long long)n);
    free(t->wire16);
    t->wire16 = grown;
    t->wire16_cap = n;
  }
cleanup:
  return st;
}

/* out (A->nrows x f) = A in, summed over the group of dimension dim, under `mode` (above); in
 * NULL: given16 holds the rows already as bf16 (aggregate16: SPMM_AGG), gathered as they are,
 * where under bf16 in would be rounded to them. With more than one block, each row block's
 * nonblocking all-reduce starts as soon as its SpMM is done (Plexus 5.2). The ranks of one group have the same rows and width, so they cut the same
 * blocks. Collective over the group. */
static fg_status spmm_allreduce(fg_scheme *s, const fg_csr *A, const float *in,
                                const fg_bf16 *given16, int64_t f, float *out, fg_bf16 *out16,
                                int dim, spmm_mode mode) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  fg_group *g = &t->grp[dim];
  const int64_t rows = A->nrows;
  const fg_bf16 *in16 = given16; /* the input rounded once, where the SpMM gathers bf16 */
  const int wire16 = s->bf16 && mode == SPMM_MOVE_BF16 && g->size > 1;
  /* out16 (SPMM_MOVE_BF16 only): the rows stay bf16, merged in place; out is not written */
  fg_bf16 *w16 = out16 ? out16 : t->wire16;
  MPI_Request *req = NULL;
  int nb = (int)FG_MIN((int64_t)t->agg_blocks, rows), posted = 0;
  if (f == 0 || rows == 0) return FG_OK;
  if (g->size == 1) nb = 1;
  FG_REQUIRE(in || (given16 && mode == SPMM_AGG), FG_ERR_INTERNAL,
             "3d: bf16 input rows are for aggregations only");
  if (in && s->bf16 && mode != SPMM_MOVE_EXACT)
    FG_CHECK(fg_scheme_rows_bf16(s, in, A->ncols * f, &in16));
  FG_REQUIRE(!out16 || (s->bf16 && mode == SPMM_MOVE_BF16), FG_ERR_INTERNAL,
             "3d: bf16 output is for bf16 moves only");
  if (wire16 && !out16) {
    FG_CHECK(wire16_reserve(t, rows * f));
    w16 = t->wire16;
  }
  FG_ALLOC(req, FG_MAX(nb, 1));
  for (int i = 0; i < nb; i++) {
    const int64_t r0 = fg_block_start(rows, nb, i), r1 = fg_block_start(rows, nb, i + 1);
    fg_csr V = *A;
    V.nrows = r1 - r0;
    V.nnz = A->rowptr[r1] - A->rowptr[r0];
    V.rowptr = A->rowptr + r0;
    if (out16) /* exact: a row of the identity's shard holds at most one 1 */
      fg_scheme_spmm_bf16_out(s, &V, in16, f, out16 + r0 * f);
    else if (in16)
      fg_scheme_spmm_bf16(s, &V, in16, f, out + r0 * f, 0);
    else
      FG_CHECK(fg_scheme_spmm_f32(s, &V, in, f, out + r0 * f, 0));
    if (wire16) { /* exact: the rows are bf16 values already */
      if (!out16) fg_bf16_from_f32(w16 + r0 * f, out + r0 * f, (r1 - r0) * f);
      FG_CHECK(fg_group_allmerge_u16(g, w16 + r0 * f, (r1 - r0) * f, nb > 1 ? &req[i] : NULL));
    } else if (out16) {
      /* one rank along dim: its rows are all there are */
    } else if (nb > 1) {
      FG_CHECK(fg_group_iallreduce_f32(g, out + r0 * f, (r1 - r0) * f, &req[i]));
    } else {
      FG_CHECK(fg_group_allreduce_f32(g, out, rows * f));
    }
    if (nb > 1) {
      posted++;
      FG_CHECK(fg_group_poke(g, req, posted));
    }
  }
  if (posted > 0) st = fg_group_waitall(g, req, posted);
  posted = 0;
  if (st == FG_OK && wire16 && !out16) fg_bf16_to_f32(out, t->wire16, rows * f);
cleanup:
  if (posted > 0) fg_group_waitall(g, req, posted);
  free(req);
  return st;
}

static fg_status aggregate_3d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return spmm_allreduce(s, &t->A[l % t->nkeys], in, NULL, f, out, NULL, a, SPMM_AGG);
}

/* a hidden stored as bf16: its rows gathered as they are, not widened first */
static fg_status aggregate16_3d(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return spmm_allreduce(s, &t->A[l % t->nkeys], NULL, in, f, out, NULL, a, SPMM_AGG);
}

static fg_status aggregate_t_3d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  FG_REQUIRE(t->At[l % t->nkeys].rowptr != NULL, FG_ERR_INTERNAL,
             "3d: layer %d's transposed shard was not built", l);
  st = spmm_allreduce(s, &t->At[l % t->nkeys], in, NULL, f, out, NULL, c, SPMM_AGG);
cleanup:
  return st;
}

static int cmp_id_pair(const void *x, const void *y) {
  const int64_t a = *(const int64_t *)x, b = *(const int64_t *)y;
  return (a > b) - (a < b);
}

/* The identity's shard of layer k: output row i (node block q[c] in pi[(k+1) % 2]) has a one
 * in the column of the same node in the input block q[a] in pi[k % 2], if it is there. */
static fg_status identity_shard(impl3d *t, int64_t n, int k, fg_csr *I) {
  fg_status st = FG_OK;
  int a, b, c;
  int64_t *sorted = NULL, nin, nout;
  const int64_t *in_ids, *out_ids;
  fg_layer_roles(k, &a, &b, &c);
  in_ids = t->gids[a][k % 2];
  out_ids = t->gids[c][(k + 1) % 2];
  nin = fg_block_size(n, t->g[a], t->q[a]);
  nout = fg_block_size(n, t->g[c], t->q[c]);
  memset(I, 0, sizeof *I);
  I->nrows = nout;
  I->ncols = nin;
  FG_ALLOC(I->rowptr, nout + 1);
  FG_ALLOC(I->col, FG_MAX(nout, 1));
  FG_ALLOC(sorted, FG_MAX(2 * nin, 1));
  /* (id, position) pairs of the input block sorted by id, then a binary search per row */
  for (int64_t j = 0; j < nin; j++) {
    sorted[2 * j] = in_ids[j];
    sorted[2 * j + 1] = j;
  }
  qsort(sorted, (size_t)nin, 2 * sizeof *sorted, cmp_id_pair);
  I->rowptr[0] = 0;
  for (int64_t i = 0; i < nout; i++) {
    int64_t lo = 0, hi = nin;
    while (lo < hi) {
      const int64_t mid = lo + (hi - lo) / 2;
      if (sorted[2 * mid] < out_ids[i]) lo = mid + 1;
      else hi = mid;
    }
    if (lo < nin && sorted[2 * lo] == out_ids[i]) I->col[I->nnz++] = (int32_t)sorted[2 * lo + 1];
    I->rowptr[i + 1] = I->nnz;
  }
cleanup:
  free(sorted);
  if (st != FG_OK) fg_csr_free(I);
  return st;
}

/* The identity's shards and their transposes, built on first use. */
static fg_status identity_shards(fg_scheme *s, impl3d *t) {
  fg_status st = FG_OK;
  if (!t->I) {
    t->I = fg_calloc_array((size_t)t->nkeys, sizeof *t->I);
    t->It = fg_calloc_array((size_t)t->nkeys, sizeof *t->It);
    st = t->I && t->It ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    for (int j = 0; j < t->nkeys && st == FG_OK; j++) {
      st = identity_shard(t, s->n_global, j, &t->I[j]);
      if (st == FG_OK) st = fg_csr_transpose(&t->I[j], &t->It[j]);
    }
  }
  return fg_dist_agree(s->dist, st);
}

/* Input-layout rows to the output layout through the identity's shard, summed along a (the
 * row is nonzero on the one rank of the a group whose input block holds the node). */
static fg_status move_rows_along_a(fg_scheme *s, int l, const float *in, float *out,
                                   fg_bf16 *out16, int64_t f, spmm_mode mode) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  FG_CHECK(identity_shards(s, t));
  st = spmm_allreduce(s, &t->I[l % t->nkeys], in, NULL, f, out, out16, a, mode);
cleanup:
  return st;
}

static fg_status move_rows_3d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  return move_rows_along_a(s, l, in, out, NULL, f, SPMM_MOVE_EXACT);
}

/* GEMM operands: bf16 on the wire (fg_scheme_move_rows_bf16 calls it under bf16 only). */
static fg_status move_rows_bf16_3d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  return move_rows_along_a(s, l, in, out, NULL, f, SPMM_MOVE_BF16);
}

/* The same rows left as bf16 (the model's M16): the identity's SpMM narrows into out, merged
 * there; no fp32 copy. */
static fg_status move_rows16_3d(fg_scheme *s, int l, const float *in, fg_bf16 *out, int64_t f) {
  return move_rows_along_a(s, l, in, NULL, out, f, SPMM_MOVE_BF16);
}

static fg_status move_rows_t_3d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  FG_CHECK(identity_shards(s, t));
  st = spmm_allreduce(s, &t->It[l % t->nkeys], in, NULL, f, out, NULL, c, SPMM_MOVE_EXACT);
cleanup:
  return st;
}

/* t->cnt, t->dsp: G pieces of `unit` elements times the balanced cut of n. */
static fg_status piece_counts(impl3d *t, int64_t n, int G, int64_t unit) {
  for (int r = 0; r < G; r++) t->len[r] = fg_block_size(n, G, r) * unit;
  return fg_group_counts(t->len, G, t->cnt, t->dsp, NULL);
}

/* The W and b pieces of layer l cut along c: W's piece r is the r-th balanced range of the
 * row-major block's elements, so the block is the pieces in rank order (likewise b). gather:
 * the pieces (src) all-gathered into the blocks (dst); else the blocks (src) reduce-scattered
 * into the pieces (dst). The mats matrices first, then the vecs vectors (b first). */
static fg_status weights_along_c(fg_scheme *s, int l, const fg_layer_shape *sh, int mats,
                                 int vecs, int scalars, int gather, const float *src,
                                 float *dst) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  int a, b, c;
  const int64_t nw = sh->w_in * sh->w_out;
  const int64_t sp = mats * sh->wp_len + vecs * sh->bp_len, sb = mats * nw + vecs * sh->w_out;
  fg_layer_roles(l, &a, &b, &c);
  for (int k = 0; k < mats + vecs; k++) {
    const int bias = k >= mats; /* a vector over the output's columns, cut like b */
    const int64_t piece_off = bias ? mats * sh->wp_len + (k - mats) * sh->bp_len : k * sh->wp_len;
    const int64_t block_off = bias ? mats * nw + (k - mats) * sh->w_out : k * nw;
    FG_CHECK(piece_counts(t, bias ? sh->w_out : nw, t->g[c], 1));
    if (gather)
      FG_CHECK(fg_group_allgather_f32(&t->grp[c], src + piece_off, dst + block_off, t->cnt,
                                      t->dsp));
    else
      FG_CHECK(fg_group_reduce_scatter_f32(&t->grp[c], src + block_off, dst + piece_off, t->cnt));
  }
  /* scalars: every rank holds them whole; their gradients are sums over every rank */
  if (scalars > 0 && gather) memcpy(dst + sb, src + sp, (size_t)scalars * sizeof(float));
  if (scalars > 0 && !gather) {
    memcpy(dst + sp, src + sb, (size_t)scalars * sizeof(float));
    FG_CHECK(fg_dist_allreduce_f32(s->dist, dst + sp, scalars));
  }
cleanup:
  return st;
}

static fg_status gather_weights_3d(fg_scheme *s, int l, const fg_layer_shape *sh, int mats,
                                   int vecs, int scalars, const float *piece, float *block) {
  return weights_along_c(s, l, sh, mats, vecs, scalars, 1, piece, block);
}

static fg_status reduce_weight_grads_3d(fg_scheme *s, int l, const fg_layer_shape *sh, int mats,
                                        int vecs, int scalars, const float *block, float *piece) {
  return weights_along_c(s, l, sh, mats, vecs, scalars, 0, block, piece);
}

static fg_status reduce_product_3d(fg_scheme *s, int l, float *buf, int64_t n) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return fg_group_allreduce_f32(&t->grp[b], buf, n);
}

static fg_status reduce_input_grad_3d(fg_scheme *s, int l, float *buf, int64_t n) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return fg_group_allreduce_f32(&t->grp[a], buf, n);
}

/* layer l's output columns are cut along its a */
static fg_group *output_column_group(fg_scheme *s, int l) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return &t->grp[a];
}

static fg_status row_max_3d(fg_scheme *s, int l, fg_maxloc *buf, int64_t n) {
  return fg_group_maxloc(output_column_group(s, l), buf, n);
}

static fg_status row_sum_3d(fg_scheme *s, int l, double *buf, int64_t n) {
  return fg_group_allreduce_f64(output_column_group(s, l), buf, n);
}

/* Layer l's output rows are node block q[c] (its columns block q[a], the same rows and columns
 * replicated along b): the other rows lie along c, and summing along b too would count each row
 * G_b times. */
static fg_status col_sum_3d(fg_scheme *s, int l, double *buf, int64_t n) {
  impl3d *t = s->impl;
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  return fg_group_allreduce_f64(&t->grp[c], buf, n);
}

/* Learned features: the X block's rows cut along Z, each rank owning its piece. */
static fg_status feature_counts(const fg_scheme *s) {
  impl3d *t = s->impl;
  const int64_t n0 = fg_block_size(s->n_global, t->g[FG_DIM_X], t->q[FG_DIM_X]);
  return piece_counts(t, n0, t->g[FG_DIM_Z], t->feat_cols);
}

static fg_status gather_input_3d(fg_scheme *s, const float *piece, float *input) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  FG_CHECK(feature_counts(s));
  FG_CHECK(fg_group_allgather_f32(&t->grp[FG_DIM_Z], piece, input, t->cnt, t->dsp));
cleanup:
  return st;
}

static fg_status input_grad_3d(fg_scheme *s, const float *dh, float *scratch, float *piece_grad) {
  fg_status st = FG_OK;
  impl3d *t = s->impl;
  const fg_csr *At = &t->At[0];
  FG_CHECK(feature_counts(s));
  if (t->feat_cols > 0 && At->nrows > 0)
    FG_CHECK(fg_scheme_spmm(s, At, dh, t->feat_cols, scratch, 0));
  FG_CHECK(fg_group_reduce_scatter_f32(&t->grp[FG_DIM_Z], scratch, piece_grad, t->cnt));
cleanup:
  return st;
}

static void destroy_3d(fg_scheme *s) {
  impl3d *t = s->impl;
  for (int d = 0; d < 3; d++) fg_group_free(&t->grp[d]);
  for (int k = 0; k < t->nkeys; k++) {
    if (t->A) fg_csr_free(&t->A[k]);
    if (t->At) fg_csr_free(&t->At[k]);
    if (t->I) fg_csr_free(&t->I[k]);
    if (t->It) fg_csr_free(&t->It[k]);
  }
  free(t->A);
  free(t->At);
  free(t->I);
  free(t->It);
  free(t->len);
  free(t->cnt);
  free(t->dsp);
  free(t->wire16);
  for (int d = 0; d < 3; d++)
    for (int p = 0; p < 2; p++) free(t->gids[d][p]);
}

static const fg_scheme_ops ops_3d = {
    .name = "3d",
    .shape = shape_3d,
    .aggregate = aggregate_3d,
    .aggregate16 = aggregate16_3d,
    .aggregate_t = aggregate_t_3d,
    .move_rows = move_rows_3d,
    .move_rows_t = move_rows_t_3d,
    .move_rows_bf16 = move_rows_bf16_3d,
    .move_rows16 = move_rows16_3d,
    .gather_weights = gather_weights_3d,
    .reduce_product = reduce_product_3d,
    .reduce_input_grad = reduce_input_grad_3d,
    .reduce_weight_grads = reduce_weight_grads_3d,
    .row_max = row_max_3d,
    .row_sum = row_sum_3d,
    .col_sum = col_sum_3d,
    .gather_input = gather_input_3d,
    .input_grad = input_grad_3d,
    .agg_last_ok = 0,
    .destroy = destroy_3d,
};

const fg_csr *fg_scheme_3d_shard(const fg_scheme *s, int k, int transposed) {
  const impl3d *t;
  if (!s || s->ops != &ops_3d) return NULL;
  t = s->impl;
  if (k < 0 || k >= t->nkeys) return NULL;
  return transposed ? &t->At[k] : &t->A[k];
}

const int64_t *fg_scheme_3d_ids(const fg_scheme *s, int d, int parity) {
  if (!s || s->ops != &ops_3d || d < 0 || d > 2 || parity < 0 || parity > 1) return NULL;
  return ((const impl3d *)s->impl)->gids[d][parity];
}

/* ---- creation ------------------------------------------------------------------------------ */

fg_status fg_scheme_3d_create(fg_dist *d, const fg_dataset *ds, const fg_scheme_config *sc,
                              fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl3d *t = NULL;
  root_data r;
  fg_perm_kind perm = FG_PERM_NONE;
  int64_t hdr[3] = {0, 0, 0}; /* n, F, C */
  int64_t *nnz_all = NULL;
  const int P = d->size, me = d->rank;
  int nkeys;
  char *pdir = NULL; /* a prepared directory every rank reads its own pieces of */
  fg_prep_manifest pm;
  fg_prep_src src;
  memset(&r, 0, sizeof r);
  memset(&pm, 0, sizeof pm);
  memset(&src, 0, sizeof src);
  *out = NULL;

  /* 1. arguments, then rank 0 prepares everything that can fail (per rank: every rank reads
   * the manifest and checks what it can read, before any block) */
  FG_CHECK(fg_prep_dir_share(d, ds, &pdir));
  st = pdir ? FG_OK : fg_perm_kind_from(sc->order, sc->double_perm, &perm);
  if (st == FG_OK && ((int64_t)sc->grid[0] * sc->grid[1] * sc->grid[2] != P || sc->grid[0] < 1 ||
                      sc->grid[1] < 1 || sc->grid[2] < 1))
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--grid %dx%dx%d has %lld ranks, but the job has %d", sc->grid[0],
                      sc->grid[1], sc->grid[2],
                      (long long)sc->grid[0] * sc->grid[1] * sc->grid[2], P);
  if (st == FG_OK && (sc->layers < 1 || sc->agg_blocks < 1))
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "3d: %d layers and %d aggregation blocks; both must be >= 1", sc->layers,
                      sc->agg_blocks);
  if (st == FG_OK && pdir) {
    st = fg_prep_manifest_read(pdir, &pm);
    if (st == FG_OK) st = fg_prep_check_3d(&pm, pdir, sc->grid, sc->double_perm, sc->order);
    if (st == FG_OK && pm.n > INT32_MAX)
      st = fg_error_set(FG_ERR_UNSUPPORTED, __FILE__, __LINE__,
                        "3d: %lld nodes exceed 32-bit column ids", (long long)pm.n);
    hdr[0] = pm.n;
    hdr[1] = pm.F;
    hdr[2] = pm.C;
  }
  nkeys = nkeys_of(sc->layers, perm);
  if (st == FG_OK && !(nnz_all = fg_calloc_array((size_t)P * (size_t)nkeys, sizeof *nnz_all)))
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "3d: out of memory");
  if (st == FG_OK && me == 0 && !pdir) {
    if (!ds)
      st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "3d: no dataset on rank 0");
    else
      st = root_prepare(ds, sc, perm, P, nkeys, nnz_all, &r);
    if (st == FG_OK) {
      hdr[0] = ds->num_nodes;
      hdr[1] = ds->num_features;
      hdr[2] = ds->num_classes;
    }
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 2. sizes to everyone; everyone allocates */
  FG_CHECK(fg_dist_bcast(d, hdr, sizeof hdr, 0));
  if (!pdir) FG_CHECK(fg_dist_bcast(d, nnz_all, (int64_t)P * nkeys * 8, 0));
  FG_CHECK(fg_scheme_new(d, &ops_3d, sizeof *t, &s));
  t = s->impl;
  for (int dd = 0; dd < 3; dd++) t->grp[dd].comm = MPI_COMM_NULL; /* before anything can fail */
  memcpy(t->g, sc->grid, sizeof t->g);
  fg_grid_coords(t->g, me, t->q);
  t->layers = sc->layers;
  t->perm = perm;
  t->nkeys = nkeys;
  t->agg_blocks = sc->agg_blocks;
  t->input_grad = sc->input_grad;
  s->learn_features = sc->learn_features;
  s->n_global = hdr[0];
  s->num_features = hdr[1];
  s->num_classes = hdr[2];
  st = local_alloc(s, t, pdir ? NULL : nnz_all + (int64_t)me * nkeys, sc->features16);
  FG_CHECK(fg_dist_agree(d, st));

  /* 3. rank 0 sends every rank its pieces, in rank order; or every rank reads its own */
  if (pdir) {
    st = fg_prep_src_open(&src, pdir, &pm);
    if (st == FG_OK) st = prep_read_3d(&src, sc, s, t, nnz_all + (int64_t)me * nkeys);
    FG_CHECK(fg_dist_agree(d, st));
    FG_CHECK(fg_dist_allreduce_i64(d, nnz_all, (int64_t)P * nkeys)); /* the others' rows were 0 */
    {
      char what[96];
      snprintf(what, sizeof what, "%lld x %lld blocks, grid %dx%dx%d", (long long)pm.B,
               (long long)pm.B, t->g[0], t->g[1], t->g[2]);
      FG_CHECK(fg_prep_report(d, sc->verbose ? sc->log : NULL, pdir, &pm, what, src.bytes,
                              src.deg_peak));
    }
    fg_prep_src_close(&src);
  } else if (me == 0) {
    for (int rk = 0; rk < P && st == FG_OK; rk++) st = deliver_3d(d, ds, &r, sc, rk, s, t);
  } else {
    st = deliver_3d(d, ds, &r, sc, me, s, t);
  }
  root_free(&r);
  FG_CHECK(fg_dist_agree(d, st));
  st = local_transposes(s, t);
  if (st == FG_OK) {
    /* the logit rows' ids: node block q[a_L] in pi[L % 2] */
    int a, b, c;
    fg_layer_roles(t->layers, &a, &b, &c);
    s->global_ids = fg_malloc_array((size_t)FG_MAX(s->n_local, 1), sizeof *s->global_ids);
    if (!s->global_ids)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    else if (s->n_local > 0)
      memcpy(s->global_ids, t->gids[a][t->layers % 2], (size_t)s->n_local * sizeof(int64_t));
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 4. one group per dimension: the ranks sharing the other two coordinates */
  for (int dd = 0; dd < 3; dd++) {
    const int o1 = (dd + 1) % 3, o2 = (dd + 2) % 3;
    FG_CHECK(fg_group_split(d, t->q[o1] * t->g[o2] + t->q[o2], t->q[dd], &t->grp[dd]));
  }
  {
    int64_t mx = 0, tot = 0;
    for (int64_t i = 0; i < (int64_t)P * nkeys; i++) {
      mx = FG_MAX(mx, nnz_all[i]);
      tot += nnz_all[i];
    }
    char order[64];
    if (pdir)
      snprintf(order, sizeof order, "the prepared order (%s, read per rank)", pm.order);
    else
      snprintf(order, sizeof order, "%s permutation", fg_perm_kind_name(perm));
    snprintf(s->note, sizeof s->note,
             "grid %dx%dx%d, %s, %d distinct adjacency shard(s) per rank, "
             "agg-blocks %d%s; largest shard %lld nonzeros, mean %.1f (max/mean %.3f)",
             t->g[0], t->g[1], t->g[2], order, nkeys, t->agg_blocks,
             s->learn_features ? ", learned features" : "", (long long)mx,
             (double)tot / ((double)P * nkeys),
             tot > 0 ? (double)mx * P * nkeys / (double)tot : 1.0);
  }
  *out = s;
  s = NULL;
cleanup:
  root_free(&r);
  fg_prep_src_close(&src);
  fg_prep_manifest_free(&pm);
  free(pdir);
  free(nnz_all);
  fg_scheme_destroy(&s);
  return st;
}
