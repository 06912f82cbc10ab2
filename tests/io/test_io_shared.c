/* test_io_shared.c -- every reader on the real datasets in ../shared/data (skipped when that
 * folder is absent): exact sizes from the data's README, and the memory variants agree with
 * the path readers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "io/fg_io.h"
#include "io/fg_io_internal.h"
#include "testutil.h"

#define D FG_SHARED_DATA

static int64_t count_split(const fg_raw *r, int k) {
  int64_t c = 0;
  for (int64_t i = 0; r->split && i < r->num_nodes; i++) c += r->split[i] == k;
  return c;
}

static int raw_equal(const fg_raw *a, const fg_raw *b) {
  if (a->num_nodes != b->num_nodes || a->num_edges != b->num_edges ||
      a->num_features != b->num_features || a->num_classes != b->num_classes ||
      a->directed != b->directed)
    return 0;
  size_t m = (size_t)a->num_edges, n = (size_t)a->num_nodes;
  if (memcmp(a->src, b->src, m * 8) || memcmp(a->dst, b->dst, m * 8)) return 0;
  if ((a->features == NULL) != (b->features == NULL) ||
      (a->features && memcmp(a->features, b->features, n * (size_t)a->num_features * 4)))
    return 0;
  if ((a->labels == NULL) != (b->labels == NULL) ||
      (a->labels && memcmp(a->labels, b->labels, n * 4)))
    return 0;
  if ((a->split == NULL) != (b->split == NULL) || (a->split && memcmp(a->split, b->split, n)))
    return 0;
  return 1;
}

static void check_cora_ogb(void) {
  fg_raw a, b;
  EXPECT_OK(fg_read_ogb(D "/cora-ogb", NULL, &a));
  EXPECT(a.num_nodes == 2708 && a.num_edges == 5278 && a.num_features == 1433 &&
         a.num_classes == 7);
  EXPECT(count_split(&a, 0) == 140 && count_split(&a, 1) == 500 && count_split(&a, 2) == 1000);
  /* the bundled copy holds the same data */
  EXPECT_OK(fg_read_ogb(FG_DEMO_DATA, "planetoid", &b));
  EXPECT(raw_equal(&a, &b));
  fg_raw_free(&a);
  fg_raw_free(&b);
}

/* The path reader and the memory reader agree. */
static void check_npz_mem(const char *path, int split, const fg_raw *ref) {
  unsigned char *buf = NULL;
  size_t len = 0;
  fg_raw m;
  EXPECT_OK(fg_file_slurp(path, &buf, &len));
  EXPECT_OK(fg_read_npz_mem(buf, len, path, split, &m));
  EXPECT_MSG(raw_equal(ref, &m), "%s: memory reader differs", path);
  fg_raw_free(&m);
  free(buf);
}

static void check_gnn_benchmark(void) {
  const char *p = D "/gnn_benchmark/cora.npz";
  fg_raw r;
  EXPECT_OK(fg_read_npz(p, 0, &r));
  EXPECT(r.num_nodes == 2708 && r.num_edges == 5429 && r.num_features == 1433);
  EXPECT(r.directed == 1 && r.split == NULL && r.labels && r.num_classes == 7);
  int64_t ones = 0, other = 0;
  for (int64_t i = 0; r.features && i < r.num_nodes * r.num_features; i++) {
    if (r.features[i] == 1.0f) ones++;
    else if (r.features[i] != 0.0f) other++;
  }
  EXPECT_MSG(ones == 49216 && other == 0, "ones %lld other %lld", (long long)ones,
             (long long)other);
  int64_t bad = 0;
  for (int64_t e = 0; e < r.num_edges; e++)
    bad += r.src[e] < 0 || r.src[e] >= 2708 || r.dst[e] < 0 || r.dst[e] >= 2708;
  EXPECT(bad == 0);
  check_npz_mem(p, 0, &r);
  fg_raw_free(&r);
}

static void check_hetero(const char *name, int64_t n, int64_t m, int64_t f, int64_t c) {
  char p[512];
  snprintf(p, sizeof p, "%s/heterophilous/%s", D, name);
  fg_raw r0, r9;
  EXPECT_OK(fg_read_npz(p, 0, &r0));
  EXPECT_MSG(r0.num_nodes == n && r0.num_edges == m && r0.num_features == f &&
                 r0.num_classes == c && r0.directed == 0,
             "%s: n %lld m %lld f %lld c %lld", name, (long long)r0.num_nodes,
             (long long)r0.num_edges, (long long)r0.num_features, (long long)r0.num_classes);
  EXPECT_OK(fg_read_npz(p, 9, &r9));
  EXPECT(r0.split && r9.split);
  if (r0.split && r9.split) {
    EXPECT(count_split(&r0, 0) > 0 && count_split(&r0, 1) > 0 && count_split(&r0, 2) > 0);
    EXPECT(count_split(&r9, 0) == count_split(&r0, 0));
    EXPECT_MSG(memcmp(r0.split, r9.split, (size_t)n) != 0, "%s: splits 0 and 9 are equal",
               name);
    if (strcmp(name, "minesweeper.npz") == 0) /* 50 / 25 / 25 % */
      EXPECT(count_split(&r9, 0) == 5000 && count_split(&r9, 1) == 2500 &&
             count_split(&r9, 2) == 2500);
  }
  check_npz_mem(p, 9, &r9);
  fg_raw bad;
  EXPECT(fg_read_npz(p, 10, &bad) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("split index 10 out of range [0, 10)"));
  EXPECT(fg_test_error_contains(name));
  EXPECT(bad.src == NULL && bad.split == NULL);
  fg_raw_free(&r0);
  fg_raw_free(&r9);
}

static void check_snap(const char *name, int64_t n, int64_t m, int64_t distinct) {
  char p[512];
  snprintf(p, sizeof p, "%s/snap/%s", D, name);
  fg_raw r;
  EXPECT_OK(fg_read_snap(p, &r));
  EXPECT_MSG(r.num_edges == m && r.directed == 1, "%s: %lld edges", name,
             (long long)r.num_edges);
  if (n > 0) EXPECT_MSG(r.num_nodes == n, "%s: %lld nodes", name, (long long)r.num_nodes);
  char *seen = calloc((size_t)r.num_nodes + 1, 1);
  int64_t d = 0;
  for (int64_t e = 0; seen && e < r.num_edges; e++) {
    d += !seen[r.src[e]];
    seen[r.src[e]] = 1;
    d += !seen[r.dst[e]];
    seen[r.dst[e]] = 1;
  }
  EXPECT_MSG(d == distinct, "%s: %lld distinct node ids", name, (long long)d);
  free(seen);
  fg_raw_free(&r);
}

int main(void) {
  if (!fg_test_exists(D "/README.md")) fg_test_skip("no ../shared/data");
  check_cora_ogb();
  check_gnn_benchmark();
  check_hetero("minesweeper.npz", 10000, 39402, 7, 2);
  check_hetero("chameleon.npz", 2277, 31371, 2325, 5);
  check_snap("facebook_combined.txt.gz", 4039, 88234, 4039);
  check_snap("email-Eu-core.txt.gz", 1005, 25571, 1005);
  /* ids are sparse: 18772 distinct nodes, num_nodes = max id + 1 */
  check_snap("ca-AstroPh.txt", 0, 198110, 18772);
  return fg_test_finish("test_io_shared");
}
