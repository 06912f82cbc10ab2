/* scheme_1d_sa.c -- sparsity-aware 1D (Mukhopadhyay et al., §4.1): every rank receives exactly
 * the rows of H that its block row of Â references.
 *
 * Rank i cuts its rows of Â into the diagonal block A(i, i) (local columns) and the off-diagonal
 * part, whose referenced columns -- NnzCols(i, j) for every j != i, sorted by global position,
 * hence grouped by owner -- become a compact "halo" numbering. The exchange plan is built once:
 * rank i tells every owner j which of j's rows it needs (Alltoall of counts, Alltoallv of ids);
 * j keeps the list as local row ids to pack. An aggregation then posts Irecv of the halo rows
 * and Isend of the packed rows, computes A(i, i) H_i, waits, and adds A_off H_halo. With overlap
 * the diagonal SpMM runs while the messages are in flight; without, it waits first. Either way
 * the sums are made in the same order, so overlap does not change a bit of the result.
 *
 * Backward: Âᵀ·G. For a symmetric Â the forward plan serves as is; for a directed graph the
 * rows of Âᵀ are distributed too and get their own plan (Âᵀ's NnzCols).
 *
 * Volume per aggregation of width f: rank i receives sum_j |NnzCols(i, j)| f 4 bytes and sends
 * sum_j |NnzCols(j, i)| f 4 bytes, one message per nonempty pair; never more than 1d's.
 */
#include <string.h>

#include "kernels/fg_kernels.h"
#include "schemes/fg_partition.h"

#define FG_TAG_HALO 7102

typedef struct sa_op {
  fg_csr diag; /* (n_local x n_local) A(i, i) */
  fg_csr off;  /* (n_local x n_halo) the other blocks, columns in halo numbering */
  int64_t n_halo, n_send;
  int32_t *halo;                /* (n_halo) global positions of the halo rows */
  int *recv_count, *recv_displ; /* (P) halo rows from each rank */
  int *send_count, *send_displ; /* (P) rows to each rank */
  int32_t *send_rows;           /* (n_send) local rows to pack, grouped by destination */
} sa_op;

typedef struct impl_sa {
  fg_part_local part;
  sa_op a, at; /* at is used only when Â is not symmetric */
  int overlap;
  MPI_Request *req; /* (2 P) */
  float *sendbuf;   /* (max n_send x cap_f) */
  float *halobuf;   /* (max n_halo x cap_f) */
  int64_t cap_f, max_send, max_halo;
} impl_sa;

static void sa_op_free(sa_op *op) {
  fg_csr_free(&op->diag);
  fg_csr_free(&op->off);
  free(op->halo);
  free(op->recv_count);
  free(op->recv_displ);
  free(op->send_count);
  free(op->send_displ);
  free(op->send_rows);
  memset(op, 0, sizeof *op);
}

/* Local part of the plan: diagonal block, halo, off-diagonal part, receive counts. */
static fg_status sa_split(const fg_csr *M, const int64_t *offs, int P, int me, sa_op *op) {
  fg_status st = FG_OK;
  const int64_t n = M->nrows, r0 = offs[me], r1 = offs[me + 1];
  int64_t nd = 0, no = 0, nh = 0;
  FG_CALLOC(op->recv_count, P);
  FG_CALLOC(op->recv_displ, P);
  FG_CALLOC(op->send_count, P);
  FG_CALLOC(op->send_displ, P);
  for (int64_t k = 0; k < M->nnz; k++) {
    if (M->col[k] >= r0 && M->col[k] < r1)
      nd++;
    else
      no++;
  }
  /* halo: the distinct off-block columns, sorted */
  FG_ALLOC(op->halo, no > 0 ? no : 1);
  for (int64_t k = 0; k < M->nnz; k++)
    if (M->col[k] < r0 || M->col[k] >= r1) op->halo[nh++] = M->col[k];
  nh = fg_scheme_sort_unique(op->halo, nh);
  op->n_halo = nh;
  for (int64_t k = 0; k < nh; k++) op->recv_count[fg_block_owner(offs, P, op->halo[k])]++;
  for (int j = 1; j < P; j++) op->recv_displ[j] = op->recv_displ[j - 1] + op->recv_count[j - 1];

  FG_CHECK(fg_scheme_alloc_csr(&op->diag, n, n, nd));
  FG_CHECK(fg_scheme_alloc_csr(&op->off, n, nh, no));
  nd = no = 0;
  for (int64_t u = 0; u < n; u++) {
    for (int64_t k = M->rowptr[u]; k < M->rowptr[u + 1]; k++) {
      const int32_t c = M->col[k];
      const float v = M->val ? M->val[k] : 1.0f;
      if (c >= r0 && c < r1) {
        op->diag.col[nd] = (int32_t)(c - r0);
        op->diag.val[nd++] = v;
      } else {
        /* c's place in the sorted halo (present by construction); halo order is global
         * order, so columns stay sorted within the row */
        op->off.col[no] = (int32_t)fg_scheme_lower_bound(op->halo, 0, nh, c);
        op->off.val[no++] = v;
      }
    }
    op->diag.rowptr[u + 1] = nd;
    op->off.rowptr[u + 1] = no;
  }
cleanup:
  return st;
}

/* Collective: the exchange plan of one operator (every rank agrees on each step's outcome). */
static fg_status sa_plan(fg_dist *d, const fg_csr *M, const int64_t *offs, sa_op *op) {
  fg_status st = FG_OK;
  const int P = d->size, me = d->rank;
  st = sa_split(M, offs, P, me, op);
  FG_CHECK(fg_dist_agree(d, st));
  if (P == 1) return FG_OK;
  FG_CHECK_MPI(MPI_Alltoall(op->recv_count, 1, MPI_INT, op->send_count, 1, MPI_INT, d->comm));
  for (int j = 0; j < P; j++) {
    if (j == me) continue;
    fg_dist_count_send(d, 4);
    fg_dist_count_recv(d, 4);
  }
  op->n_send = 0;
  for (int j = 0; j < P; j++) {
    op->send_displ[j] = (int)op->n_send;
    op->n_send += op->send_count[j];
  }
  op->send_rows = fg_malloc_array((size_t)FG_MAX(op->n_send, 1), sizeof *op->send_rows);
  st = op->send_rows ? FG_OK
                     : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                                    "1d-sa: out of memory for a send list of %lld rows",
                                    (long long)op->n_send);
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK_MPI(MPI_Alltoallv(op->halo, op->recv_count, op->recv_displ, MPI_INT32_T, op->send_rows,
                             op->send_count, op->send_displ, MPI_INT32_T, d->comm));
  for (int j = 0; j < P; j++) {
    if (op->recv_count[j] > 0) fg_dist_count_send(d, (int64_t)op->recv_count[j] * 4);
    if (op->send_count[j] > 0) fg_dist_count_recv(d, (int64_t)op->send_count[j] * 4);
  }
  /* requested global positions -> local rows */
  for (int64_t k = 0; k < op->n_send && st == FG_OK; k++) {
    const int64_t g = op->send_rows[k];
    if (g < offs[me] || g >= offs[me + 1])
      st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                        "1d-sa: rank %d was asked for row %lld outside its block [%lld, %lld)", me,
                        (long long)g, (long long)offs[me], (long long)offs[me + 1]);
    else
      op->send_rows[k] = (int32_t)(g - offs[me]);
  }
  FG_CHECK(fg_dist_agree(d, st));
cleanup:
  return st;
}

/* Collective growth of the exchange buffers to width f (same f sequence on every rank). */
static fg_status ensure_buffers(fg_scheme *s, int64_t f) {
  fg_status st = FG_OK;
  impl_sa *im = s->impl;
  if (f <= im->cap_f || s->dist->size == 1) return FG_OK;
  fg_free_aligned(im->sendbuf);
  fg_free_aligned(im->halobuf);
  im->cap_f = 0;
  im->sendbuf = fg_malloc_aligned((size_t)FG_MAX(im->max_send * f, 1) * sizeof(float));
  im->halobuf = fg_malloc_aligned((size_t)FG_MAX(im->max_halo * f, 1) * sizeof(float));
  if (!im->sendbuf || !im->halobuf)
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                      "1d-sa: out of memory for exchange buffers of %lld + %lld rows x %lld",
                      (long long)im->max_send, (long long)im->max_halo, (long long)f);
  FG_CHECK(fg_dist_agree(s->dist, st));
  im->cap_f = f;
cleanup:
  return st;
}

static fg_status apply_sa(fg_scheme *s, const sa_op *op, const float *in, float *out, int64_t f) {
  fg_status st = FG_OK;
  impl_sa *im = s->impl;
  fg_dist *d = s->dist;
  const int P = d->size;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  int nreq = 0, fi = 0, posted = 0;
  double t0;
  FG_CHECK(ensure_buffers(s, f));
  if (P > 1) {
    FG_CHECK(fg_mpi_count(f, &fi));
    t0 = fg_now();
    FG_CHECK_MPI(MPI_Type_contiguous(fi, MPI_FLOAT, &row));
    FG_CHECK_MPI(MPI_Type_commit(&row));
    for (int j = 0; j < P; j++) {
      if (op->recv_count[j] == 0) continue;
      FG_CHECK_MPI(MPI_Irecv(im->halobuf + (int64_t)op->recv_displ[j] * f, op->recv_count[j], row,
                             j, FG_TAG_HALO, d->comm, &im->req[nreq++]));
      fg_dist_count_recv(d, (int64_t)op->recv_count[j] * f * 4);
    }
    for (int64_t k = 0; k < op->n_send; k++)
      memcpy(im->sendbuf + k * f, in + (int64_t)op->send_rows[k] * f, (size_t)f * sizeof(float));
    for (int j = 0; j < P; j++) {
      if (op->send_count[j] == 0) continue;
      FG_CHECK_MPI(MPI_Isend(im->sendbuf + (int64_t)op->send_displ[j] * f, op->send_count[j], row,
                             j, FG_TAG_HALO, d->comm, &im->req[nreq++]));
      fg_dist_count_send(d, (int64_t)op->send_count[j] * f * 4);
    }
    d->counters.seconds_comm += fg_now() - t0;
    posted = 1;
    if (!im->overlap) FG_CHECK(fg_dist_waitall(d, im->req, nreq, 0));
  }
  fg_scheme_spmm(s, &op->diag, in, f, out, 0);
  if (posted && im->overlap) FG_CHECK(fg_dist_waitall(d, im->req, nreq, 1));
  if (op->off.nnz > 0) fg_scheme_spmm(s, &op->off, im->halobuf, f, out, 1);
cleanup:
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  return st;
}

static fg_status agg_sa(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  return apply_sa(s, &im->a, in, out, f);
}

static fg_status agg_t_sa(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  return apply_sa(s, im->part.symmetric ? &im->a : &im->at, in, out, f);
}

static void destroy_sa(fg_scheme *s) {
  impl_sa *im = s->impl;
  sa_op_free(&im->a);
  sa_op_free(&im->at);
  free(im->req);
  fg_free_aligned(im->sendbuf);
  fg_free_aligned(im->halobuf);
  fg_part_local_free(&im->part);
}

static const fg_scheme_ops ops_sa = {
    .name = "1d-sa",
    .shape = fg_scheme_shape_rows,
    .aggregate = agg_sa,
    .aggregate_t = agg_t_sa,
    .reduce_grads = fg_scheme_allreduce_grads,
    .col_sum = fg_scheme_allreduce_cols,
    .agg_last_ok = 1,
    .destroy = destroy_sa,
};

fg_status fg_scheme_1d_sa_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                 fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl_sa *im = NULL;
  *out = NULL;
  FG_CHECK(fg_scheme_new(dist, &ops_sa, sizeof *im, &s));
  im = s->impl;
  im->overlap = cfg->overlap;
  FG_CHECK(fg_part_distribute(dist, ds, cfg, s, &im->part));
  FG_CHECK(sa_plan(dist, &im->part.A, im->part.offs, &im->a));
  fg_csr_free(&im->part.A);
  if (!im->part.symmetric) {
    FG_CHECK(sa_plan(dist, &im->part.At, im->part.offs, &im->at));
    fg_csr_free(&im->part.At);
  }
  im->max_send = FG_MAX(im->a.n_send, im->at.n_send);
  im->max_halo = FG_MAX(im->a.n_halo, im->at.n_halo);
  im->req = fg_malloc_array((size_t)2 * (size_t)dist->size, sizeof *im->req);
  st = im->req ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "1d-sa: out of memory");
  FG_CHECK(fg_dist_agree(dist, st));
  FG_CHECK(fg_part_report(dist, s, &im->part, "1d-sa", cfg->order, im->a.n_halo, im->a.n_send,
                          cfg->verbose ? cfg->log : NULL));
  *out = s;
  s = NULL;
cleanup:
  fg_scheme_destroy(&s);
  return st;
}
