/* fg_vertex_cover.h -- a minimum vertex cover of a bipartite graph (König's theorem): the
 * building block of SuperGCN's hybrid pre/post aggregation (supergcn.txt §3.3.1, Algorithm 1).
 * For the cut graph between a sending and a receiving rank, a cut edge whose source is in the
 * cover is sent as the source's row and aggregated after receipt (post); otherwise its
 * destination is in the cover and the sender sums the destination's neighbours it owns into one
 * partial row (pre). A minimum cover makes the rows sent as few as an edge-by-edge choice allows.
 *
 * Maximum matching by Hopcroft-Karp (O(E sqrt(V)), iterative: no recursion however long an
 * augmenting path), then the cover from the alternating-path search: Z = the vertices reachable
 * from the unmatched left vertices (left to right along any edge, right to left along the
 * matching); the cover is (left not in Z) + (right in Z), its size the matching's.
 */
#ifndef FG_VERTEX_COVER_H
#define FG_VERTEX_COVER_H

#include <stdint.h>

#include "core/fg_core.h"

/* The bipartite graph of nl left and nr right vertices, edges from left vertex i to
 * adj[ptr[i] .. ptr[i + 1]) (right ids in [0, nr); duplicates allowed). in_left (nl) and
 * in_right (nr) get 1 for the vertices of a minimum vertex cover, 0 otherwise; *size (may be
 * NULL) its size, which is also the maximum matching's. FG_ERR_NOMEM on allocation failure,
 * FG_ERR_INVALID_ARG on a right id out of range. Not collective. */
fg_status fg_min_vertex_cover(int64_t nl, int64_t nr, const int64_t *ptr, const int32_t *adj,
                              uint8_t *in_left, uint8_t *in_right, int64_t *size);

#endif /* FG_VERTEX_COVER_H */
