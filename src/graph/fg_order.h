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
 *   metis    METIS k-way partition of the symmetrized pattern without self loops, unit vertex
 *            weights; parts relabelled into contiguous blocks (nodes of part r in increasing
 *            original id), so block sizes are METIS's part sizes
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
  FG_ORDER_METIS = 2
} fg_order_kind;

/* "natural" | "random" | "metis" (NULL = natural). The error lists the available orders and
 * says when METIS was not found at build time. */
fg_status fg_order_parse(const char *name, fg_order_kind *out);
const char *fg_order_name(fg_order_kind kind);

/* perm (n = A->nrows entries) and offs (parts + 1 entries) for A's pattern (square). */
fg_status fg_order_compute(const fg_csr *A, int parts, fg_order_kind kind, uint64_t seed,
                           int64_t *perm, int64_t *offs);

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
