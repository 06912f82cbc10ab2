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
  FG_ERR_REMOTE = -10      /* another rank failed; its message is reported */
} fg_status;

const char *fg_status_string(fg_status st);
/* Message of the last failure on this thread ("" if none). */
const char *fg_last_error(void);
/* Source location (file:line list) where the last failure was raised and passed. */
const char *fg_last_error_trace(void);
const char *fg_version_string(void);

/* Collective over comm: every rank passes its own status; all return the same one. When any
 * rank failed, its message (the lowest failing rank's) becomes fg_last_error() everywhere, so
 * the whole job can stop with it instead of hanging. */
fg_status fg_agree(MPI_Comm comm, fg_status local);

/* Set the number of OpenMP threads (no effect in a build without OpenMP). */
void fg_set_threads(int n);

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
} fg_load_config;

fg_load_config fg_load_config_default(void);

/* Read a dataset; the format is chosen by what the path holds:
 *   a directory with raw/ (OGB node-property layout), *.npz, *.npy (edge list E x 2),
 *   *.mtx[.gz] (Matrix Market), anything else as a SNAP edge list (plain or gzip).
 * Not collective: reads on the calling rank only. */
fg_status fg_dataset_load(const char *path, const fg_load_config *cfg, fg_dataset **out);
void fg_dataset_destroy(fg_dataset **ds);

int64_t fg_dataset_num_nodes(const fg_dataset *ds);
int64_t fg_dataset_num_edges(const fg_dataset *ds); /* stored adjacency entries */
int64_t fg_dataset_num_features(const fg_dataset *ds);
int64_t fg_dataset_num_classes(const fg_dataset *ds);
/* Count of nodes in split k (0 train, 1 valid, 2 test). */
int64_t fg_dataset_split_size(const fg_dataset *ds, int k);

/* Print sizes, degree statistics, label and split counts. */
fg_status fg_dataset_print_info(const fg_dataset *ds, FILE *out);

/* ---- generators -------------------------------------------------------- */

/* Graph500 R-MAT (a=0.57, b=c=0.19) with 2^scale nodes and edge_factor * 2^scale
 * edges, written as a SNAP edge list (gzip if path ends in .gz). */
fg_status fg_generate_rmat(int scale, int edge_factor, uint64_t seed, const char *path);

/* ---- measurements -------------------------------------------------------- */

/* STREAM triad a = b + s c over three arrays of n floats with the current OpenMP threads; returns
 * the best of reps runs in bytes per second (12 n bytes a run), or a negative value when the
 * arrays cannot be allocated. */
double fg_bench_stream_triad(int64_t n, int reps);

/* ---- training -------------------------------------------------------------- */

typedef enum fg_weight_decay_layers { FG_WD_FIRST = 0, FG_WD_ALL = 1 } fg_weight_decay_layers;
typedef enum fg_agg_order { FG_AGG_AUTO = 0, FG_AGG_FIRST = 1, FG_AGG_LAST = 2 } fg_agg_order;

typedef struct fg_train_config {
  int epochs;              /* total epochs (a resumed run continues up to this) */
  int layers;              /* GCN layers (default 2) */
  int hidden;              /* width of every hidden layer (default 16) */
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
  const char *calibration_path; /* auto choices: fitted machine coefficients (fullgraph bench
                                   --calibrate); NULL = built-in defaults */
  int ranks_per_node;      /* auto choices: ranks sharing a node (0 = all) */
  const char *metrics_path;     /* JSON lines, or NULL */
  const char *checkpoint_path;  /* or NULL */
  int checkpoint_every;         /* epochs between checkpoints (default 0 = only at end) */
  const char *resume_path;      /* or NULL */
  const char *predictions_path; /* .npy of N x C logits (float32), or NULL */
  const char *embeddings_path;  /* .npy of N x hidden (last hidden layer), or NULL */
  int verbose;             /* 0 quiet, 1 per-epoch lines, 2 more */
  int progress;            /* one-line progress display (for terminals) */
  FILE *log;               /* where epoch lines go (default stdout) */
  double *loss_history;    /* optional (epochs entries): training loss of each epoch, filled
                              on every rank (entries before a resumed epoch are untouched) */
} fg_train_config;

fg_train_config fg_train_config_default(void);

typedef struct fg_train_result {
  int epochs_run;
  int best_epoch;        /* 1-based epoch of best validation accuracy */
  double best_valid_acc;
  double test_acc;       /* test accuracy at best_epoch */
  double final_loss;
  double final_train_acc, final_valid_acc, final_test_acc;
  double mean_epoch_seconds;
} fg_train_result;

/* Train a GCN on ds. Collective over comm (MPI_COMM_SELF for one process). */
fg_status fg_train(MPI_Comm comm, const fg_dataset *ds, const fg_train_config *cfg,
                   fg_train_result *result);

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
} fg_comm_rank_plan;

/* Lay ds out as fg_train would on cfg->ranks processes and count every rank's aggregation
 * traffic from the partition alone. per_rank has cfg->ranks entries; *cut_entries (may be
 * NULL) gets the nonzeros of Â outside the diagonal blocks. Not collective; no MPI. */
fg_status fg_comm_plan(const fg_dataset *ds, const fg_comm_plan_config *cfg,
                       fg_comm_rank_plan *per_rank, int64_t *cut_entries);

#ifdef __cplusplus
}
#endif
#endif /* FULLGRAPH_H */
