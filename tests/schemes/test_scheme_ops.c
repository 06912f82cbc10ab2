/* test_scheme_ops.c -- run under mpiexec with P ranks: every scheme's operations, called
 * directly (no training), against the one-process products.
 *
 * On a directed R-MAT graph (Âᵀ differs from Â) and a 5-node path (empty blocks at larger P),
 * for serial (P = 1), 1d and 1d-sa (natural and random order, with and without overlap) and 3d
 * on every grid of P (no, single and double permutation; blocked aggregation; learned
 * features), for each of three layers: aggregate, aggregate_t and move_rows of an input keyed by
 * (original node id, global column) equal Â X, Âᵀ X and X computed on the whole graph in the
 * original numbering; gather_weights returns the whole blocks of a known W and b;
 * reduce_weight_grads and reduce_product sum over the group that shares a block; the row
 * statistics of the last layer are those of whole rows; a learned-features input is gathered
 * and its gradient is the owned rows of Â_0ᵀ dH. The bytes 3d counts for an aggregation are the
 * ring all-reduce's. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "plan/fg_registry.h"
#include "schemes/fg_grid3d.h"
#include "test_data.h"
#include "testutil.h"

static int rank, nprocs;

/* The input value of node v, column j. */
static float fx(int64_t v, int64_t j) { return (float)((v * 7 + j * 3) % 11) / 11.0f - 0.5f; }

/* (M X)[v][j] for the whole normalized matrix M in the original numbering. */
static double ref_product(const fg_csr *M, int64_t v, int64_t j) {
  double s = 0.0;
  for (int64_t k = M->rowptr[v]; k < M->rowptr[v + 1]; k++)
    s += (double)M->val[k] * (double)fx(M->col[k], j);
  return s;
}

typedef struct setup {
  const char *scheme, *order;
  int overlap, double_perm, agg_blocks, learn;
} setup;

/* Relative error of a against the reference b. */
static double rel(double a, double b) { return fabs(a - b) / fmax(1.0, fabs(b)); }

static void check(const fg_dataset *ds, const fg_csr *A, const fg_csr *At, const setup *su,
                  const int grid[3], double *worst_out) {
  fg_dist *d = NULL;
  fg_scheme *s = NULL;
  fg_scheme_config sc;
  fg_status st;
  const int L = 3;
  int64_t widths[4];
  double worst = 0.0;
  float *x = NULL, *y = NULL, *piece = NULL, *block = NULL;
  memset(&sc, 0, sizeof sc);
  sc.name = su->scheme;
  sc.order = su->order;
  sc.overlap = su->overlap;
  sc.seed = 5;
  sc.layers = L;
  memcpy(sc.grid, grid, sizeof sc.grid);
  sc.double_perm = su->double_perm;
  sc.agg_blocks = su->agg_blocks;
  sc.learn_features = su->learn;
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  st = fg_scheme_create(d, rank == 0 ? ds : NULL, &sc, &s);
  EXPECT_MSG(st == FG_OK, "%s: %s", su->scheme, fg_last_error());
  if (st != FG_OK) goto done;
  widths[0] = ds->num_features;
  widths[1] = 7;
  widths[2] = 5;
  widths[3] = ds->num_classes;
  x = malloc(4096 * 64 * sizeof *x);
  y = malloc(4096 * 64 * sizeof *y);
  piece = malloc(4096 * 64 * sizeof *piece);
  block = malloc(4096 * 64 * sizeof *block);
  if (!x || !y || !piece || !block) exit(2);
  for (int l = 0; l < L; l++) {
    fg_layer_shape sh;
    int a = 0, b = 1, c = 2;
    const int split = s->ops->gather_weights != NULL;
    s->ops->shape(s, l, widths, &sh);
    if (split) fg_layer_roles(l, &a, &b, &c);
    /* aggregate: in (n_in x w_in) -> out (n_out x w_in) */
    for (int64_t i = 0; i < sh.n_in; i++)
      for (int64_t j = 0; j < sh.w_in; j++) x[i * sh.w_in + j] = fx(sh.ids_in[i], sh.col0_in + j);
    {
      const int64_t before = d->counters.bytes_sent[d->phase];
      EXPECT_OK(s->ops->aggregate(s, l, x, y, sh.w_in));
      if (split) {
        /* a ring all-reduce of each row block (--agg-blocks) along a */
        const int G = grid[a];
        const int64_t nb = FG_MIN((int64_t)su->agg_blocks, sh.n_out);
        int64_t want = 0;
        for (int64_t k = 0; G > 1 && sh.w_in > 0 && k < nb; k++)
          want += 2 * fg_block_size(sh.n_out, nb, k) * sh.w_in * 4 * (G - 1) / G;
        EXPECT_MSG(d->counters.bytes_sent[d->phase] - before == want,
                   "%s layer %d: aggregate counted %lld bytes, the ring all-reduce %lld",
                   su->scheme, l, (long long)(d->counters.bytes_sent[d->phase] - before),
                   (long long)want);
      }
    }
    for (int64_t i = 0; i < sh.n_out; i++)
      for (int64_t j = 0; j < sh.w_in; j++)
        worst = fmax(worst, rel(y[i * sh.w_in + j], ref_product(A, sh.ids_out[i], sh.col0_in + j)));
    /* aggregate_t: in (n_out x w_in) -> out (n_in x w_in); 3d builds Âᵀ's shards only where a
     * backward multiplies them (layers >= 1, or 0 with learned features) */
    if (l > 0 || !split || su->learn) {
      for (int64_t i = 0; i < sh.n_out; i++)
        for (int64_t j = 0; j < sh.w_in; j++)
          x[i * sh.w_in + j] = fx(sh.ids_out[i], sh.col0_in + j);
      EXPECT_OK(s->ops->aggregate_t(s, l, x, y, sh.w_in));
      for (int64_t i = 0; i < sh.n_in; i++)
        for (int64_t j = 0; j < sh.w_in; j++)
          worst = fmax(worst, rel(y[i * sh.w_in + j], ref_product(At, sh.ids_in[i], sh.col0_in + j)));
    }
    /* move_rows: the identity */
    for (int64_t i = 0; i < sh.n_in; i++)
      for (int64_t j = 0; j < sh.w_in; j++) x[i * sh.w_in + j] = fx(sh.ids_in[i], sh.col0_in + j);
    EXPECT_OK(fg_scheme_move_rows(s, l, &sh, x, y, sh.w_in));
    for (int64_t i = 0; i < sh.n_out; i++)
      for (int64_t j = 0; j < sh.w_in; j++)
        worst = fmax(worst, rel(y[i * sh.w_in + j], fx(sh.ids_out[i], sh.col0_in + j)));
    /* weights: piece k is element wp0 + k of the block at (col0_in, col0_out) of W_l (value
     * 1000 l + global row * 10 + global column), then the bias piece */
    if (split) {
      const int64_t nw = sh.w_in * sh.w_out;
      int ok = 1;
      for (int64_t k = 0; k < sh.wp_len; k++) {
        const int64_t e = sh.wp0 + k;
        piece[k] = (float)(1000 * l + (sh.col0_in + e / sh.w_out) * 10 + sh.col0_out + e % sh.w_out);
      }
      for (int64_t k = 0; k < sh.bp_len; k++)
        piece[sh.wp_len + k] = (float)(-1 - sh.col0_out - sh.bp0 - k);
      EXPECT_OK(s->ops->gather_weights(s, l, &sh, piece, block));
      for (int64_t e = 0; e < nw; e++)
        ok &= block[e] == (float)(1000 * l + (sh.col0_in + e / sh.w_out) * 10 + sh.col0_out +
                                  e % sh.w_out);
      for (int64_t e = 0; e < sh.w_out; e++) ok &= block[nw + e] == (float)(-1 - sh.col0_out - e);
      EXPECT_MSG(ok, "%s layer %d: gathered weight blocks differ", su->scheme, l);
      /* every rank of the c group passes the same block: each piece comes back G_c times */
      for (int64_t e = 0; e < nw + sh.w_out; e++) block[e] = (float)(e + 1);
      EXPECT_OK(s->ops->reduce_weight_grads(s, l, &sh, block, piece));
      for (int64_t k = 0; k < sh.wp_len; k++) ok &= piece[k] == (float)(grid[c] * (sh.wp0 + k + 1));
      for (int64_t k = 0; k < sh.bp_len; k++)
        ok &= piece[sh.wp_len + k] == (float)(grid[c] * (nw + sh.bp0 + k + 1));
      EXPECT_MSG(ok, "%s layer %d: reduced weight pieces differ", su->scheme, l);
    }
    /* the partial products' sums: ones summed over the b group (output) and a group (input) */
    for (int64_t i = 0; i < sh.n_out * sh.w_out; i++) y[i] = 1.0f;
    EXPECT_OK(fg_scheme_reduce_product(s, l, y, sh.n_out * sh.w_out));
    for (int64_t i = 0; i < sh.n_out * sh.w_out; i++)
      EXPECT_MSG(y[i] == (float)(split ? grid[b] : 1), "%s layer %d: reduce_product %g", su->scheme,
                 l, (double)y[i]);
    for (int64_t i = 0; i < sh.n_out * sh.w_in; i++) y[i] = 1.0f;
    EXPECT_OK(fg_scheme_reduce_input_grad(s, l, y, sh.n_out * sh.w_in));
    for (int64_t i = 0; i < sh.n_out * sh.w_in; i++)
      EXPECT(y[i] == (float)(split ? grid[a] : 1));
    if (l == L - 1) {
      /* row statistics of the logits' rows: value fx(v, j) at global column j */
      fg_maxloc *mx = malloc((size_t)FG_MAX(sh.n_out, 1) * sizeof *mx);
      double *sum = malloc((size_t)FG_MAX(sh.n_out, 1) * sizeof *sum);
      if (!mx || !sum) exit(2);
      for (int64_t i = 0; i < sh.n_out; i++) {
        mx[i].val = -INFINITY;
        mx[i].idx = 1 << 30;
        sum[i] = 0.0;
        for (int64_t j = 0; j < sh.w_out; j++) {
          const float v = fx(sh.ids_out[i], sh.col0_out + j);
          if (j == 0 || v > mx[i].val) {
            mx[i].val = v;
            mx[i].idx = (int)(sh.col0_out + j);
          }
          sum[i] += v;
        }
      }
      EXPECT_OK(fg_scheme_row_max(s, mx, sh.n_out));
      EXPECT_OK(fg_scheme_row_sum(s, sum, sh.n_out));
      for (int64_t i = 0; i < sh.n_out; i++) {
        float best = 0.0f;
        int at = 0;
        double total = 0.0;
        for (int64_t j = 0; j < widths[L]; j++) {
          const float v = fx(sh.ids_out[i], j);
          if (j == 0 || v > best) {
            best = v;
            at = (int)j;
          }
          total += v;
        }
        EXPECT_MSG(mx[i].val == best && mx[i].idx == at, "%s: row %lld's maximum %g at %d, not %g "
                   "at %d", su->scheme, (long long)sh.ids_out[i], (double)mx[i].val, mx[i].idx,
                   (double)best, at);
        worst = fmax(worst, rel(sum[i], total));
      }
      free(mx);
      free(sum);
    }
    if (l == 0 && su->learn) {
      /* the layer-0 input from the feature pieces, and a piece's gradient of Â_0ᵀ dH */
      EXPECT_OK(s->ops->gather_input(s, s->features, x));
      for (int64_t i = 0; i < sh.n_in; i++)
        for (int64_t j = 0; j < sh.w_in; j++)
          worst = fmax(worst, rel(x[i * sh.w_in + j],
                                  ds->features[sh.ids_in[i] * ds->num_features + sh.col0_in + j]));
      for (int64_t i = 0; i < sh.n_out; i++)
        for (int64_t j = 0; j < sh.w_in; j++)
          x[i * sh.w_in + j] = fx(sh.ids_out[i], sh.col0_in + j);
      EXPECT_OK(s->ops->input_grad(s, x, y, piece));
      for (int64_t i = 0; i < s->feat_rows; i++)
        for (int64_t j = 0; j < sh.w_in; j++)
          worst = fmax(worst, rel(piece[i * sh.w_in + j],
                                  ref_product(At, sh.ids_in[s->feat_row0 + i], sh.col0_in + j)));
    }
  }
done:
  free(x);
  free(y);
  free(piece);
  free(block);
  fg_scheme_destroy(&s);
  fg_dist_destroy(&d);
  *worst_out = worst;
}

int main(int argc, char **argv) {
  static const setup setups[] = {
      {"serial", NULL, 0, 0, 1, 0},     {"1d", NULL, 0, 0, 1, 0},
      {"1d", "random", 1, 0, 1, 0},     {"1d-sa", NULL, 1, 0, 1, 0},
      {"1d-sa", "random", 0, 0, 1, 0},  {"3d", NULL, 0, 0, 1, 0},
      {"3d", "random", 0, 0, 2, 0},     {"3d", NULL, 0, 1, 1, 1},
  };
  int failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  for (int data = TEST_DATA_RMAT8; data <= TEST_DATA_PATH5; data++) {
    fg_dataset *ds = NULL;
    fg_csr A, At;
    int grids[64][3];
    const int ng = fg_grid_enumerate(nprocs, grids, 64);
    memset(&A, 0, sizeof A);
    memset(&At, 0, sizeof At);
    /* every rank builds the same graph and the one-process Â and Âᵀ; rank 0's is scattered */
    EXPECT_OK(test_data_make(data, &ds));
    if (!ds) continue;
    A.nrows = A.ncols = ds->adj.nrows;
    A.nnz = ds->adj.nnz;
    A.rowptr = malloc((size_t)(A.nrows + 1) * sizeof *A.rowptr);
    A.col = malloc((size_t)FG_MAX(A.nnz, 1) * sizeof *A.col);
    if (!A.rowptr || !A.col) exit(2);
    memcpy(A.rowptr, ds->adj.rowptr, (size_t)(A.nrows + 1) * sizeof *A.rowptr);
    memcpy(A.col, ds->adj.col, (size_t)A.nnz * sizeof *A.col);
    EXPECT_OK(fg_gcn_normalize(&A));
    EXPECT_OK(fg_csr_transpose(&A, &At));
    for (size_t i = 0; i < sizeof setups / sizeof setups[0]; i++) {
      const setup *su = &setups[i];
      const fg_scheme_info *e = fg_scheme_lookup(su->scheme);
      if (e->max_ranks && nprocs > e->max_ranks) continue;
      for (int gi = 0; gi < (e->grid ? ng : 1); gi++) {
        const int one[3] = {1, 1, 1};
        double worst = 0.0;
        check(ds, &A, &At, su, e->grid ? grids[gi] : one, &worst);
        EXPECT_MSG(worst <= 1e-5, "%s %s %s: largest relative error %.3g", test_data_name(data),
                   su->scheme, su->order ? su->order : "natural", worst);
        if (rank == 0)
          printf("P=%d %-15s %-6s %-7s%s%s%s grid %dx%dx%d: largest error %.2e\n", nprocs,
                 test_data_name(data), su->scheme, su->order ? su->order : "natural",
                 su->overlap ? " overlap" : "", su->double_perm ? " double" : "",
                 su->learn ? " learned" : "", e->grid ? grids[gi][0] : 1,
                 e->grid ? grids[gi][1] : 1, e->grid ? grids[gi][2] : 1, worst);
      }
    }
    fg_csr_free(&A);
    fg_csr_free(&At);
    fg_dataset_destroy(&ds);
  }
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_scheme_ops");
}
