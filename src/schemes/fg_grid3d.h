/* fg_grid3d.h -- the 3D tensor-parallel layout of Plexus (Ranjan et al., SC'25, section 3): its
 * geometry, shared by the scheme (scheme_3d.c) and the performance model (plan/).
 *
 * P = X * Y * Z ranks form a grid; rank r has coordinates (x, y, z) with
 * r = (z * X + x) * Y + y (Y varies fastest, so a Y group is a run of consecutive ranks -- the
 * group placed inside a node first, then X, then Z, as in the paper's section 4.2). Each rank
 * has one sub-communicator per dimension (the ranks that differ from it only in that
 * coordinate), split from the fg_dist communicator.
 *
 * Layer l plays three roles on the dimensions: a = (3 - l % 3) % 3, b = a + 1, c = a + 2
 * (mod 3; 0 = X, 1 = Y, 2 = Z), so layer 0 has (a, b, c) = (X, Y, Z) and each later layer
 * rotates them. On rank q:
 *   input  F_l  rows: node block q[a] of G_a, columns: width block q[b] of G_b
 *   Â_l shard   rows: node block q[c] of G_c, columns: node block q[a] of G_a (replicated
 *               along b)
 *   H = Â_l F_l rows q[c], columns q[b]: partial over a -> all-reduce along a
 *   W_l         rows: width block q[b] of G_b, columns: block q[a] of G_a (further cut along c)
 *   Q = H W_l   rows q[c], columns q[a]: partial over b -> all-reduce along b
 * so the output's layout (rows by c, columns by a) is the next layer's input layout: three
 * adjacency shards (layers 0, 1, 2) cycle (section 3.2). "Node block i of G" is the balanced
 * cut of the n positions into G contiguous blocks (the first n % G one longer), and a width
 * block likewise.
 *
 * Permutations (section 5.1): pi[0] is the node order of even layers' inputs, pi[1] that of odd
 * layers' inputs (= even layers' outputs). Layer l multiplies M_{l%2} = (rows in pi[(l+1)%2],
 * columns in pi[l%2]) of Â. none: both identity; single (--order random): both the random
 * order P; double: pi[1] = P_r, pi[0] = P_c, two different random permutations, so layer 0
 * multiplies P_r Â P_cᵀ and layer 1 P_c Â P_rᵀ. With double permutation the shards of layers
 * 0..5 are distinct (min(6, L)), otherwise min(3, L).
 */
#ifndef FG_GRID3D_H
#define FG_GRID3D_H

#include <mpi.h>
#include <stdint.h>

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "kernels/fg_kernels.h"

enum { FG_DIM_X = 0, FG_DIM_Y = 1, FG_DIM_Z = 2 };

typedef enum fg_perm_kind { FG_PERM_NONE = 0, FG_PERM_SINGLE = 1, FG_PERM_DOUBLE = 2 } fg_perm_kind;

/* Node and width blocks are fg_block_start's balanced cut (core/fg_core.h). */

/* Roles of layer l (see above). */
static inline void fg_layer_roles(int l, int *a, int *b, int *c) {
  *a = (3 - l % 3) % 3;
  *b = (*a + 1) % 3;
  *c = (*a + 2) % 3;
}

/* Rank of coordinates q in grid g, and back. */
static inline int fg_grid_rank(const int g[3], const int q[3]) {
  return (q[FG_DIM_Z] * g[FG_DIM_X] + q[FG_DIM_X]) * g[FG_DIM_Y] + q[FG_DIM_Y];
}
static inline void fg_grid_coords(const int g[3], int r, int q[3]) {
  q[FG_DIM_Y] = r % g[FG_DIM_Y];
  q[FG_DIM_X] = (r / g[FG_DIM_Y]) % g[FG_DIM_X];
  q[FG_DIM_Z] = r / (g[FG_DIM_Y] * g[FG_DIM_X]);
}

/* Parse "XxYxZ" (each >= 1) for a job of P ranks (P <= 0: any product). */
fg_status fg_grid_parse(const char *s, int P, int g[3]);
/* Every ordered factorization X * Y * Z = P, X then Y ascending; returns the count (writes at
 * most max entries). */
int fg_grid_enumerate(int P, int (*out)[3], int max);

/* "no" / "single" / "double" (permutation) from the vertex order and the double-permutation flag:
 * natural -> none, random -> single, double_perm -> double (any other order is an error). */
fg_status fg_perm_kind_from(const char *order, int double_perm, fg_perm_kind *out);
const char *fg_perm_kind_name(fg_perm_kind k);

/* pi0, pi1 (n each, caller-allocated): the node orders of even and odd layers' inputs. The
 * random permutations are Fisher-Yates from (seed, FG_RNG_PERMUTE, i, round): round 0 is P_r
 * (and the single permutation, the same as the 1D schemes' random order), round 1 is P_c. */
void fg_perm3d_build(int64_t n, fg_perm_kind kind, uint64_t seed, int64_t *pi0, int64_t *pi1);

/* cnt (gr x gc): nonzeros of M in block (i, j) of its balanced gr x gc cut. */
fg_status fg_block_nnz(const fg_csr *M, int gr, int gc, int64_t *cnt);

/* Maximum over the mean of the nonzeros of the gr x gc blocks of Â's pattern: out[0] in the
 * original order, out[1] after one random permutation P A Pᵀ, out[2] after the double
 * permutation (the larger of P_r A P_cᵀ and P_c A P_rᵀ). Not collective. */
fg_status fg_shard_balance_compute(const fg_csr *A, int gr, int gc, uint64_t seed, double out[3]);

#endif /* FG_GRID3D_H */
