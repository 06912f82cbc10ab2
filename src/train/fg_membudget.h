/* fg_membudget.h -- the memory a run needs, computed before anything is allocated for it, and
 * the check against --mem-limit (membudget.c; the estimate itself is fg_train_memory in the
 * public header). */
#ifndef FG_MEMBUDGET_H
#define FG_MEMBUDGET_H

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "plan/fg_registry.h"

/* Bytes allowed for the program itself (code, MPI, OpenMP stacks, OpenBLAS buffers). */
#define FG_MEM_RUNTIME_BYTES ((int64_t)96 << 20)

/* One-process runs: FG_ERR_MEMLIMIT, with a message naming the bytes needed, the limit and the
 * options that shrink the run, when the estimate exceeds cfg->mem_limit (0: the available
 * memory, against which the already loaded dataset is not counted again; < 0: no check). Not
 * collective; call on the rank that holds the dataset. */
fg_status fg_train_memory_check(const fg_dataset *ds, const fg_train_config *cfg);

/* Several processes: the busiest rank's bytes for this scheme and grid (3d) or replication c
 * (1.5d) from the performance model (its rows of Â, inputs, the model's buffers, parameters,
 * received rows), plus the dataset on rank 0, against cfg->mem_limit per process (0: the available memory of rank 0's
 * node over the ranks that share it; < 0: no check). The model runs on rank 0's layouts `lay`
 * (the layout it builds there is the one the scheme distributes), or takes known_bytes when the
 * planner already predicted this configuration (>= 0). FG_ERR_MEMLIMIT names the bytes, the
 * limit and the options that shrink the run. Collective over d; ds and lay on rank 0 only. */
fg_status fg_train_memory_check_ranks(fg_dist *d, const fg_dataset *ds,
                                      const fg_train_config *cfg, const fg_scheme_info *scheme,
                                      const int grid[3], int replicate, fg_layouts *lay,
                                      double known_bytes);

/* The width the model's hidden SpMMs gather at: the widest hidden layer (the classes for one
 * layer). --reorder auto sizes its cache simulation for rows of this many floats. */
int64_t fg_train_hidden_width(const fg_train_config *cfg, int64_t num_classes);

#endif /* FG_MEMBUDGET_H */
