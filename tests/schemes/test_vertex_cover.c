/* test_vertex_cover.c -- fg_min_vertex_cover: on random small bipartite graphs (up to 8 + 8
 * vertices, every density) the set returned covers every edge, its size is the one reported,
 * and no smaller cover exists (brute force over every subset); duplicate edges and isolated
 * vertices change nothing; on a 200,000-vertex ladder whose augmenting paths run its whole
 * length the cover is valid and as large as the perfect matching; a bad right id is refused. */
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "schemes/fg_vertex_cover.h"
#include "testutil.h"

/* Whether the vertices marked cover every edge. */
static int covers(int64_t nl, const int64_t *ptr, const int32_t *adj, const uint8_t *cl,
                  const uint8_t *cr) {
  for (int64_t u = 0; u < nl; u++)
    for (int64_t e = ptr[u]; e < ptr[u + 1]; e++)
      if (!cl[u] && !cr[adj[e]]) return 0;
  return 1;
}

/* The smallest cover's size, by trying every subset of the nl + nr (<= 16) vertices. */
static int brute_min(int nl, int nr, const int64_t *ptr, const int32_t *adj) {
  int best = nl + nr;
  for (uint32_t mask = 0; mask < (1u << (nl + nr)); mask++) {
    uint8_t cl[8], cr[8];
    int k = __builtin_popcount(mask);
    if (k >= best) continue;
    for (int i = 0; i < nl; i++) cl[i] = (uint8_t)((mask >> i) & 1u);
    for (int j = 0; j < nr; j++) cr[j] = (uint8_t)((mask >> (nl + j)) & 1u);
    if (covers(nl, ptr, adj, cl, cr)) best = k;
  }
  return best;
}

static void test_small(void) {
  int checked = 0;
  for (uint64_t g = 0; g < 3000; g++) {
    const int nl = (int)(fg_rng_u64(5, 77, g, 0, 0, 0) % 9);
    const int nr = (int)(fg_rng_u64(5, 77, g, 1, 0, 0) % 9);
    const double density = (double)(g % 10) / 9.0;
    int64_t ptr[9] = {0}, size = -1;
    int32_t adj[8 * 8 * 2];
    uint8_t cl[8], cr[8];
    int ne = 0;
    for (int u = 0; u < nl; u++) {
      for (int v = 0; v < nr; v++)
        if (fg_rng_uniform_d(5, 78, g, (uint64_t)u, (uint64_t)v, 0) < density) {
          adj[ne++] = v;
          if ((u + v + (int)g) % 7 == 0) adj[ne++] = v; /* a duplicate edge now and then */
        }
      ptr[u + 1] = ne;
    }
    EXPECT_OK(fg_min_vertex_cover(nl, nr, ptr, adj, cl, cr, &size));
    int count = 0;
    for (int u = 0; u < nl; u++) count += cl[u];
    for (int v = 0; v < nr; v++) count += cr[v];
    EXPECT_MSG(covers(nl, ptr, adj, cl, cr), "graph %llu (%d x %d): not a cover",
               (unsigned long long)g, nl, nr);
    EXPECT_MSG(count == size, "graph %llu: %d vertices marked, size %lld",
               (unsigned long long)g, count, (long long)size);
    EXPECT_MSG(size == brute_min(nl, nr, ptr, adj), "graph %llu (%d x %d): cover of %lld, the "
               "smallest has %d", (unsigned long long)g, nl, nr, (long long)size,
               brute_min(nl, nr, ptr, adj));
    checked++;
  }
  printf("vertex cover: %d random graphs of up to 8 + 8 vertices equal brute force\n", checked);
}

/* Left i joins right i and right i + 1, listed so that a greedy first pass matches left i to
 * right i + 1 and leaves left n - 1's augmenting path running through the whole ladder. */
static void test_ladder(void) {
  enum { NL = 200000 };
  int64_t *ptr = malloc((NL + 1) * sizeof *ptr), size = -1;
  int32_t *adj = malloc(2 * NL * sizeof *adj);
  uint8_t *cl = malloc(NL), *cr = malloc(NL);
  int ne = 0, count = 0;
  if (!ptr || !adj || !cl || !cr) exit(2);
  ptr[0] = 0;
  for (int u = 0; u < NL; u++) {
    if (u + 1 < NL) adj[ne++] = u + 1;
    adj[ne++] = u;
    ptr[u + 1] = ne;
  }
  EXPECT_OK(fg_min_vertex_cover(NL, NL, ptr, adj, cl, cr, &size));
  for (int i = 0; i < NL; i++) count += cl[i] + cr[i];
  EXPECT(covers(NL, ptr, adj, cl, cr));
  EXPECT_MSG(size == NL && count == NL, "ladder: cover %lld (%d marked), perfect matching %d",
             (long long)size, count, NL);
  /* a right id out of range is refused */
  adj[0] = NL;
  EXPECT(fg_min_vertex_cover(NL, NL, ptr, adj, cl, cr, &size) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("vertex cover: edge 0 goes to right vertex"));
  free(ptr);
  free(adj);
  free(cl);
  free(cr);
}

int main(void) {
  test_small();
  test_ladder();
  return fg_test_finish("test_vertex_cover");
}
