/* scheme_1p5d.c -- sparsity-aware 1.5D (Mukhopadhyay et al., §4.2, Algorithm 2): P = P/c x c
 * ranks; the nodes are cut into K = P/c block rows, and block row i of Â and of every H lives on
 * the c replicas (i, 0) .. (i, c-1), ranks i c .. i c + c - 1 (consecutive, so a node's ranks
 * share the all-reduce).
 *
 * Replica j multiplies a 1/c share of block row i's columns: the blocks [b_j, b_{j+1}) with
 * b_j = fg_block_start(K, c, j) (Algorithm 2's s = K / c stages; K need not be a multiple of c,
 * the shares then differ by a block). It receives only the rows NnzCols(i, k) of the blocks k of
 * its share, through the sparsity-aware exchange (fg_sa.h, with rep = c: the c replicas of block
 * k share its sending), and a slice of the diagonal block A_ii (every replica holds H_i;
 * Algorithm 2 leaves A_ii, after a partitioner most of the row's nonzeros, to one replica),
 * cut so that the replicas' nonzeros even out (fg_sa_diag_cuts),
 * and the partial products of the c replicas are summed by an all-reduce over the row's group -- after which
 * every replica holds the same bits of Â H, and runs the same dense layer on them.
 *
 * Why an all-reduce and not a reduce-scatter plus an all-gather: the dense layers run on the
 * whole replicated block (Algorithm 2's GEMM on Z_i), so every replica needs every row of the
 * sum; MPI's all-reduce of a large buffer is itself a reduce-scatter and an all-gather (ring or
 * Rabenseifner), with the same bytes and one call less to synchronize on. Splitting the dense
 * work among the replicas would need a second row layout between aggregations.
 *
 * Backward: Âᵀ G the same way (Âᵀ's own plan for a directed graph). What every rank counts:
 * the replicas hold copies, so the primary copy (replica 0) alone counts rows in the loss, the
 * outputs and BatchNorm's column sums, and gives the gradients: the others' weight gradients are
 * zeroed before the one all-reduce over every rank.
 *
 * --precision bf16: the exchanged rows travel as bf16 (fg_sa_apply: the sender rounds them once,
 * the off part's SpMM gathers them as they are: the same bits as fp32 rows rounded at the
 * receiver). The all-reduce of the replicas' partial sums stays fp32: it is a reduction, whose
 * operands are fp32 sums, not rows an SpMM rounds; sent as bf16 they would be rounded before
 * adding, once per replica, so the result would depend on c (and on P) by up to 2^-8 relative,
 * and MPI would add bf16 in some ring order. In fp32 every replica holds the same bits as now,
 * and the dense layer rounds the summed rows to bf16 once, as on one process.
 *
 * Volume per aggregation of width f, rank (i, j): it receives sum over the blocks k != i of its
 * share of |NnzCols(i, k)| f e bytes (about 1/c of 1d-sa's on K ranks; e = 4 fp32, 2 bf16),
 * sends the rows its block's receivers ask of it, and moves 2 n_i f 4 (c-1)/c bytes in the
 * all-reduce (fp32 at either precision). Memory: the
 * rank's rows of every activation are n/K = c n/P (c times 1d-sa's), its nonzeros about nnz/P.
 */
#include <string.h>

#include "dist/fg_group.h"
#include "schemes/fg_partition.h"
#include "schemes/fg_sa.h"

typedef struct impl_15 {
  fg_part_local part;
  fg_sa_op a, at; /* at is used only when Â is not symmetric */
  fg_sa_exchange x;
  fg_group row;   /* the c replicas of this rank's block row */
  int c, rep;     /* the replication, and this rank's replica j */
} impl_15;

/* out = the replica's partial product, summed over the row's replicas. */
static fg_status apply_15(fg_scheme *s, const fg_sa_op *op, const float *in,
                          const fg_bf16 *in16, float *out, int64_t f) {
  fg_status st = FG_OK;
  impl_15 *im = s->impl;
  FG_CHECK(fg_sa_apply(s, &im->x, op, in, in16, out, f));
  if (im->c > 1) FG_CHECK(fg_group_allreduce_f32(&im->row, out, s->n_local * f));
cleanup:
  return st;
}

static fg_status agg_15(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_15 *im = s->impl;
  (void)l;
  return apply_15(s, &im->a, in, NULL, out, f);
}

/* a hidden stored as bf16: its halo rows sent as they are */
static fg_status agg16_15(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_15 *im = s->impl;
  (void)l;
  return apply_15(s, &im->a, NULL, in, out, f);
}

static fg_status agg_t_15(fg_scheme *s, int l, const float *in, float *out, int64_t f) {
  impl_15 *im = s->impl;
  (void)l;
  return apply_15(s, im->part.symmetric ? &im->a : &im->at, in, NULL, out, f);
}

/* a gradient stored as bf16: its halo rows sent as they are */
static fg_status agg16_t_15(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f) {
  impl_15 *im = s->impl;
  (void)l;
  return apply_15(s, im->part.symmetric ? &im->a : &im->at, NULL, in, out, f);
}

static void shape_15(const fg_scheme *s, int l, const int64_t *widths, fg_layer_shape *out) {
  const impl_15 *im = s->impl;
  fg_scheme_shape_rows(s, l, widths, out);
  out->in_primary = out->out_primary = out->agg_primary = im->rep == 0;
}

/* The replicas' gradients are copies of replica 0's: zeroed, the all-reduce over every rank
 * sums each block row's once (and gives every rank the same bits). */
static fg_status reduce_grads_15(fg_scheme *s, float *grads, int64_t n) {
  const impl_15 *im = s->impl;
  if (im->rep != 0) memset(grads, 0, (size_t)n * sizeof *grads);
  return fg_dist_allreduce_f32(s->dist, grads, n);
}

static fg_status col_sum_15(fg_scheme *s, int l, double *buf, int64_t n) {
  const impl_15 *im = s->impl;
  (void)l;
  if (im->rep != 0) memset(buf, 0, (size_t)n * sizeof *buf);
  return fg_dist_allreduce_f64(s->dist, buf, n);
}

static void destroy_15(fg_scheme *s) {
  impl_15 *im = s->impl;
  fg_sa_op_free(&im->a);
  fg_sa_op_free(&im->at);
  fg_sa_exchange_free(&im->x);
  fg_group_free(&im->row);
  fg_part_local_free(&im->part);
}

static const fg_scheme_ops ops_15 = {
    .name = "1.5d",
    .shape = shape_15,
    .aggregate = agg_15,
    .aggregate16 = agg16_15,
    .aggregate_t = agg_t_15,
    .aggregate16_t = agg16_t_15,
    .reduce_grads = reduce_grads_15,
    .col_sum = col_sum_15,
    .agg_last_ok = 1,
    .destroy = destroy_15,
};

int fg_replicate_valid(int ranks, int *out, int cap) {
  int n = 0;
  for (int c = 1; (int64_t)c * c <= ranks; c++)
    if (ranks % c == 0) {
      if (n < cap) out[n] = c;
      n++;
    }
  return n;
}

fg_status fg_replicate_check(int c, int ranks) {
  fg_status st = FG_OK;
  char valid[256];
  int cs[64];
  const int n = FG_MIN(fg_replicate_valid(ranks, cs, 64), 64);
  size_t k = 0;
  valid[0] = '\0';
  for (int v = 0; v < n && k < sizeof valid; v++)
    k += (size_t)snprintf(valid + k, sizeof valid - k, "%s%d", k ? ", " : "", cs[v]);
  FG_REQUIRE(c >= 1 && ranks % c == 0 && (int64_t)c * c <= ranks, FG_ERR_INVALID_ARG,
             "--replicate %d on %d process%s: c must divide P and be at most P / c (every "
             "replica multiplies a share of the block columns); valid here: %s", c, ranks,
             ranks == 1 ? "" : "es", valid);
cleanup:
  return st;
}

fg_status fg_scheme_1p5d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                fg_scheme **out) {
  fg_status st = FG_OK;
  fg_scheme *s = NULL;
  impl_15 *im = NULL;
  const int c = cfg->replicate > 0 ? cfg->replicate : 1;
  *out = NULL;
  FG_CHECK(fg_dist_agree(dist, fg_replicate_check(c, dist->size)));
  FG_CHECK(fg_scheme_new(dist, &ops_15, sizeof *im, &s));
  im = s->impl;
  im->row.comm = MPI_COMM_NULL;
  im->c = c;
  im->rep = dist->rank % c;
  FG_CHECK(fg_part_distribute(dist, ds, cfg, c, s, &im->part));
  FG_CHECK(fg_dist_agree(dist, fg_group_split(dist, dist->rank / c, im->rep, &im->row)));
  FG_CHECK(fg_sa_plan(dist, &im->part.A, im->part.offs, im->part.parts, c, &im->a));
  fg_csr_free(&im->part.A);
  if (!im->part.symmetric) {
    FG_CHECK(fg_sa_plan(dist, &im->part.At, im->part.offs, im->part.parts, c, &im->at));
    fg_csr_free(&im->part.At);
  }
  {
    const fg_sa_op ops[2] = {im->a, im->at};
    FG_CHECK(fg_sa_exchange_init(dist, &im->x, ops, 2, cfg->overlap));
  }
  s->local_nnz = im->a.diag.nnz + im->a.off.nnz;
  FG_CHECK(fg_part_report(dist, s, &im->part, "1.5d", cfg->order, im->a.n_halo, im->a.n_send,
                          cfg->verbose ? cfg->log : NULL));
  *out = s;
  s = NULL;
cleanup:
  fg_scheme_destroy(&s);
  return st;
}
