/* fg_train.h -- checkpoints (the training loop itself is fg_train in trainer.c).
 *
 * Checkpoint file, version 1, little-endian:
 *   offset  size  field
 *        0     8  magic "FGCKPT1\n"
 *        8     4  u32 version (1)
 *       12     4  u32 layers L
 *       16     8  u64 seed
 *       24     8  i64 epochs completed
 *       32     8  i64 Adam step count
 *       40     8  i64 number of parameters n
 *       48     8  i64 best epoch (0 = none yet)
 *       56     8  f64 best validation accuracy
 *       64     8  f64 validation loss at the best epoch
 *       72     8  f64 test accuracy at the best epoch
 *       80  8(L+1) i64 widths (input, hidden..., classes)
 *        …   4n   f32 parameters (W_0, b_0, W_1, b_1, …; W row-major fan_in x fan_out)
 *        …   4n   f32 Adam first moments, same layout
 *        …   4n   f32 Adam second moments, same layout
 *        …     4  u32 CRC-32 (zlib) of every byte before it
 */
#ifndef FG_TRAIN_H
#define FG_TRAIN_H

#include <stdint.h>

#include "core/fg_core.h"
#include "dist/fg_dist.h"
#include "model/fg_model.h"

typedef struct fg_ckpt_meta {
  uint64_t seed;
  int64_t epoch;
  int64_t adam_t;
  int64_t best_epoch;
  double best_valid_acc, best_valid_loss, best_test_acc;
} fg_ckpt_meta;

/* Write atomically (to path.tmp, then rename). Not collective: call on one rank. */
fg_status fg_checkpoint_write(const char *path, const fg_gcn *m, const fg_ckpt_meta *meta);
/* Read into m (whose dimensions must match the file's) and meta. Not collective. */
fg_status fg_checkpoint_read(const char *path, fg_gcn *m, fg_ckpt_meta *meta);

/* ---- the epoch loop, shared by every scheme -------------------------------------------------
 * fg_train runs the same loop (metrics, best epoch, checkpoints, outputs) over a trainer: the
 * model and layout of one scheme behind these operations. */
typedef struct fg_trainer fg_trainer;

typedef struct fg_trainer_ops {
  /* Collective. One training step of epoch `epoch`: forward with dropout, loss, backward,
   * gradient reduction, Adam step number adam_t. *loss_sum: the training loss summed over the
   * training nodes of all ranks (the same on every rank). */
  fg_status (*train_step)(fg_trainer *tr, const fg_train_config *cfg, int epoch, int64_t adam_t,
                          double *loss_sum);
  /* Collective. Evaluation forward (no dropout); accuracies of train/valid/test and the mean
   * validation loss, reduced over ranks. */
  fg_status (*evaluate)(fg_trainer *tr, const fg_train_config *cfg, int epoch, double acc[3],
                        double *valid_loss);
  /* Collective. Model -> tr->state (valid on rank 0), and back from rank 0's tr->state. */
  fg_status (*export_state)(fg_trainer *tr);
  fg_status (*import_state)(fg_trainer *tr);
  /* Collective. The logits (which = 0) or the last hidden layer (which = 1) of the last forward
   * in original node order, into rank 0's out (n x width). */
  fg_status (*gather_output)(fg_trainer *tr, int which, float *out);
  /* Accumulated seconds in SpMMs and GEMMs, and bytes the SpMMs moved (this rank). */
  void (*timers)(const fg_trainer *tr, double *spmm, double *gemm, double *spmm_bytes);
  void (*destroy)(fg_trainer *tr);
} fg_trainer_ops;

struct fg_trainer {
  const fg_trainer_ops *ops;
  fg_dist *dist;       /* not owned */
  int layers;
  int64_t *widths;     /* (layers + 1): input, hidden..., classes */
  int64_t n_params;    /* of the serial model */
  int64_t n_nodes;
  int64_t counts[3];   /* nodes in the train, valid, test splits (all ranks) */
  fg_gcn *state;       /* the parameters in the serial layout, what checkpoints hold: the model
                          itself (1D), or on rank 0 a copy export_state fills (3D) */
  const char *description; /* "3d grid 2x2x1, ..." for the header line, or NULL */
  const char *reorder;     /* the locality order the serial scheme applied, or NULL */
  void *impl;
};

/* Collective: the 3D (Plexus) trainer on grid g (train3d.c). ds on rank 0 only. */
fg_status fg_trainer_3d_create(fg_dist *d, const fg_dataset *ds, const fg_train_config *cfg,
                               const int g[3], fg_trainer **out);
/* Free what every trainer shares (widths, the state shell) and the trainer. */
void fg_trainer_free_common(fg_trainer *tr);

#endif /* FG_TRAIN_H */
