/* train_in_memory.c -- libfullgraph from a C program: build a graph in memory, train a GCN on it
 * through the public API (fullgraph.h only), print the test accuracy.
 *
 * The graph is a stochastic block model: N nodes in C communities, an edge inside a community
 * with probability P_IN and across with P_OUT. A node's label is its community; its features
 * are a weak hint of it (+SIGNAL on the feature of its class) under Gaussian noise, too weak to
 * classify a node alone but plain once a GCN averages it with its neighbours'. The split: 20%
 * train, 20% valid, 60% test.
 *
 * Exit 0 only if training worked: a test accuracy well above chance (1/C).
 *
 * build:  cc train_in_memory.c $(pkg-config --cflags --libs fullgraph)   (or examples/CMakeLists.txt)
 * run:    ./a.out          or   mpirun -n 2 ./a.out  (training is then split over the ranks) */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include <fullgraph.h>

enum { N = 600, C = 4, F = 16, EPOCHS = 100 };
static const double P_IN = 0.03, P_OUT = 0.002, SIGNAL = 0.6, MIN_ACCURACY = 0.7;

/* splitmix64: a small, seedable generator, so that every run draws the same graph */
static uint64_t rng_state = 12345;
static uint64_t rng_next(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static double rng_uniform(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; } /* [0, 1) */
static double rng_normal(void) { /* Box-Muller */
  const double u = 1.0 - rng_uniform(), v = rng_uniform();
  return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Fail with the library's message. */
static int failed(const char *what, fg_status st) {
  fprintf(stderr, "train_in_memory: %s failed: %s (%s)\n", what, fg_last_error(),
          fg_status_string(st));
  return 1;
}

/* Rank 0 builds the dataset; every rank trains (fg_train_world is collective). */
static int run(int rank) {
  static int64_t src[N * N / 2], dst[N * N / 2];
  static float features[N * F];
  static int32_t labels[N];
  static int8_t split[N];
  fg_dataset *ds = NULL;
  fg_train_config cfg = fg_train_config_default();
  fg_train_result res;
  fg_status st = FG_OK;
  int64_t e = 0;

  if (rank == 0) {
    fg_load_config lc = fg_load_config_default(); /* adds reverse edges and self loops */
    fg_arrays a = {0};
    for (int v = 0; v < N; v++) {
      labels[v] = v % C;
      split[v] = (int8_t)(v % 5 == 0 ? 0 : v % 5 == 1 ? 1 : 2);
      for (int j = 0; j < F; j++)
        features[(size_t)v * F + j] = (float)((j % C == labels[v] ? SIGNAL : 0.0) + rng_normal());
    }
    for (int u = 0; u < N; u++) /* each pair once: the loader adds the reverse */
      for (int v = u + 1; v < N; v++)
        if (rng_uniform() < (labels[u] == labels[v] ? P_IN : P_OUT)) {
          src[e] = u;
          dst[e] = v;
          e++;
        }
    a.num_nodes = N;
    a.num_edges = e;
    a.src = src;
    a.dst = dst;
    a.num_features = F;
    a.features = features;
    a.labels = labels;
    a.num_classes = C;
    a.split = split;
    st = fg_dataset_from_arrays(&a, &lc, &ds);
    if (st != FG_OK) failed("fg_dataset_from_arrays", st);
    else
      printf("graph: %d nodes, %" PRId64 " edges given (%" PRId64 " adjacency entries), %d "
             "features, %d classes\n",
             N, e, fg_dataset_num_edges(ds), F, C);
  }
  st = fg_agree_world(st); /* every rank learns whether rank 0's build worked */
  if (st != FG_OK) return 1;

  cfg.epochs = EPOCHS;
  cfg.verbose = 0;
  st = fg_train_world(ds, &cfg, &res);
  fg_dataset_destroy(&ds);
  if (st != FG_OK) return rank == 0 ? failed("fg_train_world", st) : 1;
  if (rank == 0) {
    printf("trained %d epochs on %d rank(s): best validation accuracy %.3f at epoch %d, "
           "test accuracy %.3f (chance %.3f)\n",
           res.epochs_run, fg_world_size(), res.best_valid_acc, res.best_epoch, res.test_acc,
           1.0 / C);
    if (!(res.test_acc >= MIN_ACCURACY)) {
      fprintf(stderr, "train_in_memory: test accuracy %.3f is below %.2f: training did not work\n",
              res.test_acc, MIN_ACCURACY);
      return 1;
    }
  }
  return 0;
}

int main(void) {
  fg_status st = fg_init(); /* MPI: joins mpirun's job, or a job of one process */
  int rc;
  if (st != FG_OK) return failed("fg_init", st);
  rc = run(fg_world_rank());
  /* every rank exits with rank 0's verdict */
  rc = fg_agree_world(rc == 0 ? FG_OK : FG_ERR_INVALID_ARG) == FG_OK ? 0 : 1;
  st = fg_finalize();
  if (st != FG_OK) return failed("fg_finalize", st);
  return rc;
}
