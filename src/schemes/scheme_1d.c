/* scheme_1d.c -- sparsity-oblivious 1D: staged broadcasts of whole blocks (MG-GCN §4.1).
 *
 * Rank i holds block row i of Â, cut by column block into A(i, j) (n_i x n_j). An aggregation
 * runs one stage per non-empty block j: the owner of block j broadcasts its rows H_j and every
 * rank adds A(i, j) H_j to its output, in increasing j, so the sum order is fixed whatever the
 * timing. With overlap (MG-GCN §4.3) the broadcasts are nonblocking and double-buffered: a
 * received stage's broadcast is posted while an earlier stage's SpMM runs, into the buffer that
 * the SpMM before that has finished with. The rank's own stage needs nothing received, so its
 * product is computed first, while the first broadcasts move, and kept until its place in the
 * order; the result is bitwise the same as without overlap. Open MPI moves a nonblocking
 * broadcast only inside MPI calls, so every overlapped SpMM runs in row chunks with an
 * MPI_Testall of the posted broadcasts between them (fg_scheme_spmm_progress): the transfers
 * progress while the SpMM runs instead of all in the next wait.
 *
 * Under --precision bf16 the blocks travel as bf16: the owner rounds its rows once per
 * aggregation (fg_scheme_rows_bf16, into s->rows16; a hidden the model stores as bf16 goes as
 * it is, through aggregate16), broadcasts those, and every stage's SpMM gathers the received
 * bf16 block as it is (fg_scheme_spmm_bf16[_progress]). Every SpMM rounds
 * its rows to bf16 anyway, so the values, and every bit of the result, are those of fp32 rows
 * rounded at the receiver; the bytes halve.
 *
 * Volume per aggregation of width f: the owner of block j sends (P-1) n_j f e bytes in P-1
 * messages (counted as if sent directly, whatever tree MPI uses), every other rank receives
 * n_j f e bytes in one message; e = 4 (fp32) or 2 (bf16). The backward pass (Âᵀ) does the same
 * with the blocks of Âᵀ.
 */
#include <string.h>

#include "kernels/fg_kernels.h"
#include "schemes/fg_partition.h"

typedef struct impl_1d {
  fg_part_local part;
  fg_csr *blk_a;  /* (P) A(i, j) */
  fg_csr *blk_at; /* (P) Aᵀ(i, j); NULL when Â is symmetric */
  int overlap;
  int *stages; /* (P) the non-empty blocks, in increasing order */
  int nstages;
  int64_t max_block;
  void *buf[2]; /* (max_block x cap_f, cap_esz bytes an element: fp32 or bf16) receive buffers;
                   the second only with overlap */
  float *own;   /* (n_local x cap_f) with overlap: this rank's own stage's product */
  int64_t cap_f, cap_esz;
  MPI_Request *req; /* (P) with overlap: stage k's broadcast */
  void **x;         /* (P) with overlap: where stage k's rows are (a buffer or the input) */
} impl_1d;

/* MPI wants a non-const buffer for a broadcast even at its root, which only reads it. */
static void *unconst(const void *p) {
  return (void *)(uintptr_t)p;
}

static void free_blocks(fg_csr *blk, int P) {
  if (!blk) return;
  for (int j = 0; j < P; j++) fg_csr_free(&blk[j]);
  free(blk);
}

/* Collective: make the receive buffers hold width f at esz bytes an element. Every rank sees the
 * same sequence of f and esz, so every rank grows at the same call and all agree on the
 * outcome. */
static fg_status ensure_buffers(fg_scheme *s, int64_t f, int64_t esz) {
  fg_status st = FG_OK;
  impl_1d *im = s->impl;
  const int nbuf = im->overlap ? 2 : 1;
  if ((f <= im->cap_f && esz <= im->cap_esz) || s->dist->size == 1) return FG_OK;
  f = FG_MAX(f, im->cap_f);
  esz = FG_MAX(esz, im->cap_esz);
  for (int b = 0; b < 2; b++) {
    fg_free_aligned(im->buf[b]);
    im->buf[b] = NULL;
  }
  fg_free_aligned(im->own);
  im->own = NULL;
  im->cap_f = im->cap_esz = 0;
  for (int b = 0; b < nbuf && st == FG_OK; b++) {
    im->buf[b] = fg_malloc_aligned((size_t)FG_MAX(im->max_block * f * esz, 1));
    if (!im->buf[b])
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                        "1d: out of memory for a %lld x %lld broadcast buffer",
                        (long long)im->max_block, (long long)f);
  }
  if (im->overlap && st == FG_OK) {
    im->own = fg_malloc_aligned((size_t)FG_MAX(s->n_local * f, 1) * sizeof(float));
    if (!im->own)
      st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                        "1d: out of memory for a %lld x %lld product buffer",
                        (long long)s->n_local, (long long)f);
  }
  FG_CHECK(fg_dist_agree(s->dist, st));
  im->cap_f = f;
  im->cap_esz = esz;
cleanup:
  return st;
}

static void count_stage(fg_dist *d, int root, int64_t bytes) {
  if (d->rank == root) {
    for (int r = 0; r < d->size - 1; r++) fg_dist_count_send(d, bytes);
  } else {
    fg_dist_count_recv(d, bytes);
  }
}

/* out (+)= A(i, j) x for one stage, x bf16 rows when x16, else fp32; the first stage with
 * entries writes, later ones add. The n requests (with overlap, the broadcasts posted so far)
 * are progressed between row chunks. */
static fg_status stage_multiply(fg_scheme *s, const fg_csr *Aij, const void *x, int x16,
                                float *out, int64_t f, int *first, MPI_Request *reqs, int n) {
  fg_status st = FG_OK;
  if (Aij->nnz == 0) return FG_OK;
  if (x16)
    FG_CHECK(fg_scheme_spmm_bf16_progress(s, Aij, x, f, out, !*first, reqs, n));
  else
    FG_CHECK(fg_scheme_spmm_progress(s, Aij, x, f, out, !*first, reqs, n));
  *first = 0;
cleanup:
  return st;
}

/* Post the broadcasts of the stages from *posted on, in order (every rank posts the same
 * sequence), while a receive buffer is free: the t-th stage this rank receives goes into
 * buf[t % 2], free once the SpMM of received stage t - 2 is done (*recv_done of them are); its
 * own stage sends its rows `in` (fp32 or bf16, as row says; esz bytes an element) and needs
 * none. */
static fg_status post_stages(fg_scheme *s, const void *in, int64_t f, int64_t esz,
                             MPI_Datatype row, int *posted, int *recv_posted, int recv_done) {
  fg_status st = FG_OK;
  impl_1d *im = s->impl;
  fg_dist *d = s->dist;
  while (*posted < im->nstages) {
    const int k = *posted, j = im->stages[k];
    const int64_t nj = im->part.offs[j + 1] - im->part.offs[j];
    double t0;
    if (j != d->rank && *recv_posted >= recv_done + 2) break;
    im->x[k] = j == d->rank ? unconst(in) : im->buf[(*recv_posted)++ % 2];
    t0 = fg_now();
    FG_CHECK_MPI(MPI_Ibcast(im->x[k], (int)nj, row, j, d->comm, &im->req[k]));
    d->counters.seconds_comm += fg_now() - t0;
    count_stage(d, j, nj * f * esz);
    (*posted)++;
  }
cleanup:
  return st;
}

/* --overlap. This rank's own stage needs nothing received, so its product A(i, i) H_i comes
 * first, computed while the first broadcasts move, into im->own, and is added to the output at
 * its place in the order (straight into the output when no earlier stage has entries). The
 * kernel sums a row's stage product from zero and then adds it to the output (acc + y), so
 * adding the kept product there gives the same bits. Then the other stages in order: wait for
 * stage k, multiply while the later ones move (the SpMMs test every posted broadcast between
 * row chunks: fg_scheme_spmm_progress), post what the freed buffer allows. At the end, wait for
 * this rank's own broadcast (its sends). in: this rank's rows as they travel, bf16 when x16
 * (s->rows16, which nothing rounds over until the last wait), else fp32. */
static fg_status apply_overlap(fg_scheme *s, const fg_csr *blk, const void *in, int x16,
                               float *out, int64_t f, MPI_Datatype row, int *first) {
  fg_status st = FG_OK;
  impl_1d *im = s->impl;
  fg_dist *d = s->dist;
  const int m = im->nstages, me = d->rank;
  const int64_t n = s->n_local * f, esz = x16 ? 2 : 4;
  int own = -1, posted = 0, recv_posted = 0, recv_done = 0, direct = 1;
  for (int k = 0; k < m; k++) {
    im->req[k] = MPI_REQUEST_NULL;
    if (im->stages[k] == me) own = k;
  }
  for (int k = 0; k < own; k++) direct &= blk[im->stages[k]].nnz == 0;
  FG_CHECK(post_stages(s, in, f, esz, row, &posted, &recv_posted, recv_done));
  if (own >= 0 && blk[me].nnz > 0) {
    int own_first = 1; /* the product is written, never added */
    FG_CHECK(stage_multiply(s, &blk[me], in, x16, direct ? out : im->own, f, &own_first,
                            im->req, posted));
    if (direct) *first = 0;
  }
  for (int k = 0; k < m; k++) {
    const int j = im->stages[k];
    if (k == own) {
      if (blk[j].nnz > 0 && !direct) {
        if (*first)
          memcpy(out, im->own, (size_t)n * sizeof(float));
        else
          fg_axpy(out, 1.0f, im->own, n); /* out + 1 own: exactly the kernel's acc + y */
        *first = 0;
      }
      continue;
    }
    FG_CHECK(fg_dist_waitall(d, &im->req[k], 1, 1));
    FG_CHECK(stage_multiply(s, &blk[j], im->x[k], x16, out, f, first, im->req, posted));
    recv_done++;
    FG_CHECK(post_stages(s, in, f, esz, row, &posted, &recv_posted, recv_done));
  }
  FG_CHECK(fg_dist_waitall(d, im->req, m, 1));
cleanup:
  return st;
}

/* out = blk · the rows: in (fp32), or in16 (bf16 already, in NULL: aggregate16) */
static fg_status apply_1d(fg_scheme *s, const fg_csr *blk, const float *in, const fg_bf16 *in16,
                          float *out, int64_t f) {
  fg_status st = FG_OK;
  impl_1d *im = s->impl;
  fg_dist *d = s->dist;
  const int64_t *offs = im->part.offs;
  MPI_Datatype row = MPI_DATATYPE_NULL;
  /* bf16 on the wire: the rows broadcast and gathered are this rank's input rounded once (or
   * the bf16 rows given, which are those) */
  const int x16 = in16 || (s->bf16 && d->size > 1);
  const int64_t esz = x16 ? 2 : 4;
  const void *mine = in;
  int first = 1, fi = 0;
  double t0;
  FG_CHECK(ensure_buffers(s, f, esz));
  if (d->size > 1) {
    FG_CHECK(fg_mpi_count(f, &fi));
    FG_CHECK_MPI(MPI_Type_contiguous(fi, x16 ? MPI_UINT16_T : MPI_FLOAT, &row));
    FG_CHECK_MPI(MPI_Type_commit(&row));
  }
  if (in16) {
    mine = in16;
  } else if (x16) {
    const fg_bf16 *h = NULL;
    FG_CHECK(fg_scheme_rows_bf16(s, in, s->n_local * f, &h));
    mine = h;
  }
  if (d->size == 1) {
    FG_CHECK(stage_multiply(s, &blk[0], mine, x16, out, f, &first, NULL, 0));
  } else if (!im->overlap) {
    for (int k = 0; k < im->nstages; k++) {
      const int j = im->stages[k];
      const int64_t nj = offs[j + 1] - offs[j];
      void *x = j == d->rank ? unconst(mine) : im->buf[0];
      t0 = fg_now();
      FG_CHECK_MPI(MPI_Bcast(x, (int)nj, row, j, d->comm));
      d->counters.seconds_comm += fg_now() - t0;
      count_stage(d, j, nj * f * esz);
      FG_CHECK(stage_multiply(s, &blk[j], x, x16, out, f, &first, NULL, 0));
    }
  } else {
    FG_CHECK(apply_overlap(s, blk, mine, x16, out, f, row, &first));
  }
  if (first && s->n_local > 0) memset(out, 0, (size_t)(s->n_local * f) * sizeof(float));
cleanup:
  if (row != MPI_DATATYPE_NULL) MPI_Type_free(&row);
  return st;
}

static fg_status agg_1d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_1d *im = s->impl;
  return apply_1d(s, im->blk_a, in, NULL, out, f);
}

/* a hidden stored as bf16: broadcast as it is (no widening, no second rounding) */
static fg_status agg16_1d(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_1d *im = s->impl;
  return apply_1d(s, im->blk_a, NULL, in, out, f);
}

static fg_status agg_t_1d(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_1d *im = s->impl;
  return apply_1d(s, im->blk_at ? im->blk_at : im->blk_a, in, NULL, out, f);
}

/* a gradient stored as bf16: broadcast as it is */
static fg_status agg16_t_1d(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_1d *im = s->impl;
  (void)l;
  return apply_1d(s, im->blk_at ? im->blk_at : im->blk_a, NULL, in, out, f);
}

static void destroy_1d(fg_scheme *s) {
  impl_1d *im = s->impl;
  free_blocks(im->blk_a, im->part.parts);
  free_blocks(im->blk_at, im->part.parts);
  free(im->stages);
  free(im->req);
  free(im->x);
  fg_free_aligned(im->buf[0]);
  fg_free_aligned(im->buf[1]);
  fg_free_aligned(im->own);
  fg_part_local_free(&im->part);
}

static const fg_scheme_ops ops_1d = {
    .name = "1d",
    .shape = fg_scheme_shape_rows,
    .aggregate = agg_1d,
    .aggregate16 = agg16_1d,
    .aggregate_t = agg_t_1d,
    .aggregate16_t = agg16_t_1d,
    .reduce_grads = fg_scheme_allreduce_grads,
    .col_sum = fg_scheme_allreduce_cols,
    .agg_last_ok = 1,
    .destroy = destroy_1d,
};

static fg_status build_1d(impl_1d *im) {
  fg_status st = FG_OK;
  const int P = im->part.parts;
  FG_CALLOC(im->blk_a, P);
  FG_CHECK(fg_part_split_blocks(&im->part.A, im->part.offs, P, im->blk_a));
  if (!im->part.symmetric) {
    FG_CALLOC(im->blk_at, P);
    FG_CHECK(fg_part_split_blocks(&im->part.At, im->part.offs, P, im->blk_at));
  }
  FG_ALLOC(im->stages, P);
  if (im->overlap) {
    FG_ALLOC(im->req, P);
    FG_ALLOC(im->x, P);
  }
  im->nstages = 0;
  for (int j = 0; j < P; j++) {
    const int64_t nj = im->part.offs[j + 1] - im->part.offs[j];
    im->max_block = FG_MAX(im->max_block, nj);
    if (nj > 0) im->stages[im->nstages++] = j;
  }
  /* the local rows are now held by the blocks */
  fg_csr_free(&im->part.A);
  fg_csr_free(&im->part.At);
cleanup:
  return st;
}

fg_status fg_scheme_1d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                              fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl_1d *im = NULL;
  int64_t recv_rows, sent_rows, nl;
  *out = NULL;
  FG_CHECK(fg_scheme_new(dist, &ops_1d, sizeof *im, &s));
  im = s->impl;
  im->overlap = cfg->overlap;
  FG_CHECK(fg_part_distribute(dist, ds, cfg, 1, s, &im->part));
  st = build_1d(im);
  FG_CHECK(fg_dist_agree(dist, st));
  nl = s->n_local;
  recv_rows = im->part.n_global - nl;
  sent_rows = (int64_t)(dist->size - 1) * nl;
  FG_CHECK(
      fg_part_report(dist, s, &im->part, "1d", cfg->order, recv_rows, sent_rows,
                     cfg->verbose ? cfg->log : NULL));
  *out = s;
  s = NULL;
cleanup:
  fg_scheme_destroy(&s);
  return st;
}
