/* test_multilabel.c -- multi-label training (--task multilabel: sigmoid binary cross-entropy,
 * targets scattered to every scheme's rows) and the metrics that need a global ranking, under
 * every scheme at P ranks against one process. Run under mpiexec with any number of ranks.
 *
 * Data: the R-MAT graph of scale 8 (256 nodes, 20 features) with 4 binary tasks derived from
 * its 5 degree classes, a tenth of the targets missing; and the same graph with 2 classes for
 * multiclass ROC-AUC (log softmax of class 1: 3d may hold the two logits on different ranks).
 * Each configuration trains 20 epochs with dropout; every epoch's loss must be the one-process
 * serial run's within a relative 1e-6 and the final train/valid/test metric within 1e-6 (a
 * ranking or a threshold of logits equal to float rounding). A checkpoint at epoch 10 resumed to
 * 20 gives the uninterrupted losses; resuming with another --metric or --task is refused. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fg_rng.h"
#include "plan/fg_registry.h"
#include "test_data.h"
#include "testutil.h"

#define EPOCHS 20
#define TOL 1e-6
#define T 4

static int rank, nprocs;

/* The dataset with T tasks (multi = 1) or with 2 classes (multi = 0), on rank 0. */
static fg_dataset *make_data(int multi) {
  fg_dataset *ds = NULL;
  if (rank != 0) return NULL;
  if (test_data_make(TEST_DATA_RMAT8, &ds) != FG_OK) {
    fprintf(stderr, "test data: %s\n", fg_last_error());
    exit(1);
  }
  const int64_t n = ds->num_nodes;
  if (!multi) {
    for (int64_t v = 0; v < n; v++) ds->labels[v] %= 2;
    ds->num_classes = 2;
    return ds;
  }
  ds->targets = malloc((size_t)(n * T));
  if (!ds->targets) exit(2);
  for (int64_t v = 0; v < n; v++)
    for (int t = 0; t < T; t++) {
      const int c = ds->labels[v];
      const double u = fg_rng_uniform_d(3, 77, (uint64_t)v, (uint64_t)t, 0, 0);
      /* a community rule with some noise, a tenth missing */
      int y = ((c + t) % 3 == 0) ^ (u < 0.1);
      ds->targets[v * T + t] = (int8_t)(u > 0.9 ? -1 : y);
    }
  free(ds->labels);
  ds->labels = NULL;
  ds->num_tasks = T;
  ds->num_classes = T;
  return ds;
}

static fg_train_config config(const char *scheme, const char *grid, int replicate,
                              const char *metric, double *hist) {
  fg_train_config c = fg_train_config_default();
  c.epochs = EPOCHS;
  c.layers = 2;
  c.hidden = 6;
  c.dropout = 0.5;
  c.seed = 11;
  c.verbose = 0;
  c.scheme = scheme;
  c.grid = grid;
  c.replicate = replicate;
  c.metric = metric;
  c.loss_history = hist;
  return c;
}

typedef struct reference {
  double hist[EPOCHS];
  fg_train_result res;
} reference;

static void make_reference(const fg_dataset *ds, fg_train_config c, reference *ref) {
  fg_status st = FG_OK;
  memset(ref, 0, sizeof *ref);
  if (rank == 0) {
    c.scheme = "serial";
    c.grid = NULL;
    c.replicate = 0;
    c.loss_history = ref->hist;
    st = fg_train(MPI_COMM_SELF, ds, &c, &ref->res);
  }
  MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_MSG(st == FG_OK, "reference run failed: %s", rank == 0 ? fg_last_error() : "");
  MPI_Bcast(ref, (int)sizeof *ref, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static double worst_rel(const double *a, const double *b, int n) {
  double w = 0.0;
  for (int e = 0; e < n; e++) {
    const double rel = fabs(a[e] - b[e]) / fabs(b[e]);
    if (!(rel <= w)) w = rel;
  }
  return w;
}

static void compare(const fg_dataset *ds, fg_train_config c, const reference *ref,
                    const char *what) {
  fg_train_result res;
  double hist[EPOCHS] = {0};
  c.loss_history = hist;
  const fg_status st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  EXPECT_MSG(st == FG_OK, "%s: %s", what, fg_last_error());
  if (st != FG_OK) return;
  const double w = worst_rel(hist, ref->hist, EPOCHS);
  const double dm = fmax(fabs(res.final_train_acc - ref->res.final_train_acc),
                         fmax(fabs(res.final_valid_acc - ref->res.final_valid_acc),
                              fabs(res.final_test_acc - ref->res.final_test_acc)));
  EXPECT_MSG(w <= TOL, "%s: loss differs from one process by %.3g", what, w);
  EXPECT_MSG(dm <= TOL, "%s: metric %.6f/%.6f/%.6f, one process %.6f/%.6f/%.6f", what,
             res.final_train_acc, res.final_valid_acc, res.final_test_acc,
             ref->res.final_train_acc, ref->res.final_valid_acc, ref->res.final_test_acc);
  EXPECT(res.best_epoch == ref->res.best_epoch);
  if (rank == 0)
    printf("P=%d %-40s loss diff %.2e, metric diff %.2e, final %.4f/%.4f/%.4f\n", nprocs, what,
           w, dm, res.final_train_acc, res.final_valid_acc, res.final_test_acc);
}

static int runs_here(const char *scheme) {
  const fg_scheme_info *e = fg_scheme_lookup(scheme);
  return e && (e->max_ranks == 0 || nprocs <= e->max_ranks);
}

/* Every scheme (3d on two grids of P; the logits' columns are cut along Z, so a grid with Z >
 * 1 splits the tasks, and the 2 classes' logits, over ranks) with `metric`. */
static void sweep(const fg_dataset *ds, const char *metric, const char *data) {
  static const char *const grids[9][2] = {{"1x1x1", NULL},     {"1x2x1", "1x1x2"},
                                          {"1x1x3", "3x1x1"},  {"2x2x1", "1x2x2"},
                                          {"1x5x1", "5x1x1"},  {"1x2x3", "3x2x1"},
                                          {"1x7x1", "7x1x1"},  {"2x2x2", "1x4x2"},
                                          {"3x3x1", NULL}};
  static const char *const schemes[] = {"serial", "1d", "1d-sa", "1.5d", "halo"};
  reference ref;
  char what[160];
  make_reference(ds, config("serial", NULL, 0, metric, NULL), &ref);
  if (rank == 0)
    printf("P=%d %s %s one process: final %.4f/%.4f/%.4f\n", nprocs, data, metric,
           ref.res.final_train_acc, ref.res.final_valid_acc, ref.res.final_test_acc);
  for (size_t k = 0; k < sizeof schemes / sizeof *schemes; k++) {
    if (!runs_here(schemes[k])) continue;
    const int c = strcmp(schemes[k], "1.5d") == 0 ? fg_replicate_valid(nprocs, NULL, 0) > 1 ? 2 : 1 : 0;
    snprintf(what, sizeof what, "%s %s %s", data, metric, schemes[k]);
    compare(ds, config(schemes[k], NULL, c, metric, NULL), &ref, what);
  }
  for (int g = 0; g < 2 && nprocs <= 9; g++) {
    const char *grid = grids[nprocs - 1][g];
    if (!grid) continue;
    snprintf(what, sizeof what, "%s %s 3d %s", data, metric, grid);
    compare(ds, config("3d", grid, 0, metric, NULL), &ref, what);
  }
}

/* A checkpoint at epoch 10 resumed to 20 equals the run through; another --metric or --task
 * is refused on resuming. */
static void resume(const fg_dataset *ds, const char *dir) {
  char ck[600];
  double full[EPOCHS] = {0}, part[EPOCHS] = {0};
  fg_train_result res;
  snprintf(ck, sizeof ck, "%s/ml.ckpt", dir);
  fg_train_config c = config("1d-sa", NULL, 0, NULL, full);
  const fg_dataset *mine = rank == 0 ? ds : NULL;
  if (!runs_here("1d-sa")) c.scheme = "serial";
  EXPECT_OK(fg_train(MPI_COMM_WORLD, mine, &c, &res));
  c.loss_history = part;
  c.epochs = 10;
  c.checkpoint_path = ck;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, mine, &c, &res));
  c.epochs = EPOCHS;
  c.checkpoint_path = NULL;
  c.resume_path = ck;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, mine, &c, &res));
  EXPECT_MSG(worst_rel(part, full, EPOCHS) == 0.0, "resumed losses differ by %.3g",
             worst_rel(part, full, EPOCHS));
  c.metric = "f1-micro";
  EXPECT(fg_train(MPI_COMM_WORLD, mine, &c, &res) == FG_ERR_INVALID_ARG &&
         (rank != 0 || fg_test_error_contains("--metric rocauc in the checkpoint (its best "
                                              "epoch was chosen by it), f1-micro in this run")));
}

int main(int argc, char **argv) {
  char dir[] = "/tmp/fg_ml_XXXXXX";
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (rank == 0 && !mkdtemp(dir)) exit(1);
  MPI_Bcast(dir, (int)sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
  fg_dataset *ml = make_data(1), *two = make_data(0);
  sweep(ml, "rocauc", "multilabel");
  sweep(ml, "f1-micro", "multilabel");
  sweep(ml, "accuracy", "multilabel");
  sweep(two, "rocauc", "2-class");
  resume(ml, dir);
  fg_dataset_destroy(&ml);
  fg_dataset_destroy(&two);
  if (rank == 0) {
    char ck[600];
    snprintf(ck, sizeof ck, "%s/ml.ckpt", dir);
    unlink(ck);
    rmdir(dir);
  }
  const int rc = fg_test_finish("test_multilabel");
  MPI_Finalize();
  return rc;
}
