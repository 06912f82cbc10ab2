/* scheme_3d.c -- the 3D (Plexus) layout: grids, permutations, adjacency shards, and the
 * distribution of every rank's shards and feature block from rank 0. See fg_scheme3d.h. */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "core/fg_rng.h"
#include "graph/fg_order.h"
#include "schemes/fg_scheme3d.h"

#define FG_TAG_3D 7301

static const char *const dim_names[3] = {"X", "Y", "Z"};

/* ---- grids ---------------------------------------------------------------------------------- */

fg_status fg_grid_parse(const char *s, int P, int g[3]) {
  fg_status st = FG_OK;
  const char *p = s;
  FG_REQUIRE(s != NULL, FG_ERR_INVALID_ARG, "--grid: no value");
  for (int d = 0; d < 3; d++) {
    long v = 0;
    int digits = 0;
    while (*p >= '0' && *p <= '9' && v <= INT_MAX / 10) {
      v = v * 10 + (*p - '0');
      p++;
      digits++;
    }
    FG_REQUIRE(digits > 0 && v >= 1 && v <= 1 << 20, FG_ERR_INVALID_ARG,
               "--grid '%s': expected XxYxZ with three positive integers, like 2x2x1", s);
    g[d] = (int)v;
    if (d < 2) {
      FG_REQUIRE(*p == 'x', FG_ERR_INVALID_ARG,
                 "--grid '%s': expected XxYxZ with three positive integers, like 2x2x1", s);
      p++;
    }
  }
  FG_REQUIRE(*p == '\0', FG_ERR_INVALID_ARG,
             "--grid '%s': unexpected '%s' after XxYxZ", s, p);
  FG_REQUIRE(P <= 0 || (int64_t)g[0] * g[1] * g[2] == P, FG_ERR_INVALID_ARG,
             "--grid %dx%dx%d has %lld ranks, but the job has %d", g[0], g[1], g[2],
             (long long)g[0] * g[1] * g[2], P);
cleanup:
  return st;
}

int fg_grid_enumerate(int P, int (*out)[3], int max) {
  int n = 0;
  for (int x = 1; x <= P; x++) {
    if (P % x) continue;
    for (int y = 1; y <= P / x; y++) {
      if ((P / x) % y) continue;
      if (n < max) {
        out[n][0] = x;
        out[n][1] = y;
        out[n][2] = P / x / y;
      }
      n++;
    }
  }
  return n;
}

/* ---- permutations --------------------------------------------------------------------------- */

fg_status fg_perm_kind_from(const char *order, int double_perm, fg_perm_kind *out) {
  fg_status st = FG_OK;
  if (double_perm) {
    FG_REQUIRE(!order || strcmp(order, "natural") == 0 || strcmp(order, "random") == 0,
               FG_ERR_INVALID_ARG,
               "--double-perm draws its own random permutations; it does not combine with "
               "--order %s", order);
    *out = FG_PERM_DOUBLE;
  } else if (!order || strcmp(order, "natural") == 0) {
    *out = FG_PERM_NONE;
  } else if (strcmp(order, "random") == 0) {
    *out = FG_PERM_SINGLE;
  } else {
    FG_FAIL(FG_ERR_INVALID_ARG,
            "--scheme 3d: --order %s is not available (3d shards the adjacency matrix in 2D: "
            "use natural, random, or --double-perm)", order);
  }
cleanup:
  return st;
}

const char *fg_perm_kind_name(fg_perm_kind k) {
  return k == FG_PERM_NONE ? "no" : k == FG_PERM_SINGLE ? "single" : "double";
}

static void random_perm(int64_t n, uint64_t seed, uint64_t round, int64_t *perm) {
  for (int64_t k = 0; k < n; k++) perm[k] = k;
  for (int64_t i = n - 1; i > 0; i--) {
    const uint64_t j = fg_rng_u64(seed, FG_RNG_PERMUTE, (uint64_t)i, round, 0, 0) %
                       (uint64_t)(i + 1);
    const int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
}

void fg_perm3d_build(int64_t n, fg_perm_kind kind, uint64_t seed, int64_t *pi0, int64_t *pi1) {
  if (kind == FG_PERM_NONE) {
    for (int64_t k = 0; k < n; k++) pi0[k] = pi1[k] = k;
  } else if (kind == FG_PERM_SINGLE) {
    random_perm(n, seed, 0, pi0);
    memcpy(pi1, pi0, (size_t)n * sizeof *pi1);
  } else {
    random_perm(n, seed, 0, pi1); /* P_r: rows of layer 0 */
    random_perm(n, seed, 1, pi0); /* P_c: columns of layer 0, the input order */
  }
}

fg_status fg_block_nnz(const fg_csr *M, int gr, int gc, int64_t *cnt) {
  fg_status st = FG_OK;
  FG_REQUIRE(gr >= 1 && gc >= 1, FG_ERR_INVALID_ARG, "shards: %d x %d blocks", gr, gc);
  memset(cnt, 0, (size_t)gr * (size_t)gc * sizeof *cnt);
  for (int i = 0; i < gr; i++) {
    int64_t *row = cnt + (int64_t)i * gc;
    for (int64_t u = fg_block_start(M->nrows, gr, i); u < fg_block_start(M->nrows, gr, i + 1);
         u++)
      for (int64_t k = M->rowptr[u]; k < M->rowptr[u + 1]; k++)
        row[fg_block_of(M->ncols, gc, M->col[k])]++;
  }
cleanup:
  return st;
}

/* max / mean of the block counts of M */
static fg_status block_ratio(const fg_csr *M, int gr, int gc, double *out) {
  fg_status st = FG_OK;
  int64_t *cnt = NULL, mx = 0, tot = 0;
  FG_ALLOC(cnt, (int64_t)gr * gc);
  FG_CHECK(fg_block_nnz(M, gr, gc, cnt));
  for (int64_t i = 0; i < (int64_t)gr * gc; i++) {
    mx = FG_MAX(mx, cnt[i]);
    tot += cnt[i];
  }
  *out = tot > 0 ? (double)mx / ((double)tot / ((double)gr * gc)) : 1.0;
cleanup:
  free(cnt);
  return st;
}

fg_status fg_shard_balance_compute(const fg_csr *A, int gr, int gc, uint64_t seed, double out[3]) {
  fg_status st = FG_OK;
  int64_t *p0 = NULL, *p1 = NULL, *inv0 = NULL, *inv1 = NULL;
  fg_csr M;
  const int64_t n = A->nrows;
  double r0 = 0.0, r1 = 0.0;
  memset(&M, 0, sizeof M);
  FG_REQUIRE(A->nrows == A->ncols, FG_ERR_INVALID_ARG, "shards: matrix is %lld x %lld",
             (long long)A->nrows, (long long)A->ncols);
  FG_ALLOC(p0, n > 0 ? n : 1);
  FG_ALLOC(p1, n > 0 ? n : 1);
  FG_ALLOC(inv0, n > 0 ? n : 1);
  FG_ALLOC(inv1, n > 0 ? n : 1);
  FG_CHECK(block_ratio(A, gr, gc, &out[0]));
  fg_perm3d_build(n, FG_PERM_SINGLE, seed, p0, p1);
  fg_order_invert(p0, n, inv0);
  FG_CHECK(fg_csr_permute(A, p0, inv0, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &out[1]));
  fg_csr_free(&M);
  fg_perm3d_build(n, FG_PERM_DOUBLE, seed, p0, p1);
  fg_order_invert(p0, n, inv0);
  fg_order_invert(p1, n, inv1);
  /* layer 0: rows in pi1 = P_r, columns in pi0 = P_c; layer 1 the other way round */
  FG_CHECK(fg_csr_permute(A, p1, inv0, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &r0));
  fg_csr_free(&M);
  FG_CHECK(fg_csr_permute(A, p0, inv1, &M));
  FG_CHECK(block_ratio(&M, gr, gc, &r1));
  out[2] = FG_MAX(r0, r1);
cleanup:
  fg_csr_free(&M);
  free(p0);
  free(p1);
  free(inv0);
  free(inv1);
  return st;
}

fg_status fg_shard_balance(const fg_dataset *ds, int rows, int cols, uint64_t seed,
                           double out[3]) {
  fg_status st = FG_OK;
  FG_REQUIRE(ds && out, FG_ERR_INVALID_ARG, "fg_shard_balance: NULL argument");
  FG_REQUIRE(rows >= 1 && cols >= 1 && rows <= 1 << 16 && cols <= 1 << 16, FG_ERR_INVALID_ARG,
             "--shards %dx%d: both counts must be in [1, 65536]", rows, cols);
  FG_CHECK(fg_shard_balance_compute(&ds->adj, rows, cols, seed, out));
cleanup:
  return st;
}

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

/* Lower bound of v in the sorted cols[lo, hi). */
static int64_t lower_bound(const int32_t *cols, int64_t lo, int64_t hi, int64_t v) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (cols[mid] < v)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

/* Count (cnt_only) or copy block [r0, r1) x [c0, c1) of M into out (preallocated; columns
 * relative to c0). Returns the nonzeros. */
static int64_t extract_block(const fg_csr *M, int64_t r0, int64_t r1, int64_t c0, int64_t c1,
                             fg_csr *out) {
  int64_t nnz = 0;
  if (out) out->rowptr[0] = 0;
  for (int64_t u = r0; u < r1; u++) {
    const int64_t k0 = lower_bound(M->col, M->rowptr[u], M->rowptr[u + 1], c0);
    const int64_t k1 = lower_bound(M->col, k0, M->rowptr[u + 1], c1);
    if (out) {
      for (int64_t k = k0; k < k1; k++) {
        out->col[nnz + k - k0] = (int32_t)(M->col[k] - c0);
        out->val[nnz + k - k0] = M->val[k];
      }
      out->rowptr[u - r0 + 1] = nnz + (k1 - k0);
    }
    nnz += k1 - k0;
  }
  return nnz;
}

/* ---- point to point in chunks (setup phase) ----------------------------------------------------- */


/* ---- the layout ----------------------------------------------------------------------------- */

void fg_layout3d_destroy(fg_layout3d **tp) {
  fg_layout3d *t;
  if (!tp || !*tp) return;
  t = *tp;
  for (int d = 0; d < 3; d++)
    if (t->comm[d] != MPI_COMM_NULL) MPI_Comm_free(&t->comm[d]);
  if (t->A)
    for (int k = 0; k < t->nkeys; k++) fg_csr_free(&t->A[k]);
  if (t->At)
    for (int k = 0; k < t->nkeys; k++) fg_csr_free(&t->At[k]);
  free(t->A);
  free(t->At);
  for (int d = 0; d < 3; d++)
    for (int p = 0; p < 2; p++) free(t->gids[d][p]);
  free(t->features);
  free(t->labels);
  free(t->split);
  free(t);
  *tp = NULL;
}

/* Rank 0's prepared data: the layer matrices and permutations. */
typedef struct root_data {
  int64_t *pi[2];
  fg_csr N;        /* Â normalized in the original numbering */
  fg_csr M[2];     /* M[q]: rows in pi[1-q], columns in pi[q] (M[1] unused unless double) */
  int64_t *nnz;    /* (P x nkeys) */
  fg_csr pack;     /* a shard to send */
  float *featbuf;  /* a feature piece */
  int32_t *labbuf;
  int8_t *splitbuf;
} root_data;

static void root_free(root_data *r) {
  free(r->pi[0]);
  free(r->pi[1]);
  fg_csr_free(&r->N);
  fg_csr_free(&r->M[0]);
  fg_csr_free(&r->M[1]);
  free(r->nnz);
  fg_csr_free(&r->pack);
  free(r->featbuf);
  free(r->labbuf);
  free(r->splitbuf);
  memset(r, 0, sizeof *r);
}

static const fg_csr *root_matrix(const root_data *r, fg_perm_kind perm, int k) {
  return perm == FG_PERM_DOUBLE ? &r->M[k % 2] : &r->M[0];
}

/* Rank 0: everything that can fail, before anything is sent. */
static fg_status root_prepare(const fg_dataset *ds, const fg_layout3d_config *cfg, int P,
                              int nkeys, root_data *r) {
  fg_status st = FG_OK;
  int64_t *inv0 = NULL, *inv1 = NULL;
  const int64_t n = ds->num_nodes, F = ds->num_features;
  int64_t max_rows = 0, max_nnz = 0, max_feat = 0, max_out = 0;
  int need[3][2];
  FG_REQUIRE(ds->adj.nrows == n && ds->adj.ncols == n, FG_ERR_INVALID_ARG,
             "dataset: adjacency is %lld x %lld for %lld nodes", (long long)ds->adj.nrows,
             (long long)ds->adj.ncols, (long long)n);
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "3d: %lld nodes exceed 32-bit column ids",
             (long long)n);
  FG_ALLOC(r->pi[0], n > 0 ? n : 1);
  FG_ALLOC(r->pi[1], n > 0 ? n : 1);
  FG_ALLOC(inv0, n > 0 ? n : 1);
  FG_ALLOC(inv1, n > 0 ? n : 1);
  fg_perm3d_build(n, cfg->perm, cfg->seed, r->pi[0], r->pi[1]);
  fg_order_invert(r->pi[0], n, inv0);
  fg_order_invert(r->pi[1], n, inv1);
  /* the serial scheme's normalization, on the whole pattern, before any permutation */
  r->N.nrows = r->N.ncols = n;
  r->N.nnz = ds->adj.nnz;
  FG_ALLOC(r->N.rowptr, n + 1);
  FG_ALLOC(r->N.col, ds->adj.nnz > 0 ? ds->adj.nnz : 1);
  memcpy(r->N.rowptr, ds->adj.rowptr, (size_t)(n + 1) * sizeof *r->N.rowptr);
  if (ds->adj.nnz) memcpy(r->N.col, ds->adj.col, (size_t)ds->adj.nnz * sizeof *r->N.col);
  FG_CHECK(fg_gcn_normalize(&r->N));
  if (cfg->perm == FG_PERM_NONE) {
    r->M[0] = r->N;
    memset(&r->N, 0, sizeof r->N);
  } else {
    /* M[0]: rows in pi[1], columns in pi[0] */
    FG_CHECK(fg_csr_permute(&r->N, r->pi[1], inv0, &r->M[0]));
    if (cfg->perm == FG_PERM_DOUBLE) FG_CHECK(fg_csr_permute(&r->N, r->pi[0], inv1, &r->M[1]));
    fg_csr_free(&r->N);
  }
  /* every rank's shard sizes, and the largest pieces to pack */
  FG_ALLOC(r->nnz, (int64_t)P * nkeys);
  needed_slices(cfg->layers, need);
  for (int rk = 0; rk < P; rk++) {
    int q[3];
    int64_t r0, r1, c0, c1, f0, f1;
    int a, b, c;
    fg_grid_coords(cfg->grid, rk, q);
    for (int k = 0; k < nkeys; k++) {
      shard_range(n, cfg->grid, q, k, &r0, &r1, &c0, &c1);
      r->nnz[(int64_t)rk * nkeys + k] =
          extract_block(root_matrix(r, cfg->perm, k), r0, r1, c0, c1, NULL);
      max_rows = FG_MAX(max_rows, r1 - r0);
      max_nnz = FG_MAX(max_nnz, r->nnz[(int64_t)rk * nkeys + k]);
    }
    feature_range(n, F, cfg->grid, q, cfg->learn_features, &r0, &r1, &f0, &f1);
    max_feat = FG_MAX(max_feat, (r1 - r0) * (f1 - f0));
    fg_layer_roles(cfg->layers, &a, &b, &c);
    max_out = FG_MAX(max_out, fg_block_size(n, cfg->grid[a], q[a]));
  }
  r->pack.nrows = max_rows;
  FG_ALLOC(r->pack.rowptr, max_rows + 1);
  FG_ALLOC(r->pack.col, max_nnz > 0 ? max_nnz : 1);
  FG_ALLOC(r->pack.val, max_nnz > 0 ? max_nnz : 1);
  FG_ALLOC(r->featbuf, max_feat > 0 ? max_feat : 1);
  FG_ALLOC(r->labbuf, max_out > 0 ? max_out : 1);
  FG_ALLOC(r->splitbuf, max_out > 0 ? max_out : 1);
cleanup:
  free(inv0);
  free(inv1);
  return st;
}

/* Rank 0: the feature piece of rank q into featbuf (row-normalized over the whole row first
 * when asked, exactly as fg_row_normalize does). */
static void pack_features(const fg_dataset *ds, const root_data *r, const fg_layout3d_config *cfg,
                          const int q[3], int64_t *rows, int64_t *cols) {
  int64_t r0, r1, f0, f1;
  const int64_t F = ds->num_features;
  feature_range(ds->num_nodes, F, cfg->grid, q, cfg->learn_features, &r0, &r1, &f0, &f1);
  for (int64_t k = r0; k < r1; k++) {
    const float *row = ds->features + r->pi[0][k] * F; // (F)
    float *o = r->featbuf + (k - r0) * (f1 - f0);      // (f1 - f0)
    double s = 0.0;
    if (cfg->normalize_features)
      for (int64_t j = 0; j < F; j++) s += (double)row[j];
    for (int64_t j = f0; j < f1; j++)
      o[j - f0] = (cfg->normalize_features && s != 0.0) ? (float)((double)row[j] / s) : row[j];
  }
  *rows = r1 - r0;
  *cols = f1 - f0;
}

/* Rank 0: labels and split of the logit rows of rank q. */
static int64_t pack_labels(const fg_dataset *ds, const root_data *r,
                           const fg_layout3d_config *cfg, const int q[3]) {
  int a, b, c;
  const int L = cfg->layers;
  fg_layer_roles(L, &a, &b, &c);
  const int64_t s0 = fg_block_start(ds->num_nodes, cfg->grid[a], q[a]);
  const int64_t len = fg_block_size(ds->num_nodes, cfg->grid[a], q[a]);
  for (int64_t i = 0; i < len; i++) {
    const int64_t v = r->pi[L % 2][s0 + i];
    r->labbuf[i] = ds->labels ? ds->labels[v] : -1;
    r->splitbuf[i] = ds->split ? ds->split[v] : (int8_t)FG_SPLIT_NONE;
  }
  return len;
}

/* Allocate what rank q receives (sizes from the geometry and its row of the nnz table). */
static fg_status local_alloc(fg_layout3d *t, const int64_t *nnz_row) {
  fg_status st = FG_OK;
  int need[3][2];
  int64_t r0, r1, c0, c1, f0, f1;
  int a, b, c;
  FG_CALLOC(t->A, t->nkeys);
  FG_CALLOC(t->At, t->nkeys);
  for (int k = 0; k < t->nkeys; k++) {
    fg_csr *A = &t->A[k];
    shard_range(t->n_global, t->g, t->q, k, &r0, &r1, &c0, &c1);
    A->nrows = r1 - r0;
    A->ncols = c1 - c0;
    A->nnz = nnz_row[k];
    FG_ALLOC(A->rowptr, A->nrows + 1);
    FG_ALLOC(A->col, A->nnz > 0 ? A->nnz : 1);
    FG_ALLOC(A->val, A->nnz > 0 ? A->nnz : 1);
    t->local_nnz += A->nnz;
  }
  needed_slices(t->layers, need);
  for (int d = 0; d < 3; d++) {
    for (int p = 0; p < 2; p++) {
      if (!need[d][p]) continue;
      t->slice_len[d][p] = fg_block_size(t->n_global, t->g[d], t->q[d]);
      FG_ALLOC(t->gids[d][p], t->slice_len[d][p] > 0 ? t->slice_len[d][p] : 1);
    }
  }
  feature_range(t->n_global, t->num_features, t->g, t->q, t->learn_features, &r0, &r1, &f0,
                &f1);
  t->feat_row0 = r0 - fg_block_start(t->n_global, t->g[FG_DIM_X], t->q[FG_DIM_X]);
  t->feat_rows = r1 - r0;
  t->feat_col0 = f0;
  t->feat_cols = f1 - f0;
  FG_ALLOC(t->features, t->feat_rows * t->feat_cols > 0 ? t->feat_rows * t->feat_cols : 1);
  fg_layer_roles(t->layers, &a, &b, &c);
  t->out_rows = fg_block_size(t->n_global, t->g[a], t->q[a]);
  FG_ALLOC(t->labels, t->out_rows > 0 ? t->out_rows : 1);
  FG_ALLOC(t->split, t->out_rows > 0 ? t->out_rows : 1);
cleanup:
  return st;
}

/* Rank 0: send rank rk (coords q) its pieces, or copy them into t when rk == 0. */
static fg_status root_deliver(fg_dist *d, const fg_dataset *ds, root_data *r,
                              const fg_layout3d_config *cfg, int nkeys, int rk, fg_layout3d *t) {
  fg_status st = FG_OK;
  int q[3], need[3][2];
  int64_t r0, r1, c0, c1, rows, cols, len;
  const int64_t n = ds->num_nodes;
  fg_grid_coords(cfg->grid, rk, q);
  for (int k = 0; k < nkeys; k++) {
    fg_csr *dst = rk == 0 ? &t->A[k] : &r->pack;
    int64_t nnz;
    shard_range(n, cfg->grid, q, k, &r0, &r1, &c0, &c1);
    nnz = extract_block(root_matrix(r, cfg->perm, k), r0, r1, c0, c1, dst);
    if (rk != 0) {
      FG_CHECK(fg_dist_send_bytes(d, dst->rowptr, (r1 - r0 + 1) * 8, rk, FG_TAG_3D));
      FG_CHECK(fg_dist_send_bytes(d, dst->col, nnz * 4, rk, FG_TAG_3D));
      FG_CHECK(fg_dist_send_bytes(d, dst->val, nnz * 4, rk, FG_TAG_3D));
    }
  }
  needed_slices(cfg->layers, need);
  for (int dd = 0; dd < 3; dd++) {
    for (int p = 0; p < 2; p++) {
      if (!need[dd][p]) continue;
      r0 = fg_block_start(n, cfg->grid[dd], q[dd]);
      len = fg_block_size(n, cfg->grid[dd], q[dd]);
      if (rk == 0)
        memcpy(t->gids[dd][p], r->pi[p] + r0, (size_t)len * sizeof(int64_t));
      else
        FG_CHECK(fg_dist_send_bytes(d, r->pi[p] + r0, len * 8, rk, FG_TAG_3D));
    }
  }
  pack_features(ds, r, cfg, q, &rows, &cols);
  if (rk == 0)
    memcpy(t->features, r->featbuf, (size_t)(rows * cols) * sizeof(float));
  else
    FG_CHECK(fg_dist_send_bytes(d, r->featbuf, rows * cols * 4, rk, FG_TAG_3D));
  len = pack_labels(ds, r, cfg, q);
  if (rk == 0) {
    memcpy(t->labels, r->labbuf, (size_t)len * sizeof(int32_t));
    memcpy(t->split, r->splitbuf, (size_t)len);
  } else {
    FG_CHECK(fg_dist_send_bytes(d, r->labbuf, len * 4, rk, FG_TAG_3D));
    FG_CHECK(fg_dist_send_bytes(d, r->splitbuf, len, rk, FG_TAG_3D));
  }
cleanup:
  return st;
}

/* Every rank but 0: receive in the order root_deliver sends. */
static fg_status local_receive(fg_dist *d, fg_layout3d *t) {
  fg_status st = FG_OK;
  for (int k = 0; k < t->nkeys; k++) {
    fg_csr *A = &t->A[k];
    FG_CHECK(fg_dist_recv_bytes(d, A->rowptr, (A->nrows + 1) * 8, 0, FG_TAG_3D));
    FG_CHECK(fg_dist_recv_bytes(d, A->col, A->nnz * 4, 0, FG_TAG_3D));
    FG_CHECK(fg_dist_recv_bytes(d, A->val, A->nnz * 4, 0, FG_TAG_3D));
  }
  for (int dd = 0; dd < 3; dd++)
    for (int p = 0; p < 2; p++)
      if (t->gids[dd][p]) FG_CHECK(fg_dist_recv_bytes(d, t->gids[dd][p], t->slice_len[dd][p] * 8, 0, FG_TAG_3D));
  FG_CHECK(fg_dist_recv_bytes(d, t->features, t->feat_rows * t->feat_cols * 4, 0, FG_TAG_3D));
  FG_CHECK(fg_dist_recv_bytes(d, t->labels, t->out_rows * 4, 0, FG_TAG_3D));
  FG_CHECK(fg_dist_recv_bytes(d, t->split, t->out_rows, 0, FG_TAG_3D));
cleanup:
  return st;
}

/* Transposes of the shards some layer multiplies backward (layers >= 1, and layer 0 when the
 * features are learned). */
static fg_status local_transposes(fg_layout3d *t) {
  fg_status st = FG_OK;
  for (int k = 0; k < t->nkeys; k++) {
    int used = 0;
    for (int l = 0; l < t->layers && !used; l++)
      used = fg_layout3d_key(t, l) == k && (l > 0 || t->learn_features);
    if (used) FG_CHECK(fg_csr_transpose(&t->A[k], &t->At[k]));
  }
cleanup:
  return st;
}

fg_status fg_layout3d_create(fg_dist *d, const fg_dataset *ds, const fg_layout3d_config *cfg,
                             fg_layout3d **out) {
  fg_status st = FG_OK;
  fg_layout3d *t = NULL;
  root_data r;
  int64_t hdr[4] = {0, 0, 0, 0}; /* n, F, C, ok */
  int64_t *nnz_all = NULL;
  const int P = d->size, me = d->rank;
  int nkeys;
  memset(&r, 0, sizeof r);
  *out = NULL;

  /* 1. arguments, then rank 0 prepares everything that can fail */
  if ((int64_t)cfg->grid[0] * cfg->grid[1] * cfg->grid[2] != P || cfg->layers < 1) {
    st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                      "--grid %dx%dx%d has %lld ranks, but the job has %d", cfg->grid[0],
                      cfg->grid[1], cfg->grid[2],
                      (long long)cfg->grid[0] * cfg->grid[1] * cfg->grid[2], P);
  }
  nkeys = nkeys_of(cfg->layers, cfg->perm);
  if (st == FG_OK && me == 0) {
    if (!ds)
      st = fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__, "3d: no dataset on rank 0");
    else
      st = root_prepare(ds, cfg, P, nkeys, &r);
    if (st == FG_OK) {
      hdr[0] = ds->num_nodes;
      hdr[1] = ds->num_features;
      hdr[2] = ds->num_classes;
    }
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 2. sizes to everyone; everyone allocates */
  FG_CHECK(fg_dist_bcast(d, hdr, sizeof hdr, 0));
  st = FG_OK;
  nnz_all = fg_malloc_array((size_t)P * (size_t)nkeys, sizeof *nnz_all);
  if (!nnz_all) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  FG_CHECK(fg_dist_agree(d, st));
  if (me == 0) memcpy(nnz_all, r.nnz, (size_t)P * (size_t)nkeys * sizeof *nnz_all);
  FG_CHECK(fg_dist_bcast(d, nnz_all, (int64_t)P * nkeys * 8, 0));
  t = fg_calloc_array(1, sizeof *t);
  if (!t) {
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  } else {
    for (int dd = 0; dd < 3; dd++) t->comm[dd] = MPI_COMM_NULL;
    t->dist = d;
    memcpy(t->g, cfg->grid, sizeof t->g);
    fg_grid_coords(t->g, me, t->q);
    t->layers = cfg->layers;
    t->perm = cfg->perm;
    t->learn_features = cfg->learn_features;
    t->n_global = hdr[0];
    t->num_features = hdr[1];
    t->num_classes = hdr[2];
    t->nkeys = nkeys;
    st = local_alloc(t, nnz_all + (int64_t)me * nkeys);
  }
  FG_CHECK(fg_dist_agree(d, st));

  /* 3. rank 0 sends every rank its pieces, in rank order */
  if (me == 0) {
    for (int rk = 0; rk < P && st == FG_OK; rk++) st = root_deliver(d, ds, &r, cfg, nkeys, rk, t);
  } else {
    st = local_receive(d, t);
  }
  root_free(&r);
  FG_CHECK(fg_dist_agree(d, st));
  st = local_transposes(t);
  FG_CHECK(fg_dist_agree(d, st));

  /* 4. one communicator per dimension: the ranks sharing the other two coordinates */
  for (int dd = 0; dd < 3; dd++) {
    const int o1 = (dd + 1) % 3, o2 = (dd + 2) % 3;
    const int color = t->q[o1] * t->g[o2] + t->q[o2];
    FG_CHECK_MPI(MPI_Comm_split(d->comm, color, t->q[dd], &t->comm[dd]));
    FG_CHECK_MPI(MPI_Comm_set_errhandler(t->comm[dd], MPI_ERRORS_RETURN));
  }
  if (cfg->verbose && me == 0) {
    int64_t mx = 0, tot = 0;
    for (int64_t i = 0; i < (int64_t)P * nkeys; i++) {
      mx = FG_MAX(mx, nnz_all[i]);
      tot += nnz_all[i];
    }
    printf("3d layout: grid %s=%d %s=%d %s=%d, %s permutation, %d distinct adjacency shard(s) "
           "per rank; largest shard %lld nonzeros, mean %.1f (max/mean %.3f)\n",
           dim_names[0], t->g[0], dim_names[1], t->g[1], dim_names[2], t->g[2],
           fg_perm_kind_name(cfg->perm), nkeys, (long long)mx, (double)tot / ((double)P * nkeys),
           tot > 0 ? (double)mx * P * nkeys / (double)tot : 1.0);
  }
  *out = t;
  t = NULL;
cleanup:
  root_free(&r);
  free(nnz_all);
  fg_layout3d_destroy(&t);
  return st;
}
