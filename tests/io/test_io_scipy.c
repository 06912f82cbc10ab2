/* test_io_scipy.c -- Cora re-encoded (tests/corpus/scipy, tests/corpus/reddit, written by
 * make_scipy.py with scipy.sparse.save_npz and numpy.savez) loads through fg_dataset_load to
 * exactly the dataset data/cora gives: the same CSR arrays (its pattern as csr, csc and coo),
 * and for the Reddit pairs (float32 and float16 features) the same features, labels and split,
 * the same fingerprint, and the same training losses. The readers' budget stops each layout
 * before it allocates what the limit cannot hold. */
#include <stdio.h>
#include <string.h>

#include "graph/fg_graph.h"
#include "testutil.h"

#define CORPUS FG_CORPUS

static fg_dataset *load(const char *path, double mem_limit) {
  fg_load_config lc = fg_load_config_default();
  fg_dataset *ds = NULL;
  lc.mem_limit = mem_limit;
  fg_error_clear();
  fg_status st = fg_dataset_load(path, &lc, &ds);
  EXPECT_MSG(st == FG_OK, "%s: %s", path, fg_last_error());
  return ds;
}

static int same_graph(const fg_dataset *a, const fg_dataset *b) {
  const int64_t n = a->num_nodes;
  return n == b->num_nodes && a->adj.nnz == b->adj.nnz &&
         memcmp(a->adj.rowptr, b->adj.rowptr, (size_t)(n + 1) * sizeof *a->adj.rowptr) == 0 &&
         memcmp(a->adj.col, b->adj.col, (size_t)a->adj.nnz * sizeof *a->adj.col) == 0;
}

static int same_fingerprint(const fg_ds_fingerprint *a, const fg_ds_fingerprint *b) {
  return a->nodes == b->nodes && a->entries == b->entries && a->features == b->features &&
         a->classes == b->classes && a->graph == b->graph &&
         a->feature_hash == b->feature_hash && a->labels == b->labels && a->split == b->split;
}

/* Five epochs of the default GCN on one thread: the losses, epoch by epoch. */
static void train_losses(const fg_dataset *ds, double loss[5]) {
  fg_train_config c = fg_train_config_default();
  fg_train_result r;
  c.epochs = 5;
  c.verbose = 0;
  c.seed = 7;
  c.loss_history = loss;
  EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  fg_set_threads(1);
  fg_dataset *ref = load(FG_DEMO_DATA, -1.0);
  if (!ref) {
    MPI_Finalize();
    return fg_test_finish("test_io_scipy");
  }
  fg_ds_fingerprint fref;
  fg_dataset_fingerprint(ref, &fref);

  /* ---- the pattern alone: csr and csc deflated, coo stored ---- */
  static const char *const graphs[3] = {CORPUS "/scipy/cora_csr.npz",
                                        CORPUS "/scipy/cora_csc.npz",
                                        CORPUS "/scipy/cora_coo.npz"};
  fg_ds_fingerprint fg0;
  for (int k = 0; k < 3; k++) {
    fg_dataset *ds = load(graphs[k], -1.0);
    if (!ds) continue;
    fg_ds_fingerprint fp;
    fg_dataset_fingerprint(ds, &fp);
    EXPECT_MSG(same_graph(ds, ref), "%s: CSR differs from data/cora's", graphs[k]);
    EXPECT_MSG(fp.graph == fref.graph && fp.entries == fref.entries, "%s: graph hash",
               graphs[k]);
    EXPECT_MSG(ds->features_generated && ds->labels_generated && ds->split_generated,
               "%s: a graph alone gets generated features, labels and split", graphs[k]);
    /* what is generated depends only on the graph and the seed: the three agree */
    if (k == 0) fg0 = fp;
    else EXPECT_MSG(same_fingerprint(&fp, &fg0), "%s: fingerprint differs from csr's", graphs[k]);
    fg_dataset_destroy(&ds);
  }

  /* ---- Reddit pairs: the folder or either file; float32 and float16 features ---- */
  static const char *const pairs[4] = {CORPUS "/reddit/cora", CORPUS "/reddit/cora/reddit_data.npz",
                                       CORPUS "/reddit/cora/reddit_graph.npz",
                                       CORPUS "/reddit/cora_f16"};
  double lref[5] = {0}, lf16[5] = {0};
  train_losses(ref, lref);
  for (int k = 0; k < 4; k++) {
    fg_dataset *ds = load(pairs[k], -1.0);
    if (!ds) continue;
    fg_ds_fingerprint fp;
    fg_dataset_fingerprint(ds, &fp);
    EXPECT_MSG(same_graph(ds, ref), "%s: CSR differs from data/cora's", pairs[k]);
    EXPECT_MSG(same_fingerprint(&fp, &fref), "%s: fingerprint differs from data/cora's",
               pairs[k]);
    EXPECT_MSG(!ds->features_generated && !ds->labels_generated && !ds->split_generated,
               "%s: features, labels and split come from the file", pairs[k]);
    EXPECT_MSG(ds->num_features == 1433 && ds->num_classes == 7 &&
                   memcmp(ds->features, ref->features, 2708 * 1433 * sizeof(float)) == 0 &&
                   memcmp(ds->labels, ref->labels, 2708 * sizeof(int32_t)) == 0 &&
                   memcmp(ds->split, ref->split, 2708) == 0,
               "%s: features, labels or split differ", pairs[k]);
    if (k == 3) {
      train_losses(ds, lf16);
      for (int e = 0; e < 5; e++)
        EXPECT_MSG(lf16[e] == lref[e], "epoch %d: loss %.9g on the float16 pair, %.9g on "
                   "data/cora", e + 1, lf16[e], lref[e]);
      printf("losses on data/cora and reddit/cora_f16: %.6f %.6f %.6f %.6f %.6f\n", lref[0],
             lref[1], lref[2], lref[3], lref[4]);
    }
    fg_dataset_destroy(&ds);
  }
  EXPECT(lref[0] > lref[4] && lref[4] > 0.0); /* it trained */

  /* ---- the budget: each stops before allocating what the limit cannot hold ---- */
  {
    fg_load_config lc = fg_load_config_default();
    fg_dataset *ds = NULL;
    lc.mem_limit = 300e3; /* the 128 kB archive fits, its 10556 edges at 40 bytes do not */
    EXPECT(fg_dataset_load(CORPUS "/scipy/cora_coo.npz", &lc, &ds) == FG_ERR_MEMLIMIT);
    EXPECT(fg_test_error_contains("cora_coo.npz[row.npy]: the edge list of its 10556 entries"));
    EXPECT(fg_test_error_contains("--mem-limit is"));
    lc.mem_limit = 2e6; /* the graph fits; the 15.5 MB of dense features do not */
    EXPECT(fg_dataset_load(CORPUS "/reddit/cora", &lc, &ds) == FG_ERR_MEMLIMIT);
    EXPECT(fg_test_error_contains("cora/reddit_data.npz: member 'feature.npy' inflates to"));
    EXPECT(ds == NULL);
  }

  /* ---- detection: a folder without the pair, a reddit_data.npz alone ---- */
  {
    fg_dataset *ds = NULL;
    EXPECT(fg_dataset_load(CORPUS "/reddit/no_graph", NULL, &ds) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("no_graph: missing reddit_graph.npz"));
    EXPECT(fg_dataset_load(CORPUS "/reddit/no_graph/reddit_data.npz", NULL, &ds) == FG_ERR_IO);
    EXPECT(fg_test_error_contains("no_graph: missing reddit_graph.npz"));
    /* reddit_graph.npz without its data is a graph alone */
    ds = load(CORPUS "/reddit/no_data/reddit_graph.npz", -1.0);
    EXPECT(ds && ds->num_nodes == 5 && ds->features_generated);
    fg_dataset_destroy(&ds);
  }

  fg_dataset_destroy(&ref);
  MPI_Finalize();
  return fg_test_finish("test_io_scipy");
}
