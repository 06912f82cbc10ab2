/* scheme.c -- what every scheme shares: the trivial meaning of the operations a scheme may
 * leave NULL, the 1D shape, and filling the local rows from a dataset. */
#include <stdlib.h>
#include <string.h>

#include "schemes/fg_scheme.h"

void fg_scheme_shape_rows(const fg_scheme *s, int l, const int64_t *widths, fg_layer_shape *out) {
  memset(out, 0, sizeof *out);
  out->n_in = out->n_out = s->n_local;
  out->w_in = widths[l];
  out->w_out = widths[l + 1];
  out->ids_in = out->ids_out = s->global_ids;
  out->in_primary = out->out_primary = out->agg_primary = 1;
  out->wp_len = widths[l] * widths[l + 1];
  out->bp_len = widths[l + 1];
  /* every rank holds the whole weights: rank 0's copy is the one to keep */
  out->w_primary = out->b_primary = s->dist->rank == 0;
}

fg_status fg_scheme_move_rows(fg_scheme *s, int l, const fg_layer_shape *sh, const float *in,
                              float *out, int64_t f) {
  if (s->ops->move_rows) return s->ops->move_rows(s, l, in, out, f);
  if (out != in && sh->n_in * f > 0) memcpy(out, in, (size_t)(sh->n_in * f) * sizeof(float));
  return FG_OK;
}

fg_status fg_scheme_move_rows_t(fg_scheme *s, int l, const fg_layer_shape *sh, const float *in,
                                float *out, int64_t f) {
  if (s->ops->move_rows_t) return s->ops->move_rows_t(s, l, in, out, f);
  if (out != in && sh->n_out * f > 0) memcpy(out, in, (size_t)(sh->n_out * f) * sizeof(float));
  return FG_OK;
}

fg_status fg_scheme_move_rows_bf16(fg_scheme *s, int l, const fg_layer_shape *sh,
                                   const float *in, float *out, int64_t f) {
  if (s->bf16 && s->ops->move_rows_bf16) return s->ops->move_rows_bf16(s, l, in, out, f);
  return fg_scheme_move_rows(s, l, sh, in, out, f);
}

fg_status fg_scheme_move_rows16(fg_scheme *s, int l, const float *in, fg_bf16 *out, int64_t f) {
  if (!s->ops->move_rows16)
    return fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                        "--scheme %s moves no rows as bf16", s->ops->name);
  return s->ops->move_rows16(s, l, in, out, f);
}

fg_status fg_scheme_reduce_product(fg_scheme *s, int l, float *buf, int64_t n) {
  return s->ops->reduce_product ? s->ops->reduce_product(s, l, buf, n) : FG_OK;
}

fg_status fg_scheme_reduce_input_grad(fg_scheme *s, int l, float *buf, int64_t n) {
  return s->ops->reduce_input_grad ? s->ops->reduce_input_grad(s, l, buf, n) : FG_OK;
}

fg_status fg_scheme_reduce_grads(fg_scheme *s, float *grads, int64_t n) {
  return s->ops->reduce_grads ? s->ops->reduce_grads(s, grads, n) : FG_OK;
}

fg_status fg_scheme_row_max(fg_scheme *s, int l, fg_maxloc *buf, int64_t n) {
  return s->ops->row_max ? s->ops->row_max(s, l, buf, n) : FG_OK;
}

fg_status fg_scheme_row_sum(fg_scheme *s, int l, double *buf, int64_t n) {
  return s->ops->row_sum ? s->ops->row_sum(s, l, buf, n) : FG_OK;
}

fg_status fg_scheme_allreduce_grads(fg_scheme *s, float *grads, int64_t n) {
  return fg_dist_allreduce_f32(s->dist, grads, n);
}

fg_status fg_scheme_col_sum(fg_scheme *s, int l, double *buf, int64_t n) {
  return s->ops->col_sum ? s->ops->col_sum(s, l, buf, n) : FG_OK;
}

fg_status fg_scheme_allreduce_cols(fg_scheme *s, int l, double *buf, int64_t n) {
  (void)l; /* every layer's rows are the rank's block */
  return fg_dist_allreduce_f64(s->dist, buf, n);
}

fg_status fg_scheme_new(fg_dist *d, const fg_scheme_ops *ops, size_t impl_bytes,
                        fg_scheme **out) {
  fg_scheme *s = fg_calloc_array(1, sizeof *s);
  void *impl = fg_calloc_array(1, impl_bytes);
  fg_status st = (s && impl) ? FG_OK
                             : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "%s: out of memory",
                                            ops->name);
  st = fg_dist_agree(d, st);
  if (st == FG_OK) {
    s->ops = ops;
    s->dist = d;
    s->impl = impl;
    s->progress_chunk_bytes = FG_PROGRESS_CHUNK_BYTES;
  } else {
    free(s);
    free(impl);
    s = NULL;
  }
  *out = s;
  return st;
}

void fg_scheme_destroy(fg_scheme **s) {
  if (!s || !*s) return;
  if ((*s)->impl && (*s)->ops->destroy) (*s)->ops->destroy(*s);
  free((*s)->impl);
  free((*s)->global_ids);
  if (!(*s)->features_borrowed) free((*s)->features);
  free((*s)->features16);
  free((*s)->labels);
  free((*s)->split);
  free((*s)->targets);
  free((*s)->in_labels);
  free((*s)->in_split);
  free((*s)->rows16);
  free((*s)->rows_blk);
  free(*s);
  *s = NULL;
}

void fg_scheme_feature_row(const float *row, int64_t F, int normalize, int64_t f0, int64_t f1,
                           float *o32, fg_bf16 *o16) {
  double s = 0.0;
  if (normalize)
    for (int64_t j = 0; j < F; j++) s += (double)row[j];
  for (int64_t j = f0; j < f1; j++) {
    const float v = (normalize && s != 0.0) ? (float)((double)row[j] / s) : row[j];
    if (o32) o32[j - f0] = v;
    else o16[j - f0] = fg_bf16_from_float(v);
  }
}

fg_status fg_scheme_fill_local(fg_scheme *s, const fg_dataset *ds, const int64_t *gids,
                               int64_t n_local, int normalize_features, int features16) {
  fg_status st = FG_OK;
  const int64_t F = ds->num_features;
  s->n_global = ds->num_nodes;
  s->n_local = n_local;
  s->num_features = F;
  s->num_classes = ds->num_classes;
  int64_t same = n_local == ds->num_nodes;
  for (int64_t i = 0; same && i < n_local; i++) same = gids[i] == i;
  FG_ALLOC(s->global_ids, n_local);
  FG_ALLOC(s->labels, n_local);
  FG_ALLOC(s->split, n_local);
  if (!normalize_features) {
    /* the dataset's matrix as it is: borrow it rather than hold it twice (the largest input
     * of a run; fg_train_memory counts it once in this case); rows in another order are read
     * through global_ids (the model's input pass gathers them) */
    s->features = ds->features;
    s->features_borrowed = 1;
    s->feature_rows = same ? NULL : s->global_ids;
  } else if (features16) { /* normalized and rounded row by row: no fp32 copy */
    s->features16 = fg_malloc_huge((size_t)FG_MAX(n_local * F, 1) * sizeof(fg_bf16));
    FG_REQUIRE(s->features16 != NULL, FG_ERR_NOMEM,
               "out of memory for %lld x %lld bf16 features", (long long)n_local, (long long)F);
  } else {
    s->features = fg_malloc_huge((size_t)(n_local * F) * sizeof(float));
    FG_REQUIRE(s->features != NULL, FG_ERR_NOMEM, "out of memory for %lld x %lld features",
               (long long)n_local, (long long)F);
  }
  for (int64_t i = 0; i < n_local; i++) {
    const int64_t g = gids[i];
    s->global_ids[i] = g;
    if (s->features16)
      fg_scheme_feature_row(ds->features + g * F, F, 1, 0, F, NULL, s->features16 + i * F);
    else if (!s->features_borrowed)
      memcpy(s->features + i * F, ds->features + g * F, (size_t)F * sizeof(float));
    s->labels[i] = ds->labels ? ds->labels[g] : -1;
    s->split[i] = ds->split ? ds->split[g] : FG_SPLIT_NONE;
  }
  if (normalize_features && s->features) fg_row_normalize(s->features, n_local, F);
cleanup:
  return st;
}

#define FG_TAG_TARGETS 7401

fg_status fg_scheme_scatter_targets(fg_scheme *s, const fg_dataset *ds) {
  fg_status st = FG_OK;
  fg_dist *d = s->dist;
  int64_t T = d->rank == 0 && ds ? ds->num_tasks : 0, mx = 0;
  int64_t *ids = NULL;
  int8_t *pack = NULL;
  fg_status wrong = FG_OK; /* rank 0: a rank asked for an id out of range */
  /* read with the rows from a prepared directory (fg_part_read_prepared), on every rank */
  if (s->targets) return FG_OK;
  FG_CHECK(fg_dist_bcast(d, &T, sizeof T, 0));
  if (T <= 0) return FG_OK;
  s->num_tasks = T;
  s->targets = fg_malloc_array((size_t)FG_MAX(s->n_local * T, 1), 1);
  st = s->targets ? FG_OK
                  : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                                 "out of memory for %lld x %lld targets", (long long)s->n_local,
                                 (long long)T);
  if (st == FG_OK && d->rank == 0) {
    for (int64_t i = 0; i < s->n_local; i++) /* rank 0's own rows: a copy */
      memcpy(s->targets + i * T, ds->targets + s->global_ids[i] * T, (size_t)T);
    mx = s->n_local;
  }
  /* the largest row count, so that rank 0 packs every answer in one buffer */
  mx = FG_MAX(mx, s->n_local);
  {
    double m = (double)mx;
    const fg_status sm = fg_dist_max_f64(d, &m, 1);
    if (st == FG_OK) st = sm;
    mx = (int64_t)m;
  }
  if (st == FG_OK && d->rank == 0 && d->size > 1) {
    ids = fg_malloc_array((size_t)FG_MAX(mx, 1), sizeof *ids);
    pack = fg_malloc_array((size_t)FG_MAX(mx * T, 1), 1);
    if (!ids || !pack)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                        "rank 0: out of memory for %lld rows of %lld targets to send",
                        (long long)mx, (long long)T);
  }
  FG_CHECK(fg_dist_agree(d, st));
  for (int r = 1; r < d->size && st == FG_OK; r++) {
    if (d->rank == r) {
      int64_t n = s->n_local;
      st = fg_dist_send_bytes(d, &n, sizeof n, 0, FG_TAG_TARGETS);
      if (st == FG_OK) st = fg_dist_send_bytes(d, s->global_ids, n * 8, 0, FG_TAG_TARGETS);
      if (st == FG_OK) st = fg_dist_recv_bytes(d, s->targets, n * T, 0, FG_TAG_TARGETS);
    } else if (d->rank == 0) {
      int64_t n = 0;
      st = fg_dist_recv_bytes(d, &n, sizeof n, r, FG_TAG_TARGETS);
      if (st == FG_OK && (n < 0 || n > mx))
        st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__, "rank %d holds %lld rows", r,
                          (long long)n);
      if (st == FG_OK) st = fg_dist_recv_bytes(d, ids, n * 8, r, FG_TAG_TARGETS);
      /* (rank r waits for its answer: it is sent even when an id is wrong, and the error
       * reaches every rank through the agreement below) */
      fg_status bad = FG_OK;
      for (int64_t i = 0; st == FG_OK && i < n; i++) {
        if (ids[i] < 0 || ids[i] >= ds->num_nodes) {
          if (bad == FG_OK)
            bad = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__, "rank %d: node id %lld", r,
                               (long long)ids[i]);
          memset(pack + i * T, -1, (size_t)T);
          continue;
        }
        memcpy(pack + i * T, ds->targets + ids[i] * T, (size_t)T);
      }
      if (st == FG_OK) st = fg_dist_send_bytes(d, pack, n * T, r, FG_TAG_TARGETS);
      if (wrong == FG_OK) wrong = bad;
    }
  }
  FG_CHECK(fg_dist_agree(d, st == FG_OK ? wrong : st));
cleanup:
  free(ids);
  free(pack);
  return st;
}

fg_status fg_scheme_alloc_csr(fg_csr *M, int64_t nrows, int64_t ncols, int64_t nnz) {
  fg_status st = FG_OK;
  memset(M, 0, sizeof *M);
  M->nrows = nrows;
  M->ncols = ncols;
  M->nnz = nnz;
  FG_ALLOC(M->rowptr, nrows + 1);
  FG_ALLOC(M->col, FG_MAX(nnz, 1));
  FG_ALLOC(M->val, FG_MAX(nnz, 1));
  M->rowptr[0] = 0;
cleanup:
  return st;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

int64_t fg_scheme_sort_unique(int32_t *v, int64_t n) {
  int64_t u = 0;
  qsort(v, (size_t)n, sizeof *v, cmp_i32);
  for (int64_t k = 0; k < n; k++)
    if (k == 0 || v[k] != v[u - 1]) v[u++] = v[k];
  return u;
}

int64_t fg_scheme_lower_bound(const int32_t *v, int64_t lo, int64_t hi, int64_t x) {
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo) / 2;
    if (v[mid] < x)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo;
}

fg_status fg_scheme_rows_bf16(fg_scheme *s, const float *in, int64_t n, const fg_bf16 **out) {
  fg_status st = FG_OK;
  if (n > s->rows16_cap) {
    fg_bf16 *grown = fg_malloc_huge((size_t)n * sizeof *grown);
    FG_REQUIRE(grown, FG_ERR_NOMEM, "out of memory for %lld bf16 rows elements", (long long)n);
    free(s->rows16);
    s->rows16 = grown;
    s->rows16_cap = n;
  }
  fg_bf16_from_f32(s->rows16, in, n);
  *out = s->rows16;
cleanup:
  return st;
}

void fg_scheme_spmm_bf16(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                         float *out, int acc) {
  const double t0 = fg_now();
  fg_spmm_bf16(A, in, f, out, f, f, acc);
  s->seconds_spmm += fg_now() - t0;
  s->spmm_bytes += fg_spmm_min_bytes(A, f, 2.0, 4.0);
}

int64_t fg_scheme_rows_block(int64_t n, int64_t f) {
  const int64_t rows =
      FG_MAX(FG_ROWS_BLOCK_BYTES / (4 * FG_MAX(f, 1)), 64 * (int64_t)fg_max_threads());
  return FG_MAX(FG_MIN(n, rows), 0);
}

fg_status fg_scheme_spmm_rows(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                              int64_t rows_a_block, fg_rows_sink sink, void *ctx) {
  return fg_scheme_spmm_rows2(s, A, in, NULL, NULL, f, rows_a_block, sink, ctx);
}

fg_status fg_scheme_spmm_rows2(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, const fg_csr *B,
                               const fg_bf16 *in2, int64_t f, int64_t rows_a_block,
                               fg_rows_sink sink, void *ctx) {
  fg_status st = FG_OK;
  const int64_t n = A->nrows;
  const int64_t block =
      rows_a_block > 0 ? FG_MIN(n, rows_a_block) : fg_scheme_rows_block(n, f);
  if (n <= 0 || f <= 0) return FG_OK;
  if (block * f > s->rows_blk_cap) {
    float *grown = fg_malloc_huge((size_t)(block * f) * sizeof *grown);
    FG_REQUIRE(grown, FG_ERR_NOMEM, "out of memory for an aggregation's %lld x %lld row block",
               (long long)block, (long long)f);
    free(s->rows_blk);
    s->rows_blk = grown;
    s->rows_blk_cap = block * f;
  }
  for (int64_t r0 = 0; r0 < n; r0 += block) {
    const int64_t r1 = FG_MIN(n, r0 + block);
    const fg_csr rows = {r1 - r0, A->ncols, A->rowptr[r1] - A->rowptr[r0], A->rowptr + r0,
                         A->col, A->val};
    const double t0 = fg_now();
    fg_spmm_bf16(&rows, in, f, s->rows_blk, f, f, 0);
    s->spmm_bytes += fg_spmm_min_bytes(&rows, f, 2.0, 4.0);
    if (B && B->nnz > 0) { /* (its sums added to the first's, the old value last) */
      const fg_csr rows2 = {r1 - r0, B->ncols, B->rowptr[r1] - B->rowptr[r0], B->rowptr + r0,
                            B->col, B->val};
      fg_spmm_bf16(&rows2, in2, f, s->rows_blk, f, f, 1);
      s->spmm_bytes += fg_spmm_min_bytes(&rows2, f, 2.0, 4.0);
    }
    s->seconds_spmm += fg_now() - t0;
    sink(ctx, r0, r1 - r0, s->rows_blk);
  }
cleanup:
  return st;
}

void fg_scheme_spmm_bf16_out(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                             fg_bf16 *out) {
  const double t0 = fg_now();
  fg_spmm_bf16_out(A, in, f, out, f, f);
  s->seconds_spmm += fg_now() - t0;
  s->spmm_bytes += fg_spmm_min_bytes(A, f, 2.0, 2.0);
}

fg_status fg_scheme_spmm(fg_scheme *s, const fg_csr *A, const float *in, int64_t f, float *out,
                         int acc) {
  fg_status st = FG_OK;
  if (s->bf16) {
    const fg_bf16 *h = NULL;
    FG_CHECK(fg_scheme_rows_bf16(s, in, A->ncols * f, &h));
    fg_scheme_spmm_bf16(s, A, h, f, out, acc);
    return FG_OK;
  }
  st = fg_scheme_spmm_f32(s, A, in, f, out, acc);
cleanup:
  return st;
}

fg_status fg_scheme_spmm_f32(fg_scheme *s, const fg_csr *A, const float *in, int64_t f,
                             float *out, int acc) {
  const double t0 = fg_now();
  if (acc)
    fg_spmm_acc(A, in, f, out, f, f);
  else
    fg_spmm(A, in, f, out, f, f);
  s->seconds_spmm += fg_now() - t0;
  s->spmm_bytes += fg_spmm_min_bytes(A, f, 4.0, 4.0);
  return FG_OK;
}

/* What progress_between needs: the requests to test, and where to leave a failure. */
typedef struct progress_ctx {
  fg_dist *d;
  MPI_Request *reqs;
  int n, rc;
  double seconds; /* time inside MPI_Testall */
} progress_ctx;

/* Between two chunks of an SpMM: one MPI_Testall, which runs Open MPI's progress engine (the
 * next fragments of a shared-memory pipeline, the next round of a nonblocking collective).
 * Returns nonzero, so that the kernel stops calling, once every request is complete or a call
 * failed. */
static int progress_between(void *arg) {
  progress_ctx *c = arg;
  int done = 0;
  const double t0 = fg_now();
  c->rc = MPI_Testall(c->n, c->reqs, &done, MPI_STATUSES_IGNORE);
  c->seconds += fg_now() - t0;
  c->d->counters.progress_tests++;
  return done || c->rc != MPI_SUCCESS;
}

/* One chunked SpMM (in bf16 when in16, else fp32) with the requests tested between chunks; the
 * tests' time is communication, the rest the SpMM's (the same bytes as the unchunked call). */
static fg_status spmm_progress(fg_scheme *s, const fg_csr *A, const float *in,
                               const fg_bf16 *in16, int64_t f, float *out, int acc,
                               MPI_Request *reqs, int n) {
  fg_status st = FG_OK;
  progress_ctx c = {s->dist, reqs, n, MPI_SUCCESS, 0.0};
  const int64_t chunk =
      s->progress_chunk_bytes > 0 ? s->progress_chunk_bytes : FG_PROGRESS_CHUNK_BYTES;
  const double t0 = fg_now();
  if (in16)
    fg_spmm_bf16_chunked(A, in16, f, out, f, f, acc, chunk, progress_between, &c);
  else
    fg_spmm_chunked(A, in, f, out, f, f, acc, chunk, progress_between, &c);
  s->seconds_spmm += fg_now() - t0 - c.seconds;
  s->dist->counters.seconds_comm += c.seconds;
  s->spmm_bytes += fg_spmm_min_bytes(A, f, in16 ? 2.0 : 4.0, 4.0);
  FG_CHECK_MPI(c.rc);
cleanup:
  return st;
}

fg_status fg_scheme_spmm_progress(fg_scheme *s, const fg_csr *A, const float *in, int64_t f,
                                  float *out, int acc, MPI_Request *reqs, int n) {
  fg_status st = FG_OK;
  if (n <= 0) return fg_scheme_spmm(s, A, in, f, out, acc);
  if (s->bf16) {
    const fg_bf16 *h = NULL;
    FG_CHECK(fg_scheme_rows_bf16(s, in, A->ncols * f, &h));
    return spmm_progress(s, A, NULL, h, f, out, acc, reqs, n);
  }
  return spmm_progress(s, A, in, NULL, f, out, acc, reqs, n);
cleanup:
  return st;
}

fg_status fg_scheme_spmm_bf16_progress(fg_scheme *s, const fg_csr *A, const fg_bf16 *in,
                                       int64_t f, float *out, int acc, MPI_Request *reqs,
                                       int n) {
  if (n <= 0) {
    fg_scheme_spmm_bf16(s, A, in, f, out, acc);
    return FG_OK;
  }
  return spmm_progress(s, A, NULL, in, f, out, acc, reqs, n);
}

int fg_agg_first(int agg_order, int l, int64_t w_in, int64_t w_out) {
  /* Aggregating first costs an SpMM at width w_in forward and (except layer 0, whose input
   * gradient is not needed) one backward; aggregating last costs SpMMs at width w_out both
   * ways. */
  if (agg_order == FG_AGG_FIRST) return 1;
  if (agg_order == FG_AGG_LAST) return 0;
  return l == 0 ? w_in < 2 * w_out : w_in < w_out;
}

fg_status fg_scheme_gather_params(fg_scheme *s, const float *vals, const int64_t *idx, int64_t n,
                                  int64_t n_global, float *out) {
  return fg_dist_gather_indexed(s->dist, vals, idx, n, n_global, 0, out);
}

fg_status fg_scheme_gather_rows(fg_scheme *s, const float *vals, const int64_t *ids, int64_t rows,
                                int64_t col0, int64_t w, int64_t width, float *out) {
  return fg_dist_gather_block(s->dist, vals, ids, rows, col0, w, width, s->n_global, 0, out);
}
