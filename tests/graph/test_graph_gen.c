/* test_graph_gen.c -- generated features, degree-quantile labels, random splits, R-MAT. */
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "graph/fg_graph.h"
#include "testutil.h"

static void test_features(void) {
  float *a = NULL, *b = NULL, *c = NULL;
  EXPECT_OK(fg_generate_features(50, 7, 3, &a));
  EXPECT_OK(fg_generate_features(80, 7, 3, &b)); /* more nodes: the first 50 rows agree */
  EXPECT_OK(fg_generate_features(50, 7, 4, &c));
  if (a && b && c) {
    EXPECT(memcmp(a, b, 50 * 7 * sizeof *a) == 0);
    EXPECT(memcmp(a, c, 50 * 7 * sizeof *a) != 0);
    double lo = 1, hi = -1, sum = 0;
    for (int i = 0; i < 50 * 7; i++) {
      lo = fmin(lo, a[i]);
      hi = fmax(hi, a[i]);
      sum += a[i];
    }
    EXPECT(lo >= -1.0 && hi < 1.0 && lo < -0.8 && hi > 0.8);
    EXPECT(fabs(sum / 350) < 0.15);
    /* element (v, j) is the documented pure function of (seed, v, j) */
    EXPECT(a[3 * 7 + 5] == 2.0f * fg_rng_uniform(3, FG_RNG_FEATURES, 3, 5, 0, 0) - 1.0f);
  }
  free(a);
  free(b);
  free(c);
  a = NULL;
  EXPECT(fg_generate_features(10, 0, 0, &a) == FG_ERR_INVALID_ARG && a == NULL);
  EXPECT(fg_test_error_contains("feature width"));
}

/* counts per class differ by at most one, and labels never decrease with degree */
static void check_labels(const fg_csr *A, const int32_t *y, int64_t C) {
  const int64_t n = A->nrows;
  int64_t cnt[64] = {0};
  int bad_range = 0;
  for (int64_t v = 0; v < n; v++) {
    if (y[v] < 0 || y[v] >= C)
      bad_range = 1;
    else
      cnt[y[v]]++;
  }
  EXPECT(!bad_range);
  for (int64_t c = 0; c < C; c++)
    EXPECT_MSG(cnt[c] == n / C || cnt[c] == n / C + 1, "class %lld has %lld of %lld nodes",
               (long long)c, (long long)cnt[c], (long long)n);
  int mono = 1;
  for (int64_t u = 0; u < n; u++)
    for (int64_t v = 0; v < n; v++) {
      const int64_t du = A->rowptr[u + 1] - A->rowptr[u], dv = A->rowptr[v + 1] - A->rowptr[v];
      if (du < dv && y[u] > y[v]) mono = 0;
    }
  EXPECT(mono);
}

static void test_labels(void) {
  /* a star with centre 0 over 1..40, plus a path 41 - 42 - ... - 102 */
  int64_t src[200], dst[200], m = 0;
  for (int64_t v = 1; v <= 40; v++) src[m] = 0, dst[m++] = v;
  for (int64_t v = 41; v < 102; v++) src[m] = v, dst[m++] = v + 1;
  fg_csr A;
  EXPECT_OK(fg_csr_from_edges(103, src, dst, m, 1, 1, 1, &A));
  int32_t *y = NULL, *y2 = NULL, *y3 = NULL;
  EXPECT_OK(fg_generate_labels(&A, 4, 9, &y));
  EXPECT_OK(fg_generate_labels(&A, 4, 9, &y2));
  EXPECT_OK(fg_generate_labels(&A, 4, 10, &y3));
  if (y && y2 && y3) {
    check_labels(&A, y, 4);
    check_labels(&A, y3, 4);
    EXPECT(memcmp(y, y2, 103 * sizeof *y) == 0);
    EXPECT(y[0] == 3);                           /* the hub has the top degree */
    EXPECT(memcmp(y, y3, 103 * sizeof *y) != 0); /* ties broken by hashed id */
  }
  free(y);
  free(y2);
  free(y3);

  /* one class: everything 0; more classes than nodes is allowed */
  y = NULL;
  EXPECT_OK(fg_generate_labels(&A, 1, 0, &y));
  if (y) {
    int all0 = 1;
    for (int v = 0; v < 103; v++) all0 &= y[v] == 0;
    EXPECT(all0);
  }
  free(y);
  y = NULL;
  EXPECT(fg_generate_labels(&A, 0, 0, &y) == FG_ERR_INVALID_ARG && y == NULL);
  fg_csr_free(&A);

  /* a cycle: all degrees equal, so the classes come only from the hashed ids */
  for (int64_t v = 0; v < 64; v++) src[v] = v, dst[v] = (v + 1) % 64;
  EXPECT_OK(fg_csr_from_edges(64, src, dst, 64, 1, 1, 1, &A));
  EXPECT_OK(fg_generate_labels(&A, 8, 1, &y));
  if (y) {
    check_labels(&A, y, 8);
    int sorted_by_id = 1;
    for (int v = 1; v < 64; v++) sorted_by_id &= y[v] >= y[v - 1];
    EXPECT(!sorted_by_id);
  }
  free(y);
  fg_csr_free(&A);
}

static void test_split(void) {
  const int64_t n = 200000;
  int32_t *labels = malloc((size_t)n * sizeof *labels);
  int8_t *s = NULL, *s2 = NULL, *s3 = NULL;
  EXPECT(labels != NULL);
  if (!labels) return;
  for (int64_t v = 0; v < n; v++) labels[v] = v % 10 == 0 ? -1 : (int32_t)(v % 3);
  EXPECT_OK(fg_generate_split(n, labels, 0.5, 0.3, 7, &s));
  EXPECT_OK(fg_generate_split(1000, labels, 0.5, 0.3, 7, &s2)); /* a prefix of the graph */
  EXPECT_OK(fg_generate_split(n, labels, 0.5, 0.3, 8, &s3));
  if (s && s2 && s3) {
    int64_t cnt[4] = {0};
    int none_ok = 1;
    for (int64_t v = 0; v < n; v++) {
      cnt[s[v] + 1]++;
      if ((labels[v] < 0) != (s[v] == FG_SPLIT_NONE)) none_ok = 0;
    }
    EXPECT(none_ok);
    const double lab = (double)(n - n / 10);
    EXPECT_MSG(fabs(cnt[1] / lab - 0.5) < 0.01, "train %lld", (long long)cnt[1]);
    EXPECT_MSG(fabs(cnt[2] / lab - 0.3) < 0.01, "valid %lld", (long long)cnt[2]);
    EXPECT_MSG(fabs(cnt[3] / lab - 0.2) < 0.01, "test %lld", (long long)cnt[3]);
    EXPECT(cnt[0] == n / 10);
    EXPECT(memcmp(s, s2, 1000) == 0);
    EXPECT(memcmp(s, s3, (size_t)n) != 0);
  }
  free(s);
  free(s2);
  free(s3);

  /* no labels: every node takes part; fractions 1 / 0 */
  s = NULL;
  EXPECT_OK(fg_generate_split(100, NULL, 1.0, 0.0, 0, &s));
  if (s) {
    int all_train = 1;
    for (int v = 0; v < 100; v++) all_train &= s[v] == FG_SPLIT_TRAIN;
    EXPECT(all_train);
  }
  free(s);
  s = NULL;
  EXPECT(fg_generate_split(10, NULL, 0.8, 0.3, 0, &s) == FG_ERR_INVALID_ARG && s == NULL);
  EXPECT(fg_test_error_contains("must not exceed 1"));
  EXPECT(fg_generate_split(10, NULL, -0.1, 0.3, 0, &s) == FG_ERR_INVALID_ARG);
  EXPECT(fg_generate_split(10, NULL, NAN, 0.3, 0, &s) == FG_ERR_INVALID_ARG);
  free(labels);
}

static void test_rmat(void) {
  const int scale = 14;
  const int64_t n = (int64_t)1 << scale;
  int64_t *s = NULL, *d = NULL, m = 0, *s2 = NULL, *d2 = NULL, m2 = 0, *s3 = NULL, *d3 = NULL,
          m3 = 0;
  int64_t *deg = calloc((size_t)n, sizeof *deg);
  EXPECT_OK(fg_rmat_edges(scale, 8, 42, &s, &d, &m));
  EXPECT_OK(fg_rmat_edges(scale, 8, 42, &s2, &d2, &m2));
  EXPECT_OK(fg_rmat_edges(scale, 8, 43, &s3, &d3, &m3));
  EXPECT(m == 8 * n && m2 == m && m3 == m);
  if (s && d && s2 && d2 && s3 && d3 && deg) {
    int in_range = 1;
    for (int64_t e = 0; e < m; e++) {
      in_range &= s[e] >= 0 && s[e] < n && d[e] >= 0 && d[e] < n;
      if (s[e] >= 0 && s[e] < n) deg[s[e]]++;
      if (d[e] >= 0 && d[e] < n) deg[d[e]]++;
    }
    EXPECT(in_range);
    EXPECT(memcmp(s, s2, (size_t)m * sizeof *s) == 0 && memcmp(d, d2, (size_t)m * sizeof *d) == 0);
    EXPECT(memcmp(s, s3, (size_t)m * sizeof *s) != 0);
    int64_t maxdeg = 0, isolated = 0;
    for (int64_t v = 0; v < n; v++) {
      maxdeg = FG_MAX(maxdeg, deg[v]);
      isolated += deg[v] == 0;
    }
    const double mean = 2.0 * (double)m / (double)n;
    EXPECT_MSG((double)maxdeg > 20.0 * mean, "max degree %lld, mean %.1f", (long long)maxdeg, mean);
    EXPECT(isolated > 0 && isolated < n / 2); /* R-MAT leaves some nodes without edges */
    /* the hub is not node 0: ids are scrambled */
    int64_t hub = 0;
    for (int64_t v = 0; v < n; v++)
      if (deg[v] > deg[hub]) hub = v;
    EXPECT(hub != 0);
    /* duplicates and self loops are left in, but most edges are distinct */
    int64_t loops = 0;
    for (int64_t e = 0; e < m; e++) loops += s[e] == d[e];
    EXPECT(loops > 0);
    fg_csr A;
    EXPECT_OK(fg_csr_from_edges(n, s, d, m, 0, 1, 0, &A));
    EXPECT_MSG(A.nnz > m * 8 / 10 && A.nnz < m, "%lld distinct of %lld edges", (long long)A.nnz,
               (long long)m);
    fg_csr_free(&A);
  }
  free(s);
  free(d);
  free(s2);
  free(d2);
  free(s3);
  free(d3);
  free(deg);

  /* the scrambling is a bijection of [0, 2^k) */
  for (int k = 1; k <= 12; k++) {
    const int64_t nk = (int64_t)1 << k;
    unsigned char *seen = calloc((size_t)nk, 1);
    int ok = seen != NULL;
    for (int64_t x = 0; ok && x < nk; x++) {
      const uint64_t y = fg_rmat_scramble((uint64_t)x, k, 77);
      if (y >= (uint64_t)nk || seen[y])
        ok = 0;
      else
        seen[y] = 1;
    }
    EXPECT_MSG(ok, "scramble is not a bijection at scale %d", k);
    free(seen);
  }
  EXPECT(fg_rmat_scramble(5, 12, 1) != fg_rmat_scramble(5, 12, 2) ||
         fg_rmat_scramble(6, 12, 1) != fg_rmat_scramble(6, 12, 2));

  s = d = NULL;
  EXPECT(fg_rmat_edges(0, 8, 0, &s, &d, &m) == FG_ERR_INVALID_ARG && s == NULL);
  EXPECT(fg_rmat_edges(31, 8, 0, &s, &d, &m) == FG_ERR_INVALID_ARG);
  EXPECT(fg_rmat_edges(10, 0, 0, &s, &d, &m) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("edge factor"));
}

/* The edge probabilities follow a, b, c, d: with scale 1 and the scrambling a bijection of
 * {0, 1}, the four (src, dst) pairs occur with frequencies .57 .19 .19 .05 up to relabelling. */
static void test_rmat_quadrants(void) {
  int64_t *s = NULL, *d = NULL, m = 0;
  EXPECT_OK(fg_rmat_edges(1, 100000, 5, &s, &d, &m));
  if (!s || !d) return;
  int64_t q[2][2] = {{0, 0}, {0, 0}};
  for (int64_t e = 0; e < m; e++) q[s[e]][d[e]]++;
  /* the most frequent pair is the image of (0, 0); the least frequent the image of (1, 1) */
  int64_t hi = 0, lo = m;
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      hi = FG_MAX(hi, q[i][j]);
      lo = FG_MIN(lo, q[i][j]);
    }
  EXPECT_MSG(fabs((double)hi / (double)m - 0.57) < 0.01, "top quadrant %.4f",
             (double)hi / (double)m);
  EXPECT_MSG(fabs((double)lo / (double)m - 0.05) < 0.01, "bottom quadrant %.4f",
             (double)lo / (double)m);
  free(s);
  free(d);
}

int main(void) {
  test_features();
  test_labels();
  test_split();
  test_rmat();
  test_rmat_quadrants();
  return fg_test_finish("test_graph_gen");
}
