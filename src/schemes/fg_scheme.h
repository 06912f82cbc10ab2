/* fg_scheme.h -- the interface every parallel algorithm implements.
 *
 * A scheme owns the layout of the graph over the ranks: which rows of Â, of the features,
 * labels and split each rank holds, and how the aggregation Â·H (and Âᵀ·G in backward) is made
 * true on that layout -- a local SpMM (serial), staged broadcasts (1d), exchange of only the
 * referenced rows (1d-sa), ... The model (src/model/) is written once against this interface:
 * GEMMs on local rows, aggregation through the scheme, sums through fg_dist.
 *
 * Rows are in the scheme's order (possibly permuted); the ids of fg_layer_shape map each row a
 * rank holds to the node's ORIGINAL id, which is what every random draw and every output uses.
 */
#ifndef FG_SCHEME_H
#define FG_SCHEME_H

#include <stdint.h>
#include <stdio.h>

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"
#include "kernels/fg_bf16.h"

typedef struct fg_scheme fg_scheme;

typedef struct fg_scheme_config {
  const char *name;    /* a name of the registry (registry.c); NULL = the default rule */
  const char *order;   /* "natural", "random", "metis" (NULL = natural) */
  int order_default;   /* order is the scheme's default (halo's metis), not one the run gave: a
                          prepared directory read per rank keeps its own order instead */
  int overlap;         /* 1d, 1d-sa: nonblocking exchanges overlapped with the SpMM */
  uint64_t seed;       /* for the random order */
  int normalize_features;
  fg_adj_spec adj;     /* the operator Â every layer aggregates with (fg_adj_operator) */
  int verbose;
  FILE *log;           /* where verbose setup reports go (the run's log; NULL: nowhere) */
  const char *reorder; /* serial: locality order "none" (NULL), "degree", "rcm", "auto"
                          (reorder.c); other schemes take "auto" as none */
  int64_t reorder_width; /* "auto": the SpMM width its cache simulation assumes (> 0) */
  int layers;          /* 3d: the model's depth (the shards its layers cycle through) */
  int grid[3];         /* 3d: X, Y, Z with X Y Z = ranks */
  int double_perm;     /* 3d: different row and column permutations (Plexus 5.1) */
  int agg_blocks;      /* 3d: row blocks per aggregation, each reduced as soon as it is done */
  int learn_features;  /* 3d: the input features are parameters, cut along Z */
  int aggregation;     /* halo: the cut's rule, an fg_halo_rule (0 hybrid, 1 pre, 2 post) */
  int quantize_bits;   /* halo: rows exchanged as 2-, 4- or 8-bit codes (0: float32) */
  int replicate;       /* 1.5d: c, the ranks holding each block row (0: 1) */
  int bf16;            /* --precision bf16: every SpMM reads its rows as bfloat16 (fp32 sums)
                          and rows cross ranks as bfloat16 (fg_scheme.bf16) */
  int input_grad;      /* layer 0's input gradient is wanted (label propagation): 3d keeps layer
                          0's transposed shard and gives each rank its input rows' labels */
  int features16;      /* the model reads the features as bf16 (fg_model_features16): a scheme
                          that lays them out (1D, halo, 3d, serial normalized, a prepared
                          read) normalizes and rounds each row as it packs or reads it (rank 0
                          sends them as bf16) into features16: no fp32 block on any rank */
  struct fg_layouts *layouts; /* rank 0: the run's layouts (fg_layouts.h), built once and
                          shared with the planner and the memory check; NULL: build privately */
} fg_scheme_config;

/* What layer l of a model looks like on this rank: the rows and columns of its input and
 * output that the rank holds, and its piece of the layer's weights. A 1D scheme holds whole
 * rows: n_in = n_out = its rows, all columns, the whole W and b (replicated on every rank). The
 * 3D scheme cuts rows and columns over the grid and W into pieces (scheme_3d.c, fg_grid3d.h). */
typedef struct fg_layer_shape {
  int64_t n_in, n_out;       /* rows of the input H_l and of the output H_{l+1} */
  int64_t w_in, w_out;       /* their columns: [col0_in, col0_in + w_in) of widths[l], ... */
  int64_t col0_in, col0_out; /* ... [col0_out, col0_out + w_out) of widths[l + 1] */
  const int64_t *ids_in;     /* (n_in) original node id of each input row: dropout keys */
  const int64_t *ids_out;    /* (n_out) and of each output row */
  int in_primary;            /* this rank's copy of its input rows is the one that counts (other
                                ranks may hold replicas): outputs are taken from it */
  int out_primary;           /* likewise for the output rows: outputs, loss, accuracy */
  int agg_primary;           /* likewise for an aggregated input (n_out x w_in: the output's
                                rows, the input's columns) */
  int64_t wp0, wp_len;       /* this rank's piece of the (w_in x w_out) block of W_l: elements
                                [wp0, wp0 + wp_len) in row-major order */
  int64_t bp0, bp_len;       /* and of the w_out block of b_l */
  int w_primary, b_primary;  /* this rank's W / b piece is the one checkpoints take */
} fg_layer_shape;

/* Every operation that moves bytes between ranks. The model (src/model/) is local math between
 * calls of these; it makes no MPI call. An operation marked "may be NULL" has a trivial 1D
 * meaning, which the fg_scheme_* wrappers below carry out. */
typedef struct fg_scheme_ops {
  const char *name;
  /* Layer l's shape for a model of widths (layers + 1). Not collective. */
  void (*shape)(const fg_scheme *s, int l, const int64_t *widths, fg_layer_shape *out);
  /* out (n_out x f) = Â_l · in, where in (n_in x f) is the rank's part of the layer's input
   * (f of its columns). Collective. */
  fg_status (*aggregate)(fg_scheme *s, int l, const float *in, float *out, int64_t f);
  /* The same from rows already bf16 (under --precision bf16, a hidden activation stored so):
   * what aggregate gives for their widened values, without widening them first. May be NULL:
   * the model widens them and calls aggregate. */
  fg_status (*aggregate16)(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f);
  /* out (n_in x f) = Â_lᵀ · in, in (n_out x f). Collective. */
  fg_status (*aggregate_t)(fg_scheme *s, int l, const float *in, float *out, int64_t f);
  /* The same from rows already bf16 (under --precision bf16, a gradient the model stores so):
   * what aggregate_t gives for their widened values under bf16, without widening them. May be
   * NULL: the model keeps that gradient in fp32 and calls aggregate_t. */
  fg_status (*aggregate16_t)(fg_scheme *s, int l, const fg_bf16 *in, float *out, int64_t f);
  /* aggregate16 (t = 0) or aggregate16_t (t = 1) with the result handed to sink a block of
   * complete rows at a time (fp32, in a staging block of the scheme's: fg_scheme_spmm_rows;
   * blocks of `block` rows from row 0 where block > 0, the scheme's choice where it is 0),
   * never stored whole: for a model that fuses what follows an aggregation (the layer's bias,
   * ReLU and dropout; backward's mask) into it, storing only bf16. The sums are aggregate16's
   * (aggregate16_t's) bit for bit. May be NULL: the scheme completes a row only after all its
   * stages, and the model aggregates into an fp32 buffer. Collective. */
  fg_status (*aggregate16_rows)(fg_scheme *s, int l, int t, const fg_bf16 *in, int64_t f,
                                int64_t block, fg_rows_sink sink, void *ctx);
  /* out (n_out x f) = the input-layout rows in (n_in x f) in the output layout: Â_l's pattern
   * replaced by the identity (a self term, a residual). May be NULL: n_in = n_out, a copy. */
  fg_status (*move_rows)(fg_scheme *s, int l, const float *in, float *out, int64_t f);
  /* out (n_in x f) = the output-layout rows in (n_out x f) in the input layout: move_rows'
   * transpose (the self term's backward). May be NULL with move_rows. */
  fg_status (*move_rows_t)(fg_scheme *s, int l, const float *in, float *out, int64_t f);
  /* move_rows for rows that every consumer reads rounded to bf16 (GEMM operands only: SAGE's
   * self term, a Linear's input, a residual projection's source), called under --precision bf16 only: out gets the rows of
   * bf16(in) (as fp32), which may cross ranks as bf16. May be NULL: move_rows (exact). */
  fg_status (*move_rows_bf16)(fg_scheme *s, int l, const float *in, float *out, int64_t f);
  /* move_rows_bf16 with the rows left as bf16 (out: n_out x f bf16), for a model that stores
   * them so (fg_model.M16). May be NULL. */
  fg_status (*move_rows16)(fg_scheme *s, int l, const float *in, fg_bf16 *out, int64_t f);
  /* block = layer l's `mats` whole (w_in x w_out) weight blocks followed by its `vecs` w_out
   * blocks of vectors over the output's columns (b; a norm's scale and shift, BatchNorm's
   * running mean and variance) and its `scalars` (GIN's epsilon), from every rank's piece
   * (piece: this rank's wp_len elements of each matrix, then bp_len of each vector, then the
   * scalars whole: every rank holds them). May be NULL: the piece is the block. Collective. */
  fg_status (*gather_weights)(fg_scheme *s, int l, const fg_layer_shape *sh, int mats, int vecs,
                              int scalars, const float *piece, float *block);
  /* Sum a partial product H W (n_out x w_out, summed over the input's column split). May be
   * NULL: no split. Collective. */
  fg_status (*reduce_product)(fg_scheme *s, int l, float *buf, int64_t n);
  /* Sum a partial dQ Wᵀ (n_out x w_in, summed over the output's column split). May be NULL.
   * Collective. */
  fg_status (*reduce_input_grad)(fg_scheme *s, int l, float *buf, int64_t n);
  /* piece = this rank's part of the sum over ranks of block ([dW block | db block | scalars],
   * the layout of gather_weights; a scalar's partial sums are summed over every rank, so each
   * must count its terms once). May be NULL: the block is the piece, summed by reduce_grads.
   * Collective. */
  fg_status (*reduce_weight_grads)(fg_scheme *s, int l, const fg_layer_shape *sh, int mats,
                                   int vecs, int scalars, const float *block, float *piece);
  /* The whole gradient buffer (n floats) once backward is done. May be NULL. Collective. */
  fg_status (*reduce_grads)(fg_scheme *s, float *grads, int64_t n);
  /* Row maxima (with their columns) and row sums of layer l's output (n_out rows), over its
   * column split: the logits' softmax statistics, a hidden layer's LayerNorm. May be NULL:
   * whole rows. Collective. */
  fg_status (*row_max)(fg_scheme *s, int l, fg_maxloc *buf, int64_t n);
  fg_status (*row_sum)(fg_scheme *s, int l, double *buf, int64_t n);
  /* Column sums of layer l's output over its distinct rows: buf (n per-column partials of this
   * rank's output rows) summed over the ranks that hold the layer's other rows, each row counted
   * once (a replica of a row is not another row): BatchNorm's statistics. May be NULL: this
   * rank holds every row. Collective. */
  fg_status (*col_sum)(fg_scheme *s, int l, double *buf, int64_t n);
  /* Learned input features (learn_features): the layer-0 input (n_in x w_in) from every rank's
   * feature piece, and the piece's gradient from the layer-0 dH (n_out x w_in; scratch is
   * n_in x w_in). May be NULL: the scheme does not learn features. Collective. */
  fg_status (*gather_input)(fg_scheme *s, const float *piece, float *input);
  fg_status (*input_grad)(fg_scheme *s, const float *dh, float *scratch, float *piece_grad);
  /* Whether an aggregation may follow the weight product (Â (D W)): the 1D schemes. */
  int agg_last_ok;
  void (*destroy)(fg_scheme *s); /* frees what s->impl holds (called only when it is set);
                                    fg_scheme_destroy frees impl and the shared fields */
} fg_scheme_ops;

struct fg_scheme {
  const fg_scheme_ops *ops;
  fg_dist *dist;          /* not owned */
  int64_t n_global;
  /* the rows of the last layer's output (1D: this rank's rows): */
  int64_t n_local;
  int64_t *global_ids;    /* (n_local) original node id of each */
  int32_t *labels;        /* (n_local) */
  int8_t *split;          /* (n_local) FG_SPLIT_* */
  int32_t *in_labels;     /* (layer 0's n_in) labels and split of the layer-0 input rows where */
  int8_t *in_split;       /* they are not the labelled rows (3d, when asked); NULL: those rows */
  int64_t num_features, num_classes;
  int64_t num_tasks;      /* multi-label (fg_scheme_scatter_targets): T = num_classes tasks */
  int8_t *targets;        /* (n_local x num_tasks) whole rows of the labelled rows' targets (1,
                             0, -1 missing); NULL for one class per node */
  /* the layer-0 input: shape(0)'s n_in x w_in, or with learn_features the piece of its rows
   * [feat_row0, feat_row0 + feat_rows) that this rank owns as parameters */
  float *features;        /* normalized if asked; read only. When borrowed with feature_rows
                             set: the dataset's whole matrix in its own order, read through
                             feature_rows */
  fg_bf16 *features16;    /* under --precision bf16, the scheme's own features rounded, laid
                             out so (fg_scheme_config.features16; features then NULL); NULL:
                             none */
  int features_borrowed;  /* features point into the dataset (one process, not
                             normalized): not freed, never written */
  const int64_t *feature_rows; /* NULL: input row i's features are row i of features; else row
                             feature_rows[i] (borrowed features read in the dataset's order by
                             a reordered scheme: --reorder) */
  int learn_features;
  int64_t feat_row0, feat_rows;
  int64_t local_nnz;      /* nonzeros of Â this rank multiplies */
  double seconds_spmm;    /* time in local SpMMs (accumulated) */
  double spmm_bytes;      /* bytes the local SpMMs must move at least (accumulated):
                             nnz (4 + 4) + nnz f 4 gathered + rows f 4 written, per SpMM */
  int bf16;                /* --precision bf16 (the trainer sets it after create; a scheme that
                              sizes buffers by it reads fg_scheme_config.bf16): every local SpMM
                              gathers bf16 rows with fp32 sums (fg_scheme_spmm rounds an fp32
                              input, fg_scheme_spmm_bf16 takes bf16 rows), and row transfers
                              between ranks carry bf16 (2 bytes an element) */
  fg_bf16 *rows16;         /* fg_scheme_spmm's bf16 copy of its input (rows16_cap elements) */
  int64_t rows16_cap;
  float *rows_blk;         /* fg_scheme_spmm_rows' staging block (rows_blk_cap elements) */
  int64_t rows_blk_cap;
  int64_t progress_chunk_bytes; /* fg_scheme_spmm_progress's row chunks (fg_scheme_new sets
                             FG_PROGRESS_CHUNK_BYTES; tests make it small; <= 0: the default) */
  const char *reorder_used; /* serial: the locality order applied ("none", "degree", "rcm") */
  char note[512];          /* a line for the run's log about the layout ("" none) */
  uint64_t epoch;          /* the epoch of the pass under way (the model's forward and backward
                              set it): keys the random draws of quantized messages */
  void *impl;
};

/* The operations with their trivial meaning where a scheme leaves them NULL. */
fg_status fg_scheme_move_rows(fg_scheme *s, int l, const fg_layer_shape *sh, const float *in,
                              float *out, int64_t f);
fg_status fg_scheme_move_rows_t(fg_scheme *s, int l, const fg_layer_shape *sh, const float *in,
                                float *out, int64_t f);
/* move_rows for a consumer that reads the rows rounded to bf16 (ops->move_rows_bf16 under
 * bf16, else fg_scheme_move_rows): the rows of moved rows that feed an fp32 sum (GIN's
 * (1 + eps) D, a residual) or an elementwise pass (every move_rows_t) go through
 * fg_scheme_move_rows, which moves them exactly at either precision. */
fg_status fg_scheme_move_rows_bf16(fg_scheme *s, int l, const fg_layer_shape *sh,
                                   const float *in, float *out, int64_t f);
/* ops->move_rows16 (the rows of bf16(in), moved and left as bf16); FG_ERR_INTERNAL where the
 * scheme has none (a model stores M16 only where it has). */
fg_status fg_scheme_move_rows16(fg_scheme *s, int l, const float *in, fg_bf16 *out, int64_t f);
fg_status fg_scheme_reduce_product(fg_scheme *s, int l, float *buf, int64_t n);
fg_status fg_scheme_reduce_input_grad(fg_scheme *s, int l, float *buf, int64_t n);
fg_status fg_scheme_reduce_grads(fg_scheme *s, float *grads, int64_t n);
fg_status fg_scheme_row_max(fg_scheme *s, int l, fg_maxloc *buf, int64_t n);
fg_status fg_scheme_row_sum(fg_scheme *s, int l, double *buf, int64_t n);
fg_status fg_scheme_col_sum(fg_scheme *s, int l, double *buf, int64_t n);

/* Collective: the one-process layout on rank 0. gather_params: n values of this rank with
 * their one-process indices (each index passed by one rank) into out (n_global; rank 0).
 * gather_rows: a block of rows x w values (rows with original ids `ids`, columns [col0, col0 +
 * w) of width) into out (n_global x width; rank 0); a rank whose rows are replicas passes 0
 * rows. What checkpoints and --save-predictions / --save-embeddings write. */
fg_status fg_scheme_gather_params(fg_scheme *s, const float *vals, const int64_t *idx, int64_t n,
                                  int64_t n_global, float *out);
fg_status fg_scheme_gather_rows(fg_scheme *s, const float *vals, const int64_t *ids, int64_t rows,
                                int64_t col0, int64_t w, int64_t width, float *out);

/* The shape of layer l of a 1D scheme (whole rows, replicated weights), the gradient sum of
 * replicated weights (one all-reduce of the buffer) and the column sums over rows cut into
 * blocks (one all-reduce in double): the 1D schemes' operations. */
void fg_scheme_shape_rows(const fg_scheme *s, int l, const int64_t *widths, fg_layer_shape *out);
fg_status fg_scheme_allreduce_grads(fg_scheme *s, float *grads, int64_t n);
fg_status fg_scheme_allreduce_cols(fg_scheme *s, int l, double *buf, int64_t n);

/* Schemes are created by name through the registry (plan/fg_registry.h: fg_scheme_create) or
 * by their constructors below; ds is needed on rank 0 only (rank 0 scatters). */
void fg_scheme_destroy(fg_scheme **s);

/* Collective: a scheme with its operations on d and a zeroed impl of impl_bytes; every rank
 * agrees on the outcome (NULL and the error everywhere if one rank is out of memory). */
fg_status fg_scheme_new(fg_dist *d, const fg_scheme_ops *ops, size_t impl_bytes,
                        fg_scheme **out);

/* The piece [f0, f1) of a feature row of F elements, row-normalized first when normalize (each
 * element over the row's sum in double, the bits of fg_row_normalize), into o32 or, with o32
 * NULL, rounded to bf16 into o16. */
void fg_scheme_feature_row(const float *row, int64_t F, int normalize, int64_t f0, int64_t f1,
                           float *o32, fg_bf16 *o16);

/* Fill the fields every scheme shares (features normalized, labels, split, ids) from a
 * dataset for the given local rows (global ids in scheme order). Unless normalize_features,
 * the features are borrowed from ds (read through feature_rows when gids is not 0..n-1), so
 * ds must outlive s. Not collective. */
fg_status fg_scheme_fill_local(fg_scheme *s, const fg_dataset *ds, const int64_t *gids,
                               int64_t n_local, int normalize_features, int features16);

/* Collective, after a scheme is created: the multi-label targets (ds->targets, rank 0's
 * dataset) of the rows each rank labels (s->global_ids), whole rows, into s->targets. Every
 * rank sends its ids to rank 0, which answers with their rows: 8 + T bytes a row, once. A
 * no-op (s->targets NULL) when the dataset has one class per node. */
fg_status fg_scheme_scatter_targets(fg_scheme *s, const fg_dataset *ds);

/* 1 if layer l (widths w_in -> w_out) aggregates before its weight product under agg_order
 * (an fg_agg_order): the model's choice, which the volume plans must count the same way. */
int fg_agg_first(int agg_order, int l, int64_t w_in, int64_t w_out);

/* M (overwritten) an nrows x ncols CSR with room for nnz entries and values, rowptr[0] = 0. */
fg_status fg_scheme_alloc_csr(fg_csr *M, int64_t nrows, int64_t ncols, int64_t nnz);

/* Sort v (n) ascending and move its distinct values to the front; returns how many there are. */
int64_t fg_scheme_sort_unique(int32_t *v, int64_t n);

/* The first k in [lo, hi) with v[k] >= x in the sorted v (hi if none). */
int64_t fg_scheme_lower_bound(const int32_t *v, int64_t lo, int64_t hi, int64_t x);

/* One local SpMM: out (A->nrows x f) = A in, or += A in with acc; its time and the bytes it
 * must move are added to s->seconds_spmm and s->spmm_bytes. Under bf16 the input's A->ncols
 * rows are first rounded to bf16 (s->rows16; FG_ERR_NOMEM if it cannot grow) and gathered as
 * such: the same values, and so the same sums, as if they had arrived in bf16. */
fg_status fg_scheme_spmm(fg_scheme *s, const fg_csr *A, const float *in, int64_t f, float *out,
                         int acc);
/* fg_scheme_spmm on fp32 rows whatever s->bf16 says (rows moved through an identity, whose
 * consumers add them in fp32: nothing rounds them). */
fg_status fg_scheme_spmm_f32(fg_scheme *s, const fg_csr *A, const float *in, int64_t f,
                             float *out, int acc);
/* The same on rows already in bf16 (in: A->ncols x f), at any precision setting. */
void fg_scheme_spmm_bf16(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                         float *out, int acc);
/* The same with each fp32 sum rounded once into out (bf16, A->nrows x f): fg_spmm_bf16_out. */
void fg_scheme_spmm_bf16_out(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                             fg_bf16 *out);
/* fg_scheme_spmm_bf16 (A in, in bf16) handed to sink a block of `block` rows at a time (<= 0:
 * fg_scheme_rows_block(A->nrows, f)) from s->rows_blk (grown to it; FG_ERR_NOMEM if it cannot grow): each row
 * summed as fg_spmm_bf16 sums it, whichever block holds it. Only the SpMMs are timed in
 * s->seconds_spmm; the sink times itself. */
fg_status fg_scheme_spmm_rows(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, int64_t f,
                              int64_t block, fg_rows_sink sink, void *ctx);
/* The same for A in + B in2 (B of A's rows, in2 its columns' rows, bf16; B NULL or empty: A
 * alone): each block's B sums added to its A sums as fg_spmm_bf16 accumulates them (the old
 * value added last), so the bits of the two whole products, the second accumulated. */
fg_status fg_scheme_spmm_rows2(fg_scheme *s, const fg_csr *A, const fg_bf16 *in, const fg_csr *B,
                               const fg_bf16 *in2, int64_t f, int64_t block, fg_rows_sink sink,
                               void *ctx);
/* The rows of fg_scheme_spmm_rows' blocks for an output of n rows x f: FG_ROWS_BLOCK_BYTES of
 * fp32 rows (8 MiB, as the bf16 GEMMs' blocks), at least 64 a thread, at most n. */
#ifndef FG_ROWS_BLOCK_BYTES
#define FG_ROWS_BLOCK_BYTES (8 << 20)
#endif
int64_t fg_scheme_rows_block(int64_t n, int64_t f);
/* in (n elements) rounded to bf16 into s->rows16 (grown to n), returned in *out. */
fg_status fg_scheme_rows_bf16(fg_scheme *s, const float *in, int64_t n, const fg_bf16 **out);

/* Row chunks of fg_scheme_spmm_progress, in bytes of SpMM memory traffic (a nonzero gathers 4f
 * bytes, 2f in bf16; a row writes 4f). A chunk boundary costs about 5 us beside the test (measured on one
 * thread: 1 MiB chunks slowed an R-MAT block's SpMM by 20-35 %, 4 MiB by 3-20 %, 16 MiB by 2 %);
 * 4 MiB (~200 us of SpMM) still tests a block's SpMM a few dozen times, enough for the
 * shared-memory transport to move megabytes: docs/benchmarks.md. A build-time knob. */
#ifndef FG_PROGRESS_CHUNK_BYTES
#define FG_PROGRESS_CHUNK_BYTES (4 << 20)
#endif

/* fg_scheme_spmm while the n nonblocking requests reqs are in flight: the SpMM runs in row
 * chunks of s->progress_chunk_bytes (fg_spmm_chunked, under bf16 fg_spmm_bf16_chunked on the
 * input rounded as fg_scheme_spmm rounds it: bitwise the same result either way) with an
 * MPI_Testall between chunks until all are complete, because Open MPI moves a nonblocking
 * transfer only inside MPI calls. Completed requests become MPI_REQUEST_NULL, so a later
 * wait on them returns at once. Each test is counted in counters.progress_tests and its time in
 * counters.seconds_comm (not in seconds_spmm). Call from the thread that owns MPI (outside
 * any OpenMP region: MPI_THREAD_FUNNELED). An MPI failure in a test is returned. */
fg_status fg_scheme_spmm_progress(fg_scheme *s, const fg_csr *A, const float *in, int64_t f,
                                  float *out, int acc, MPI_Request *reqs, int n);
/* The same on rows already in bf16 (fg_scheme_spmm_bf16's, chunked by fg_spmm_bf16_chunked,
 * bitwise its result), at any precision setting. fg_scheme_spmm_progress under bf16 rounds its
 * input into s->rows16 and runs this: so a caller whose requests send from s->rows16 must call
 * this one, not round another input over the rows in flight. */
fg_status fg_scheme_spmm_bf16_progress(fg_scheme *s, const fg_csr *A, const fg_bf16 *in,
                                       int64_t f, float *out, int acc, MPI_Request *reqs,
                                       int n);

/* Implementations (one file each in src/schemes/; the registry, registry.c, names them). */
fg_status fg_scheme_serial_create(fg_dist *dist, const fg_dataset *ds,
                                  const fg_scheme_config *cfg, fg_scheme **out);
/* Sparsity-oblivious 1D: staged broadcasts of block rows (scheme_1d.c). */
fg_status fg_scheme_1d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                              fg_scheme **out);
/* Sparsity-aware 1D: exchange of exactly the referenced rows (scheme_1d_sa.c). */
fg_status fg_scheme_1d_sa_create(fg_dist *dist, const fg_dataset *ds,
                                 const fg_scheme_config *cfg, fg_scheme **out);
/* SuperGCN's halo exchange: pre, post or hybrid aggregation over a vertex cover of each cut,
 * optionally quantized rows (scheme_halo.c). */
fg_status fg_scheme_halo_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                fg_scheme **out);
/* Sparsity-aware 1.5D: P/c block rows, each on c replicas that multiply a share of its columns
 * and sum by an all-reduce (scheme_1p5d.c). */
fg_status fg_scheme_1p5d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                                fg_scheme **out);
/* FG_OK if c is a replication 1.5d can run on `ranks` ranks: c divides them and c <= ranks / c
 * (every replica has a share of the block columns); else an error naming the valid ones. */
fg_status fg_replicate_check(int c, int ranks);
/* The valid replications on `ranks` ranks, ascending from 1 (only 1 below 4 ranks or on a prime
 * number of them): the first min(count, cap) into out (may be NULL with cap 0); returns the
 * count. */
int fg_replicate_valid(int ranks, int *out, int cap);
/* 3D (Plexus): a grid of ranks, rows and columns cut in two dimensions (scheme_3d.c). */
fg_status fg_scheme_3d_create(fg_dist *dist, const fg_dataset *ds, const fg_scheme_config *cfg,
                              fg_scheme **out);
/* 3d's pieces on this rank, for tests comparing its two sources (rank 0's delivery, the
 * per-rank read of a prepared directory): the shard of layer key k (transposed: its transpose,
 * empty unless a layer multiplies it backward), and the ids of node block q[d] in order
 * pi[parity] (NULL where no layer uses them); NULL when s is not 3d or k is out of range. */
const fg_csr *fg_scheme_3d_shard(const fg_scheme *s, int k, int transposed);
const int64_t *fg_scheme_3d_ids(const fg_scheme *s, int d, int parity);

#endif /* FG_SCHEME_H */
