/* loss.c -- masked softmax cross-entropy, numerically stable (the row maximum is subtracted
 * before exp) with double accumulation. A row counts when select[r] != 0 (select == NULL
 * selects every row) and labels[r] >= 0. And masked sigmoid binary cross-entropy of
 * multi-label targets (fg_sigmoid_bce), per (row, task) pair. */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "kernels/fg_kernel_util.h"
#include "kernels/fg_kernels.h"

/* softmax rows per task at least this many logits */
#define FG_XENT_MIN_TASK_WORK 8192
/* the tuned loss keeps per-task partial sums on the stack */
#define FG_XENT_MAX_TASKS 256

static inline int xent_selected(const int32_t *labels, const uint8_t *select, int64_t r) {
  return (!select || select[r]) && labels[r] >= 0;
}

double fg_softmax_xent_ref(const float *logits, int64_t rows, int64_t classes,
                           const int32_t *labels, const uint8_t *select, float scale,
                           float *dlogits, int64_t *count, int64_t *correct) {
  double loss = 0.0;
  int64_t n = 0, ok = 0;
  for (int64_t r = 0; r < rows; r++) {
    const float *z = logits + r * classes; // (classes)
    if (!xent_selected(labels, select, r)) {
      if (dlogits)
        for (int64_t c = 0; c < classes; c++) dlogits[r * classes + c] = 0.0f;
      continue;
    }
    const int32_t y = labels[r];
    assert(y < classes);
    int64_t best = 0;
    for (int64_t c = 1; c < classes; c++)
      if (z[c] > z[best]) best = c;
    const double mx = (double)z[best];
    double sum = 0.0;
    for (int64_t c = 0; c < classes; c++) sum += exp((double)z[c] - mx);
    loss += mx + log(sum) - (double)z[y];
    n++;
    if (best == y) ok++;
    if (dlogits) {
      for (int64_t c = 0; c < classes; c++) {
        const double prob = exp((double)z[c] - mx) / sum;
        dlogits[r * classes + c] = (float)((double)scale * (prob - (c == y ? 1.0 : 0.0)));
      }
    }
  }
  if (count) *count = n;
  if (correct) *correct = ok;
  return loss;
}

double fg_softmax_xent(const float *logits, int64_t rows, int64_t classes, const int32_t *labels,
                       const uint8_t *select, float scale, float *dlogits, int64_t *count,
                       int64_t *correct) {
  /* the column-block kernels on whole rows: one path for every scheme */
  fg_maxloc *mx = malloc((size_t)FG_MAX(rows, 1) * sizeof *mx);
  double *sum = malloc((size_t)FG_MAX(rows, 1) * sizeof *sum), loss;
  if (mx && sum) {
    fg_xent_row_stats(logits, rows, classes, select, mx, sum);
    loss = fg_xent_block_finish(logits, rows, classes, 0, labels, select, mx, sum, scale,
                                dlogits, 1, count, correct);
  } else { /* the reference needs no scratch */
    loss = fg_softmax_xent_ref(logits, rows, classes, labels, select, scale, dlogits, count,
                               correct);
  }
  free(mx);
  free(sum);
  return loss;
}

/* ---- a column block of the logits -------------------------------------------------------- */

/* Row r's maximum over its block (ties to the lowest column) and its sum of exp(row - max)
 * over the block. Rows not selected get no statistics (-inf at no column, sum 1): no loss is
 * taken of them. */
static inline fg_maxloc row_max(const float *z, int64_t cols, int64_t col0,
                                const uint8_t *select, int64_t r) {
  const float *row = z + r * cols; // (cols)
  fg_maxloc best = {-INFINITY, INT_MAX};
  if (select && !select[r]) return best;
  for (int64_t c = 0; c < cols; c++)
    if (c == 0 || row[c] > best.val) { /* strict: ties to the lowest column */
      best.val = row[c];
      best.idx = (int)(col0 + c);
    }
  return best;
}

static inline double row_expsum(const float *z, int64_t cols, fg_maxloc mx,
                                const uint8_t *select, int64_t r) {
  const float *row = z + r * cols; // (cols)
  double s = 0.0;
  if (select && !select[r]) return 1.0;
  for (int64_t c = 0; c < cols; c++) s += exp((double)row[c] - (double)mx.val);
  return s;
}

void fg_xent_block_max(const float *z, int64_t rows, int64_t cols, int64_t col0,
                       const uint8_t *select, fg_maxloc *mx) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) mx[r] = row_max(z, cols, col0, select, r);
}

void fg_xent_block_expsum(const float *z, int64_t rows, int64_t cols, const fg_maxloc *mx,
                          const uint8_t *select, double *sum) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) sum[r] = row_expsum(z, cols, mx[r], select, r);
}

void fg_xent_row_stats(const float *z, int64_t rows, int64_t cols, const uint8_t *select,
                       fg_maxloc *mx, double *sum) {
  FG_OMP_FOR(rows * cols)
  for (int64_t r = 0; r < rows; r++) {
    mx[r] = row_max(z, cols, 0, select, r);
    sum[r] = row_expsum(z, cols, mx[r], select, r);
  }
}

/* A task's part of the loss, the rows it counted and the correct ones among them. */
typedef struct xent_part {
  double loss;
  int64_t n, ok;
} xent_part;

/* Rows [r0, r1) of fg_xent_block_finish. */
static xent_part xent_block_rows(const float *z, int64_t cols, int64_t col0,
                                 const int32_t *labels, const uint8_t *select,
                                 const fg_maxloc *mx, const double *sum, float scale,
                                 float *dlogits, int count_rows, int64_t r0, int64_t r1) {
  xent_part p = {0.0, 0, 0};
  for (int64_t r = r0; r < r1; r++) {
    const float *row = z + r * cols;                 // (cols)
    float *dz = dlogits ? dlogits + r * cols : NULL; // (cols)
    if (!xent_selected(labels, select, r)) {
      if (dz) memset(dz, 0, (size_t)cols * sizeof *dz);
      continue;
    }
    const int64_t y = labels[r];
    const double base = (double)mx[r].val, inv = 1.0 / sum[r];
    if (dz) {
      for (int64_t c = 0; c < cols; c++)
        dz[c] = (float)((double)scale * (exp((double)row[c] - base) * inv));
      if (y >= col0 && y < col0 + cols)
        dz[y - col0] =
            (float)((double)scale * (exp((double)row[y - col0] - base) * inv - 1.0));
    }
    if (count_rows && y >= col0 && y < col0 + cols) {
      p.loss += base + log(sum[r]) - (double)row[y - col0];
      p.n++;
      p.ok += mx[r].idx == y;
    }
  }
  return p;
}

double fg_xent_block_finish(const float *z, int64_t rows, int64_t cols, int64_t col0,
                            const int32_t *labels, const uint8_t *select, const fg_maxloc *mx,
                            const double *sum, float scale, float *dlogits, int count_rows,
                            int64_t *count, int64_t *correct) {
  xent_part part[FG_XENT_MAX_TASKS], all = {0.0, 0, 0};
  if (rows < 0) rows = 0;
  int ntasks = fg_kernel_tasks(rows * (cols > 0 ? cols : 1), FG_XENT_MIN_TASK_WORK);
  if (ntasks > FG_XENT_MAX_TASKS) ntasks = FG_XENT_MAX_TASKS;
  FG_OMP_TASKS(ntasks)
  for (int t = 0; t < ntasks; t++)
    part[t] = xent_block_rows(z, cols, col0, labels, select, mx, sum, scale, dlogits,
                              count_rows, fg_task_start(rows, t, ntasks),
                              fg_task_start(rows, t + 1, ntasks));
  for (int t = 0; t < ntasks; t++) {
    all.loss += part[t].loss;
    all.n += part[t].n;
    all.ok += part[t].ok;
  }
  if (count) *count = all.n;
  if (correct) *correct = all.ok;
  return all.loss;
}

/* ---- sigmoid binary cross-entropy (multi-label) -------------------------------------------- */

/* The loss, gradient and prediction of one pair in double: softplus(z) - z y written so that
 * neither exp overflows (|z| large) nor log1p loses the small term. */
static inline double bce_pair(double z, int y, double *grad) {
  const double e = exp(-fabs(z)); /* in (0, 1] */
  /* s(z) = 1 / (1 + exp(-z)) for z >= 0, exp(z) / (1 + exp(z)) below: never exp of a positive */
  const double sig = z >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
  *grad = sig - (double)y;
  return (z > 0.0 ? z : 0.0) - z * (double)y + log1p(e);
}

static inline void bce_count(fg_bce_counts *c, float z, int y) {
  const int pred = z > 0.0f;
  c->pairs++;
  c->correct += pred == y;
  c->tp += pred && y;
  c->fp += pred && !y;
  c->fn += !pred && y;
}

double fg_sigmoid_bce_ref(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                          const int8_t *targets, int64_t tasks, const uint8_t *select,
                          float scale, float *dlogits, int count_pairs, fg_bce_counts *counts) {
  double loss = 0.0;
  fg_bce_counts c = {0, 0, 0, 0, 0};
  for (int64_t r = 0; r < rows; r++) {
    const float *z = logits + r * cols;         // (cols)
    const int8_t *y = targets + r * tasks + col0; // (cols) of the row's tasks
    const int sel = !select || select[r];
    for (int64_t j = 0; j < cols; j++) {
      double g = 0.0;
      if (sel && y[j] >= 0) {
        const double l = bce_pair((double)z[j], y[j], &g);
        if (count_pairs) {
          loss += l;
          bce_count(&c, z[j], y[j]);
        }
      }
      if (dlogits) dlogits[r * cols + j] = (float)((double)scale * g);
    }
  }
  if (counts) *counts = c;
  return loss;
}

/* rows per task: at least this many pairs */
#define FG_BCE_MIN_TASK_WORK 8192

typedef struct bce_part {
  double loss;
  fg_bce_counts c;
} bce_part;

static bce_part bce_rows(const float *logits, int64_t cols, int64_t col0, const int8_t *targets,
                         int64_t tasks, const uint8_t *select, float scale, float *dlogits,
                         int count_pairs, int64_t r0, int64_t r1) {
  bce_part p = {0.0, {0, 0, 0, 0, 0}};
  for (int64_t r = r0; r < r1; r++) {
    const float *z = logits + r * cols;                // (cols)
    const int8_t *y = targets + r * tasks + col0;      // (cols)
    float *dz = dlogits ? dlogits + r * cols : NULL;   // (cols)
    if (select && !select[r]) {
      if (dz) memset(dz, 0, (size_t)cols * sizeof *dz);
      continue;
    }
    for (int64_t j = 0; j < cols; j++) {
      double g = 0.0;
      if (y[j] >= 0) {
        const double l = bce_pair((double)z[j], y[j], &g);
        if (count_pairs) {
          p.loss += l;
          bce_count(&p.c, z[j], y[j]);
        }
      }
      if (dz) dz[j] = (float)((double)scale * g);
    }
  }
  return p;
}

double fg_sigmoid_bce(const float *logits, int64_t rows, int64_t cols, int64_t col0,
                      const int8_t *targets, int64_t tasks, const uint8_t *select, float scale,
                      float *dlogits, int count_pairs, fg_bce_counts *counts) {
  /* the reference's arithmetic per pair; rows split over tasks whose partial sums add in task
   * order (the loss may differ from the reference's in its last bits, never the gradient) */
  bce_part part[FG_XENT_MAX_TASKS], all = {0.0, {0, 0, 0, 0, 0}};
  if (rows < 0) rows = 0;
  int ntasks = fg_kernel_tasks(rows * (cols > 0 ? cols : 1), FG_BCE_MIN_TASK_WORK);
  if (ntasks > FG_XENT_MAX_TASKS) ntasks = FG_XENT_MAX_TASKS;
  FG_OMP_TASKS(ntasks)
  for (int t = 0; t < ntasks; t++)
    part[t] = bce_rows(logits, cols, col0, targets, tasks, select, scale, dlogits, count_pairs,
                       fg_task_start(rows, t, ntasks), fg_task_start(rows, t + 1, ntasks));
  for (int t = 0; t < ntasks; t++) {
    all.loss += part[t].loss;
    all.c.pairs += part[t].c.pairs;
    all.c.correct += part[t].c.correct;
    all.c.tp += part[t].c.tp;
    all.c.fp += part[t].c.fp;
    all.c.fn += part[t].c.fn;
  }
  if (counts) *counts = all.c;
  return all.loss;
}
