/* mpi_data.h -- the graphs of the MPI tests, built in-process on rank 0. */
#ifndef FG_MPI_DATA_H
#define FG_MPI_DATA_H

#include "graph/fg_graph.h"

enum {
  MPI_DATA_CORA = 0, /* the bundled Cora (undirected, 2708 nodes, 1433 features) */
  MPI_DATA_RMAT = 1, /* R-MAT scale 9, edge factor 8, kept DIRECTED: Âᵀ has its own plan */
  MPI_DATA_TINY = 2, /* a 4-node path: at P = 5 one block is empty, at P = 3, 4 blocks of 1-2 */
  MPI_DATA_COUNT = 3
};

const char *mpi_data_name(int which);
/* Build dataset `which` (call on rank 0 only). */
fg_status mpi_data_make(int which, fg_dataset **out);
/* 1 if this build has METIS (--order metis); tests skip that order otherwise. */
int mpi_have_metis(void);

#endif
