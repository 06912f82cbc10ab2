/* fg_halo.h -- the volumes of SuperGCN's halo exchange (supergcn.txt §3.3.1) on a 1D layout:
 * for every ordered pair of ranks (sender s, receiver r), the cut graph is bipartite -- the
 * sources in s's block with an edge into r's block, the destinations in r's block with an edge
 * from s's -- and each aggregation sends one row per vertex chosen on one side:
 *   post:   every source's row (aggregated after receipt: 1d-sa's volume),
 *   pre:    per destination, the partial sum of its neighbours s owns,
 *   hybrid: a minimum vertex cover of the cut graph (fg_vertex_cover.h) -- a cut edge whose
 *           source is covered goes post, any other pre -- never more than either.
 * The building block of the halo scheme (issue 17), which does not exist yet. */
#ifndef FG_HALO_H
#define FG_HALO_H

#include <stdint.h>

#include "core/fg_core.h"
#include "graph/fg_graph.h"

typedef struct fg_halo_volume {
  int64_t pre, post, hybrid; /* rows s sends r per aggregation under each rule */
} fg_halo_volume;

/* vol (parts x parts): vol[s * parts + r] for the operator B (rows are destinations, in the
 * layout's order) cut into blocks offs (parts + 1); the diagonal is 0. Not collective. */
fg_status fg_halo_volumes(const fg_csr *B, const int64_t *offs, int parts, fg_halo_volume *vol);

#endif /* FG_HALO_H */
