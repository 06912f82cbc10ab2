/* test_shards.c -- the 3D layout's pure pieces: grids, balanced blocks, block nonzero counts,
 * two-sided permutations, and the double permutation's load balance on the R-MAT benchmark
 * graph (scale 18, edge factor 16, seed 0: `fullgraph generate rmat --scale 18 --edge-factor
 * 16`), where it must beat both the original order and a single permutation. */
#include <stdlib.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "graph/fg_order.h"
#include "schemes/fg_grid3d.h"
#include "testutil.h"

static void test_blocks(void) {
  for (int64_t n = 0; n < 40; n++) {
    for (int G = 1; G <= 9; G++) {
      int64_t total = 0;
      EXPECT(fg_block_start(n, G, 0) == 0 && fg_block_start(n, G, G) == n);
      for (int i = 0; i < G; i++) {
        const int64_t sz = fg_block_size(n, G, i);
        EXPECT(sz == n / G || sz == n / G + 1);
        total += sz;
        for (int64_t k = fg_block_start(n, G, i); k < fg_block_start(n, G, i + 1); k++)
          EXPECT_MSG(fg_block_of(n, G, k) == i, "n %lld G %d k %lld: block %d, expected %d",
                     (long long)n, G, (long long)k, fg_block_of(n, G, k), i);
      }
      EXPECT(total == n);
    }
  }
}

static void test_grids(void) {
  int g[3], all[64][3];
  EXPECT_OK(fg_grid_parse("2x1x4", 8, g));
  EXPECT(g[0] == 2 && g[1] == 1 && g[2] == 4);
  EXPECT(fg_grid_parse("2x2x1", 8, g) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("has 4 ranks, but the job has 8"));
  EXPECT(fg_grid_parse("2x2", 4, g) == FG_ERR_INVALID_ARG);
  EXPECT(fg_grid_parse("2x0x2", 0, g) == FG_ERR_INVALID_ARG);
  EXPECT(fg_grid_parse("2x2x1z", 4, g) == FG_ERR_INVALID_ARG);
  EXPECT(fg_grid_parse("", 1, g) == FG_ERR_INVALID_ARG);
  EXPECT(fg_grid_enumerate(1, all, 64) == 1);
  EXPECT(fg_grid_enumerate(8, all, 64) == 10);  /* ordered triples of product 8 */
  EXPECT(fg_grid_enumerate(12, all, 64) == 18);
  for (int i = 0; i < fg_grid_enumerate(12, all, 64); i++)
    EXPECT(all[i][0] * all[i][1] * all[i][2] == 12);
  /* coordinates: Y fastest, then X, then Z; a bijection */
  {
    const int gg[3] = {3, 2, 4};
    int seen[24] = {0};
    for (int r = 0; r < 24; r++) {
      int q[3];
      fg_grid_coords(gg, r, q);
      EXPECT(fg_grid_rank(gg, q) == r);
      seen[r]++;
    }
    int q1[3];
    fg_grid_coords(gg, 1, q1);
    EXPECT(q1[FG_DIM_Y] == 1 && q1[FG_DIM_X] == 0 && q1[FG_DIM_Z] == 0);
    fg_grid_coords(gg, 2, q1);
    EXPECT(q1[FG_DIM_Y] == 0 && q1[FG_DIM_X] == 1);
    fg_grid_coords(gg, 6, q1);
    EXPECT(q1[FG_DIM_Z] == 1 && q1[FG_DIM_X] == 0 && q1[FG_DIM_Y] == 0);
  }
  /* layer roles rotate (X, Y, Z) -> (Z, X, Y) -> (Y, Z, X) and repeat */
  {
    int a, b, c;
    fg_layer_roles(0, &a, &b, &c);
    EXPECT(a == FG_DIM_X && b == FG_DIM_Y && c == FG_DIM_Z);
    fg_layer_roles(1, &a, &b, &c);
    EXPECT(a == FG_DIM_Z && b == FG_DIM_X && c == FG_DIM_Y);
    fg_layer_roles(2, &a, &b, &c);
    EXPECT(a == FG_DIM_Y && b == FG_DIM_Z && c == FG_DIM_X);
    fg_layer_roles(3, &a, &b, &c);
    EXPECT(a == FG_DIM_X && b == FG_DIM_Y && c == FG_DIM_Z);
  }
}

/* A 5 x 5 matrix by hand: blocks of 2 x 2 cut rows and columns as {0,1,2} {3,4}. */
static void test_block_nnz(void) {
  /* entries: (0,0) (0,4) (1,1) (2,3) (2,4) (3,0) (4,2) (4,3) (4,4) */
  int64_t rowptr[6] = {0, 2, 3, 5, 6, 9};
  int32_t col[9] = {0, 4, 1, 3, 4, 0, 2, 3, 4};
  float val[9] = {1, 2, 3, 4, 5, 6, 7, 8, 9};
  fg_csr A = {5, 5, 9, rowptr, col, val}, B;
  int64_t cnt[4], cnt3[6];
  EXPECT_OK(fg_block_nnz(&A, 2, 2, cnt));
  EXPECT(cnt[0] == 2 && cnt[1] == 3 && cnt[2] == 2 && cnt[3] == 2);
  EXPECT_OK(fg_block_nnz(&A, 2, 3, cnt3)); /* columns {0,1} {2,3} {4} */
  EXPECT(cnt3[0] == 2 && cnt3[1] == 1 && cnt3[2] == 2 && cnt3[3] == 1 && cnt3[4] == 2 &&
         cnt3[5] == 1);
  /* two-sided permutation: row k of B is row rp[k] of A, column c becomes ci[c] */
  {
    const int64_t rp[5] = {4, 3, 2, 1, 0}, cp[5] = {1, 2, 3, 4, 0};
    int64_t ci[5];
    memset(&B, 0, sizeof B);
    fg_order_invert(cp, 5, ci);
    EXPECT_OK(fg_csr_permute(&A, rp, ci, &B));
    EXPECT(B.nnz == 9);
    for (int64_t k = 0; k < 5; k++) {
      const int64_t u = rp[k];
      EXPECT(B.rowptr[k + 1] - B.rowptr[k] == A.rowptr[u + 1] - A.rowptr[u]);
      for (int64_t e = B.rowptr[k]; e < B.rowptr[k + 1]; e++) {
        const int32_t c = B.col[e];
        int found = 0;
        if (e > B.rowptr[k]) EXPECT(B.col[e - 1] < c); /* sorted */
        for (int64_t f = A.rowptr[u]; f < A.rowptr[u + 1]; f++)
          if (ci[A.col[f]] == c && A.val[f] == B.val[e]) found = 1;
        EXPECT_MSG(found, "B(%lld, %d) = %g is not A(%lld, %lld)", (long long)k, c,
                   (double)B.val[e], (long long)u, (long long)cp[c]);
      }
    }
    fg_csr_free(&B);
  }
}

static void test_perms(void) {
  const int64_t n = 1000;
  int64_t *p0 = malloc(n * sizeof *p0), *p1 = malloc(n * sizeof *p1);
  int64_t *ord = malloc(n * sizeof *ord), offs[5];
  int64_t rowptr[1001];
  fg_csr I = {n, n, 0, rowptr, NULL, NULL};
  int differ = 0;
  for (int64_t i = 0; i <= n; i++) rowptr[i] = 0;
  fg_perm3d_build(n, FG_PERM_NONE, 3, p0, p1);
  for (int64_t i = 0; i < n; i++) EXPECT(p0[i] == i && p1[i] == i);
  /* the single permutation is the 1D schemes' random order */
  fg_perm3d_build(n, FG_PERM_SINGLE, 3, p0, p1);
  EXPECT_OK(fg_order_compute(&I, 4, FG_ORDER_RANDOM, 3, ord, offs));
  EXPECT(memcmp(p0, p1, n * sizeof *p0) == 0);
  EXPECT(memcmp(p0, ord, n * sizeof *p0) == 0);
  fg_perm3d_build(n, FG_PERM_DOUBLE, 3, p0, p1);
  EXPECT(memcmp(p1, ord, n * sizeof *p0) == 0); /* P_r is that order too */
  {
    char *seen0 = calloc(n, 1), *seen1 = calloc(n, 1);
    for (int64_t i = 0; i < n; i++) {
      seen0[p0[i]]++;
      seen1[p1[i]]++;
      differ += p0[i] != p1[i];
    }
    for (int64_t i = 0; i < n; i++) EXPECT(seen0[i] == 1 && seen1[i] == 1);
    free(seen0);
    free(seen1);
  }
  EXPECT(differ > n / 2);
  free(p0);
  free(p1);
  free(ord);
}

static void test_rmat_balance(void) {
  int64_t *src = NULL, *dst = NULL, m = 0;
  fg_csr A;
  double r[3] = {0, 0, 0};
  memset(&A, 0, sizeof A);
  EXPECT_OK(fg_rmat_edges(18, 16, 0, &src, &dst, &m));
  EXPECT_OK(fg_csr_from_edges((int64_t)1 << 18, src, dst, m, 1, 1, 1, &A));
  free(src);
  free(dst);
  EXPECT_OK(fg_shard_balance_compute(&A, 8, 8, 0, r));
  printf("R-MAT scale 18, 8 x 8 shards, max/mean nonzeros: original %.3f, single %.3f, "
         "double %.3f\n", r[0], r[1], r[2]);
  EXPECT_MSG(r[2] < r[1] && r[2] < r[0], "double permutation %.3f, single %.3f, original %.3f",
             r[2], r[1], r[0]);
  EXPECT(r[2] >= 1.0);
  fg_csr_free(&A);
}

int main(void) {
  test_blocks();
  test_grids();
  test_block_nnz();
  test_perms();
  test_rmat_balance();
  return fg_test_finish("test_shards");
}
