/* metric.c -- tasks, metrics, ROC-AUC and micro-F1 (fg_metric.h). */
#include <stdlib.h>
#include <string.h>

#include "train/fg_metric.h"

static const char *const task_names[2] = {"multiclass", "multilabel"};
static const char *const metric_names[3] = {"accuracy", "rocauc", "f1-micro"};

const char *fg_task_name(int task) {
  return task >= 0 && task < 2 ? task_names[task] : "?";
}

const char *fg_metric_name(int metric) {
  return metric >= 0 && metric < 3 ? metric_names[metric] : "?";
}

fg_status fg_task_parse(const char *name, int *out) {
  fg_status st = FG_OK;
  *out = -1;
  if (!name) return FG_OK;
  *out = fg_name_index(name, task_names, 2);
  FG_REQUIRE(*out >= 0, FG_ERR_INVALID_ARG,
             "--task must be multiclass (one class per node, softmax cross-entropy) or "
             "multilabel (0/1 targets per task, sigmoid binary cross-entropy), got '%s'",
             name);
cleanup:
  return st;
}

fg_status fg_metric_parse(const char *name, int *out) {
  fg_status st = FG_OK;
  *out = -1;
  if (!name) return FG_OK;
  *out = fg_name_index(name, metric_names, 3);
  FG_REQUIRE(*out >= 0, FG_ERR_INVALID_ARG,
             "--metric must be accuracy, rocauc or f1-micro, got '%s'", name);
cleanup:
  return st;
}

fg_status fg_task_resolve(const char *task, const char *metric, double label_prop,
                          const fg_dataset *ds, int *task_out, int *metric_out) {
  fg_status st = FG_OK;
  int t = -1, m = -1;
  FG_CHECK(fg_task_parse(task, &t));
  FG_CHECK(fg_metric_parse(metric, &m));
  FG_REQUIRE(ds != NULL, FG_ERR_INVALID_ARG, "no dataset to decide the task from");
  const char *name = ds->source ? ds->source : "the dataset";
  const int multi = ds->num_tasks > 0;
  FG_REQUIRE(t != FG_TASK_MULTICLASS || !multi, FG_ERR_INVALID_ARG,
             "--task multiclass: %s has multi-label targets (%lld tasks: several label columns "
             "of 0/1), not one class per node; use --task multilabel (its default)",
             name, (long long)ds->num_tasks);
  FG_REQUIRE(t != FG_TASK_MULTILABEL || multi, FG_ERR_INVALID_ARG,
             "--task multilabel: %s has one class per node (%lld classes%s), not multi-label "
             "targets (several label columns of 0/1); use --task multiclass (its default)",
             name, (long long)ds->num_classes, ds->labels_generated ? ", generated" : "");
  if (t < 0) t = multi ? FG_TASK_MULTILABEL : FG_TASK_MULTICLASS;
  if (m < 0) m = t == FG_TASK_MULTILABEL ? FG_METRIC_ROCAUC : FG_METRIC_ACCURACY;
  FG_REQUIRE(!(t == FG_TASK_MULTICLASS && m == FG_METRIC_ROCAUC && ds->num_classes != 2),
             FG_ERR_INVALID_ARG,
             "--metric rocauc: %s has %lld classes; multiclass ROC-AUC is defined for 2 "
             "classes only (use accuracy or f1-micro)",
             name, (long long)ds->num_classes);
  FG_REQUIRE(!(t == FG_TASK_MULTILABEL && label_prop > 0), FG_ERR_UNSUPPORTED,
             "--label-prop with multi-label targets (%s): the label embedding takes one class "
             "per node; drop --label-prop",
             name);
  *task_out = t;
  *metric_out = m;
cleanup:
  return st;
}

static int cmp_scored(const void *a, const void *b) {
  const float x = ((const fg_scored *)a)->score, y = ((const fg_scored *)b)->score;
  return (x > y) - (x < y);
}

double fg_roc_auc(fg_scored *pairs, int64_t n, int *defined) {
  double pos = 0.0, neg = 0.0, below = 0.0, wins = 0.0;
  *defined = 0;
  for (int64_t i = 0; i < n; i++) {
    pos += pairs[i].y == 1;
    neg += pairs[i].y == 0;
  }
  if (pos == 0.0 || neg == 0.0) return 0.0;
  if (n > 1) qsort(pairs, (size_t)n, sizeof *pairs, cmp_scored);
  /* per group of equal scores: each positive beats the negatives below the group and ties
   * with the group's negatives (one half each); every count is an integer below 2^53, so the
   * sums are exact */
  for (int64_t i = 0; i < n;) {
    int64_t j = i;
    double p = 0.0, q = 0.0;
    for (; j < n && pairs[j].score == pairs[i].score; j++) {
      p += pairs[j].y == 1;
      q += pairs[j].y == 0;
    }
    wins += p * below + 0.5 * p * q;
    below += q;
    i = j;
  }
  *defined = 1;
  return wins / (pos * neg);
}

double fg_f1_micro(int64_t tp, int64_t fp, int64_t fn) {
  const double den = 2.0 * (double)tp + (double)fp + (double)fn;
  return den > 0.0 ? 2.0 * (double)tp / den : 0.0;
}

#define FG_TAG_ROCAUC 7402

fg_status fg_rocauc_gather(fg_dist *d, int64_t tasks, const int64_t *count,
                           const fg_scored *pairs, double auc[3]) {
  fg_status st = FG_OK;
  const int64_t nc = 3 * tasks;
  int64_t *all = NULL;      /* rank 0: (P x 3 x tasks) every rank's counts */
  int64_t *at = NULL;       /* rank 0: (P) where rank p's pairs start in got */
  fg_scored *got = NULL;    /* rank 0: every rank's pairs, rank after rank */
  fg_scored *one = NULL;    /* rank 0: one task's pairs of one split */
  float *sc = NULL;
  int8_t *ys = NULL;
  int64_t mine = 0, total = 0, most = 0;
  for (int64_t k = 0; k < nc; k++) mine += count[k];
  if (d->rank == 0) {
    all = fg_malloc_array((size_t)FG_MAX(d->size * nc, 1), sizeof *all);
    at = fg_malloc_array((size_t)d->size + 1, sizeof *at);
    st = all && at ? FG_OK : fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
  }
  if (st == FG_OK && d->rank != 0) { /* the scores and targets apart: 5 bytes a pair */
    sc = fg_malloc_array((size_t)FG_MAX(mine, 1), sizeof *sc);
    ys = fg_malloc_array((size_t)FG_MAX(mine, 1), sizeof *ys);
    if (!sc || !ys) st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__, "out of memory");
    for (int64_t i = 0; st == FG_OK && i < mine; i++) {
      sc[i] = pairs[i].score;
      ys[i] = pairs[i].y;
    }
  }
  FG_CHECK(fg_dist_agree(d, st));
  /* 1. the counts */
  if (d->rank == 0) {
    memcpy(all, count, (size_t)nc * sizeof *all);
    for (int p = 1; p < d->size && st == FG_OK; p++)
      st = fg_dist_recv_bytes(d, all + p * nc, nc * 8, p, FG_TAG_ROCAUC);
    at[0] = 0;
    for (int p = 0; p < d->size; p++) {
      int64_t c = 0;
      for (int64_t k = 0; k < nc; k++) c += all[p * nc + k];
      at[p + 1] = at[p] + c;
    }
    total = at[d->size];
    for (int64_t k = 0; k < nc; k++) {
      int64_t c = 0;
      for (int p = 0; p < d->size; p++) c += all[p * nc + k];
      most = FG_MAX(most, c);
    }
    int64_t widest = 0; /* the most pairs one other rank sends */
    for (int p = 1; p < d->size; p++) widest = FG_MAX(widest, at[p + 1] - at[p]);
    if (st == FG_OK) {
      got = fg_malloc_array((size_t)FG_MAX(total, 1), sizeof *got);
      one = fg_malloc_array((size_t)FG_MAX(most, 1), sizeof *one);
      sc = fg_malloc_array((size_t)FG_MAX(widest, 1), sizeof *sc);
      ys = fg_malloc_array((size_t)FG_MAX(widest, 1), sizeof *ys);
      if (!got || !one || !sc || !ys)
        st = fg_error_set(FG_ERR_NOMEM, __FILE__, __LINE__,
                          "rank 0: out of memory for the %lld scored pairs of ROC-AUC",
                          (long long)total);
    }
  } else {
    st = fg_dist_send_bytes(d, count, nc * 8, 0, FG_TAG_ROCAUC);
  }
  FG_CHECK(fg_dist_agree(d, st));
  /* 2. the pairs */
  if (d->rank == 0) {
    if (mine > 0) memcpy(got, pairs, (size_t)mine * sizeof *got);
    for (int p = 1; p < d->size && st == FG_OK; p++) {
      const int64_t n = at[p + 1] - at[p];
      st = fg_dist_recv_bytes(d, sc, n * 4, p, FG_TAG_ROCAUC);
      if (st == FG_OK) st = fg_dist_recv_bytes(d, ys, n, p, FG_TAG_ROCAUC);
      for (int64_t i = 0; st == FG_OK && i < n; i++) got[at[p] + i] = (fg_scored){sc[i], ys[i]};
    }
  } else {
    st = fg_dist_send_bytes(d, sc, mine * 4, 0, FG_TAG_ROCAUC);
    if (st == FG_OK) st = fg_dist_send_bytes(d, ys, mine, 0, FG_TAG_ROCAUC);
  }
  FG_CHECK(fg_dist_agree(d, st));
  /* 3. rank 0 ranks each split's tasks */
  if (d->rank == 0) {
    for (int k = 0; k < 3; k++) {
      double sum = 0.0;
      int64_t used = 0;
      for (int64_t t = 0; t < tasks; t++) {
        int64_t n = 0;
        for (int p = 0; p < d->size; p++) {
          /* rank p's pairs of (k, t) follow its pairs of every (split, task) before it */
          int64_t off = at[p];
          for (int64_t j = 0; j < k * tasks + t; j++) off += all[p * nc + j];
          const int64_t c = all[p * nc + k * tasks + t];
          if (c > 0) memcpy(one + n, got + off, (size_t)c * sizeof *one);
          n += c;
        }
        int defined = 0;
        const double a = fg_roc_auc(one, n, &defined);
        if (defined) {
          sum += a;
          used++;
        }
      }
      auc[k] = used > 0 ? sum / (double)used : 0.0;
    }
  }
  FG_CHECK(fg_dist_bcast(d, auc, 3 * sizeof *auc, 0));
cleanup:
  free(all);
  free(at);
  free(got);
  free(one);
  free(sc);
  free(ys);
  return st;
}
