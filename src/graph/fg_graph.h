/* fg_graph.h -- graphs: building CSR from edges, GCN normalization, generators, statistics,
 * and the fg_dataset object (assembled here from what an io/ reader returns). */
#ifndef FG_GRAPH_H
#define FG_GRAPH_H

#include <stdint.h>
#include <stdio.h>

#include "core/fg_core.h"
#include "io/fg_io.h"
#include "kernels/fg_kernels.h"

typedef struct fg_ds_fingerprint {
  int64_t nodes, entries, features, classes;
  uint64_t graph, feature_hash, labels, split;
} fg_ds_fingerprint;
/* The fingerprint's hash seeds, one a part so that two parts holding the same bytes still hash
 * differently (graph_fingerprint.c; parallel `prepare` hashes the same arrays in pieces):
 * graph = fg_hash64(col, fg_hash64(rowptr, ROWS) ^ COLS); features, labels (or targets), split
 * under their own. */
enum { FG_FP_SEED_ROWS = 1, FG_FP_SEED_COLS, FG_FP_SEED_FEATURES, FG_FP_SEED_LABELS,
       FG_FP_SEED_SPLIT, FG_FP_SEED_TARGETS };

struct fg_dataset {
  int64_t num_nodes;
  fg_csr adj;              /* pattern (val == NULL) after undirected/dedup/self-loop options;
                              rows = destination, cols = source: aggregation is adj * H */
  int symmetric;           /* adj == adj^T */
  int64_t num_features;
  float *features;         /* (num_nodes x num_features) */
  int64_t num_classes;     /* the logits per node: C classes, or T = num_tasks when the
                              targets are multi-label */
  int32_t *labels;         /* (num_nodes), -1 unlabelled; NULL when targets != NULL */
  int64_t num_tasks;       /* T >= 1: multi-label targets (then num_classes == T); 0: labels */
  int8_t *targets;         /* (num_nodes x num_tasks) row-major, 1 positive, 0 negative,
                              -1 missing; a node with every target missing is unlabelled.
                              NULL when num_tasks == 0 */
  int8_t *split;           /* (num_nodes) FG_SPLIT_* */
  int features_generated, labels_generated, split_generated;
  char *source;            /* path it was read from */
  int64_t *ids;            /* (num_nodes) the file's id of each node when a SNAP edge list's
                              sparse ids were renumbered (fg_raw_renumber); NULL: node i = id i */
  int64_t id_span;         /* largest file id + 1 when ids != NULL */
  int64_t nodes_set_aside; /* a SNAP "# Nodes: N" header set aside (N; 0: none), see
                              fg_dataset_load */
  int64_t edge_lines;      /* edges as the file listed them (before reverse edges, dedup) */
  int64_t prep_blocks;     /* read from a prepared directory (graph_prepared.c): its B; else 0 */
  char prep_order[16];     /* its order and seed */
  uint64_t prep_seed;
  char *prep_dir;          /* opened per rank (fg_dataset_open_prepared): only the sizes are
                              here, adj has no arrays, features, labels, split are NULL; the
                              1D schemes and 3d read their pieces from this directory on
                              every rank */
  fg_ds_fingerprint prep_fp; /* then: the fingerprint the manifest records */
};

/* Read a prepared directory (`fullgraph prepare`) whole, back in the source's node order,
 * checking every file's size and CRC-32, the sizes against each other and, last, the source's
 * fingerprint (graph_prepared.c). Not collective. */
fg_status fg_dataset_load_prepared(const char *dir, fg_dataset **out);
/* Open a prepared directory for per-rank reading: the manifest only (sizes, order, the
 * fingerprint), checked; the data stays in the files (prep_dir). Not collective. */
fg_status fg_dataset_open_prepared(const char *dir, fg_dataset **out);

/* One row block of a prepared directory, as fg_prep_write_row_block takes it: row k's node is
 * element at[k] of the per-node arrays (at NULL: element k), its source index index[k], its
 * entries col[rowptr[k] .. rowptr[k + 1]) (prepared positions, sorted within the row).
 * features (F wide), ids, labels or targets (T wide), split, degrees; NULL ids: no ids. */
struct fg_prep_manifest;
struct fg_prep_file;
typedef struct fg_prep_rows {
  int64_t rows;
  const int64_t *at, *index;
  const float *features;
  const int64_t *ids;
  const int32_t *labels;
  const int8_t *targets, *split;
  const int64_t *indeg, *outdeg;
  const int32_t *loops;
  const int64_t *rowptr;
  const int32_t *col;
} fg_prep_rows;
/* Write row block i's node, degree and nonempty adjacency files into dir (m: widths, flags,
 * offs, B), filling their table entries and block_nnz[0 .. B) (blocks[j] is zeroed for an
 * empty block). The serial and the parallel `prepare` both write through it, so their files
 * are the same bytes. Not collective. */
fg_status fg_prep_write_row_block(const char *dir, const struct fg_prep_manifest *m, int64_t i,
                                  const fg_prep_rows *r, struct fg_prep_file *node_file,
                                  struct fg_prep_file *deg_file, struct fg_prep_file *blocks,
                                  int64_t *block_nnz);
/* m->files from the node (B), degree (B) and block (B x B, row-major) entries and
 * m->block_nnz: the manifest's table order. */
fg_status fg_prep_assemble_files(struct fg_prep_manifest *m, const struct fg_prep_file *nodes,
                                 const struct fg_prep_file *degs,
                                 const struct fg_prep_file *blocks);
/* Create dir unless it is a directory, and remove an old manifest in it (before any file). */
fg_status fg_prep_make_dir(const char *dir);

/* Build a CSR pattern from an edge list over n nodes: row = dst, col = src (so that A*H sums
 * over in-neighbours). undirected: add reverse edges; dedup: remove duplicates (always done
 * when undirected); self_loops: make sure every node has exactly one self loop. */
fg_status fg_csr_from_edges(int64_t n, const int64_t *src, const int64_t *dst, int64_t m,
                            int undirected, int dedup, int self_loops, fg_csr *out);
/* 1 if A equals its transpose: the pattern (entries counted with multiplicity) and, when A has
 * values, the values too (0 also if the check cannot get memory). One sequential pass. */
int fg_csr_is_symmetric(const fg_csr *A);

/* How an aggregation operator weighs the entries of row i (its in-degree d_i) and column j
 * (out-degree d_j): sym 1 / sqrt(d_i d_j) (GCN: D^-1/2 A D^-1/2 on a symmetric pattern), mean
 * 1 / d_i (D^-1 A: a row sums to 1, MG-GCN and SAGE), sum 1 (GIN). */
typedef enum fg_adj_norm { FG_ADJ_SYM = 0, FG_ADJ_MEAN = 1, FG_ADJ_SUM = 2 } fg_adj_norm;
typedef struct fg_adj_spec { /* all zero: GCN's Â */
  fg_adj_norm norm;
  int no_self_loops; /* 0: the pattern's self loops as loaded (one per node unless
                        --no-self-loops: GCN's A + I); 1: none (SAGE's and GIN's neighbours) */
} fg_adj_spec;

/* The index of name among names[0..count), or -1 (also for a NULL name). */
int fg_name_index(const char *name, const char *const *names, int count);

const char *fg_adj_norm_name(fg_adj_norm norm);
/* 1 and *out set if name is "sym", "mean" or "sum"; else 0. */
int fg_adj_norm_parse(const char *name, fg_adj_norm *out);
/* Values by norm on A's pattern; allocates A->val (reuses it if present). An empty row stays
 * empty (a node without neighbours aggregates to zero). */
fg_status fg_adj_normalize(fg_csr *A, fg_adj_norm norm);
/* A new matrix: the pattern (rows = destinations) with its self loops kept or dropped by spec,
 * valued by spec.norm. Everything a scheme multiplies is this matrix, permuted and cut. */
fg_status fg_adj_operator(const fg_csr *pattern, fg_adj_spec spec, fg_csr *out);

/* Features of width f uniform in [-1, 1), element (v, j) from (seed, FG_RNG_FEATURES, v, j). */
fg_status fg_generate_features(int64_t n, int64_t f, uint64_t seed, float **out);
/* Labels from degree quantiles: node v gets class floor(C * rank(deg v) / n) where rank sorts
 * by (degree, hashed id) so that classes are balanced. */
fg_status fg_generate_labels(const fg_csr *A, int64_t classes, uint64_t seed, int32_t **out);
/* Random split of labelled nodes: train/valid/test by fractions, the rest test. Node v's draw
 * is (seed, FG_RNG_SPLIT, v), so sizes are binomial, not exact. labels NULL: all labelled;
 * unlabelled nodes get FG_SPLIT_NONE. */
fg_status fg_generate_split(int64_t n, const int32_t *labels, double train_frac,
                            double valid_frac, uint64_t seed, int8_t **out);
/* The same draws for the rows [v0, v0 + rows) only (x, labels, split indexed from v0), and the
 * hashed id that orders a degree group in fg_generate_labels: what parallel `prepare`
 * (graph_prepare_dist.c) generates of the nodes it holds. */
void fg_generate_feature_rows(int64_t v0, int64_t rows, int64_t f, uint64_t seed, float *x);
void fg_generate_split_rows(int64_t v0, int64_t rows, const int32_t *labels, double train_frac,
                            double valid_frac, uint64_t seed, int8_t *split);
uint64_t fg_generate_label_key(uint64_t seed, int64_t v);

/* Graph500 R-MAT edges (a=.57, b=.19, c=.19), ids scrambled by a seeded bijection; 2^scale
 * nodes, edge_factor * 2^scale edges, self loops and duplicates kept. Edge e's quadrants come
 * 16 bits a level from the draws (seed, FG_RNG_RMAT, e, level / 4). */
fg_status fg_rmat_edges(int scale, int64_t edge_factor, uint64_t seed, int64_t **src,
                        int64_t **dst, int64_t *m);
/* The seeded bijection of [0, 2^scale) that fg_rmat_edges applies to node ids. */
uint64_t fg_rmat_scramble(uint64_t x, int scale, uint64_t seed);

/* Degrees count the entries of a row other than its self loop; percentiles are nearest-rank
 * (-1 if the histogram could not be allocated). */
typedef struct fg_degree_stats {
  int64_t min, max;
  double mean, stddev;
  int64_t isolated;     /* nodes whose only entry is a self loop or none */
  int64_t p50, p90, p99;
} fg_degree_stats;
void fg_degree_stats_compute(const fg_csr *A, fg_degree_stats *s);

/* ---- locality orders for one process (reorder.c) ------------------------------------------- */
typedef enum fg_reorder_kind {
  FG_REORDER_NONE = 0,   /* the input's order */
  FG_REORDER_DEGREE = 1, /* by decreasing column count (how often a row of X is gathered) */
  FG_REORDER_RCM = 2,    /* reverse Cuthill-McKee */
  FG_REORDER_AUTO = 3    /* whichever of the three a cache simulation favours (fg_reorder_auto) */
} fg_reorder_kind;

/* "auto" | "none" | "degree" | "rcm" (NULL = none); the error lists the choices. */
fg_status fg_reorder_parse(const char *name, fg_reorder_kind *out);
const char *fg_reorder_name(fg_reorder_kind kind);
/* perm (A->nrows entries): perm[k] = the original node placed at position k. A is square; a
 * pure function of its pattern. kind is NONE, DEGREE or RCM. */
fg_status fg_reorder_compute(const fg_csr *A, fg_reorder_kind kind, int64_t *perm);

/* The fraction of an SpMM's row gathers that hit a cache of cache_rows rows of X held in blocks
 * of block_rows consecutive rows (8-way set-associative, least recently used; a block's set is
 * its index modulo the set count, as consecutive blocks fill consecutive sets of a physically
 * indexed cache) when A's rows and columns are taken in the order perm (NULL: as stored).
 * Blocks, not rows: hardware prefetchers fetch ahead within a 4 KiB page, so the rows beside a
 * gathered one arrive with it, useful when the order packs often-gathered rows together and
 * wasted bandwidth when it scatters them. A row-sized unit sees no difference between orders
 * that differ by 2x in measured SpMM time (docs/benchmarks.md). Above FG_REORDER_SIM_ACCESSES
 * nonzeros it simulates FG_REORDER_SIM_WINDOWS windows of consecutive rows spread evenly over
 * the nonzeros, FG_REORDER_SIM_ACCESSES in all. */
#define FG_REORDER_BLOCK_BYTES 4096
#define FG_REORDER_SIM_ACCESSES ((int64_t)1 << 23)
#define FG_REORDER_SIM_WINDOWS 16
fg_status fg_reorder_hit_rate(const fg_csr *A, const int64_t *perm, int64_t cache_rows,
                              int64_t block_rows, double *hit);

/* What --reorder auto saw and took. */
typedef struct fg_reorder_choice {
  fg_reorder_kind kind;  /* the order taken: NONE, DEGREE or RCM */
  int simulated;         /* 0: X fits in the cache, so the input order was kept unsimulated */
  double hit[3];         /* simulated hit rates of none, degree and rcm (when simulated) */
  int64_t cache_bytes, row_bytes;
} fg_reorder_choice;

/* A reordered run must remove at least this fraction of the input order's simulated misses. */
#define FG_REORDER_MIN_GAIN 0.1
/* Whether --reorder auto simulates (and so may reorder) n rows of row_bytes with a cache of
 * cache_bytes: only when the rows do not all fit. */
int fg_reorder_auto_simulates(int64_t n, int64_t row_bytes, int64_t cache_bytes);
/* --reorder auto: perm = the order of the highest simulated hit rate among none, degree and
 * rcm for gathers of row_bytes-byte rows through a cache of cache_bytes in blocks of
 * FG_REORDER_BLOCK_BYTES, the input order
 * unless another removes FG_REORDER_MIN_GAIN of its misses. A pure function of A's pattern
 * and the two sizes. */
fg_status fg_reorder_auto(const fg_csr *A, int64_t row_bytes, int64_t cache_bytes,
                          int64_t *perm, fg_reorder_choice *out);
/* One line for the run's log: the order taken and why. */
void fg_reorder_describe(const fg_reorder_choice *c, char *buf, size_t len);

/* What identifies a dataset for a checkpoint (graph_fingerprint.c): its sizes and a hash
 * (fg_hash64) of each of its parts in the dataset's own node order, so the same whatever the
 * ranks, scheme or partition of a run. Each hash is over the arrays' little-endian bytes:
 *   graph    fg_hash64(column ids: int32 x entries, fg_hash64(row offsets: int64 x (n+1), 1) ^ 2)
 *   features fg_hash64(float32 x n x features, row-major, 3)   (the features as loaded or
 *                                                              generated, not normalized)
 *   labels   fg_hash64(int32 x n, 4)                            (-1: unlabelled)
 *            or, for multi-label targets (num_tasks T > 0; classes is then T):
 *            fg_hash64(int8 x n x T, 6)                         (row-major; 1, 0, -1 missing)
 *   split    fg_hash64(int8 x n, 5)                             (FG_SPLIT_*)
 * The pattern is the one training aggregates over, so the loading options that change it
 * (--directed, --keep-duplicates, --no-self-loops) change the hash. */
#define FG_FINGERPRINT_KIND 1 /* which hash and which parts; a checkpoint records it */
void fg_dataset_fingerprint(const fg_dataset *ds, fg_ds_fingerprint *fp);

#endif /* FG_GRAPH_H */
