/* test_scheme_ops.c -- run under mpiexec with P ranks (P = 1..5): every scheme's operations,
 * called directly (no model, no training), give the one-process products.
 *
 * Every rank builds the same two graphs and their one-process Â and Âᵀ: a directed R-MAT graph
 * (256 nodes, so Âᵀ != Â; widths 20, 7, 5, 5 that grids cut unevenly) and a directed 3-node
 * graph (fewer nodes than ranks and narrower widths than grid dimensions: empty node and width
 * blocks). For serial (P = 1), 1d and 1d-sa (natural and random order, with and without overlap)
 * and 3d on every grid of P (no, single and double permutation x 1 or 2 aggregation blocks x
 * fixed or learned features), three layers each, it proves:
 *  - the shapes chain (layer l's output layout is layer l+1's input layout), the primary copies
 *    of inputs, outputs and the W and b pieces cover every element exactly once, and the last
 *    layer's rows are the scheme's labelled rows;
 *  - aggregate, aggregate_t, move_rows and move_rows_t of an input keyed by (original node id,
 *    global column) equal Â X, Âᵀ X, X and X computed on the whole graph in the original
 *    numbering;
 *  - gather_weights assembles two known weight matrices' and b's blocks from the pieces, and
 *    reduce_weight_grads, reduce_product and reduce_input_grad sum over exactly the ranks of
 *    grid dimension c, b and a (nothing for the 1D schemes): each rank passes values scaled by
 *    1 + its coordinate there, so a sum over another group of the same size shows;
 *  - row_max and row_sum turn the loss kernels' column-block statistics into whole rows'
 *    (maximum with ties to the lowest column, exp sum);
 *  - col_sum turns the column sums of a rank's output rows into the sums over every node, each
 *    counted once (3d: along c, not over the replicas along b), and counts its all-reduce;
 *  - the layer-0 input is the dataset's features (gathered from the pieces when learned), and a
 *    learned piece's gradient is its rows of Â_0ᵀ dH;
 *  - 3d counts, in the current phase, a ring all-reduce of each aggregation block along the
 *    group it sums over;
 *  - 3d under bf16: move_rows_bf16 (and move_rows16, which keeps them as bf16) is bf16(X)'s
 *    rows bit for bit at 2 bytes an element (half the fp32 move's), move_rows and move_rows_t
 *    still move X exactly at 4, and aggregate is Â bf16(X) with fp32 partial sums (4 bytes);
 *    aggregate16 on bf16(X)'s rows gives aggregate's bits and bytes.
 * A line per configuration on rank 0 gives the largest relative error over all ranks. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fg_kernels.h"
#include "plan/fg_registry.h"
#include "schemes/fg_grid3d.h"
#include "test_data.h"
#include "testutil.h"

enum { NL = 3 }; /* layers: 3d cycles three shards (six with double permutation) */
static const double TOL = 1e-5; /* float sums of the same terms in another order */

static int rank, nprocs;

/* Value of node v, global column j of an input: a hash, so that a row or a column taken from
 * the wrong place changes the product. */
static float fx(int64_t v, int64_t j) {
  const uint64_t h = (uint64_t)v * 2654435761u + (uint64_t)j * 40503u + 17u;
  return (float)((h >> 5) % 1999) / 999.0f - 1.0f;
}

/* (M X)[v][j] on the whole matrix M, X = fx. */
static double ref_mul(const fg_csr *M, int64_t v, int64_t j) {
  double s = 0.0;
  for (int64_t k = M->rowptr[v]; k < M->rowptr[v + 1]; k++)
    s += (double)M->val[k] * (double)fx(M->col[k], j);
  return s;
}

/* A logit: three values per row, so a row's maximum is often in two columns of different
 * column blocks and the tie rule matters. */
static float fz(int64_t v, int64_t j) { return (float)((v + j) % 3) - 0.5f * (float)(v % 2); }

/* Element (r, c) of the whole W_l and c of b_l: distinct integers, exact in float. */
/* a layer's matrices (SAGE's two), vectors (b, LayerNorm's) and scalars (GIN's epsilon) */
enum { MATS = 2, VECS = 3, SCALS = 1 };
static float gw(int l, int64_t r, int64_t c) { return (float)(1000000 * l + 1000 * r + c + 1); }
static float gb(int l, int64_t c) { return (float)(-1000 * l - c - 1); }

static double rel(double a, double b) { return fabs(a - b) / fmax(1.0, fabs(b)); }

/* 1 + 2 + ... + G: the sum over a group of G ranks of (1 + coordinate). */
static int tri(int G) { return G * (G + 1) / 2; }

/* Bytes fg_group counts for the blocked all-reduce of an aggregation (spmm_allreduce): a ring
 * all-reduce of each of min(blocks, rows) row blocks of esz-byte elements, nothing in a group
 * of one. */
static int64_t ring_bytes_esz(int64_t rows, int64_t f, int G, int blocks, int64_t esz) {
  const int64_t nb = FG_MIN((int64_t)blocks, rows);
  int64_t sum = 0;
  if (G == 1 || f == 0 || rows == 0) return 0;
  if (nb <= 1) return 2 * rows * f * esz * (G - 1) / G;
  for (int64_t k = 0; k < nb; k++)
    sum += 2 * fg_block_size(rows, nb, k) * f * esz * (G - 1) / G;
  return sum;
}
static int64_t ring_bytes(int64_t rows, int64_t f, int G, int blocks) {
  return ring_bytes_esz(rows, f, G, blocks, 4);
}

typedef struct setup {
  const char *scheme, *order;
  int overlap, double_perm, agg_blocks, learn;
  int aggregation; /* halo: an fg_halo_rule */
  int replicate;   /* 1.5d: the largest valid c of P (1 where none other is) */
} setup;

/* What one configuration checks against. */
typedef struct ctx {
  fg_dist *d;
  const fg_dataset *ds;
  const fg_csr *A, *At;
  const fg_scheme_info *e;
  const setup *su;
  int grid[3];
  char what[128];  /* the configuration, for messages */
  int64_t widths[NL + 1];
  float *x, *y, *z; /* n x widest floats each */
  float *piece, *block;
} ctx;

enum { E_AGG, E_AGG_T, E_MOVE, E_MOVE_T, E_INPUT, E_INPUT_GRAD, E_ROW_SUM, E_COUNT };
static const char *const err_name[E_COUNT] = {"aggregate", "aggregate_t", "move_rows",
                                              "move_rows_t", "input", "input_grad", "row_sum"};

/* The group sizes G and this rank's coordinates q in the roles (a, b, c) of layer l; 1 and 0
 * for a 1D scheme, whose reductions sum over nothing. */
static void layer_groups(const ctx *c, int l, int G[3], int q[3]) {
  int role[3], coord[3];
  G[0] = G[1] = G[2] = 1;
  q[0] = q[1] = q[2] = 0;
  if (!c->e->grid) return;
  fg_layer_roles(l, &role[0], &role[1], &role[2]);
  fg_grid_coords(c->grid, rank, coord);
  for (int k = 0; k < 3; k++) {
    G[k] = c->grid[role[k]];
    q[k] = coord[role[k]];
  }
}

/* Count the elements each primary copy claims; after the sum over ranks every element must be
 * claimed once. Returns the elements claimed 0 or 2+ times. */
static int64_t claimed_not_once(int *cnt, int64_t len) {
  int64_t bad = 0;
  MPI_Allreduce(MPI_IN_PLACE, cnt, (int)len, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  for (int64_t k = 0; k < len; k++) bad += cnt[k] != 1;
  return bad;
}

/* The shapes: ids and column ranges in bounds (returns 0 on every rank if some rank's are not,
 * so that no check indexes with them), layouts that chain, primary copies that cover. */
static int check_shapes(ctx *c, fg_scheme *s, const fg_layer_shape *sh) {
  const int64_t n = c->ds->num_nodes;
  const int64_t *w = c->widths;
  int sane = 1, all_sane = 0, chain = 1;
  for (int l = 0; l < NL; l++) {
    const fg_layer_shape *p = &sh[l];
    sane &= p->n_in >= 0 && p->n_out >= 0 && p->n_in <= n && p->n_out <= n;
    sane &= p->col0_in >= 0 && p->w_in >= 0 && p->col0_in + p->w_in <= w[l];
    sane &= p->col0_out >= 0 && p->w_out >= 0 && p->col0_out + p->w_out <= w[l + 1];
    sane &= p->wp0 >= 0 && p->wp_len >= 0 && p->wp0 + p->wp_len <= p->w_in * p->w_out;
    sane &= p->bp0 >= 0 && p->bp_len >= 0 && p->bp0 + p->bp_len <= p->w_out;
    for (int64_t i = 0; sane && i < p->n_in; i++) sane &= p->ids_in[i] >= 0 && p->ids_in[i] < n;
    for (int64_t i = 0; sane && i < p->n_out; i++)
      sane &= p->ids_out[i] >= 0 && p->ids_out[i] < n;
  }
  EXPECT_MSG(sane, "%s: a shape's ids or column ranges are out of bounds", c->what);
  MPI_Allreduce(&sane, &all_sane, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!all_sane) return 0;
  for (int l = 0; l + 1 < NL; l++) {
    const fg_layer_shape *p = &sh[l], *q = &sh[l + 1];
    chain &= p->n_out == q->n_in && p->w_out == q->w_in && p->col0_out == q->col0_in;
    for (int64_t i = 0; chain && i < p->n_out; i++) chain &= p->ids_out[i] == q->ids_in[i];
  }
  EXPECT_MSG(chain, "%s: a layer's output layout is not the next layer's input layout", c->what);
  for (int l = 0; l < NL; l++) {
    const fg_layer_shape *p = &sh[l];
    const int64_t nin = n * w[l], nout = n * w[l + 1], nw = w[l] * w[l + 1];
    int *cnt = calloc((size_t)(nin + nout + nw + w[l + 1] + nin), sizeof *cnt);
    int *cin, *cout, *cw, *cb, *cagg;
    if (!cnt) exit(2);
    cin = cnt;
    cout = cin + nin;
    cw = cout + nout;
    cb = cw + nw;
    cagg = cb + w[l + 1];
    /* an aggregated input: the output's rows, the input's columns */
    for (int64_t i = 0; p->agg_primary && i < p->n_out; i++)
      for (int64_t j = 0; j < p->w_in; j++) cagg[p->ids_out[i] * w[l] + p->col0_in + j]++;
    for (int64_t i = 0; p->in_primary && i < p->n_in; i++)
      for (int64_t j = 0; j < p->w_in; j++) cin[p->ids_in[i] * w[l] + p->col0_in + j]++;
    for (int64_t i = 0; p->out_primary && i < p->n_out; i++)
      for (int64_t j = 0; j < p->w_out; j++) cout[p->ids_out[i] * w[l + 1] + p->col0_out + j]++;
    for (int64_t k = 0; p->w_primary && k < p->wp_len; k++) {
      const int64_t e = p->wp0 + k;
      cw[(p->col0_in + e / p->w_out) * w[l + 1] + p->col0_out + e % p->w_out]++;
    }
    for (int64_t k = 0; p->b_primary && k < p->bp_len; k++) cb[p->col0_out + p->bp0 + k]++;
    EXPECT_MSG(claimed_not_once(cin, nin) == 0, "%s layer %d: input elements not held once by "
               "a primary copy", c->what, l);
    EXPECT_MSG(claimed_not_once(cout, nout) == 0, "%s layer %d: output elements not held once "
               "by a primary copy", c->what, l);
    EXPECT_MSG(claimed_not_once(cagg, nin) == 0, "%s layer %d: aggregated elements not held "
               "once by a primary copy", c->what, l);
    EXPECT_MSG(claimed_not_once(cw, nw) == 0, "%s layer %d: W elements not in exactly one "
               "primary piece", c->what, l);
    EXPECT_MSG(claimed_not_once(cb, w[l + 1]) == 0, "%s layer %d: b elements not in exactly one "
               "primary piece", c->what, l);
    free(cnt);
  }
  {
    /* the logits' rows are the rows the scheme holds labels and split for */
    const fg_layer_shape *p = &sh[NL - 1];
    int same = s->n_local == p->n_out;
    for (int64_t i = 0; same && i < p->n_out; i++) {
      const int64_t v = p->ids_out[i];
      same &= s->global_ids[i] == v && s->labels[i] == c->ds->labels[v] &&
              s->split[i] == c->ds->split[v];
    }
    EXPECT_MSG(same, "%s: the last layer's rows are not the scheme's labelled rows", c->what);
  }
  return 1;
}

/* 3d: the bytes the last operation counted, all in phase `phase`, sent and received. */
static void check_volume(const ctx *c, int l, const char *op, int phase, int64_t want) {
  const fg_comm_counters *k = &c->d->counters;
  int ok = 1;
  for (int ph = 0; ph < FG_PHASE_COUNT; ph++) {
    const int64_t expect = ph == phase ? want : 0;
    ok &= k->bytes_sent[ph] == expect && k->bytes_recv[ph] == expect;
  }
  EXPECT_MSG(ok, "%s layer %d: %s counted %lld bytes sent, %lld received in its phase; the ring "
             "all-reduce moves %lld", c->what, l, op, (long long)k->bytes_sent[phase],
             (long long)k->bytes_recv[phase], (long long)want);
}

static void reset_counters(ctx *c, int phase) {
  memset(&c->d->counters, 0, sizeof c->d->counters);
  c->d->phase = phase;
}

/* aggregate, aggregate_t and move_rows of layer l against the whole-graph products. */
static void check_products(ctx *c, fg_scheme *s, int l, const fg_layer_shape *sh,
                           double err[E_COUNT]) {
  const int64_t f = sh->w_in;
  int G[3], q[3];
  layer_groups(c, l, G, q);
  /* Â X: the input's column block, the output's rows; partial over a */
  for (int64_t i = 0; i < sh->n_in; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_in[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(s->ops->aggregate(s, l, c->x, c->y, f));
  if (c->e->grid)
    check_volume(c, l, "aggregate", FG_PHASE_FORWARD,
                 ring_bytes(sh->n_out, f, G[0], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++)
      err[E_AGG] = fmax(err[E_AGG], rel(c->y[i * f + j],
                                        ref_mul(c->A, sh->ids_out[i], sh->col0_in + j)));
  /* Âᵀ X: from the output's rows back to the input's; partial over c. 3d builds the transposed
   * shard only where a backward pass multiplies it (not layer 0 unless features are learned) */
  if (!c->e->grid || l > 0 || c->su->learn) {
    for (int64_t i = 0; i < sh->n_out; i++)
      for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_out[i], sh->col0_in + j);
    reset_counters(c, FG_PHASE_BACKWARD);
    EXPECT_OK(s->ops->aggregate_t(s, l, c->x, c->y, f));
    if (c->e->grid)
      check_volume(c, l, "aggregate_t", FG_PHASE_BACKWARD,
                   ring_bytes(sh->n_in, f, G[2], c->su->agg_blocks));
    for (int64_t i = 0; i < sh->n_in; i++)
      for (int64_t j = 0; j < f; j++)
        err[E_AGG_T] = fmax(err[E_AGG_T], rel(c->y[i * f + j],
                                              ref_mul(c->At, sh->ids_in[i], sh->col0_in + j)));
  }
  /* the identity in place of Â: the same rows, now in the output's layout */
  for (int64_t i = 0; i < sh->n_in; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_in[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(fg_scheme_move_rows(s, l, sh, c->x, c->y, f));
  if (c->e->grid)
    check_volume(c, l, "move_rows", FG_PHASE_FORWARD,
                 ring_bytes(sh->n_out, f, G[0], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++)
      err[E_MOVE] = fmax(err[E_MOVE], rel(c->y[i * f + j],
                                          fx(sh->ids_out[i], sh->col0_in + j)));
  /* and back: every input row is some rank's output row in the c group exactly once */
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_out[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_BACKWARD);
  EXPECT_OK(fg_scheme_move_rows_t(s, l, sh, c->x, c->y, f));
  if (c->e->grid)
    check_volume(c, l, "move_rows_t", FG_PHASE_BACKWARD,
                 ring_bytes(sh->n_in, f, G[2], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_in; i++)
    for (int64_t j = 0; j < f; j++)
      err[E_MOVE_T] = fmax(err[E_MOVE_T], rel(c->y[i * f + j],
                                              fx(sh->ids_in[i], sh->col0_in + j)));
}

/* (M bf16(X))[v][j]: the product an SpMM that gathers bf16 rows approaches. */
static double ref_mul16(const fg_csr *M, int64_t v, int64_t j) {
  double s = 0.0;
  for (int64_t k = M->rowptr[v]; k < M->rowptr[v + 1]; k++)
    s += (double)M->val[k] * (double)fg_bf16_to_float(fg_bf16_from_float(fx(M->col[k], j)));
  return s;
}

/* 3d under --precision bf16 (s->bf16 set as the trainer sets it): move_rows_bf16 (GEMM
 * operands) gives bf16(X)'s rows bit for bit and counts half move_rows' bytes; move_rows and
 * move_rows_t still move X exactly (their rows are added in fp32), at fp32's bytes; aggregate
 * is Â bf16(X) with its partial sums all-reduced in fp32 (fp32's bytes), and aggregate16 on
 * bf16(X)'s rows its bits and bytes. */
static void check_bf16(ctx *c, fg_scheme *s, int l, const fg_layer_shape *sh) {
  const int64_t f = sh->w_in;
  int G[3], q[3], exact = 1, rounded = 1, agg = 1;
  layer_groups(c, l, G, q);
  s->bf16 = 1;
  for (int64_t i = 0; i < sh->n_in; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_in[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(fg_scheme_move_rows_bf16(s, l, sh, c->x, c->y, f));
  check_volume(c, l, "move_rows_bf16", FG_PHASE_FORWARD,
               ring_bytes_esz(sh->n_out, f, G[0], c->su->agg_blocks, 2));
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++)
      rounded &= c->y[i * f + j] ==
                 fg_bf16_to_float(fg_bf16_from_float(fx(sh->ids_out[i], sh->col0_in + j)));
  EXPECT_MSG(rounded, "%s layer %d: move_rows_bf16 is not bf16(X)'s rows", c->what, l);
  { /* move_rows16: the same rows kept as bf16, at the same bytes */
    fg_bf16 *y16 = malloc(sizeof(fg_bf16) * (size_t)(sh->n_out * f + 1));
    int same = y16 != NULL;
    reset_counters(c, FG_PHASE_FORWARD);
    EXPECT_OK(fg_scheme_move_rows16(s, l, c->x, y16, f));
    check_volume(c, l, "move_rows16", FG_PHASE_FORWARD,
                 ring_bytes_esz(sh->n_out, f, G[0], c->su->agg_blocks, 2));
    for (int64_t i = 0; same && i < sh->n_out * f; i++)
      same &= fg_bf16_to_float(y16[i]) == c->y[i];
    EXPECT_MSG(same, "%s layer %d: move_rows16 is not move_rows_bf16's rows", c->what, l);
    free(y16);
  }
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(fg_scheme_move_rows(s, l, sh, c->x, c->y, f));
  check_volume(c, l, "move_rows (bf16)", FG_PHASE_FORWARD,
               ring_bytes(sh->n_out, f, G[0], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++) exact &= c->y[i * f + j] == fx(sh->ids_out[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(s->ops->aggregate(s, l, c->x, c->y, f));
  check_volume(c, l, "aggregate (bf16)", FG_PHASE_FORWARD,
               ring_bytes(sh->n_out, f, G[0], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++)
      agg &= rel(c->y[i * f + j], ref_mul16(c->A, sh->ids_out[i], sh->col0_in + j)) <= TOL;
  EXPECT_MSG(agg, "%s layer %d: aggregate under bf16 is not Â bf16(X)", c->what, l);
  { /* aggregate16: bf16(X) given as bf16 rows, gathered as they are: aggregate's bits, bytes */
    fg_bf16 *x16 = malloc(sizeof(fg_bf16) * (size_t)(sh->n_in * f + 1));
    float *y2 = malloc(sizeof(float) * (size_t)(sh->n_out * f + 1));
    int same = x16 && y2 && s->ops->aggregate16;
    if (same) {
      fg_bf16_from_f32(x16, c->x, sh->n_in * f);
      reset_counters(c, FG_PHASE_FORWARD);
      EXPECT_OK(s->ops->aggregate16(s, l, x16, y2, f));
      check_volume(c, l, "aggregate16", FG_PHASE_FORWARD,
                   ring_bytes(sh->n_out, f, G[0], c->su->agg_blocks));
      same = memcmp(y2, c->y, sizeof(float) * (size_t)(sh->n_out * f)) == 0;
    }
    EXPECT_MSG(same, "%s layer %d: aggregate16 is not aggregate's bits under bf16", c->what, l);
    free(x16);
    free(y2);
  }
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_out[i], sh->col0_in + j);
  reset_counters(c, FG_PHASE_BACKWARD);
  EXPECT_OK(fg_scheme_move_rows_t(s, l, sh, c->x, c->y, f));
  check_volume(c, l, "move_rows_t (bf16)", FG_PHASE_BACKWARD,
               ring_bytes(sh->n_in, f, G[2], c->su->agg_blocks));
  for (int64_t i = 0; i < sh->n_in; i++)
    for (int64_t j = 0; j < f; j++) exact &= c->y[i * f + j] == fx(sh->ids_in[i], sh->col0_in + j);
  EXPECT_MSG(exact, "%s layer %d: move_rows or move_rows_t under bf16 does not move the fp32 rows "
             "exactly", c->what, l);
  s->bf16 = 0;
}

/* Weight pieces, the gradient reductions and the partial products' sums of layer l. */
static void check_sums(ctx *c, fg_scheme *s, int l, const fg_layer_shape *sh) {
  const int64_t nw = sh->w_in * sh->w_out;
  int G[3], q[3], ok = 1;
  layer_groups(c, l, G, q);
  if (!c->e->grid) {
    /* replicated weights: the piece is the whole block, nothing to gather or reduce */
    EXPECT_MSG(!s->ops->gather_weights && !s->ops->reduce_weight_grads && sh->wp0 == 0 &&
                   sh->wp_len == nw && sh->bp0 == 0 && sh->bp_len == sh->w_out,
               "%s layer %d: a 1D scheme's weight piece is not the whole block", c->what, l);
  } else if (!s->ops->gather_weights || !s->ops->reduce_weight_grads) {
    EXPECT_MSG(0, "%s: a grid scheme without weight gathers or reductions", c->what);
  } else {
    /* MATS matrices (a SAGE layer has two): piece element k of matrix m is element wp0 + k of
     * its row-major (w_in x w_out) block at (col0_in, col0_out); then VECS vectors' pieces (b,
     * and LayerNorm's scale and shift), each elements bp0.. of its w_out block */
    const int64_t np0 = MATS * sh->wp_len + VECS * sh->bp_len, nb0 = MATS * nw + VECS * sh->w_out;
    const int64_t np = np0 + SCALS, nb = nb0 + SCALS;
    for (int m = 0; m < MATS; m++)
      for (int64_t k = 0; k < sh->wp_len; k++) {
        const int64_t e = sh->wp0 + k;
        c->piece[m * sh->wp_len + k] =
            gw(l + 10 * m, sh->col0_in + e / sh->w_out, sh->col0_out + e % sh->w_out);
      }
    for (int v = 0; v < VECS; v++)
      for (int64_t k = 0; k < sh->bp_len; k++)
        c->piece[MATS * sh->wp_len + v * sh->bp_len + k] =
            gb(l + 10 * v, sh->col0_out + sh->bp0 + k);
    for (int j = 0; j < SCALS; j++) c->piece[np0 + j] = gb(l + 100 * (j + 1), 0); /* whole */
    for (int64_t e = 0; e < nb; e++) c->block[e] = -0.5f;
    EXPECT_OK(s->ops->gather_weights(s, l, sh, MATS, VECS, SCALS, c->piece, c->block));
    for (int j = 0; j < SCALS; j++) ok &= c->block[nb0 + j] == gb(l + 100 * (j + 1), 0);
    for (int m = 0; m < MATS; m++)
      for (int64_t e = 0; e < nw; e++)
        ok &= c->block[m * nw + e] ==
              gw(l + 10 * m, sh->col0_in + e / sh->w_out, sh->col0_out + e % sh->w_out);
    for (int v = 0; v < VECS; v++)
      for (int64_t e = 0; e < sh->w_out; e++)
        ok &= c->block[MATS * nw + v * sh->w_out + e] == gb(l + 10 * v, sh->col0_out + e);
    EXPECT_MSG(ok, "%s layer %d: the gathered W, b blocks are not the whole weights' blocks",
               c->what, l);
    /* the c group shares the block: each rank passes it times 1 + its c coordinate */
    for (int64_t e = 0; e < nb; e++) c->block[e] = (float)((e + 1) * (1 + q[2]));
    for (int64_t k = 0; k < np; k++) c->piece[k] = -0.5f;
    /* a scalar's partial sums: each rank passes 1 + its rank, summed over every rank */
    for (int j = 0; j < SCALS; j++) c->block[nb0 + j] = (float)(1 + rank);
    EXPECT_OK(s->ops->reduce_weight_grads(s, l, sh, MATS, VECS, SCALS, c->block, c->piece));
    ok = 1;
    for (int m = 0; m < MATS; m++)
      for (int64_t k = 0; k < sh->wp_len; k++)
        ok &= c->piece[m * sh->wp_len + k] == (float)((m * nw + sh->wp0 + k + 1) * tri(G[2]));
    for (int v = 0; v < VECS; v++)
      for (int64_t k = 0; k < sh->bp_len; k++)
        ok &= c->piece[MATS * sh->wp_len + v * sh->bp_len + k] ==
              (float)((MATS * nw + v * sh->w_out + sh->bp0 + k + 1) * tri(G[2]));
    for (int j = 0; j < SCALS; j++) ok &= c->piece[np0 + j] == (float)tri(nprocs);
    EXPECT_MSG(ok, "%s layer %d: the reduced W, b pieces are not the c group's sums (scalars: "
               "every rank's)", c->what, l);
  }
  /* H W (n_out x w_out) is partial over b, dQ Wᵀ (n_out x w_in) over a */
  for (int64_t i = 0; i < sh->n_out * sh->w_out; i++) c->y[i] = (float)((i % 5 + 1) * (1 + q[1]));
  EXPECT_OK(fg_scheme_reduce_product(s, l, c->y, sh->n_out * sh->w_out));
  ok = 1;
  for (int64_t i = 0; i < sh->n_out * sh->w_out; i++)
    ok &= c->y[i] == (float)((i % 5 + 1) * tri(G[1]));
  EXPECT_MSG(ok, "%s layer %d: reduce_product is not the b group's sum", c->what, l);
  for (int64_t i = 0; i < sh->n_out * sh->w_in; i++) c->y[i] = (float)((i % 5 + 1) * (1 + q[0]));
  EXPECT_OK(fg_scheme_reduce_input_grad(s, l, c->y, sh->n_out * sh->w_in));
  ok = 1;
  for (int64_t i = 0; i < sh->n_out * sh->w_in; i++)
    ok &= c->y[i] == (float)((i % 5 + 1) * tri(G[0]));
  EXPECT_MSG(ok, "%s layer %d: reduce_input_grad is not the a group's sum", c->what, l);
}

/* Layer l's row statistics over its output's column split, as fg_model_softmax_stats takes them
 * for the logits (and LayerNorm its sums for a hidden layer). */
static void check_row_stats(ctx *c, fg_scheme *s, int l, const fg_layer_shape *sh,
                            double err[E_COUNT]) {
  const int64_t C = c->widths[l + 1], rows = sh->n_out, wo = sh->w_out;
  fg_maxloc *mx = malloc((size_t)FG_MAX(rows, 1) * sizeof *mx);
  double *sum = malloc((size_t)FG_MAX(rows, 1) * sizeof *sum);
  int bad = 0;
  if (!mx || !sum) exit(2);
  for (int64_t i = 0; i < rows; i++)
    for (int64_t j = 0; j < wo; j++) c->z[i * wo + j] = fz(sh->ids_out[i], sh->col0_out + j);
  fg_xent_block_max(c->z, rows, wo, sh->col0_out, NULL, mx);
  EXPECT_OK(fg_scheme_row_max(s, l, mx, rows));
  fg_xent_block_expsum(c->z, rows, wo, mx, NULL, sum);
  EXPECT_OK(fg_scheme_row_sum(s, l, sum, rows));
  for (int64_t i = 0; i < rows; i++) {
    const int64_t v = sh->ids_out[i];
    float best = fz(v, 0);
    int at = 0;
    double total = 0.0;
    for (int64_t j = 1; j < C; j++)
      if (fz(v, j) > best) {
        best = fz(v, j);
        at = (int)j;
      }
    for (int64_t j = 0; j < C; j++) total += exp((double)fz(v, j) - (double)best);
    if ((mx[i].val != best || mx[i].idx != at) && bad++ == 0)
      fprintf(stderr, "%s: row of node %lld has maximum %g at column %d, not %g at %d\n",
              c->what, (long long)v, (double)mx[i].val, mx[i].idx, (double)best, at);
    err[E_ROW_SUM] = fmax(err[E_ROW_SUM], rel(sum[i], total));
  }
  EXPECT_MSG(bad == 0, "%s: %d row maxima are not the whole rows'", c->what, bad);
  free(mx);
  free(sum);
}

/* Layer l's column sums over its distinct rows, as BatchNorm takes them: each rank sums its
 * output rows' columns; after col_sum every column's sum is over every node once (exact: the
 * values are halves). */
static void check_col_sum(ctx *c, fg_scheme *s, int l, const fg_layer_shape *sh) {
  const int64_t wo = sh->w_out, n = c->ds->num_nodes;
  double *sum = calloc((size_t)FG_MAX(wo, 1), sizeof *sum);
  int G[3], q[3], ok = 1;
  if (!sum) exit(2);
  layer_groups(c, l, G, q);
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < wo; j++) sum[j] += fz(sh->ids_out[i], sh->col0_out + j);
  reset_counters(c, FG_PHASE_FORWARD);
  EXPECT_OK(fg_scheme_col_sum(s, l, sum, wo));
  {
    /* a ring all-reduce of wo doubles over the rows' owners: the c group, or every rank */
    const int64_t g = c->e->grid ? G[2] : (s->ops->col_sum ? nprocs : 1);
    check_volume(c, l, "col_sum", FG_PHASE_FORWARD, g > 1 ? 2 * wo * 8 * (g - 1) / g : 0);
  }
  for (int64_t j = 0; j < wo; j++) {
    double total = 0.0;
    for (int64_t v = 0; v < n; v++) total += fz(v, sh->col0_out + j);
    ok &= sum[j] == total;
  }
  EXPECT_MSG(ok, "%s layer %d: col_sum is not the sum over every node once", c->what, l);
  free(sum);
}

/* The layer-0 input: the dataset's features keyed by shape(0)'s ids and columns; learned, it is
 * gathered from the pieces, the pieces cover the features once, and a piece's gradient is its
 * rows of the c group's Â_0ᵀ dH. */
static void check_input(ctx *c, fg_scheme *s, const fg_layer_shape *sh, double err[E_COUNT]) {
  const fg_dataset *ds = c->ds;
  const int64_t F = ds->num_features, f = sh->w_in;
  const float *in = s->features;
  if (c->su->learn) {
    int64_t bad;
    int sane = s->ops->gather_input && s->ops->input_grad && s->feat_row0 >= 0 &&
               s->feat_rows >= 0 && s->feat_row0 + s->feat_rows <= sh->n_in, all_sane = 0;
    int *cnt = calloc((size_t)(ds->num_nodes * F), sizeof *cnt);
    if (!cnt) exit(2);
    EXPECT_MSG(sane, "%s: no learned feature pieces, or pieces outside the input rows", c->what);
    MPI_Allreduce(&sane, &all_sane, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_sane) {
      free(cnt);
      return;
    }
    for (int64_t i = 0; i < s->feat_rows; i++)
      for (int64_t j = 0; j < f; j++) cnt[sh->ids_in[s->feat_row0 + i] * F + sh->col0_in + j]++;
    bad = claimed_not_once(cnt, ds->num_nodes * F);
    EXPECT_MSG(bad == 0, "%s: %lld feature elements not in exactly one piece", c->what,
               (long long)bad);
    free(cnt);
    EXPECT_OK(s->ops->gather_input(s, s->features, c->x));
    in = c->x;
  }
  for (int64_t i = 0; i < sh->n_in; i++) {
    const int64_t r = (!c->su->learn && s->feature_rows) ? s->feature_rows[i] : i;
    for (int64_t j = 0; j < f; j++)
      err[E_INPUT] = fmax(err[E_INPUT], rel(in[r * f + j],
                                            ds->features[sh->ids_in[i] * F + sh->col0_in + j]));
  }
  if (!c->su->learn) return;
  for (int64_t i = 0; i < sh->n_out; i++)
    for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh->ids_out[i], sh->col0_in + j);
  EXPECT_OK(s->ops->input_grad(s, c->x, c->y, c->z));
  for (int64_t i = 0; i < s->feat_rows; i++)
    for (int64_t j = 0; j < f; j++)
      err[E_INPUT_GRAD] = fmax(err[E_INPUT_GRAD],
                               rel(c->z[i * f + j], ref_mul(c->At, sh->ids_in[s->feat_row0 + i],
                                                            sh->col0_in + j)));
}

/* One scheme configuration: create it, run every check, print the largest errors. */
static void run_config(ctx *c) {
  const setup *su = c->su;
  fg_scheme *s = NULL;
  fg_scheme_config sc;
  fg_layer_shape sh[NL];
  double err[E_COUNT] = {0}, all[E_COUNT];
  fg_status st;
  int worst = 0;
  if (c->e->grid)
    snprintf(c->what, sizeof c->what, "%s %s %s agg-blocks %d%s grid %dx%dx%d",
             c->ds->num_nodes < 10 ? "tiny3" : "rmat8", su->scheme,
             su->double_perm ? "double-perm" : su->order ? su->order : "natural", su->agg_blocks,
             su->learn ? " learned" : "", c->grid[0], c->grid[1], c->grid[2]);
  else
    snprintf(c->what, sizeof c->what, "%s %s %s%s%s", c->ds->num_nodes < 10 ? "tiny3" : "rmat8",
             su->scheme, su->order ? su->order : "natural", su->overlap ? " overlap" : "",
             strcmp(su->scheme, "halo") != 0 ? ""
             : su->aggregation == 1         ? " pre"
             : su->aggregation == 2         ? " post"
                                            : " hybrid");
  memset(&sc, 0, sizeof sc);
  sc.name = su->scheme;
  sc.order = su->order;
  sc.overlap = su->overlap;
  sc.seed = 11;
  sc.layers = NL;
  memcpy(sc.grid, c->grid, sizeof sc.grid);
  sc.double_perm = su->double_perm;
  sc.agg_blocks = su->agg_blocks;
  sc.learn_features = su->learn;
  sc.aggregation = su->aggregation;
  if (su->replicate) { /* the largest valid c */
    int cs[64];
    sc.replicate = cs[FG_MIN(fg_replicate_valid(nprocs, cs, 64), 64) - 1];
  }
  st = fg_scheme_create(c->d, rank == 0 ? c->ds : NULL, &sc, &s);
  EXPECT_MSG(st == FG_OK, "%s: %s", c->what, fg_last_error());
  if (st != FG_OK) return;
  for (int l = 0; l < NL; l++) s->ops->shape(s, l, c->widths, &sh[l]);
  if (check_shapes(c, s, sh)) {
    for (int l = 0; l < NL; l++) {
      check_products(c, s, l, &sh[l], err);
      check_sums(c, s, l, &sh[l]);
      check_row_stats(c, s, l, &sh[l], err);
      check_col_sum(c, s, l, &sh[l]);
      if (c->e->grid) check_bf16(c, s, l, &sh[l]);
    }
    check_input(c, s, &sh[0], err);
  }
  MPI_Allreduce(err, all, E_COUNT, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  for (int k = 0; k < E_COUNT; k++) {
    EXPECT_MSG(err[k] <= TOL, "%s: %s relative error %.3g", c->what, err_name[k], err[k]);
    if (all[k] > all[worst]) worst = k;
  }
  if (rank == 0)
    printf("P=%d %-50s largest error %.2e (%s)\n", nprocs, c->what, all[worst], err_name[worst]);
  fg_scheme_destroy(&s);
}

/* halo --quantize: Â X and Âᵀ X with the exchanged rows as 8-, 4- and 2-bit codes. The same bits
 * at 1 and 2 threads (the draws are keyed by the message, row and column); every element within
 * what its codes can miss (a row's error is at most its scale, (max - min) / (2^bits - 1), so an
 * output element's at most the sum of |Â| over its row times the inputs' range over the
 * levels); and at P > 1 the codes are really on (some element differs from the float product).
 * The bytes each rank counts are its rows times (packed codes + 8 parameter bytes), the 8 also
 * counted apart. */
static void check_quantized_ops(ctx *c) {
  static const int bits[3] = {8, 4, 2};
  const fg_scheme_info *e = fg_scheme_lookup("halo");
  double xmin = 1e30, xmax = -1e30;
  for (int64_t v = 0; v < c->ds->num_nodes; v++)
    for (int64_t j = 0; j < c->widths[0]; j++)
      xmin = fmin(xmin, fx(v, j)), xmax = fmax(xmax, fx(v, j));
  for (int b = 0; b < 3; b++)
    for (int t = 0; t < 2; t++) {
      const fg_csr *M = t ? c->At : c->A;
      fg_scheme *s = NULL;
      fg_scheme_config sc;
      fg_layer_shape sh;
      int64_t f, n, diff = 0, bad = 0, alldiff = 0;
      float *y1, *y2;
      memset(&sc, 0, sizeof sc);
      sc.name = "halo";
      sc.order = "random";
      sc.seed = 11;
      sc.quantize_bits = bits[b];
      c->e = e;
      EXPECT_OK(fg_scheme_create(c->d, rank == 0 ? c->ds : NULL, &sc, &s));
      if (!s) return;
      s->ops->shape(s, 0, c->widths, &sh);
      f = sh.w_in;
      n = sh.n_in;
      y1 = malloc((size_t)FG_MAX(n * f, 1) * sizeof *y1);
      y2 = malloc((size_t)FG_MAX(n * f, 1) * sizeof *y2);
      if (!y1 || !y2) exit(2);
      for (int64_t i = 0; i < n; i++)
        for (int64_t j = 0; j < f; j++) c->x[i * f + j] = fx(sh.ids_in[i], j);
      /* a new epoch restarts the key's count of aggregations: epoch 1, 2, then 1 again */
      fg_set_threads(1);
      s->epoch = 1;
      reset_counters(c, FG_PHASE_FORWARD);
      EXPECT_OK((t ? s->ops->aggregate_t : s->ops->aggregate)(s, 0, c->x, y1, f));
      {
        const fg_comm_counters *k = &c->d->counters;
        const int64_t rowb = fg_quant_row_bytes(f, bits[b]) + 8;
        EXPECT_MSG(k->bytes_sent[FG_PHASE_FORWARD] % rowb == 0 &&
                       k->bytes_recv[FG_PHASE_FORWARD] % rowb == 0 &&
                       k->param_bytes_sent[FG_PHASE_FORWARD] * rowb ==
                           8 * k->bytes_sent[FG_PHASE_FORWARD] &&
                       k->param_bytes_recv[FG_PHASE_FORWARD] * rowb ==
                           8 * k->bytes_recv[FG_PHASE_FORWARD],
                   "halo int%d: %lld bytes sent (%lld parameters) are not rows of %lld + 8",
                   bits[b], (long long)k->bytes_sent[FG_PHASE_FORWARD],
                   (long long)k->param_bytes_sent[FG_PHASE_FORWARD], (long long)rowb - 8);
      }
      s->epoch = 2;
      EXPECT_OK((t ? s->ops->aggregate_t : s->ops->aggregate)(s, 0, c->x, y2, f));
      s->epoch = 1;
      fg_set_threads(2);
      EXPECT_OK((t ? s->ops->aggregate_t : s->ops->aggregate)(s, 0, c->x, y2, f));
      fg_set_threads(1);
      EXPECT_MSG(memcmp(y1, y2, (size_t)(n * f) * sizeof *y1) == 0,
                 "halo int%d %s: 1 and 2 threads give different bits", bits[b],
                 t ? "aggregate_t" : "aggregate");
      for (int64_t i = 0; i < n; i++) {
        double rs = 0.0;
        const int64_t v = sh.ids_in[i];
        for (int64_t k = M->rowptr[v]; k < M->rowptr[v + 1]; k++) rs += fabs(M->val[k]);
        for (int64_t j = 0; j < f; j++) {
          const double err = fabs(y1[i * f + j] - ref_mul(M, v, j));
          bad += err > rs * (xmax - xmin) / ((1 << bits[b]) - 1) + 1e-5;
          diff += err > 1e-5;
        }
      }
      MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      MPI_Allreduce(&diff, &alldiff, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
      EXPECT_MSG(bad == 0, "halo int%d %s: %lld elements beyond their codes' error", bits[b],
                 t ? "aggregate_t" : "aggregate", (long long)bad);
      EXPECT_MSG(nprocs == 1 || alldiff > 0, "halo int%d: no element differs from float32",
                 bits[b]);
      if (rank == 0)
        printf("P=%d rmat8 halo int%d %-11s same bits at 1 and 2 threads, %lld elements off "
               "the float product, all within their codes' error\n",
               nprocs, bits[b], t ? "aggregate_t" : "aggregate", (long long)alldiff);
      free(y1);
      free(y2);
      fg_scheme_destroy(&s);
    }
}

/* A directed 3-node graph (0 -> 1, 0 -> 2, 2 -> 1 and self loops): fewer nodes than ranks, and
 * 4 features and 2 classes, fewer than some grid dimensions. */
static fg_status make_tiny3(fg_dataset **out) {
  static const int64_t src[3] = {0, 0, 2}, dst[3] = {1, 2, 1};
  fg_status st = FG_OK;
  fg_dataset *ds = calloc(1, sizeof *ds);
  *out = NULL;
  if (!ds) return FG_ERR_NOMEM;
  ds->num_nodes = 3;
  ds->num_features = 4;
  ds->num_classes = 2;
  st = fg_csr_from_edges(3, src, dst, 3, 0, 1, 1, &ds->adj);
  if (st == FG_OK) {
    ds->symmetric = fg_csr_is_symmetric(&ds->adj);
    st = fg_generate_features(3, 4, 3, &ds->features);
  }
  if (st == FG_OK) st = fg_generate_labels(&ds->adj, 2, 3, &ds->labels);
  if (st == FG_OK) st = fg_generate_split(3, ds->labels, 0.5, 0.25, 3, &ds->split);
  if (st != FG_OK) fg_dataset_destroy(&ds);
  *out = ds;
  return st;
}

/* The schemes and options to try; returns the count. */
static int make_setups(setup *out) {
  static const char *const orders[2] = {NULL, "random"};
  static const char *const oned[2] = {"1d", "1d-sa"};
  int n = 0;
  out[n++] = (setup){"serial", NULL, 0, 0, 1, 0, 0, 0};
  for (int k = 0; k < 2; k++)
    for (int o = 0; o < 2; o++)
      for (int ov = 0; ov < 2; ov++) out[n++] = (setup){oned[k], orders[o], ov, 0, 1, 0, 0, 0};
  /* halo: each rule, natural and random order (its default, metis, is the equivalence's) */
  for (int o = 0; o < 2; o++)
    for (int rule = 0; rule < 3; rule++)
      out[n++] = (setup){"halo", o ? "random" : "natural", 0, 0, 1, 0, rule, 0};
  /* 1.5d: the replicas' partial sums, natural and random order, with and without overlap */
  for (int o = 0; o < 2; o++) out[n++] = (setup){"1.5d", orders[o], o, 0, 1, 0, 0, 1};
  /* 3d: no permutation, single (--order random), double; 1 or 2 blocks; fixed or learned */
  for (int perm = 0; perm < 3; perm++)
    for (int ab = 1; ab <= 2; ab++)
      for (int learn = 0; learn < 2; learn++)
        out[n++] = (setup){"3d", perm == 1 ? "random" : NULL, 0, perm == 2, ab, learn, 0, 0};
  return n;
}

int main(int argc, char **argv) {
  setup setups[40];
  int nsetups, failures = 0, grids[64][3], ngrids;
  fg_dist *d = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  nsetups = make_setups(setups);
  ngrids = fg_grid_enumerate(nprocs, grids, 64);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  for (int data = 0; data < 2 && d; data++) {
    fg_dataset *ds = NULL;
    fg_csr A, At;
    ctx c;
    int64_t widest = 0;
    memset(&A, 0, sizeof A);
    memset(&At, 0, sizeof At);
    memset(&c, 0, sizeof c);
    /* every rank builds the same graph and the one-process Â (normalized on the whole pattern,
     * as scheme_serial.c does) and Âᵀ; only rank 0's dataset is handed to the schemes */
    EXPECT_OK(data == 0 ? test_data_make(TEST_DATA_RMAT8, &ds) : make_tiny3(&ds));
    if (!ds) break;
    EXPECT_MSG(!ds->symmetric, "the test graphs must be directed, so that Âᵀ != Â");
    A.nrows = A.ncols = ds->adj.nrows;
    A.nnz = ds->adj.nnz;
    A.rowptr = malloc((size_t)(A.nrows + 1) * sizeof *A.rowptr);
    A.col = malloc((size_t)FG_MAX(A.nnz, 1) * sizeof *A.col);
    if (!A.rowptr || !A.col) exit(2);
    memcpy(A.rowptr, ds->adj.rowptr, (size_t)(A.nrows + 1) * sizeof *A.rowptr);
    memcpy(A.col, ds->adj.col, (size_t)A.nnz * sizeof *A.col);
    EXPECT_OK(fg_adj_normalize(&A, FG_ADJ_SYM));
    EXPECT_OK(fg_csr_transpose(&A, &At));
    c.d = d;
    c.ds = ds;
    c.A = &A;
    c.At = &At;
    c.widths[0] = ds->num_features;
    c.widths[1] = 7;
    c.widths[2] = 5;
    c.widths[3] = ds->num_classes;
    for (int l = 0; l <= NL; l++) widest = FG_MAX(widest, c.widths[l]);
    c.x = malloc((size_t)(ds->num_nodes * widest) * sizeof *c.x);
    c.y = malloc((size_t)(ds->num_nodes * widest) * sizeof *c.y);
    c.z = malloc((size_t)(ds->num_nodes * widest) * sizeof *c.z);
    c.piece = malloc((size_t)(MATS * widest * widest + VECS * widest + SCALS) * sizeof *c.piece);
    c.block = malloc((size_t)(MATS * widest * widest + VECS * widest + SCALS) * sizeof *c.block);
    if (!c.x || !c.y || !c.z || !c.piece || !c.block) exit(2);
    for (int i = 0; i < nsetups; i++) {
      const fg_scheme_info *e = fg_scheme_lookup(setups[i].scheme);
      const int one[3] = {1, 1, 1};
      if (!e) {
        EXPECT_MSG(0, "no scheme %s in the registry", setups[i].scheme);
        continue;
      }
      if (e->max_ranks && nprocs > e->max_ranks) continue;
      c.e = e;
      c.su = &setups[i];
      for (int g = 0; g < (e->grid ? ngrids : 1); g++) {
        memcpy(c.grid, e->grid ? grids[g] : one, sizeof c.grid);
        run_config(&c);
      }
    }
    if (data == 0) check_quantized_ops(&c);
    free(c.x);
    free(c.y);
    free(c.z);
    free(c.piece);
    free(c.block);
    fg_csr_free(&A);
    fg_csr_free(&At);
    fg_dataset_destroy(&ds);
  }
  fg_dist_destroy(&d);
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_scheme_ops");
}
