/* halo_plan.c -- see fg_halo.h. One receiving block at a time: its in-edges from other blocks
 * bucketed by the sender's block and sorted by (source, destination), then each sender's bucket
 * numbered into a small bipartite graph (its distinct sources on the left, distinct
 * destinations on the right) and covered by the rule. Memory: the cut's edges and one marker
 * per row of the block, never an array over the whole graph. */
#include <stdlib.h>
#include <string.h>

#include "graph/fg_order.h"
#include "schemes/fg_halo.h"
#include "schemes/fg_vertex_cover.h"

static const char *const rule_names[] = {"hybrid", "pre", "post"};

fg_status fg_halo_rule_parse(const char *name, fg_halo_rule *out) {
  fg_status st = FG_OK;
  *out = FG_HALO_HYBRID;
  if (!name) return FG_OK;
  for (int k = 0; k < 3; k++)
    if (strcmp(name, rule_names[k]) == 0) {
      *out = (fg_halo_rule)k;
      return FG_OK;
    }
  FG_FAIL(FG_ERR_INVALID_ARG, "--aggregation must be pre, post or hybrid, got '%s'", name);
cleanup:
  return st;
}

const char *fg_halo_rule_name(fg_halo_rule rule) {
  return (unsigned)rule < 3u ? rule_names[rule] : "?";
}

fg_status fg_halo_quant_parse(const char *name, int *bits) {
  fg_status st = FG_OK;
  static const char *const names[] = {"none", "int8", "int4", "int2"};
  static const int b[] = {0, 8, 4, 2};
  *bits = 0;
  for (int k = 0; name && k < 4; k++)
    if (strcmp(name, names[k]) == 0) {
      *bits = b[k];
      return FG_OK;
    }
  FG_REQUIRE(!name, FG_ERR_INVALID_ARG, "--quantize must be none, int8, int4 or int2, got '%s'",
             name);
cleanup:
  return st;
}

int64_t fg_halo_volume_rows(const fg_halo_volume *v, fg_halo_rule rule) {
  return rule == FG_HALO_PRE ? v->pre : rule == FG_HALO_POST ? v->post : v->hybrid;
}

void fg_halo_cut_free(fg_halo_cut *c) {
  free(c->start);
  free(c->src);
  free(c->dst);
  free(c->val);
  free(c->post);
  free(c->n_src);
  free(c->n_dst);
  free(c->rows_post);
  free(c->rows_pre);
  memset(c, 0, sizeof *c);
}

typedef struct cut_edge {
  int32_t src, dst;
  float val;
} cut_edge;

static int cmp_edge(const void *a, const void *b) {
  const cut_edge *x = a, *y = b;
  if (x->src != y->src) return (x->src > y->src) - (x->src < y->src);
  return (x->dst > y->dst) - (x->dst < y->dst);
}

fg_status fg_halo_cut_build(const fg_csr *B, int64_t row0, int64_t rows, const int64_t *offs,
                            int parts, int me, fg_halo_rule rule,
                            fg_halo_cut *out) {
  fg_status st = FG_OK;
  const int64_t lo = offs[me], hi = offs[me + 1];
  cut_edge *e = NULL;
  int64_t *fill = NULL, *ptr = NULL, *rid = NULL, cap = 0;
  int32_t *adj = NULL;
  uint8_t *cl = NULL, *cr = NULL, *seen = NULL;
  fg_halo_cut *c = out;
  memset(c, 0, sizeof *c);
  c->parts = parts;
  FG_CALLOC(c->start, (int64_t)parts + 1);
  FG_CALLOC(c->n_src, parts);
  FG_CALLOC(c->n_dst, parts);
  FG_CALLOC(c->rows_post, parts);
  FG_CALLOC(c->rows_pre, parts);
  FG_CALLOC(fill, (int64_t)parts + 1);
  for (int64_t u = row0; u < row0 + rows; u++)
    for (int64_t k = B->rowptr[u]; k < B->rowptr[u + 1]; k++)
      if (B->col[k] < lo || B->col[k] >= hi) c->start[fg_block_owner(offs, parts, B->col[k]) + 1]++;
  for (int p = 0; p < parts; p++) c->start[p + 1] += c->start[p];
  c->nnz = c->start[parts];
  FG_ALLOC(e, FG_MAX(c->nnz, 1));
  memcpy(fill, c->start, ((size_t)parts + 1) * sizeof *fill);
  for (int64_t u = row0; u < row0 + rows; u++)
    for (int64_t k = B->rowptr[u]; k < B->rowptr[u + 1]; k++) {
      const int32_t v = B->col[k];
      if (v >= lo && v < hi) continue;
      e[fill[fg_block_owner(offs, parts, v)]++] =
          (cut_edge){v, (int32_t)(u - row0), B->val ? B->val[k] : 1.0f};
    }
  FG_ALLOC(c->src, FG_MAX(c->nnz, 1));
  FG_ALLOC(c->dst, FG_MAX(c->nnz, 1));
  FG_ALLOC(c->val, FG_MAX(c->nnz, 1));
  FG_CALLOC(c->post, FG_MAX(c->nnz, 1));
  FG_ALLOC(rid, FG_MAX(rows, 1));
  FG_CALLOC(seen, FG_MAX(rows, 1));
  for (int64_t u = 0; u < rows; u++) rid[u] = -1;
  for (int p = 0; p < parts; p++) cap = FG_MAX(cap, c->start[p + 1] - c->start[p]);
  FG_ALLOC(ptr, cap + 1);
  FG_ALLOC(adj, FG_MAX(cap, 1));
  FG_ALLOC(cl, FG_MAX(cap, 1));
  FG_ALLOC(cr, FG_MAX(cap, 1));
  for (int s = 0; s < parts; s++) {
    const int64_t b0 = c->start[s], b1 = c->start[s + 1];
    int64_t nl = 0, nr = 0;
    if (b0 == b1) continue;
    qsort(e + b0, (size_t)(b1 - b0), sizeof *e, cmp_edge);
    /* left vertices: runs of one source; right: destinations numbered on first sight */
    ptr[0] = 0;
    for (int64_t k = b0; k < b1; k++) {
      if (k > b0 && e[k].src != e[k - 1].src) ptr[++nl] = k - b0;
      if (rid[e[k].dst] < 0) rid[e[k].dst] = nr++;
      adj[k - b0] = (int32_t)rid[e[k].dst];
    }
    ptr[++nl] = b1 - b0;
    if (rule == FG_HALO_HYBRID) {
      FG_CHECK(fg_min_vertex_cover(nl, nr, ptr, adj, cl, cr, NULL));
    } else {
      memset(cl, rule == FG_HALO_POST, (size_t)nl);
      memset(cr, rule == FG_HALO_PRE, (size_t)nr);
    }
    c->n_src[s] = nl;
    c->n_dst[s] = nr;
    for (int64_t i = 0; i < nl; i++) {
      c->rows_post[s] += cl[i];
      for (int64_t k = b0 + ptr[i]; k < b0 + ptr[i + 1]; k++) {
        c->src[k] = e[k].src;
        c->dst[k] = e[k].dst;
        c->val[k] = e[k].val;
        c->post[k] = cl[i];
        if (!cl[i] && !seen[e[k].dst]) {
          seen[e[k].dst] = 1;
          c->rows_pre[s]++;
        }
      }
    }
    for (int64_t k = b0; k < b1; k++) rid[e[k].dst] = -1, seen[e[k].dst] = 0;
  }
cleanup:
  free(e);
  free(fill);
  free(ptr);
  free(rid);
  free(adj);
  free(cl);
  free(cr);
  free(seen);
  if (st != FG_OK) fg_halo_cut_free(c);
  return st;
}

fg_status fg_halo_volumes(const fg_csr *B, const int64_t *offs, int parts, fg_halo_volume *vol) {
  fg_status st = FG_OK;
  fg_halo_cut c;
  memset(&c, 0, sizeof c);
  memset(vol, 0, (size_t)parts * (size_t)parts * sizeof *vol);
  for (int r = 0; r < parts; r++) {
    FG_CHECK(fg_halo_cut_build(B, offs[r], offs[r + 1] - offs[r], offs, parts, r,
                               FG_HALO_HYBRID, &c));
    for (int s = 0; s < parts; s++)
      vol[(int64_t)s * parts + r] = (fg_halo_volume){
          .pre = c.n_dst[s], .post = c.n_src[s], .hybrid = c.rows_post[s] + c.rows_pre[s]};
    fg_halo_cut_free(&c);
  }
cleanup:
  fg_halo_cut_free(&c);
  return st;
}
