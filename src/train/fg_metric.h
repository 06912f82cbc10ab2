/* fg_metric.h -- what a run learns and how it is scored: the task (--task: one class per node,
 * softmax cross-entropy; or multi-label targets, sigmoid binary cross-entropy per task) and the
 * metric (--metric) that picks the best validation epoch and fills the metrics file's
 * train_acc / valid_acc / test_acc. Definitions (README, "Tasks and metrics"):
 *   multiclass accuracy  the fraction of a split's labelled nodes whose largest logit is their
 *                        class (ties to the lowest class), as always
 *   multiclass f1-micro  the same number: with one true and one predicted class a node, micro
 *                        precision = micro recall = accuracy
 *   multiclass rocauc    2 classes only: the ROC-AUC of log softmax(z)_1 (a monotone function
 *                        of z_1 - z_0) against the class
 *   multilabel accuracy  the fraction of a split's (node, task) pairs with a target whose
 *                        prediction (logit > 0) is the target
 *   multilabel f1-micro  2 TP / (2 TP + FP + FN) over those pairs (0 when there are none)
 *   multilabel rocauc    the mean over tasks of each task's ROC-AUC over the split's nodes with
 *                        that target, tasks with a single class present skipped (as OGB's
 *                        evaluator does; 0 when every task is skipped)
 * ROC-AUC is the Mann-Whitney statistic: the fraction of (positive, negative) pairs in which
 * the positive scores higher, a tie counting one half. */
#ifndef FG_METRIC_H
#define FG_METRIC_H

#include <stdint.h>

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "graph/fg_graph.h"

typedef enum fg_task_kind { FG_TASK_MULTICLASS = 0, FG_TASK_MULTILABEL = 1 } fg_task_kind;
typedef enum fg_metric_kind {
  FG_METRIC_ACCURACY = 0,
  FG_METRIC_ROCAUC = 1,
  FG_METRIC_F1_MICRO = 2
} fg_metric_kind;

/* "multiclass", "multilabel" / "accuracy", "rocauc", "f1-micro" ("?" out of range). */
const char *fg_task_name(int task);
const char *fg_metric_name(int metric);
/* NULL: *out = -1 (decided by the data); else the kind, or FG_ERR_INVALID_ARG naming the
 * option and its values. */
fg_status fg_task_parse(const char *name, int *out);
fg_status fg_metric_parse(const char *name, int *out);

/* The task and metric of a run of cfg-like options on ds (rank 0): --task from the data when
 * not given (multilabel exactly when ds has targets), --metric accuracy for multiclass and
 * rocauc for multilabel when not given. FG_ERR_INVALID_ARG for a task the data does not have,
 * multiclass rocauc with other than 2 classes; FG_ERR_UNSUPPORTED for --label-prop (label_prop
 * > 0) with multi-label targets. Messages name the dataset (ds->source). Not collective. */
fg_status fg_task_resolve(const char *task, const char *metric, double label_prop,
                          const fg_dataset *ds, int *task_out, int *metric_out);

/* The ROC-AUC of n (score, y) pairs, y 1 positive or 0 negative (others are ignored), ties
 * counting one half; *defined = 0 (and 0 returned) when one class is absent. The pairs are
 * sorted in place. O(n log n). */
typedef struct fg_scored {
  float score;
  int8_t y;
} fg_scored;
double fg_roc_auc(fg_scored *pairs, int64_t n, int *defined);

/* 2 TP / (2 TP + FP + FN), 0 when the denominator is 0. */
double fg_f1_micro(int64_t tp, int64_t fp, int64_t fn);

/* Collective: the ROC-AUC of each of 3 splits, each the mean over `tasks` tasks of the task's
 * ROC-AUC (tasks with one class skipped), from every rank's pairs. count (3 x tasks): this
 * rank's pairs of split k and task t; pairs: all of them in (split, task) order, each pair on
 * exactly one rank. Every rank's pairs go to rank 0 (5 bytes a pair and 24 tasks bytes a rank),
 * which computes and broadcasts auc[3]. Counted in the current phase. */
fg_status fg_rocauc_gather(fg_dist *d, int64_t tasks, const int64_t *count,
                           const fg_scored *pairs, double auc[3]);

#endif /* FG_METRIC_H */
