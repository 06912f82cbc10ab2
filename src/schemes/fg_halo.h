/* fg_halo.h -- SuperGCN's halo exchange (supergcn.txt §3.3.1) on a 1D layout: the cut of one
 * receiving block and the rule that decides, edge by edge, what crosses it.
 *
 * For every ordered pair of ranks (sender s, receiver r) the cut graph is bipartite -- the
 * sources in s's block with an edge into r's block, the destinations in r's block with an edge
 * from s's -- and each aggregation sends one row per vertex chosen on one side:
 *   post:   every source's row, aggregated after receipt (1d-sa's volume);
 *   pre:    per destination, the partial sum over its neighbours s owns, made by s;
 *   hybrid: a minimum vertex cover of the cut graph (fg_vertex_cover.h) -- a cut edge whose
 *           source is covered goes post, any other pre -- never more than either.
 * The halo scheme (scheme_halo.c) builds its exchange from fg_halo_cut_build on its own block;
 * fg_halo_volumes runs the very same function on every block, which is what `fullgraph info`
 * prints and what training counts. */
#ifndef FG_HALO_H
#define FG_HALO_H

#include <stdint.h>

#include "core/fg_core.h"
#include "graph/fg_graph.h"

typedef enum fg_halo_rule { FG_HALO_HYBRID = 0, FG_HALO_PRE = 1, FG_HALO_POST = 2 } fg_halo_rule;

/* "hybrid" (NULL too), "pre", "post"; anything else is refused, naming the choices. */
fg_status fg_halo_rule_parse(const char *name, fg_halo_rule *out);
const char *fg_halo_rule_name(fg_halo_rule rule);
/* "none" (NULL too) 0, "int8" 8, "int4" 4, "int2" 2: the bits of a quantized row's codes. */
fg_status fg_halo_quant_parse(const char *name, int *bits);

/* The cut in-edges of one receiving block, bucketed by the sending block, with the rule's choice
 * made. Within a sender's bucket the edges are sorted by (source, destination). */
typedef struct fg_halo_cut {
  int parts;
  int64_t nnz;                   /* cut edges into the block */
  int64_t *start;                /* (parts + 1) sender s's edges are [start[s], start[s + 1]) */
  int32_t *src;                  /* (nnz) the source's global position */
  int32_t *dst;                  /* (nnz) the destination's row in the block */
  float *val;                    /* (nnz) Â's value (1 where the operator has none) */
  uint8_t *post;                 /* (nnz) 1: the source's row is sent (post); 0: pre */
  int64_t *n_src, *n_dst;        /* (parts) distinct sources and destinations from sender s */
  int64_t *rows_post, *rows_pre; /* (parts) rows s sends under the rule: covered sources, and
                                    destinations with at least one pre edge */
} fg_halo_cut;

/* The cut of part me of the layout offs (parts + 1), whose rows are B's rows [row0, row0 +
 * rows) (B's columns are global positions: the whole operator with row0 = offs[me], or a
 * rank's own rows with row0 = 0). Not collective. */
fg_status fg_halo_cut_build(const fg_csr *B, int64_t row0, int64_t rows, const int64_t *offs,
                            int parts, int me, fg_halo_rule rule, fg_halo_cut *out);
void fg_halo_cut_free(fg_halo_cut *c);

typedef struct fg_halo_volume {
  int64_t pre, post, hybrid; /* rows s sends r per aggregation under each rule */
} fg_halo_volume;

/* vol (parts x parts): vol[s * parts + r] for the operator B (rows are destinations, in the
 * layout's order) cut into blocks offs (parts + 1); the diagonal is 0. Not collective. */
fg_status fg_halo_volumes(const fg_csr *B, const int64_t *offs, int parts, fg_halo_volume *vol);

/* The rows of one volume under a rule. */
int64_t fg_halo_volume_rows(const fg_halo_volume *v, fg_halo_rule rule);

#endif /* FG_HALO_H */
