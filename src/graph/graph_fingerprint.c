/* graph_fingerprint.c -- a dataset's fingerprint (fg_graph.h): what a checkpoint records of the
 * dataset it was made on, so that a resume on another dataset of the same shape is refused. */
#include "core/fg_hash.h"
#include "graph/fg_graph.h"

enum {
  SEED_ROWS = FG_FP_SEED_ROWS,
  SEED_COLS = FG_FP_SEED_COLS,
  SEED_FEATURES = FG_FP_SEED_FEATURES,
  SEED_LABELS = FG_FP_SEED_LABELS,
  SEED_SPLIT = FG_FP_SEED_SPLIT,
  SEED_TARGETS = FG_FP_SEED_TARGETS
};

void fg_dataset_fingerprint(const fg_dataset *ds, fg_ds_fingerprint *fp) {
  if (ds->prep_dir) { /* opened per rank: the source's, as its manifest records it */
    *fp = ds->prep_fp;
    return;
  }
  const size_t n = (size_t)ds->num_nodes;
  const fg_csr *A = &ds->adj;
  fp->nodes = ds->num_nodes;
  fp->entries = A->nnz;
  fp->features = ds->num_features;
  fp->classes = ds->num_classes;
  /* the column ids' hash is seeded with the row offsets' */
  fp->graph = fg_hash64(A->col, (size_t)A->nnz * sizeof *A->col,
                        fg_hash64(A->rowptr, (n + 1) * sizeof *A->rowptr, SEED_ROWS) ^ SEED_COLS);
  fp->feature_hash = fg_hash64(
      ds->features, ds->features ? n * (size_t)ds->num_features * sizeof(float) : 0,
      SEED_FEATURES);
  /* multi-label targets take the labels' place (a dataset has one or the other), under a seed
   * of their own: the fingerprints of one-class-per-node datasets are what they always were */
  if (ds->targets)
    fp->labels = fg_hash64(ds->targets, n * (size_t)ds->num_tasks, SEED_TARGETS);
  else
    fp->labels = fg_hash64(ds->labels, ds->labels ? n * sizeof *ds->labels : 0, SEED_LABELS);
  fp->split = fg_hash64(ds->split, ds->split ? n : 0, SEED_SPLIT);
}
