/* test_prep_degrees.c -- the degree tables fg_prep_operator holds while it computes a
 * rectangle's values (prep_blocks.c): Cora (undirected, and directed) prepared in 12 blocks in
 * the random order; for sym, mean and sum, with the pattern's self loops and without (sage),
 * transposed and not:
 *   - rows of blocks 0..1 x every column (a 1D rank's rectangle) hold at most the degrees of
 *     blocks 0..1's rows + the largest block's, 20 bytes a row (every node's would be 2708 x 20),
 *     and after the call exactly blocks 0..1's (kept for the next rectangle on the same rows);
 *   - every row x columns of blocks 3..4 (more rows than columns: the columns' blocks held, the
 *     rows swept) at most blocks 3..4's + the largest block's, and then exactly blocks 3..4's;
 *   - both rectangles' row offsets, columns and values (bits) are those of the whole operator
 *     (fg_adj_operator) permuted by the same order (the transpose's for Âᵀ), cut to the
 *     rectangle; the bytes read are its adjacency blocks' and every degree file once, and a
 *     second rectangle on the same rows reads all but the held blocks' degree files again.
 * One process (run under mpiexec for the temporary directory's helper). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "io/fg_prepared.h"
#include "schemes/fg_prep_blocks.h"
#include "test_data.h"
#include "testutil.h"

#define BLOCKS 12
#define SEED 7

/* A (rows [r0, r1), columns relative to c0) equals M's rows [r0, r1) cut to columns [c0, c1):
 * the same entries in the same order, the values bit for bit. */
static int same_rect(const fg_csr *A, const fg_csr *M, int64_t r0, int64_t r1, int64_t c0,
                     int64_t c1) {
  if (A->nrows != r1 - r0) return 0;
  for (int64_t u = 0; u < A->nrows; u++) {
    int64_t q = A->rowptr[u];
    for (int64_t k = M->rowptr[r0 + u]; k < M->rowptr[r0 + u + 1]; k++) {
      if (M->col[k] < c0 || M->col[k] >= c1) continue;
      if (q >= A->rowptr[u + 1] || A->col[q] != M->col[k] - c0 ||
          memcmp(&A->val[q], &M->val[k], sizeof(float)) != 0)
        return 0;
      q++;
    }
    if (q != A->rowptr[u + 1]) return 0;
  }
  return 1;
}

/* Rows of blocks [b0, b1) of m. */
static int64_t rows_of(const fg_prep_manifest *m, int64_t b0, int64_t b1) {
  return m->offs[b1] - m->offs[b0];
}

static void check(const fg_dataset *ds, const char *dir, fg_adj_spec spec, const char *what) {
  fg_prep_manifest m;
  fg_prep_src s;
  fg_csr N, R, Rt, A;
  int64_t *perm = NULL, *inv = NULL, offs[BLOCKS + 1], maxb = 0;
  const int64_t n = ds->num_nodes;
  memset(&m, 0, sizeof m);
  memset(&s, 0, sizeof s);
  memset(&N, 0, sizeof N);
  memset(&R, 0, sizeof R);
  memset(&Rt, 0, sizeof Rt);
  memset(&A, 0, sizeof A);
  perm = malloc((size_t)n * sizeof *perm);
  inv = malloc((size_t)n * sizeof *inv);
  /* the direct path's whole operator, in the order the directory was prepared in */
  EXPECT_OK(fg_order_compute(&ds->adj, BLOCKS, FG_ORDER_RANDOM, SEED, perm, offs));
  fg_order_invert(perm, n, inv);
  EXPECT_OK(fg_adj_operator(&ds->adj, spec, &N));
  EXPECT_OK(fg_csr_permute(&N, perm, inv, &R));
  EXPECT_OK(fg_csr_transpose(&R, &Rt));
  EXPECT_OK(fg_prep_manifest_read(dir, &m));
  if (m.offs && m.B == BLOCKS) {
    for (int64_t b = 0; b < BLOCKS; b++) {
      EXPECT(m.offs[b] == offs[b]);
      maxb = FG_MAX(maxb, rows_of(&m, b, b + 1));
    }
    for (int t = 0; t < 2; t++) {
      const fg_csr *M = t ? &Rt : &R;
      /* (rows, columns, the held side's blocks [h0, h1)): a 1D rank's, then one with more rows
       * than columns */
      const int64_t rect[2][6] = {{offs[0], offs[2], 0, n, 0, 2},
                                  {0, n, offs[3], offs[5], 3, 5}};
      for (int k = 0; k < 2; k++) {
        const int64_t r0 = rect[k][0], r1 = rect[k][1], c0 = rect[k][2], c1 = rect[k][3];
        const uint64_t held = (uint64_t)rows_of(&m, rect[k][4], rect[k][5]) * 20;
        const uint64_t bound = held + (uint64_t)maxb * 20;
        uint64_t deg_bytes = 0, adj_bytes = 0;
        EXPECT_OK(fg_prep_src_open(&s, dir, &m));
        EXPECT_OK(fg_prep_operator(&s, r0, r1, c0, c1, t, spec, &A));
        EXPECT_MSG(same_rect(&A, M, r0, r1, c0, c1), "%s%s, rectangle %d: entries or values",
                   what, t ? ", transposed" : "", k);
        EXPECT_MSG(s.deg_peak > held && s.deg_peak <= bound,
                   "%s%s, rectangle %d: held %llu bytes of degrees at most, bound %llu (every "
                   "node's: %lld)",
                   what, t ? ", transposed" : "", k, (unsigned long long)s.deg_peak,
                   (unsigned long long)bound, (long long)n * 20);
        EXPECT_MSG(s.deg_held == held, "%s%s, rectangle %d: holds %llu bytes after, not %llu",
                   what, t ? ", transposed" : "", k, (unsigned long long)s.deg_held,
                   (unsigned long long)held);
        /* read: the adjacency blocks it overlaps and every degree file once (a random order
         * puts an entry in every block of Cora's 12 x 12) */
        for (int64_t b = 0; b < BLOCKS; b++) deg_bytes += m.files[BLOCKS + b].size;
        for (int64_t i = 0; i < BLOCKS; i++)
          for (int64_t j = 0; j < BLOCKS; j++) {
            const int64_t x = t ? j : i, y = t ? i : j; /* the result's blocks */
            if (offs[x + 1] > r0 && offs[x] < r1 && offs[y + 1] > c0 && offs[y] < c1 &&
                s.files && s.files[i * BLOCKS + j] >= 0)
              adj_bytes += m.files[s.files[i * BLOCKS + j]].size;
          }
        EXPECT_MSG(s.bytes == adj_bytes + deg_bytes,
                   "%s%s, rectangle %d: read %llu bytes, not %llu of blocks + %llu of degrees",
                   what, t ? ", transposed" : "", k, (unsigned long long)s.bytes,
                   (unsigned long long)adj_bytes, (unsigned long long)deg_bytes);
        /* a second rectangle on the same rows reads the held side's degree files no more */
        if (k == 0) {
          const uint64_t before = s.bytes;
          fg_csr A2;
          memset(&A2, 0, sizeof A2);
          EXPECT_OK(fg_prep_operator(&s, r0, r1, c0, c1, t, spec, &A2));
          EXPECT(same_rect(&A2, M, r0, r1, c0, c1));
          EXPECT_MSG(s.bytes - before == adj_bytes + deg_bytes - held,
                     "%s: read %llu bytes again, not %llu", what,
                     (unsigned long long)(s.bytes - before),
                     (unsigned long long)(adj_bytes + deg_bytes - held));
          fg_csr_free(&A2);
        }
        fg_csr_free(&A);
        fg_prep_src_close(&s);
      }
    }
  }
  fg_prep_manifest_free(&m);
  fg_csr_free(&N);
  fg_csr_free(&R);
  fg_csr_free(&Rt);
  free(perm);
  free(inv);
}

int main(int argc, char **argv) {
  fg_dataset *ds[2] = {NULL, NULL};
  char dir[2][320], base[256];
  int provided;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_FUNNELED, &provided);
  if (!fg_test_mpi_tmpdir("fg_test_prep_degrees", base, sizeof base)) {
    MPI_Finalize();
    return 1;
  }
  for (int k = 0; k < 2; k++)
    EXPECT_OK(test_cora_prepared(base, k == 0 ? "undirected" : "directed", k, BLOCKS, SEED, 1,
                                 &ds[k], dir[k], sizeof dir[k]));
  if (ds[0] && ds[1]) {
    const fg_adj_spec specs[6] = {{FG_ADJ_SYM, 0}, {FG_ADJ_MEAN, 0}, {FG_ADJ_SUM, 0},
                                  {FG_ADJ_SYM, 1}, {FG_ADJ_MEAN, 1}, {FG_ADJ_SUM, 1}};
    const char *names[6] = {"sym", "mean", "sum", "sym, no self loops",
                            "mean, no self loops (sage)", "sum, no self loops"};
    for (int k = 0; k < 2; k++)
      for (int j = 0; j < 6; j++) {
        char what[96];
        snprintf(what, sizeof what, "%s, %s", k == 0 ? "undirected" : "directed", names[j]);
        check(ds[k], dir[k], specs[j], what);
      }
  }
  fg_test_mpi_done(base);
  fg_dataset_destroy(&ds[0]);
  fg_dataset_destroy(&ds[1]);
  MPI_Finalize();
  return fg_test_finish("test_prep_degrees");
}
