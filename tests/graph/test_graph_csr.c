/* test_graph_csr.c -- fg_csr_from_edges against hand-built graphs and a dense reference,
 * fg_csr_is_symmetric, fg_adj_normalize (sym) by hand, fg_degree_stats_compute. */
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "core/fg_rng.h"
#include "graph/fg_graph.h"
#include "testutil.h"

/* 1 if row i of A holds exactly the columns in want[0..len). */
static int row_is(const fg_csr *A, int64_t i, const int32_t *want, int64_t len) {
  if (A->rowptr[i + 1] - A->rowptr[i] != len) return 0;
  for (int64_t k = 0; k < len; k++)
    if (A->col[A->rowptr[i] + k] != want[k]) return 0;
  return 1;
}

static int csr_valid(const fg_csr *A) {
  if (A->rowptr[0] != 0 || A->rowptr[A->nrows] != A->nnz) return 0;
  for (int64_t i = 0; i < A->nrows; i++) {
    if (A->rowptr[i + 1] < A->rowptr[i]) return 0;
    for (int64_t k = A->rowptr[i]; k < A->rowptr[i + 1]; k++) {
      if (A->col[k] < 0 || A->col[k] >= A->ncols) return 0;
      if (k > A->rowptr[i] && A->col[k] < A->col[k - 1]) return 0;
    }
  }
  return 1;
}

static void test_small_directed(void) {
  /* edges src -> dst: 0->1 twice, 2->1, 1->1 (self loop), 3->0; node 4 isolated */
  const int64_t src[] = {0, 0, 2, 1, 3};
  const int64_t dst[] = {1, 1, 1, 1, 0};
  fg_csr A;

  /* directed, keep duplicates, keep the file's self loops */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 0, 0, 0, &A));
  EXPECT(A.nrows == 5 && A.ncols == 5 && A.nnz == 5 && A.val == NULL);
  EXPECT(csr_valid(&A));
  {
    const int32_t r0[] = {3}, r1[] = {0, 0, 1, 2};
    EXPECT(row_is(&A, 0, r0, 1)); /* row = dst: 0 receives from 3 */
    EXPECT(row_is(&A, 1, r1, 4));
    EXPECT(row_is(&A, 2, NULL, 0));
    EXPECT(row_is(&A, 4, NULL, 0));
  }
  EXPECT(!fg_csr_is_symmetric(&A));
  fg_csr_free(&A);

  /* directed + dedup */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 0, 1, 0, &A));
  EXPECT(A.nnz == 4);
  {
    const int32_t r1[] = {0, 1, 2};
    EXPECT(row_is(&A, 1, r1, 3));
  }
  fg_csr_free(&A);

  /* directed + self loops: exactly one per node, the file's loop not doubled */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 0, 1, 1, &A));
  EXPECT(A.nnz == 3 + 5);
  {
    const int32_t r0[] = {0, 3}, r1[] = {0, 1, 2}, r4[] = {4};
    EXPECT(row_is(&A, 0, r0, 2));
    EXPECT(row_is(&A, 1, r1, 3));
    EXPECT(row_is(&A, 4, r4, 1));
  }
  fg_csr_free(&A);

  /* directed, no dedup, self loops: duplicates stay, loops become exactly one */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 0, 0, 1, &A));
  {
    const int32_t r1[] = {0, 0, 1, 2};
    EXPECT(row_is(&A, 1, r1, 4));
    EXPECT(A.nnz == 4 + 5);
  }
  fg_csr_free(&A);

  /* undirected: reverse edges, dedup forced even with dedup = 0 */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 1, 0, 0, &A));
  EXPECT(csr_valid(&A));
  {
    const int32_t r0[] = {1, 3}, r1[] = {0, 1, 2}, r2[] = {1}, r3[] = {0};
    EXPECT(row_is(&A, 0, r0, 2));
    EXPECT(row_is(&A, 1, r1, 3));
    EXPECT(row_is(&A, 2, r2, 1));
    EXPECT(row_is(&A, 3, r3, 1));
    EXPECT(row_is(&A, 4, NULL, 0));
    EXPECT(A.nnz == 7);
  }
  EXPECT(fg_csr_is_symmetric(&A));
  fg_csr_free(&A);

  /* undirected + self loops: GCN's A + I */
  EXPECT_OK(fg_csr_from_edges(5, src, dst, 5, 1, 1, 1, &A));
  EXPECT(A.nnz == 6 + 5);
  {
    const int32_t r1[] = {0, 1, 2}, r4[] = {4};
    EXPECT(row_is(&A, 1, r1, 3));
    EXPECT(row_is(&A, 4, r4, 1));
  }
  EXPECT(fg_csr_is_symmetric(&A));

  fg_degree_stats s;
  fg_degree_stats_compute(&A, &s);
  /* degrees without loops: 0:{1,3}=2 1:{0,2}=2 2:{1}=1 3:{0}=1 4:0 */
  EXPECT(s.min == 0 && s.max == 2 && s.isolated == 1);
  EXPECT(fabs(s.mean - 6.0 / 5.0) < 1e-12);
  EXPECT(fabs(s.stddev - sqrt(10.0 / 5.0 - 1.44)) < 1e-12);
  EXPECT(s.p50 == 1 && s.p90 == 2 && s.p99 == 2);
  fg_csr_free(&A);
}

static void test_empty_and_errors(void) {
  fg_csr A;
  EXPECT_OK(fg_csr_from_edges(0, NULL, NULL, 0, 1, 1, 1, &A));
  EXPECT(A.nrows == 0 && A.nnz == 0 && A.rowptr != NULL && A.rowptr[0] == 0);
  EXPECT(fg_csr_is_symmetric(&A));
  fg_csr_free(&A);

  /* nodes but no edges */
  EXPECT_OK(fg_csr_from_edges(4, NULL, NULL, 0, 1, 1, 0, &A));
  EXPECT(A.nrows == 4 && A.nnz == 0);
  for (int i = 0; i <= 4; i++) EXPECT(A.rowptr[i] == 0);
  fg_degree_stats s;
  fg_degree_stats_compute(&A, &s);
  EXPECT(s.isolated == 4 && s.max == 0 && s.p99 == 0);
  fg_csr_free(&A);
  EXPECT_OK(fg_csr_from_edges(4, NULL, NULL, 0, 1, 1, 1, &A));
  EXPECT(A.nnz == 4);
  fg_degree_stats_compute(&A, &s);
  EXPECT(s.isolated == 4);
  fg_csr_free(&A);

  /* an id out of range names the edge and the id */
  const int64_t src[] = {0, 1, 2}, dst[] = {1, 7, 0};
  EXPECT(fg_csr_from_edges(3, src, dst, 3, 1, 1, 1, &A) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("edge 1"));
  EXPECT(fg_test_error_contains("node id 7 out of range [0, 3)"));
  EXPECT(A.rowptr == NULL && A.col == NULL);
  const int64_t neg[] = {-1};
  EXPECT(fg_csr_from_edges(3, neg, dst, 1, 0, 0, 0, &A) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("node id -1"));
  EXPECT(fg_csr_from_edges((int64_t)1 << 31, NULL, NULL, 0, 1, 1, 1, &A) == FG_ERR_UNSUPPORTED);
  EXPECT(fg_csr_from_edges(3, NULL, NULL, 2, 1, 1, 1, &A) == FG_ERR_INVALID_ARG);
}

/* Random edge lists with duplicates and loops against a dense count matrix. */
static void test_against_dense(void) {
  const int64_t n = 37, m = 400;
  int64_t src[400], dst[400];
  for (int64_t e = 0; e < m; e++) {
    src[e] = (int64_t)(fg_rng_u64(11, 99, (uint64_t)e, 0, 0, 0) % (uint64_t)n);
    dst[e] = (int64_t)(fg_rng_u64(11, 99, (uint64_t)e, 1, 0, 0) % (uint64_t)n);
    if (e % 23 == 0) dst[e] = src[e];
  }
  static int cnt[37][37];
  for (int opt = 0; opt < 8; opt++) {
    const int und = opt & 1, dd = (opt >> 1) & 1, sl = (opt >> 2) & 1;
    memset(cnt, 0, sizeof cnt);
    for (int64_t e = 0; e < m; e++) {
      if (sl && src[e] == dst[e]) continue;
      cnt[dst[e]][src[e]]++;
      if (und && src[e] != dst[e]) cnt[src[e]][dst[e]]++;
    }
    for (int64_t i = 0; i < n; i++) {
      if (sl) cnt[i][i] = 1;
      if (und || dd)
        for (int64_t j = 0; j < n; j++) cnt[i][j] = cnt[i][j] > 0;
    }
    fg_csr A;
    EXPECT_OK(fg_csr_from_edges(n, src, dst, m, und, dd, sl, &A));
    EXPECT(csr_valid(&A));
    int bad = 0;
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
      int64_t k = A.rowptr[i];
      for (int64_t j = 0; j < n; j++) {
        total += cnt[i][j];
        for (int c = 0; c < cnt[i][j]; c++, k++)
          if (k >= A.rowptr[i + 1] || A.col[k] != j) bad = 1;
      }
      if (k != A.rowptr[i + 1]) bad = 1;
    }
    EXPECT_MSG(!bad && total == A.nnz, "options undirected=%d dedup=%d self_loops=%d", und, dd, sl);
    int sym = 1;
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) sym &= cnt[i][j] == cnt[j][i];
    EXPECT(fg_csr_is_symmetric(&A) == sym);
    if (und) EXPECT(sym);
    fg_csr_free(&A);
  }
}

static void test_symmetric_check(void) {
  /* 0<->1 both ways but 1->2 only one way */
  const int64_t src[] = {0, 1, 1}, dst[] = {1, 0, 2};
  fg_csr A;
  EXPECT_OK(fg_csr_from_edges(3, src, dst, 3, 0, 1, 0, &A));
  EXPECT(!fg_csr_is_symmetric(&A));
  fg_csr_free(&A);
  const int64_t src2[] = {0, 1, 1, 2}, dst2[] = {1, 0, 2, 1};
  EXPECT_OK(fg_csr_from_edges(3, src2, dst2, 4, 0, 1, 1, &A));
  EXPECT(fg_csr_is_symmetric(&A));
  fg_csr_free(&A);
  /* multiplicity matters without dedup: 0->1 twice, 1->0 once */
  const int64_t src3[] = {0, 0, 1}, dst3[] = {1, 1, 0};
  EXPECT_OK(fg_csr_from_edges(2, src3, dst3, 3, 0, 0, 0, &A));
  EXPECT(!fg_csr_is_symmetric(&A));
  fg_csr_free(&A);
  /* a directed 3-cycle: every row and column holds one entry, yet it is not symmetric */
  const int64_t src4[] = {0, 1, 2}, dst4[] = {1, 2, 0};
  EXPECT_OK(fg_csr_from_edges(3, src4, dst4, 3, 0, 1, 1, &A));
  EXPECT(!fg_csr_is_symmetric(&A));
  fg_csr_free(&A);
  /* rectangular is never symmetric */
  int64_t rp[3] = {0, 1, 1};
  int32_t ci[1] = {0};
  fg_csr R = {2, 3, 1, rp, ci, NULL};
  EXPECT(!fg_csr_is_symmetric(&R));
}

static void test_normalize_path(void) {
  /* path 0 - 1 - 2 with self loops: degrees (with loop) 2, 3, 2 */
  const int64_t src[] = {0, 1}, dst[] = {1, 2};
  fg_csr A;
  EXPECT_OK(fg_csr_from_edges(3, src, dst, 2, 1, 1, 1, &A));
  EXPECT(A.nnz == 7);
  EXPECT_OK(fg_adj_normalize(&A, FG_ADJ_SYM));
  EXPECT(A.val != NULL);
  const double want[7] = {1.0 / 2,         1.0 / sqrt(6.0), /* row 0: cols 0, 1 */
                          1.0 / sqrt(6.0), 1.0 / 3,
                          1.0 / sqrt(6.0),           /* row 1: cols 0, 1, 2 */
                          1.0 / sqrt(6.0), 1.0 / 2}; /* row 2: cols 1, 2 */
  for (int k = 0; k < 7; k++)
    EXPECT_MSG(fabs(A.val[k] - want[k]) < 1e-7, "entry %d: %g vs %g", k, (double)A.val[k], want[k]);
  /* normalizing again gives the same values (computed from the pattern) */
  EXPECT_OK(fg_adj_normalize(&A, FG_ADJ_SYM));
  EXPECT(fabs(A.val[3] - 1.0 / 3) < 1e-7);
  fg_csr_free(&A);

  /* directed: 0->1, 0->2 (rows 1, 2 hold column 0): row counts 0,1,1; column 0 count 2 */
  const int64_t s2[] = {0, 0}, d2[] = {1, 2};
  EXPECT_OK(fg_csr_from_edges(3, s2, d2, 2, 0, 1, 0, &A));
  EXPECT_OK(fg_adj_normalize(&A, FG_ADJ_SYM));
  EXPECT(A.nnz == 2);
  EXPECT(fabs(A.val[0] - 1.0 / sqrt(2.0)) < 1e-7 && fabs(A.val[1] - 1.0 / sqrt(2.0)) < 1e-7);
  fg_csr_free(&A);
}

/* Large enough to be cut into several parts: the result must not depend on threads. */
static void test_threads(void) {
  const int64_t n = 5000, m = 300000;
  int64_t *src = malloc((size_t)m * sizeof *src), *dst = malloc((size_t)m * sizeof *dst);
  EXPECT(src && dst);
  if (!src || !dst) goto done;
  for (int64_t e = 0; e < m; e++) {
    /* skewed: many edges into low ids, so rows are long and buckets unequal */
    const uint64_t r = fg_rng_u64(5, 99, (uint64_t)e, 0, 0, 0);
    src[e] = (int64_t)((r & 0xffffffffu) % (uint64_t)n);
    dst[e] = (int64_t)(((r >> 32) % (uint64_t)n) * ((r >> 32) % (uint64_t)n) / (uint64_t)n);
  }
  fg_csr A, B;
#ifdef _OPENMP
  const int saved = omp_get_max_threads();
  omp_set_num_threads(1);
#endif
  EXPECT_OK(fg_csr_from_edges(n, src, dst, m, 1, 1, 1, &A));
#ifdef _OPENMP
  omp_set_num_threads(4);
#endif
  EXPECT_OK(fg_csr_from_edges(n, src, dst, m, 1, 1, 1, &B));
#ifdef _OPENMP
  omp_set_num_threads(saved);
#endif
  EXPECT(csr_valid(&A) && fg_csr_is_symmetric(&A));
  EXPECT(A.nnz == B.nnz);
  EXPECT(memcmp(A.rowptr, B.rowptr, (size_t)(n + 1) * sizeof *A.rowptr) == 0);
  EXPECT(A.nnz == B.nnz && memcmp(A.col, B.col, (size_t)A.nnz * sizeof *A.col) == 0);
  /* every input edge is present both ways */
  int missing = 0;
  for (int64_t e = 0; e < m; e += 97) {
    int found = 0;
    for (int64_t k = A.rowptr[dst[e]]; k < A.rowptr[dst[e] + 1]; k++) found |= A.col[k] == src[e];
    missing += !found;
  }
  EXPECT(missing == 0);
  fg_csr_free(&A);
  fg_csr_free(&B);
done:
  free(src);
  free(dst);
}

int main(void) {
  test_small_directed();
  test_empty_and_errors();
  test_against_dense();
  test_symmetric_check();
  test_normalize_path();
  test_threads();
  return fg_test_finish("test_graph_csr");
}
