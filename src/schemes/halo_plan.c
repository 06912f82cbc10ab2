/* halo_plan.c -- see fg_halo.h. Receiver by receiver: its in-edges from other blocks bucketed
 * by the sender's block, then each sender's bucket numbered into a small bipartite graph (its
 * distinct sources on the left, distinct destinations on the right) and covered. */
#include <stdlib.h>
#include <string.h>

#include "schemes/fg_halo.h"
#include "schemes/fg_vertex_cover.h"

fg_status fg_halo_volumes(const fg_csr *B, const int64_t *offs, int parts, fg_halo_volume *vol) {
  fg_status st = FG_OK;
  const int64_t n = B->nrows;
  int32_t *owner = NULL, *adj = NULL;
  int64_t *lid = NULL, *rid = NULL, *start = NULL, *src = NULL, *dst = NULL, *ptr = NULL;
  uint8_t *cl = NULL, *cr = NULL;
  int64_t cap = 0;
  memset(vol, 0, (size_t)parts * (size_t)parts * sizeof *vol);
  FG_ALLOC(owner, FG_MAX(n, 1));
  FG_ALLOC(lid, FG_MAX(n, 1));
  FG_ALLOC(rid, FG_MAX(n, 1));
  FG_ALLOC(start, (int64_t)parts + 1);
  for (int p = 0; p < parts; p++)
    for (int64_t v = offs[p]; v < offs[p + 1]; v++) owner[v] = p;
  for (int64_t v = 0; v < n; v++) lid[v] = rid[v] = -1;
  /* room for every in-edge of the largest block */
  for (int r = 0; r < parts; r++)
    cap = FG_MAX(cap, B->rowptr[offs[r + 1]] - B->rowptr[offs[r]]);
  FG_ALLOC(src, FG_MAX(cap, 1));
  FG_ALLOC(dst, FG_MAX(cap, 1));
  FG_ALLOC(adj, FG_MAX(cap, 1));
  FG_ALLOC(ptr, cap + 1);
  FG_ALLOC(cl, FG_MAX(cap, 1));
  FG_ALLOC(cr, FG_MAX(cap, 1));
  for (int r = 0; r < parts; r++) {
    /* the cut in-edges (source v, destination u), bucketed by the source's block */
    memset(start, 0, ((size_t)parts + 1) * sizeof *start);
    for (int64_t u = offs[r]; u < offs[r + 1]; u++)
      for (int64_t e = B->rowptr[u]; e < B->rowptr[u + 1]; e++)
        if (owner[B->col[e]] != r) start[owner[B->col[e]] + 1]++;
    for (int p = 0; p < parts; p++) start[p + 1] += start[p];
    for (int64_t u = offs[r]; u < offs[r + 1]; u++)
      for (int64_t e = B->rowptr[u]; e < B->rowptr[u + 1]; e++) {
        const int s = owner[B->col[e]];
        if (s == r) continue;
        src[start[s]] = B->col[e];
        dst[start[s]++] = u;
      }
    for (int p = parts; p > 0; p--) start[p] = start[p - 1]; /* back to the buckets' starts */
    start[0] = 0;
    for (int s = 0; s < parts; s++) {
      const int64_t b0 = start[s], b1 = start[s + 1];
      int64_t nl = 0, nr = 0, size = 0;
      if (b0 == b1) continue;
      for (int64_t k = b0; k < b1; k++) {
        if (lid[src[k]] < 0) lid[src[k]] = nl++;
        if (rid[dst[k]] < 0) rid[dst[k]] = nr++;
      }
      /* the bipartite graph from the left: counts, then a fill in bucket order */
      memset(ptr, 0, (size_t)(nl + 1) * sizeof *ptr);
      for (int64_t k = b0; k < b1; k++) ptr[lid[src[k]] + 1]++;
      for (int64_t i = 0; i < nl; i++) ptr[i + 1] += ptr[i];
      for (int64_t k = b0; k < b1; k++) adj[ptr[lid[src[k]]]++] = (int32_t)rid[dst[k]];
      for (int64_t i = nl; i > 0; i--) ptr[i] = ptr[i - 1];
      ptr[0] = 0;
      FG_CHECK(fg_min_vertex_cover(nl, nr, ptr, adj, cl, cr, &size));
      vol[(int64_t)s * parts + r] = (fg_halo_volume){.pre = nr, .post = nl, .hybrid = size};
      for (int64_t k = b0; k < b1; k++) lid[src[k]] = rid[dst[k]] = -1;
    }
  }
cleanup:
  free(owner);
  free(lid);
  free(rid);
  free(start);
  free(src);
  free(dst);
  free(adj);
  free(ptr);
  free(cl);
  free(cr);
  return st;
}
