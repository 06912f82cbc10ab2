/* test_prepared_part.c -- the per-rank read of a prepared directory (fg_part_read_prepared)
 * against the direct path's matrices: Cora (undirected, and directed) prepared in 12 blocks in
 * the random order; on P = 2, 3, 4 ranks every rank's rows of Â -- row offsets, columns and
 * the values' bits -- are the rows of the whole operator (fg_adj_operator) permuted by the same
 * order, for sym, mean and sum without self loops; its rows of Âᵀ likewise when the operator is
 * not symmetric, and symmetric exactly when fg_csr_is_symmetric says so; its features, ids,
 * labels and split are the dataset's rows; the cut is fg_block_cut's; and each rank read part
 * of the files, not all. */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_prepared.h"
#include "schemes/fg_partition.h"
#include "test_data.h"
#include "testutil.h"

#define BLOCKS 12
#define SEED 7

static const fg_scheme_ops bare = {.name = "test"};

/* The rows [row0, row0 + n) of M equal A's (values bit for bit). */
static int same_rows(const fg_csr *A, const fg_csr *M, int64_t row0) {
  for (int64_t u = 0; u < A->nrows; u++) {
    const int64_t a0 = A->rowptr[u], a1 = A->rowptr[u + 1];
    const int64_t m0 = M->rowptr[row0 + u], m1 = M->rowptr[row0 + u + 1];
    if (a1 - a0 != m1 - m0) return 0;
    if (memcmp(A->col + a0, M->col + m0, (size_t)(a1 - a0) * 4) != 0) return 0;
    if (memcmp(A->val + a0, M->val + m0, (size_t)(a1 - a0) * 4) != 0) return 0;
  }
  return 1;
}

static void check(fg_dist *d, const fg_dataset *ds, const char *dir, fg_adj_spec spec,
                  const char *what) {
  fg_scheme *s = NULL;
  fg_part_local p;
  fg_scheme_config cfg;
  fg_csr N, R, Rt;
  int64_t *perm = NULL, *inv = NULL, offs[BLOCKS + 1];
  const int64_t n = ds->num_nodes, F = ds->num_features;
  memset(&p, 0, sizeof p);
  memset(&cfg, 0, sizeof cfg);
  memset(&N, 0, sizeof N);
  memset(&R, 0, sizeof R);
  memset(&Rt, 0, sizeof Rt);
  cfg.name = "1d";
  cfg.adj = spec;
  perm = malloc((size_t)n * sizeof *perm);
  inv = malloc((size_t)n * sizeof *inv);
  /* the direct path's whole operator, in the order the directory was prepared in */
  EXPECT_OK(fg_order_compute(&ds->adj, BLOCKS, FG_ORDER_RANDOM, SEED, perm, offs));
  fg_order_invert(perm, n, inv);
  EXPECT_OK(fg_adj_operator(&ds->adj, spec, &N));
  EXPECT_OK(fg_csr_permute(&N, perm, inv, &R));
  const int sym = ds->symmetric && fg_csr_is_symmetric(&R);
  if (!sym) EXPECT_OK(fg_csr_transpose(&R, &Rt));

  EXPECT_OK(fg_scheme_new(d, &bare, 8, &s));
  EXPECT_OK(fg_part_read_prepared(d, dir, &cfg, 1, s, &p));
  if (s && p.offs) {
    const int K = d->size, me = d->rank;
    EXPECT(p.parts == K && p.n_global == n);
    for (int r = 0; r <= K; r++) EXPECT(p.offs[r] == offs[r * (BLOCKS / K)]);
    EXPECT(p.row0 == p.offs[me] && p.n_local == p.offs[me + 1] - p.offs[me]);
    EXPECT_MSG(same_rows(&p.A, &R, p.row0), "%s: rank %d's rows of A", what, me);
    EXPECT_MSG(p.symmetric == sym, "%s: symmetric %d, direct %d", what, p.symmetric, sym);
    if (!sym) EXPECT_MSG(same_rows(&p.At, &Rt, p.row0), "%s: rank %d's rows of At", what, me);
    EXPECT(p.cut == fg_block_cut(&R, p.offs, K));
    EXPECT(s->n_local == p.n_local && s->num_features == F && s->local_nnz == p.A.nnz);
    for (int64_t u = 0; u < p.n_local; u++) {
      const int64_t v = perm[p.row0 + u];
      if (s->global_ids[u] != v || s->labels[u] != ds->labels[v] || s->split[u] != ds->split[v] ||
          memcmp(s->features + u * F, ds->features + v * F, (size_t)F * 4) != 0) {
        EXPECT_MSG(0, "%s: rank %d row %lld's node data", what, me, (long long)u);
        break;
      }
    }
    {
      fg_prep_manifest m;
      int64_t total = 0;
      EXPECT_OK(fg_prep_manifest_read(dir, &m));
      for (int64_t k = 0; k < m.nfiles; k++) total += (int64_t)m.files[k].size;
      /* one rank reads every file (a directed graph's blocks twice: rows, then columns of
       * the transpose); several read a part each */
      EXPECT_MSG(K == 1 ? p.bytes_read >= total : p.bytes_read > 0 && p.bytes_read < total,
                 "%s: rank %d read %lld of %lld", what, me, (long long)p.bytes_read,
                 (long long)total);
      fg_prep_manifest_free(&m);
    }
  }
  fg_part_local_free(&p);
  fg_scheme_destroy(&s);
  fg_csr_free(&N);
  fg_csr_free(&R);
  fg_csr_free(&Rt);
  free(perm);
  free(inv);
}

int main(int argc, char **argv) {
  fg_dist *d = NULL;
  fg_dataset *ds[2] = {NULL, NULL};
  char dir[2][320], base[256];
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (!fg_test_mpi_tmpdir("fg_test_prepared_part", base, sizeof base)) {
    MPI_Finalize();
    return 1;
  }
  for (int k = 0; k < 2; k++) /* every rank loads the reference; rank 0 writes the directory */
    EXPECT_OK(test_cora_prepared(base, k == 0 ? "undirected" : "directed", k, BLOCKS, SEED,
                                 d->rank == 0, &ds[k], dir[k], sizeof dir[k]));
  MPI_Barrier(MPI_COMM_WORLD);
  if (ds[0] && ds[1] && BLOCKS % d->size == 0) {
    const fg_adj_spec specs[3] = {{FG_ADJ_SYM, 0}, {FG_ADJ_MEAN, 0}, {FG_ADJ_SUM, 1}};
    const char *names[3] = {"sym", "mean", "sum, no self loops"};
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 3; j++) {
        char what[96];
        snprintf(what, sizeof what, "%s, %s", k == 0 ? "undirected" : "directed", names[j]);
        check(d, ds[k], dir[k], specs[j], what);
      }
  }
  fg_test_mpi_done(base);
  fg_dataset_destroy(&ds[0]);
  fg_dataset_destroy(&ds[1]);
  fg_dist_destroy(&d);
  MPI_Finalize();
  return fg_test_finish("test_prepared_part");
}
