/* test_prepared_3d.c -- 3d's per-rank read of a prepared directory against rank 0's delivery of
 * the whole dataset, bit for bit: Cora (undirected, and directed) prepared in 12 blocks in the
 * random order (12 does not divide Cora's 2708 nodes, so every grid's shards straddle blocks),
 * and on every grid of P ranks (the first with every operator, the others one each, in turn),
 * three layers, the 3d scheme made from the directory (the
 * prepared order its permutation) equals the one made from the source with --order random
 * (the single permutation of the same seed): every shard of Â and its transpose (row offsets,
 * columns, the values' bits) for sym, mean and sum without self loops, the ids of every node
 * slice, the feature piece (row-normalized; and cut along Z with learned features), the logit
 * rows' ids, labels and split, the layer-0 input rows' labels and split (label propagation),
 * the nonzero count. A grid whose dimensions do not divide B, and the double permutation, are
 * refused naming the problem. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "schemes/fg_grid3d.h"
#include "schemes/fg_scheme.h"
#include "test_data.h"
#include "testutil.h"

#define BLOCKS 12
#define SEED 7
#define LAYERS 3

/* A and B hold the same matrix: sizes, row offsets, columns and the values' bits. */
static int same_csr(const fg_csr *A, const fg_csr *B) {
  if (!A || !B) return A == B;
  if (!A->rowptr || !B->rowptr) return !A->rowptr && !B->rowptr;
  if (A->nrows != B->nrows || A->ncols != B->ncols || A->nnz != B->nnz) return 0;
  if (memcmp(A->rowptr, B->rowptr, (size_t)(A->nrows + 1) * sizeof *A->rowptr) != 0) return 0;
  if (A->nnz > 0 && (memcmp(A->col, B->col, (size_t)A->nnz * 4) != 0 ||
                     memcmp(A->val, B->val, (size_t)A->nnz * 4) != 0))
    return 0;
  return 1;
}

static fg_scheme_config config(const int g[3], fg_adj_spec spec, int learn, const char *order) {
  fg_scheme_config c;
  memset(&c, 0, sizeof c);
  c.name = "3d";
  c.order = order;
  c.seed = SEED;
  c.adj = spec;
  c.layers = LAYERS;
  memcpy(c.grid, g, sizeof c.grid);
  c.agg_blocks = 1;
  c.learn_features = learn;
  c.input_grad = !learn; /* label propagation's input rows, where the features are not learned */
  c.normalize_features = 1;
  return c;
}

static void compare(fg_dist *d, const fg_dataset *src, const fg_dataset *prep, const int g[3],
                    fg_adj_spec spec, int learn, const char *what) {
  fg_scheme *a = NULL, *b = NULL; /* a: delivered from rank 0; b: read per rank */
  const fg_scheme_config ca = config(g, spec, learn, "random");
  const fg_scheme_config cb = config(g, spec, learn, NULL);
  const int me = d->rank;
  EXPECT_OK(fg_scheme_3d_create(d, src, &ca, &a));
  EXPECT_OK(fg_scheme_3d_create(d, me == 0 ? prep : NULL, &cb, &b));
  if (!a || !b) goto done;
  EXPECT(b->n_global == a->n_global && b->num_features == a->num_features &&
         b->num_classes == a->num_classes);
  EXPECT_MSG(b->n_local == a->n_local && b->local_nnz == a->local_nnz,
             "%s: rank %d: %lld rows, %lld nonzeros; delivered %lld, %lld", what, me,
             (long long)b->n_local, (long long)b->local_nnz, (long long)a->n_local,
             (long long)a->local_nnz);
  for (int k = 0; k < LAYERS; k++)
    for (int tr = 0; tr < 2; tr++)
      EXPECT_MSG(same_csr(fg_scheme_3d_shard(a, k, tr), fg_scheme_3d_shard(b, k, tr)),
                 "%s: rank %d: shard %d%s", what, me, k, tr ? " transposed" : "");
  for (int dd = 0; dd < 3; dd++)
    for (int p = 0; p < 2; p++) {
      const int64_t *ia = fg_scheme_3d_ids(a, dd, p), *ib = fg_scheme_3d_ids(b, dd, p);
      int q[3];
      fg_grid_coords(g, me, q);
      EXPECT_MSG((ia == NULL) == (ib == NULL) &&
                     (!ia || memcmp(ia, ib, (size_t)fg_block_size(a->n_global, g[dd], q[dd]) *
                                                sizeof *ia) == 0),
                 "%s: rank %d: ids of dimension %d, order %d", what, me, dd, p);
    }
  EXPECT(b->feat_row0 == a->feat_row0 && b->feat_rows == a->feat_rows);
  {
    int q[3];
    fg_grid_coords(g, me, q);
    const int64_t cols = fg_block_size(a->num_features, g[FG_DIM_Y], q[FG_DIM_Y]);
    EXPECT_MSG(a->feat_rows * cols == 0 ||
                   memcmp(a->features, b->features, (size_t)(a->feat_rows * cols) * 4) == 0,
               "%s: rank %d: the feature piece", what, me);
  }
  if (b->n_local == a->n_local && a->n_local > 0) {
    EXPECT_MSG(memcmp(a->global_ids, b->global_ids, (size_t)a->n_local * 8) == 0 &&
                   memcmp(a->labels, b->labels, (size_t)a->n_local * 4) == 0 &&
                   memcmp(a->split, b->split, (size_t)a->n_local) == 0,
               "%s: rank %d: the logit rows' ids, labels, split", what, me);
  }
  EXPECT((a->in_labels == NULL) == (b->in_labels == NULL));
  if (a->in_labels && b->in_labels) {
    int q[3];
    fg_grid_coords(g, me, q);
    const int64_t nin = fg_block_size(a->n_global, g[FG_DIM_X], q[FG_DIM_X]);
    EXPECT_MSG(memcmp(a->in_labels, b->in_labels, (size_t)nin * 4) == 0 &&
                   memcmp(a->in_split, b->in_split, (size_t)nin) == 0,
               "%s: rank %d: the input rows' labels and split", what, me);
  }
done:
  fg_scheme_destroy(&a);
  fg_scheme_destroy(&b);
}

/* A run the directory cannot give is refused on every rank with msg in the error. */
static void refused(fg_dist *d, const fg_dataset *prep, const int g[3], int double_perm,
                    const char *msg) {
  fg_scheme *s = NULL;
  fg_scheme_config c = config(g, (fg_adj_spec){FG_ADJ_SYM, 0}, 0, NULL);
  fg_status st;
  c.double_perm = double_perm;
  st = fg_scheme_3d_create(d, d->rank == 0 ? prep : NULL, &c, &s);
  EXPECT_MSG(st == FG_ERR_INVALID_ARG && strstr(fg_last_error(), msg) != NULL,
             "grid %dx%dx%d%s: status %d, '%s'", g[0], g[1], g[2],
             double_perm ? " double" : "", (int)st, fg_last_error());
  EXPECT(s == NULL);
  fg_scheme_destroy(&s);
}

int main(int argc, char **argv) {
  fg_dist *d = NULL;
  fg_dataset *ds[2] = {NULL, NULL}, *prep[3] = {NULL, NULL, NULL};
  char dir[3][320], base[256];
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (!fg_test_mpi_tmpdir("fg_test_prepared_3d", base, sizeof base)) {
    MPI_Finalize();
    return 1;
  }
  /* every rank loads the reference; rank 0 writes the directories, the third the undirected
   * graph in 5 blocks (a grid of 2, 3 or 4 does not fit) */
  for (int k = 0; k < 3; k++)
    EXPECT_OK(test_cora_prepared(base, k == 0 ? "undirected" : k == 1 ? "directed" : "five",
                                 k == 1, k == 2 ? 5 : BLOCKS, SEED, d->rank == 0, &ds[k % 2],
                                 dir[k], sizeof dir[k]));
  MPI_Barrier(MPI_COMM_WORLD);
  if (d->rank == 0) {
    /* rank 0 opens only the manifest, as train does under mpirun */
    for (int k = 0; k < 3; k++) EXPECT_OK(fg_dataset_open_prepared(dir[k], &prep[k]));
  }
  if (ds[0] && ds[1]) {
    const fg_adj_spec specs[3] = {{FG_ADJ_SYM, 0}, {FG_ADJ_MEAN, 0}, {FG_ADJ_SUM, 1}};
    const char *names[3] = {"sym", "mean", "sum, no self loops"};
    int grids[64][3];
    const int ng = fg_grid_enumerate(d->size, grids, 64);
    for (int gi = 0; gi < ng && gi < 64; gi++)
      for (int k = 0; k < 2; k++)
        for (int j = 0; j < 3; j++) {
          char what[128];
          if (gi > 0 && j != gi % 3) continue; /* the first grid every operator, then one each */
          const int learn = j == 0 && k == 0; /* learned features once a grid */
          snprintf(what, sizeof what, "grid %dx%dx%d, %s, %s%s", grids[gi][0], grids[gi][1],
                   grids[gi][2], k == 0 ? "undirected" : "directed", names[j],
                   learn ? ", learned features" : "");
          compare(d, ds[k], prep[k], grids[gi], specs[j], learn, what);
          if (learn) compare(d, ds[k], prep[k], grids[gi], specs[j], 0, what);
        }
    if (d->size > 1) {
      const int g[3] = {d->size, 1, 1};
      refused(d, prep[2], g, 0, "needs each dimension to divide them");
    }
    {
      const int g[3] = {1, d->size, 1};
      refused(d, prep[0], g, 1, "--double-perm");
    }
  }
  fg_test_mpi_done(base);
  for (int k = 0; k < 3; k++) fg_dataset_destroy(&prep[k]);
  fg_dataset_destroy(&ds[0]);
  fg_dataset_destroy(&ds[1]);
  fg_dist_destroy(&d);
  MPI_Finalize();
  return fg_test_finish("test_prepared_3d");
}
