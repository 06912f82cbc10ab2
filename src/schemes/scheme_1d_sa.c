/* scheme_1d_sa.c -- sparsity-aware 1D (Mukhopadhyay et al., §4.1): every rank receives exactly
 * the rows of H that its block row of Â references.
 *
 * Rank i holds block row i of Â and multiplies all of it through the exchange of fg_sa.h (one
 * replica of each block: fg_sa_plan with rep = 1 and every column): the diagonal block A(i, i)
 * locally, the off-diagonal part against the halo rows NnzCols(i, j) received from each j.
 *
 * Backward: Âᵀ·G. For a symmetric Â the forward plan serves as is; for a directed graph the
 * rows of Âᵀ are distributed too and get their own plan (Âᵀ's NnzCols).
 *
 * Volume per aggregation of width f: rank i receives sum_j |NnzCols(i, j)| f 4 bytes and sends
 * sum_j |NnzCols(j, i)| f 4 bytes (2 under --precision bf16: the rows travel as bf16), one message
 * per nonempty pair; never more than 1d's.
 */
#include <string.h>

#include "schemes/fg_partition.h"
#include "schemes/fg_sa.h"

typedef struct impl_sa {
  fg_part_local part;
  fg_sa_op a, at; /* at is used only when Â is not symmetric */
  fg_sa_exchange x;
} impl_sa;

static fg_status agg_sa(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  (void)l;
  return fg_sa_apply(s, &im->x, &im->a, in, NULL, out, f);
}

/* a hidden stored as bf16: its halo rows sent as they are (no widening, no second rounding) */
static fg_status agg16_sa(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  (void)l;
  return fg_sa_apply(s, &im->x, &im->a, NULL, in, out, f);
}

static fg_status agg_t_sa(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  (void)l;
  return fg_sa_apply(s, &im->x, im->part.symmetric ? &im->a : &im->at, in, NULL, out, f);
}

/* a gradient stored as bf16: its halo rows sent as they are */
static fg_status agg16_t_sa(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_sa *im = s->impl;
  (void)l;
  return fg_sa_apply(s, &im->x, im->part.symmetric ? &im->a : &im->at, NULL, in, out, f);
}

/* complete rows a block at a time, for a bf16 model's fused epilogues (not with --overlap:
 * every block needs the halo, so nothing would overlap the exchange) */
static fg_status agg16_rows_sa(fg_scheme *s, int l, int t, const fg_bf16 *in, int64_t f,
                               int64_t block, fg_rows_sink sink, void *ctx) {
  impl_sa *im = s->impl;
  (void)l;
  return fg_sa_apply_rows(s, &im->x, t && !im->part.symmetric ? &im->at : &im->a, in, f, block,
                          sink, ctx);
}

static void destroy_sa(fg_scheme *s) {
  impl_sa *im = s->impl;
  fg_sa_op_free(&im->a);
  fg_sa_op_free(&im->at);
  fg_sa_exchange_free(&im->x);
  fg_part_local_free(&im->part);
}

/* The operations, with aggregate16_rows or without it (--overlap) */
#define OPS_SA(rows16)                                                                       \
  {                                                                                          \
    .name = "1d-sa", .shape = fg_scheme_shape_rows, .aggregate = agg_sa,                     \
    .aggregate16 = agg16_sa, .aggregate_t = agg_t_sa, .aggregate16_t = agg16_t_sa,           \
    .aggregate16_rows = rows16, .reduce_grads = fg_scheme_allreduce_grads,                   \
    .col_sum = fg_scheme_allreduce_cols, .agg_last_ok = 1, .destroy = destroy_sa,            \
  }
static const fg_scheme_ops ops_sa = OPS_SA(NULL), ops_sa_rows = OPS_SA(agg16_rows_sa);

fg_status fg_scheme_1d_sa_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                 fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl_sa *im = NULL;
  *out = NULL;
  FG_CHECK(fg_scheme_new(dist, cfg->overlap ? &ops_sa : &ops_sa_rows, sizeof *im, &s));
  im = s->impl;
  FG_CHECK(fg_part_distribute(dist, ds, cfg, 1, s, &im->part));
  FG_CHECK(fg_sa_plan(dist, &im->part.A, im->part.offs, im->part.parts, 1, &im->a));
  fg_csr_free(&im->part.A);
  if (!im->part.symmetric) {
    FG_CHECK(fg_sa_plan(dist, &im->part.At, im->part.offs, im->part.parts, 1, &im->at));
    fg_csr_free(&im->part.At);
  }
  {
    const fg_sa_op ops[2] = {im->a, im->at};
    FG_CHECK(fg_sa_exchange_init(dist, &im->x, ops, 2, cfg->overlap));
  }
  FG_CHECK(fg_part_report(dist, s, &im->part, "1d-sa", cfg->order, im->a.n_halo, im->a.n_send,
                          cfg->verbose ? cfg->log : NULL));
  *out = s;
  s = NULL;
cleanup:
  fg_scheme_destroy(&s);
  return st;
}
