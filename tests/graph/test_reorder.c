/* test_reorder.c -- --reorder is invisible: training Cora (undirected) and a directed graph
 * with --reorder degree and rcm gives the loss history of --reorder none within 1e-5 relative,
 * and the same predictions and embeddings in the same (original) node order, with layer 0
 * aggregating first and last, with and without dropout (the reordered runs read the dataset's
 * features through a row map instead of a permuted copy). The orders
 * themselves: permutations; degree puts the most gathered rows first; rcm narrows the band of
 * a shuffled grid. --reorder auto: its cache simulation on a hand-counted stream; it keeps a
 * row-major grid, reorders a shuffled one, and simulates nothing when X fits in the cache.
 * Refusals: an unknown name, and a scheme other than serial. */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/fg_rng.h"
#include "graph/fg_graph.h"
#include "testutil.h"

enum { EPOCHS = 6 };
static const char *const kOrders[] = {"none", "degree", "rcm"};
static char tmpdir[256];

static char *path_in(const char *name) {
  static char buf[8][512];
  static int k = 0;
  char *p = buf[k++ % 8];
  snprintf(p, 512, "%s/%s", tmpdir, name);
  return p;
}

/* A float32 .npy written by fg_npy_write_f32: header then rows x cols floats. */
static float *read_npy(const char *path, int64_t *count) {
  FILE *f = fopen(path, "rb");
  unsigned char head[10];
  float *x = NULL;
  long size;
  unsigned hl;
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  size = ftell(f);
  rewind(f);
  if (fread(head, 1, 10, f) == 10 && memcmp(head, "\x93NUMPY", 6) == 0) {
    hl = head[8] | (unsigned)head[9] << 8;
    *count = (size - 10 - (long)hl) / 4;
    x = malloc((size_t)*count * sizeof *x + 1);
    fseek(f, 10 + (long)hl, SEEK_SET);
    if (x && fread(x, 4, (size_t)*count, f) != (size_t)*count) {
      free(x);
      x = NULL;
    }
  }
  fclose(f);
  return x;
}

static int is_permutation(const int64_t *perm, int64_t n) {
  uint8_t *seen = calloc((size_t)n + 1, 1);
  int ok = seen != NULL;
  for (int64_t i = 0; ok && i < n; i++) {
    ok = perm[i] >= 0 && perm[i] < n && !seen[perm[i]];
    if (ok) seen[perm[i]] = 1;
  }
  free(seen);
  return ok;
}

/* Largest |row - column| over the entries of P A Pᵀ. */
static int64_t bandwidth(const fg_csr *A, const int64_t *perm) {
  int64_t *inv = malloc((size_t)A->nrows * sizeof *inv), bw = 0;
  if (!inv) exit(2);
  for (int64_t k = 0; k < A->nrows; k++) inv[perm[k]] = k;
  for (int64_t r = 0; r < A->nrows; r++)
    for (int64_t k = A->rowptr[r]; k < A->rowptr[r + 1]; k++) {
      const int64_t d = llabs(inv[r] - inv[A->col[k]]);
      bw = d > bw ? d : bw;
    }
  free(inv);
  return bw;
}

/* A side x side grid, ids row-major, or shuffled when shuffled != 0. */
static void make_grid(int64_t side, int shuffled, fg_csr *A) {
  const int64_t nn = side * side;
  int64_t *src = malloc((size_t)(2 * nn) * sizeof *src);
  int64_t *dst = malloc((size_t)(2 * nn) * sizeof *dst);
  int64_t *id = malloc((size_t)nn * sizeof *id), m = 0;
  if (!src || !dst || !id) exit(2);
  for (int64_t i = 0; i < nn; i++) id[i] = i;
  for (int64_t i = nn - 1; shuffled && i > 0; i--) {
    const int64_t j = (int64_t)(fg_rng_u64(2, 7, (uint64_t)i, 0, 0, 0) % (uint64_t)(i + 1));
    const int64_t t = id[i];
    id[i] = id[j];
    id[j] = t;
  }
  for (int64_t r = 0; r < side; r++)
    for (int64_t c = 0; c < side; c++) {
      if (c + 1 < side) src[m] = id[r * side + c], dst[m++] = id[r * side + c + 1];
      if (r + 1 < side) src[m] = id[r * side + c], dst[m++] = id[(r + 1) * side + c];
    }
  EXPECT_OK(fg_csr_from_edges(nn, src, dst, m, 1, 1, 1, A));
  free(src);
  free(dst);
  free(id);
}

/* --reorder auto and its cache simulation. */
static void test_auto(void) {
  enum { SIDE = 200 }; /* 40000 nodes: rows of 512 bytes are 20 MB, over a 1 MiB cache */
  int64_t *perm = malloc(SIDE * SIDE * sizeof *perm);
  fg_reorder_choice c;
  fg_reorder_kind k;
  fg_csr A;
  double h;
  if (!perm) exit(2);
  EXPECT_OK(fg_reorder_parse("auto", &k));
  EXPECT(k == FG_REORDER_AUTO && strcmp(fg_reorder_name(k), "auto") == 0);

  /* the simulation on a hand-counted stream: rows 0..3 of a 4 x 4 matrix all gather columns 0
   * and 1 (8 gathers); in a cache of 16 one-row blocks only the first two miss */
  {
    int64_t rp[5] = {0, 2, 4, 6, 8};
    int32_t col[8] = {0, 1, 0, 1, 0, 1, 0, 1};
    fg_csr B = {4, 4, 8, rp, col, NULL};
    const int64_t rev[4] = {3, 2, 1, 0};
    EXPECT_OK(fg_reorder_hit_rate(&B, NULL, 16, 1, &h));
    EXPECT(fabs(h - (6.0 / 8.0)) < 1e-12);
    /* blocks of two rows: columns 0 and 1 share a block, so only the first gather misses */
    EXPECT_OK(fg_reorder_hit_rate(&B, NULL, 16, 2, &h));
    EXPECT(fabs(h - (7.0 / 8.0)) < 1e-12);
    /* reversed, columns 0 and 1 become 3 and 2: still one block of two */
    EXPECT_OK(fg_reorder_hit_rate(&B, rev, 16, 2, &h));
    EXPECT(fabs(h - (7.0 / 8.0)) < 1e-12);
  }

  /* a grid in row-major order already has the locality: auto keeps it */
  make_grid(SIDE, 0, &A);
  EXPECT(fg_reorder_compute(&A, FG_REORDER_AUTO, perm) != FG_OK);
  EXPECT_OK(fg_reorder_auto(&A, 512, (int64_t)1 << 20, perm, &c));
  EXPECT(c.simulated && c.kind == FG_REORDER_NONE);
  EXPECT(c.hit[FG_REORDER_NONE] > 0.9);
  for (int64_t i = 0; i < SIDE * SIDE; i++) EXPECT(perm[i] == i);
  /* X fits in the cache: nothing simulated, the input order */
  EXPECT_OK(fg_reorder_auto(&A, 512, (int64_t)64 << 20, perm, &c));
  EXPECT(!c.simulated && c.kind == FG_REORDER_NONE);
  fg_csr_free(&A);

  /* shuffled, its gathers scatter over X: auto takes an order that removes most misses, and
   * the perm it returns is that order's */
  make_grid(SIDE, 1, &A);
  EXPECT_OK(fg_reorder_auto(&A, 512, (int64_t)1 << 20, perm, &c));
  EXPECT(c.simulated && c.kind != FG_REORDER_NONE);
  EXPECT(1.0 - c.hit[c.kind] < 0.5 * (1.0 - c.hit[FG_REORDER_NONE]));
  EXPECT(is_permutation(perm, SIDE * SIDE));
  EXPECT_OK(fg_reorder_hit_rate(&A, perm, ((int64_t)1 << 20) / 512, 8, &h));
  EXPECT(fabs(h - (c.hit[c.kind])) < 1e-12);
  {
    char line[256];
    fg_reorder_describe(&c, line, sizeof line);
    EXPECT(strstr(line, fg_reorder_name(c.kind)) != NULL && strstr(line, "none ") != NULL);
  }
  fg_csr_free(&A);
  free(perm);
}

static void test_orders(void) {
  /* a 30 x 30 grid whose node ids are shuffled: its natural band is wide, RCM's is ~30 */
  enum { S = 30, NN = S * S };
  int64_t src[4 * NN], dst[4 * NN], shuffle[NN], perm[NN], m = 0;
  fg_csr A;
  for (int64_t i = 0; i < NN; i++) shuffle[i] = i;
  for (int64_t i = NN - 1; i > 0; i--) {
    const int64_t j = (int64_t)(fg_rng_u64(1, 99, (uint64_t)i, 0, 0, 0) % (uint64_t)(i + 1));
    const int64_t t = shuffle[i];
    shuffle[i] = shuffle[j];
    shuffle[j] = t;
  }
  for (int64_t r = 0; r < S; r++)
    for (int64_t c = 0; c < S; c++) {
      if (c + 1 < S) src[m] = shuffle[r * S + c], dst[m++] = shuffle[r * S + c + 1];
      if (r + 1 < S) src[m] = shuffle[r * S + c], dst[m++] = shuffle[(r + 1) * S + c];
    }
  EXPECT_OK(fg_csr_from_edges(NN, src, dst, m, 1, 1, 1, &A));
  for (int64_t i = 0; i < NN; i++) perm[i] = i;
  const int64_t bw_none = bandwidth(&A, perm);
  EXPECT_OK(fg_reorder_compute(&A, FG_REORDER_RCM, perm));
  EXPECT(is_permutation(perm, NN));
  const int64_t bw_rcm = bandwidth(&A, perm);
  printf("  shuffled %dx%d grid: bandwidth %lld natural, %lld after rcm\n", S, S,
         (long long)bw_none, (long long)bw_rcm);
  EXPECT(bw_none > 10 * S && bw_rcm <= 2 * S);
  fg_csr_free(&A);
  /* one hub joined to a few nodes, so that degrees differ */
  for (int64_t k = 1; k <= 20; k++) src[m] = shuffle[0], dst[m++] = shuffle[k * 37 % NN];
  EXPECT_OK(fg_csr_from_edges(NN, src, dst, m, 1, 1, 1, &A));
  EXPECT_OK(fg_reorder_compute(&A, FG_REORDER_RCM, perm));
  EXPECT(is_permutation(perm, NN));
  EXPECT_OK(fg_reorder_compute(&A, FG_REORDER_DEGREE, perm));
  EXPECT(is_permutation(perm, NN));
  {
    int64_t *cnt = calloc(NN, sizeof *cnt);
    int sorted = 1;
    for (int64_t k = 0; k < A.nnz; k++) cnt[A.col[k]]++;
    for (int64_t k = 1; k < NN; k++)
      sorted &= cnt[perm[k - 1]] > cnt[perm[k]] ||
                (cnt[perm[k - 1]] == cnt[perm[k]] && perm[k - 1] < perm[k]);
    EXPECT(sorted);
    EXPECT(perm[0] == shuffle[0]); /* the hub first */
    free(cnt);
  }
  EXPECT_OK(fg_reorder_compute(&A, FG_REORDER_NONE, perm));
  EXPECT(perm[0] == 0 && perm[NN - 1] == NN - 1);
  {
    fg_reorder_kind k;
    EXPECT(fg_reorder_parse("bogus", &k) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("none, degree, rcm"));
    EXPECT_OK(fg_reorder_parse(NULL, &k));
    EXPECT(k == FG_REORDER_NONE);
  }
  fg_csr_free(&A);
}

/* Train ds EPOCHS epochs with each order; compare with "none". The reordered runs read the
 * dataset's features through a row map: agg_order and dropout pick which layer-0 path uses it
 * (aggregate last: D_0 gathered forward and again in backward; aggregate first: gathered
 * into the SpMM's input; dropout 0: a plain gather). */
static void check_invisible(const fg_dataset *ds, const char *tag, fg_agg_order agg_order,
                            double dropout) {
  double hist[3][EPOCHS];
  float *pred[3] = {NULL, NULL, NULL}, *emb[3] = {NULL, NULL, NULL};
  int64_t npred[3] = {0, 0, 0}, nemb[3] = {0, 0, 0};
  for (int o = 0; o < 3; o++) {
    fg_train_config c = fg_train_config_default();
    fg_train_result r;
    char pn[64], en[64];
    snprintf(pn, sizeof pn, "%s_%s_pred.npy", tag, kOrders[o]);
    snprintf(en, sizeof en, "%s_%s_emb.npy", tag, kOrders[o]);
    c.verbose = 0;
    c.epochs = EPOCHS;
    c.seed = 5;
    c.layers = 3;
    c.hidden = 16;
    c.reorder = kOrders[o];
    c.agg_order = agg_order;
    c.dropout = dropout;
    c.loss_history = hist[o];
    c.predictions_path = path_in(pn);
    c.embeddings_path = path_in(en);
    EXPECT_OK(fg_train(MPI_COMM_SELF, ds, &c, &r));
    pred[o] = read_npy(path_in(pn), &npred[o]);
    emb[o] = read_npy(path_in(en), &nemb[o]);
  }
  for (int o = 1; o < 3; o++) {
    double worst_loss = 0.0, worst_pred = 0.0, worst_emb = 0.0;
    int64_t argmax_diff = 0;
    const int64_t C = fg_dataset_num_classes(ds), n = fg_dataset_num_nodes(ds);
    for (int e = 0; e < EPOCHS; e++) {
      const double d = fabs(hist[o][e] - hist[0][e]) / fabs(hist[0][e]);
      worst_loss = d > worst_loss ? d : worst_loss;
    }
    EXPECT(pred[0] && pred[o] && npred[o] == npred[0] && npred[0] == n * C);
    EXPECT(emb[0] && emb[o] && nemb[o] == nemb[0] && nemb[0] == n * 16);
    if (pred[0] && pred[o] && npred[o] == npred[0] && npred[0] == n * C) {
      worst_pred = fg_test_max_rel_diff(pred[o], pred[0], npred[0]);
      for (int64_t v = 0; v < n; v++) {
        int64_t a = 0, b = 0;
        for (int64_t k = 1; k < C; k++) {
          if (pred[0][v * C + k] > pred[0][v * C + a]) a = k;
          if (pred[o][v * C + k] > pred[o][v * C + b]) b = k;
        }
        argmax_diff += a != b;
      }
    }
    if (emb[0] && emb[o] && nemb[o] == nemb[0]) worst_emb = fg_test_max_rel_diff(emb[o], emb[0], nemb[0]);
    printf("  %s --reorder %s: loss history within %.2g, predictions within %.2g (%lld argmax "
           "differ), embeddings within %.2g\n", tag, kOrders[o], worst_loss, worst_pred,
           (long long)argmax_diff, worst_emb);
    EXPECT_MSG(worst_loss <= 1e-5, "%s %s: loss history differs by %.3g relative", tag,
               kOrders[o], worst_loss);
    EXPECT_MSG(worst_pred <= 1e-4 && worst_emb <= 1e-4,
               "%s %s: outputs differ by %.3g / %.3g (not in the original order?)", tag,
               kOrders[o], worst_pred, worst_emb);
    EXPECT(argmax_diff <= n / 1000);
  }
  for (int o = 0; o < 3; o++) {
    free(pred[o]);
    free(emb[o]);
  }
}

int main(int argc, char **argv) {
  fg_dataset *ds = NULL;
  fg_load_config lc = fg_load_config_default();
  MPI_Init(&argc, &argv);
  snprintf(tmpdir, sizeof tmpdir, "/tmp/fg_test_reorder_XXXXXX");
  if (!mkdtemp(tmpdir)) {
    perror("mkdtemp");
    return 1;
  }
  test_orders();
  test_auto();
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  if (ds) {
    check_invisible(ds, "cora", FG_AGG_AUTO, 0.5);
    check_invisible(ds, "cora-aggfirst", FG_AGG_FIRST, 0.5);
    check_invisible(ds, "cora-nodropout", FG_AGG_AUTO, 0.0);
  }
  fg_dataset_destroy(&ds);
  /* directed: Âᵀ is stored and permuted too */
  lc.undirected = 0;
  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, &lc, &ds));
  if (ds) check_invisible(ds, "cora-directed", FG_AGG_AUTO, 0.5);
  if (ds) check_invisible(ds, "cora-directed-aggfirst", FG_AGG_FIRST, 0.5);
  /* refusals */
  if (ds) {
    fg_train_config c = fg_train_config_default();
    fg_train_result r;
    c.verbose = 0;
    c.epochs = 1;
    c.reorder = "sideways";
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("unknown --reorder 'sideways'"));
    c.reorder = "degree";
    c.scheme = "1d";
    EXPECT(fg_train(MPI_COMM_SELF, ds, &c, &r) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("--scheme 1d does not take --reorder (it is an option of: serial)"));
  }
  fg_dataset_destroy(&ds);
  {
    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmpdir);
  }
  MPI_Finalize();
  return fg_test_finish("test_reorder");
}
