/* test_metric.c -- the metrics of --metric (train/fg_metric.h): ROC-AUC against a brute-force
 * O(n^2) count over every (positive, negative) pair with ties (half credit) and missing targets,
 * one class absent, micro-F1 by hand, the gathered per-task ROC-AUC of pairs spread over the
 * ranks against the brute force of all of them, and the task / metric choice with its
 * refusals. Run under mpiexec with any number of ranks. */
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "core/fg_rng.h"
#include "train/fg_metric.h"
#include "testutil.h"

static int rank, nprocs;

/* Mann-Whitney by definition: the fraction of (positive, negative) pairs the positive wins,
 * a tie half. -1 when a class is absent. */
static double brute_auc(const float *s, const int8_t *y, int64_t n) {
  double wins = 0.0, pairs = 0.0;
  for (int64_t i = 0; i < n; i++)
    for (int64_t j = 0; j < n; j++)
      if (y[i] == 1 && y[j] == 0) {
        pairs += 1.0;
        wins += s[i] > s[j] ? 1.0 : s[i] == s[j] ? 0.5 : 0.0;
      }
  return pairs > 0 ? wins / pairs : -1.0;
}

static double u01(uint64_t a, uint64_t b) {
  return fg_rng_uniform_d(5, 77, a, b, 0, 0);
}

/* n pairs, scores from `levels` distinct values (ties when few), a fraction missing (-1). */
static void make(int64_t n, int levels, uint64_t seed, float *s, int8_t *y) {
  for (int64_t i = 0; i < n; i++) {
    const double u = u01(seed, (uint64_t)i);
    s[i] = (float)floor(u01(seed + 1, (uint64_t)i) * levels) / (float)levels - 0.3f;
    y[i] = (int8_t)(u < 0.15 ? -1 : u01(seed + 2, (uint64_t)i) < 0.3 + 0.4 * s[i] ? 1 : 0);
  }
}

static void test_auc(void) {
  const int64_t sizes[] = {1, 2, 7, 100, 1001};
  const int levels[] = {1, 3, 50, 100000};
  for (size_t a = 0; a < sizeof sizes / sizeof *sizes; a++)
    for (size_t b = 0; b < sizeof levels / sizeof *levels; b++) {
      const int64_t n = sizes[a];
      float *s = malloc((size_t)n * sizeof *s);
      int8_t *y = malloc((size_t)n);
      fg_scored *p = malloc((size_t)n * sizeof *p);
      if (!s || !y || !p) exit(2);
      make(n, levels[b], 100 * a + b, s, y);
      for (int64_t i = 0; i < n; i++) p[i] = (fg_scored){s[i], y[i]};
      int defined = -1;
      const double got = fg_roc_auc(p, n, &defined), want = brute_auc(s, y, n);
      EXPECT_MSG(want < 0 ? defined == 0 && got == 0.0 : defined == 1 && fabs(got - want) < 1e-12,
                 "n %lld, %d levels: ROC-AUC %.15g, brute force %.15g", (long long)n, levels[b],
                 got, want);
      free(s);
      free(y);
      free(p);
    }
  /* by hand: scores 1, 2, 2, 3 with targets 0, 1, 0, 1: pairs (2>1) 1, (2=2) 0.5, (3>1) 1,
   * (3>2) 1: 3.5 / 4 */
  fg_scored h[5] = {{3, 1}, {2, 0}, {1, 0}, {2, 1}, {9, -1}};
  int def = 0;
  EXPECT(fabs(fg_roc_auc(h, 5, &def) - 0.875) < 1e-15 && def == 1);
  fg_scored all_pos[2] = {{1, 1}, {0, 1}};
  EXPECT(fg_roc_auc(all_pos, 2, &def) == 0.0 && def == 0);
  /* micro-F1 */
  EXPECT(fabs(fg_f1_micro(3, 1, 2) - 6.0 / 9.0) < 1e-15);
  EXPECT(fg_f1_micro(0, 0, 0) == 0.0 && fg_f1_micro(0, 4, 0) == 0.0);
}

/* Every rank holds some of the pairs of 3 splits x T tasks; the gathered mean over tasks of the
 * per-task ROC-AUC equals the brute force of all pairs (tasks with one class skipped). */
static void test_gather(fg_dist *d) {
  enum { T = 5, N = 97 };
  float s[3][T][N];
  int8_t y[3][T][N];
  int64_t count[3 * T] = {0};
  fg_scored *mine = malloc(sizeof(fg_scored) * 3 * T * N);
  int64_t k = 0;
  if (!mine) exit(2);
  for (int sp = 0; sp < 3; sp++)
    for (int t = 0; t < T; t++) {
      make(N, t == 1 ? 4 : 1000, (uint64_t)(1000 + 10 * sp + t), s[sp][t], y[sp][t]);
      if (t == 3) /* one class only: skipped */
        for (int i = 0; i < N; i++) y[sp][t][i] = y[sp][t][i] < 0 ? -1 : 0;
    }
  /* node i of every (split, task) lives on rank i % P; pairs in (split, task) order */
  for (int sp = 0; sp < 3; sp++)
    for (int t = 0; t < T; t++)
      for (int i = rank; i < N; i += nprocs)
        if (y[sp][t][i] >= 0) {
          mine[k++] = (fg_scored){s[sp][t][i], y[sp][t][i]};
          count[sp * T + t]++;
        }
  double auc[3] = {-1, -1, -1};
  EXPECT_OK(fg_rocauc_gather(d, T, count, mine, auc));
  for (int sp = 0; sp < 3; sp++) {
    double sum = 0.0;
    int used = 0;
    for (int t = 0; t < T; t++) {
      const double a = brute_auc(s[sp][t], y[sp][t], N);
      if (a >= 0) {
        sum += a;
        used++;
      }
    }
    EXPECT(used == T - 1);
    EXPECT_MSG(fabs(auc[sp] - sum / used) < 1e-12, "split %d: gathered %.15g, brute force %.15g",
               sp, auc[sp], sum / used);
  }
  free(mine);
}

static void test_resolve(void) {
  fg_dataset ds;
  int8_t targets[4] = {1, 0, -1, 1};
  int t = -1, m = -1;
  memset(&ds, 0, sizeof ds);
  ds.source = "d";
  ds.num_nodes = 2;
  ds.num_classes = 3;
  EXPECT_OK(fg_task_resolve(NULL, NULL, 0, &ds, &t, &m));
  EXPECT(t == FG_TASK_MULTICLASS && m == FG_METRIC_ACCURACY);
  EXPECT_OK(fg_task_resolve("multiclass", "f1-micro", 0.5, &ds, &t, &m));
  EXPECT(t == FG_TASK_MULTICLASS && m == FG_METRIC_F1_MICRO);
  EXPECT(fg_task_resolve("multilabel", NULL, 0, &ds, &t, &m) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("--task multilabel: d has one class per node (3 classes"));
  EXPECT(fg_task_resolve(NULL, "rocauc", 0, &ds, &t, &m) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("--metric rocauc: d has 3 classes; multiclass ROC-AUC is "
                                "defined for 2 classes only"));
  EXPECT(fg_task_resolve("multi", NULL, 0, &ds, &t, &m) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("--task must be multiclass"));
  EXPECT(fg_task_resolve(NULL, "auc", 0, &ds, &t, &m) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("--metric must be accuracy, rocauc or f1-micro, got 'auc'"));
  ds.num_classes = 2;
  EXPECT_OK(fg_task_resolve(NULL, "rocauc", 0, &ds, &t, &m));
  EXPECT(t == FG_TASK_MULTICLASS && m == FG_METRIC_ROCAUC);
  ds.num_tasks = 2;
  ds.targets = targets;
  EXPECT_OK(fg_task_resolve(NULL, NULL, 0, &ds, &t, &m));
  EXPECT(t == FG_TASK_MULTILABEL && m == FG_METRIC_ROCAUC);
  EXPECT_OK(fg_task_resolve("multilabel", "accuracy", 0, &ds, &t, &m));
  EXPECT(t == FG_TASK_MULTILABEL && m == FG_METRIC_ACCURACY);
  EXPECT(fg_task_resolve("multiclass", NULL, 0, &ds, &t, &m) == FG_ERR_INVALID_ARG &&
         fg_test_error_contains("--task multiclass: d has multi-label targets (2 tasks"));
  EXPECT(fg_task_resolve(NULL, NULL, 0.3, &ds, &t, &m) == FG_ERR_UNSUPPORTED &&
         fg_test_error_contains("--label-prop with multi-label targets (d)"));
  EXPECT(strcmp(fg_metric_name(FG_METRIC_F1_MICRO), "f1-micro") == 0 &&
         strcmp(fg_task_name(FG_TASK_MULTILABEL), "multilabel") == 0);
}

int main(int argc, char **argv) {
  fg_dist *d = NULL;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
  EXPECT_OK(fg_dist_create(MPI_COMM_WORLD, &d));
  if (rank == 0) {
    test_auc();
    test_resolve();
  }
  if (d) test_gather(d);
  fg_dist_destroy(&d);
  const int rc = fg_test_finish("test_metric");
  MPI_Finalize();
  return rc;
}
