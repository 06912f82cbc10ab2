/* scheme_halo.c -- SuperGCN's halo exchange (supergcn.txt §3.3): a vertex partition whose
 * ranks send, per aggregation, one row per vertex of a minimum vertex cover of each cut.
 *
 * Layout: the 1D block rows of fg_part_distribute (--order metis by default in SuperGCN; here
 * any order): rank r owns its vertices' rows and their in-edges. Its in-edges split into the
 * local graph (sources it owns: `diag`) and, per sending rank s, the cut graph, whose edges
 * fg_halo_cut_build (halo_plan.c) decides by the rule (--aggregation): post, the source's row
 * is sent and aggregated here; pre, s sums the destination's neighbours it owns into one partial
 * row. r tells s, once at setup, what each row it will receive is: a post row one entry (the
 * source, weight 1), a pre row the destination's cut neighbours in s with their Â values. So
 * every rank holds
 *   S (n_send x n_local): row k of what it sends = S H (its out-going cut edges, the transpose
 *                         of its peers' in-edges from it, with Â's values),
 *   R (n_recv x ...):     R (n_local x n_recv), the received rows into the output: Â's value
 *                         for a post row, 1 for a pre row,
 * and an aggregation is out = diag H + R exchange(S H). Backward, Âᵀ G = diagᵀ G +
 * Sᵀ exchange'(Rᵀ G): the same rows cross the same cuts the other way, so the transposed
 * exchange needs no plan of its own, even for a directed graph.
 *
 * The exchange is one nonblocking neighbourhood collective (MPI_Ineighbor_alltoallv on a graph
 * topology of the ranks that talk; its reverse for backward), started before the local SpMM and
 * completed after it. With --quantize int8|int4|int2 the rows travel as codes (quant.c): a second
 * collective beside it carries each row's scale and zero point (SuperGCN Table 4's "parameter"
 * bytes, counted apart in the metrics). The stochastic rounding is keyed by (seed, epoch, the
 * aggregation's index in the epoch, direction, sender rank, the row's index in the sender's
 * buffer, column), so a run is reproducible at a fixed P whatever the thread count.
 *
 * Volume per aggregation of width f, float rows: rank r receives sum_s rows(s, r) 4 f bytes and
 * sends sum_s rows(r, s) 4 f, rows(s, r) the rule's count of fg_halo_volumes; backward the same
 * with sent and received swapped. Quantized: a row is fg_quant_row_bytes(f, bits) + 8 bytes.
 */
#include <string.h>

#include "core/fg_rng.h"
#include "kernels/fg_kernels.h"
#include "schemes/fg_halo.h"
#include "schemes/fg_partition.h"

typedef struct impl_halo {
  fg_part_local part;
  fg_halo_rule rule;
  int bits;                 /* 0: float rows; 2, 4, 8: quantized */
  uint64_t seed;
  fg_csr diag, diag_t;      /* local graph; its transpose (empty when Â is symmetric) */
  fg_csr S, St;             /* (n_send x n_local) rows to send; transpose */
  fg_csr R, Rt;             /* (n_local x n_recv) received rows into the output; transpose */
  int64_t n_send, n_recv;
  MPI_Comm fwd, bwd;        /* graph topologies: fwd's destinations are the ranks we send to */
  int n_dst, n_src;         /* neighbours we send to / receive from in the forward exchange */
  int *nb_dst, *nb_src;
  int *dst_cnt, *dst_dsp;   /* rows to each destination neighbour, offsets in the send rows */
  int *src_cnt, *src_dsp;   /* rows from each source neighbour, offsets in the received rows */
  float *sendbuf, *recvbuf; /* (max_rows x cap_f); under bf16 recvbuf holds bf16 rows */
  fg_bf16 *send16;          /* (max_rows x cap_f) bf16: the send rows rounded (s->bf16) */
  uint8_t *scodes, *rcodes; /* (max_rows x row bytes at cap_f) */
  float *sparam, *rparam;   /* (max_rows x 2) scale and zero point of each row, interleaved */
  float *scale, *zero;      /* (max_rows) */
  int64_t cap_f, max_rows;
  uint64_t epoch;           /* s->epoch of the last aggregation; calls counts them within it */
  int64_t calls;
} impl_halo;

/* Sender-side description of one row r asks s for: its entries' sources and weights. */
typedef struct spec_entry {
  int64_t row;
  int32_t src;
  float val;
} spec_entry;

static int cmp_spec(const void *a, const void *b) {
  const spec_entry *x = a, *y = b;
  if (x->row != y->row) return (x->row > y->row) - (x->row < y->row);
  return (x->src > y->src) - (x->src < y->src);
}

/* The receiving side of the plan from this rank's cut: R, the receive counts, and the rows'
 * descriptions for each sender (spec_len per row, spec_col / spec_val per entry, grouped by
 * sender; spec_rows / spec_nnz per sender). Not collective. */
static fg_status build_receive(const fg_halo_cut *c, int64_t n_local, int P, impl_halo *im,
                               int64_t *spec_rows, int64_t *spec_nnz, int32_t **spec_len,
                               int32_t **spec_col, float **spec_val) {
  fg_status st = FG_OK;
  int64_t *row_of = NULL, *fill = NULL, nrows = 0, nent = 0, nr = 0, ne = 0;
  int32_t *pre_dst = NULL;
  spec_entry *pre = NULL;
  int64_t cap = 0;
  for (int s = 0; s < P; s++) {
    int64_t npre = 0;
    for (int64_t k = c->start[s]; k < c->start[s + 1]; k++) npre += !c->post[k];
    spec_rows[s] = c->rows_post[s] + c->rows_pre[s];
    spec_nnz[s] = c->rows_post[s] + npre;
    nrows += spec_rows[s];
    nent += spec_nnz[s];
    cap = FG_MAX(cap, c->start[s + 1] - c->start[s]);
  }
  im->n_recv = nrows;
  FG_ALLOC(*spec_len, FG_MAX(nrows, 1));
  FG_ALLOC(*spec_col, FG_MAX(nent, 1));
  FG_ALLOC(*spec_val, FG_MAX(nent, 1));
  FG_ALLOC(row_of, FG_MAX(n_local, 1));
  FG_CALLOC(fill, n_local + 1);
  FG_ALLOC(pre_dst, FG_MAX(cap, 1));
  FG_ALLOC(pre, FG_MAX(cap, 1));
  for (int64_t u = 0; u < n_local; u++) row_of[u] = -1;
  /* R's entries per destination row: one per post edge, one per pre row */
  for (int s = 0; s < P; s++)
    for (int64_t k = c->start[s]; k < c->start[s + 1]; k++)
      if (c->post[k]) fill[c->dst[k] + 1]++;
      else if (row_of[c->dst[k]] != s) row_of[c->dst[k]] = s, fill[c->dst[k] + 1]++;
  for (int64_t u = 0; u < n_local; u++) fill[u + 1] += fill[u], row_of[u] = -1;
  FG_CHECK(fg_scheme_alloc_csr(&im->R, n_local, nrows, fill[n_local]));
  memcpy(im->R.rowptr, fill, (size_t)(n_local + 1) * sizeof *fill);
  for (int s = 0; s < P; s++) {
    const int64_t b0 = c->start[s], b1 = c->start[s + 1];
    int64_t np = 0, nd = 0, first = nr;
    /* post rows: the covered sources in increasing order (edges are sorted by source) */
    for (int64_t k = b0; k < b1; k++) {
      if (!c->post[k]) continue;
      if (nr == first || c->src[k] != (*spec_col)[ne - 1]) {
        (*spec_len)[nr++] = 1;
        (*spec_col)[ne] = c->src[k];
        (*spec_val)[ne++] = 1.0f;
      }
      im->R.col[fill[c->dst[k]]] = (int32_t)(nr - 1);
      im->R.val[fill[c->dst[k]]++] = c->val[k];
    }
    /* pre rows: the destinations with a pre edge, in increasing order */
    for (int64_t k = b0; k < b1; k++)
      if (!c->post[k]) pre_dst[nd++] = c->dst[k];
    nd = fg_scheme_sort_unique(pre_dst, nd);
    for (int64_t i = 0; i < nd; i++) {
      const int32_t u = pre_dst[i];
      row_of[u] = nr + i;
      im->R.col[fill[u]] = (int32_t)(nr + i);
      im->R.val[fill[u]++] = 1.0f;
    }
    for (int64_t k = b0; k < b1; k++)
      if (!c->post[k]) pre[np++] = (spec_entry){row_of[c->dst[k]], c->src[k], c->val[k]};
    qsort(pre, (size_t)np, sizeof *pre, cmp_spec);
    for (int64_t i = 0; i < nd; i++) (*spec_len)[nr + i] = 0;
    for (int64_t k = 0; k < np; k++) {
      (*spec_len)[pre[k].row]++;
      (*spec_col)[ne] = pre[k].src;
      (*spec_val)[ne++] = pre[k].val;
    }
    for (int64_t i = 0; i < nd; i++) row_of[pre_dst[i]] = -1;
    nr += nd;
  }
  FG_REQUIRE(nr == nrows && ne == nent, FG_ERR_INTERNAL,
             "halo: the cut's rows (%lld, %lld entries) disagree with its counts (%lld, %lld)",
             (long long)nr, (long long)ne, (long long)nrows, (long long)nent);
cleanup:
  free(row_of);
  free(fill);
  free(pre_dst);
  free(pre);
  return st;
}

/* Collective: the exchange plan, from this rank's in-edges A (global column positions). */
static fg_status halo_plan(fg_dist *d, const fg_csr *A, const int64_t *offs, impl_halo *im) {
  fg_status st = FG_OK;
  const int P = d->size, me = d->rank;
  const int64_t n = A->nrows, lo = offs[me], hi = offs[me + 1];
  fg_halo_cut cut;
  int64_t *rc = NULL, *sc = NULL; /* (P x 2) rows and entries: what we receive / send */
  int32_t *spec_len = NULL, *spec_col = NULL, *slen = NULL, *scol = NULL;
  float *spec_val = NULL, *sval = NULL;
  int *cnt[4] = {NULL, NULL, NULL, NULL}; /* rows and entries: send counts, receive counts */
  int *dsp[4] = {NULL, NULL, NULL, NULL};
  int64_t *spec_rows = NULL, *spec_nnz = NULL, nd = 0, n_ent = 0;
  memset(&cut, 0, sizeof cut);
  st = fg_halo_cut_build(A, 0, n, offs, P, me, im->rule, &cut);
  if (st == FG_OK) {
    for (int64_t k = 0; k < A->nnz; k++) nd += A->col[k] >= lo && A->col[k] < hi;
    st = fg_scheme_alloc_csr(&im->diag, n, n, nd);
  }
  if (st == FG_OK) {
    nd = 0;
    for (int64_t u = 0; u < n; u++) {
      for (int64_t k = A->rowptr[u]; k < A->rowptr[u + 1]; k++)
        if (A->col[k] >= lo && A->col[k] < hi) {
          im->diag.col[nd] = (int32_t)(A->col[k] - lo);
          im->diag.val[nd++] = A->val ? A->val[k] : 1.0f;
        }
      im->diag.rowptr[u + 1] = nd;
    }
    spec_rows = fg_calloc_array((size_t)P, sizeof *spec_rows);
    spec_nnz = fg_calloc_array((size_t)P, sizeof *spec_nnz);
    st = spec_rows && spec_nnz
             ? build_receive(&cut, n, P, im, spec_rows, spec_nnz, &spec_len, &spec_col, &spec_val)
             : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "halo: out of memory");
  }
  fg_halo_cut_free(&cut);
  FG_CHECK(fg_dist_agree(d, st));
  if (!im->part.symmetric) FG_CHECK(fg_dist_agree(d, fg_csr_transpose(&im->diag, &im->diag_t)));
  FG_CHECK(fg_dist_agree(d, fg_csr_transpose(&im->R, &im->Rt)));
  if (P == 1) { /* no cut: an empty S for the transposed product's shape */
    st = fg_scheme_alloc_csr(&im->S, 0, n, 0);
    if (st == FG_OK) st = fg_csr_transpose(&im->S, &im->St);
    st = fg_dist_agree(d, st);
    goto cleanup;
  }

  /* rows and entries each sender will make for us, and what we will make for each receiver */
  FG_ALLOC(rc, 2 * (int64_t)P);
  FG_ALLOC(sc, 2 * (int64_t)P);
  for (int k = 0; k < 4; k++) {
    FG_CALLOC(cnt[k], P);
    FG_CALLOC(dsp[k], P);
  }
  for (int s = 0; s < P; s++) rc[2 * s] = spec_rows[s], rc[2 * s + 1] = spec_nnz[s];
  FG_CHECK_MPI(MPI_Alltoall(rc, 2, MPI_INT64_T, sc, 2, MPI_INT64_T, d->comm));
  for (int j = 0; j < P; j++) {
    if (j == me) continue;
    fg_dist_count_send(d, 16);
    fg_dist_count_recv(d, 16);
  }
  im->n_send = 0;
  for (int j = 0; j < P; j++) {
    st = fg_mpi_count(spec_rows[j], &cnt[2][j]);   /* rows described to j (j sends them) */
    if (st == FG_OK) st = fg_mpi_count(spec_nnz[j], &cnt[3][j]);
    if (st == FG_OK) st = fg_mpi_count(sc[2 * j], &cnt[0][j]); /* rows we send j */
    if (st == FG_OK) st = fg_mpi_count(sc[2 * j + 1], &cnt[1][j]);
    if (st != FG_OK) break;
    im->n_send += sc[2 * j];
    n_ent += sc[2 * j + 1];
  }
  FG_CHECK(fg_dist_agree(d, st));
  for (int k = 0; k < 4; k++)
    for (int j = 1; j < P; j++) {
      const int64_t o = (int64_t)dsp[k][j - 1] + cnt[k][j - 1];
      if (st == FG_OK) st = fg_mpi_count(o, &dsp[k][j]);
    }
  FG_CHECK(fg_dist_agree(d, st));
  slen = fg_malloc_array((size_t)FG_MAX(im->n_send, 1), sizeof *slen);
  scol = fg_malloc_array((size_t)FG_MAX(n_ent, 1), sizeof *scol);
  sval = fg_malloc_array((size_t)FG_MAX(n_ent, 1), sizeof *sval);
  st = slen && scol && sval ? FG_OK
                            : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                                           "halo: out of memory for %lld rows to send",
                                           (long long)im->n_send);
  FG_CHECK(fg_dist_agree(d, st));
  FG_CHECK_MPI(MPI_Alltoallv(spec_len, cnt[2], dsp[2], MPI_INT32_T, slen, cnt[0], dsp[0],
                             MPI_INT32_T, d->comm));
  FG_CHECK_MPI(MPI_Alltoallv(spec_col, cnt[3], dsp[3], MPI_INT32_T, scol, cnt[1], dsp[1],
                             MPI_INT32_T, d->comm));
  FG_CHECK_MPI(MPI_Alltoallv(spec_val, cnt[3], dsp[3], MPI_FLOAT, sval, cnt[1], dsp[1],
                             MPI_FLOAT, d->comm));
  for (int j = 0; j < P; j++) {
    if (cnt[2][j] > 0) fg_dist_count_send(d, (int64_t)cnt[2][j] * 4 + (int64_t)cnt[3][j] * 8);
    if (cnt[0][j] > 0) fg_dist_count_recv(d, (int64_t)cnt[0][j] * 4 + (int64_t)cnt[1][j] * 8);
  }
  /* S: the rows we send, grouped by receiver, columns made local */
  st = fg_scheme_alloc_csr(&im->S, im->n_send, n, n_ent);
  if (st == FG_OK) {
    int64_t e = 0;
    for (int64_t k = 0; k < im->n_send && st == FG_OK; k++) {
      im->S.rowptr[k + 1] = im->S.rowptr[k] + slen[k];
      for (; e < im->S.rowptr[k + 1] && st == FG_OK; e++) {
        if (scol[e] < lo || scol[e] >= hi)
          st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                            "halo: rank %d was asked for row %lld outside its block [%lld, %lld)",
                            me, (long long)scol[e], (long long)lo, (long long)hi);
        else
          im->S.col[e] = (int32_t)(scol[e] - lo), im->S.val[e] = sval[e];
      }
    }
    if (st == FG_OK && e != n_ent)
      st = fg_error_set(FG_ERR_INTERNAL, __FILE__, __LINE__,
                        "halo: rank %d got %lld entries for rows that describe %lld", me,
                        (long long)n_ent, (long long)e);
  }
  if (st == FG_OK) st = fg_csr_transpose(&im->S, &im->St);
  FG_CHECK(fg_dist_agree(d, st));

  /* the neighbourhoods: forward sends to the ranks we make rows for */
  FG_ALLOC(im->nb_dst, P);
  FG_ALLOC(im->nb_src, P);
  FG_ALLOC(im->dst_cnt, P);
  FG_ALLOC(im->dst_dsp, P);
  FG_ALLOC(im->src_cnt, P);
  FG_ALLOC(im->src_dsp, P);
  for (int j = 0; j < P; j++) {
    if (cnt[0][j] > 0) {
      im->nb_dst[im->n_dst] = j;
      im->dst_cnt[im->n_dst] = cnt[0][j];
      im->dst_dsp[im->n_dst++] = dsp[0][j];
    }
    if (cnt[2][j] > 0) {
      im->nb_src[im->n_src] = j;
      im->src_cnt[im->n_src] = cnt[2][j];
      im->src_dsp[im->n_src++] = dsp[2][j];
    }
  }
  /* each edge weighted by its rows (a hint to MPI; MPI_UNWEIGHTED's sentinel pointer trips
   * GCC's bounds checks) */
  FG_CHECK_MPI(MPI_Dist_graph_create_adjacent(d->comm, im->n_src, im->nb_src, im->src_cnt,
                                              im->n_dst, im->nb_dst, im->dst_cnt,
                                              MPI_INFO_NULL, 0, &im->fwd));
  FG_CHECK_MPI(MPI_Dist_graph_create_adjacent(d->comm, im->n_dst, im->nb_dst, im->dst_cnt,
                                              im->n_src, im->nb_src, im->src_cnt,
                                              MPI_INFO_NULL, 0, &im->bwd));
cleanup:
  fg_halo_cut_free(&cut);
  free(rc);
  free(sc);
  free(spec_rows);
  free(spec_nnz);
  free(spec_len);
  free(spec_col);
  free(spec_val);
  free(slen);
  free(scol);
  free(sval);
  for (int k = 0; k < 4; k++) {
    free(cnt[k]);
    free(dsp[k]);
  }
  return st;
}

/* Collective growth of the exchange buffers to width f (same f sequence on every rank). */
static fg_status ensure_buffers(fg_scheme *s, int64_t f) {
  fg_status st = FG_OK;
  impl_halo *im = s->impl;
  const int64_t rows = FG_MAX(im->max_rows, 1);
  if (f <= im->cap_f || s->dist->size == 1) return FG_OK;
  fg_free_aligned(im->sendbuf);
  fg_free_aligned(im->recvbuf);
  fg_free_aligned(im->send16);
  free(im->scodes);
  free(im->rcodes);
  im->cap_f = 0;
  im->sendbuf = fg_malloc_aligned((size_t)(rows * f) * sizeof(float));
  im->recvbuf = fg_malloc_aligned((size_t)(rows * f) * sizeof(float));
  im->send16 = s->bf16 && !im->bits ? fg_malloc_aligned((size_t)(rows * f) * sizeof(fg_bf16))
                                    : NULL;
  im->scodes = im->rcodes = NULL;
  if (im->bits) {
    im->scodes = fg_malloc_array((size_t)rows, (size_t)fg_quant_row_bytes(f, im->bits));
    im->rcodes = fg_malloc_array((size_t)rows, (size_t)fg_quant_row_bytes(f, im->bits));
  }
  if (!im->sendbuf || !im->recvbuf || (im->bits && (!im->scodes || !im->rcodes)) ||
      (s->bf16 && !im->bits && !im->send16))
    st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                      "halo: out of memory for exchange buffers of 2 x %lld rows x %lld",
                      (long long)im->max_rows, (long long)f);
  FG_CHECK(fg_dist_agree(s->dist, st));
  im->cap_f = f;
cleanup:
  return st;
}

/* The random-draw key of one message: the epoch, this aggregation's index within it, the
 * direction and the sender. */
static uint64_t message_key(fg_scheme *s, int transposed) {
  impl_halo *im = s->impl;
  if (im->epoch != s->epoch) im->epoch = s->epoch, im->calls = 0;
  return fg_mix64(fg_mix64(fg_mix64(s->epoch) ^ (uint64_t)im->calls++) ^
                  ((uint64_t)transposed << 32 | (uint64_t)s->dist->rank));
}

/* out = the local graph's product + the received rows' (forward: Â in; transposed: Âᵀ in). */
/* out = Â in (transposed: Âᵀ in); in NULL: in16, the rows already bf16 (aggregate16), read as
 * they are wherever the fp32 path would round them (the pack and local SpMMs). */
static fg_status apply(fg_scheme *s, int transposed, const float *in, const fg_bf16 *in16,
                       float *out, int64_t f) {
  fg_status st = FG_OK;
  impl_halo *im = s->impl;
  fg_dist *d = s->dist;
  const fg_csr *pack = transposed ? &im->Rt : &im->S;
  const fg_csr *unpack = transposed ? &im->St : &im->R;
  const fg_csr *local = transposed && im->diag_t.rowptr ? &im->diag_t : &im->diag;
  const MPI_Comm comm = transposed ? im->bwd : im->fwd;
  const int ns = transposed ? im->n_src : im->n_dst, nr = transposed ? im->n_dst : im->n_src;
  const int *scnt = transposed ? im->src_cnt : im->dst_cnt;
  const int *sdsp = transposed ? im->src_dsp : im->dst_dsp;
  const int *rcnt = transposed ? im->dst_cnt : im->src_cnt;
  const int *rdsp = transposed ? im->dst_dsp : im->src_dsp;
  /* --precision bf16 without --quantize: every row travels as bf16, 2 bytes an element. A post
   * row is an input row (S's single entry 1), already bf16-exact after the pack SpMM's rounding;
   * a pre row is a partial sum, rounded once more -- the receiver's bf16 SpMM rounded it to the
   * same value when it came as fp32, so the results are the same bits either way. With
   * --quantize the codes are computed from the fp32 pack rows as in fp32 (the dequantized rows
   * are rounded by the receiver's SpMM). */
  const int b16 = s->bf16 && !im->bits;
  const int64_t rb = im->bits ? fg_quant_row_bytes(f, im->bits) : (b16 ? 2 : 4) * f;
  const int64_t n_recv = unpack->ncols;
  MPI_Datatype row = MPI_DATATYPE_NULL, par = MPI_DATATYPE_NULL;
  MPI_Request req[2];
  int nreq = 0, rbi = 0;
  double t0;
  const int P = d->size;
  if (P == 1 && in16) {
    fg_scheme_spmm_bf16(s, local, in16, f, out, 0);
    return FG_OK;
  }
  if (P == 1) return fg_scheme_spmm(s, local, in, f, out, 0);
  FG_CHECK(ensure_buffers(s, f));
  if (pack->nrows > 0 && in16)
    fg_scheme_spmm_bf16(s, pack, in16, f, im->sendbuf, 0);
  else if (pack->nrows > 0)
    FG_CHECK(fg_scheme_spmm(s, pack, in, f, im->sendbuf, 0));
  if (im->bits) {
    const uint64_t key = message_key(s, transposed);
    fg_quantize_rows(im->sendbuf, pack->nrows, f, im->bits, im->seed, key, NULL, im->scodes,
                     im->scale, im->zero);
    for (int64_t k = 0; k < pack->nrows; k++)
      im->sparam[2 * k] = im->scale[k], im->sparam[2 * k + 1] = im->zero[k];
  }
  t0 = fg_now();
  FG_CHECK(fg_mpi_count(rb, &rbi));
  FG_CHECK_MPI(MPI_Type_contiguous(rbi, MPI_BYTE, &row));
  FG_CHECK_MPI(MPI_Type_commit(&row));
  if (im->bits) {
    FG_CHECK_MPI(MPI_Type_contiguous(2, MPI_FLOAT, &par));
    FG_CHECK_MPI(MPI_Type_commit(&par));
    FG_CHECK_MPI(MPI_Ineighbor_alltoallv(im->scodes, scnt, sdsp, row, im->rcodes, rcnt, rdsp,
                                         row, comm, &req[nreq++]));
    FG_CHECK_MPI(MPI_Ineighbor_alltoallv(im->sparam, scnt, sdsp, par, im->rparam, rcnt, rdsp,
                                         par, comm, &req[nreq++]));
  } else {
    const void *sb = im->sendbuf;
    if (b16) {
      fg_bf16_from_f32(im->send16, im->sendbuf, pack->nrows * f);
      sb = im->send16;
    }
    FG_CHECK_MPI(MPI_Ineighbor_alltoallv(sb, scnt, sdsp, row, im->recvbuf, rcnt, rdsp, row, comm,
                                         &req[nreq++]));
  }
  for (int k = 0; k < ns; k++) fg_dist_count_send(d, (int64_t)scnt[k] * (rb + (im->bits ? 8 : 0)));
  for (int k = 0; k < nr; k++) fg_dist_count_recv(d, (int64_t)rcnt[k] * (rb + (im->bits ? 8 : 0)));
  if (im->bits) fg_dist_count_params(d, pack->nrows * 8, n_recv * 8);
  d->counters.seconds_comm += fg_now() - t0;
  /* the exchange moves between the local SpMM's row chunks (fg_scheme_spmm_progress) */
  if (in16)
    FG_CHECK(fg_scheme_spmm_bf16_progress(s, local, in16, f, out, 0, req, nreq));
  else
    FG_CHECK(fg_scheme_spmm_progress(s, local, in, f, out, 0, req, nreq));
  FG_CHECK(fg_dist_waitall(d, req, nreq, 1));
  if (im->bits) {
    for (int64_t k = 0; k < n_recv; k++)
      im->scale[k] = im->rparam[2 * k], im->zero[k] = im->rparam[2 * k + 1];
    fg_dequantize_rows(im->rcodes, im->scale, im->zero, n_recv, f, im->bits, im->recvbuf);
  }
  if (unpack->nnz > 0 && b16)
    fg_scheme_spmm_bf16(s, unpack, (const fg_bf16 *)(const void *)im->recvbuf, f, out, 1);
  else if (unpack->nnz > 0)
    FG_CHECK(fg_scheme_spmm(s, unpack, im->recvbuf, f, out, 1));
cleanup:
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  if (par != MPI_DATATYPE_NULL) MPI_Type_free(&par);
  return st;
}

static fg_status agg_halo(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  (void)l; /* every layer aggregates with the same Â */
  return apply(s, 0, in, NULL, out, f);
}

/* a hidden stored as bf16: packed and multiplied as it is (no widening, no second rounding) */
static fg_status agg16_halo(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  (void)l;
  return apply(s, 0, NULL, in, out, f);
}

static fg_status agg_t_halo(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  (void)l;
  return apply(s, 1, in, NULL, out, f);
}

/* a gradient stored as bf16: packed and multiplied as it is */
static fg_status agg16_t_halo(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  (void)l;
  return apply(s, 1, NULL, in, out, f);
}

static void destroy_halo(fg_scheme *s) {
  impl_halo *im = s->impl;
  fg_csr *m[] = {&im->diag, &im->diag_t, &im->S, &im->St, &im->R, &im->Rt};
  for (size_t k = 0; k < sizeof m / sizeof m[0]; k++) fg_csr_free(m[k]);
  if (im->fwd != MPI_COMM_NULL) MPI_Comm_free(&im->fwd);
  if (im->bwd != MPI_COMM_NULL) MPI_Comm_free(&im->bwd);
  free(im->nb_dst);
  free(im->nb_src);
  free(im->dst_cnt);
  free(im->dst_dsp);
  free(im->src_cnt);
  free(im->src_dsp);
  fg_free_aligned(im->sendbuf);
  fg_free_aligned(im->recvbuf);
  fg_free_aligned(im->send16);
  free(im->scodes);
  free(im->rcodes);
  free(im->sparam);
  free(im->rparam);
  free(im->scale);
  free(im->zero);
  fg_part_local_free(&im->part);
}

static const fg_scheme_ops ops_halo = {
    .name = "halo",
    .shape = fg_scheme_shape_rows,
    .aggregate = agg_halo,
    .aggregate16 = agg16_halo,
    .aggregate_t = agg_t_halo,
    .aggregate16_t = agg16_t_halo,
    .reduce_grads = fg_scheme_allreduce_grads,
    .col_sum = fg_scheme_allreduce_cols,
    .agg_last_ok = 1,
    .destroy = destroy_halo,
};

fg_status fg_scheme_halo_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl_halo *im = NULL;
  int64_t rows;
  *out = NULL;
  FG_CHECK(fg_scheme_new(dist, &ops_halo, sizeof *im, &s));
  im = s->impl;
  im->fwd = im->bwd = MPI_COMM_NULL;
  im->rule = (fg_halo_rule)cfg->aggregation;
  im->bits = cfg->quantize_bits;
  im->seed = cfg->seed;
  im->epoch = UINT64_MAX;
  st = im->bits == 0 || im->bits == 2 || im->bits == 4 || im->bits == 8
           ? FG_OK
           : fg_error_set(FG_ERR_INVALID_ARG, __FILE__, __LINE__,
                          "halo: quantized messages have 2, 4 or 8 bits, not %d", im->bits);
  FG_CHECK(fg_dist_agree(dist, st));
  FG_CHECK(fg_part_distribute(dist, ds, cfg, 1, s, &im->part));
  FG_CHECK(halo_plan(dist, &im->part.A, im->part.offs, im));
  fg_csr_free(&im->part.A);
  fg_csr_free(&im->part.At); /* the transposed exchange reuses the forward's cuts */
  im->max_rows = FG_MAX(im->n_send, im->n_recv);
  rows = FG_MAX(im->max_rows, 1);
  if (im->bits) {
    im->sparam = fg_malloc_array((size_t)rows * 2, sizeof *im->sparam);
    im->rparam = fg_malloc_array((size_t)rows * 2, sizeof *im->rparam);
    im->scale = fg_malloc_array((size_t)rows, sizeof *im->scale);
    im->zero = fg_malloc_array((size_t)rows, sizeof *im->zero);
    st = im->sparam && im->rparam && im->scale && im->zero
             ? FG_OK
             : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "halo: out of memory");
  }
  FG_CHECK(fg_dist_agree(dist, st));
  snprintf(s->note, sizeof s->note, "halo exchange: %s aggregation, %s rows",
           fg_halo_rule_name(im->rule),
           im->bits == 0 ? "float32" : im->bits == 8 ? "int8" : im->bits == 4 ? "int4" : "int2");
  FG_CHECK(fg_part_report(dist, s, &im->part, "halo", cfg->order, im->n_recv, im->n_send,
                          cfg->verbose ? cfg->log : NULL));
  *out = s;
  s = NULL;
cleanup:
  fg_scheme_destroy(&s);
  return st;
}
