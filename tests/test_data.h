/* test_data.h -- the graphs of the multi-rank tests, built in-process (on rank 0). */
#ifndef FG_TEST_DATA_H
#define FG_TEST_DATA_H

#include "graph/fg_graph.h"

enum {
  TEST_DATA_CORA = 0,  /* the bundled Cora (undirected, 2708 nodes, 1433 features) */
  TEST_DATA_RMAT = 1,  /* R-MAT scale 9, edge factor 8, kept DIRECTED: Âᵀ has its own plan */
  TEST_DATA_TINY = 2,  /* a 4-node path: at P = 5 one block is empty, at P = 3, 4 blocks of 1-2 */
  TEST_DATA_RMAT8 = 3, /* R-MAT scale 8, directed, 20 features, 5 classes: uneven width blocks
                          of a grid, empty ones with 8 along a dimension */
  TEST_DATA_PATH5 = 4, /* a 5-node path: empty node blocks on grids */
  TEST_DATA_COUNT = 5
};

const char *test_data_name(int which);
/* Build dataset `which`. */
fg_status test_data_make(int which, fg_dataset **out);
/* The prepared-dataset tests' Cora: the demo data deduplicated, undirected (reverse edges
 * added) or directed (its edges as the file lists them), loaded into *ds unless *ds holds it
 * already; with write, prepared in `blocks` blocks in random order (seed) into base/name, whose
 * path goes to dir. */
fg_status test_cora_prepared(const char *base, const char *name, int directed, int64_t blocks,
                             uint64_t seed, int write, fg_dataset **ds, char *dir, size_t size);
/* 1 if this build has METIS (--order metis); tests skip that order otherwise. */
int test_have_metis(void);

#endif
