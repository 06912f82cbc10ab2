/* fg_layouts.h -- rank 0's layouts of one run, computed once: the performance model ranks
 * schemes on them, the memory check sizes them, and the chosen scheme distributes them.
 *
 * A 1D layout (an order cut into blocks, the operator Â permuted, fg_partition.h) and the 3d
 * scheme's node orders with its permuted operators (fg_grid3d.h) are built on first request and
 * kept for the same key (order or permutation, seed, operator); a request with another key
 * rebuilds. What a run does not
 * use is dropped (fg_layouts_keep) before the chosen scheme lays out, so rank 0 never holds both.
 * Not collective.
 */
#ifndef FG_LAYOUTS_H
#define FG_LAYOUTS_H

#include "schemes/fg_grid3d.h"
#include "schemes/fg_partition.h"

typedef struct fg_layouts {
  int has_1d;
  int parts;
  fg_order_kind order;
  uint64_t seed_1d;
  fg_adj_spec adj_1d;
  fg_layout l1d;
  int has_3d;
  fg_perm_kind perm;
  uint64_t seed_3d;
  fg_adj_spec adj_3d;
  int64_t *pi[2];      /* node orders of even and odd layers' inputs (fg_perm3d_build) */
  fg_csr M[2];         /* M[q]: Â, rows in pi[1 - q], columns in pi[q]; M[1] only
                          for the double permutation */
  int builds_1d, builds_3d; /* how many were built (the tests count them) */
} fg_layouts;

/* The 1D layout of ds over parts blocks in `order`, for the operator adj. */
fg_status fg_layouts_1d(fg_layouts *c, const fg_dataset *ds, int parts, fg_order_kind order,
                        uint64_t seed, fg_adj_spec adj, const fg_layout **out);
/* 3d's orders and operators adj for permutation kind `perm`; the matrix of layer parity q is
 * c->M[perm == FG_PERM_DOUBLE ? q : 0]. */
fg_status fg_layouts_3d(fg_layouts *c, const fg_dataset *ds, fg_perm_kind perm, uint64_t seed,
                        fg_adj_spec adj);
/* Drop the 1D layout (keep_1d 0) and / or the 3d matrices (keep_3d 0). */
void fg_layouts_keep(fg_layouts *c, int keep_1d, int keep_3d);
void fg_layouts_free(fg_layouts *c);

#endif /* FG_LAYOUTS_H */
