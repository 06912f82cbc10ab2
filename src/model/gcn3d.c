/* gcn3d.c -- the GCN on the 3D (Plexus) layout. See fg_model3d.h for the algorithm. */
#include <limits.h>
#include <math.h>
#include <string.h>

#include "core/fg_rng.h"
#include "model/fg_model3d.h"

/* one (value, index) pair per row for MPI_MAXLOC over MPI_FLOAT_INT */
typedef struct fg_float_int {
  float val;
  int idx;
} fg_float_int;

/* ---- geometry ------------------------------------------------------------------------------- */

void fg_layer3d_geom_compute(const int64_t *widths, int64_t n, const int g[3], const int q[3],
                             int l, int nkeys, fg_layer3d_geom *o) {
  int a, b, c;
  fg_layer_roles(l, &a, &b, &c);
  o->a = a;
  o->b = b;
  o->c = c;
  o->key = l % nkeys;
  o->parity = l % 2;
  o->n_in = fg_block_size(n, g[a], q[a]);
  o->n_out = fg_block_size(n, g[c], q[c]);
  o->w_in = fg_block_size(widths[l], g[b], q[b]);
  o->col0_in = fg_block_start(widths[l], g[b], q[b]);
  o->w_out = fg_block_size(widths[l + 1], g[a], q[a]);
  o->col0_out = fg_block_start(widths[l + 1], g[a], q[a]);
  o->wp0 = fg_block_start(o->w_in * o->w_out, g[c], q[c]);
  o->wp_len = fg_block_size(o->w_in * o->w_out, g[c], q[c]);
  o->bp0 = fg_block_start(o->w_out, g[c], q[c]);
  o->bp_len = fg_block_size(o->w_out, g[c], q[c]);
}

/* Offsets of W_l and b_l in the serial parameter layout. */
static void serial_offsets(const int64_t *w, int L, int64_t *woff, int64_t *boff) {
  int64_t off = 0;
  for (int l = 0; l < L; l++) {
    woff[l] = off;
    off += w[l] * w[l + 1];
    boff[l] = off;
    off += w[l + 1];
  }
}

/* ---- counted collectives on the grid's sub-communicators ------------------------------------- */

static fg_status c3_allreduce(fg_dist *d, MPI_Comm comm, int G, float *buf, int64_t n) {
  fg_status st = FG_OK;
  int cnt = 0;
  double t0;
  if (G == 1 || n == 0) return FG_OK;
  FG_CHECK(fg_mpi_count(n, &cnt));
  t0 = fg_now();
  FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, buf, cnt, MPI_FLOAT, MPI_SUM, comm));
  d->counters.seconds_comm += fg_now() - t0;
  {
    const int64_t bytes = 2 * n * 4 * (G - 1) / G; /* a ring all-reduce */
    fg_dist_count_send(d, bytes);
    fg_dist_count_recv(d, bytes);
  }
cleanup:
  return st;
}

/* all-gather pieces (counts[r] floats at displs[r]) along comm; total floats in all */
static fg_status c3_allgather(fg_dist *d, MPI_Comm comm, int G, int me, const float *mine,
                              float *all, const int *counts, const int *displs, int64_t total) {
  fg_status st = FG_OK;
  double t0;
  if (G == 1) {
    if (counts[0] > 0 && all != mine) memcpy(all, mine, (size_t)counts[0] * sizeof(float));
    return FG_OK;
  }
  if (total == 0) return FG_OK;
  t0 = fg_now();
  FG_CHECK_MPI(MPI_Allgatherv(mine, counts[me], MPI_FLOAT, all, counts, displs, MPI_FLOAT, comm));
  d->counters.seconds_comm += fg_now() - t0;
  fg_dist_count_send(d, (total - counts[me]) * 4);
  fg_dist_count_recv(d, (total - counts[me]) * 4);
cleanup:
  return st;
}

/* reduce-scatter: all (sum of counts) summed over comm, piece me into mine */
static fg_status c3_reduce_scatter(fg_dist *d, MPI_Comm comm, int G, int me, const float *all,
                                   float *mine, const int *counts, int64_t total) {
  fg_status st = FG_OK;
  double t0;
  if (G == 1) {
    if (counts[0] > 0) memcpy(mine, all, (size_t)counts[0] * sizeof(float));
    return FG_OK;
  }
  if (total == 0) return FG_OK;
  t0 = fg_now();
  FG_CHECK_MPI(MPI_Reduce_scatter(all, mine, counts, MPI_FLOAT, MPI_SUM, comm));
  d->counters.seconds_comm += fg_now() - t0;
  fg_dist_count_send(d, (total - counts[me]) * 4);
  fg_dist_count_recv(d, (total - counts[me]) * 4);
cleanup:
  return st;
}

/* ---- local pieces ------------------------------------------------------------------------- */

/* Inverted dropout on a column block starting at global column col0: the serial kernel's masks
 * (element (v, j) kept when field j % 4 of the draw (seed, epoch, layer, v, j / 4) passes). */
static void dropout_cols(float *out, const float *in, int64_t rows, int64_t cols, float p,
                         uint64_t seed, uint64_t epoch, uint64_t layer, const int64_t *gids,
                         int64_t col0) {
  if (rows <= 0 || cols <= 0) return;
  if (p == 0.0f) {
    if (out != in) memcpy(out, in, (size_t)(rows * cols) * sizeof *out);
    return;
  }
  const float scale = 1.0f / (1.0f - p);
  const uint32_t thr = fg_dropout_threshold(p);
  for (int64_t r = 0; r < rows; r++) {
    const uint64_t key = fg_dropout_row_key(seed, epoch, layer, (uint64_t)gids[r]);
    const float *x = in + r * cols; // (cols)
    float *o = out + r * cols;      // (cols)
    uint64_t h = 0;
    for (int64_t c = 0; c < cols; c++) {
      const uint64_t j = (uint64_t)(col0 + c);
      if (c == 0 || (j & 3) == 0) h = fg_rng_last(key, j >> 2);
      o[c] = ((h >> (16 * (j & 3))) & 0xffffu) >= thr ? x[c] * scale : 0.0f;
    }
  }
}

static void timed_gemm(fg_gcn3d *m, int ta, int tb, int64_t M, int64_t N, int64_t K,
                       const float *A, int64_t lda, const float *B, int64_t ldb, float *C,
                       int64_t ldc) {
  double t0 = fg_now();
  fg_gemm(ta, tb, M, N, K, 1.0f, A, lda, B, ldb, 0.0f, C, ldc);
  m->seconds[FG_TIME_GEMM] += fg_now() - t0;
}

static void timed_spmm(fg_layout3d *t, const fg_csr *A, const float *in, int64_t f, float *out) {
  double t0 = fg_now();
  fg_spmm(A, in, f, out, f, f);
  t->seconds_spmm += fg_now() - t0;
  t->spmm_bytes += (double)A->nnz * 8.0 + (double)A->nnz * (double)f * 4.0 +
                   (double)A->nrows * (double)f * 4.0;
}

/* out (A->nrows x f) = A in, summed over the ranks of dimension dim. With more than one block,
 * each row block's nonblocking all-reduce starts as soon as its SpMM is done (Plexus 5.2). The
 * ranks of one group have the same rows and width, so they cut the same blocks. */
static fg_status spmm_allreduce(fg_gcn3d *m, fg_layout3d *t, const fg_csr *A, const float *in,
                                int64_t f, float *out, int dim) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  const int G = t->g[dim];
  const int64_t rows = A->nrows;
  MPI_Request *req = NULL;
  int nb = (int)FG_MIN((int64_t)m->agg_blocks, rows), posted = 0;
  if (f == 0 || rows == 0) return FG_OK;
  if (G == 1 || nb <= 1) {
    timed_spmm(t, A, in, f, out);
    FG_CHECK(c3_allreduce(d, t->comm[dim], G, out, rows * f));
    return FG_OK;
  }
  FG_ALLOC(req, nb);
  for (int i = 0; i < nb; i++) {
    const int64_t r0 = fg_block_start(rows, nb, i), r1 = fg_block_start(rows, nb, i + 1);
    fg_csr V;
    int cnt = 0, flag = 0;
    double t0;
    V.nrows = r1 - r0;
    V.ncols = A->ncols;
    V.nnz = A->rowptr[r1] - A->rowptr[r0];
    V.rowptr = A->rowptr + r0;
    V.col = A->col;
    V.val = A->val;
    timed_spmm(t, &V, in, f, out + r0 * f);
    FG_CHECK(fg_mpi_count((r1 - r0) * f, &cnt));
    t0 = fg_now();
    FG_CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, out + r0 * f, cnt, MPI_FLOAT, MPI_SUM,
                                t->comm[dim], &req[i]));
    posted++;
    /* Open MPI moves a nonblocking collective only inside MPI calls: poke it */
    FG_CHECK_MPI(MPI_Testall(posted, req, &flag, MPI_STATUSES_IGNORE));
    d->counters.seconds_comm += fg_now() - t0;
    {
      const int64_t bytes = 2 * (r1 - r0) * f * 4 * (G - 1) / G;
      fg_dist_count_send(d, bytes);
      fg_dist_count_recv(d, bytes);
    }
  }
  {
    double t0 = fg_now(), dt;
    FG_CHECK_MPI(MPI_Waitall(posted, req, MPI_STATUSES_IGNORE));
    posted = 0;
    dt = fg_now() - t0;
    d->counters.seconds_comm += dt;
    d->counters.seconds_wait += dt;
    m->seconds_wait += dt;
  }
cleanup:
  if (posted > 0) MPI_Waitall(posted, req, MPI_STATUSES_IGNORE);
  free(req);
  return st;
}

/* ---- creation ----------------------------------------------------------------------------- */

void fg_gcn3d_destroy(fg_gcn3d **mp) {
  fg_gcn3d *m;
  if (!mp || !*mp) return;
  m = *mp;
  for (int l = 0; l < m->layers; l++) {
    if (m->Wblk) fg_free_aligned(m->Wblk[l]);
    if (m->bblk) fg_free_aligned(m->bblk[l]);
    if (m->H) fg_free_aligned(m->H[l]);
    if (m->out) fg_free_aligned(m->out[l]);
  }
  free(m->Wblk);
  free(m->bblk);
  free(m->H);
  free(m->out);
  free(m->widths);
  free(m->geom);
  free(m->poff);
  free(m->dw_reversed);
  fg_free_aligned(m->params);
  fg_free_aligned(m->grads);
  fg_free_aligned(m->adam_m);
  fg_free_aligned(m->adam_v);
  if (m->feat_off >= 0) fg_free_aligned(m->fin0); /* otherwise the layout's features */
  fg_free_aligned(m->drop);
  fg_free_aligned(m->pack);
  fg_free_aligned(m->dw);
  fg_free_aligned(m->dwt);
  fg_free_aligned(m->db);
  fg_free_aligned(m->dh);
  fg_free_aligned(m->g_a);
  fg_free_aligned(m->g_b);
  fg_free_aligned(m->dlogits);
  free(m);
  *mp = NULL;
}

static float *alloc_floats(int64_t n) {
  return fg_malloc_aligned((size_t)(n > 0 ? n : 1) * sizeof(float));
}

#define FG_ALLOC_F(ptr, n)                                                             \
  do {                                                                                 \
    (ptr) = alloc_floats(n);                                                           \
    if (!(ptr)) FG_FAIL(FG_ERR_NOMEM, "out of memory allocating %lld floats", (long long)(n)); \
  } while (0)

/* Time Hᵀ dQ against (dQᵀ H)ᵀ on each layer's shapes; all ranks take the choice that is
 * faster summed over the grid. Collective. */
static fg_status decide_dw_order(fg_gcn3d *m, fg_layout3d *t, int order) {
  fg_status st = FG_OK;
  double *diff = NULL;
  const int L = m->layers;
  FG_CALLOC(diff, L);
  for (int l = 0; l < L; l++) {
    const fg_layer3d_geom *g = &m->geom[l];
    double best[2] = {1e30, 1e30};
    if (order != 0 || g->w_in == 0 || g->w_out == 0 || g->n_out == 0) continue;
    for (int64_t i = 0; i < g->n_out * g->w_in; i++) m->H[l][i] = 0.5f;
    for (int64_t i = 0; i < g->n_out * g->w_out; i++) m->out[l][i] = 0.25f;
    for (int rep = 0; rep < 4; rep++) {
      for (int form = 0; form < 2; form++) {
        double t0 = fg_now();
        if (form == 0)
          fg_gemm(1, 0, g->w_in, g->w_out, g->n_out, 1.0f, m->H[l], g->w_in, m->out[l], g->w_out,
                  0.0f, m->dw, g->w_out);
        else
          fg_gemm(1, 0, g->w_out, g->w_in, g->n_out, 1.0f, m->out[l], g->w_out, m->H[l], g->w_in,
                  0.0f, m->dwt, g->w_in);
        if (rep > 0) best[form] = FG_MIN(best[form], fg_now() - t0);
      }
    }
    diff[l] = best[1] - best[0];
  }
  if (order == 0) FG_CHECK(fg_dist_allreduce_f64(t->dist, diff, L));
  for (int l = 0; l < L; l++) m->dw_reversed[l] = order == 2 || (order == 0 && diff[l] < 0.0);
cleanup:
  free(diff);
  return st;
}

static fg_status gcn3d_alloc(const fg_gcn3d_config *cfg, fg_layout3d *t, fg_gcn3d *m) {
  fg_status st = FG_OK;
  const int L = cfg->layers;
  int64_t max_in = 0, max_pack = 0, max_w = 0, max_dh = 0, max_g = 0, max_wout = 0;
  FG_REQUIRE(L == t->layers, FG_ERR_INTERNAL, "3d: model has %d layers, layout %d", L, t->layers);
  FG_REQUIRE(cfg->agg_blocks >= 1, FG_ERR_INVALID_ARG, "--agg-blocks must be >= 1, got %d",
             cfg->agg_blocks);
  m->layers = L;
  m->seed = cfg->seed;
  m->agg_blocks = cfg->agg_blocks;
  m->feat_off = -1;
  FG_ALLOC(m->widths, L + 1);
  for (int l = 0; l <= L; l++) {
    FG_REQUIRE(cfg->widths[l] >= 1, FG_ERR_INVALID_ARG, "layer width %d is %lld; must be >= 1",
               l, (long long)cfg->widths[l]);
    m->widths[l] = cfg->widths[l];
  }
  FG_REQUIRE(m->widths[0] == t->num_features, FG_ERR_INTERNAL, "3d: input width mismatch");
  FG_CALLOC(m->geom, L);
  FG_CALLOC(m->poff, L);
  FG_CALLOC(m->dw_reversed, L);
  FG_CALLOC(m->Wblk, L);
  FG_CALLOC(m->bblk, L);
  FG_CALLOC(m->H, L);
  FG_CALLOC(m->out, L);
  for (int l = 0; l < L; l++) {
    fg_layer3d_geom *g = &m->geom[l];
    fg_layer3d_geom_compute(m->widths, t->n_global, t->g, t->q, l, t->nkeys, g);
    m->poff[l] = m->n_params;
    m->n_params += g->wp_len + g->bp_len;
    m->n_params_global += m->widths[l] * m->widths[l + 1] + m->widths[l + 1];
    max_in = FG_MAX(max_in, g->n_in * g->w_in);
    max_pack = FG_MAX(max_pack, g->w_in * g->w_out + g->w_out);
    max_w = FG_MAX(max_w, g->w_in * g->w_out);
    max_dh = FG_MAX(max_dh, g->n_out * g->w_in);
    max_g = FG_MAX(max_g, FG_MAX(g->n_in * g->w_in, g->n_out * g->w_out));
    max_wout = FG_MAX(max_wout, g->w_out);
    FG_ALLOC_F(m->Wblk[l], g->w_in * g->w_out);
    FG_ALLOC_F(m->bblk[l], g->w_out);
    FG_ALLOC_F(m->H[l], g->n_out * g->w_in);
    FG_ALLOC_F(m->out[l], g->n_out * g->w_out);
  }
  if (t->learn_features) {
    m->feat_off = m->n_params;
    m->n_params += t->feat_rows * t->feat_cols;
    FG_ALLOC_F(m->fin0, m->geom[0].n_in * m->geom[0].w_in);
  } else {
    m->fin0 = t->features; /* the whole (X block x Y block): nothing to gather */
  }
  FG_ALLOC_F(m->params, m->n_params);
  FG_ALLOC_F(m->grads, m->n_params);
  FG_ALLOC_F(m->adam_m, m->n_params);
  FG_ALLOC_F(m->adam_v, m->n_params);
  memset(m->grads, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_m, 0, (size_t)m->n_params * sizeof(float));
  memset(m->adam_v, 0, (size_t)m->n_params * sizeof(float));
  FG_ALLOC_F(m->drop, max_in);
  FG_ALLOC_F(m->pack, FG_MAX(max_pack, max_wout));
  FG_ALLOC_F(m->dw, max_w);
  FG_ALLOC_F(m->dwt, max_w);
  FG_ALLOC_F(m->db, max_wout);
  FG_ALLOC_F(m->dh, max_dh);
  FG_ALLOC_F(m->g_a, max_g);
  FG_ALLOC_F(m->g_b, max_g);
  FG_ALLOC_F(m->dlogits, m->geom[L - 1].n_out * m->geom[L - 1].w_out);
  /* Glorot pieces: element (i, j) of W_l is the serial model's draw (seed, layer, i, j) */
  for (int l = 0; l < L; l++) {
    const fg_layer3d_geom *g = &m->geom[l];
    const double lim = sqrt(6.0 / (double)(m->widths[l] + m->widths[l + 1]));
    float *w = m->params + m->poff[l];
    for (int64_t k = 0; k < g->wp_len; k++) {
      const int64_t e = g->wp0 + k, i = g->col0_in + e / g->w_out, j = g->col0_out + e % g->w_out;
      const double u = fg_rng_uniform_d(cfg->seed, FG_RNG_INIT, (uint64_t)l, (uint64_t)i,
                                        (uint64_t)j, 0);
      w[k] = (float)((2.0 * u - 1.0) * lim);
    }
    memset(w + g->wp_len, 0, (size_t)g->bp_len * sizeof(float));
  }
  if (t->learn_features && t->feat_rows * t->feat_cols > 0)
    memcpy(m->params + m->feat_off, t->features,
           (size_t)(t->feat_rows * t->feat_cols) * sizeof(float));
cleanup:
  return st;
}

fg_status fg_gcn3d_create(const fg_gcn3d_config *cfg, fg_layout3d *t, fg_gcn3d **out) {
  fg_status st = FG_OK;
  fg_gcn3d *m = NULL;
  *out = NULL;
  m = fg_calloc_array(1, sizeof *m);
  if (!m)
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  else
    st = gcn3d_alloc(cfg, t, m);
  FG_CHECK(fg_dist_agree(t->dist, st));
  FG_CHECK(decide_dw_order(m, t, cfg->dw_order));
  *out = m;
  m = NULL;
cleanup:
  fg_gcn3d_destroy(&m);
  return st;
}

/* ---- parameter pieces along c ------------------------------------------------------------- */

/* counts / displacements of the packed [W piece | b piece] of every rank of layer l's c group */
static fg_status piece_counts(const fg_gcn3d *m, const fg_layout3d *t, int l, int *counts,
                              int *displs, int64_t *total) {
  fg_status st = FG_OK;
  const fg_layer3d_geom *g = &m->geom[l];
  const int G = t->g[g->c];
  const int64_t nw = g->w_in * g->w_out;
  int64_t off = 0;
  for (int r = 0; r < G; r++) {
    const int64_t len = fg_block_size(nw, G, r) + fg_block_size(g->w_out, G, r);
    FG_CHECK(fg_mpi_count(len, &counts[r]));
    FG_CHECK(fg_mpi_count(off, &displs[r]));
    off += len;
  }
  *total = off;
cleanup:
  return st;
}

/* Every layer's W and b blocks from the pieces along c. Collective. */
static fg_status gather_weights(fg_gcn3d *m, fg_layout3d *t) {
  fg_status st = FG_OK;
  int *counts = NULL, *displs = NULL;
  FG_ALLOC(counts, 3 * t->dist->size + 3);
  FG_ALLOC(displs, 3 * t->dist->size + 3);
  for (int l = 0; l < m->layers; l++) {
    const fg_layer3d_geom *g = &m->geom[l];
    const int G = t->g[g->c];
    const int64_t nw = g->w_in * g->w_out;
    int64_t total = 0;
    FG_CHECK(piece_counts(m, t, l, counts, displs, &total));
    FG_CHECK(c3_allgather(t->dist, t->comm[g->c], G, t->q[g->c], m->params + m->poff[l],
                          m->pack, counts, displs, total));
    for (int r = 0; r < G; r++) {
      const int64_t wl = fg_block_size(nw, G, r), bl = fg_block_size(g->w_out, G, r);
      if (wl) memcpy(m->Wblk[l] + fg_block_start(nw, G, r), m->pack + displs[r], (size_t)wl * 4);
      if (bl)
        memcpy(m->bblk[l] + fg_block_start(g->w_out, G, r), m->pack + displs[r] + wl,
               (size_t)bl * 4);
    }
  }
cleanup:
  free(counts);
  free(displs);
  return st;
}

/* Learned features: the (X block x Y block) input from the pieces along Z. Collective. */
static fg_status gather_features(fg_gcn3d *m, fg_layout3d *t) {
  fg_status st = FG_OK;
  int *counts = NULL, *displs = NULL;
  const fg_layer3d_geom *g = &m->geom[0];
  const int G = t->g[FG_DIM_Z];
  FG_ALLOC(counts, G);
  FG_ALLOC(displs, G);
  for (int r = 0; r < G; r++) {
    FG_CHECK(fg_mpi_count(fg_block_size(g->n_in, G, r) * g->w_in, &counts[r]));
    FG_CHECK(fg_mpi_count(fg_block_start(g->n_in, G, r) * g->w_in, &displs[r]));
  }
  FG_CHECK(c3_allgather(t->dist, t->comm[FG_DIM_Z], G, t->q[FG_DIM_Z], m->params + m->feat_off,
                        m->fin0, counts, displs, g->n_in * g->w_in));
cleanup:
  free(counts);
  free(displs);
  return st;
}

/* ---- forward -------------------------------------------------------------------------------- */

fg_status fg_gcn3d_forward(fg_gcn3d *m, fg_layout3d *t, int training, float p, uint64_t seed,
                           uint64_t epoch) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  const int drop = training && p > 0.0f;
  FG_CHECK(gather_weights(m, t));
  if (m->feat_off >= 0) FG_CHECK(gather_features(m, t));
  for (int l = 0; l < m->layers; l++) {
    const fg_layer3d_geom *g = &m->geom[l];
    const float *in = l ? m->out[l - 1] : m->fin0; /* (n_in, w_in) */
    const float *D = in;
    float *out = m->out[l];                         /* (n_out, w_out) */
    double t0 = fg_now();
    if (drop) {
      dropout_cols(m->drop, in, g->n_in, g->w_in, p, seed, epoch, (uint64_t)l,
                   t->gids[g->a][g->parity], g->col0_in);
      D = m->drop;
    }
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    /* H = Â_l D, summed along a */
    FG_CHECK(spmm_allreduce(m, t, &t->A[g->key], D, g->w_in, m->H[l], g->a));
    /* Q = H W_l, summed along b */
    timed_gemm(m, 0, 0, g->n_out, g->w_out, g->w_in, m->H[l], g->w_in, m->Wblk[l], g->w_out, out,
               g->w_out);
    FG_CHECK(c3_allreduce(d, t->comm[g->b], t->g[g->b], out, g->n_out * g->w_out));
    t0 = fg_now();
    fg_bias_add(out, m->bblk[l], g->n_out, g->w_out);
    if (l + 1 < m->layers) fg_relu_forward(out, out, g->n_out * g->w_out);
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
  }
cleanup:
  return st;
}

/* ---- loss ----------------------------------------------------------------------------------- */

/* Row maxima with their argmax (ties to the lowest column), and the sums of exp(z - max), over
 * the logit columns of the a group of the last layer. Collective. */
static fg_status softmax_stats(fg_gcn3d *m, fg_layout3d *t, fg_float_int *mx, double *sum) {
  fg_status st = FG_OK;
  const fg_layer3d_geom *g = &m->geom[m->layers - 1];
  const int64_t n = g->n_out, w = g->w_out;
  const float *z = m->out[m->layers - 1];
  const int G = t->g[g->a];
  fg_dist *d = t->dist;
  int cnt = 0;
  FG_CHECK(fg_mpi_count(n, &cnt));
  for (int64_t r = 0; r < n; r++) {
    const float *row = z + r * w; // (w)
    fg_float_int best = {-INFINITY, INT_MAX};
    for (int64_t c = 0; c < w; c++)
      if (c == 0 || row[c] > best.val) { /* strict: ties to the lowest column */
        best.val = row[c];
        best.idx = (int)(g->col0_out + c);
      }
    mx[r] = best;
  }
  if (G > 1 && n > 0) {
    double t0 = fg_now();
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, mx, cnt, MPI_FLOAT_INT, MPI_MAXLOC, t->comm[g->a]));
    d->counters.seconds_comm += fg_now() - t0;
    fg_dist_count_send(d, 2 * n * 8 * (G - 1) / G);
    fg_dist_count_recv(d, 2 * n * 8 * (G - 1) / G);
  }
  for (int64_t r = 0; r < n; r++) {
    const float *row = z + r * w; // (w)
    const double base = (double)mx[r].val;
    double s = 0.0;
    for (int64_t c = 0; c < w; c++) s += exp((double)row[c] - base);
    sum[r] = s;
  }
  if (G > 1 && n > 0) {
    double t0 = fg_now();
    FG_CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, sum, cnt, MPI_DOUBLE, MPI_SUM, t->comm[g->a]));
    d->counters.seconds_comm += fg_now() - t0;
    fg_dist_count_send(d, 2 * n * 8 * (G - 1) / G);
    fg_dist_count_recv(d, 2 * n * 8 * (G - 1) / G);
  }
cleanup:
  return st;
}

fg_status fg_gcn3d_loss(fg_gcn3d *m, fg_layout3d *t, float scale, double *loss_sum,
                        int64_t *count, int64_t *correct) {
  fg_status st = FG_OK;
  const fg_layer3d_geom *g = &m->geom[m->layers - 1];
  const int64_t n = g->n_out, w = g->w_out;
  const float *z = m->out[m->layers - 1];
  const int counts_here = t->q[g->b] == 0; /* one replica of the rows counts them */
  fg_float_int *mx = NULL;
  double *sum = NULL, acc[3] = {0.0, 0.0, 0.0};
  FG_ALLOC(mx, n > 0 ? n : 1);
  FG_ALLOC(sum, n > 0 ? n : 1);
  FG_CHECK(softmax_stats(m, t, mx, sum));
  for (int64_t r = 0; r < n; r++) {
    const int32_t y = t->labels[r];
    const float *row = z + r * w;       // (w)
    float *dz = m->dlogits + r * w;     // (w)
    const int sel = t->split[r] == FG_SPLIT_TRAIN && y >= 0;
    if (!sel) {
      memset(dz, 0, (size_t)w * sizeof *dz);
      continue;
    }
    const double base = (double)mx[r].val, inv = 1.0 / sum[r];
    for (int64_t c = 0; c < w; c++) {
      const double prob = exp((double)row[c] - base) * inv;
      dz[c] = (float)((double)scale * (prob - (g->col0_out + c == y ? 1.0 : 0.0)));
    }
    if (counts_here && y >= g->col0_out && y < g->col0_out + w) {
      acc[0] += base + log(sum[r]) - (double)row[y - g->col0_out];
      acc[1] += 1.0;
      acc[2] += mx[r].idx == y;
    }
  }
  FG_CHECK(fg_dist_allreduce_f64(t->dist, acc, 3));
  *loss_sum = acc[0];
  *count = (int64_t)acc[1];
  *correct = (int64_t)acc[2];
cleanup:
  free(mx);
  free(sum);
  return st;
}

fg_status fg_gcn3d_eval_sums(fg_gcn3d *m, fg_layout3d *t, double sums[7]) {
  fg_status st = FG_OK;
  const fg_layer3d_geom *g = &m->geom[m->layers - 1];
  const int64_t n = g->n_out, w = g->w_out;
  const float *z = m->out[m->layers - 1];
  fg_float_int *mx = NULL;
  double *sum = NULL;
  memset(sums, 0, 7 * sizeof *sums);
  FG_ALLOC(mx, n > 0 ? n : 1);
  FG_ALLOC(sum, n > 0 ? n : 1);
  FG_CHECK(softmax_stats(m, t, mx, sum));
  if (t->q[g->b] == 0) {
    for (int64_t r = 0; r < n; r++) {
      const int32_t y = t->labels[r];
      const int k = t->split[r];
      if (y < 0 || k < 0 || k > 2 || y < g->col0_out || y >= g->col0_out + w) continue;
      sums[2 * k] += mx[r].idx == y;
      sums[2 * k + 1] += 1.0;
      if (k == FG_SPLIT_VALID)
        sums[6] += (double)mx[r].val + log(sum[r]) - (double)z[r * w + (y - g->col0_out)];
    }
  }
  FG_CHECK(fg_dist_allreduce_f64(t->dist, sums, 7));
cleanup:
  free(mx);
  free(sum);
  return st;
}

/* ---- backward ------------------------------------------------------------------------------- */

fg_status fg_gcn3d_backward(fg_gcn3d *m, fg_layout3d *t, float p, uint64_t seed, uint64_t epoch) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  int *counts = NULL, *displs = NULL;
  float *dq = m->dlogits; /* dQ_l (n_out, w_out) */
  FG_ALLOC(counts, d->size + 1);
  FG_ALLOC(displs, d->size + 1);
  for (int l = m->layers - 1; l >= 0; l--) {
    const fg_layer3d_geom *g = &m->geom[l];
    const int Gc = t->g[g->c];
    const int64_t nw = g->w_in * g->w_out;
    float *dd = (dq == m->g_a) ? m->g_b : m->g_a;
    int64_t total = 0;
    double t0 = fg_now();
    /* dW = Hᵀ dQ and db = colsum dQ over this rank's rows, packed piece by piece along c */
    fg_bias_backward(m->db, dq, g->n_out, g->w_out);
    FG_CHECK(piece_counts(m, t, l, counts, displs, &total));
    for (int r = 0; r < Gc; r++) {
      const int64_t bl = fg_block_size(g->w_out, Gc, r), wl = fg_block_size(nw, Gc, r);
      if (bl)
        memcpy(m->pack + displs[r] + wl, m->db + fg_block_start(g->w_out, Gc, r),
               (size_t)bl * 4);
    }
    m->seconds[FG_TIME_OTHER] += fg_now() - t0;
    if (m->dw_reversed[l]) {
      timed_gemm(m, 1, 0, g->w_out, g->w_in, g->n_out, dq, g->w_out, m->H[l], g->w_in, m->dwt,
                 g->w_in);
      for (int64_t i = 0; i < g->w_in; i++)
        for (int64_t j = 0; j < g->w_out; j++) m->dw[i * g->w_out + j] = m->dwt[j * g->w_in + i];
    } else {
      timed_gemm(m, 1, 0, g->w_in, g->w_out, g->n_out, m->H[l], g->w_in, dq, g->w_out, m->dw,
                 g->w_out);
    }
    for (int r = 0; r < Gc; r++) {
      const int64_t wl = fg_block_size(nw, Gc, r);
      if (wl) memcpy(m->pack + displs[r], m->dw + fg_block_start(nw, Gc, r), (size_t)wl * 4);
    }
    FG_CHECK(c3_reduce_scatter(d, t->comm[g->c], Gc, t->q[g->c], m->pack, m->grads + m->poff[l],
                               counts, total));
    if (l == 0 && m->feat_off < 0) break; /* the input features are not learned: no dF */
    /* dH = dQ W_lᵀ, summed along a */
    timed_gemm(m, 0, 1, g->n_out, g->w_in, g->w_out, dq, g->w_out, m->Wblk[l], g->w_out, m->dh,
               g->w_in);
    FG_CHECK(c3_allreduce(d, t->comm[g->a], t->g[g->a], m->dh, g->n_out * g->w_in));
    if (l > 0) {
      /* dD = Â_lᵀ dH, summed along c; then through dropout and the previous ReLU */
      FG_CHECK(spmm_allreduce(m, t, &t->At[g->key], m->dh, g->w_in, dd, g->c));
      t0 = fg_now();
      if (p > 0.0f)
        dropout_cols(dd, dd, g->n_in, g->w_in, p, seed, epoch, (uint64_t)l,
                     t->gids[g->a][g->parity], g->col0_in);
      fg_relu_backward(dd, dd, m->out[l - 1], g->n_in * g->w_in);
      m->seconds[FG_TIME_OTHER] += fg_now() - t0;
      dq = dd;
    } else {
      /* learned features: dF = Â_0ᵀ dH, reduce-scattered into the row pieces along Z */
      const int Gz = t->g[FG_DIM_Z];
      float *dF = m->grads + m->feat_off;
      if (g->w_in > 0 && g->n_in > 0) timed_spmm(t, &t->At[g->key], m->dh, g->w_in, dd);
      else if (g->n_in * g->w_in > 0) memset(dd, 0, (size_t)(g->n_in * g->w_in) * 4);
      for (int r = 0; r < Gz; r++)
        FG_CHECK(fg_mpi_count(fg_block_size(g->n_in, Gz, r) * g->w_in, &counts[r]));
      FG_CHECK(c3_reduce_scatter(d, t->comm[FG_DIM_Z], Gz, t->q[FG_DIM_Z], dd, dF, counts,
                                 g->n_in * g->w_in));
      if (p > 0.0f)
        dropout_cols(dF, dF, t->feat_rows, t->feat_cols, p, seed, epoch, 0,
                     t->gids[FG_DIM_X][0] + t->feat_row0, t->feat_col0);
    }
  }
cleanup:
  free(counts);
  free(displs);
  return st;
}

void fg_gcn3d_adam(fg_gcn3d *m, fg_adam_params adam, const float *wd, int64_t step) {
  for (int l = 0; l < m->layers; l++) {
    const fg_layer3d_geom *g = &m->geom[l];
    const int64_t o = m->poff[l];
    fg_adam_step(m->params + o, m->grads + o, m->adam_m + o, m->adam_v + o, g->wp_len, adam, wd[l],
                 step);
    fg_adam_step(m->params + o + g->wp_len, m->grads + o + g->wp_len, m->adam_m + o + g->wp_len,
                 m->adam_v + o + g->wp_len, g->bp_len, adam, 0.0f, step);
  }
  if (m->feat_off >= 0) {
    const int64_t o = m->feat_off;
    fg_adam_step(m->params + o, m->grads + o, m->adam_m + o, m->adam_v + o, m->n_params - o, adam,
                 0.0f, step);
  }
}

/* ---- serial-layout state and outputs -------------------------------------------------------- */

/* Walk the layer pieces of rank rk: for each element of its buffer (in order), the serial
 * index it holds, and whether this rank is the element's canonical owner (bias pieces are
 * replicated along b: the rank with q[b] == 0 owns them). Returns the buffer length. */
static int64_t piece_map(const fg_gcn3d *m, const fg_layout3d *t, int rk, const int64_t *woff,
                         const int64_t *boff, int64_t *idx, uint8_t *own) {
  int q[3];
  int64_t k = 0;
  fg_grid_coords(t->g, rk, q);
  for (int l = 0; l < m->layers; l++) {
    fg_layer3d_geom g;
    const int64_t dout = m->widths[l + 1];
    fg_layer3d_geom_compute(m->widths, t->n_global, t->g, q, l, t->nkeys, &g);
    for (int64_t e = g.wp0; e < g.wp0 + g.wp_len; e++, k++) {
      if (idx) idx[k] = woff[l] + (g.col0_in + e / g.w_out) * dout + g.col0_out + e % g.w_out;
      if (own) own[k] = 1;
    }
    for (int64_t e = g.bp0; e < g.bp0 + g.bp_len; e++, k++) {
      if (idx) idx[k] = boff[l] + g.col0_out + e;
      if (own) own[k] = q[g.b] == 0;
    }
  }
  return k;
}

static fg_status state_counts(const fg_gcn3d *m, const fg_layout3d *t, int *counts, int *displs,
                              int64_t *total) {
  fg_status st = FG_OK;
  int64_t off = 0;
  for (int rk = 0; rk < t->dist->size; rk++) {
    const int64_t len = piece_map(m, t, rk, NULL, NULL, NULL, NULL);
    FG_CHECK(fg_mpi_count(len, &counts[rk]));
    FG_CHECK(fg_mpi_count(off, &displs[rk]));
    off += len;
  }
  *total = off;
cleanup:
  return st;
}

fg_status fg_gcn3d_gather_state(fg_gcn3d *m, fg_layout3d *t, float *params, float *adam_m,
                                float *adam_v) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  const int root = d->rank == 0;
  int *counts = NULL, *displs = NULL, mine = 0;
  int64_t *woff = NULL, *boff = NULL, *idx = NULL, total = 0;
  uint8_t *own = NULL;
  float *all = NULL;
  float *const dst[3] = {params, adam_m, adam_v};
  const float *const src[3] = {m->params, m->adam_m, m->adam_v};
  const int64_t layer_len = m->feat_off >= 0 ? m->feat_off : m->n_params;
  FG_CHECK(fg_mpi_count(layer_len, &mine));
  if (root) {
    FG_ALLOC(counts, d->size);
    FG_ALLOC(displs, d->size);
    FG_ALLOC(woff, m->layers);
    FG_ALLOC(boff, m->layers);
    serial_offsets(m->widths, m->layers, woff, boff);
    st = state_counts(m, t, counts, displs, &total);
    if (st == FG_OK) {
      all = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *all);
      idx = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *idx);
      own = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *own);
      if (!all || !idx || !own)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory gathering parameters");
    }
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (root)
    for (int rk = 0; rk < d->size; rk++)
      piece_map(m, t, rk, woff, boff, idx + displs[rk], own + displs[rk]);
  for (int a = 0; a < 3; a++) {
    FG_CHECK_MPI(MPI_Gatherv(src[a], mine, MPI_FLOAT, all, counts, displs, MPI_FLOAT, 0, d->comm));
    if (root)
      for (int64_t k = 0; k < total; k++)
        if (own[k]) dst[a][idx[k]] = all[k];
  }
cleanup:
  free(counts);
  free(displs);
  free(woff);
  free(boff);
  free(idx);
  free(own);
  free(all);
  return st;
}

fg_status fg_gcn3d_scatter_state(fg_gcn3d *m, fg_layout3d *t, const float *params,
                                 const float *adam_m, const float *adam_v) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  const int root = d->rank == 0;
  int *counts = NULL, *displs = NULL, mine = 0;
  int64_t *woff = NULL, *boff = NULL, *idx = NULL, total = 0;
  float *all = NULL;
  const float *const src[3] = {params, adam_m, adam_v};
  float *const dst[3] = {m->params, m->adam_m, m->adam_v};
  const int64_t layer_len = m->feat_off >= 0 ? m->feat_off : m->n_params;
  FG_CHECK(fg_mpi_count(layer_len, &mine));
  if (root) {
    FG_ALLOC(counts, d->size);
    FG_ALLOC(displs, d->size);
    FG_ALLOC(woff, m->layers);
    FG_ALLOC(boff, m->layers);
    serial_offsets(m->widths, m->layers, woff, boff);
    st = state_counts(m, t, counts, displs, &total);
    if (st == FG_OK) {
      all = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *all);
      idx = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *idx);
      if (!all || !idx)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory scattering parameters");
    }
  }
  FG_CHECK(fg_dist_agree(d, st));
  if (root)
    for (int rk = 0; rk < d->size; rk++) piece_map(m, t, rk, woff, boff, idx + displs[rk], NULL);
  for (int a = 0; a < 3; a++) {
    if (root)
      for (int64_t k = 0; k < total; k++) all[k] = src[a][idx[k]];
    FG_CHECK_MPI(MPI_Scatterv(all, counts, displs, MPI_FLOAT, dst[a], mine, MPI_FLOAT, 0, d->comm));
  }
cleanup:
  free(counts);
  free(displs);
  free(woff);
  free(boff);
  free(idx);
  free(all);
  return st;
}

fg_status fg_gcn3d_gather_output(fg_gcn3d *m, fg_layout3d *t, int which, float *out) {
  fg_status st = FG_OK;
  fg_dist *d = t->dist;
  const int L = m->layers, root = d->rank == 0;
  const fg_layer3d_geom *g = &m->geom[L - 1];
  const float *vals;
  const int64_t *gids;
  int64_t rows, w, col0, width, hdr[3];
  int contribute;
  int64_t *hdrs = NULL, *all_ids = NULL;
  float *all_vals = NULL;
  int *cnt_i = NULL, *dsp_i = NULL, *cnt_v = NULL, *dsp_v = NULL, ni = 0, nv = 0;
  if (which == 0) {
    int a, b, c;
    fg_layer_roles(L, &a, &b, &c);
    vals = m->out[L - 1];
    gids = t->gids[a][L % 2];
    rows = g->n_out;
    w = g->w_out;
    col0 = g->col0_out;
    width = m->widths[L];
    contribute = t->q[g->b] == 0;
  } else {
    FG_REQUIRE(L >= 2, FG_ERR_INVALID_ARG, "embeddings need a hidden layer");
    vals = m->out[L - 2];
    gids = t->gids[g->a][g->parity];
    rows = g->n_in;
    w = g->w_in;
    col0 = g->col0_in;
    width = m->widths[L - 1];
    contribute = t->q[g->c] == 0;
  }
  hdr[0] = contribute ? rows : 0;
  hdr[1] = col0;
  hdr[2] = w;
  FG_CHECK(fg_mpi_count(hdr[0], &ni));
  FG_CHECK(fg_mpi_count(hdr[0] * w, &nv));
  if (root) {
    FG_ALLOC(hdrs, 3 * d->size);
    FG_ALLOC(cnt_i, d->size);
    FG_ALLOC(dsp_i, d->size);
    FG_ALLOC(cnt_v, d->size);
    FG_ALLOC(dsp_v, d->size);
  }
  FG_CHECK_MPI(MPI_Gather(hdr, 3, MPI_INT64_T, hdrs, 3, MPI_INT64_T, 0, d->comm));
  if (root) {
    int64_t oi = 0, ov = 0;
    for (int r = 0; r < d->size; r++) {
      FG_CHECK(fg_mpi_count(hdrs[3 * r], &cnt_i[r]));
      FG_CHECK(fg_mpi_count(hdrs[3 * r] * hdrs[3 * r + 2], &cnt_v[r]));
      FG_CHECK(fg_mpi_count(oi, &dsp_i[r]));
      FG_CHECK(fg_mpi_count(ov, &dsp_v[r]));
      oi += hdrs[3 * r];
      ov += hdrs[3 * r] * hdrs[3 * r + 2];
    }
    FG_ALLOC(all_ids, oi > 0 ? oi : 1);
    FG_ALLOC(all_vals, ov > 0 ? ov : 1);
  }
  FG_CHECK_MPI(MPI_Gatherv(gids, ni, MPI_INT64_T, all_ids, cnt_i, dsp_i, MPI_INT64_T, 0, d->comm));
  FG_CHECK_MPI(MPI_Gatherv(vals, nv, MPI_FLOAT, all_vals, cnt_v, dsp_v, MPI_FLOAT, 0, d->comm));
  if (root) {
    for (int r = 0; r < d->size; r++) {
      const int64_t rw = hdrs[3 * r + 2], c0 = hdrs[3 * r + 1];
      for (int64_t i = 0; i < hdrs[3 * r]; i++) {
        const int64_t v = all_ids[dsp_i[r] + i];
        memcpy(out + v * width + c0, all_vals + dsp_v[r] + i * rw, (size_t)rw * sizeof(float));
      }
    }
  }
cleanup:
  free(hdrs);
  free(all_ids);
  free(all_vals);
  free(cnt_i);
  free(dsp_i);
  free(cnt_v);
  free(dsp_v);
  return st;
}
