/* fg_scheme.h -- the interface every parallel algorithm implements.
 *
 * A scheme owns the layout of the graph over the ranks: which rows of Â, of the features,
 * labels and split each rank holds, and how the aggregation Â·H (and Âᵀ·G in backward) is made
 * true on that layout -- a local SpMM (serial), staged broadcasts (1d), exchange of only the
 * referenced rows (1d-sa), ... The model (src/model/) is written once against this interface:
 * GEMMs on local rows, aggregation through the scheme, sums through fg_dist.
 *
 * Rows are in the scheme's order (possibly permuted); global_ids maps each local row to the
 * node's ORIGINAL id, which is what every random draw and every output uses.
 */
#ifndef FG_SCHEME_H
#define FG_SCHEME_H

#include <stdint.h>

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"

typedef struct fg_scheme fg_scheme;

typedef struct fg_scheme_config {
  const char *name;    /* "serial", "1d", "1d-sa" (NULL = "serial" on one rank, "1d-sa" else) */
  const char *order;   /* "natural", "random", "metis" (NULL = natural) */
  int overlap;         /* 1d: double-buffered nonblocking broadcasts */
  uint64_t seed;       /* for the random order */
  int normalize_features;
  int verbose;
  const char *reorder; /* serial: locality order "none" (NULL), "degree", "rcm", "auto"
                          (reorder.c); other schemes take "auto" as none */
  int64_t reorder_width; /* "auto": the SpMM width its cache simulation assumes (> 0) */
} fg_scheme_config;

typedef struct fg_scheme_ops {
  const char *name;
  /* out (n_local x f) = Â[local rows, :] · in, where in (n_local x f) are this rank's rows of
   * the distributed input. Collective. */
  fg_status (*aggregate)(fg_scheme *s, const float *in, float *out, int64_t f);
  /* out = Âᵀ[local rows, :] · in. Collective. */
  fg_status (*aggregate_t)(fg_scheme *s, const float *in, float *out, int64_t f);
  void (*destroy)(fg_scheme *s);
} fg_scheme_ops;

struct fg_scheme {
  const fg_scheme_ops *ops;
  fg_dist *dist;          /* not owned */
  int64_t n_global, n_local;
  int64_t *global_ids;    /* (n_local) original node id of each local row */
  int64_t num_features, num_classes;
  float *features;        /* (n_local x num_features), normalized if asked; read only. When
                             borrowed with feature_rows set: the dataset's whole matrix in
                             its own order, read through feature_rows */
  int features_borrowed;  /* features point into the dataset (one process, not
                             normalized): not freed, never written */
  const int64_t *feature_rows; /* (n_local) NULL: local row i's features are row i of
                             features; else row feature_rows[i] (borrowed features read in the
                             dataset's order by a reordered scheme: --reorder) */
  int32_t *labels;        /* (n_local) */
  int8_t *split;          /* (n_local) FG_SPLIT_* */
  int64_t local_nnz;      /* nonzeros of Â this rank multiplies */
  double seconds_spmm;    /* time in local SpMMs (accumulated) */
  double spmm_bytes;      /* bytes the local SpMMs must move at least (accumulated):
                             nnz (4 + 4) + nnz f 4 gathered + rows f 4 written, per SpMM */
  const char *reorder_used; /* serial: the locality order applied ("none", "degree", "rcm") */
  char note[256];          /* a line for the run's log about the layout ("" none) */
  void *impl;
};

/* Collective: lay the dataset out over dist. ds is needed on rank 0 only (other ranks may pass
 * NULL; rank 0 scatters). */
fg_status fg_scheme_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                           fg_scheme **out);
void fg_scheme_destroy(fg_scheme **s);

/* Fill the fields every scheme shares (features normalized, labels, split, ids) from a
 * dataset for the given local rows (global ids in scheme order). Unless normalize_features,
 * the features are borrowed from ds (read through feature_rows when gids is not 0..n-1), so
 * ds must outlive s. Not collective. */
fg_status fg_scheme_fill_local(fg_scheme *s, const fg_dataset *ds, const int64_t *gids,
                               int64_t n_local, int normalize_features);

/* 1 if layer l (widths w_in -> w_out) aggregates before its weight product under agg_order
 * (an fg_agg_order): the model's choice, which the volume plans must count the same way. */
int fg_agg_first(int agg_order, int l, int64_t w_in, int64_t w_out);

/* Account one local SpMM of A at width f in s->spmm_bytes. */
void fg_scheme_count_spmm(fg_scheme *s, const fg_csr *A, int64_t f);

/* Implementations (one file each in src/schemes/). */
fg_status fg_scheme_serial_create(fg_dist *dist, const fg_dataset *ds,
                                  const fg_scheme_config *cfg, fg_scheme **out);
/* Sparsity-oblivious 1D: staged broadcasts of block rows (scheme_1d.c). */
fg_status fg_scheme_1d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                              fg_scheme **out);
/* Sparsity-aware 1D: exchange of exactly the referenced rows (scheme_1d_sa.c). */
fg_status fg_scheme_1d_sa_create(fg_dist *dist, const fg_dataset *ds,
                                 const fg_scheme_config *cfg, fg_scheme **out);

#endif /* FG_SCHEME_H */
