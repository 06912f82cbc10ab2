/* test_equivalence.c -- run under mpiexec with any number of ranks P: every scheme against one
 * process, in one launch.
 *
 * A table of configurations (dataset, scheme, order, overlap, permutation, blocked
 * aggregation, learned features, depth, model, operator, norm; a grid scheme runs on every grid
 * of P, a model row on every third, staggered) trains EPOCHS = 10 epochs
 * with dropout 0.5; every epoch's loss must be the one-process serial run's (rank 0 on
 * MPI_COMM_SELF) within a relative 1e-6, and the final accuracies equal. Learned features are
 * compared against the 3d scheme on one rank (the serial scheme does not learn features). Rows
 * that cannot run on P ranks (serial on more than one) are skipped; a later scheme or model
 * option is a new row.
 *
 * Besides the table, for every scheme that runs on P: a checkpoint at epoch 5 resumed to 10 is
 * bitwise equal to the uninterrupted run, and a one-process serial run resumes the same
 * checkpoint within 1e-6; overlap changes no bit; a repeated run is bitwise equal (losses and
 * saved predictions); a grid scheme's predictions equal serial's; --grid auto and --scheme auto
 * train like any other configuration; bad grids fail with the same message on every rank. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "plan/fg_registry.h"
#include "schemes/fg_grid3d.h"
#include "test_data.h"
#include "testutil.h"

/* Every epoch runs the same code (only the dropout masks and Adam's step change), and the
 * time is nearly all epochs: 10, not 20, halves the sweep (its P = 1 went from 52 s to 27 s). */
#define EPOCHS 10
#define HALF (EPOCHS / 2) /* where a checkpoint is taken and resumed */
#define TOL 1e-6

static int rank, nprocs;
static char tmpdir[512];

typedef struct row {
  int data;             /* TEST_DATA_* */
  const char *scheme;
  const char *order;    /* NULL natural */
  int overlap, double_perm, agg_blocks, learn, layers;
  fg_agg_order agg_order;
  const char *model;    /* NULL gcn */
  const char *adj;      /* --adj-norm; NULL the model's */
  const char *norm;     /* --norm; NULL none */
  const char *gin_eps;  /* --gin-eps; NULL 0 */
  int residual;         /* --residual */
  const char *aggregation; /* halo: --aggregation; NULL hybrid */
} row;

/* The table. A grid scheme's row runs on every grid of P. */
static const row table[] = {
    /* 1D schemes: every order, with and without overlap, on an undirected graph, a directed
     * one (Âᵀ has its own plan) and a path with an empty block at P = 5 */
    {TEST_DATA_CORA, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1d", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1d-sa", "metis", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1d-sa", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", "metis", 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", NULL, 0, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "random", 1, 0, 1, 0, 3, FG_AGG_FIRST, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "metis", 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_TINY, "1d", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_TINY, "1d-sa", NULL, 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "serial", NULL, 0, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, NULL, NULL, 0, NULL},
    /* 3d: depths 2 to 4 (shards cycle after 3), the single and the double permutation, blocked
     * aggregation, learned features; uneven and empty blocks */
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 1, 1, 0, 4, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 0, 3, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 1, 2, 1, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 0, 1, 1, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_PATH5, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    /* GraphSAGE (two weight products, the self term through move_rows, a row-normalized Â
     * without self loops: its transpose is its own), and the other normalizations */
    {TEST_DATA_CORA, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1d-sa", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", "random", 1, 0, 1, 0, 3, FG_AGG_LAST, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "metis", 0, 0, 1, 0, 3, FG_AGG_FIRST, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", NULL, 1, 0, 1, 0, 2, FG_AGG_AUTO, "sage", "sum", NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, "mean", NULL, NULL, 0, NULL},
    {TEST_DATA_TINY, "1d-sa", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "serial", NULL, 0, 0, 1, 0, 3, FG_AGG_LAST, "sage", "sym", NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 2, 0, 4, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 3, 0, 2, FG_AGG_AUTO, "sage", "sum", NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 1, 1, 0, 3, FG_AGG_AUTO, NULL, "mean", NULL, NULL, 0, NULL},
    {TEST_DATA_PATH5, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    /* LayerNorm on the hidden layers: row statistics over 3d's column split */
    {TEST_DATA_CORA, "1d-sa", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, "layer", NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", NULL, 1, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, "layer", NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "metis", 0, 0, 1, 0, 3, FG_AGG_AUTO, "sage", NULL, "layer", NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 2, 0, 3, FG_AGG_AUTO, NULL, NULL, "layer", NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 1, 0, 4, FG_AGG_AUTO, "sage", NULL, "layer", NULL, 0, NULL},
    /* GIN: two stack layers a layer (the second a Linear: 3d moves its rows through the
     * identity's shard), a plain sum without self loops, epsilon fixed and learned (its
     * gradient summed over the distinct aggregated elements) */
    {TEST_DATA_CORA, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1d-sa", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, "learn", 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "metis", 0, 0, 1, 0, 3, FG_AGG_AUTO, "gin", "mean", "layer", "learn", 0, NULL},
    {TEST_DATA_TINY, "1d", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, "0.5", 0, NULL},
    {TEST_DATA_RMAT, "serial", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, "learn", 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", "mean", NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 2, 0, 2, FG_AGG_AUTO, "gin", "mean", NULL, "learn", 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, "layer", "learn", 0, NULL},
    {TEST_DATA_PATH5, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, "learn", 0, NULL},
    /* residual connections: a projection where the width changes (layer 0), the identity
     * where it does not; 3d moves R through every layer of the block (a GIN layer's two) and
     * regroups its columns */
    {TEST_DATA_CORA, "1d", "random", 1, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 1, NULL},
    {TEST_DATA_RMAT, "1d-sa", "metis", 0, 0, 1, 0, 3, FG_AGG_LAST, "sage", NULL, "layer", NULL, 1, NULL},
    {TEST_DATA_RMAT, "serial", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, "gin", "mean", NULL, "learn", 1, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 1, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 2, 0, 3, FG_AGG_AUTO, "sage", NULL, "layer", NULL, 1, NULL},
    /* (epsilon fixed here: learned, with residual sums, its gradient is a sum that nearly
     * cancels, and Adam turns its rounding into full steps of either sign after ~15 epochs at
     * some grids -- the one-process match holds to 1e-8 until then) */
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, "gin", "mean", NULL, NULL, 1, NULL},
    {TEST_DATA_PATH5, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 1, NULL},
    /* BatchNorm: column statistics over the distinct rows (1D: every rank's block; 3d: along c,
     * not over the replicas along b), empty blocks included */
    {TEST_DATA_CORA, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_CORA, "1d-sa", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d", "metis", 1, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, "sage", NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT, "serial", NULL, 0, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_TINY, "1d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 2, 0, 4, FG_AGG_AUTO, "sage", NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 1, 2, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_PATH5, "3d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_RMAT, "1d-sa", "random", 1, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, "batch", "learn", 0, NULL},
    {TEST_DATA_RMAT8, "3d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, "batch", "learn", 0, NULL},
    {TEST_DATA_CORA, "1d-sa", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, "sage", NULL, "batch", NULL, 1, NULL},
    {TEST_DATA_RMAT8, "3d", "random", 0, 1, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 1, NULL},
    /* halo (SuperGCN): each cut covered pre, post or hybrid; the transposed exchange of
     * backward (a directed R-MAT too); every model; an empty block at P = 5 (the path) */
    {TEST_DATA_CORA, "halo", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "halo", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, "pre"},
    {TEST_DATA_CORA, "halo", "metis", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, "post"},
    {TEST_DATA_RMAT, "halo", "metis", 0, 0, 1, 0, 3, FG_AGG_FIRST, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "halo", "natural", 0, 0, 1, 0, 3, FG_AGG_LAST, NULL, NULL, NULL, NULL, 0, "pre"},
    {TEST_DATA_RMAT, "halo", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, "post"},
    {TEST_DATA_TINY, "halo", "natural", 0, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_PATH5, "halo", "natural", 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, "pre"},
    {TEST_DATA_CORA, "halo", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "halo", "metis", 0, 0, 1, 0, 3, FG_AGG_AUTO, "sage", NULL, "layer", NULL, 0, "pre"},
    {TEST_DATA_RMAT, "halo", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", NULL, NULL, "learn", 0, NULL},
    {TEST_DATA_CORA, "halo", "metis", 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", "mean", "batch", NULL, 0, "post"},
    {TEST_DATA_RMAT, "halo", "random", 0, 0, 1, 0, 3, FG_AGG_LAST, "sage", NULL, "layer", NULL, 1, NULL},
    {TEST_DATA_CORA, "halo", "natural", 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, "batch", NULL, 1, "pre"},
    /* 1.5d (sparsity-aware, replicated block rows): every valid c of P (c = 1 where none
     * other is), the replicas' all-reduce forward and backward, a directed graph's Âᵀ plan,
     * BatchNorm's and the gradients' sums over distinct rows, an empty block (the path) */
    {TEST_DATA_CORA, "1.5d", "metis", 1, 0, 1, 0, 2, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_CORA, "1.5d", "random", 0, 0, 1, 0, 2, FG_AGG_AUTO, "gin", "mean", "batch", "learn", 0, NULL},
    {TEST_DATA_RMAT, "1.5d", NULL, 0, 0, 1, 0, 3, FG_AGG_FIRST, NULL, NULL, NULL, NULL, 0, NULL},
    {TEST_DATA_RMAT, "1.5d", "random", 1, 0, 1, 0, 3, FG_AGG_LAST, "sage", NULL, "layer", NULL, 1, NULL},
    {TEST_DATA_TINY, "1.5d", NULL, 0, 0, 1, 0, 2, FG_AGG_AUTO, "sage", NULL, "batch", NULL, 0, NULL},
    {TEST_DATA_PATH5, "1.5d", NULL, 0, 0, 1, 0, 3, FG_AGG_AUTO, NULL, NULL, NULL, NULL, 0, NULL},
};

enum { N_ROWS = (int)(sizeof table / sizeof table[0]) };

static fg_train_config base_config(double *history, int layers) {
  fg_train_config c = fg_train_config_default();
  c.epochs = EPOCHS;
  c.layers = layers;
  c.hidden = 6;
  c.dropout = 0.5;
  c.seed = 11;
  c.verbose = 0;
  c.loss_history = history;
  return c;
}

static fg_train_config row_config(const row *r, double *history) {
  fg_train_config c = base_config(history, r->layers);
  c.scheme = r->scheme;
  c.order = r->order;
  c.overlap = r->overlap;
  c.double_perm = r->double_perm;
  c.agg_blocks = r->agg_blocks;
  c.learn_features = r->learn;
  c.agg_order = r->agg_order;
  c.model = r->model;
  c.adj_norm = r->adj;
  c.norm = r->norm;
  c.gin_eps = r->gin_eps;
  c.residual = r->residual;
  c.aggregation = r->aggregation;
  return c;
}

static double worst_rel(const double *a, const double *b, int n) {
  double w = 0.0;
  for (int e = 0; e < n; e++) {
    const double rel = fabs(a[e] - b[e]) / fabs(b[e]);
    if (!(rel <= w)) w = rel; /* NaN propagates */
  }
  return w;
}

/* The one-process reference of a configuration, on rank 0, broadcast. */
typedef struct reference {
  double hist[EPOCHS];
  fg_train_result res;
} reference;

static void make_reference(const fg_dataset *ds, const fg_train_config *c, reference *ref) {
  fg_status st = FG_OK;
  memset(ref, 0, sizeof *ref);
  if (rank == 0) {
    fg_train_config one = *c;
    one.loss_history = ref->hist;
    st = fg_train(MPI_COMM_SELF, ds, &one, &ref->res);
  }
  MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_MSG(st == FG_OK, "reference run failed: %s", rank == 0 ? fg_last_error() : "");
  MPI_Bcast(ref, (int)sizeof *ref, MPI_BYTE, 0, MPI_COMM_WORLD);
}

/* Train c on every rank and compare with ref; the losses are returned in hist. */
static void compare(const fg_dataset *ds, fg_train_config c, const reference *ref,
                    const char *what, double *hist) {
  fg_train_result res;
  fg_status st;
  double w;
  memset(hist, 0, EPOCHS * sizeof *hist);
  c.loss_history = hist;
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT_MSG(st == FG_OK, "%s: %s", what, fg_last_error());
  if (st != FG_OK) return;
  w = worst_rel(hist, ref->hist, EPOCHS);
  EXPECT_MSG(w <= TOL, "%s: loss differs from one process by %.3g", what, w);
  EXPECT_MSG(res.final_train_acc == ref->res.final_train_acc &&
                 res.final_valid_acc == ref->res.final_valid_acc &&
                 res.final_test_acc == ref->res.final_test_acc,
             "%s: accuracies %.4f/%.4f/%.4f, one process %.4f/%.4f/%.4f", what,
             res.final_train_acc, res.final_valid_acc, res.final_test_acc,
             ref->res.final_train_acc, ref->res.final_valid_acc, ref->res.final_test_acc);
  if (rank == 0)
    printf("P=%d %-62s max rel loss diff %.2e, final loss %.6f\n", nprocs, what, w,
           hist[EPOCHS - 1]);
}

static int runs_here(const char *scheme) {
  const fg_scheme_info *e = fg_scheme_lookup(scheme);
  return e && (e->max_ranks == 0 || nprocs <= e->max_ranks);
}

static void describe(const row *r, const char *grid, char *buf, size_t len) {
  snprintf(buf, len, "%s%s%s%s%s%s%s%s %s %s%s%s %s%s%s%s L%d%s", r->model ? r->model : "gcn",
           r->gin_eps ? " eps " : "", r->gin_eps ? r->gin_eps : "", r->residual ? " +res" : "",
           r->adj ? " (" : "", r->adj ? r->adj : "", r->adj ? ")" : "",
           !r->norm ? "" : strcmp(r->norm, "batch") == 0 ? " +bn" : " +ln", test_data_name(r->data),
           r->scheme,
           grid ? " " : "", grid ? grid : "", r->order ? r->order : "default-order",
           r->overlap ? " overlap" : "", r->double_perm ? " double-perm" : "",
           r->learn ? " learned" : "", r->layers,
           r->agg_order == FG_AGG_LAST ? " agg-last" : r->agg_order == FG_AGG_FIRST ? " agg-first"
                                                                                    : "");
  if (r->agg_blocks > 1) {
    const size_t k = strlen(buf);
    snprintf(buf + k, len - k, " blocks %d", r->agg_blocks);
  }
  if (r->aggregation || strcmp(r->scheme, "halo") == 0) {
    const size_t k = strlen(buf);
    snprintf(buf + k, len - k, " %s", r->aggregation ? r->aggregation : "hybrid");
  }
}

static int same_name(const char *a, const char *b) {
  return a == b || (a && b && strcmp(a, b) == 0);
}

/* Two rows train the same one-process reference: depth, aggregation order, learned features,
 * model, operator, norm and GIN's epsilon. */
static int same_reference(const row *a, const row *b) {
  return a->layers == b->layers && a->agg_order == b->agg_order && a->learn == b->learn &&
         same_name(a->model, b->model) && same_name(a->adj, b->adj) &&
         same_name(a->norm, b->norm) && same_name(a->gin_eps, b->gin_eps) &&
         a->residual == b->residual;
}

/* Every row of the table on dataset `data`. Rows with the same reference share one one-process
 * run, wherever they are in the table. */
static void check_table(int data, const fg_dataset *ds) {
  int grids[64][3], reps[16], nr = 0, nref = 0;
  const int ng = fg_grid_enumerate(nprocs, grids, 64);
  static reference refs[N_ROWS]; /* the references made so far on this dataset */
  const row *owner[N_ROWS];      /* the row each was made for */
  /* 1.5d's replications c > 1, or c = 1 where none other is valid */
  nr = FG_MIN(fg_replicate_valid(nprocs, reps, 16), 16);
  if (nr > 1) memmove(reps, reps + 1, (size_t)--nr * sizeof *reps);
  for (int i = 0; i < N_ROWS; i++) {
    const row *r = &table[i];
    const fg_scheme_info *e = fg_scheme_lookup(r->scheme);
    fg_train_config c, rc;
    double hist[EPOCHS];
    char what[160], grid[32];
    const int runs = e->grid ? ng : e->replicate ? nr : 1;
    int k = 0;
    if (r->data != data || !runs_here(r->scheme)) continue;
    if (r->order && strcmp(r->order, "metis") == 0 && !test_have_metis()) continue;
    c = row_config(r, NULL);
    /* the reference: serial, or 3d on one rank for learned features */
    rc = base_config(NULL, r->layers);
    rc.agg_order = r->agg_order;
    rc.model = r->model;
    rc.adj_norm = r->adj;
    rc.norm = r->norm;
    rc.gin_eps = r->gin_eps;
    rc.residual = r->residual;
    rc.scheme = r->learn ? "3d" : "serial";
    if (r->learn) {
      rc.grid = "1x1x1";
      rc.learn_features = 1;
    }
    while (k < nref && !same_reference(owner[k], r)) k++;
    if (k == nref) {
      make_reference(ds, &rc, &refs[k]);
      owner[nref++] = r;
    }
    for (int gi = 0; gi < runs; gi++) {
      /* a model row (SAGE, another operator, a norm) takes every third grid, rows staggered
       * so that together they cover every grid: the suite stays within its time */
      if (e->grid && (r->model || r->adj || r->norm || r->residual) && ng > 2 &&
          (gi + i) % 3 != 0)
        continue;
      if (e->grid) {
        snprintf(grid, sizeof grid, "%dx%dx%d", grids[gi][0], grids[gi][1], grids[gi][2]);
        c.grid = grid;
      }
      if (e->replicate) {
        snprintf(grid, sizeof grid, "c=%d", reps[gi]);
        c.replicate = reps[gi];
      }
      describe(r, e->grid || e->replicate ? grid : NULL, what, sizeof what);
      compare(ds, c, &refs[k], what, hist);
      if (r->overlap) {
        /* overlap changes when messages move, not what is summed in which order */
        double plain[EPOCHS];
        fg_train_config c0 = c;
        fg_train_result res;
        c0.overlap = 0;
        c0.loss_history = plain;
        EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c0, &res));
        EXPECT_MSG(memcmp(plain, hist, sizeof plain) == 0, "%s: overlap changed the losses",
                   what);
      }
    }
  }
}

/* Read a whole file (rank 0). */
static char *slurp(const char *path, long *len) {
  FILE *f = fopen(path, "rb");
  char *buf = NULL;
  *len = -1;
  if (!f) return NULL;
  if (fseek(f, 0, SEEK_END) == 0) *len = ftell(f);
  rewind(f);
  if (*len >= 0) buf = malloc((size_t)*len + 1);
  if (buf && fread(buf, 1, (size_t)*len, f) != (size_t)*len) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  return buf;
}

/* Read a float32 .npy written by fg_npy_write_f32 (rank 0): the data after the header. */
static float *read_npy(const char *path, long *count) {
  long len = 0, off;
  char *buf = slurp(path, &len);
  float *out = NULL;
  *count = 0;
  if (!buf || len < 10) {
    free(buf);
    return NULL;
  }
  off = 10 + ((unsigned char)buf[8] | ((unsigned char)buf[9] << 8));
  *count = (len - off) / 4;
  out = malloc((size_t)(*count > 0 ? *count : 1) * sizeof *out);
  if (out && *count > 0) memcpy(out, buf + off, (size_t)*count * 4);
  free(buf);
  return out;
}

/* A grid of P for the single-grid checks: one that cuts two dimensions when P allows. */
static void some_grid(char *buf, size_t len) {
  int grids[64][3];
  const int ng = fg_grid_enumerate(nprocs, grids, 64);
  snprintf(buf, len, "%dx%dx%d", grids[ng / 2][0], grids[ng / 2][1], grids[ng / 2][2]);
}

/* c trained to epoch HALF with a checkpoint at ck, then resumed from it to EPOCHS; the losses
 * in hist (the resumed epochs from HALF on). */
static void train_resumed(const fg_dataset *ds, fg_train_config c, const char *ck, double *hist) {
  fg_train_result res;
  c.loss_history = hist;
  c.epochs = HALF;
  c.checkpoint_path = ck;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
  c.epochs = EPOCHS;
  c.checkpoint_path = NULL;
  c.resume_path = ck;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
}

/* Every scheme that runs on P, for a model: checkpoint at HALF, resume to EPOCHS, bit for bit; the
 * one-process serial run resumes the same file. */
static void check_resume(const fg_dataset *ds, const char *model, const char *norm,
                         const char *gin_eps, int residual) {
  char ck[600], grid[32];
  some_grid(grid, sizeof grid);
  snprintf(ck, sizeof ck, "%s/run.ckpt", tmpdir);
  for (int i = 0; i < fg_scheme_registry_size(); i++) {
    const fg_scheme_info *e = fg_scheme_registry_at(i);
    double h1[EPOCHS], h2[EPOCHS], h3[EPOCHS];
    fg_train_result res;
    fg_train_config c = base_config(h1, 3);
    if (!runs_here(e->name)) continue;
    c.scheme = e->name;
    c.model = model;
    c.norm = norm;
    c.gin_eps = gin_eps;
    c.residual = residual;
    if (e->grid) {
      c.grid = grid;
      c.double_perm = 1;
    } else if (e->options & FG_SOPT_ORDER_RANDOM) {
      c.order = "random";
    }
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    train_resumed(ds, c, ck, h2);
    EXPECT_MSG(memcmp(h1 + HALF, h2 + HALF, HALF * sizeof(double)) == 0,
               "%s: resume is not bitwise equal to an uninterrupted run", e->name);
    c = base_config(h3, 3);
    c.scheme = "serial";
    c.model = model;
    c.norm = norm;
    c.gin_eps = gin_eps;
    c.residual = residual;
    c.resume_path = ck;
    if (rank == 0) {
      EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &res));
      EXPECT_MSG(worst_rel(h3 + HALF, h1 + HALF, HALF) <= TOL,
                 "serial resume of a %s checkpoint differs by %.3g", e->name,
                 worst_rel(h3 + HALF, h1 + HALF, HALF));
      printf("P=%d resume %-4s%s%s %-6s bit for bit; serial resumes it within %.2e\n", nprocs,
             model ? model : "gcn", !norm ? "" : strcmp(norm, "batch") == 0 ? " +bn" : " +ln",
             residual ? " +res" : "", e->name,
             worst_rel(h3 + HALF, h1 + HALF, HALF));
      unlink(ck);
    }
  }
}

/* --label-prop: every scheme (the halo scheme under each rule, 3d on every grid) against one
 * process, GCN and SAGE, the label nodes the same at every P; a checkpoint of the embedding
 * resumes bit for bit (one scheme a model at each P, in turn). */
static void check_label_prop(const fg_dataset *ds) {
  static const char *const models[2] = {NULL, "sage"};
  char ck[600];
  snprintf(ck, sizeof ck, "%s/lp.ckpt", tmpdir);
  for (int mi = 0; mi < 2; mi++) {
    reference ref;
    fg_train_config c = base_config(NULL, 2);
    c.label_prop = 0.5;
    c.model = models[mi];
    c.scheme = "serial";
    make_reference(ds, &c, &ref);
    for (int i = 0; i < fg_scheme_registry_size(); i++) {
      const fg_scheme_info *e = fg_scheme_registry_at(i);
      double hist[EPOCHS], h2[EPOCHS];
      char what[160];
      if (!runs_here(e->name)) continue;
      c.scheme = e->name;
      c.order = e->options & FG_SOPT_ORDER_RANDOM ? "random" : NULL;
      c.loss_history = NULL;
      if (e->grid) { /* a grid with every dimension used where P allows, double permutation */
        char grid[32];
        some_grid(grid, sizeof grid);
        c.grid = grid;
        c.double_perm = 1;
        snprintf(what, sizeof what, "%s label-prop 0.5 3d %s double-perm",
                 models[mi] ? models[mi] : "gcn", grid);
        compare(ds, c, &ref, what, hist);
        c.grid = NULL; /* --grid auto, which the resume below runs too */
        c.double_perm = 0;
      }
      /* every rule for GCN, the hybrid for SAGE */
      for (int rule = 0; rule < (e->options & FG_SOPT_AGGREGATION && mi == 0 ? 3 : 1); rule++) {
        static const char *const rules[3] = {"hybrid", "pre", "post"};
        c.aggregation = e->options & FG_SOPT_AGGREGATION ? rules[rule] : NULL;
        snprintf(what, sizeof what, "%s label-prop 0.5 %s %s", models[mi] ? models[mi] : "gcn",
                 e->name, c.aggregation ? c.aggregation : e->grid ? "auto" : "");
        compare(ds, c, &ref, what, hist);
      }
      /* resume (the last rule's run): the embedding and its Adam moments are in the
       * checkpoint. One scheme a model at each P, taking turns with P (the embedding is a
       * parameter like any other: check_resume covers every scheme's checkpoints) */
      if ((i + mi) % fg_scheme_registry_size() == nprocs % fg_scheme_registry_size()) {
        train_resumed(ds, c, ck, h2);
        EXPECT_MSG(memcmp(hist + HALF, h2 + HALF, HALF * sizeof(double)) == 0,
                   "%s label-prop: resume is not bitwise equal to an uninterrupted run",
                   e->name);
      }
      c.aggregation = NULL;
      if (rank == 0) unlink(ck);
    }
  }
}

/* halo --quantize: the codes' stochastic rounding is keyed by (seed, epoch, message, row,
 * column), so a run repeats bit for bit and resumes from a checkpoint bit for bit; its losses
 * differ from float32's (the codes are on) by no more than the noise of their bits. (The
 * exchange gives the same bits at any thread count: test_scheme_ops. A whole run does not:
 * OpenBLAS's GEMM rounds differently at 1 and 2 threads, and a last-bit change can flip a
 * stochastic rounding.) */
static void check_quantized(const fg_dataset *ds) {
  static const char *const q[] = {"int2", "int4", "int8"};
  static const double noise[] = {0.3, 0.1, 0.02};
  double hf[EPOCHS], h1[EPOCHS], h2[EPOCHS], h3[EPOCHS];
  char ck[600];
  fg_train_result res;
  fg_train_config c = base_config(hf, 2);
  if (!runs_here("halo") || nprocs < 2) return;
  snprintf(ck, sizeof ck, "%s/quant.ckpt", tmpdir);
  c.scheme = "halo";
  c.order = "random";
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
  for (int k = 0; k < 3; k++) {
    double w;
    c.quantize = q[k];
    c.loss_history = h1;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    w = worst_rel(h1, hf, EPOCHS);
    EXPECT_MSG(w > 0 && w <= noise[k], "halo %s: losses differ from float32's by %.3g", q[k],
               w);
    if (k > 0) { /* int2's repeat and resume stand for the wider codes' */
      if (rank == 0)
        printf("P=%d halo %s: losses within %.2e of float32\n", nprocs, q[k], w);
      continue;
    }
    c.loss_history = h2;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    EXPECT_MSG(memcmp(h1, h2, sizeof h1) == 0, "halo %s: a repeated run differs", q[k]);
    train_resumed(ds, c, ck, h3);
    EXPECT_MSG(memcmp(h1 + HALF, h3 + HALF, HALF * sizeof(double)) == 0,
               "halo %s: resume is not bitwise equal to an uninterrupted run", q[k]);
    if (rank == 0) {
      printf("P=%d halo %s: repeated and resumed bit for bit; losses within %.2e of float32\n",
             nprocs, q[k], w);
      unlink(ck);
    }
  }
}

/* --precision bf16: every scheme that runs on P against one process in bf16. What may differ
 * is only where fp32 sums run in another order (stages, blocks, the gradient all-reduce), as in
 * fp32; but a sum rounded to bf16 afterwards (a GEMM or SpMM operand) can then round to the
 * neighbouring bf16 value, 2^-8 relative, when it lies within the reordering's few fp32 ulps
 * of a rounding boundary: a fraction of about k 2^-24 / 2^-8 = k 2^-16 of the elements for
 * sums of k terms (k <= a few hundred here: < 1 %), each off by at most 2^-8. So:
 *   - epoch 1 (the same initial weights, a forward and a backward): the loss within
 *     BF16_TOL1 = 2^-8 x 1 % ~ 4e-5 relative;
 *   - later epochs: the flipped elements change the gradients by the same small fraction,
 *     which Adam's normalized steps (at most lr = 0.01 a weight, m / sqrt(v) of a component
 *     near zero can change sign) carry into the weights: the losses within BF16_TOL = 2e-3
 *     relative, the bound for 20 epochs x 0.01 x the loss's sensitivity to a weight (<= 1
 *     here; EPOCHS = 10 is within it), and the final accuracies within 1 % (a handful of
 *     nodes whose logits tie within that).
 * And bf16 is in force: the serial bf16 losses are not fp32's. Rounding the operands moves
 * epoch 1's loss only ~5e-7 relative here (the errors average out over 2708 nodes), but the
 * EPOCHS epochs apart by more than BF16_APART. */
#define BF16_TOL1 4e-5
#define BF16_TOL 2e-3
#define BF16_APART 1e-5
static void check_bf16(const fg_dataset *ds) {
  static const char *const schemes[] = {"1d", "1d-sa", "halo", "1.5d", "3d"};
  reference ref;
  double hf[EPOCHS];
  fg_train_result res;
  fg_train_config c = base_config(NULL, 2);
  int grids[64][3];
  const int ng = fg_grid_enumerate(nprocs, grids, 64);
  const double t0 = MPI_Wtime();
  if (nprocs < 2) return;
  c.precision = "bf16";
  c.scheme = "serial";
  make_reference(ds, &c, &ref);
  {
    reference f32;
    fg_train_config f = c;
    f.precision = "fp32";
    make_reference(ds, &f, &f32);
    memcpy(hf, f32.hist, sizeof hf);
    EXPECT_MSG(worst_rel(hf, ref.hist, EPOCHS) > BF16_APART,
               "bf16: the losses are within %.3g of fp32's: is bf16 in force?",
               worst_rel(hf, ref.hist, EPOCHS));
    if (rank == 0)
      printf("P=%d bf16 serial: losses up to %.2e from fp32's\n", nprocs,
             worst_rel(hf, ref.hist, EPOCHS));
  }
  for (size_t k = 0; k < sizeof schemes / sizeof schemes[0]; k++) {
    double hist[EPOCHS], w, w1;
    char grid[32];
    c.scheme = schemes[k];
    c.overlap = strcmp(schemes[k], "1d") == 0;
    c.grid = NULL;
    if (strcmp(schemes[k], "3d") == 0) { /* the grid with the most dimensions cut */
      int best = 0, most = -1;
      for (int g = 0; g < ng && g < 64; g++) {
        const int cut = (grids[g][0] > 1) + (grids[g][1] > 1) + (grids[g][2] > 1);
        if (cut > most) most = cut, best = g;
      }
      snprintf(grid, sizeof grid, "%dx%dx%d", grids[best][0], grids[best][1], grids[best][2]);
      c.grid = grid;
    }
    c.loss_history = hist;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    w = worst_rel(hist, ref.hist, EPOCHS);
    w1 = fabs(hist[0] - ref.hist[0]) / fabs(ref.hist[0]);
    EXPECT_MSG(w1 <= BF16_TOL1, "bf16 %s: epoch 1's loss differs from one process by %.3g",
               schemes[k], w1);
    EXPECT_MSG(w <= BF16_TOL, "bf16 %s: loss differs from one process by %.3g", schemes[k], w);
    EXPECT_MSG(fabs(res.final_test_acc - ref.res.final_test_acc) <= 0.01 &&
                   fabs(res.final_valid_acc - ref.res.final_valid_acc) <= 0.01,
               "bf16 %s: accuracies valid %.4f test %.4f, one process %.4f %.4f", schemes[k],
               res.final_valid_acc, res.final_test_acc, ref.res.final_valid_acc,
               ref.res.final_test_acc);
    if (rank == 0)
      printf("P=%d bf16 %-6s%s%s epoch 1 rel diff %.2e, max %.2e, test acc %+.4f\n", nprocs,
             schemes[k], c.grid ? " " : "", c.grid ? c.grid : "", w1, w,
             res.final_test_acc - ref.res.final_test_acc);
  }
  if (rank == 0) printf("P=%d bf16 checks: %.1f s\n", nprocs, MPI_Wtime() - t0);
}

/* Two identical runs are bitwise identical (losses and predictions); a grid scheme's
 * predictions equal serial's. */
static void check_outputs(const fg_dataset *ds) {
  char p0[600], p1[600], p2[600], grid[32];
  double h1[EPOCHS], h2[EPOCHS];
  fg_train_result res;
  fg_train_config c = base_config(h1, 3);
  some_grid(grid, sizeof grid);
  snprintf(p0, sizeof p0, "%s/serial.npy", tmpdir);
  snprintf(p1, sizeof p1, "%s/pred1.npy", tmpdir);
  snprintf(p2, sizeof p2, "%s/pred2.npy", tmpdir);
  c.scheme = "serial";
  c.predictions_path = p0;
  if (rank == 0) EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &res));
  c.scheme = "1d-sa";
  c.order = test_have_metis() ? "metis" : "random";
  c.overlap = 1;
  c.predictions_path = p1;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
  c.loss_history = h2;
  c.predictions_path = p2;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
  EXPECT_MSG(memcmp(h1, h2, sizeof h2) == 0, "a repeated run changed the losses");
  if (rank == 0) {
    long l1, l2;
    char *b1 = slurp(p1, &l1), *b2 = slurp(p2, &l2);
    EXPECT_MSG(b1 && b2 && l1 == l2 && l1 > 0 && memcmp(b1, b2, (size_t)l1) == 0,
               "a repeated run changed the predictions");
    free(b1);
    free(b2);
  }
  /* 3d's logits, gathered in the original node order, are serial's */
  c = base_config(NULL, 3);
  c.scheme = "3d";
  c.grid = grid;
  c.double_perm = 1;
  c.predictions_path = p2;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
  if (rank == 0) {
    long n1 = 0, n2 = 0;
    float *a = read_npy(p0, &n1), *b = read_npy(p2, &n2);
    double worst = 0.0;
    EXPECT_MSG(a && b && n1 == n2 && n1 == fg_dataset_num_nodes(ds) * fg_dataset_num_classes(ds),
               "predictions: %ld and %ld values", n1, n2);
    for (long i = 0; a && b && n1 == n2 && i < n1; i++) {
      const double dlt = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)a[i]));
      if (!(dlt <= worst)) worst = dlt;
    }
    EXPECT_MSG(worst <= 1e-5, "3d predictions (grid %s) differ from serial by %.3g", grid, worst);
    printf("P=%d 3d %s predictions vs serial: max diff %.2e\n", nprocs, grid, worst);
    free(a);
    free(b);
    unlink(p0);
    unlink(p1);
    unlink(p2);
  }
}

/* The performance model's choices, and refusals with the same message on every rank. */
static void check_choices_and_errors(const fg_dataset *ds) {
  fg_train_result res;
  fg_status st;
  char gbuf[32];
  fg_train_config c = base_config(NULL, 3);
  if (nprocs == 4) {
    reference ref;
    double hist[EPOCHS];
    fg_train_config rc = base_config(NULL, 3);
    rc.scheme = "serial";
    make_reference(ds, &rc, &ref);
    c.scheme = "3d";
    c.grid = "auto";
    compare(ds, c, &ref, "rmat8 --scheme 3d --grid auto", hist);
    c.scheme = "auto";
    c.grid = NULL;
    compare(ds, c, &ref, "rmat8 --scheme auto", hist);
  }
  c = base_config(NULL, 2);
  c.scheme = "3d";
  snprintf(gbuf, sizeof gbuf, "%dx1x1", nprocs + 1);
  c.grid = gbuf;
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("but the job has"));
  c.grid = "2by2";
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("expected XxYxZ"));
  c.grid = NULL;
  c.agg_order = FG_AGG_LAST;
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("--scheme 3d does not take --agg-order last"));
  c = base_config(NULL, 2);
  c.scheme = "1d";
  c.double_perm = 1;
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("--scheme 1d does not take --double-perm (it is an option of: 3d)"));
  c.scheme = "auto";
  c.overlap = 1; /* 1D only, --double-perm 3d only: no scheme takes both */
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT(st == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("no scheme takes every option given"));
}

int main(int argc, char **argv) {
  int failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (rank == 0 && !test_have_metis())
    printf("note: no METIS in this build; --order metis not tested\n");
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/fg_equiv_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) tmpdir[0] = '\0';
  }
  MPI_Bcast(tmpdir, (int)sizeof tmpdir, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_MSG(tmpdir[0] != '\0', "cannot make a temporary directory");
  for (int data = 0; tmpdir[0] && data < TEST_DATA_COUNT; data++) {
    fg_dataset *ds = NULL;
    fg_status st = rank == 0 ? test_data_make(data, &ds) : FG_OK;
    st = fg_agree(MPI_COMM_WORLD, st);
    EXPECT_OK(st);
    if (st != FG_OK) continue;
    check_table(data, ds);
    if (data == TEST_DATA_RMAT8) {
      check_resume(ds, NULL, NULL, NULL, 0);
      check_resume(ds, "sage", "layer", NULL, 0);
      check_resume(ds, "gin", NULL, "learn", 1);
      check_resume(ds, NULL, "batch", NULL, 0);
      check_outputs(ds);
      check_choices_and_errors(ds);
    }
    if (data == TEST_DATA_CORA) check_quantized(ds);
    if (data == TEST_DATA_CORA) check_label_prop(ds);
    if (data == TEST_DATA_CORA) check_bf16(ds);
    if (0) {
    }
    fg_dataset_destroy(&ds);
  }
  if (rank == 0 && tmpdir[0]) rmdir(tmpdir);
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_equivalence");
}
