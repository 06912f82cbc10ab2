/* fg_order.h -- vertex orders for a 1D block-row distribution.
 *
 * An order is a permutation perm of the n nodes (perm[k] = original id of the node at position
 * k of the scheme's numbering) together with the block offsets offs[0..parts] of the ranks:
 * rank r holds positions [offs[r], offs[r+1]). Blocks may have different sizes, and a block
 * may be empty (parts > n, or a partitioner leaving a part empty).
 *
 *   natural  perm = identity, blocks of n/parts rows (the first n % parts one row longer)
 *   random   a uniform permutation (MG-GCN section 5.2) drawn from (seed, FG_RNG_PERMUTE): it
 *            does not depend on parts, only the block cut does; blocks as for natural
 *   metis    METIS k-way partition of the symmetrized pattern without self loops, two balance
 *            constraints per node (1 and its row's entries); parts relabelled into contiguous
 *            blocks (nodes of part r in increasing original id), so block sizes are METIS's
 *            part sizes
 *   hypergraph  Zoltan PHG on the column-net hypergraph of Â·H (vertex i = row i, net j = the
 *            rows with A(i, j) != 0 and j itself): its connectivity-1 cut is exactly the rows
 *            1d-sa sends per aggregation; PHG balances entries (its one vertex weight), then
 *            fg_order_rebalance brings rows and entries within 5% (order_hypergraph.c,
 *            order_volume.c); relabelled as metis
 *   volume   the metis partition refined by greedy passes that lower the maximum send volume
 *            of a part, then the maximum receive volume, then the total, within 5% of the
 *            mean rows and entries (order_volume.c); relabelled as metis
 *
 * docs/architecture.md "Volume-aware orders" has the model, the weights and the refinement.
 *
 * Everything here is a pure function of its inputs: rank 0 of a training job and
 * `fullgraph info` compute the same layout.
 */
#ifndef FG_ORDER_H
#define FG_ORDER_H

#include <stdint.h>

#include "core/fg_core.h"
#include "kernels/fg_kernels.h"

typedef enum fg_order_kind {
  FG_ORDER_NATURAL = 0,
  FG_ORDER_RANDOM = 1,
  FG_ORDER_METIS = 2,
  FG_ORDER_HYPERGRAPH = 3,
  FG_ORDER_VOLUME = 4
} fg_order_kind;

#define FG_ORDER_COUNT 5 /* kinds above */

/* "natural" | "random" | "metis" | "hypergraph" | "volume" (NULL = natural). The error lists
 * the available orders and says when METIS (metis, volume) or Zoltan (hypergraph) was not
 * found at build time. */
fg_status fg_order_parse(const char *name, fg_order_kind *out);
const char *fg_order_name(fg_order_kind kind);

/* 1 when this build can compute the order (metis and volume need METIS, hypergraph Zoltan). */
int fg_order_available(fg_order_kind kind);

/* perm (n = A->nrows entries) and offs (parts + 1 entries) for A's pattern (square). Not
 * collective; hypergraph calls Zoltan on MPI_COMM_SELF and so needs MPI initialised. */
fg_status fg_order_compute(const fg_csr *A, int parts, fg_order_kind kind, uint64_t seed,
                           int64_t *perm, int64_t *offs);

/* ---- the partitioners behind metis, hypergraph and volume (part[v] in [0, parts)) ---- */

/* The column-net hypergraph of A as vertex -> nets lists: the nets of vertex v are the
 * distinct columns of row v and v itself, pins[vptr[v] .. vptr[v+1]) increasing. */
fg_status fg_order_hg_pins(const fg_csr *A, int64_t **vptr, int32_t **pins);
/* order.c: METIS k-way (n > parts > 1). */
fg_status fg_order_metis_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part);
/* order_hypergraph.c: Zoltan PHG (n > parts > 1). */
fg_status fg_order_hypergraph_parts(const fg_csr *A, int parts, uint64_t seed, int32_t *part);
/* order_volume.c: refine part in place (see the table above); stats (may be NULL) gets the
 * maximum send volume before and after and the passes run. */
typedef struct fg_volume_refine_stats {
  int64_t max_send_before, max_send_after, max_recv_before, max_recv_after;
  int64_t total_before, total_after, moves;
  int passes;
} fg_volume_refine_stats;
fg_status fg_order_volume_refine(const fg_csr *A, int parts, uint64_t seed, int32_t *part,
                                 fg_volume_refine_stats *stats);
/* order_volume.c: move vertices out of the parts over (1 + tol) x the mean rows or entries
 * (entries: at least the longest row), cheapest in connectivity-1 cut first, until none is
 * over or 40 passes ran; over_after counts the parts still over a cap (0 but for a packing
 * the greedy passes could not find). Used after PHG, which balances a single weight. */
typedef struct fg_rebalance_stats {
  int64_t cap_rows, cap_nnz, total_before, total_after, moves;
  int passes, over_after;
} fg_rebalance_stats;
fg_status fg_order_rebalance(const fg_csr *A, int parts, uint64_t seed, double tol, int32_t *part,
                             fg_rebalance_stats *stats);

/* perm (n) = a uniform permutation by Fisher-Yates driven by (seed, FG_RNG_PERMUTE, i, round):
 * the same for every number of parts. Round 0 is the random order (and 3d's single permutation
 * and P_r), round 1 the double permutation's P_c. */
void fg_order_random(int64_t n, uint64_t seed, uint64_t round, int64_t *perm);

/* inv[perm[k]] = k. */
void fg_order_invert(const int64_t *perm, int64_t n, int64_t *inv);

/* Row k of out is row row_perm[k] of A with every column c renamed col_inv[c], columns sorted
 * within rows; values (if any) follow their entries. A must be square. With col_inv the
 * inverse of row_perm this is P A P^T (one order); the 3D scheme passes two different orders.
 * Allocates out; rows are filled in parallel. */
fg_status fg_csr_permute(const fg_csr *A, const int64_t *row_perm, const int64_t *col_inv,
                         fg_csr *out);

/* Rank owning position k: the r with offs[r] <= k < offs[r+1] (binary search). */
int fg_block_owner(const int64_t *offs, int parts, int64_t k);

/* Entries (u, v), u != v, of a matrix in block numbering whose row and column lie in different
 * blocks (the nonzeros of the off-diagonal blocks). */
int64_t fg_block_cut(const fg_csr *B, const int64_t *offs, int parts);

#endif /* FG_ORDER_H */
