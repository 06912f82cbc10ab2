/* test_world.c -- what a binding without MPI of its own uses (issue 21): fg_init / fg_finalize,
 * fg_train_world against fg_train on the same ranks, Cora read from a file and the same graph
 * fed back as arrays (fg_dataset_copy_arrays -> fg_dataset_from_arrays) training to the same
 * losses bit for bit, outputs in caller buffers equal to the .npy files, the strict checks on
 * bad arrays, and the by-name configuration. Run under mpiexec at 1 and 3 ranks; MPI is left to
 * fg_init, as Python leaves it. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fullgraph.h"
#include "testutil.h"

#define EPOCHS 6

static int rank = 0, size = 1;

/* Cora's arrays copied out of ds, the adjacency as COO (src = the column, dst = the row). */
typedef struct cora_arrays {
  int64_t n, nnz, f;
  int64_t *indptr, *src, *dst, *ids;
  int32_t *indices, *labels;
  float *features;
  int8_t *split;
} cora_arrays;

static void arrays_free(cora_arrays *a) {
  free(a->indptr);
  free(a->src);
  free(a->dst);
  free(a->ids);
  free(a->indices);
  free(a->labels);
  free(a->features);
  free(a->split);
  memset(a, 0, sizeof *a);
}

static int copy_out(const fg_dataset *ds, cora_arrays *a) {
  memset(a, 0, sizeof *a);
  a->n = fg_dataset_num_nodes(ds);
  a->nnz = fg_dataset_num_edges(ds);
  a->f = fg_dataset_num_features(ds);
  a->indptr = malloc((size_t)(a->n + 1) * sizeof *a->indptr);
  a->indices = malloc((size_t)a->nnz * sizeof *a->indices);
  a->src = malloc((size_t)a->nnz * sizeof *a->src);
  a->dst = malloc((size_t)a->nnz * sizeof *a->dst);
  a->ids = malloc((size_t)a->n * sizeof *a->ids);
  a->labels = malloc((size_t)a->n * sizeof *a->labels);
  a->features = malloc((size_t)(a->n * a->f) * sizeof *a->features);
  a->split = malloc((size_t)a->n);
  if (!a->indptr || !a->indices || !a->src || !a->dst || !a->ids || !a->labels || !a->features ||
      !a->split)
    return -1;
  const fg_dataset_buffers b = {.indptr = a->indptr,
                                .indices = a->indices,
                                .features = a->features,
                                .labels = a->labels,
                                .split = a->split,
                                .node_ids = a->ids};
  if (fg_dataset_copy_arrays(ds, &b) != FG_OK) return -1;
  for (int64_t v = 0; v < a->n; v++)
    for (int64_t k = a->indptr[v]; k < a->indptr[v + 1]; k++) {
      a->src[k] = a->indices[k];
      a->dst[k] = v;
    }
  return 0;
}

static fg_arrays as_input(const cora_arrays *a) {
  return (fg_arrays){.num_nodes = a->n,
                     .num_edges = a->nnz,
                     .src = a->src,
                     .dst = a->dst,
                     .num_features = a->f,
                     .features = a->features,
                     .labels = a->labels,
                     .split = a->split};
}

/* The arrays round trip: the dataset built from ds's own arrays holds the same arrays. */
static void test_round_trip(const fg_dataset *ds, const cora_arrays *a, fg_dataset **out) {
  cora_arrays b;
  const fg_arrays in = as_input(a);
  EXPECT_OK(fg_dataset_from_arrays(&in, NULL, out));
  if (!*out) return;
  EXPECT(fg_dataset_num_nodes(*out) == fg_dataset_num_nodes(ds));
  EXPECT(fg_dataset_num_edges(*out) == fg_dataset_num_edges(ds));
  EXPECT(fg_dataset_num_features(*out) == fg_dataset_num_features(ds));
  EXPECT(fg_dataset_num_classes(*out) == fg_dataset_num_classes(ds));
  for (int k = 0; k < 3; k++) EXPECT(fg_dataset_split_size(*out, k) == fg_dataset_split_size(ds, k));
  EXPECT(copy_out(*out, &b) == 0);
  if (b.indptr) {
    EXPECT(memcmp(a->indptr, b.indptr, (size_t)(a->n + 1) * sizeof *a->indptr) == 0);
    EXPECT(memcmp(a->indices, b.indices, (size_t)a->nnz * sizeof *a->indices) == 0);
    EXPECT(memcmp(a->features, b.features, (size_t)(a->n * a->f) * sizeof *a->features) == 0);
    EXPECT(memcmp(a->labels, b.labels, (size_t)a->n * sizeof *a->labels) == 0);
    EXPECT(memcmp(a->split, b.split, (size_t)a->n) == 0);
    for (int64_t i = 0; i < a->n; i++) EXPECT(b.ids[i] == i);
  }
  arrays_free(&b);
}

/* Every bad array fails with a message naming it and its first bad element; nothing is built. */
static void test_bad_arrays(const cora_arrays *a) {
  fg_dataset *ds = NULL;
  fg_arrays in = as_input(a);
  const int64_t s0 = a->src[5];
  const float f0 = a->features[3 * a->f + 4];
  const int32_t y0 = a->labels[9];
  const int8_t p0 = a->split[11];

  a->src[5] = a->n;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_FORMAT && ds == NULL);
  EXPECT(fg_test_error_contains("arrays: src[5] = 2708 out of range [0, 2708)"));
  a->src[5] = -1;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("src[5] = -1"));
  a->src[5] = s0;

  a->features[3 * a->f + 4] = NAN;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_NUMERIC && ds == NULL);
  EXPECT(fg_test_error_contains("features[3, 4] = nan"));
  a->features[3 * a->f + 4] = INFINITY;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_NUMERIC);
  a->features[3 * a->f + 4] = f0;

  a->labels[9] = -2;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("labels[9] = -2 out of range"));
  a->labels[9] = y0;
  in.num_classes = 3; /* Cora's labels go up to 6 */
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("0 <= label < 3"));
  in.num_classes = 0;

  a->split[11] = 3;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_FORMAT);
  EXPECT(fg_test_error_contains("split[11] = 3"));
  a->split[11] = p0;

  in.num_nodes = 0;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("num_nodes 0 out of range"));
  in.num_nodes = a->n;
  in.num_edges = -4;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("num_edges -4 is negative"));
  in.num_edges = a->nnz;
  in.num_features = 0;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("num_features 0"));
  in.num_features = a->f;
  in.src = NULL;
  EXPECT(fg_dataset_from_arrays(&in, NULL, &ds) == FG_ERR_INVALID_ARG);
  in.src = a->src;

  /* the load's memory budget holds for arrays too */
  fg_load_config lc = fg_load_config_default();
  lc.mem_limit = 1e6;
  EXPECT(fg_dataset_from_arrays(&in, &lc, &ds) == FG_ERR_MEMLIMIT);
  EXPECT(fg_test_error_contains("arrays: "));
  EXPECT(fg_dataset_from_arrays(NULL, NULL, &ds) == FG_ERR_INVALID_ARG);

  /* graph only: features, labels and split generated as for an edge-list file */
  fg_arrays bare = {.num_nodes = a->n, .num_edges = a->nnz, .src = a->src, .dst = a->dst};
  lc = fg_load_config_default();
  lc.gen_features = 8;
  lc.gen_classes = 4;
  EXPECT_OK(fg_dataset_from_arrays(&bare, &lc, &ds));
  EXPECT(fg_dataset_num_features(ds) == 8 && fg_dataset_num_classes(ds) == 4);
  EXPECT(fg_dataset_split_size(ds, 0) > 0);
  fg_dataset_destroy(&ds);
}

/* The by-name configuration: keys as the CLI's flags, values as text, errors naming them. */
static void test_config_set(const fg_dataset *ds) {
  fg_train_config *c = fg_train_config_create();
  int64_t classes = 0, emb = 0;
  EXPECT(c != NULL);
  if (!c) return;
  EXPECT(c->epochs == 200 && c->hidden == 16);
  EXPECT_OK(fg_train_config_set(c, "epochs", "7"));
  EXPECT_OK(fg_train_config_set(c, "weight_decay", "0.001"));
  EXPECT_OK(fg_train_config_set(c, "--weight-decay-layers", "all"));
  EXPECT_OK(fg_train_config_set(c, "scheme", "1d-sa"));
  EXPECT_OK(fg_train_config_set(c, "seed", "18446744073709551615"));
  EXPECT_OK(fg_train_config_set(c, "residual", "1"));
  EXPECT(c->epochs == 7 && c->weight_decay == 0.001 && c->weight_decay_layers == FG_WD_ALL);
  EXPECT(c->scheme && strcmp(c->scheme, "1d-sa") == 0 && c->residual == 1);
  EXPECT(c->seed == UINT64_MAX);
  EXPECT(fg_train_config_set(c, "epoch", "7") == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("unknown training option 'epoch'"));
  EXPECT(fg_train_config_set(c, "hidden", "16x") == FG_ERR_INVALID_ARG);
  EXPECT(fg_test_error_contains("option hidden: expected an integer"));
  EXPECT(fg_train_config_set(c, "residual", "2") == FG_ERR_INVALID_ARG);
  EXPECT(fg_train_config_set(c, "seed", "-1") == FG_ERR_INVALID_ARG);
  EXPECT(fg_train_config_set(c, "lr", "") == FG_ERR_INVALID_ARG);
  EXPECT(fg_train_config_set(c, "agg-order", "middle") == FG_ERR_INVALID_ARG);
  EXPECT(fg_train_config_set(c, "widths", "64,,8") == FG_ERR_INVALID_ARG);
  EXPECT(fg_train_config_set_buffer(c, "logits", NULL) == FG_ERR_INVALID_ARG);
  { /* the command line and dataset path, copied: the caller's strings may go */
    char w0[] = "python3", w1[] = "train.py";
    const char *argv[] = {w0, w1};
    EXPECT_OK(fg_train_config_set_command(c, 2, argv));
    EXPECT_OK(fg_train_config_set(c, "dataset-path", "data/cora"));
    w0[0] = 'X';
    EXPECT(c->argc == 2 && strcmp(c->argv[0], "python3") == 0 &&
           strcmp(c->argv[1], "train.py") == 0 && strcmp(c->dataset_path, "data/cora") == 0);
    EXPECT_OK(fg_train_config_set_command(c, 1, argv + 1));
    EXPECT(c->argc == 1 && strcmp(c->argv[0], "train.py") == 0);
    EXPECT(fg_train_config_set_command(c, -1, argv) == FG_ERR_INVALID_ARG);
    EXPECT_OK(fg_train_config_set_command(c, 0, NULL));
    EXPECT(c->argc == 0 && c->argv == NULL);
  }

  EXPECT_OK(fg_train_output_widths(ds, c, &classes, &emb));
  EXPECT(classes == 7 && emb == 16);
  EXPECT_OK(fg_train_config_set(c, "widths", "64,32"));
  EXPECT(c->layers == 3 && c->widths && c->widths[1] == 32);
  EXPECT_OK(fg_train_config_set(c, "model", "gin"));
  EXPECT_OK(fg_train_output_widths(ds, c, &classes, &emb));
  EXPECT_MSG(classes == 7 && emb == 32, "classes %lld embedding %lld", (long long)classes,
             (long long)emb);
  EXPECT_OK(fg_train_config_set(c, "layers", "1"));
  EXPECT_OK(fg_train_output_widths(ds, c, &classes, &emb));
  EXPECT(emb == 0);
  fg_train_config_destroy(&c);
  EXPECT(c == NULL);
  fg_train_config_destroy(&c);
}

/* The last n*w floats of a float32 .npy: its data (the header comes first). */
static int npy_tail_equals(const char *path, const float *want, int64_t count) {
  FILE *f = fopen(path, "rb");
  float *got = malloc((size_t)count * sizeof *got);
  int ok = f && got && fseek(f, -(long)(count * 4), SEEK_END) == 0 &&
           fread(got, 4, (size_t)count, f) == (size_t)count &&
           memcmp(got, want, (size_t)count * 4) == 0;
  if (f) fclose(f);
  free(got);
  return ok;
}

/* fg_train_world on the arrays' dataset against fg_train on the file's, on the world's ranks:
 * the same losses bit for bit; outputs in buffers on every rank equal to rank 0's files. */
static void test_train_world(const fg_dataset *file_ds, const fg_dataset *mem_ds,
                             const char *scheme, const char *grid) {
  fg_train_config c = fg_train_config_default();
  fg_train_result r1, r2;
  double loss1[EPOCHS], loss2[EPOCHS];
  fg_epoch_record hist[EPOCHS];
  int64_t classes = 0, emb = 0;
  char pred_path[64], emb_path[64];
  float *pred = NULL, *embed = NULL;
  memset(hist, 0, sizeof hist);
  snprintf(pred_path, sizeof pred_path, "/tmp/fg_test_world_%d_p.npy", (int)getpid());
  snprintf(emb_path, sizeof emb_path, "/tmp/fg_test_world_%d_e.npy", (int)getpid());
  c.epochs = EPOCHS;
  c.verbose = 0;
  c.scheme = scheme;
  c.grid = grid;
  c.loss_history = loss1;
  EXPECT_OK(fg_train(MPI_COMM_WORLD, file_ds, &c, &r1));

  EXPECT_OK(fg_train_output_widths(mem_ds, &c, &classes, &emb));
  const int64_t n = fg_dataset_num_nodes(mem_ds);
  pred = malloc((size_t)(n * classes) * sizeof *pred);
  embed = malloc((size_t)(n * emb) * sizeof *embed);
  c.loss_history = loss2;
  c.history = hist;
  c.predictions_out = pred;
  c.embeddings_out = embed;
  /* rank 0 also writes the files (other ranks' paths are not used) */
  c.predictions_path = rank == 0 ? pred_path : NULL;
  c.embeddings_path = rank == 0 ? emb_path : NULL;
  EXPECT_OK(fg_train_world(rank == 0 ? mem_ds : NULL, &c, &r2));
  for (int e = 0; e < EPOCHS; e++) {
    EXPECT_MSG(loss1[e] == loss2[e], "%s epoch %d: file %.9g arrays %.9g", scheme, e + 1,
               loss1[e], loss2[e]);
    EXPECT(hist[e].loss == loss2[e]);
    EXPECT(hist[e].train_acc > 0 && hist[e].train_acc <= 1 && hist[e].valid_loss > 0);
    EXPECT(hist[e].seconds > 0);
  }
  EXPECT(hist[EPOCHS - 1].test_acc == r2.final_test_acc);
  EXPECT(r1.best_epoch == r2.best_epoch && r1.test_acc == r2.test_acc);
  if (rank == 0) {
    EXPECT(npy_tail_equals(pred_path, pred, n * classes));
    EXPECT(npy_tail_equals(emb_path, embed, n * emb));
    unlink(pred_path);
    unlink(emb_path);
  }
  /* every rank holds rank 0's outputs */
  {
    double sum[2] = {0, 0}, mine[2] = {0, 0};
    for (int64_t i = 0; i < n * classes; i++) mine[0] += pred[i];
    for (int64_t i = 0; i < n * emb; i++) mine[1] += embed[i];
    sum[0] = mine[0];
    sum[1] = mine[1];
    MPI_Bcast(sum, 2, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    EXPECT(sum[0] == mine[0] && sum[1] == mine[1] && isfinite(mine[0]));
  }
  /* a buffer on some ranks only is refused on all of them, before any epoch */
  if (size > 1) {
    c.predictions_path = c.embeddings_path = NULL;
    c.predictions_out = rank == 0 ? pred : NULL;
    EXPECT(fg_train_world(rank == 0 ? mem_ds : NULL, &c, &r2) == FG_ERR_INVALID_ARG);
    EXPECT(fg_test_error_contains("on every rank or on none"));
  }
  free(pred);
  free(embed);
}

int main(void) {
  fg_dataset *ds = NULL, *mem = NULL;
  cora_arrays a;
  int up = 0;
  memset(&a, 0, sizeof a);
  /* before fg_init: no MPI, one process */
  if (!fg_test_exists(FG_DEMO_DATA)) fg_test_skip("no Cora (data/cora)");
  EXPECT(fg_world_rank() == 0 && fg_world_size() == 1);
  EXPECT(fg_agree_world(FG_ERR_IO) == FG_ERR_IO);
  EXPECT(fg_finalize() == FG_OK); /* nothing to finalize */
  if (fg_init() != FG_OK) {
    fprintf(stderr, "fg_init: %s\n", fg_last_error());
    return 1;
  }
  EXPECT_OK(fg_init()); /* twice is fine */
  MPI_Initialized(&up);
  EXPECT(up);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  EXPECT(fg_world_rank() == rank && fg_world_size() == size);
  EXPECT(fg_agree_world(rank == size - 1 ? FG_ERR_IO : FG_OK) == FG_ERR_IO);

  EXPECT_OK(fg_dataset_load(FG_DEMO_DATA, NULL, &ds));
  if (ds && copy_out(ds, &a) == 0) {
    test_round_trip(ds, &a, &mem);
    if (rank == 0) {
      test_bad_arrays(&a);
      test_config_set(ds);
    }
    if (mem) {
      test_train_world(ds, mem, size == 1 ? "serial" : "1d-sa", NULL);
      if (size == 3) test_train_world(ds, mem, "3d", "1x1x3");
    }
  } else {
    EXPECT(0);
  }
  arrays_free(&a);
  fg_dataset_destroy(&mem);
  fg_dataset_destroy(&ds);
  EXPECT_OK(fg_finalize());
  EXPECT_OK(fg_finalize());
  return fg_test_finish("test_world");
}
