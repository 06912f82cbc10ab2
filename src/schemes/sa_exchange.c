/* sa_exchange.c -- the sparsity-aware exchange of 1d-sa and 1.5d (fg_sa.h). */
#include <string.h>

#include "kernels/fg_kernels.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_sa.h"

#define FG_TAG_HALO 7102

void fg_sa_op_free(fg_sa_op *op) {
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

/* Local part of the plan: diagonal part, halo, off part, receive counts per sending rank. */
static fg_status sa_split(const fg_csr *M, const int64_t *offs, int parts, int rep, int me_block,
                          int me_rep, int64_t d0, int64_t d1, int P, fg_sa_op *op) {
  fg_status st = FG_OK;
  const int64_t n = M->nrows, r0 = offs[me_block], r1 = offs[me_block + 1];
  /* the other blocks' columns this replica multiplies: its share of the blocks */
  const int64_t col0 = offs[fg_block_start(parts, rep, me_rep)];
  const int64_t col1 = offs[fg_block_start(parts, rep, me_rep + 1)];
  const int pick = me_block % rep; /* which replica of a block serves this rank */
  int64_t nd = 0, no = 0, nh = 0;
  FG_CALLOC(op->recv_count, P);
  FG_CALLOC(op->recv_displ, P);
  FG_CALLOC(op->send_count, P);
  FG_CALLOC(op->send_displ, P);
  for (int64_t k = 0; k < M->nnz; k++) {
    const int64_t c = M->col[k];
    if (c >= r0 && c < r1)
      nd += c >= d0 && c < d1;
    else
      no += c >= col0 && c < col1;
  }
  /* halo: the distinct off-block columns, sorted */
  FG_ALLOC(op->halo, no > 0 ? no : 1);
  for (int64_t k = 0; k < M->nnz; k++) {
    const int64_t c = M->col[k];
    if (c >= col0 && c < col1 && (c < r0 || c >= r1)) op->halo[nh++] = (int32_t)c;
  }
  nh = fg_scheme_sort_unique(op->halo, nh);
  op->n_halo = nh;
  for (int64_t k = 0; k < nh; k++)
    op->recv_count[fg_block_owner(offs, parts, op->halo[k]) * rep + pick]++;
  for (int j = 1; j < P; j++) op->recv_displ[j] = op->recv_displ[j - 1] + op->recv_count[j - 1];

  FG_CHECK(fg_scheme_alloc_csr(&op->diag, n, r1 - r0, nd));
  FG_CHECK(fg_scheme_alloc_csr(&op->off, n, nh, no));
  nd = no = 0;
  for (int64_t u = 0; u < n; u++) {
    for (int64_t k = M->rowptr[u]; k < M->rowptr[u + 1]; k++) {
      const int32_t c = M->col[k];
      const float v = M->val ? M->val[k] : 1.0f;
      if (c >= r0 && c < r1) {
        if (c < d0 || c >= d1) continue;
        op->diag.col[nd] = (int32_t)(c - r0);
        op->diag.val[nd++] = v;
      } else if (c >= col0 && c < col1) {
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

fg_status fg_sa_diag_cuts(const fg_csr *M, int64_t row_lo, int64_t row_hi, const int64_t *offs,
                          int parts, int block, int rep, int64_t *cuts, int64_t *nnz) {
  fg_status st = FG_OK;
  const int64_t r0 = offs[block], r1 = offs[block + 1];
  int64_t *cnt = NULL, *share = NULL, total = 0, cum = 0, x = r0;
  cuts[0] = r0;
  cuts[rep] = r1;
  if (rep == 1) { /* one replica: the whole block, nothing to balance */
    nnz[0] = M->rowptr[row_hi] - M->rowptr[row_lo];
    return FG_OK;
  }
  FG_CALLOC(cnt, FG_MAX(r1 - r0, 1));
  FG_ALLOC(share, rep + 1); /* share[j]: the first column of replica j's blocks */
  for (int j = 0; j <= rep; j++) share[j] = offs[fg_block_start(parts, rep, j)];
  for (int j = 0; j < rep; j++) nnz[j] = 0;
  for (int64_t k = M->rowptr[row_lo]; k < M->rowptr[row_hi]; k++) {
    const int64_t c = M->col[k];
    if (c >= r0 && c < r1)
      cnt[c - r0]++;
    else /* the replica whose share of the blocks holds c */
      nnz[fg_block_owner(share, rep, c)]++;
    total++;
  }
  /* water-filling: replica j's slice ends where the nonzeros so far (shares 0..j and slices)
   * come closest to (j + 1) / rep of the block row's */
  for (int j = 0; j + 1 < rep; j++) {
    const int64_t goal = total * (j + 1) / rep, start = cum + nnz[j];
    cum = start;
    while (x < r1 && 2 * (cum + cnt[x - r0]) <= 2 * goal + cnt[x - r0]) cum += cnt[x++ - r0];
    cuts[j + 1] = x;
    nnz[j] = cum - (start - nnz[j]);
  }
  for (int64_t y = x; y < r1; y++) nnz[rep - 1] += cnt[y - r0];
cleanup:
  free(cnt);
  free(share);
  return st;
}

fg_status fg_sa_plan(fg_dist *d, const fg_csr *M, const int64_t *offs, int parts, int rep,
                     fg_sa_op *op) {
  fg_status st = FG_OK;
  const int P = d->size, me = d->rank, b = me / rep;
  int64_t *cuts = NULL, *nnz = NULL;
  cuts = fg_malloc_array((size_t)rep + 1, sizeof *cuts);
  nnz = fg_malloc_array((size_t)rep, sizeof *nnz);
  st = cuts && nnz ? fg_sa_diag_cuts(M, 0, M->nrows, offs, parts, b, rep, cuts, nnz)
                   : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  if (st == FG_OK)
    st = sa_split(M, offs, parts, rep, b, me % rep, cuts[me % rep], cuts[me % rep + 1], P, op);
  free(cuts);
  free(nnz);
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
                                    "out of memory for a send list of %lld rows",
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
    if (g < offs[b] || g >= offs[b + 1])
      st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                        "rank %d was asked for row %lld outside its block [%lld, %lld)", me,
                        (long long)g, (long long)offs[b], (long long)offs[b + 1]);
    else
      op->send_rows[k] = (int32_t)(g - offs[b]);
  }
  FG_CHECK(fg_dist_agree(d, st));
cleanup:
  return st;
}

fg_status fg_sa_exchange_init(fg_dist *d, fg_sa_exchange *x, const fg_sa_op *ops, int n,
                              int overlap) {
  fg_status st = FG_OK;
  memset(x, 0, sizeof *x);
  x->overlap = overlap;
  for (int k = 0; k < n; k++) {
    x->max_send = FG_MAX(x->max_send, ops[k].n_send);
    x->max_halo = FG_MAX(x->max_halo, ops[k].n_halo);
  }
  x->req = fg_malloc_array((size_t)2 * (size_t)d->size, sizeof *x->req);
  st = x->req ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  return fg_dist_agree(d, st);
}

void fg_sa_exchange_free(fg_sa_exchange *x) {
  free(x->req);
  fg_free_aligned(x->sendbuf);
  fg_free_aligned(x->halobuf);
  memset(x, 0, sizeof *x);
}

/* Collective growth of the exchange buffers to width f at esz bytes an element (same f and esz
 * sequence on every rank). */
static fg_status ensure_buffers(fg_dist *d, fg_sa_exchange *x, int64_t f, int64_t esz) {
  fg_status st = FG_OK;
  if ((f <= x->cap_f && esz <= x->cap_esz) || d->size == 1) return FG_OK;
  f = FG_MAX(f, x->cap_f);
  esz = FG_MAX(esz, x->cap_esz);
  fg_free_aligned(x->sendbuf);
  fg_free_aligned(x->halobuf);
  x->cap_f = x->cap_esz = 0;
  x->sendbuf = fg_malloc_aligned((size_t)FG_MAX(x->max_send * f * esz, 1));
  x->halobuf = fg_malloc_aligned((size_t)FG_MAX(x->max_halo * f * esz, 1));
  if (!x->sendbuf || !x->halobuf)
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                      "out of memory for exchange buffers of %lld + %lld rows x %lld",
                      (long long)x->max_send, (long long)x->max_halo, (long long)f);
  FG_CHECK(fg_dist_agree(d, st));
  x->cap_f = f;
  x->cap_esz = esz;
cleanup:
  return st;
}

/* Posts op's receives into x->halobuf and sends of in's (in16's) rows from x->sendbuf, rows of
 * f elements as bf16 (x16) or fp32, counting them; *nreq requests in x->req, *row their
 * datatype (the caller frees it). */
static fg_status sa_post(fg_scheme *s, fg_sa_exchange *x, const fg_sa_op *op, const float *in,
                         const fg_bf16 *in16, int64_t f, int x16, MPI_Datatype *row,
                         int *nreq) {
  fg_status st = FG_OK;
  fg_dist *d = s->dist;
  const int P = d->size;
  const int64_t esz = x16 ? 2 : 4;
  char *halo = (char *)(void *)x->halobuf, *send = (char *)(void *)x->sendbuf;
  int fi = 0;
  const double t0 = fg_now();
  FG_CHECK(fg_mpi_count(f, &fi));
  FG_CHECK_MPI(MPI_Type_contiguous(fi, x16 ? MPI_UINT16_T : MPI_FLOAT, row));
  FG_CHECK_MPI(MPI_Type_commit(row));
  for (int j = 0; j < P; j++) {
    if (op->recv_count[j] == 0) continue;
    FG_CHECK_MPI(MPI_Irecv(halo + (int64_t)op->recv_displ[j] * f * esz, op->recv_count[j], *row,
                           j, FG_TAG_HALO, d->comm, &x->req[(*nreq)++]));
    fg_dist_count_recv(d, (int64_t)op->recv_count[j] * f * esz);
  }
  for (int64_t k = 0; k < op->n_send; k++) {
    const int64_t r = (int64_t)op->send_rows[k] * f;
    if (in16)
      memcpy((fg_bf16 *)(void *)send + k * f, in16 + r, (size_t)f * sizeof *in16);
    else if (x16)
      fg_bf16_from_f32((fg_bf16 *)(void *)send + k * f, in + r, f);
    else
      memcpy(x->sendbuf + k * f, in + r, (size_t)f * sizeof(float));
  }
  for (int j = 0; j < P; j++) {
    if (op->send_count[j] == 0) continue;
    FG_CHECK_MPI(MPI_Isend(send + (int64_t)op->send_displ[j] * f * esz, op->send_count[j], *row,
                           j, FG_TAG_HALO, d->comm, &x->req[(*nreq)++]));
    fg_dist_count_send(d, (int64_t)op->send_count[j] * f * esz);
  }
cleanup:
  d->counters.seconds_comm += fg_now() - t0;
  return st;
}

fg_status fg_sa_apply(fg_scheme *s, fg_sa_exchange *x, const fg_sa_op *op, const float *in,
                      const fg_bf16 *in16, float *out, int64_t f) {
  fg_status st = FG_OK;
  fg_dist *d = s->dist;
  const int P = d->size;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  /* under bf16 the rows travel as bf16: packing rounds them (the receiver's SpMM would round
   * them to the same bits), the off part gathers the halo as it arrives */
  const int x16 = in16 || (s->bf16 && P > 1);
  int nreq = 0, posted = 0;
  FG_CHECK(ensure_buffers(d, x, f, x16 ? 2 : 4));
  if (P > 1) {
    FG_CHECK(sa_post(s, x, op, in, in16, f, x16, &row, &nreq));
    posted = 1;
    if (!x->overlap) FG_CHECK(fg_dist_waitall(d, x->req, nreq, 0));
  }
  /* with overlap the messages move between the diagonal SpMM's row chunks */
  if (in16)
    FG_CHECK(fg_scheme_spmm_bf16_progress(s, &op->diag, in16, f, out, 0, x->req,
                                          posted && x->overlap ? nreq : 0));
  else
    FG_CHECK(fg_scheme_spmm_progress(s, &op->diag, in, f, out, 0, x->req,
                                     posted && x->overlap ? nreq : 0));
  if (posted && x->overlap) FG_CHECK(fg_dist_waitall(d, x->req, nreq, 1));
  if (op->off.nnz > 0 && x16)
    fg_scheme_spmm_bf16(s, &op->off, (const fg_bf16 *)(const void *)x->halobuf, f, out, 1);
  else if (op->off.nnz > 0)
    FG_CHECK(fg_scheme_spmm(s, &op->off, x->halobuf, f, out, 1));
cleanup:
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  return st;
}

fg_status fg_sa_apply_rows(fg_scheme *s, fg_sa_exchange *x, const fg_sa_op *op,
                           const fg_bf16 *in16, int64_t f, int64_t block, fg_rows_sink sink,
                           void *ctx) {
  fg_status st = FG_OK;
  fg_dist *d = s->dist;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  int nreq = 0;
  FG_CHECK(ensure_buffers(d, x, f, 2));
  if (d->size > 1) {
    FG_CHECK(sa_post(s, x, op, NULL, in16, f, 1, &row, &nreq));
    FG_CHECK(fg_dist_waitall(d, x->req, nreq, 0)); /* (every block's rows need the halo) */
  }
  FG_CHECK(fg_scheme_spmm_rows2(s, &op->diag, in16, &op->off,
                                (const fg_bf16 *)(const void *)x->halobuf, f, block, sink, ctx));
cleanup:
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  return st;
}
