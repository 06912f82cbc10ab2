/* test_mpi_train.c -- run under mpiexec with any number of ranks P.
 *
 * For every graph (Cora; a directed R-MAT; a 4-node path, whose fifth block at P = 5 is empty),
 * every scheme (1d, 1d-sa), order (natural, random, metis) and overlap setting, 20 epochs with
 * dropout 0.5 must give the loss of a one-process serial run (made by rank 0 on
 * MPI_COMM_SELF) within a relative 1e-4 at every epoch, and the same final accuracies.
 * Overlap must not change a bit of the result, and two identical runs must be bitwise equal
 * (losses and the saved predictions). */
#define _POSIX_C_SOURCE 200809L
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi_data.h"
#include "testutil.h"

#define EPOCHS 20

static int rank, nprocs;

static fg_train_config base_config(double *history) {
  fg_train_config c = fg_train_config_default();
  c.epochs = EPOCHS;
  c.dropout = 0.5;
  c.seed = 11;
  c.verbose = 0;
  c.loss_history = history;
  return c;
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

static void check_dataset(int which, const char *tmpdir) {
  static const char *const schemes[] = {"1d", "1d-sa"};
  static const char *const orders[] = {"natural", "random", "metis"};
  fg_dataset *ds = NULL;
  fg_status st = FG_OK;
  double ref[EPOCHS], hist[EPOCHS], first[EPOCHS];
  fg_train_result rref, res;
  memset(&rref, 0, sizeof rref);
  if (rank == 0) st = mpi_data_make(which, &ds);
  st = fg_agree(MPI_COMM_WORLD, st);
  EXPECT_OK(st);
  if (st != FG_OK) return;

  /* the one-process reference */
  if (rank == 0) {
    fg_train_config c = base_config(ref);
    c.scheme = "serial";
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &rref));
  }
  MPI_Bcast(ref, EPOCHS, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  MPI_Bcast(&rref, (int)sizeof rref, MPI_BYTE, 0, MPI_COMM_WORLD);

  for (int si = 0; si < 2; si++) {
    for (int oi = 0; oi < (mpi_have_metis() ? 3 : 2); oi++) {
      for (int ov = 0; ov <= 1; ov++) {
        fg_train_config c = base_config(hist);
        double worst = 0.0;
        c.scheme = schemes[si];
        c.order = orders[oi];
        c.overlap = ov;
        memset(hist, 0, sizeof hist);
        st = fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res);
        EXPECT_OK(st);
        if (st != FG_OK) continue;
        for (int e = 0; e < EPOCHS; e++) {
          double rel = fabs(hist[e] - ref[e]) / fabs(ref[e]);
          if (!(rel <= worst)) worst = rel;
        }
        EXPECT_MSG(worst <= 1e-4, "%s %s %s overlap %d: loss differs from serial by %.3g",
                   mpi_data_name(which), c.scheme, c.order, ov, worst);
        EXPECT_MSG(res.final_train_acc == rref.final_train_acc &&
                       res.final_valid_acc == rref.final_valid_acc &&
                       res.final_test_acc == rref.final_test_acc,
                   "%s %s %s overlap %d: accuracies %.4f/%.4f/%.4f, serial %.4f/%.4f/%.4f",
                   mpi_data_name(which), c.scheme, c.order, ov, res.final_train_acc,
                   res.final_valid_acc, res.final_test_acc, rref.final_train_acc,
                   rref.final_valid_acc, rref.final_test_acc);
        /* overlap changes when messages move, not what is summed in which order */
        if (ov == 0)
          memcpy(first, hist, sizeof first);
        else
          EXPECT_MSG(memcmp(first, hist, sizeof first) == 0, "%s %s %s: overlap changed the losses",
                     mpi_data_name(which), c.scheme, c.order);
        if (rank == 0)
          printf("P=%d %-15s %-5s %-7s overlap %d: max rel loss diff %.2e, final loss %.6f\n",
                 nprocs, mpi_data_name(which), c.scheme, c.order, ov, worst, hist[EPOCHS - 1]);
      }
    }
  }

  /* two identical runs are bitwise identical (losses and predictions) */
  {
    char p1[512], p2[512];
    double h2[EPOCHS];
    fg_train_config c = base_config(hist);
    snprintf(p1, sizeof p1, "%s/pred1.npy", tmpdir);
    snprintf(p2, sizeof p2, "%s/pred2.npy", tmpdir);
    c.scheme = "1d-sa";
    c.order = mpi_have_metis() ? "metis" : "random";
    c.overlap = 1;
    c.predictions_path = p1;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    c.loss_history = h2;
    c.predictions_path = p2;
    EXPECT_OK(fg_train(MPI_COMM_WORLD, rank == 0 ? ds : NULL, &c, &res));
    EXPECT_MSG(memcmp(hist, h2, sizeof h2) == 0, "%s: a repeated run changed the losses",
               mpi_data_name(which));
    if (rank == 0) {
      long l1, l2;
      char *b1 = slurp(p1, &l1), *b2 = slurp(p2, &l2);
      EXPECT_MSG(b1 && b2 && l1 == l2 && l1 > 0 && memcmp(b1, b2, (size_t)l1) == 0,
                 "%s: a repeated run changed the predictions", mpi_data_name(which));
      free(b1);
      free(b2);
      unlink(p1);
      unlink(p2);
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
  if (rank == 0 && !mpi_have_metis())
    printf("note: no METIS in this build; --order metis not tested\n");
  if (rank == 0) {
    const char *t = getenv("TMPDIR");
    snprintf(tmpdir, sizeof tmpdir, "%s/fg_mpi_train_XXXXXX", t && *t ? t : "/tmp");
    if (!mkdtemp(tmpdir)) tmpdir[0] = '\0';
  }
  MPI_Bcast(tmpdir, (int)sizeof tmpdir, MPI_CHAR, 0, MPI_COMM_WORLD);
  EXPECT_MSG(tmpdir[0] != '\0', "cannot make a temporary directory");
  if (tmpdir[0]) {
    for (int which = 0; which < MPI_DATA_COUNT; which++) check_dataset(which, tmpdir);
    if (rank == 0) rmdir(tmpdir);
  }
  MPI_Allreduce(&fg_test_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  fg_test_failures = failures;
  MPI_Finalize();
  if (rank != 0) return failures ? 1 : 0;
  return fg_test_finish("test_mpi_train");
}
