/* test_mpi3d_train.c -- run under mpiexec with P ranks: the 3D (Plexus) scheme on every grid
 * X x Y x Z = P.
 *
 * On a directed R-MAT graph (256 nodes, 20 features, 5 classes, hidden width 6, so width blocks
 * are uneven and, on grids with 8 along a dimension, some are empty) and on a 5-node path
 * (empty node blocks), 20 epochs with dropout 0.5 must give every epoch's loss of a one-process
 * serial run within a relative 1e-4, and the same final accuracies, for 2, 3 and 4 layers; the
 * same with the single and the double permutation, with blocked aggregation, and with learned
 * input features (against the 3d scheme on 1 x 1 x 1, as the serial model has no learned
 * features). Predictions saved by 3d equal serial's; a 3d checkpoint resumes bit for bit in 3d
 * and within 1e-4 in the serial scheme (it is in the serial layout); bad grids fail with a
 * message on every rank. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graph/fg_graph.h"
#include "io/fg_io.h"
#include "schemes/fg_scheme3d.h"
#include "testutil.h"

#define EPOCHS 20

static int rank, nprocs;

/* rank 0: which = 0 the R-MAT graph, 1 the path */
static fg_status make_data(int which, fg_dataset **out) {
  fg_status st = FG_OK;
  fg_dataset *ds = calloc(1, sizeof *ds);
  int64_t *src = NULL, *dst = NULL, m = 0, n;
  const int64_t F = which == 0 ? 20 : 3, C = which == 0 ? 5 : 2;
  *out = NULL;
  if (!ds) return FG_ERR_NOMEM;
  if (which == 0) {
    st = fg_rmat_edges(8, 8, 7, &src, &dst, &m);
    n = 256;
  } else {
    n = 5;
    m = 4;
    src = malloc(4 * sizeof *src);
    dst = malloc(4 * sizeof *dst);
    if (!src || !dst) st = FG_ERR_NOMEM;
    for (int i = 0; st == FG_OK && i < 4; i++) {
      src[i] = i;
      dst[i] = i + 1;
    }
  }
  ds->num_nodes = n;
  if (st == FG_OK) st = fg_csr_from_edges(n, src, dst, m, which == 1, 1, 1, &ds->adj);
  if (st == FG_OK) {
    ds->symmetric = fg_csr_is_symmetric(&ds->adj);
    ds->num_features = F;
    ds->num_classes = C;
    st = fg_generate_features(n, F, 5, &ds->features);
  }
  if (st == FG_OK) st = fg_generate_labels(&ds->adj, C, 5, &ds->labels);
  if (st == FG_OK) st = fg_generate_split(n, ds->labels, 0.5, 0.25, 5, &ds->split);
  if (st == FG_OK && which == 1) {
    const int8_t split[5] = {FG_SPLIT_TRAIN, FG_SPLIT_TRAIN, FG_SPLIT_VALID, FG_SPLIT_TEST,
                             FG_SPLIT_TRAIN};
    const int32_t labels[5] = {0, 1, 0, 1, 1};
    memcpy(ds->split, split, sizeof split);
    memcpy(ds->labels, labels, sizeof labels);
  }
  free(src);
  free(dst);
  if (st != FG_OK) fg_dataset_destroy(&ds);
  *out = ds;
  return st;
}

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

/* A reference run on rank 0 alone, broadcast to everyone. */
static void reference(const fg_dataset *ds, const fg_train_config *c, double *hist,
                      fg_train_result *res) {
  fg_status st = FG_OK;
  if (rank == 0) st = fg_train(MPI_COMM_SELF, ds, c, res);
  MPI_Bcast(&st, 1, MPI_INT, 0, MPI_COMM_WORLD);
  EXPECT_OK(st);
  MPI_Bcast(hist, EPOCHS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(res, (int)sizeof *res, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static double worst_rel(const double *a, const double *b, int n) {
  double w = 0.0;
  for (int e = 0; e < n; e++) {
    double rel = fabs(a[e] - b[e]) / fabs(b[e]);
    if (!(rel <= w)) w = rel; /* NaN propagates */
  }
  return w;
}

/* Train c on the world and compare with the reference. */
static void compare(const fg_dataset *ds, fg_train_config c, const double *ref,
                    const fg_train_result *rref, const char *what) {
  double hist[EPOCHS];
  fg_train_result res;
  fg_status st;
  double w;
  memset(hist, 0, sizeof hist);
  c.loss_history = hist;
  st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
  const char *grid = c.grid ? c.grid : "(auto)";
  EXPECT_MSG(st == FG_OK, "%s grid %s: %s", what, grid, fg_last_error());
  if (st != FG_OK) return;
  w = worst_rel(hist, ref, EPOCHS);
  EXPECT_MSG(w <= 1e-4, "%s grid %s, %d layers: loss differs from the reference by %.3g", what,
             grid, c.layers, w);
  EXPECT_MSG(res.final_train_acc == rref->final_train_acc &&
                 res.final_valid_acc == rref->final_valid_acc &&
                 res.final_test_acc == rref->final_test_acc,
             "%s grid %s, %d layers: accuracies %.4f/%.4f/%.4f, reference %.4f/%.4f/%.4f", what,
             grid, c.layers, res.final_train_acc, res.final_valid_acc, res.final_test_acc,
             rref->final_train_acc, rref->final_valid_acc, rref->final_test_acc);
  if (rank == 0)
    printf("P=%d %-9s %-28s %d layers: max rel loss diff %.2e, final loss %.6f\n", nprocs, grid,
           what, c.layers, w, hist[EPOCHS - 1]);
}

/* Read a float32 .npy written by fg_npy_write_f32 (rank 0): the data after the header. */
static float *read_npy(const char *path, long *count) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  float *buf = NULL;
  long size, hl, off;
  *count = 0;
  if (!f) return NULL;
  if (fread(head, 1, 10, f) == 10 && fseek(f, 0, SEEK_END) == 0 && (size = ftell(f)) > 10) {
    hl = head[8] | (head[9] << 8);
    off = 10 + hl;
    *count = (size - off) / 4;
    buf = malloc((size_t)(*count > 0 ? *count : 1) * sizeof *buf);
    if (buf && (fseek(f, off, SEEK_SET) != 0 || fread(buf, 4, (size_t)*count, f) != (size_t)*count)) {
      free(buf);
      buf = NULL;
    }
  }
  fclose(f);
  return buf;
}

static void check_grids(int which, const char *tmpdir) {
  fg_dataset *ds = NULL;
  fg_status st = FG_OK;
  int grids[64][3];
  const int ng = fg_grid_enumerate(nprocs, grids, 64);
  double ref[5][EPOCHS], ref_learn[5][EPOCHS];
  fg_train_result rref[5], rlearn[5];
  const char *name = which == 0 ? "rmat" : "path";
  if (rank == 0) st = make_data(which, &ds);
  st = fg_agree(MPI_COMM_WORLD, st);
  EXPECT_OK(st);
  if (st != FG_OK) return;

  for (int L = 2; L <= 4; L++) {
    fg_train_config c = base_config(ref[L], L);
    c.scheme = "serial";
    reference(ds, &c, ref[L], &rref[L]);
    /* learned features: the 3d scheme on one rank is the reference */
    c = base_config(ref_learn[L], L);
    c.scheme = "3d";
    c.grid = "1x1x1";
    c.learn_features = 1;
    reference(ds, &c, ref_learn[L], &rlearn[L]);
  }

  for (int gi = 0; gi < ng; gi++) {
    char grid[32], what[64];
    snprintf(grid, sizeof grid, "%dx%dx%d", grids[gi][0], grids[gi][1], grids[gi][2]);
    for (int L = 2; L <= (which == 0 ? 4 : 3); L++) {
      fg_train_config c = base_config(NULL, L);
      c.scheme = "3d";
      c.grid = grid;
      snprintf(what, sizeof what, "%s", name);
      compare(ds, c, ref[L], &rref[L], what);
      if (which == 1) continue;
      c.double_perm = 1;
      snprintf(what, sizeof what, "%s double-perm", name);
      compare(ds, c, ref[L], &rref[L], what);
      c.double_perm = 0;
      c.order = "random";
      c.agg_blocks = 3;
      snprintf(what, sizeof what, "%s random agg-blocks 3", name);
      compare(ds, c, ref[L], &rref[L], what);
      c = base_config(NULL, L);
      c.scheme = "3d";
      c.grid = grid;
      c.learn_features = 1;
      c.double_perm = L != 3;
      c.agg_blocks = L == 2 ? 2 : 1;
      snprintf(what, sizeof what, "%s learned%s%s", name, c.double_perm ? " double" : "",
               c.agg_blocks > 1 ? " blocks 2" : "");
      compare(ds, c, ref_learn[L], &rlearn[L], what);
    }
  }

  if (which == 0 && nprocs == 4) {
    /* the performance model's choices train like any other configuration */
    fg_train_config c = base_config(NULL, 3);
    c.scheme = "3d";
    c.grid = "auto";
    compare(ds, c, ref[3], &rref[3], "rmat --grid auto");
    c.scheme = "auto";
    c.grid = NULL;
    compare(ds, c, ref[3], &rref[3], "rmat --scheme auto");
  }
  if (which == 0) {
    /* predictions in original node order equal serial's */
    char p1[600], p2[600], ck[600];
    double h1[EPOCHS], h2[EPOCHS], h3[EPOCHS];
    fg_train_result res;
    fg_train_config c = base_config(h1, 3);
    const char *grid = nprocs == 1 ? "1x1x1" : nprocs == 2 ? "1x2x1" : nprocs == 3 ? "1x1x3"
                       : nprocs == 4                       ? "2x1x2"
                                                           : NULL;
    char gbuf[32];
    if (!grid) {
      snprintf(gbuf, sizeof gbuf, "%dx%dx%d", grids[ng / 2][0], grids[ng / 2][1],
               grids[ng / 2][2]);
      grid = gbuf;
    }
    snprintf(p1, sizeof p1, "%s/serial.npy", tmpdir);
    snprintf(p2, sizeof p2, "%s/3d.npy", tmpdir);
    snprintf(ck, sizeof ck, "%s/3d.ckpt", tmpdir);
    c.predictions_path = p1;
    c.scheme = "serial";
    if (rank == 0) EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &res));
    c.predictions_path = p2;
    c.scheme = "3d";
    c.grid = grid;
    c.double_perm = 1;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    if (rank == 0) {
      long n1 = 0, n2 = 0;
      float *a = read_npy(p1, &n1), *b = read_npy(p2, &n2);
      double worst = 0.0;
      EXPECT_MSG(a && b && n1 == n2 && n1 == 256 * 5, "predictions: %ld and %ld values", n1, n2);
      for (long i = 0; a && b && n1 == n2 && i < n1; i++) {
        const double dlt = fabs((double)a[i] - (double)b[i]) / (1.0 + fabs((double)a[i]));
        if (!(dlt <= worst)) worst = dlt;
      }
      EXPECT_MSG(worst <= 1e-4, "3d predictions (grid %s) differ from serial by %.3g", grid,
                 worst);
      printf("P=%d %s predictions vs serial: max diff %.2e\n", nprocs, grid, worst);
      free(a);
      free(b);
      unlink(p1);
      unlink(p2);
    }
    /* checkpoint at 10, resume to 20: bit for bit in 3d; serial resumes the same file */
    setenv("FULLGRAPH_DW_ORDER", "1", 1);
    c = base_config(h1, 3);
    c.scheme = "3d";
    c.grid = grid;
    c.double_perm = 1;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    c.loss_history = h2;
    c.epochs = 10;
    c.checkpoint_path = ck;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    c.epochs = EPOCHS;
    c.checkpoint_path = NULL;
    c.resume_path = ck;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    EXPECT_MSG(memcmp(h1 + 10, h2 + 10, 10 * sizeof(double)) == 0,
               "3d resume (grid %s) is not bitwise equal to an uninterrupted run", grid);
    c = base_config(h3, 3);
    c.scheme = "serial";
    c.resume_path = ck;
    if (rank == 0) {
      EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &res));
      EXPECT_MSG(worst_rel(h3 + 10, h1 + 10, 10) <= 1e-4,
                 "serial resume of a 3d checkpoint differs by %.3g",
                 worst_rel(h3 + 10, h1 + 10, 10));
      unlink(ck);
    }
    unsetenv("FULLGRAPH_DW_ORDER");

    /* errors: every rank returns the same message */
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
    c.grid = "1x1x1";
    c.agg_order = FG_AGG_LAST;
    if (nprocs == 1) {
      st = fg_train(MPI_COMM_WORLD, ds, &c, &res);
      EXPECT(st == FG_ERR_INVALID_ARG);
      EXPECT(fg_test_error_contains("aggregates first"));
    }
  }
  fg_dataset_destroy(&ds);
}

int main(int argc, char **argv) {
  char tmpdir[512] = "";
  int failures = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/fg_mpi3d_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) tmpdir[0] = '\0';
  }
  MPI_Bcast(tmpdir, (int)sizeof tmpdir, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_MSG(tmpdir[0] != '\0', "cannot make a temporary directory");
  if (tmpdir[0]) {
    check_grids(0, tmpdir);
    check_grids(1, tmpdir);
    if (rank == 0) rmdir(tmpdir);
  }
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_mpi3d_train");
}
