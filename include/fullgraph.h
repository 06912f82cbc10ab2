/* fullgraph.h -- the one public header of libfullgraph.
 *
 * libfullgraph trains graph neural networks on whole graphs (no sampling) in one
 * process or over MPI. Every public symbol starts with fg_ / FG_. Fallible calls
 * return an fg_status (0 = ok, stable negative codes); fg_last_error() returns the
 * message of the most recent failure on the calling thread.
 *
 * Handles are opaque; fg_x_destroy(&x) accepts NULL and sets the handle to NULL.
 * Configuration structs are plain; start from fg_x_config_default().
 *
 * Calls marked "collective" must be made by every rank of the communicator.
 */
#ifndef FULLGRAPH_H
#define FULLGRAPH_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Everything declared here is exported from libfullgraph.so; the library's other symbols are
 * built hidden. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define FG_VERSION_MAJOR 0
#define FG_VERSION_MINOR 1
#define FG_VERSION_PATCH 0

/* ---- status ------------------------------------------------------------ */

typedef enum fg_status {
  FG_OK = 0,
  FG_ERR_INVALID_ARG = -1, /* a bad option, flag value or API argument */
  FG_ERR_IO = -2,          /* a file could not be opened, read or written */
  FG_ERR_FORMAT = -3,      /* a file's content is malformed */
  FG_ERR_NOMEM = -4,       /* an allocation failed */
  FG_ERR_UNSUPPORTED = -5, /* valid input that this version does not handle */
  FG_ERR_MPI = -6,         /* an MPI call failed */
  FG_ERR_NUMERIC = -7,     /* a NaN or Inf where a number was needed */
  FG_ERR_INTERNAL = -8,    /* a broken invariant: a bug */
  FG_ERR_MEMLIMIT = -9,    /* the run needs more memory than allowed */
  FG_ERR_REMOTE = -10,     /* another rank failed; its message is reported */
  FG_STOPPED = -11         /* not a failure: training stopped early on request (a signal,
                              fg_request_stop) after writing its checkpoint */
} fg_status;

const char *fg_status_string(fg_status st);
/* Message of the last failure on this thread ("" if none). */
const char *fg_last_error(void);
/* Source location (file:line list) where the last failure was raised and passed. */
const char *fg_last_error_trace(void);
const char *fg_version_string(void);
/* The git commit the library was built from (40 hex digits), recorded at every build; "unknown"
 * when it was built outside a git checkout (a release tarball). */
const char *fg_build_commit(void);
/* 1 when tracked files differed from fg_build_commit() at build time, 0 when not, -1 unknown. */
int fg_build_dirty(void);
/* The build's optional parts, as "openmp on, metis on, zoltan off". */
const char *fg_build_options(void);
/* The kernel set the loaded OpenBLAS runs ("Haswell", "SkylakeX", ...): its own pick for this
 * CPU, or the one OPENBLAS_CORETYPE forced. */
const char *fg_blas_corename(void);
/* The fp32 GEMM library: "auto" (the default: oneDNN's dnnl_sgemm or OpenBLAS by a fixed rule
 * on the product's shape, src/kernels/dense.c), "openblas" or "onednn" (every product). The
 * environment's FULLGRAPH_GEMM sets it before the first GEMM; this call overrides it.
 * FG_ERR_INVALID_ARG for another name, FG_ERR_UNSUPPORTED for onednn in a build without it. */
fg_status fg_set_gemm_lib(const char *name);
/* "auto", "openblas" or "onednn": the setting in force. */
const char *fg_gemm_lib_current(void);
/* The setting with the libraries' versions, as `--version` prints it ("fp32 GEMM: ..."). */
const char *fg_gemm_info(void);

/* Collective over comm: every rank passes its own status; all return the same one. When any
 * rank failed, its message (the lowest failing rank's) becomes fg_last_error() everywhere, so
 * the whole job can stop with it instead of hanging. */
fg_status fg_agree(MPI_Comm comm, fg_status local);

/* Set the number of OpenMP threads (no effect in a build without OpenMP). */
void fg_set_threads(int n);
/* The most threads fg_set_threads should be given on this machine: 16 per online CPU (an
 * OpenMP runtime asked for far more can crash creating them). */
int fg_max_threads_allowed(void);

/* ---- MPI for callers without their own (bindings, single-process programs) --------------- */

/* Initialize MPI (MPI_Init_thread, MPI_THREAD_FUNNELED) unless someone already has: a program
 * started by mpirun joins its job, one started alone is a job of one process (no mpirun
 * needed). Safe to call more than once. FG_ERR_MPI when MPI cannot start or was finalized. */
fg_status fg_init(void);
/* Finalize MPI if fg_init initialized it (never MPI that the caller started); safe to call more
 * than once, and without fg_init. Collective over MPI_COMM_WORLD when it finalizes. */
fg_status fg_finalize(void);
/* Rank and size in MPI_COMM_WORLD (0 and 1 while MPI is not initialized). */
int fg_world_rank(void);
int fg_world_size(void);
/* fg_agree over MPI_COMM_WORLD (returns local as it is while MPI is not initialized). */
fg_status fg_agree_world(fg_status local);

/* ---- paths ------------------------------------------------------------- */

typedef enum fg_path_kind {
  FG_PATH_INPUT = 0,      /* read: a readable file or directory (a dataset may be a folder) */
  FG_PATH_INPUT_FILE = 1, /* read: a readable file, not a directory */
  FG_PATH_OUTPUT = 2,     /* written: its directory exists and is writable; never a directory
                             or an empty path; a device or pipe is written through */
  FG_PATH_CHECKPOINT = 3, /* written, as OUTPUT; may name the file FG_PATH_RESUME reads; a
                             path ending in '/' is a sharded checkpoint's directory: an
                             existing writable one, or a new one in a writable directory */
  FG_PATH_RESUME = 4      /* read, as INPUT_FILE; may name the file FG_PATH_CHECKPOINT writes;
                             a directory only when it holds a manifest (a sharded checkpoint) */
} fg_path_kind;

typedef struct fg_path_use {
  const char *flag;       /* "--metrics": how messages name the use */
  const char *path;       /* NULL: not used (skipped) */
  fg_path_kind kind;
} fg_path_use;

/* Check every path of a run before anything is read or written: each as its kind requires, and
 * no file written by one use and named by another (FG_ERR_INVALID_ARG, naming both flags).
 * FG_ERR_IO names the path and why. Not collective. */
fg_status fg_check_paths(const fg_path_use *uses, int n);

/* ---- stopping early ---------------------------------------------------- */

/* Ask fg_train to stop after the epoch in progress: every rank learns of it at the epoch's end
 * (the request of any rank counts), the checkpoint is written (when one is configured), the
 * metrics flushed, and fg_train returns FG_STOPPED on every rank (and forgets the request).
 * Async-signal-safe: call it from a SIGUSR1 or SIGTERM handler. A request made before fg_train
 * starts stops it after its first epoch. */
void fg_request_stop(void);
/* 1 once fg_request_stop was called (in this process). */
int fg_stop_requested(void);

/* ---- datasets ------------------------------------------------------------ */

typedef struct fg_dataset fg_dataset;

typedef struct fg_load_config {
  int undirected;       /* add the reverse of every edge (default 1) */
  int dedup;            /* drop duplicate edges (default 1) */
  int self_loops;       /* 1: add a self loop to every node (GCN's A+I; default 1)
                           0: keep the file's self loops as they are */
  int split_index;      /* which split column of a multi-split .npz (default 0) */
  int gen_features;     /* width of random features for graph-only inputs (default 128) */
  int gen_classes;      /* classes drawn from degree quantiles for graph-only inputs (default 32) */
  double train_frac;    /* random split for inputs without one (default 0.6 / 0.2 / 0.2) */
  double valid_frac;
  uint64_t seed;        /* seed for generated features, labels and splits (default 0) */
  const char *split_name; /* OGB split folder; NULL = the only one present */
  int keep_ids;         /* SNAP edge lists that do not declare their node count: 0 (default)
                           keeps the ids that occur in an edge, renumbered 0..n-1 in increasing
                           order of id; 1 makes node i = id i for i up to the largest id
                           (absent ids become isolated nodes). A "# Nodes: N" header is kept
                           when every id is below N and N is at most twice the edge lines (the
                           most nodes they can name); 1 keeps it whatever N */
  double mem_limit;     /* bytes the load may allocate (default 0: the available memory,
                           MemAvailable; < 0: no limit). Every reader checks what it holds
                           against it as it reads (a gzip stream's growth included), and the
                           whole load (CSR build, features, labels, split) is weighed before
                           anything of it is allocated: FG_ERR_MEMLIMIT names what it needs */
  int prepared_per_rank; /* a prepared directory (fg_dataset_prepare): 0 (default) reads it
                           whole; 1 reads only its manifest, and fg_train's 1D schemes (1d,
                           1d-sa, 1.5d) and 3d then have every rank read its own block rows or
                           shards. Such a
                           dataset holds no arrays: info, copy_arrays, save_ids / save_split
                           refuse it */
} fg_load_config;

fg_load_config fg_load_config_default(void);

/* Read a dataset; the format is chosen by what the path holds:
 *   a prepared directory (manifest.fgprep, fg_dataset_prepare), a directory with raw/ (OGB
 *   node-property layout), *.npz, *.npy (edge list E x 2),
 *   *.mtx[.gz] (Matrix Market), anything else as a SNAP edge list (plain or gzip).
 * Not collective: reads on the calling rank only. */
fg_status fg_dataset_load(const char *path, const fg_load_config *cfg, fg_dataset **out);
void fg_dataset_destroy(fg_dataset **ds);

int64_t fg_dataset_num_nodes(const fg_dataset *ds);
int64_t fg_dataset_num_edges(const fg_dataset *ds); /* stored adjacency entries */
int64_t fg_dataset_num_features(const fg_dataset *ds);
int64_t fg_dataset_num_classes(const fg_dataset *ds);
/* T >= 1 when the dataset has multi-label targets (several 0/1 label columns; then
 * fg_dataset_num_classes is T, the logits per node); 0 for one class per node. */
int64_t fg_dataset_num_tasks(const fg_dataset *ds);
/* Count of nodes in split k (0 train, 1 valid, 2 test). */
int64_t fg_dataset_split_size(const fg_dataset *ds, int k);

/* The input file's id of each node (num_nodes entries), or NULL when node i is id i: SNAP
 * edge lists whose sparse ids were renumbered (fg_load_config.keep_ids). */
const int64_t *fg_dataset_node_ids(const fg_dataset *ds);
/* Write every node's file id as a 1-D int64 .npy in node order, the row order of predictions
 * and embeddings (0..n-1 when nothing was renumbered). */
fg_status fg_dataset_save_ids(const fg_dataset *ds, const char *path);
/* Each node's split as a .npy of N int64 in node order: 0 train, 1 valid, 2 test, -1 none (the
 * split a run trains on, generated or read), so that a reference can use the very same one. */
fg_status fg_dataset_save_split(const fg_dataset *ds, const char *path);

/* Print sizes, degree statistics, label and split counts. */
fg_status fg_dataset_print_info(const fg_dataset *ds, FILE *out);

/* A blocked copy of a dataset (`fullgraph prepare`, README "Prepared datasets"): the pattern
 * in the vertex order `order` at `blocks` parts cut into blocks x blocks CSR blocks, the node
 * data in `blocks` row blocks, and a manifest with sizes, CRC-32s and the dataset's fingerprint,
 * written last. fg_dataset_load recognizes such a directory (by its manifest.fgprep). */
typedef struct fg_prepare_config {
  int blocks;          /* B, 1 .. min(nodes, 1024) (default 1) */
  const char *order;   /* as fg_train_config.order (default "natural") */
  uint64_t seed;       /* the order's seed (random, metis, ...) */
} fg_prepare_config;

fg_prepare_config fg_prepare_config_default(void);
/* Write ds into the directory dir (created if missing; files of the same names are replaced,
 * each through a temporary renamed into place, the manifest removed first and written last).
 * Not collective: call it on one rank. */
fg_status fg_dataset_prepare(const fg_dataset *ds, const fg_prepare_config *cfg, const char *dir);
/* What a prepared directory's layout gives (fg_prepared_report): the entries outside the
 * diagonal blocks (the edge cut a 1D run on B ranks pays), the largest row block's rows and
 * entries; and, from fg_dataset_prepare_parallel, how the input was read and partitioned. */
typedef struct fg_prepare_report {
  int64_t nodes, entries, blocks;
  int64_t edge_cut;       /* entries of block (i, j), i != j, summed */
  int64_t max_rows;       /* rows of the largest row block */
  int64_t max_entries;    /* entries of the fullest row block */
  int parallel_read;      /* 1: every rank parsed a byte range of the input; 0: rank 0 read it
                             and sent each rank its rows */
  char partitioner[48];   /* what cut the order: "none" (natural, random), "METIS", "PT-Scotch
                             (SCOTCH_dgraphPart)" */
} fg_prepare_report;
/* The report of the prepared directory dir, from its manifest. Not collective. */
fg_status fg_prepared_report(const char *dir, fg_prepare_report *report);
/* `mpirun -n P fullgraph prepare`: the same directory fg_dataset_load + fg_dataset_prepare
 * write (bit for bit for the orders natural and random; metis is partitioned by PT-Scotch's
 * SCOTCH_dgraphPart instead of METIS), built by every rank of comm: a plain SNAP edge list
 * is parsed in P byte ranges, other inputs are read by rank 0 and their rows sent out; each
 * rank then holds a block of rows, partitions, and writes the row blocks it owns; rank 0 writes
 * the manifest last. Collective; report (filled on rank 0) may be NULL. */
fg_status fg_dataset_prepare_parallel(MPI_Comm comm, const char *path, const fg_load_config *load,
                                      const fg_prepare_config *cfg, const char *dir,
                                      fg_prepare_report *report);
/* 1 when path is a prepared directory (it holds a manifest.fgprep file). */
int fg_dataset_is_prepared(const char *path);
/* B when ds was read from a prepared directory (whole or opened per rank), else 0: the layouts
 * a per-rank read can form (fullgraph plan ranks only those). */
int64_t fg_dataset_prepared_blocks(const fg_dataset *ds);
/* Before a per-rank run on the prepared directory dir: FG_ERR_INVALID_ARG unless the 1D layout
 * of ranks / replicate blocks divides its row blocks (the message names the rank counts that
 * fit) and order (NULL: any) is the one it was prepared in; a manifest that cannot be read fails
 * as fg_dataset_load would. scheme names the layout in messages. Not collective. */
fg_status fg_dataset_prepared_check(const char *dir, int ranks, int replicate, const char *scheme,
                                    const char *order);
/* The same for --scheme 3d on ranks processes: grid ("XxYxZ") must have every dimension
 * dividing the row blocks; NULL or "auto" (the performance model picks from the manifest's block
 * counts) needs some grid of ranks that does (else refused naming the rank counts that fit);
 * double_perm is refused (the directory's one order is 3d's permutation). */
fg_status fg_dataset_prepared_check_3d(const char *dir, int ranks, const char *grid,
                                       int double_perm, const char *order);

/* A dataset held in memory, for fg_dataset_from_arrays. The arrays are read, never kept. */
typedef struct fg_arrays {
  int64_t num_nodes;       /* N >= 1 */
  int64_t num_edges;       /* E >= 0: entries of src and dst */
  const int64_t *src;      /* (E) source of each edge, in [0, N) (COO; NULL only when E = 0) */
  const int64_t *dst;      /* (E) its destination: node dst aggregates from node src */
  int64_t num_features;    /* F >= 1 when features are given */
  const float *features;   /* (N x F) row-major, finite; NULL: generated (gen_features wide) */
  const int32_t *labels;   /* (N) class ids in [0, C), -1 unlabelled; NULL: generated from
                              degree quantiles (gen_classes) */
  int64_t num_classes;     /* C: 0 = the largest label + 1 (what the file readers take); else
                              at least that (a class no node carries still gets a logit) */
  const int8_t *split;     /* (N) 0 train, 1 valid, 2 test, -1 none; NULL: drawn at random by
                              cfg's train_frac / valid_frac */
  /* multi-label targets (added last: older callers that zero the struct give none) */
  const int8_t *targets;   /* (N x T) row-major, 1 positive, 0 negative, -1 missing; NULL: none.
                              Not with labels (then num_classes is T) */
  int64_t num_tasks;       /* T >= 1 when targets are given */
} fg_arrays;

/* Build a dataset from arrays in memory with the same steps as fg_dataset_load takes for a
 * file: the edges under cfg's undirected / dedup / self_loops, generated features, labels or
 * split (cfg's widths, fractions and seed) where an array is NULL, and the same memory budget
 * (cfg->mem_limit). The same strict checks as the readers: a size out of range or an element
 * out of range (an edge id, a label below -1, a split value, a NaN or Inf feature) fails with
 * FG_ERR_INVALID_ARG or FG_ERR_FORMAT (FG_ERR_NUMERIC for a feature) naming the array and its
 * first bad element, e.g. "arrays: src[17] = 2708 out of range [0, 2708)". A graph read from a
 * file and the same graph given as arrays train to the same losses. Not collective. */
fg_status fg_dataset_from_arrays(const fg_arrays *a, const fg_load_config *cfg,
                                 fg_dataset **out);

/* Buffers that fg_dataset_copy_arrays fills (each may be NULL: skipped). */
typedef struct fg_dataset_buffers {
  int64_t *indptr;         /* (N + 1) CSR row pointers of the prepared adjacency */
  int32_t *indices;        /* (fg_dataset_num_edges) sources of each row's entries, sorted: row
                              v lists the nodes v aggregates from (self loops included) */
  float *features;         /* (N x fg_dataset_num_features) row-major */
  int32_t *labels;         /* (N) -1 unlabelled */
  int8_t *split;           /* (N) 0 train, 1 valid, 2 test, -1 none */
  int64_t *node_ids;       /* (N) each node's id in the input (i when nothing was renumbered) */
  int8_t *targets;         /* (N x fg_dataset_num_tasks) multi-label targets (1, 0, -1 missing);
                              skipped for a dataset without them */
} fg_dataset_buffers;

/* Copy ds's arrays out, in node order (what a binding returns to its caller). Not collective. */
fg_status fg_dataset_copy_arrays(const fg_dataset *ds, const fg_dataset_buffers *out);

/* ---- generators -------------------------------------------------------- */

/* Graph500 R-MAT (a=0.57, b=c=0.19) with 2^scale nodes and edge_factor * 2^scale
 * edges, written as a SNAP edge list (gzip if path ends in .gz). */
fg_status fg_generate_rmat(int scale, int edge_factor, uint64_t seed, const char *path);

/* ---- measurements -------------------------------------------------------- */

/* STREAM triad a = b + s c over three arrays of n floats with the current OpenMP threads; returns
 * the best of reps runs in bytes per second (12 n bytes a run), or a negative value when the
 * arrays cannot be allocated. */
double fg_bench_stream_triad(int64_t n, int reps);

/* Seconds of one C = op(A) op(B) through the library's sgemm with the current threads, op(A)
 * m x k and op(B) k x n (transposed when trans_a, trans_b), all three packed row-major: the
 * best of reps timed calls after one untimed call. Negative when a size is not positive or
 * the arrays cannot be allocated. */
double fg_bench_gemm(int trans_a, int trans_b, int64_t m, int64_t n, int64_t k, int reps);

/* The bf16 kernels' GEMM path (README, `bench gemm --precision bf16`): "native" (oneDNN's bf16
 * matmul, where the build has oneDNN and the CPU bf16 dot products) or "convert" (bf16 -> fp32,
 * then OpenBLAS sgemm). The default is native where available, else convert, or what the
 * environment variable FULLGRAPH_BF16_PATH names. FG_ERR_INVALID_ARG for another name,
 * FG_ERR_UNSUPPORTED (the message says why) for native where it is unavailable. */
fg_status fg_set_bf16_path(const char *name);
/* The path in force: "native" or "convert". */
const char *fg_bf16_path_current(void);
/* One line: the default path of this build on this CPU and what it runs on. */
const char *fg_bf16_info(void);
/* Seconds of one bf16 GEMM (fp32 accumulation and output) on the current path: trans_a == 0
 * the layer product C[m x n] = A[m x k] W[k x n] (A bf16, W fp32 rounded to bf16 in the call);
 * trans_a != 0 the weight gradient C[m x n] = A^T G, A[k x m] and G[k x n] bf16; all packed
 * row-major. The best of reps timed calls after one untimed call; negative when a size is not
 * positive, the operands cannot be allocated or the kernel fails (fg_last_error says why). */
double fg_bench_gemm_bf16(int trans_a, int64_t m, int64_t n, int64_t k, int reps);

/* The aggregation kernel alone (`bench spmm`): GCN's Â of ds (sym, self loops as loaded) times
 * an n x f matrix, fp32 (fg_spmm) and bf16 rows (fg_spmm_bf16, fp32 output), interleaved, reps
 * timed calls each after an untimed one, at each of the nthreads thread counts given (0: the
 * current count; the current count is set again at the end). With
 * gemm_between, each call follows an untimed n x f x f GEMM of its precision (sgemm; the bf16
 * path's product), as in training. Writes a header and a row a thread count to out: best and
 * median seconds, the median's effective GB/s (the bytes an SpMM must move: Â's 8 bytes an
 * entry, the gathered rows, the fp32 output) and bf16's median over fp32's. */
fg_status fg_bench_spmm(const fg_dataset *ds, int64_t f, const int *threads, int nthreads,
                        int reps, int gemm_between, FILE *out);

/* ---- training -------------------------------------------------------------- */

typedef enum fg_weight_decay_layers { FG_WD_FIRST = 0, FG_WD_ALL = 1 } fg_weight_decay_layers;
typedef enum fg_agg_order { FG_AGG_AUTO = 0, FG_AGG_FIRST = 1, FG_AGG_LAST = 2 } fg_agg_order;

typedef struct fg_train_config {
  int epochs;              /* total epochs (a resumed run continues up to this) */
  int layers;              /* layers (default 2) */
  int hidden;              /* width of every hidden layer (default 16) */
  const char *model;       /* "gcn" (default, NULL), "sage" (mean aggregator, separate self and
                              neighbour weights) or "gin" (sum, then a two-Linear MLP) */
  const char *adj_norm;    /* the aggregation's normalization: "sym" (D^-1/2 A D^-1/2), "mean"
                              (D^-1 A), "sum" (A); NULL: the model's (gcn sym, sage mean, gin
                              sum) */
  const char *gin_eps;     /* gin: epsilon, a number (NULL: 0) or "learn" (learned from 0) */
  const char *norm;        /* every hidden layer's output, before the ReLU: "none" (NULL),
                              "layer" (LayerNorm over each row's features) or "batch" (BatchNorm
                              over each feature's nodes, the whole graph the batch; evaluation
                              with the running statistics) */
  int residual;            /* every layer but the last adds its input to its output (a learned
                              projection where the widths differ); default 0 */
  const int *widths;       /* optional: layers-1 hidden widths, overrides hidden */
  double lr;               /* Adam learning rate (default 0.01) */
  double dropout;          /* dropout on every layer's input (default 0.5) */
  double weight_decay;     /* L2 on weights (default 5e-4) */
  fg_weight_decay_layers weight_decay_layers; /* default FG_WD_FIRST (Kipf & Welling) */
  int normalize_features;  /* row-normalize input features (default 0) */
  fg_agg_order agg_order;  /* aggregate before or after W; AUTO picks by widths */
  uint64_t seed;           /* default 0 */
  const char *scheme;      /* "serial", "1d", "1d-sa", "3d", "auto" (the performance model's
                              best); NULL = serial on 1 rank, 1d-sa else */
  const char *order;       /* vertex order: "natural" (default), "random", "metis" */
  int overlap;             /* 1d: overlap broadcasts with SpMM */
  const char *grid;        /* 3d: "XxYxZ" with X*Y*Z = ranks, or "auto"/NULL (model's best) */
  int agg_blocks;          /* 3d: row blocks per aggregation, each all-reduced as soon as it is
                              computed (default 1) */
  int learn_features;      /* 3d: train the input features too (sharded with their Adam state) */
  int double_perm;         /* 3d: different random row and column permutations (Plexus 5.1) */
  const char *aggregation; /* halo: what crosses a cut -- "pre" (the sender's partial sums),
                              "post" (the source rows), "hybrid" (NULL: a minimum vertex cover
                              of each cut, edge by edge the cheaper) */
  const char *quantize;    /* halo: the exchanged rows as "int8", "int4" or "int2" codes with
                              stochastic rounding; "none" (NULL) float32 */
  const char *precision;   /* "fp32" (NULL, the default) or "bf16": activations rounded to
                              bfloat16 as every GEMM and SpMM reads them (fp32 accumulation),
                              rows crossing ranks as bfloat16; weights, their gradients, Adam
                              moments, the loss and every reduction stay fp32 (README) */
  const char *bf16_path;   /* bf16: "native" (oneDNN, AVX512_BF16) or "convert" (widen to fp32,
                              OpenBLAS); NULL: native where the CPU and build have it */
  int replicate;           /* 1.5d: c, the processes holding each of the P/c block rows (c
                              divides P, c <= P/c); 0: the performance model's choice */
  double label_prop;       /* label propagation (SuperGCN): this fraction of the training nodes
                              (drawn by seed and node id) adds a learned embedding of its label
                              to its input features and leaves the loss; 0 (default) off. Not
                              with residual or learn_features */
  const char *task;        /* "multiclass" (one class per node, softmax cross-entropy) or
                              "multilabel" (0/1 targets per task, sigmoid binary
                              cross-entropy); NULL: from the data (multilabel exactly when it
                              has multi-label targets, fg_dataset_num_tasks > 0) */
  const char *metric;      /* what picks the best epoch and fills train/valid/test_acc:
                              "accuracy", "rocauc" (multiclass: 2 classes only) or "f1-micro";
                              NULL: accuracy for multiclass, rocauc for multilabel */
  const char *calibration_path; /* auto choices: fitted machine coefficients (fullgraph bench
                                   --calibrate); NULL = built-in defaults */
  int ranks_per_node;      /* auto choices: ranks sharing a node (0 = all) */
  const char *reorder;     /* serial: vertex order for locality, applied once before training
                              and invisible in outputs: "none" (default), "degree", "rcm" */
  double mem_limit;        /* bytes a process may use, checked before allocating; 0 = the
                              machine's available memory (shared by the ranks on a node);
                              < 0 = no check */
  const char *metrics_path;     /* JSON lines, or NULL */
  const char *checkpoint_path;  /* a file, or a directory ending in '/' for a sharded
                                   checkpoint (each rank writes its own shards), or NULL */
  int checkpoint_every;         /* epochs between checkpoints (default 0 = only at end) */
  const char *resume_path;      /* a checkpoint file, or a sharded checkpoint's directory
                                   (one holding a manifest), or NULL */
  const char *predictions_path; /* .npy of N x C logits (float32), or NULL */
  const char *embeddings_path;  /* .npy of N x hidden (last hidden layer), or NULL */
  int verbose;             /* 0 quiet, 1 per-epoch lines, 2 more */
  int progress;            /* one-line progress display (for terminals) */
  FILE *log;               /* where epoch lines go (default stdout) */
  double *loss_history;    /* optional (epochs entries): training loss of each epoch, filled
                              on every rank (entries before a resumed epoch are untouched) */
  /* Outputs in the caller's memory (each optional; NULL: not filled). Give each on every rank
   * or on none (fg_train fails otherwise): all are filled on every rank. */
  struct fg_epoch_record *history; /* (epochs entries) each epoch's metrics, as --metrics
                              writes them (entries before a resumed epoch are untouched) */
  float *predictions_out;  /* (N x C) the final model's logits in node order, as
                              predictions_path (C: fg_train_output_widths) */
  float *embeddings_out;   /* (N x H) its last hidden layer in node order, as embeddings_path
                              (H: fg_train_output_widths; needs layers >= 2) */
  /* provenance, for the run record only (fg_last_run_record): the dataset's path as given (NULL:
   * unknown, recorded as null) and the command line that started the run (argc entries; 0 and
   * NULL: unknown, recorded as []). The CLI passes its whole argv ("fullgraph", "train", ...). */
  const char *dataset_path;
  int argc;
  const char *const *argv;
  double load_seconds;     /* wall seconds the caller spent loading the dataset before fg_train
                              (the CLI's fg_dataset_load under its agreement), recorded beside
                              fg_train's own setup ("setup" in the run record; 0: not measured) */
} fg_train_config;

/* One epoch of fg_train_config.history: the values of --metrics' record (same rounding: none,
 * they are the doubles it prints with %.9g / %.6f). */
typedef struct fg_epoch_record {
  double loss;             /* mean training loss */
  double train_acc, valid_acc, test_acc;
  double valid_loss;       /* mean loss over the validation nodes (evaluation mode) */
  double seconds;          /* the epoch's wall time (the slowest rank's) */
} fg_epoch_record;

fg_train_config fg_train_config_default(void);

/* A configuration for bindings that do not mirror fg_train_config's layout: allocated with the
 * defaults, set by option name, freed with everything it holds. Not collective. */
fg_train_config *fg_train_config_create(void);
void fg_train_config_destroy(fg_train_config **cfg);
/* Set one option of a configuration made by fg_train_config_create (only those) from text: key
 * is the CLI flag without its dashes ("epochs", "hidden", "weight-decay" or "weight_decay",
 * "scheme", "grid", "widths" as "64,32", a flag as "1"/"0", "mem-limit" in bytes, "verbose",
 * ...; the README lists them). Strings are copied. FG_ERR_INVALID_ARG names an unknown key or
 * a value that does not parse; the values' ranges are checked by fg_train as always. */
fg_status fg_train_config_set(fg_train_config *cfg, const char *key, const char *value);
/* Point an output of a configuration at caller memory: key "history" (fg_epoch_record[epochs]),
 * "predictions" (float[N x C]), "embeddings" (float[N x H]) or "loss_history" (double[epochs]);
 * NULL unsets. */
fg_status fg_train_config_set_buffer(fg_train_config *cfg, const char *key, void *buffer);
/* Record the command line that started the run (argc strings, copied) in a configuration made
 * by fg_train_config_create, for the run record (fg_last_run_record): a binding passes its
 * interpreter's argv. argc 0 clears it. The dataset's path is the option "dataset-path". */
fg_status fg_train_config_set_command(fg_train_config *cfg, int argc, const char *const *argv);

typedef struct fg_train_result {
  int epochs_run;
  int best_epoch;        /* 1-based epoch of best validation accuracy */
  double best_valid_acc;
  double test_acc;       /* test accuracy at best_epoch */
  double final_loss;
  double final_train_acc, final_valid_acc, final_test_acc;
  double mean_epoch_seconds;
} fg_train_result;

/* Check cfg for a run on `ranks` processes before any data is read: every option's value and
 * combination, the scheme with its grid or replication, the vertex order, and the paths of its
 * outputs, checkpoint, resume and calibration files (fg_check_paths). FG_ERR_INVALID_ARG (or
 * FG_ERR_UNSUPPORTED) for a usage error, FG_ERR_IO for a path. fg_train runs the same checks.
 * Not collective. */
fg_status fg_train_config_check(const fg_train_config *cfg, int ranks);

/* fg_dataset_prepared_check (above) for --scheme auto on ranks processes with the run's
 * options cfg (its order, --double-perm, --replicate and the options that narrow the
 * candidates): some candidate must have a layout the row blocks form (1d, 1d-sa, halo: ranks
 * divide them; 1.5d: ranks / c does, for its c or some valid c; 3d: every dimension of some
 * grid of ranks), else refused naming the rank counts that fit. The performance model then
 * ranks only those, from the manifest (fg_comm_plan on a per-rank dataset). Not collective. */
fg_status fg_dataset_prepared_check_auto(const char *dir, const fg_train_config *cfg, int ranks);

/* Check cfg's --task and --metric against ds (what the data allows: fg_train refuses the
 * same): FG_ERR_INVALID_ARG for multiclass on multi-label targets, multilabel on one class per
 * node, rocauc of a multiclass task with other than 2 classes; FG_ERR_UNSUPPORTED for
 * label_prop with multi-label targets. The effective task and metric names (never NULL) into
 * *task and *metric when those are not NULL. Not collective. */
fg_status fg_train_task_check(const fg_dataset *ds, const fg_train_config *cfg,
                              const char **task, const char **metric);

/* Train a model (cfg->model) on ds. Collective over comm (MPI_COMM_SELF for one process).
 * FG_STOPPED when fg_request_stop asked it to stop early (see there). */
fg_status fg_train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *cfg,
                   fg_train_result *result);

/* fg_train over MPI_COMM_WORLD, for callers without MPI of their own (after fg_init): the one
 * entry point of the library that uses the world communicator. Collective over
 * MPI_COMM_WORLD; ds is read on rank 0 only (others may pass NULL). */
fg_status fg_train_world(const fg_dataset *ds, const fg_train_config *cfg,
                         fg_train_result *result);

/* The widths of fg_train's outputs for cfg on ds: *classes, the columns of predictions_out (the
 * dataset's classes), and *embedding, those of embeddings_out (the last hidden layer's: hidden,
 * or the last of widths; 0 when layers < 2). Not collective. */
fg_status fg_train_output_widths(const fg_dataset *ds, const fg_train_config *cfg,
                                 int64_t *classes, int64_t *embedding);

/* The run record of the last fg_train call in this process (on every rank): one line of JSON,
 * {"run": {...}}, naming the build (version, commit), the command line, every option's effective
 * value, the ranks, threads and hosts, the BLAS kernels and the dataset with its fingerprint
 * (README, "The metrics file"). fg_train writes it as a line of its metrics file, beside each
 * .npy it writes (fg_write_sidecar) and into its checkpoints. NULL before the first fg_train
 * and when fg_train failed before the record was made; valid until the next fg_train. */
const char *fg_last_run_record(void);
/* Write record (one JSON line) to NPY_PATH.json, replaced whole or not at all, when npy_path is
 * a regular file; a device, fifo or socket (/dev/null) gets no sidecar, and neither does a NULL
 * record (FG_OK both). Not collective. */
fg_status fg_write_sidecar(const char *npy_path, const char *record);

/* ---- memory budget ---------------------------------------------------------------------- */

/* What a one-process run (scheme serial) of cfg on ds holds at its peak, in bytes. */
typedef struct fg_memory_estimate {
  int64_t dataset;         /* the loaded dataset: pattern, features, labels, split */
  int64_t graph;           /* the scheme's normalized Â (and Âᵀ when not symmetric) */
  int64_t inputs;          /* the scheme's features (normalized copy), labels, split, node ids */
  int64_t activations;     /* the model's activation buffers */
  double activation_buffers; /* ... in units of nodes x hidden width floats */
  int64_t params;          /* parameters, gradients and both Adam moments */
  int64_t loss;            /* the loss gradient (nodes x classes) and the training mask */
  int64_t setup;           /* transient while laying out (reordering: the permuted copy) */
  int64_t total;           /* dataset + graph + inputs + max(setup, activations + params + loss) */
  int64_t hidden_width;    /* the width activation_buffers counts in */
} fg_memory_estimate;

fg_status fg_train_memory(const fg_dataset *ds, const fg_train_config *cfg,
                          fg_memory_estimate *out);
/* The machine's available memory (MemAvailable of /proc/meminfo), or -1 when unknown. */
int64_t fg_available_memory(void);

/* ---- communication volumes ------------------------------------------------------- */

typedef struct fg_comm_plan_config {
  int ranks;               /* processes P (default 1) */
  const char *scheme;      /* as fg_train_config.scheme (NULL: serial on 1 rank, 1d-sa else) */
  const char *order;       /* as fg_train_config.order (NULL = natural) */
  uint64_t seed;           /* as fg_train_config.seed (drives the random order and METIS) */
  int layers;              /* as fg_train_config (default 2) */
  int hidden;              /* (default 16) */
  const int *widths;       /* optional: layers-1 hidden widths, overrides hidden */
  fg_agg_order agg_order;  /* (default FG_AGG_AUTO) */
  const char *model, *adj_norm; /* as fg_train_config: the operator laid out (NULL: GCN's) */
  const char *aggregation, *quantize; /* halo, as fg_train_config */
  double label_prop;       /* as fg_train_config: layer 0's input gradient is aggregated too */
  int replicate;           /* 1.5d: c (0: 1) */
  const char *precision;   /* as fg_train_config.precision (NULL = fp32): under "bf16" the rows
                              1d, 1d-sa, 1.5d and halo exchange count 2 bytes an
                              element (1.5d's all-reduce of partial sums stays fp32) */
  struct fg_partition_stats *partition; /* optional out: the same layout's blocks (1.5d: its
                              P/c) as 1d-sa would send on them, and their balance */
} fg_comm_plan_config;

fg_comm_plan_config fg_comm_plan_config_default(void);

/* One rank's share of the layout and the feature rows its aggregations move. A broadcast to
 * the P-1 other ranks counts as P-1 messages sent by its root (the volume a direct algorithm
 * would send, whatever tree MPI uses). Loss, metric and gradient reductions are not included. */
typedef struct fg_comm_rank_plan {
  int64_t rows;            /* nodes (block rows of Â) held */
  int64_t nnz;             /* nonzeros of Â multiplied */
  int64_t agg_rows_sent, agg_rows_recv, agg_msgs_sent, agg_msgs_recv;     /* one Â·H */
  int64_t aggt_rows_sent, aggt_rows_recv, aggt_msgs_sent, aggt_msgs_recv; /* one Âᵀ·G */
  /* per training epoch as fg_train runs it (training forward, backward, evaluation forward):
   * index 0 = forward phase (both forwards), 1 = backward phase */
  int64_t bytes_sent[2], bytes_recv[2], msgs_sent[2], msgs_recv[2];
  /* of those bytes, the quantized rows' parameters (scale and zero point; halo --quantize) */
  int64_t param_bytes_sent[2], param_bytes_recv[2];
  /* halo: rows per forward aggregation under each rule (0 hybrid, 1 pre, 2 post), whichever
   * the configuration runs, to compare them */
  int64_t rule_rows_sent[3], rule_rows_recv[3];
  /* 1.5d: the replicas of the rank's block row (c; 1 otherwise), and of bytes_sent (and as many
   * of bytes_recv) per phase, the all-reduces of the partial sums over them (counted as fg_group
   * counts a ring: 2 (c-1)/c of each aggregation's rows x width floats, one message) */
  int replicas;
  int64_t replica_bytes[2];
} fg_comm_rank_plan;

/* Lay ds out as fg_train would on cfg->ranks processes and count every rank's aggregation
 * traffic from the partition alone. per_rank has cfg->ranks entries; *cut_entries (may be
 * NULL) gets the nonzeros of Â outside the diagonal blocks. Not collective: it makes no MPI
 * call of its own, except that cfg->order "hypergraph" runs Zoltan on MPI_COMM_SELF, which
 * needs MPI initialised (and not finalized) by the caller; the other orders need no MPI. */
fg_status fg_comm_plan(const fg_dataset *ds, const fg_comm_plan_config *cfg,
                       fg_comm_rank_plan *per_rank, int64_t *cut_entries);

/* What fg_comm_plan lays out for cfg: the scheme (static name), the vertex order (the one
 * given, else the scheme's default: metis for halo when this build has METIS; NULL natural),
 * and whether its volume is the halo exchange's, whose rows per rule (rule_rows_*) it fills. */
typedef struct fg_comm_plan_layout {
  const char *scheme, *order;
  int halo;
} fg_comm_plan_layout;
fg_status fg_comm_plan_describe(const fg_comm_plan_config *cfg, fg_comm_plan_layout *out);

/* ---- partitions: total and maximum volume (SA paper, table 2) ----------------------- */

/* A 1D layout's rows per aggregation Â·H under 1d-sa (rows of H a part sends to the parts
 * that reference them, once per referencing part) and its computational balance. */
typedef struct fg_partition_stats {
  int parts;
  int64_t total;              /* rows sent by all parts (= the column-net connectivity-1 cut) */
  int64_t max_send, max_recv; /* the largest part's rows sent / received */
  double send_imbalance;      /* max_send / (total / parts) (1 when nothing is sent) */
  double recv_imbalance;      /* max_recv / (total / parts) */
  int64_t max_rows, max_nnz;  /* the largest part's rows and nonzeros of Â */
  double row_balance;         /* max_rows / mean rows */
  double nnz_balance;         /* max_nnz / mean nonzeros */
  double order_seconds;       /* time to compute the order (fg_partition_summarize) */
} fg_partition_stats;

/* Lay ds out on `ranks` blocks in `order` (NULL natural; as fg_train_config.order, seeded by
 * seed) for GCN's Â and fill out. Not collective; `hypergraph` needs MPI initialised. */
fg_status fg_partition_summarize(const fg_dataset *ds, int ranks, const char *order,
                                 uint64_t seed, fg_partition_stats *out);
/* 1 when this build computes the order `name` (metis and volume need METIS, hypergraph
 * Zoltan). */
int fg_order_is_available(const char *name);

/* ---- 3D scheme: adjacency shards ------------------------------------------------------ */

/* Load balance of the adjacency pattern cut into rows x cols balanced blocks: the maximum over
 * the mean of the blocks' nonzeros in the original order (out[0]), after one random permutation
 * P A Pᵀ (out[1], --order random) and after the double permutation P_r A P_cᵀ (out[2],
 * --double-perm; the larger of its two versions), with the permutations training with this
 * seed draws. Not collective. */
fg_status fg_shard_balance(const fg_dataset *ds, int rows, int cols, uint64_t seed,
                           double out[3]);

/* ---- performance model: fullgraph plan, --grid auto, --scheme auto ---------------------- */

/* Machine coefficients of the model (Plexus section 4, fitted on this machine). */
typedef struct fg_calibration {
  /* SpMM seconds = spmm[0] nnz f + spmm[1] nnz lines(cache_bytes) + spmm[2] nnz
   * lines(llc_bytes) + spmm[3] nnz + spmm[4] rows f + spmm[5] cols f for a sparse rows x cols
   * matrix with nnz nonzeros times a dense cols x f matrix, where lines(C) = ceil(f / 16)
   * (1 - C / x) are the 64-byte lines a nonzero fetches from beyond a cache of C bytes when
   * the dense input's x = 64 ceil(f / 16) cols bytes exceed it (else 0) */
  double spmm[6];
  double cache_bytes;              /* private cache per rank (L2 per core times threads) */
  double llc_bytes;                /* a rank's share of the last-level cache */
  double gemm_flops;               /* GEMM rate, flop/s */
  double gemm_flops_bf16;          /* the same products under --precision bf16, flop/s: operands
                                      rounded to bf16 as the model rounds them, fp32 sums, on the
                                      bf16 path in force (a file without it: gemm_flops) */
  double stream_bytes;             /* elementwise bandwidth, bytes/s */
  double dropout_elem;             /* seconds per element of a dropout pass (a hash per 4) */
  double softmax_elem;             /* seconds per element of a softmax pass (an exp each) */
  /* a ring collective over G ranks costs alpha per step plus beta per byte moved by a rank:
   * all-reduce of M bytes 2 (G-1) alpha + 2 beta M (G-1)/G; all-gather and reduce-scatter of
   * M bytes in all (G-1) alpha + beta M (G-1)/G */
  double alpha_intra, beta_intra;  /* ranks of one node (seconds, seconds per byte) */
  double alpha_inter, beta_inter;  /* across nodes */
  int threads, ranks, ranks_per_node; /* what the calibration ran with (0 = defaults) */
} fg_calibration;

/* Built-in coefficients (a typical x86 node); `fullgraph bench --calibrate` measures real ones. */
fg_calibration fg_calibration_default(void);
/* The GEMM rate the model predicts with: gemm_flops_bf16 under bf16 (nonzero), else gemm_flops. */
double fg_calibration_gemm_rate(const fg_calibration *c, int bf16);
/* Text file of "key value" lines (see the README); errors name the line. */
fg_status fg_calibration_read(const char *path, fg_calibration *c);
fg_status fg_calibration_write(const char *path, const fg_calibration *c);
/* Collective over comm: every rank multiplies sparse matrices of several shapes at once (so a
 * job with more ranks than cores measures the contention it will see), GEMMs, the STREAM triad
 * and ring all-reduces over groups of 2..P ranks (across nodes too when P > ranks_per_node > 0);
 * least squares fit the coefficients. log (rank 0, may be NULL) gets the measurements. */
fg_status fg_calibrate(MPI_Comm comm, int ranks_per_node, fg_calibration *out, FILE *log);

typedef struct fg_plan_config {
  int ranks;               /* P */
  int ranks_per_node;      /* 0 = every rank on one node */
  int layers, hidden;      /* as fg_train_config (2, 16) */
  const int *widths;
  const char *model;       /* as fg_train_config ("gcn", "sage", "gin"; NULL gcn) */
  const char *adj_norm;    /* as fg_train_config (NULL: the model's) */
  const char *norm;        /* as fg_train_config (NULL: none) */
  int residual;            /* as fg_train_config */
  const char *gin_eps;     /* as fg_train_config (a learned epsilon changes what bf16 stores) */
  fg_agg_order agg_order;  /* 1D schemes (3d aggregates first) */
  int overlap;             /* 1d: --overlap, whose memory is a second broadcast buffer and the
                              own stage's product (fg_train_config's) */
  const char *order;       /* natural (default), random; metis for the 1D schemes */
  int double_perm, learn_features, agg_blocks; /* 3d, as fg_train_config */
  const char *aggregation, *quantize; /* halo, as fg_train_config */
  double label_prop;       /* as fg_train_config */
  int replicate;           /* 1.5d: this c alone (0: every valid c) */
  const char *precision;   /* as fg_train_config ("fp32", NULL, or "bf16"): rows that cross
                              ranks as bf16 count 2 bytes an element */
  uint64_t seed;
  double mem_per_rank;     /* bytes a rank may use; 0 = this machine's available memory divided
                              by the ranks on a node; < 0 = no limit */
  const char *schemes;     /* which schemes to rank: a comma list of names (NULL: every scheme
                              that can run the options given) */
  const int *only_grid;    /* 3d: this X x Y x Z grid alone (NULL: every grid of ranks) */
} fg_plan_config;

fg_plan_config fg_plan_config_default(void);

typedef struct fg_plan_entry {
  const char *scheme;      /* the scheme's name ("3d", "1d", "1d-sa", "serial"; static) */
  int grid[3];             /* a grid scheme's X, Y, Z (0 for the others) */
  int replicate;           /* 1.5d's c (0 for the others) */
  double seconds;          /* predicted epoch (training forward, backward, evaluation forward) */
  double spmm_seconds, gemm_seconds, comm_seconds, other_seconds;
  double mem_bytes;        /* the largest rank's */
  double max_nnz, mean_nnz; /* nonzeros a rank multiplies per SpMM: the busiest and the mean */
  int fits;                /* mem_bytes within the limit */
} fg_plan_entry;

/* Predict every configuration of cfg->ranks ranks (each 3D grid X x Y x Z, and 1d, 1d-sa) for
 * ds: *out (malloc'd; release with free) gets *count entries, those that fit first, each group
 * fastest first. Not collective; no MPI, except that cfg->order "hypergraph" runs Zoltan on
 * MPI_COMM_SELF (fg_comm_plan), which needs MPI initialised by the caller. */
fg_status fg_plan(const fg_dataset *ds, const fg_plan_config *cfg, const fg_calibration *cal,
                  fg_plan_entry **out, int *count);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif /* FULLGRAPH_H */
