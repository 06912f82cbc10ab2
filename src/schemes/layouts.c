/* layouts.c -- rank 0's layouts, built once a run. See fg_layouts.h. */
#include <string.h>

#include "schemes/fg_layouts.h"

static int same_adj(fg_adj_spec a, fg_adj_spec b) {
  return a.norm == b.norm && !a.no_self_loops == !b.no_self_loops;
}

fg_status fg_layouts_1d(fg_layouts *c, const fg_dataset *ds, int parts, fg_order_kind order,
                        uint64_t seed, fg_adj_spec adj, const fg_layout **out) {
  fg_status st = FG_OK;
  *out = NULL;
  if (!c->has_1d || c->parts != parts || c->order != order || !same_adj(c->adj_1d, adj) ||
      (order != FG_ORDER_NATURAL && c->seed_1d != seed)) {
    fg_layouts_keep(c, 0, 1);
    FG_CHECK(fg_layout_build(ds, parts, order, seed, adj, &c->l1d));
    c->has_1d = 1;
    c->parts = parts;
    c->order = order;
    c->seed_1d = seed;
    c->adj_1d = adj;
    c->builds_1d++;
  }
  *out = &c->l1d;
cleanup:
  return st;
}

fg_status fg_layouts_3d(fg_layouts *c, const fg_dataset *ds, fg_perm_kind perm, uint64_t seed,
                        fg_adj_spec adj) {
  fg_status st = FG_OK;
  int64_t *inv0 = NULL, *inv1 = NULL;
  fg_csr N;
  const int64_t n = ds->num_nodes;
  memset(&N, 0, sizeof N);
  if (c->has_3d && c->perm == perm && same_adj(c->adj_3d, adj) &&
      (perm == FG_PERM_NONE || c->seed_3d == seed))
    return FG_OK;
  fg_layouts_keep(c, 1, 0);
  FG_REQUIRE(ds->adj.nrows == n && ds->adj.ncols == n, FG_ERR_INVALID_ARG,
             "dataset: adjacency is %lld x %lld for %lld nodes", (long long)ds->adj.nrows,
             (long long)ds->adj.ncols, (long long)n);
  FG_REQUIRE(n <= INT32_MAX, FG_ERR_UNSUPPORTED, "3d: %lld nodes exceed 32-bit column ids",
             (long long)n);
  FG_ALLOC(c->pi[0], FG_MAX(n, 1));
  FG_ALLOC(c->pi[1], FG_MAX(n, 1));
  FG_ALLOC(inv0, FG_MAX(n, 1));
  FG_ALLOC(inv1, FG_MAX(n, 1));
  fg_perm3d_build(n, perm, seed, c->pi[0], c->pi[1]);
  fg_order_invert(c->pi[0], n, inv0);
  fg_order_invert(c->pi[1], n, inv1);
  /* the serial scheme's operator, on the whole pattern, before any permutation; M[0]: rows in
   * pi[1], columns in pi[0] */
  FG_CHECK(fg_adj_operator(&ds->adj, adj, &N));
  FG_CHECK(fg_csr_permute(&N, c->pi[1], inv0, &c->M[0]));
  if (perm == FG_PERM_DOUBLE) FG_CHECK(fg_csr_permute(&N, c->pi[0], inv1, &c->M[1]));
  c->has_3d = 1;
  c->perm = perm;
  c->seed_3d = seed;
  c->adj_3d = adj;
  c->builds_3d++;
cleanup:
  if (st != FG_OK) fg_layouts_keep(c, 1, 0);
  fg_csr_free(&N);
  free(inv0);
  free(inv1);
  return st;
}

void fg_layouts_keep(fg_layouts *c, int keep_1d, int keep_3d) {
  if (!c) return;
  if (!keep_1d && c->has_1d) fg_layout_free(&c->l1d);
  if (!keep_1d) c->has_1d = 0;
  if (!keep_3d) {
    free(c->pi[0]);
    free(c->pi[1]);
    c->pi[0] = c->pi[1] = NULL;
    fg_csr_free(&c->M[0]);
    fg_csr_free(&c->M[1]);
    c->has_3d = 0;
  }
}

void fg_layouts_free(fg_layouts *c) { fg_layouts_keep(c, 0, 0); }
