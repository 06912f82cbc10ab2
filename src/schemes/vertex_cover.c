/* vertex_cover.c -- see fg_vertex_cover.h. */
#include <stdlib.h>
#include <string.h>

#include "schemes/fg_vertex_cover.h"

#define UNREACHED INT64_MAX

typedef struct hk {
  int64_t nl, nr;
  const int64_t *ptr;
  const int32_t *adj;
  int64_t *match_l, *match_r; /* the partner, or -1 */
  int64_t *dist;              /* BFS layer of each left vertex */
  int64_t *queue;             /* (nl) BFS queue, then the DFS stack */
  int64_t *it;                /* (nl) the edge each left vertex's DFS is at */
  int64_t free_dist;          /* the layer at which a free right vertex was first reached */
} hk;

/* Layers from the free left vertices along unmatched edges out, matched edges back; 1 when
 * some free right vertex is reachable (an augmenting path exists). */
static int hk_bfs(hk *h) {
  int64_t head = 0, tail = 0;
  h->free_dist = UNREACHED;
  for (int64_t u = 0; u < h->nl; u++) {
    h->dist[u] = h->match_l[u] < 0 ? 0 : UNREACHED;
    if (h->match_l[u] < 0) h->queue[tail++] = u;
  }
  while (head < tail) {
    const int64_t u = h->queue[head++];
    if (h->dist[u] >= h->free_dist) continue; /* no shorter path lies beyond */
    for (int64_t e = h->ptr[u]; e < h->ptr[u + 1]; e++) {
      const int64_t w = h->match_r[h->adj[e]];
      if (w < 0) {
        if (h->free_dist == UNREACHED) h->free_dist = h->dist[u] + 1;
      } else if (h->dist[w] == UNREACHED) {
        h->dist[w] = h->dist[u] + 1;
        h->queue[tail++] = w;
      }
    }
  }
  return h->free_dist != UNREACHED;
}

/* One shortest augmenting path from the free left vertex u along the layers, applied; 1 if
 * found. Iterative: the stack holds the path's left vertices, each at the edge it tries. */
static int hk_augment(hk *h, int64_t u) {
  int64_t *stack = h->queue, sp = 0;
  stack[sp++] = u;
  while (sp > 0) {
    const int64_t x = stack[sp - 1];
    if (h->it[x] == h->ptr[x + 1]) { /* a dead end: not again in this phase */
      h->dist[x] = UNREACHED;
      if (--sp > 0) h->it[stack[sp - 1]]++;
      continue;
    }
    const int64_t v = h->adj[h->it[x]], w = h->match_r[v];
    if (w < 0 && h->dist[x] + 1 == h->free_dist) {
      for (int64_t k = sp - 1; k >= 0; k--) { /* flip the path: each takes the edge it is at */
        const int64_t y = stack[k], vv = h->adj[h->it[y]];
        h->match_l[y] = vv;
        h->match_r[vv] = y;
      }
      return 1;
    }
    if (w >= 0 && h->dist[w] == h->dist[x] + 1) stack[sp++] = w;
    else h->it[x]++;
  }
  return 0;
}

fg_status fg_min_vertex_cover(int64_t nl, int64_t nr, const int64_t *ptr, const int32_t *adj,
                              uint8_t *in_left, uint8_t *in_right, int64_t *size) {
  fg_status st = FG_OK;
  hk h = {nl, nr, ptr, adj, NULL, NULL, NULL, NULL, NULL, 0};
  uint8_t *seen_l = NULL, *seen_r = NULL;
  int64_t matched = 0;
  for (int64_t e = 0; nl > 0 && e < ptr[nl]; e++)
    FG_REQUIRE(adj[e] >= 0 && adj[e] < nr, FG_ERR_INVALID_ARG,
               "vertex cover: edge %lld goes to right vertex %d of %lld", (long long)e, adj[e],
               (long long)nr);
  FG_ALLOC(h.match_l, FG_MAX(nl, 1));
  FG_ALLOC(h.match_r, FG_MAX(nr, 1));
  FG_ALLOC(h.dist, FG_MAX(nl, 1));
  FG_ALLOC(h.queue, FG_MAX(nl, 1));
  FG_ALLOC(h.it, FG_MAX(nl, 1));
  FG_CALLOC(seen_l, FG_MAX(nl, 1));
  FG_CALLOC(seen_r, FG_MAX(nr, 1));
  for (int64_t u = 0; u < nl; u++) h.match_l[u] = -1;
  for (int64_t v = 0; v < nr; v++) h.match_r[v] = -1;
  while (hk_bfs(&h)) {
    memcpy(h.it, ptr, (size_t)nl * sizeof *h.it);
    for (int64_t u = 0; u < nl; u++)
      if (h.match_l[u] < 0) matched += hk_augment(&h, u);
  }
  /* König: Z = reachable from the free left vertices, out along any edge, back along the
   * matching; the cover is the left vertices outside Z and the right ones inside it */
  {
    int64_t head = 0, tail = 0;
    for (int64_t u = 0; u < nl; u++)
      if (h.match_l[u] < 0) {
        seen_l[u] = 1;
        h.queue[tail++] = u;
      }
    while (head < tail) {
      const int64_t u = h.queue[head++];
      for (int64_t e = ptr[u]; e < ptr[u + 1]; e++) {
        const int64_t v = adj[e], w = h.match_r[v];
        if (seen_r[v]) continue;
        seen_r[v] = 1;
        if (w >= 0 && !seen_l[w]) {
          seen_l[w] = 1;
          h.queue[tail++] = w;
        }
      }
    }
  }
  for (int64_t u = 0; u < nl; u++) in_left[u] = (uint8_t)!seen_l[u];
  for (int64_t v = 0; v < nr; v++) in_right[v] = seen_r[v];
  if (size) *size = matched;
cleanup:
  free(h.match_l);
  free(h.match_r);
  free(h.dist);
  free(h.queue);
  free(h.it);
  free(seen_l);
  free(seen_r);
  return st;
}
