/* test_graph_scale.c -- R-MAT scale 20, edge factor 16 (16.8M edges, ~31M entries after
 * symmetrizing): the builders must stay fast and lean. Label: long. */
#include <stdlib.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "testutil.h"

int main(int argc, char **argv) {
  const int scale = argc > 1 ? atoi(argv[1]) : 20;
  const int64_t ef = 16, n = (int64_t)1 << scale;
  int64_t *src = NULL, *dst = NULL, m = 0;
  fg_csr A;
  memset(&A, 0, sizeof A);
  int32_t *labels = NULL;

  double t0 = fg_now();
  EXPECT_OK(fg_rmat_edges(scale, ef, 1, &src, &dst, &m));
  double t1 = fg_now();
  EXPECT(m == ef * n);
  EXPECT_OK(fg_csr_from_edges(n, src, dst, m, 1, 1, 1, &A));
  double t2 = fg_now();
  int sym = fg_csr_is_symmetric(&A);
  double t3 = fg_now();
  EXPECT(sym);
  EXPECT_OK(fg_adj_normalize(&A, FG_ADJ_SYM));
  double t4 = fg_now();
  EXPECT_OK(fg_generate_labels(&A, 32, 0, &labels));
  double t5 = fg_now();
  fg_degree_stats s;
  fg_degree_stats_compute(&A, &s);

  printf("scale %d: %lld edges, %lld stored entries, %d threads\n", scale, (long long)m,
         (long long)A.nnz, fg_max_threads());
  printf("  rmat %.2f s  csr %.2f s  symmetric check %.2f s  normalize %.2f s  labels %.2f s\n",
         t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4);
  printf("  degree min %lld max %lld mean %.2f p50 %lld p99 %lld isolated %lld\n", (long long)s.min,
         (long long)s.max, s.mean, (long long)s.p50, (long long)s.p99, (long long)s.isolated);
  printf("  peak RSS %.0f MiB\n", (double)fg_peak_rss_bytes() / 1048576.0);

  /* entries: at most 2m + n, and dedup removes a real share of R-MAT's repeats */
  EXPECT(A.nnz > m && A.nnz < 2 * m + n);
  EXPECT((double)s.max > 50.0 * s.mean);
  /* generous bounds for a loaded 2-core machine; the point is "seconds, not minutes" */
  EXPECT_MSG(t2 - t1 < 60.0, "building the CSR took %.1f s", t2 - t1);
  /* input 16 B/edge + keys and columns 12 B/entry + features-free rest: well under 2 GiB */
  EXPECT_MSG(fg_peak_rss_bytes() < ((int64_t)2 << 30), "peak RSS %lld bytes",
             (long long)fg_peak_rss_bytes());

  free(src);
  free(dst);
  free(labels);
  fg_csr_free(&A);
  return fg_test_finish("test_graph_scale");
}
